#!/usr/bin/env bash
# Install the Debian packages a part of hugelab needs.
#   tests/deps.sh GROUP...   base groups: build kernel hypervisor ansible
#                            reports lint smoke browser;
#                            composite: lab check test all
# Every entry point installs what it runs: make lab/test/check call this
# with their group, and the parts' own targets (make -C workloads check,
# make -C kernel-build check|test, make -C reports check) with theirs.
#   tests/deps.sh --list GROUP...   print the packages, install nothing
# Only Debian packages, only through apt; idempotent (dpkg-query first).
# `lab` is everything `make lab` runs on the controller (which is also a
# hypervisor); the host role installs `host_packages` on remote hypervisors.
# tests/fresh-root proves in a clean Debian 12 root that `lab` and `test`
# bring every program and Python module the code calls.
set -euo pipefail

declare -A PKGS=(
  # C workloads and their unit tests, the kernel's selftests (static);
  # python3 zips the pgbench experiment (workloads/pgbench) and runs its
  # tests.
  [build]="build-essential pkg-config libcmocka-dev libc6-dev make gcc python3"
  # kernel-build/build: Debian's source of every kernel line (build
  # --source 6.1|6.12), bindeb-pkg (6.12's needs debhelper), ccache;
  # checkpatch's SPDX check (scripts/spdxcheck.py) imports ply and git.
  [kernel]="linux-source-6.1 linux-source-6.12 build-essential bc bison flex libssl-dev
            libelf-dev dwarves rsync kmod cpio dpkg-dev fakeroot ccache debhelper
            xz-utils git perl python3 python3-scipy python3-ply python3-git
            util-linux"
  # What a hypervisor runs: libvirt, QEMU, image and seed tools.
  [hypervisor]="libvirt-daemon-system libvirt-clients python3-libvirt
                python3-lxml qemu-system-x86 qemu-utils debootstrap
                cloud-image-utils genisoimage busybox-static cpio e2fsprogs
                rsync openssh-client openssh-server procps"
  # The controller: Ansible with community.libvirt (in Debian's ansible).
  [ansible]="ansible python3-yaml python3-jsonschema openssh-client"
  # hugelab-report render|compare and its tests.
  [reports]="python3 python3-jinja2 python3-matplotlib python3-scipy
             python3-junit.xml python3-pytest"
  [lint]="shellcheck pycodestyle ansible-lint yamllint"
  # Smoke harness: Debian's own kernel under QEMU with a busybox initramfs.
  [smoke]="build-essential busybox-static qemu-system-x86 qemu-utils cpio
           xz-utils zstd dpkg-dev"
  # Rendered-page check of report.html.
  [browser]="chromium fonts-dejavu-core python3-pil"
)
declare -A COMPOSITE=(
  [lab]="build kernel hypervisor ansible reports"
  # make check's steps: workloads:check (build, lint), kernel-build:check
  # (kernel, lint), reports:check (reports, lint, browser: its page check
  # needs chromium), lint-lab and lab-unit (ansible, lint, reports).
  # tests/check-tools check lists what they run.
  [check]="build kernel reports lint ansible browser"
  [test]="build kernel hypervisor ansible reports lint smoke browser"
  [all]="test"
)

list=0
if [ "${1:-}" = --list ]; then
  list=1
  shift
fi
groups=("$@")
[ ${#groups[@]} -gt 0 ] || groups=(all)
expand() {
  local g=$1
  if [ -n "${COMPOSITE[$g]+x}" ]; then
    local sub
    for sub in ${COMPOSITE[$g]}; do expand "$sub"; done
  elif [ -n "${PKGS[$g]+x}" ]; then
    local -a p
    read -r -d '' -a p <<<"${PKGS[$g]}" || true
    printf '%s\n' "${p[@]}"
  else
    echo "deps.sh: unknown group '$g' (${!PKGS[*]} ${!COMPOSITE[*]})" >&2
    return 2
  fi
}
want=()
for g in "${groups[@]}"; do
  out=$(expand "$g") || exit 2
  mapfile -t -O "${#want[@]}" want <<<"$out"
done
mapfile -t want < <(printf '%s\n' "${want[@]}" | sort -u)
if [ "$list" = 1 ]; then
  printf '%s\n' "${want[@]}"
  exit 0
fi

missing=()
for p in "${want[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed' ||
    missing+=("$p")
done
[ ${#missing[@]} -eq 0 ] && exit 0
echo "deps.sh: installing ${missing[*]}" >&2
export DEBIAN_FRONTEND=noninteractive
# Wait for another apt/dpkg run (a parallel install) instead of failing.
apt_opts=(-o DPkg::Lock::Timeout=900)
apt-get "${apt_opts[@]}" update -q >/dev/null
apt-get "${apt_opts[@]}" install -y -q --no-install-recommends "${missing[@]}" >/dev/null
