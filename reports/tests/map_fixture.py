"""Make a latency-map fixture from a map run, its prediction run and the
all-disruptors run.

    reports/tests/map_fixture.py MAP_RUN PREDICTION_RUN ALL_DISRUPT_RUN DEST

DEST (reports/tests/fixtures/latency-map-<id>) becomes a copy of the map
run, with the prediction run in DEST/prediction and the all-disruptors
run (workloads/smoke/boot with inventories/latency-map/all-disruptors,
one guest per fault-lock mode) in DEST/all-disruptors.  Copied:
manifest.json (the all-disruptors run has none: one is written from its
guests' guest.json, as the attr fixture's was) and every guest.json
unchanged, each console.log trimmed as regress_golden.trim_console does,
each result written without indentation and, in its attribution, every
kept fault's `waits` cut to its 3 longest (its `lock_ns` totals stay
whole).  Checks that latency_map and attribution analyse the trimmed
copies exactly as the originals, then writes DEST/golden/latency-map.json
(the map with the prediction test) and DEST/golden/attribution-all-
disruptors.json, which test_latency_map.py must reproduce.  Exit 1 when a
check fails.
"""

import json
import os
import shutil
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.dirname(HERE))

from hugelab_report import attribution, latency_map, rundir  # noqa: E402
from regress_golden import trim_console  # noqa: E402

WAITS_KEPT = 3


def trim_result(doc):
    for f in (doc.get("attribution") or {}).get("faults") or []:
        w = f.get("waits") or []
        f["waits"] = sorted(w, key=lambda x: -(x["ns"] + x.get(
            "runnable_ns", 0)))[:WAITS_KEPT]
    return doc


def ensure_manifest(run):
    """A run directory of bare smoke/boot guests gets a manifest.json."""
    path = os.path.join(run, "manifest.json")
    if os.path.exists(path):
        return
    guests = sorted(os.listdir(os.path.join(run, "guests")))
    docs = []
    for g in guests:
        with open(os.path.join(run, "guests", g, "guest.json"),
                  encoding="utf-8") as f:
            docs.append(json.load(f))
    name = os.path.basename(run.rstrip("/"))
    kernels = {}
    for d in docs:
        k = d.get("kernel") or {}
        kernels["%s-%s" % (k.get("variant"), k.get("flavour"))] = k
    m = {"schema": "hugelab.run/1", "run_id": name,
         "status": "ok" if all(d.get("status") == "ok" for d in docs)
         else "fail",
         "started_at": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.strptime(
             name[:16], "%Y%m%dT%H%M%SZ")),
         "finished_at": max(d.get("finished_at") or "" for d in docs),
         "kernels": kernels, "inventory": {}, "guests": guests,
         "timings": {}, "harness": "smoke"}
    with open(path, "w", encoding="utf-8") as f:
        json.dump(m, f, indent=1)
        f.write("\n")


def copy_guests(src, dst):
    for g in sorted(os.listdir(os.path.join(src, "guests"))):
        gs, gd = (os.path.join(x, "guests", g) for x in (src, dst))
        os.makedirs(os.path.join(gd, "results"))
        shutil.copyfile(os.path.join(gs, "guest.json"),
                        os.path.join(gd, "guest.json"))
        trim_console(os.path.join(gs, "console.log"),
                     os.path.join(gd, "console.log"))
        for name in sorted(os.listdir(os.path.join(gs, "results"))):
            with open(os.path.join(gs, "results", name),
                      encoding="utf-8") as f:
                text = f.read()
            if name.endswith(".json"):
                text = json.dumps(trim_result(json.loads(text)),
                                  separators=(",", ":")) + "\n"
            with open(os.path.join(gd, "results", name), "w",
                      encoding="utf-8") as f:
                f.write(text)


def copy_run(src, dst):
    os.makedirs(dst, exist_ok=True)
    shutil.copyfile(os.path.join(src, "manifest.json"),
                    os.path.join(dst, "manifest.json"))
    copy_guests(src, dst)


def golden_map(map_dir, pred_dir):
    doc = latency_map.analyse_dir(map_dir)
    doc["prediction_test"] = latency_map.prediction_test(
        doc, latency_map.rows_of(pred_dir))
    return doc


def golden_attribution(run):
    doc = attribution.analyse(rundir.load(run))
    return json.loads(json.dumps(doc))


def same(a, b):
    return json.dumps(a, sort_keys=True) == json.dumps(b, sort_keys=True)


def main(argv):
    if len(argv) != 5:
        print(__doc__, file=sys.stderr)
        return 2
    src_map, src_pred, src_all, dest = argv[1:]
    ensure_manifest(src_all)
    copy_run(src_map, dest)
    copy_run(src_pred, os.path.join(dest, "prediction"))
    copy_run(src_all, os.path.join(dest, "all-disruptors"))
    ok = True
    g0, g1 = golden_map(src_map, src_pred), golden_map(
        dest, os.path.join(dest, "prediction"))
    if not same(g0, g1):
        print("map_fixture: the map differs once trimmed", file=sys.stderr)
        ok = False
    a0 = golden_attribution(src_all)
    a1 = golden_attribution(os.path.join(dest, "all-disruptors"))
    if not same(a0, a1):
        print("map_fixture: the all-disruptors attribution differs once "
              "trimmed", file=sys.stderr)
        ok = False
    os.makedirs(os.path.join(dest, "golden"), exist_ok=True)
    for name, doc in (("latency-map.json", g1),
                      ("attribution-all-disruptors.json", a1)):
        with open(os.path.join(dest, "golden", name), "w",
                  encoding="utf-8") as f:
            json.dump(doc, f, indent=1, sort_keys=True)
            f.write("\n")
    print(latency_map.table(g1))
    print(json.dumps(g1["prediction_test"], indent=1))
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv))
