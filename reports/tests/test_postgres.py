"""PostgreSQL results (postgres.py): the model for PostgreSQL's mapping, the
baseline from the 1 GiB-page run, shmdb at the same count, the render."""

from hugelab_report import model, postgres, render, rundir

KiB, MiB, GiB = model.KiB, model.MiB, model.GiB


def pg_doc(page, address, size, levels, status="ok", failures=(),
           neighbours=None):
    """A hugelab.pgbench/1 document with one hold per (clients, total
    bytes per backend) and one select-only run each; `neighbours`
    (neighbour_slots, neighbour_pte_spans) of the mapping, or none (a
    result from before the fields)."""
    full = model.slots(size, address)
    out = []
    for n, per in levels:
        out.append({
            "clients": n,
            "hold": {"per_backend": {"total": per, "connected": per / 2,
                                     "warm_increment": per / 2},
                     "vmpte": {"warm": {"mean": per + 4096}},
                     "memory": {"per_backend": 1.5 * MiB},
                     "vmstat_warm": {"htlb_pmd_share": n * full[1],
                                     "htlb_pmd_unshare": 0},
                     "touch_errors": 0},
            "runs": [{"mode": "select-only", "churn": False, "clients": n,
                      "exit": 0, "summary": {"tps": 1000.5,
                                             "transactions": 20010,
                                             "failed": 0,
                                             "initial_connection_ms": 900.0},
                      "latency_ms": {"p50": 1.0, "p99": 9.5, "p999": 20.0,
                                     "max": 40.0},
                      "pagetables_max": 5 * MiB,
                      "vmstat_delta": {"htlb_pmd_share": 3,
                                       "htlb_pmd_unshare": 2}}]})
    doc = {"schema": "hugelab.pgbench/1", "program": "pgbench",
           "status": status, "failures": list(failures),
           "config": {"huge_pages": "off" if page == 4096 else "on",
                      "shared_buffers": size - 64 * MiB},
           "postgres": {"version": "postgres (PostgreSQL) 15.18"},
           "mapping": {"address": "0x%x" % address, "size": size,
                       "page_size": page, "slots": full[0],
                       "full_slots": full[1]} if levels else None,
           "levels": out}
    if neighbours is not None and doc["mapping"]:
        doc["mapping"]["neighbour_slots"] = neighbours[0]
        doc["mapping"]["neighbour_pte_spans"] = neighbours[1]
    return doc


def shmdb_doc(placement, n, per):
    return {"schema": "hugelab.shmdb/1", "program": "shmdb", "status": "ok",
            "config": {"page_size": 2 * MiB, "size": GiB, "sessions": n,
                       "placement": placement, "disrupt": []},
            "pagetables_per_session": per,
            "model": {"per_session_bytes": per}}


def make_run(docs):
    results = [rundir.Result("hl-pg", name, "/x/%s.json" % name, doc)
               for name, doc in docs]
    guest = rundir.Guest("hl-pg", "/x", {"name": "hl-pg", "status": "ok"},
                         "", results, [])
    return rundir.Run("/x", {"run_id": "t"}, [guest])


# 2 MiB pages: 2.2 GiB at 1.5 GiB into a slot -> slots 0.5..2.7: 3 touched
# (1 GiB + 0.5, ...), full: 1
ADDR_2M = 0x7f0000000000 + GiB + 512 * MiB
SIZE_2M = 2200 * MiB
ADDR_1G = 0x7f0000000000
SIZE_1G = GiB


def test_mapping_model():
    # partial slots cost one PMD page each
    assert model.slots(SIZE_2M, ADDR_2M) == (3, 1)
    assert postgres.mapping_model(2 * MiB, ADDR_2M, SIZE_2M) == 2 * 4 * KiB
    assert postgres.mapping_model(2 * MiB, 0, 2 * GiB) == 0
    assert postgres.mapping_model(GiB, ADDR_1G, 3 * GiB) == 0
    # 4 KiB: a PTE page per 2 MiB and a PMD page per slot (the host run's
    # 276 MiB mapping: 139 + 1 pages)
    assert postgres.mapping_model(4096, 0x7fce5df10000, 289808384) == \
        140 * 4 * KiB
    assert postgres.mapping_model(64 * KiB, 0, GiB) is None


