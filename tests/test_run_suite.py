"""tests/run-suite: steps in order, "+" chains side by side, the summary."""
import os
import shutil
import subprocess
import time

HERE = os.path.dirname(os.path.abspath(__file__))

MAKEFILE = """\
slow-a:
\tsleep 2; echo a >>order
slow-b:
\tsleep 2; echo b >>order
ok:
\techo ok >>order
broken:
\techo the broken step said this; exit 1
"""


def suite(tmp_path, *args):
    top = tmp_path / "top"
    (top / "tests").mkdir(parents=True)
    shutil.copy(os.path.join(HERE, "run-suite"), top / "tests" / "run-suite")
    (top / "Makefile").write_text(MAKEFILE)
    start = time.monotonic()
    env = {**os.environ, "HUGELAB_TEST_OUT": str(top / "out")}
    res = subprocess.run([str(top / "tests" / "run-suite"), *args],
                         capture_output=True, text=True, cwd=top, env=env,
                         check=False)
    done = top / "order"
    order = done.read_text().split() if done.exists() else []
    return res, time.monotonic() - start, order


def test_steps_in_order_and_summary(tmp_path):
    res, _, order = suite(tmp_path, "ok", "broken", "slow-a")
    assert res.returncode == 1
    assert order == ["ok", "a"]
    assert res.stdout.splitlines()[-1] == "2 passed, 1 failed"
    assert "failed steps: broken" in res.stdout
    assert "[broken] the broken step said this" in res.stdout


def test_side_by_side_chains(tmp_path):
    res, took, order = suite(tmp_path, "slow-a+slow-b,ok", "broken+ok")
    assert res.returncode == 1, res.stdout
    # slow-a and slow-b at once (about 2 s, not 4); ok after slow-b.
    assert took < 3.8, took
    assert sorted(order[:2]) == ["a", "b"] and order[2:] == ["ok", "ok"]
    assert res.stdout.splitlines()[-1] == "4 passed, 1 failed"
    assert "=== PASS slow-a in " in res.stdout


def test_all_pass(tmp_path):
    res, _, _ = suite(tmp_path, "ok+slow-a")
    assert res.returncode == 0
    assert res.stdout.splitlines()[-1] == "2 passed, 0 failed"
