"""The savings model (KERNEL-NOTES.md arithmetic)."""

import pytest

from hugelab_report import fmt, model
from hugelab_report.model import GiB, KiB, MiB, TiB


def test_slots_aligned_and_skewed():
    assert model.slots(GiB) == (1, 1)
    assert model.slots(GiB, 2 * MiB) == (2, 0)
    assert model.slots(3 * GiB, 2 * MiB) == (4, 2)
    assert model.slots(512 * MiB) == (1, 0)
    assert model.slots(0) == (0, 0)


def test_4k_pages_cost_pte_pages_plus_pmd_pages():
    e = model.Expectation("4k", 2 * GiB, 10)
    # KERNEL-NOTES: G x (2 MiB + 4 KiB) per process.
    assert e.bytes == 10 * 2 * (2 * MiB + 4 * KiB)
    assert not e.sharing


def test_4k_pte_pages_are_the_2m_ranges_touched_at_the_address():
    # PostgreSQL's 298 MiB of shmem at 0x7f463add2000: 150 ranges (149 x
    # 2 MiB of size, both edges partial) and 2 slots, as lib/model.c
    e = model.Expectation("4k", 298 * MiB, 2, address=0x7f463add2000)
    assert e.marginal_pages == 150 + 2
    # 2 MiB-aligned, or no address: the size in 2 MiB
    assert model.Expectation("4k", 298 * MiB, 2,
                             address=0x7f4640000000).marginal_pages == 149 + 1
    assert model.Expectation("4k", 298 * MiB, 2).marginal_pages == 149 + 1
    assert model.slots(4 * MiB, 4096, 2 * MiB) == (3, 1)


def test_2m_aligned_shares_after_first_process():
    e = model.Expectation("2m-aligned", 4 * GiB, 100)
    assert e.sharing
    assert e.pages == 4
    assert e.marginal_pages == 0
    assert e.shared_pmd_events == 99 * 4


def test_2m_skewed_pays_every_straddled_slot():
    e = model.Expectation("2m-skewed", GiB, 100)
    assert not e.sharing
    assert e.pages == 200
    assert e.shared_pmd_events == 0
    # A larger skewed mapping still shares the slots it covers fully.
    big = model.Expectation("2m-skewed", 3 * GiB, 10)
    assert big.marginal_pages == 2
    assert big.pages == 4 + 9 * 2


def test_1g_pages_cost_nothing():
    assert model.Expectation("1g", 8 * GiB, 1000).bytes == 0


def test_single_process_does_not_share():
    assert not model.Expectation("2m-aligned", GiB, 1).sharing


def test_unknown_mode_rejected():
    with pytest.raises(ValueError):
        model.Expectation("64k", GiB, 1)


def test_mode_of_config():
    assert model.mode_of({"backing": "anon", "page_size": 4096}) == "4k"
    assert model.mode_of({"page_size": 2 * MiB,
                          "placement": "skewed"}) == "2m-skewed"
    assert model.mode_of({"page_size": 2 * MiB,
                          "placement": "aligned"}) == "2m-aligned"
    assert model.mode_of({"page_size": GiB}) == "1g"
    assert model.mode_of({}) is None


def test_article_arithmetic():
    # 1 GiB x 10,000 processes saves 9,999 PMD pages: ~39 MiB, not 39 GiB.
    one = model.sharing_savings(GiB, 10000)
    assert one == 9999 * 4 * KiB
    assert 39 * MiB < one < 40 * MiB
    # 39 GiB needs a 1 TiB mapping: 1024 PMD pages per process.
    tera = model.sharing_savings(TiB, 10000)
    assert tera == 1024 * 9999 * 4 * KiB
    assert 39 * GiB < tera < 40 * GiB
    need = model.size_for_savings(39 * GiB, 10000)
    assert 1000 * GiB < need <= TiB


def test_savings_scale_with_measured_bytes_per_page():
    assert model.sharing_savings(GiB, 11, 2048) == 10 * 2048
    assert model.size_for_savings(GiB, 1) is None


@pytest.mark.parametrize("n, text", [
    (0, "0 B"), (1023, "1023 B"), (1536, "1.50 KiB"), (1000 * KiB, "1000 KiB"),
    (39.06 * GiB, "39.1 GiB"), (-4096, "-4.00 KiB"), (None, "n/a")])
def test_human_bytes(n, text):
    assert fmt.human_bytes(n) == text
