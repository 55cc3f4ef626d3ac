# hugelab top-level entry points.  See README.md.
#   make lab     fresh Debian 12 machine -> kernel, image, fleet, runs, reports
#   make test    the full suite (what CI runs through .ci/run)
#   make check   the fast subset: builds, unit tests, linters; no guests
#   make regress the fleet regression run: a baseline and a candidate
#                kernel side by side, R rounds, then the comparison
#                (playbooks/regress; make's own exit status is 2 for any
#                failure: run playbooks/regress itself for 0/1/2)

HUGELAB_CACHE ?= /var/cache/hugelab
INVENTORY ?= inventory
# make regress: the regression fleet and options for both ansible-playbook
# calls, e.g. REGRESS_INVENTORY=inventories/regress-canary or
# REGRESS_ARGS='-e regress_repeats=4'.
REGRESS_INVENTORY ?= inventories/regress
REGRESS_ARGS ?=
export HUGELAB_CACHE

# Fast steps (no guests).
CHECK_STEPS := workloads:check kernel-build:check reports:check lint-lab lab-unit
# make test (tests/run-suite: "A+B,C" runs A beside the chain B then C):
# kernel-build:test alone (it builds the debug kernels with make -j2 and
# compares fault latencies), then e2e with the steps that boot no libvirt
# guest beside it (e2e's guest mostly waits on one TCG vCPU), then
# e2e-multi-hv alone.
comma := ,
empty :=
space := $(empty) $(empty)
BESIDE_E2E := fresh-root $(CHECK_STEPS) workloads:smoke
TEST_STEPS := kernel-build:test e2e+$(subst $(space),$(comma),$(BESIDE_E2E)) e2e-multi-hv

.PHONY: lab test check deps lint-lab lab-unit e2e e2e-rescue e2e-multi-hv teardown fresh-root regress

lab:
	tests/deps.sh lab
	ansible-playbook -i $(INVENTORY) site.yml

test:
	tests/deps.sh test
	tests/run-suite $(TEST_STEPS)

# tests/check-tools check: deps.sh's check group brought everything the
# steps run (a missing program fails here, named, not in a step).
check:
	tests/deps.sh check
	/usr/bin/python3 tests/check-tools check
	tests/run-suite $(CHECK_STEPS)

regress:
	tests/deps.sh lab
	playbooks/regress -i $(REGRESS_INVENTORY) $(REGRESS_ARGS)

LAB_SH := tests/fresh-root images/host-mirror tests/e2e/run tests/e2e/panic tests/e2e/rescue-run \
	tests/e2e/faults/kill-sshd tests/e2e/faults/fill-disk tests/e2e/faults/hang images/build-base tests/deps.sh \
	tests/run-suite .ci/run playbooks/roles/host/files/kvm-probe playbooks/roles/host/files/start-daemon \
	playbooks/roles/run/files/make-bundle playbooks/roles/run/files/build-selftests \
	tests/e2e/multi-hv/run tests/e2e/multi-hv/hv2 tests/minbase-tarball playbooks/regress
LAB_PY := tests/check-tools playbooks/roles/validate/files/validate-inventory tests/e2e/check tests/e2e/check-failure tests/e2e/validate-test \
	playbooks/roles/run/files/selftest-run tests/e2e/multi-hv/check \
	playbooks/roles/job_wait/files/job-wait playbooks/callback_plugins/hugelab.py \
	playbooks/tests/test_regress.py playbooks/tests/test_cmdline.py \
	playbooks/tests/test_run_result.py playbooks/tests/test_selftest_run.py \
	playbooks/tests/test_validate.py playbooks/tests/test_owner.py playbooks/tests/filters.py \
	playbooks/filter_plugins/hugelab_lab.py playbooks/filter_plugins/hugelab_roles.py \
	playbooks/tests/test_roles_filters.py playbooks/tests/test_rescue.py playbooks/tests/test_phases.py playbooks/tests/test_batch_collect.py \
	playbooks/roles/fleet/files/boot-wait tests/e2e/fault-watch tests/test_run_suite.py

lint-lab:
	ansible-playbook -i $(INVENTORY) --syntax-check site.yml playbooks/teardown.yml \
		playbooks/validate.yml playbooks/regress-plan.yml
	ansible-lint -q site.yml playbooks/
	shellcheck $(LAB_SH)
	pycodestyle $(LAB_PY)

# The lab's own unit tests (validation rules, of a regression fleet too,
# the regression plan and driver's refusals, domain owners; validation
# only, no guest; test_owner.py defines and undefines two small domains,
# never started, when libvirt answers).
lab-unit:
	/usr/bin/python3 -m pytest -q -p no:cacheprovider playbooks/tests tests/test_run_suite.py

e2e:
	tests/e2e/run

# Guests that fail outside an experiment: a panic at boot, a QEMU stopped
# with SIGSTOP during install; the guest after them must still run
# (tests/e2e/rescue-run; a documented run, playbooks/README.md).
# HUGELAB_RESCUE_CASES=during: sshd killed, the disk full, workloads that
# never exit, each during an experiment; =all: both.
e2e-rescue:
	tests/e2e/rescue-run

# Two hypervisors on one machine (localhost + an sshd on a loopback port).
e2e-multi-hv:
	tests/e2e/multi-hv/run

# A clean Debian 12 root: tests/deps.sh check/lab/test install all the
# code calls (check first: alone, it must bring what make check runs).
fresh-root:
	tests/fresh-root check lab test

teardown:
	ansible-playbook -i $(INVENTORY) playbooks/teardown.yml
