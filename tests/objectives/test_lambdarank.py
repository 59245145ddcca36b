"""LambdaRank: |ΔZ| against recomputing Z after an explicit swap, λ's against a slow
pair loop written from docs/contract.md, LightGBM's norm heuristics, weights, bad input."""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from reference.delta import delta_matrix
from scipy.special import expit

from gbrank._kernels.delta import ERR, MAP, MRR, NDCG
from gbrank.objectives import LambdaRank

METRIC_CODES = {"ndcg": NDCG, "err": ERR, "map": MAP, "mrr": MRR}


# ---- slow metrics on labels already in rank order (docs/contract.md) -------------------
def dcg(lab, k, gain):
    return sum(gain(lab[r]) / math.log2(r + 2) for r in range(min(k, len(lab))))


def ndcg_at(lab, k, gain=lambda v: 2.0**v - 1):
    ideal = dcg(sorted(lab, reverse=True), k, gain)
    return 1.0 if ideal == 0 else dcg(lab, k, gain) / ideal


def err_at(lab, k, gmax):
    total, p = 0.0, 1.0
    for r in range(min(k, len(lab))):
        R = (2.0 ** lab[r] - 1) / 2.0**gmax
        total += p * R / (r + 1)
        p *= 1 - R
    return total


def map_at(lab, k, thr=1):
    rel = [v >= thr for v in lab]
    nrel = sum(rel)
    if nrel == 0:
        return 1.0
    hits, total = 0, 0.0
    for r in range(min(k, len(lab))):
        if rel[r]:
            hits += 1
            total += hits / (r + 1)
    return total / min(nrel, k)


def mrr_at(lab, k, thr=1):
    for r in range(min(k, len(lab))):
        if lab[r] >= thr:
            return 1.0 / (r + 1)
    return 0.0


def metric_value(metric, lab, k, gmax=4, thr=1):
    if metric == "ndcg":
        return ndcg_at(lab, k)
    if metric == "err":
        return err_at(lab, k, gmax)
    if metric == "map":
        return map_at(lab, k, thr)
    return mrr_at(lab, k, thr)


def swap_delta(metric, lab, a, b, k, **kw):
    swapped = list(lab)
    swapped[a], swapped[b] = swapped[b], swapped[a]
    return abs(metric_value(metric, swapped, k, **kw) - metric_value(metric, lab, k, **kw))


def gain_table(metric, gmax=4):
    g = 2.0 ** np.arange(gmax + 1) - 1
    return g if metric == "ndcg" else g / 2.0**gmax


labels_st = st.lists(st.integers(0, 4), min_size=1, max_size=14)


@pytest.mark.floors
@pytest.mark.parametrize("metric", ["ndcg", "err", "map", "mrr"])
@settings(max_examples=80, deadline=None)
@given(lab=labels_st, k=st.integers(1, 16))
def test_delta_matches_explicit_swap(metric, lab, k):
    lab_a = np.array(lab, dtype=np.float64)
    got = delta_matrix(METRIC_CODES[metric], lab_a, k, gain_table(metric), 1.0, False)
    n = len(lab)
    for a in range(n):
        for b in range(a + 1, n):
            if a < k:
                want = swap_delta(metric, lab, a, b, k)
                assert got[a, b] == pytest.approx(want, abs=1e-12), (a, b)
            else:
                assert got[a, b] == 0.0


def test_delta_hand_worked_err():
    # Labels in rank order 0, 2 with g_max 2: R = 0, 3/4. ERR = 3/4 · 1/2 = 0.375;
    # swapped ERR = 3/4. |Δ| = 0.375.
    got = delta_matrix(ERR, np.array([0.0, 2.0]), 10, (2.0 ** np.arange(3) - 1) / 4, 1.0,
                       False)
    assert got[0, 1] == pytest.approx(0.375, abs=1e-15)


