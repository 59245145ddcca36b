"""The fast LambdaRank kernel (counting-rank sort, chunk scratch, serial/parallel
dispatch, the long-query kernel without a sort) against a slow pair loop written here
from docs/contract.md, for every metric, weighting, smoothing, norm and max_step, on grouped and
group-less inputs with tied scores and tied labels, serial and threaded, short and long
queries."""

from __future__ import annotations

import math

import numpy as np
import pytest
from reference.delta import delta_matrix
from scipy.special import expit

from gbrank._kernels import _threads
from gbrank._kernels import lambdarank as K
from gbrank._kernels import lambdarank_long as KL
from gbrank._kernels import lambdarank_ranked as KR
from gbrank._kernels.delta import ERR, MAP, MRR, NDCG
from gbrank.objectives import LambdaRank

CODES = {"ndcg": NDCG, "err": ERR, "map": MAP, "mrr": MRR}
LGB_EPS = float(np.float32(0.01))


def _gain(metric, y):
    top = int(y.max())
    if metric == "ndcg":
        return np.exp2(np.arange(top + 1.0)) - 1.0
    if metric == "err":
        return (np.exp2(np.arange(top + 1.0)) - 1.0) / 2.0**top
    return np.empty(0)


def _ndcg_parts(lab, k):
    """G = (2^l − 1)/IDCG@k per ranked row, untruncated discounts 1/log2(1 + r)."""
    gain = np.exp2(lab) - 1.0
    ideal = np.sort(gain)[::-1][:k]
    idcg = float(np.sum(ideal / np.log2(np.arange(ideal.size) + 2.0)))
    return (gain / idcg if idcg > 0 else np.zeros_like(gain)), 1.0 / np.log2(
        np.arange(lab.size + 1) + 2.0)


def _query_ref(y, s, metric, k, sigma, norm, weighting, mu, smooth, gain_all):
    """(grad, hess, loss) of one query, pair by pair."""
    n = y.size
    grad = np.zeros(n)
    hess = np.zeros(n)
    if n < 2:
        return grad, hess, 0.0
    order = np.argsort(-s, kind="stable")
    lab = y[order]
    sa = s[order]
    thr = 1.0
    lgb = norm and metric == "ndcg"
    dz = delta_matrix(CODES[metric], lab, k, gain_all, thr, lgb)
    # |ΔNDCG| of the LambdaLoss weights and the smoothing share: Z's own when Z is NDCG
    # (then with LightGBM's untruncated discount under norm), else gain 2^l − 1.
    ngain = np.exp2(np.arange(int(lab.max()) + 1.0)) - 1.0
    dn = dz if metric == "ndcg" else delta_matrix(NDCG, lab, k, ngain, thr, False)
    G, disc = _ndcg_parts(lab, k)
    score_norm = norm and sa[0] != sa[-1]
    g = np.zeros(n)
    h = np.zeros(n)
    total = 0.0
    loss = 0.0
    for a in range(min(k, n - 1)):
        for b in range(a + 1, n):
            if lab[a] == lab[b]:
                continue
            hi, lo = (a, b) if lab[a] > lab[b] else (b, a)
            if weighting == "lambdarank":
                w = (1 - smooth) * dz[a, b] + smooth * dn[a, b]
            elif weighting == "ndcg_loss1":
                w = G[hi] * disc[hi]
            else:
                d = b - a
                w = abs(G[a] - G[b]) * (disc[d - 1] - disc[d])
                if weighting == "ndcg_loss2pp":
                    w = mu * w + dn[a, b]
            if score_norm:
                w /= LGB_EPS + abs(sa[hi] - sa[lo])
            x = sigma * (sa[hi] - sa[lo])
            rho = expit(-x)
            q = expit(x)
            total += 2 * sigma * w * rho
            loss += w * (np.logaddexp(0.0, -x))
            g[hi] -= sigma * w * rho
            g[lo] += sigma * w * rho
            h[hi] += sigma**2 * w * rho * q
            h[lo] += sigma**2 * w * rho * q
    f = math.log2(1 + total) / total if (norm and total > 0) else 1.0
    grad[order] = g * f
    hess[order] = h * f
    return grad, hess, loss * f


def _reference(y, s, sizes, weight, obj):
    p = obj.get_params()
    smooth = obj._params().smoothing  # None resolves to the metric's default share
    gain_all = (_gain(p["metric"], y) if p["label_gain"] is None
                else np.asarray(p["label_gain"], dtype=float))
    grad = np.zeros(y.size)
    hess = np.zeros(y.size)
    loss = 0.0
    lo = 0
    for m in sizes:
        sl = slice(lo, lo + m)
        g, h, ls = _query_ref(y[sl], s[sl], p["metric"], p["truncation"], p["sigma"],
                              p["norm"], p["weighting"], p["mu"], smooth, gain_all)
        wq = 1.0 if weight is None else weight[lo]
        grad[sl] = g * wq
        hess[sl] = h * wq
        loss += ls * wq
        lo += m
    if p["max_step"] is not None:
        hess = np.maximum(hess, p["sigma"] * np.abs(grad) / p["max_step"])
    return grad, hess, loss


