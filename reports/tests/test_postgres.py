"""PostgreSQL results (postgres.py): the model for PostgreSQL's mapping, the
baseline from the 1 GiB-page run, shmdb at the same count, the render."""

from hugelab_report import model, postgres, render, rundir

KiB, MiB, GiB = model.KiB, model.MiB, model.GiB


def pg_doc(page, address, size, levels, status="ok", failures=()):
    """A hugelab.pgbench/1 document with one hold per (clients, total
    bytes per backend) and one select-only run each."""
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
    return {"schema": "hugelab.pgbench/1", "program": "pgbench",
            "status": status, "failures": list(failures),
            "config": {"huge_pages": "off" if page == 4096 else "on",
                       "shared_buffers": size - 64 * MiB},
            "postgres": {"version": "postgres (PostgreSQL) 15.18"},
            "mapping": {"address": "0x%x" % address, "size": size,
                        "page_size": page, "slots": full[0],
                        "full_slots": full[1]} if levels else None,
            "levels": out}


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
    assert "skewed 1.00 GiB shared: 8.00 KiB" in row[10]


def test_no_section_without_pgbench():
    run = make_run([("shmdb-skewed-100", shmdb_doc("skewed", 100, 8192.0))])
    assert render.postgres_sections(postgres.analyse(run)) == []