def test_lgb_discount_ndcg_keeps_discount_beyond_k():
    lab = np.array([0.0, 0.0, 3.0])
    trunc = delta_matrix(NDCG, lab, 1, gain_table("ndcg"), 1.0, False)
    lgb = delta_matrix(NDCG, lab, 1, gain_table("ndcg"), 1.0, True)
    idcg = 7.0  # DCG@1 of the ideal order
    assert trunc[0, 2] == pytest.approx(7.0 * 1.0 / idcg)
    assert lgb[0, 2] == pytest.approx(7.0 * (1.0 - 1.0 / math.log2(4)) / idcg)


# ---- slow λ reference (docs/contract.md's pairs; norm: LightGBM's documented heuristics)
def slow_lambdas(y, s, group, metric, k, sigma, norm=False, weights=None, gmax=None):
    y = np.asarray(y, float)
    s = np.asarray(s, float)
    grad = np.zeros_like(s)
    hess = np.zeros_like(s)
    gmax = int(y.max()) if gmax is None else gmax
    start = 0
    for q, size in enumerate(group):
        idx = np.arange(start, start + size)
        start += size
        order = idx[np.argsort(-s[idx], kind="stable")]
        lab = [y[i] for i in order]
        n = len(order)
        g = np.zeros(n)
        h = np.zeros(n)
        total = 0.0
        spread = s[order[0]] != s[order[-1]]
        for a in range(min(k, n - 1)):
            for b in range(a + 1, n):
                if lab[a] == lab[b]:
                    continue
                if metric == "ndcg" and norm:
                    gain = 2.0 ** np.array(lab) - 1
                    ideal = dcg(sorted(lab, reverse=True), k, lambda v: 2.0**v - 1)
                    w = abs(gain[a] - gain[b]) * abs(1 / math.log2(a + 2)
                                                     - 1 / math.log2(b + 2)) / ideal
                else:
                    w = swap_delta(metric, lab, a, b, k, gmax=gmax)
                hi, lo = (a, b) if lab[a] > lab[b] else (b, a)
                ds = s[order[hi]] - s[order[lo]]
                if norm and spread:
                    w /= float(np.float32(0.01)) + abs(ds)
                rho = expit(-sigma * ds)
                one_minus = expit(sigma * ds)
                g[hi] -= sigma * w * rho
                g[lo] += sigma * w * rho
                h[hi] += sigma**2 * w * rho * one_minus
                h[lo] += sigma**2 * w * rho * one_minus
                total += 2 * sigma * w * rho
        if norm and total > 0:
            g *= math.log2(1 + total) / total
            h *= math.log2(1 + total) / total
        wq = 1.0 if weights is None else weights[q]
        grad[order] = g * wq
        hess[order] = h * wq
    return grad, hess


def random_queries(rng, n_queries=6, max_size=12, n_grades=5, ties=True):
    sizes = rng.integers(1, max_size + 1, n_queries)
    n = int(sizes.sum())
    y = rng.integers(0, n_grades, n).astype(float)
    s = rng.normal(size=n) * 2
    if ties:
        s = np.round(s, 0)
    return y, s, sizes


@pytest.mark.floors
@pytest.mark.parametrize("metric", ["ndcg", "err", "map", "mrr"])
@pytest.mark.parametrize("norm", [False, True])
@pytest.mark.parametrize("k", [1, 3, 30])
def test_lambdas_match_slow_reference(metric, norm, k):
    rng = np.random.default_rng(k + 7 * norm)
    y, s, g = random_queries(rng)
    # smoothing=0: pure |ΔZ|, the contract's pair weight the slow reference implements (the
    # metric's default share is tested in test_lambdaloss.py).
    obj = LambdaRank(metric=metric, truncation=k, sigma=1.5, norm=norm, smoothing=0.0)
    grad, hess = obj.exact_grad_hess(y, s, g)
    rg, rh = slow_lambdas(y, s, g, metric, k, 1.5, norm=norm)
    np.testing.assert_allclose(grad, rg, rtol=1e-10, atol=1e-13)
    np.testing.assert_allclose(hess, rh, rtol=1e-10, atol=1e-13)
    # The booster's Hessian: the true one raised to σ|λ|/max_step (default 16).
    bgrad, bhess = obj.grad_hess(y, s, g)
    np.testing.assert_array_equal(bgrad, grad)
    np.testing.assert_allclose(bhess, np.maximum(rh, 1.5 * np.abs(rg) / 16.0),
                               rtol=1e-10, atol=1e-13)


