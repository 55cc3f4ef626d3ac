"""The injected-change matrix (tests/injected.py) as a test: known changes
injected into the real regression fixtures.  The fault-lock and canary
verdicts survive an injected improvement, the A/A stays clean beside
one, and a change is found as often beside an improvement as alone (the
figures of README.md "Fleet regression run")."""

import os

import pytest

import injected as inj
import regress_golden as rg


def fixture(prefix):
    (name,) = [n for n in rg.fixtures() if n.startswith(prefix)]
    return rg.rounds_of(os.path.join(rg.FIXTURES, name))


AA, FAULTLOCK, CANARY = (fixture(p) for p in ("aa-", "faultlock-2",
                                              "canary-"))
PUNCH = "latency-punch-skewed-3000"


def test_matrix_an_improvement_hides_nothing():
    """Measured on the A/A fixture (13 histograms): 2x slower found in 4
    of 13, 10x and 30x in 13 of 13, alone and beside a 10x improvement
    alike (before the step-down test: 4, 13, 13 alone, but 0, 3 and 4
    beside it); no false alarm elsewhere."""
    m = inj.matrix(AA)
    for k in inj.RATIOS:
        alone, beside = m[(k, False)], m[(k, True)]
        assert beside["detected"] == alone["detected"], (k, beside)
        assert alone["false_alarms"] == beside["false_alarms"] == 0
    assert m[(10, False)]["detected"] == m[(10, False)]["injected"] == 13
    assert m[(30, True)]["detected"] == 13
    assert m[(2, False)]["detected"] >= 3


def test_aa_stays_clean_beside_an_improvement():
    for experiment, label, path in inj.targets(AA):
        doc = inj.run(AA, [(experiment, path, 1.0 / inj.IMPROVEMENT)])
        assert doc["status"] == "ok", (experiment, label,
                                       inj.regressions(doc))
        assert any(i["verdict"] == "improved" and
                   inj.of(i, experiment, label) for i in doc["items"])


@pytest.mark.parametrize("k", [10, 30])
def test_fault_lock_verdict_survives_an_improvement(k):
    for experiment, label, path in inj.targets(FAULTLOCK):
        if label == "faulting_disrupted":
            continue
        doc = inj.run(FAULTLOCK, [(experiment, path, 1.0 / k)])
        assert rg.unmet(1 if doc["status"] == "regression" else 0, doc,
                        rg.CLAIMS["faultlock"]) == [], (label, k)


def test_canary_verdict_survives_an_improvement():
    for experiment, label, path in inj.targets(CANARY):
        doc = inj.run(CANARY, [(experiment, path, 1.0 / 30)])
        assert rg.unmet(1 if doc["status"] == "regression" else 0, doc,
                        rg.CLAIMS["canary"]) == [], label
