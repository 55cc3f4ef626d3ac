"""A guest's cmdline_extra against the lab's kernel parameters
(roles/validate/files/validate-inventory, LAB_PARAMS): a misspelt name or
value, a parameter given twice, or one the guest's kernel does not have
would boot the guest in the default fault-lock mode without a word."""

import os

import pytest
from test_regress import TOP, VI, doc, twin


def per_guest(cmdline, variant="patched", source=None):
    g = twin("baseline", 22241, cmdline_extra=cmdline)
    g["kernel"] = {"variant": variant, "flavour": "perf"}
    if source:
        g["kernel"]["source"] = source
    v = VI.Validator(doc(guests={"hl-g": g}, required=False))
    v.per_guest()
    return [e for e in v.errors if "cmdline_extra" in e]


@pytest.mark.parametrize("variant,source", [
    ("patched", None), ("patched", "6.12"), ("canary-noshare", None)])
@pytest.mark.parametrize("cmdline", [
    "", "hugetlb_fault_lock=i_mmap", "hugetlb_fault_lock=vma",
    "hugetlb.fault_lock=i_mmap", "quiet hugetlb_fault_lock=vma loglevel=7",
    "hugepagesz=2M hugetlb_free_vmemmap=on"])
def test_good_command_lines(cmdline, variant, source):
    assert per_guest(cmdline, variant, source) == []


@pytest.mark.parametrize("cmdline,want", [
    ("hugetlb_fault_lck=i_mmap",
     "hl-g: cmdline_extra: unknown kernel parameter 'hugetlb_fault_lck', "
     "did you mean 'hugetlb_fault_lock'?"),
    ("hugetlb.faultlock=i_mmap",
     "did you mean 'hugetlb.fault_lock'?"),
    ("hugetlb_fault_lock=immap",
     "hl-g: cmdline_extra: hugetlb_fault_lock: 'immap' is not allowed "
     "(allowed: vma or i_mmap"),
    ("hugetlb_fault_lock=I_MMAP", "'I_MMAP' is not allowed"),
    ("hugetlb_fault_lock", "'' is not allowed"),
    ("hugetlb_fault_lock=vma hugetlb.fault_lock=i_mmap",
     "hl-g: cmdline_extra: 'hugetlb.fault_lock=i_mmap' after "
     "'hugetlb_fault_lock=vma': the fault-lock mode is given twice"),
])
def test_mistakes_are_named(cmdline, want):
    errs = per_guest(cmdline)
    assert len(errs) == 1 and want in errs[0], errs


def test_stock_kernel_has_no_fault_lock():
    for source in (None, "6.12"):
        errs = per_guest("hugetlb_fault_lock=i_mmap", "stock", source)
        assert errs == [
            "hl-g: cmdline_extra: hugetlb_fault_lock: kernel stock perf "
            "(line %s) has no such parameter: it would run the default "
            "mode (allowed: a variant whose series adds it, e.g. patched)"
            % (source or "6.1")]


def test_parameters_come_from_the_series():
    """Which kernels have the knob is read from the patches each variant
    applies, so a series that drops the patch drops the parameter."""
    assert VI.kernel_params(TOP, "6.1", "stock") == set()
    for line in ("6.1", "6.12"):
        assert VI.kernel_params(TOP, line, "patched") == set(VI.LAB_PARAMS)
    assert VI.kernel_params(os.path.join(TOP, "nowhere"), "6.1",
                            "patched") == set()
