# hugelab top-level entry points.  See README.md.
#   make lab     fresh Debian 12 machine -> kernel, image, fleet, runs, reports
#   make test    the full suite (what CI runs through .ci/run)
#   make check   the fast subset: builds, unit tests, linters; no guests

HUGELAB_CACHE ?= /var/cache/hugelab
INVENTORY ?= inventory
export HUGELAB_CACHE

# Fast steps (no guests), then the guest steps in rising cost.
CHECK_STEPS := workloads:check kernel-build:check reports:check lint-lab
TEST_STEPS := fresh-root $(CHECK_STEPS) workloads:smoke kernel-build:test e2e e2e-multi-hv

.PHONY: lab test check deps lint-lab e2e e2e-multi-hv teardown fresh-root

lab:
	tests/deps.sh lab
	ansible-playbook -i $(INVENTORY) site.yml

test:
	tests/deps.sh test
	tests/run-suite $(TEST_STEPS)

check:
	tests/deps.sh check
	tests/run-suite $(CHECK_STEPS)

LAB_SH := tests/fresh-root images/host-mirror tests/e2e/run tests/e2e/panic images/build-base tests/deps.sh \
	tests/run-suite .ci/run playbooks/roles/host/files/kvm-probe \
	playbooks/roles/run/files/make-bundle playbooks/roles/run/files/build-selftests \
	tests/e2e/multi-hv/run
LAB_PY := tests/check-tools playbooks/roles/validate/files/validate-inventory tests/e2e/check tests/e2e/check-failure tests/e2e/validate-test \
	playbooks/roles/run/files/selftest-run tests/e2e/multi-hv/check \
	playbooks/tasks/job-wait playbooks/callback_plugins/hugelab.py

lint-lab:
	ansible-playbook -i $(INVENTORY) --syntax-check site.yml playbooks/teardown.yml \
		playbooks/validate.yml
	ansible-lint -q site.yml playbooks/
	shellcheck $(LAB_SH)
	pycodestyle $(LAB_PY)

e2e:
	tests/e2e/run

# Two hypervisors on one machine (localhost + an sshd on a loopback port).
e2e-multi-hv:
	tests/e2e/multi-hv/run

# A clean Debian 12 root: tests/deps.sh lab/test install all the code calls.
fresh-root:
	tests/fresh-root lab test

teardown:
	ansible-playbook -i $(INVENTORY) playbooks/teardown.yml