def test_wide_score_spread_uses_per_pair_exp_and_agrees():
    # σ·spread > 1400 takes the per-pair exp path; results must not change.
    rng = np.random.default_rng(3)
    y, s, g = random_queries(rng, ties=False)
    s = s * 400
    for metric in ("ndcg", "err"):
        obj = LambdaRank(metric=metric, smoothing=0.0)  # pure |ΔZ|, as the reference
        grad, hess = obj.exact_grad_hess(y, s, g)
        rg, rh = slow_lambdas(y, s, g, metric, 30, 1.0)
        # Relative to the largest value: terms of 1e-100 may underflow differently.
        assert np.abs(grad - rg).max() <= 1e-12 * np.abs(rg).max()
        assert np.abs(hess - rh).max() <= 1e-12 * np.abs(rh).max()


def test_spread_just_below_exp_limit():
    # σ·spread = 690 keeps the one-exp-per-row path: e reaches e^±345 and products of
    # two must neither overflow nor underflow.
    y = np.array([3.0, 2.0, 0.0, 1.0, 0.0, 4.0])
    s = np.array([345.0, 345.0, 344.5, -345.0, -345.0, -344.0])
    for metric in ("ndcg", "err", "map", "mrr"):
        for norm in (False, True):
            grad, hess = LambdaRank(metric=metric, norm=norm,
                                    smoothing=0.0).exact_grad_hess(y, s)
            rg, rh = slow_lambdas(y, s, [6], metric, 30, 1.0, norm=norm)
            assert np.all(np.isfinite(grad)) and np.all(np.isfinite(hess))
            assert np.abs(grad - rg).max() <= 1e-12 * np.abs(rg).max()
            assert np.abs(hess - rh).max() <= 1e-12 * max(np.abs(rh).max(), 1e-300)


def test_query_weights_and_qid_order():
    rng = np.random.default_rng(5)
    y, s, g = random_queries(rng, ties=False)
    w = rng.uniform(0.5, 2.0, g.size)
    obj = LambdaRank(metric="err", smoothing=0.0)  # pure |ΔERR|, as the reference
    grad, hess = obj.grad_hess(y, s, g, weight=w)
    rg, rh = slow_lambdas(y, s, g, "err", 30, 1.0, weights=w)
    np.testing.assert_allclose(grad, rg, rtol=1e-10, atol=1e-14)
    # Per-row weights: the first row of each query counts (LightGBM's rule).
    w_rows = np.repeat(w, g)
    grad2, _ = obj.grad_hess(y, s, g, weight=w_rows)
    np.testing.assert_allclose(grad2, grad)
    # Shuffled rows with per-row qid give the same per-row gradients.
    qid = np.repeat(np.arange(g.size), g)
    perm = rng.permutation(y.size)
    gq, hq = obj.grad_hess(y[perm], s[perm], qid=qid[perm])
    g0, h0 = obj.grad_hess(y, s, g)
    # Within a query the permuted rows keep a different relative order, which only
    # matters for tied scores; these scores have no ties.
    np.testing.assert_allclose(gq, g0[perm], rtol=1e-12, atol=1e-15)
    np.testing.assert_allclose(hq, h0[perm], rtol=1e-12, atol=1e-15)
    # Queries as whole runs of rows in shuffled query order, ids not ascending, one
    # weight per query in ascending-id order: the gradients of the grouped call, moved.
    ids = rng.permutation(g.size) * 3 + 100  # query q's id
    qorder = rng.permutation(g.size)  # the order of the queries' runs
    offsets = np.concatenate(([0], np.cumsum(g)))
    rows = np.concatenate([np.arange(offsets[q], offsets[q + 1]) for q in qorder])
    qid_runs = np.repeat(ids[qorder], g[qorder])
    w_ascending = np.empty_like(w)
    w_ascending[np.argsort(np.argsort(ids))] = w  # weight of the k-th smallest id
    gr, hr = obj.grad_hess(y[rows], s[rows], qid=qid_runs, weight=w_ascending)
    np.testing.assert_allclose(gr, grad[rows], rtol=1e-12, atol=1e-15)
    np.testing.assert_allclose(hr, hess[rows], rtol=1e-12, atol=1e-15)