def _data(seed, sizes, grades=5):
    rng = np.random.default_rng(seed)
    n = int(sum(sizes))
    y = rng.integers(0, grades, n).astype(float)
    s = np.round(rng.normal(size=n) + 0.3 * y, 1)  # many tied scores
    return y, s


CASES = [
    dict(metric="ndcg"),
    dict(metric="ndcg", norm=True),
    dict(metric="ndcg", truncation=3, sigma=2.0),
    dict(metric="ndcg", max_step=None),
    dict(metric="ndcg", weighting="ndcg_loss1"),
    dict(metric="ndcg", weighting="ndcg_loss2", mu=0.5),
    dict(metric="ndcg", weighting="ndcg_loss2pp", mu=3.0, norm=True),
    dict(metric="ndcg", smoothing=0.4),
    dict(metric="err"),
    dict(metric="err", smoothing=0.0, norm=True),
    dict(metric="map"),
    dict(metric="map", smoothing=0.25, truncation=5),
    dict(metric="mrr"),
    dict(metric="mrr", smoothing=0.0, max_step=2.0),
]


def _close(got, want):
    scale = max(float(np.abs(want).max()), 1e-300)
    np.testing.assert_allclose(got, want, rtol=1e-9, atol=1e-12 * scale)


@pytest.mark.parametrize("params", CASES, ids=lambda p: ",".join(f"{k}={v}" for k, v in
                                                              p.items()))
def test_grouped_with_ties_and_weights(params):
    # Query sizes 1 and 2 (edge cases), short ones (counting-rank sort) and one longer
    # than RANK_SORT_MAX (the long-query kernel, or NumPy's argsort for the weightings
    # that need every rank).
    sizes = [1, 2, 7, 30, 1, 55, K.RANK_SORT_MAX + 37, 12]
    y, s = _data(1, sizes)
    qw = np.random.default_rng(2).uniform(0.5, 2.0, len(sizes))
    weight = np.repeat(qw, sizes)
    obj = LambdaRank(**params)
    want_g, want_h, want_loss = _reference(y, s, sizes, weight, obj)
    got_g, got_h = obj.grad_hess(y, s, sizes, weight=weight)
    _close(got_g, want_g)
    _close(got_h, want_h)
    got_loss = obj.loss(y, s, sizes, weight=weight)
    assert got_loss == pytest.approx(want_loss, rel=1e-9)


# The floors run (tests/conftest.py) checks each long-query kernel once: the no-sort one
# (plain NDCG) and the int32-order one (NDCG under norm).
_FLOORS_LONG = (dict(metric="ndcg"), dict(metric="ndcg", norm=True))


@pytest.mark.parametrize("params", [pytest.param(p, marks=pytest.mark.floors)
                                    if p in _FLOORS_LONG else p for p in CASES],
                         ids=lambda p: ",".join(f"{k}={v}" for k, v in p.items()))
def test_groupless_long_query(params):
    n = K.RANK_SORT_MAX + 88
    y, s = _data(3, [n], grades=3)
    obj = LambdaRank(**params)
    want_g, want_h, _ = _reference(y, s, [n], None, obj)
    got_g, got_h = obj.grad_hess(y, s)
    _close(got_g, want_g)
    _close(got_h, want_h)


LONG_CASES = [dict(metric="ndcg"), dict(metric="ndcg", smoothing=0.3, truncation=7),
              dict(metric="ndcg", smoothing=0.5, label_gain=[0.0, 1.0, 5.0, 6.0]),
              dict(metric="err", norm=True), dict(metric="map"),
              dict(metric="mrr", max_step=None),
              # Deeper than the selection buffer: the top k from the int32 radix order.
              dict(metric="err", truncation=80), dict(metric="mrr", truncation=100),
              dict(metric="map", truncation=70, smoothing=0.5)]


def _long_query(seed, n, grades=4):
    """A query over three blocks of the long-query kernel whose top rows sit at block
    edges (first and last row of a block), so segments between top rows are empty."""
    y, s = _data(seed, [n], grades)
    edges = [0, KL.BLOCK - 1, KL.BLOCK, 2 * KL.BLOCK - 1, 2 * KL.BLOCK, n - 1]
    s[edges] = 10.0 + np.arange(len(edges)) % 3  # tied among themselves too
    return y, s