def test_baseline_mapping_and_shmdb():
    run = make_run([
        ("pg-2m", pg_doc(2 * MiB, ADDR_2M, SIZE_2M,
                         [(100, 150 * KiB), (500, 152 * KiB)])),
        ("pg-1g", pg_doc(GiB, ADDR_1G, SIZE_1G,
                         [(100, 141 * KiB), (500, 143 * KiB)])),
        ("shmdb-aligned-100", shmdb_doc("aligned", 100, 41.0)),
        ("shmdb-skewed-100", shmdb_doc("skewed", 100, 8192.0))])
    pg = postgres.analyse(run)
    rows = {(r["experiment"], r["backends"]): r for r in pg["levels"]}
    r = rows[("pg-2m", 100)]
    assert r["baseline"] == 141 * KiB
    assert r["mapping_measured"] == 9 * KiB
    assert r["model"] == 8 * KiB
    assert r["unexplained"] == 1 * KiB
    assert r["model_shares"] == 99          # one full slot, 99 more
    assert r["pmd_share"] == 100
    assert [x["placement"] for x in r["shmdb"]] == ["aligned", "skewed"]
    assert rows[("pg-2m", 500)]["shmdb"] == []
    assert rows[("pg-1g", 500)]["mapping_measured"] == 0
    assert any("1 of them full" in e
               for e in r["explanation"])
    assert pg["versions"] == ["postgres (PostgreSQL) 15.18"]
    assert len(pg["runs"]) == 4
    assert pg["runs"][0]["pmd_share"] == 3
    assert pg["runs"][0]["tps"] == 1000.5       # pgbench's, no window


def test_steady_window_figures_win():
    doc = pg_doc(2 * MiB, ADDR_2M, SIZE_2M, [(100, 150 * KiB)])
    doc["levels"][0]["runs"][0]["steady"] = {
        "seconds": 15.0, "transactions": 300, "tps": 20.0,
        "latency_ms": {"p50": 2.0, "p99": 30.0, "p999": 50.0, "max": 60.0}}
    r = postgres.analyse(make_run([("pg-2m", doc)]))["runs"][0]
    assert (r["tps"], r["p99_ms"], r["steady_s"]) == (20.0, 30.0, 15.0)


def test_share_check():
    run = make_run([
        ("pg-2m", pg_doc(2 * MiB, ADDR_2M, SIZE_2M, [(100, 150 * KiB)])),
        ("pg-1g", pg_doc(GiB, ADDR_1G, SIZE_1G, [(100, 141 * KiB)]))])
    checks = {c["name"]: c for c in postgres.analyse(run)["checks"]}
    c = checks["hl-pg/pg-2m 100 backends PMD shares"]
    # 100 shares of the one full slot: within 99-109
    assert c["status"] == "pass", c
    assert checks["hl-pg/pg-1g 100 backends PMD shares"]["status"] == "skip"
    # a kernel that does not share
    doc = pg_doc(2 * MiB, ADDR_2M, SIZE_2M, [(100, 150 * KiB)])
    doc["levels"][0]["hold"]["vmstat_warm"]["htlb_pmd_share"] = 0
    c = postgres.analyse(make_run([("pg-2m", doc)]))["checks"][0]
    assert c["status"] == "fail" and "model 99-109" in c["message"]
    # without a full slot nothing is shared
    doc = pg_doc(2 * MiB, 2 * MiB, 900 * MiB, [(800, 150 * KiB)])
    c = postgres.analyse(make_run([("pg-2m", doc)]))["checks"][0]
    assert c["status"] == "pass" and "model 0-0" in c["message"]
    # a stock kernel has no counter
    del doc["levels"][0]["hold"]["vmstat_warm"]["htlb_pmd_share"]
    c = postgres.analyse(make_run([("pg-2m", doc)]))["checks"][0]
    assert c["status"] == "skip"