def test_single_row_and_equal_label_queries_have_zero_gradient():
    y = np.array([3.0, 1.0, 1.0, 1.0, 0.0, 0.0])
    s = np.array([0.3, 0.1, -2.0, 5.0, 1.0, 1.0])
    for metric in ("ndcg", "err", "map", "mrr"):
        grad, hess = LambdaRank(metric=metric).grad_hess(y, s, [1, 3, 2])
        assert not grad.any() and not hess.any()


def test_local_loss_gradient_and_at():
    rng = np.random.default_rng(11)
    y, s, g = random_queries(rng, ties=False)
    obj = LambdaRank(metric="map", truncation=4)
    grad, _ = obj.grad_hess(y, s, g)
    eps = 1e-6
    i = int(np.argmax(np.abs(grad)))
    up, down = s.copy(), s.copy()
    up[i] += eps
    down[i] -= eps
    fd = (obj.loss(y, up, g, at=s) - obj.loss(y, down, g, at=s)) / (2 * eps)
    assert fd == pytest.approx(grad[i], rel=1e-6)
    assert obj.loss(y, s, g) == obj.loss(y, s, g, at=s)


def _swap_lambdas(y, s, z, sigma=1.0):
    """λ's and Hessians by brute force: |ΔZ| from recomputing the metric ``z`` with the
    scores of i and j swapped (distinct scores: a swap of rank positions)."""
    grad, hess = np.zeros(y.size), np.zeros(y.size)
    base = z(y, s)
    for i in range(y.size):
        for j in range(y.size):
            if y[i] > y[j]:
                swapped = s.copy()
                swapped[i], swapped[j] = s[j], s[i]
                dz = abs(z(y, swapped) - base)
                rho = 1.0 / (1.0 + math.exp(sigma * (s[i] - s[j])))
                grad[i] -= sigma * dz * rho
                grad[j] += sigma * dz * rho
                hess[i] += sigma**2 * dz * rho * (1 - rho)
                hess[j] += sigma**2 * dz * rho * (1 - rho)
    return grad, hess


def test_label_gain_and_max_grade():
    from gbrank import metrics

    y = np.array([2.0, 0.0, 1.0])
    s = np.array([0.0, 1.0, 2.0])
    custom = LambdaRank(label_gain=[0.0, 1.0, 3.0])
    grad, _ = custom.grad_hess(y, s)
    # Linear-in-grade gain 0, 1, 3 instead of 0, 1, 3: identical to the default here.
    np.testing.assert_allclose(grad, LambdaRank().grad_hess(y, s)[0])
    for gain in ([0.0, 1.0, 10.0], [0.0, 5.0, 6.0]):
        got = LambdaRank(label_gain=gain).exact_grad_hess(y, s)
        want = _swap_lambdas(y, s, lambda yy, ss, g=gain: metrics.ndcg(
            yy, ss, k=None, label_gain=g))
        np.testing.assert_allclose(got[0], want[0], rtol=1e-12)
        np.testing.assert_allclose(got[1], want[1], rtol=1e-12)
    with pytest.raises(ValueError, match="label_gain"):
        LambdaRank(label_gain=[0.0, 1.0]).grad_hess(y, s)
    # ERR's g_max: the largest label (2) by default, or max_grade.
    for top, obj in ((2, LambdaRank(metric="err", smoothing=0.0)),
                     (4, LambdaRank(metric="err", max_grade=4, smoothing=0.0))):
        got = obj.exact_grad_hess(y, s)
        want = _swap_lambdas(y, s, lambda yy, ss, t=top: metrics.err(yy, ss, k=None,
                                                                      max_grade=t))
        np.testing.assert_allclose(got[0], want[0], rtol=1e-12)
        np.testing.assert_allclose(got[1], want[1], rtol=1e-12)
    with pytest.raises(ValueError, match="max_grade"):
        LambdaRank(metric="err", max_grade=1).grad_hess(y, s)


