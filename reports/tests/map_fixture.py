"""Make a latency-map fixture from a map run and its prediction run.

    reports/tests/map_fixture.py MAP_RUN PREDICTION_RUN DEST

Copies both run directories (workloads/smoke/latency-map) into DEST/map
and DEST/prediction: manifest.json and every guest.json unchanged, each
console.log trimmed as regress_golden.trim_console does, each result
written without indentation and, in its attribution, every kept fault's
`waits` cut to its 3 longest (the fault's `lock_ns` totals stay whole);
then checks that latency_map and attribution analyse the trimmed copies
exactly as the originals, and writes DEST/golden/latency-map.json: the
map (with the prediction test of the prediction run) that
test_latency_map_golden.py must reproduce.  Exit 1 when a check fails.
"""

import json
import os
import shutil
import sys

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


def copy_run(src, dst):
    os.makedirs(dst)
    shutil.copyfile(os.path.join(src, "manifest.json"),
                    os.path.join(dst, "manifest.json"))
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


def golden(map_dir, pred_dir):
    doc = latency_map.analyse_dir(map_dir)
    doc["prediction_test"] = latency_map.prediction_test(
        doc, latency_map.rows_of(pred_dir))
    return doc


def main(argv):
    if len(argv) != 4:
        print(__doc__, file=sys.stderr)
        return 2
    src_map, src_pred, dest = argv[1:]
    copy_run(src_map, os.path.join(dest, "map"))
    copy_run(src_pred, os.path.join(dest, "prediction"))
    ok = True
    for src, name in ((src_map, "map"), (src_pred, "prediction")):
        a = attribution.analyse(rundir.load(src))
        b = attribution.analyse(rundir.load(os.path.join(dest, name)))
        for r in a["rows"] + b["rows"]:
            r.pop("path", None)
        if json.dumps(a, sort_keys=True) != json.dumps(b, sort_keys=True):
            print("map_fixture: %s: attribution differs once trimmed" %
                  name, file=sys.stderr)
            ok = False
    g0 = golden(src_map, src_pred)
    g1 = golden(os.path.join(dest, "map"), os.path.join(dest, "prediction"))
    if json.dumps(g0, sort_keys=True) != json.dumps(g1, sort_keys=True):
        print("map_fixture: the map differs once trimmed", file=sys.stderr)
        ok = False
    os.makedirs(os.path.join(dest, "golden"))
    with open(os.path.join(dest, "golden", "latency-map.json"), "w",
              encoding="utf-8") as f:
        json.dump(g1, f, indent=1, sort_keys=True)
        f.write("\n")
    print(latency_map.table(g1))
    print(json.dumps(g1["prediction_test"], indent=1))
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv))