@pytest.mark.parametrize("params", [dict(metric="ndcg"), dict(metric="mrr", smoothing=0.5),
                                    dict(metric="ndcg", norm=True),
                                    dict(metric="ndcg", weighting="ndcg_loss2pp")],
                         ids=lambda p: ",".join(f"{k}={v}" for k, v in p.items()))
def test_long_query_wide_score_spread(params):
    """σ·(max − min) above MAX_EXP_SPREAD: ρ from one exp per pair, in the no-sort
    kernel (first two) and the int32-order kernel (last two)."""
    n = KL.BLOCK + 100
    y, s = _data(7, [n])
    s = s * 400.0
    obj = LambdaRank(**params)
    want_g, want_h, _ = _reference(y, s, [n], None, obj)
    got_g, got_h = obj.grad_hess(y, s)
    _close(got_g, want_g)
    _close(got_h, want_h)


@pytest.mark.parametrize("metric", ["map", "mrr"])
def test_long_query_real_valued_labels(metric):
    """MAP and MRR take real-valued labels (relevant: label ≥ threshold); the long-query
    kernel then keys the rows below the top k by relevance."""
    n = K.RANK_SORT_MAX + 50
    rng = np.random.default_rng(8)
    y = np.round(rng.uniform(0.0, 3.0, n), 2)
    s = np.round(rng.normal(size=n) + 0.3 * y, 1)
    obj = LambdaRank(metric=metric, smoothing=0.0)
    want_g, want_h, _ = _reference(y, s, [n], None, obj)
    got_g, got_h = obj.grad_hess(y, s)
    _close(got_g, want_g)
    _close(got_h, want_h)


# Long NDCG queries whose weights read every rank (LightGBM's discount under norm, the
# LambdaLoss weightings) or whose truncation is at least half the query.
RANKED_CASES = [dict(metric="ndcg", norm=True),
                dict(metric="ndcg", norm=True, smoothing=0.3, max_step=None),
                dict(metric="ndcg", weighting="ndcg_loss1"),
                dict(metric="ndcg", weighting="ndcg_loss2", mu=0.5, truncation=9),
                dict(metric="ndcg", weighting="ndcg_loss2pp", mu=3.0, norm=True),
                # At least half the query: the top positions span two blocks.
                dict(metric="ndcg", truncation=KR.BLOCK + 200, sigma=0.7)]


def _takes(params, n):
    """Which long-query kernel the objective's parameters send a query of n rows to."""
    p = LambdaRank(**params)._params()
    scheme = K.LAMBDARANK if p.weighting == "lambdarank" else K.LOSS1  # any LambdaLoss
    lgb_discount = p.norm and p.metric == "ndcg"
    if K._is_long(n, p.truncation, scheme, lgb_discount):
        return "long"
    if K._is_ranked(n, p.truncation, CODES[p.metric], scheme, lgb_discount):
        return "ranked"
    return "sorted"


@pytest.mark.parametrize("kernel,params", [("long", p) for p in LONG_CASES]
                         + [("ranked", p) for p in RANKED_CASES],
                         ids=lambda p: p if isinstance(p, str) else ",".join(
                             f"{k}={v}" for k, v in p.items()))
def test_long_query_kernels_blocks_and_threads(kernel, params, monkeypatch):
    """One query over three blocks whose top rows sit at block edges, serial and with
    its blocks on threads, against the slow reference: the no-sort kernel
    (``lambdarank_long``) and the int32-order kernel (``lambdarank_ranked``; with
    truncation above BLOCK its top positions span two blocks)."""
    n = 2 * KL.BLOCK + 300
    assert KR.BLOCK == KL.BLOCK
    y, s = _long_query(6, n)
    assert _takes(params, n) == kernel
    obj = LambdaRank(**params)
    want_g, want_h, _ = _reference(y, s, [n], None, obj)
    serial = obj.grad_hess(y, s)
    _close(serial[0], want_g)
    _close(serial[1], want_h)
    # One long query above PARALLEL_MIN_ROWS runs its blocks on threads.
    monkeypatch.setattr(_threads, "PARALLEL_MIN_ROWS", 1)
    threaded = obj.grad_hess(y, s)
    _close(threaded[0], want_g)
    _close(threaded[1], want_h)


@pytest.mark.parametrize("params", [dict(metric="ndcg"), dict(metric="err", norm=True),
                                    dict(metric="ndcg", weighting="ndcg_loss2pp")],
                         ids=lambda p: ",".join(f"{k}={v}" for k, v in p.items()))