def test_no_baseline_without_a_1g_run():
    run = make_run([("pg-off", pg_doc(4096, 0x7fce5df10000, 289808384,
                                      [(20, 686489.6)]))])
    r = postgres.analyse(run)["levels"][0]
    assert r["baseline"] is None and r["mapping_measured"] is None
    assert r["model"] == 573440
    assert r["pmd_share"] == 0
    assert any("measured - model = 110 KiB" in e for e in r["explanation"])


def test_failed_start_is_listed_and_rendered():
    bad = pg_doc(2 * MiB, 0, GiB, [], status="error",
                 failures=["PostgreSQL did not start: could not map "
                           "anonymous shared memory"])
    run = make_run([("pg-2m", bad)])
    pg = postgres.analyse(run)
    assert pg["levels"] == [] and pg["runs"] == []
    assert pg["failures"][0]["status"] == "error"
    secs = render.postgres_sections(pg)
    text = str([b for s in secs for b in s.blocks])
    assert "could not map anonymous shared memory" in text


def test_render_puts_model_and_shmdb_beside_postgres():
    run = make_run([
        ("pg-2m", pg_doc(2 * MiB, ADDR_2M, SIZE_2M, [(100, 150 * KiB)])),
        ("pg-1g", pg_doc(GiB, ADDR_1G, SIZE_1G, [(100, 141 * KiB)])),
        ("shmdb-skewed-100", shmdb_doc("skewed", 100, 8192.0))])
    secs = render.postgres_sections(postgres.analyse(run))
    assert [s.title for s in secs] == ["PostgreSQL"]
    table = [b for b in secs[0].blocks if b["kind"] == "table"][0]
    row = [r for r in table["rows"] if r[1] == "pg-2m"][0]
    assert row[5] == "150 KiB" and row[6] == "141 KiB"
    assert row[7] == "9.00 KiB" and row[8] == "8.00 KiB"
    assert row[9] == "n/a"         # no neighbour fields: no own model
    assert "skewed 1.00 GiB shared: 8.00 KiB" in row[11]


# The guest run (PostgreSQL 15.20, patched 6.1): 980 MiB of 2 MiB pages at
# 0x7f3aa8600000, two partial slots, the postmaster's libraries directly
# above it in the top one; 298 MiB of 4 KiB pages at 0x7f463add2000
# (2 partial slots, 150 2 MiB spans of which the 2 at the edges partial).
ADDR_G2M, SIZE_G2M = 0x7f3aa8600000, 980 * MiB
ADDR_G4K, SIZE_G4K = 0x7f463add2000, 298 * MiB


def guest_run(n2m=None, n4k=None, per2m=145 * KiB, per4k=741 * KiB):
    """The guest's 2 MiB, 4 KiB and 1 GiB results at 100 backends, with
    the given neighbour fields (None: a result before them)."""
    return make_run([
        ("pg-2m", pg_doc(2 * MiB, ADDR_G2M, SIZE_G2M, [(100, per2m)],
                         neighbours=n2m)),
        ("pg-off", pg_doc(4096, ADDR_G4K, SIZE_G4K, [(100, per4k)],
                          neighbours=n4k)),
        ("pg-1g", pg_doc(GiB, ADDR_1G, SIZE_1G, [(100, 141 * KiB)],
                         neighbours=(0, 0)))])


def rows_of(run):
    return {r["experiment"]: r for r in postgres.analyse(run)["levels"]}


