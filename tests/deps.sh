#!/usr/bin/env bash
# Install the Debian packages a part of hugelab needs.
#   tests/deps.sh GROUP...   groups: check smoke kernel lab reports all
# Only Debian packages, only through apt; idempotent (dpkg-query first).
set -euo pipefail

declare -A PKGS=(
  [check]="build-essential pkg-config libcmocka-dev python3 python3-jinja2
           python3-matplotlib python3-scipy python3-pytest pycodestyle
           shellcheck ansible ansible-lint yamllint"
  [smoke]="build-essential busybox-static qemu-system-x86 qemu-utils cpio
           xz-utils zstd dpkg-dev"
  [kernel]="linux-source-6.1 build-essential bc bison flex libssl-dev
            libelf-dev dwarves rsync kmod cpio dpkg-dev fakeroot ccache
            xz-utils git perl python3 python3-scipy qemu-system-x86 busybox-static
            shellcheck pycodestyle"
  [lab]="ansible ansible-lint libvirt-daemon-system libvirt-clients
         python3-libvirt python3-lxml qemu-system-x86 qemu-utils debootstrap
         cloud-image-utils passt openssh-client genisoimage busybox-static
         cpio e2fsprogs rsync"
  [reports]="python3 python3-jinja2 python3-matplotlib python3-scipy
             python3-pytest pycodestyle"
)

groups=("$@")
[ ${#groups[@]} -gt 0 ] || groups=(all)
want=()
for g in "${groups[@]}"; do
  if [ "$g" = all ]; then
    for k in "${!PKGS[@]}"; do
      read -r -a p <<<"${PKGS[$k]//$'\n'/ }"
      want+=("${p[@]}")
    done
  elif [ -n "${PKGS[$g]+x}" ]; then
    read -r -a p <<<"${PKGS[$g]//$'\n'/ }"
    want+=("${p[@]}")
  else
    echo "deps.sh: unknown group '$g' (check smoke kernel lab reports all)" >&2
    exit 2
  fi
done

missing=()
for p in $(printf '%s\n' "${want[@]}" | sort -u); do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed' ||
    missing+=("$p")
done
[ ${#missing[@]} -eq 0 ] && exit 0
echo "deps.sh: installing ${missing[*]}" >&2
export DEBIAN_FRONTEND=noninteractive
apt-get update -q >/dev/null
apt-get install -y -q --no-install-recommends "${missing[@]}" >/dev/null