def test_threaded_equals_serial_and_reference(params, monkeypatch):
    """Above PARALLEL_MIN_ROWS with ≥ N_CHUNKS queries the chunks run on threads; the
    threshold is lowered so the threaded form runs on test-sized data."""
    rng = np.random.default_rng(4)
    sizes = list(rng.integers(1, 40, 3 * K.N_CHUNKS))
    y, s = _data(5, sizes)
    obj = LambdaRank(**params)
    serial = obj.grad_hess(y, s, sizes)
    monkeypatch.setattr(_threads, "PARALLEL_MIN_ROWS", 1)
    threaded = obj.grad_hess(y, s, sizes)
    # Equal to rounding, not bit for bit: the vectorised pair loop's runtime overlap
    # check falls back to the scalar loop (another summation order) when two scratch
    # arrays happen to lie close in memory, which depends on the allocator.
    np.testing.assert_allclose(threaded[0], serial[0], rtol=1e-13, atol=1e-15)
    np.testing.assert_allclose(threaded[1], serial[1], rtol=1e-13, atol=1e-15)
    want_g, want_h, _ = _reference(y, s, sizes, None, obj)
    _close(threaded[0], want_g)
    _close(threaded[1], want_h)


@pytest.mark.parametrize("params", [dict(metric="ndcg"), dict(metric="ndcg", norm=True),
                                    dict(metric="err"), dict(metric="map", truncation=10),
                                    dict(metric="ndcg", weighting="ndcg_loss2")],
                         ids=lambda p: ",".join(f"{k}={v}" for k, v in p.items()))
def test_long_queries_among_short_ones(params, monkeypatch):
    """Queries above RANK_SORT_MAX rows among short ones, weighted: the chunk kernel
    leaves them to the long-query pass after it (the no-sort kernel, or the ranked one
    for weights that read every rank), serial and on threads (threshold lowered)."""
    rng = np.random.default_rng(9)
    sizes = [int(v) for v in rng.integers(1, 40, 40)]
    sizes[5:5] = [K.RANK_SORT_MAX + 1]
    sizes[20:20] = [700, 3]
    sizes.append(1100)
    y, s = _data(6, sizes)
    weight = np.repeat(rng.uniform(0.5, 2.0, len(sizes)), sizes)
    obj = LambdaRank(**params)
    serial = obj.grad_hess(y, s, sizes, weight=weight)
    monkeypatch.setattr(_threads, "PARALLEL_MIN_ROWS", 1)
    threaded = obj.grad_hess(y, s, sizes, weight=weight)
    np.testing.assert_allclose(threaded[0], serial[0], rtol=1e-13, atol=1e-15)
    np.testing.assert_allclose(threaded[1], serial[1], rtol=1e-13, atol=1e-15)
    want_g, want_h, _ = _reference(y, s, sizes, weight, obj)
    _close(serial[0], want_g)
    _close(serial[1], want_h)


@pytest.mark.parametrize("n", [2, 5, 17, 100, K.RANK_SORT_MAX, K.RANK_SORT_MAX + 1])
def test_rank_sort_is_the_stable_descending_order(n):
    rng = np.random.default_rng(n)
    for s in (rng.normal(size=n), np.round(rng.normal(size=n)), np.zeros(n),
              np.where(rng.random(n) < 0.5, -0.0, 0.0)):
        key = np.empty(n)
        idx = np.empty(n, dtype=np.int64)
        K._rank_sort(s, np.empty(n), key, idx, np.empty(n, dtype=np.int64))
        want = np.argsort(-s, kind="stable")
        np.testing.assert_array_equal(idx, want)
        np.testing.assert_array_equal(key, s[want])


@pytest.mark.parametrize("params", [dict(metric="ndcg"), dict(metric="err"),
                                    dict(metric="mrr", smoothing=0.0),
                                    dict(metric="ndcg", weighting="ndcg_loss2pp", norm=True)],
                         ids=lambda p: ",".join(f"{k}={v}" for k, v in p.items()))
def test_wide_queries_among_others(params):
    """Queries whose score spread rules out row exponentials are left by the gradient
    pass and taken pair by pair by a second one (compiled only then): weighted, among
    ordinary queries, against the slow reference."""
    sizes = [5, 30, 1, 55, 12, 40]
    y, s = _data(11, sizes)
    s[5:35] *= 500.0  # the second query: σ·spread far above MAX_EXP_SPREAD
    s[-40:] *= 500.0  # and the last one
    weight = np.repeat(np.random.default_rng(12).uniform(0.5, 2.0, len(sizes)), sizes)
    obj = LambdaRank(**params)
    want_g, want_h, want_loss = _reference(y, s, sizes, weight, obj)
    got_g, got_h = obj.grad_hess(y, s, sizes, weight=weight)
    _close(got_g, want_g)
    _close(got_h, want_h)
    assert obj.loss(y, s, sizes, weight=weight) == pytest.approx(want_loss, rel=1e-9)