def test_partial_spans():
    assert postgres.partial_spans(ADDR_G4K, SIZE_G4K, 2 * MiB) == 2
    assert postgres.partial_spans(ADDR_G2M, SIZE_G2M, 2 * MiB) == 0
    assert postgres.partial_spans(ADDR_G2M, SIZE_G2M, GiB) == 2
    assert postgres.partial_spans(4096, 4096, 2 * MiB) == 1
    assert postgres.partial_spans(0, 2 * GiB, GiB) == 0
    assert postgres.partial_spans(None, GiB, GiB) == 0


def test_neighbours_give_the_segments_own_cost():
    # measured - baseline = 4 KiB: the model's 8 KiB less the top slot's
    # PMD page, which the libraries need anyway
    r = rows_of(guest_run(n2m=(1, 0), n4k=(1, 1),
                          per4k=141 * KiB + 150 * 4 * KiB))
    g = r["pg-2m"]
    assert (g["neighbour_slots"], g["neighbour_pte_spans"]) == (1, 0)
    assert g["model"] == 8 * KiB and g["model_own"] == 4 * KiB
    assert g["mapping_measured"] == 4 * KiB and g["unexplained"] == 0
    text = "; ".join(g["explanation"])
    assert ("1 of the 2 partial 1 GiB slots also holds the postmaster's "
            "other mappings" in text)
    assert ("so its PMD page is in the baseline too: the segment's own "
            "cost is 4.00 KiB" in text)
    assert ("measured - baseline - the segment's own cost = 0 B per "
            "backend" in text)
    assert "does not record" not in text
    # 4 KiB: 2 PMD + 150 PTE pages, the top slot's and top span's shared
    o = r["pg-off"]
    assert o["model"] == 152 * 4 * KiB and o["model_own"] == 150 * 4 * KiB
    assert o["unexplained"] == 0
    text = "; ".join(o["explanation"])
    assert ("1 of the 2 partial 1 GiB slots and 1 of the 2 partial 2 MiB "
            "spans at its edges also hold the postmaster's other mappings"
            in text)
    assert "so their PMD and PTE pages are in the baseline too" in text
    # 1 GiB pages: nothing to take off, no sentence about it
    assert r["pg-1g"]["model_own"] == 0
    assert not any("other mappings" in e for e in r["pg-1g"]["explanation"])


def test_2m_edge_spans_do_not_count_and_the_floor():
    # a 2 MiB-page mapping has no PTE page: only the slots count
    r = rows_of(guest_run(n2m=(2, 1)))["pg-2m"]
    assert r["model_own"] == 0
    assert "2 of the 2 partial 1 GiB slots also hold" in \
        "; ".join(r["explanation"])
    assert "spans" not in r["explanation"][1]


def test_no_neighbours_the_model_is_the_own_cost():
    r = rows_of(guest_run(n2m=(0, 0), per2m=149 * KiB))["pg-2m"]
    assert r["model_own"] == r["model"] == 8 * KiB
    assert r["unexplained"] == 0
    assert any("no other mapping of the postmaster lies in the segment's "
               "partial slots: the model is the segment's own cost" in e
               for e in r["explanation"])


def test_own_cost_off_by_whole_pages_names_the_baseline_layout():
    """inventories/pg run 20261205T183644Z: 2 MiB backends measured 2
    pages under baseline + own cost, 4 KiB ones 1 page over; the row says
    the 1 GiB-page baseline is another cluster's layout, with both VmPTE
    figures, and not when the figures agree."""
    g = rows_of(guest_run(n2m=(1, 0), per2m=141 * KiB + 4 * KiB - 8 * KiB))
    text = "; ".join(g["pg-2m"]["explanation"])
    assert ("that is 2.00 page-table pages per backend under the model; "
            "the baseline comes from another cluster (1 GiB pages)" in text)
    assert "VmPTE of a warm backend: 141 KiB here, 145 KiB in the " \
        "baseline" in text
    o = rows_of(guest_run(n4k=(1, 1), per4k=141 * KiB + 150 * 4 * KiB +
                          4 * KiB))["pg-off"]
    assert "1.00 page-table pages per backend over the model" in \
        "; ".join(o["explanation"])
    ok = rows_of(guest_run(n2m=(1, 0), per2m=141 * KiB + 4 * KiB + 512))
    assert not any("another cluster" in e
                   for e in ok["pg-2m"]["explanation"])


