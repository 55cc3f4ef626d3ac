"""Per-direction step-down max-T permutation test of compare's latency
figures (Westfall and Young), its power, and the twins' sign-flip test.

A comparison holds nb baseline and nc candidate runs; every figure has
one value per run (baseline first, then candidate, in run order).  An
*assignment* is a choice of which nc of the nb + nc runs are the
candidate side; the observed one is index 0.  Under the A/A hypothesis
(the runs exchangeable) every assignment is equally likely.

A figure's statistic in a direction ('regression' or 'improved') is its
separation score (compare.separation_score) when every candidate value
lies beyond every baseline value x (1 + threshold) (+ slack for counts)
in that direction, else nothing (-inf).  Step-down, per direction:
order the figures by observed score; the adjusted p of the j-th is the
share of assignments whose largest score over the figures from j on
reaches its observed score (running maximum); a figure is declared while
that stays at or below alpha.  A figure declared in one direction leaves
the other direction's family too: it is known to differ, so its scores
under other assignments (the mirror of an improvement is a large
'regression' score) say nothing about noise and must not raise the bar
for the figures still judged.  Family-wise false-alarm rate per
direction: at most alpha, and never below 1 / C(nb + nc, nc), the
resolution of the assignments (5 % at 3 + 3 runs; 16.7 % at 2 + 2, which
cannot reach 5 %: inconclusive).
"""

import itertools
import math
import random

import numpy as np

DIRECTIONS = ("regression", "improved")
# Assignments tried: all of them up to this many, else this many drawn
# with a fixed seed (the observed one always first).
MAX_ASSIGNMENTS = 20000
# Power is estimated over at most this many assignments (drawn with a
# fixed seed beyond it).
MAX_POWER_ASSIGNMENTS = 60
NEG = -np.inf


def assignments(nb, nc, limit=MAX_ASSIGNMENTS):
    """(candidate index array [N, nc], sampled): the observed assignment
    (nb .. nb + nc - 1) first, then every other (or `limit` - 1 drawn)."""
    n = nb + nc
    obs = tuple(range(nb, n))
    if math.comb(n, nc) <= limit:
        rest = [c for c in itertools.combinations(range(n), nc) if c != obs]
        sampled = False
    else:
        rnd = random.Random(n * 1000 + nc)
        seen = set()
        while len(seen) < limit - 1:
            c = tuple(sorted(rnd.sample(range(n), nc)))
            if c != obs:
                seen.add(c)
        rest, sampled = sorted(seen), True
    return np.array([obs] + rest, dtype=int), sampled


def complement(cand_idx, n):
    """Baseline index array [N, n - nc] of each assignment."""
    mask = np.ones((len(cand_idx), n), dtype=bool)
    np.put_along_axis(mask, cand_idx, False, axis=1)
    return np.nonzero(mask)[1].reshape(len(cand_idx), -1)


def scores(vals, cand_idx, base_idx, direction, threshold, slack=0.0,
           min_width=1e-9):
    """The figure's statistic under every assignment (array [N], -inf
    where it does not separate in `direction`).  vals may also be [T, n]:
    T figures' values at once (result [T, N])."""
    v = np.asarray(vals, dtype=float)
    b, c = v[..., base_idx], v[..., cand_idx]
    u = np.log1p(np.maximum(v, 0))
    ub, uc = u[..., base_idx], u[..., cand_idx]
    if direction == "regression":
        sep = c.min(axis=-1) > b.max(axis=-1) * (1 + threshold) + slack
        gap = uc.min(axis=-1) - ub.max(axis=-1)
    else:
        sep = c.max(axis=-1) * (1 + threshold) + slack < b.min(axis=-1)
        gap = ub.min(axis=-1) - uc.max(axis=-1)
    spread = (ub.max(axis=-1) - ub.min(axis=-1) + uc.max(axis=-1) -
              uc.min(axis=-1))
    width = np.maximum(spread, max(math.log1p(threshold), min_width))
    return np.where(sep, gap / width, NEG)