@pytest.mark.parametrize("kwargs, match", [
    ({"metric": "auc"}, "metric"),
    ({"truncation": 0}, "truncation"),
    ({"truncation": 2.5}, "truncation"),
    ({"sigma": 0.0}, "sigma"),
    ({"sigma": -1.0}, "sigma"),
    ({"sigma": float("nan")}, "sigma"),
    ({"max_grade": -1}, r"max_grade must be an integer in \[0, 53\] or None, got -1"),
    ({"max_grade": 2.5}, "max_grade"),
    ({"threshold": np.inf}, r"threshold must be a finite number in \(-inf, inf\), got inf"),
    ({"norm": "yes"}, "norm must be True or False"),
    ({"label_gain": [0.0, np.nan]}, "label_gain"),
    ({"max_step": 0.0}, r"max_step must be a finite number in \(0, inf\) or None, got 0.0"),
    ({"max_step": -1}, "max_step"),
    ({"max_step": np.inf}, "max_step"),
    ({"max_step": "16"}, "max_step"),
])
def test_bad_parameters(kwargs, match):
    # scikit-learn's contract: stored as given, validated where used.
    obj = LambdaRank(**kwargs)
    assert all(obj.get_params()[k] is v for k, v in kwargs.items())
    with pytest.raises(ValueError, match=match):
        obj.grad_hess([1.0, 0.0], [0.0, 0.0])


def test_integral_parameters_of_any_numeric_type():
    y = np.array([2.0, 0.0, 1.0, 1.0, 0.0])
    s = np.array([0.3, 0.1, -0.2, 0.5, 0.0])
    ref = LambdaRank(metric="err", truncation=3, max_grade=4).grad_hess(y, s)
    for trunc, top in ((np.int64(3), np.float64(4.0)), (3.0, np.int32(4))):
        got = LambdaRank(metric="err", truncation=trunc, max_grade=top).grad_hess(y, s)
        np.testing.assert_array_equal(got[0], ref[0])
        np.testing.assert_array_equal(got[1], ref[1])


def test_bad_input():
    obj = LambdaRank()
    y = np.array([1.0, 0.0, 2.0])
    with pytest.raises(ValueError, match="integer grades"):
        obj.grad_hess(np.array([1.5, 0.0, 2.0]), np.zeros(3))
    with pytest.raises(ValueError, match="integer grades"):
        LambdaRank(metric="err").grad_hess(np.array([1.5, 0.0, 2.0]), np.zeros(3))
    # MAP/MRR only threshold the labels: fractional grades are fine.
    LambdaRank(metric="map").grad_hess(np.array([1.5, 0.0, 2.0]), np.zeros(3))
    with pytest.raises(ValueError, match="NaN/inf"):
        obj.grad_hess(y, np.array([0.0, np.nan, 1.0]))
    with pytest.raises(ValueError, match="NaN/inf"):
        obj.grad_hess(y, np.array([0.0, np.inf, 1.0]))
    with pytest.raises(ValueError, match="sum to"):
        obj.grad_hess(y, np.zeros(3), [2, 2])
    with pytest.raises(ValueError, match="rows"):
        obj.grad_hess(y, np.zeros(4))
    with pytest.raises(ValueError, match="negative"):
        obj.grad_hess(np.array([-1.0, 0.0, 1.0]), np.zeros(3))
    with pytest.raises(ValueError, match="NaN/inf"):
        obj.loss(y, np.zeros(3), at=np.array([0.0, np.nan, 1.0]))