def test_older_results_short_by_whole_pages_are_explained():
    # the guest run's figures, without the neighbour fields: 3.6 KiB and
    # -12 KiB against the model
    per2m = 141 * KiB + 3.6 * KiB
    per4k = 141 * KiB + 152 * 4 * KiB - 12 * KiB
    r = rows_of(guest_run(per2m=per2m, per4k=per4k))
    g, o = r["pg-2m"], r["pg-off"]
    assert g["model_own"] is None and g["neighbour_slots"] is None
    assert abs(g["unexplained"] + 4.4 * KiB) < 1e-6
    text = "; ".join(g["explanation"])
    assert "measured - baseline - model = -4.40 KiB per backend" in text
    assert ("that is about 1 page-table page short of the model: the slots "
            "at the segment's edges may also hold the backend's other "
            "mappings (libraries mapped next to the segment), whose "
            "page-table pages the baseline already counts" in text)
    text = "; ".join(o["explanation"])
    assert ("about 3 page-table pages short of the model: the 1 GiB slots "
            "and 2 MiB spans at the segment's edges" in text)


def test_older_results_not_short_by_whole_edge_pages():
    for per2m in (141 * KiB + 6 * KiB,      # -2 KiB: half a page
                  141 * KiB + 9 * KiB,      # more than the model
                  141 * KiB - 4 * KiB):     # 3 pages: more than 2 edges
        g = rows_of(guest_run(per2m=per2m))["pg-2m"]
        assert not any("short of the model" in e
                       for e in g["explanation"]), (per2m, g["explanation"])


def test_render_shows_the_own_model():
    run = guest_run(n2m=(1, 0), n4k=(1, 1))
    secs = render.postgres_sections(postgres.analyse(run))
    table = [b for b in secs[0].blocks if b["kind"] == "table"][0]
    assert table["headers"][8:10] == ["model", "own"]
    row = [r for r in table["rows"] if r[1] == "pg-2m"][0]
    assert row[8] == "8.00 KiB" and row[9] == "4.00 KiB"


def test_no_section_without_pgbench():
    run = make_run([("shmdb-skewed-100", shmdb_doc("skewed", 100, 8192.0))])
    assert render.postgres_sections(postgres.analyse(run)) == []


def test_data_placement_is_shown_when_recorded():
    doc = pg_doc(2 * MiB, ADDR_2M, SIZE_2M, [(100, 150 * KiB)])
    doc["database"] = {"placement": {
        "mode": "full-slot", "filler_blocks": 48079,
        "data_buffers_per_slot": {"1": 3848}, "data_buffers": 3848,
        "data_buffers_in_full_slots": 3848}}
    old = pg_doc(2 * MiB, ADDR_2M, SIZE_2M, [(100, 150 * KiB)])
    an = postgres.analyse(make_run([("pg-2m", doc), ("pg-old", old)]))
    (p,) = an["placements"]
    assert (p["experiment"], p["slots"], p["in_full_slots"]) == \
        ("pg-2m", [1], 3848)
    secs = render.postgres_sections(an)
    (t,) = [b for b in secs[0].blocks if b["kind"] == "table" and
            b["headers"][2] == "placement"]
    assert t["rows"] == [["hl-pg", "pg-2m", "full-slot", "48079", "1",
                          "3848", "3848"]]
    # no placement recorded: no table
    an = postgres.analyse(make_run([("pg-old", old)]))
    assert an["placements"] == []
    assert not [b for b in render.postgres_sections(an)[0].blocks
                if b["kind"] == "table" and b["headers"][2] == "placement"]