def step_down(table, alpha, exclude=()):
    """table: {figure: scores [N]} of one direction.  Returns {figure:
    adjusted p} of the figures whose observed score is finite, and the
    declared ones (adjusted p <= alpha).  Figures in `exclude` (declared
    in the other direction) take no part."""
    figs = [f for f in table if f not in exclude]
    order = sorted((f for f in figs if np.isfinite(table[f][0])),
                   key=lambda f: -table[f][0])
    if not order:
        return {}, []
    # the largest score from each step on, per assignment
    rest = [f for f in figs if f not in order]
    tail = (np.max([table[f] for f in rest], axis=0) if rest else
            np.full(len(table[order[0]]), NEG))
    maxes = []
    for f in reversed(order):
        tail = np.maximum(tail, table[f])
        maxes.append(tail.copy())
    maxes.reverse()
    adjusted, running, declared = {}, 0.0, []
    for f, m in zip(order, maxes):
        p = float(np.mean(m >= table[f][0]))
        running = max(running, p)
        adjusted[f] = running
        if running <= alpha:
            declared.append(f)
    return adjusted, declared


def judge(figures, nb, nc, threshold, alpha):
    """figures: {name: (values, slack)} with a value in every run.
    Returns {"regression": {adjusted, declared}, "improved": ...,
    "assignments": N, "sampled": bool, "tables": {direction: table}}:
    the two directions stepped down in turn until neither declares a new
    figure."""
    cand_idx, sampled = assignments(nb, nc)
    base_idx = complement(cand_idx, nb + nc)
    tables = {d: {f: scores(v, cand_idx, base_idx, d, threshold, s)
                  for f, (v, s) in figures.items()} for d in DIRECTIONS}
    declared = {d: [] for d in DIRECTIONS}
    adjusted = {d: {} for d in DIRECTIONS}
    while True:
        new = False
        for d in DIRECTIONS:
            other = "improved" if d == "regression" else "regression"
            adjusted[d], dec = step_down(tables[d], alpha, declared[other])
            if set(dec) - set(declared[d]):
                new = True
            declared[d] = dec
        if not new:
            break
    return {"regression": {"adjusted": adjusted["regression"],
                           "declared": declared["regression"]},
            "improved": {"adjusted": adjusted["improved"],
                         "declared": declared["improved"]},
            "assignments": len(cand_idx), "sampled": sampled,
            "tables": tables, "cand_idx": cand_idx, "base_idx": base_idx}


def power(figures, judged, nb, nc, threshold, alpha, ratios,
          direction="regression"):
    """{figure: {ratio: probability}}: the chance that a change of
    `ratio` (candidate values x ratio for a regression, / ratio for an
    improvement) in that figure alone would have been declared, given
    these runs' own noise: each assignment of the observed values to the
    sides is taken as the truth in turn, the candidate side scaled, and
    the figure tested against the largest score of the other figures
    still judged (single step: a lower bound of the step-down's power).
    Figures declared in either direction are left out."""
    cand_idx, base_idx = judged["cand_idx"], judged["base_idx"]
    table = judged["tables"][direction]
    gone = set(judged["regression"]["declared"]) | set(
        judged["improved"]["declared"])
    n = len(cand_idx)
    truths = list(range(n))
    if n > MAX_POWER_ASSIGNMENTS:
        truths = random.Random(n).sample(truths, MAX_POWER_ASSIGNMENTS)
    out = {}
    for f, (vals, slack) in figures.items():
        if f in gone:
            continue        # it changed: no statement about its noise
        others = [table[g] for g in table if g != f and g not in gone]
        floor = np.max(others, axis=0) if others else np.full(n, NEG)
        v = np.asarray(vals, dtype=float)
        out[f] = {}
        t = np.asarray(truths)
        for k in ratios:
            mult = k if direction == "regression" else 1.0 / k
            # each truth's values: its baseline runs, then its candidate
            # runs scaled  ([T, n])
            w = np.concatenate([v[base_idx[t]], v[cand_idx[t]] * mult],
                               axis=1)
            s = scores(w, cand_idx, base_idx, direction, threshold, slack)
            obs = s[:, :1]
            p = np.mean(np.maximum(floor[None, :], s) >= obs, axis=1)
            out[f][k] = float(np.mean(np.isfinite(obs[:, 0]) &
                                      (p <= alpha)))
    return out


def sign_flip(log_ratios):
    """One-sided exact sign-flip test of paired log ratios (candidate /
    baseline twin of one round): (p that the mean is this high, p that
    it is this low).  With R rounds the smallest p is 2^-R (12.5 % at
    R = 3)."""
    x = np.asarray(log_ratios, dtype=float)
    r = len(x)
    signs = np.array(list(itertools.product((1, -1), repeat=r)))
    means = (signs * np.abs(x)).mean(axis=1)
    m = x.mean()
    return float(np.mean(means >= m - 1e-12)), \
        float(np.mean(means <= m + 1e-12))
