"""LambdaRank's pair weightings beyond |ΔZ|: the LambdaLoss NDCG family (Wang et al.
2018) and the smoothing share of |ΔNDCG|, against a slow reference written from docs/contract.md."""

from __future__ import annotations

import numpy as np
import pytest
from sklearn.base import clone

from gbrank.gradcheck import check
from gbrank.objectives import LambdaRank

WEIGHTINGS = ("ndcg_loss1", "ndcg_loss2", "ndcg_loss2pp")


def _ref_query(y, s, k, weighting, mu, sigma):
    """Gradient and diagonal Hessian of one query, straight from docs/contract.md's formulas."""
    n = y.size
    order = np.argsort(-s, kind="stable")
    rank = np.empty(n, dtype=int)
    rank[order] = np.arange(1, n + 1)
    ideal = np.sort(y)[::-1]
    idcg = sum((2.0 ** ideal[r] - 1.0) / np.log2(r + 2.0) for r in range(min(k, n)))
    g = np.zeros(n)
    h = np.zeros(n)
    if idcg == 0.0:
        return g, h
    G = (2.0**y - 1.0) / idcg

    def D(r):
        return np.log2(1.0 + r)

    def disc_k(r):  # LambdaRank's discount: 0 beyond k
        return 1.0 / D(r) if r <= k else 0.0

    for i in range(n):
        for j in range(n):
            if y[i] <= y[j] or min(rank[i], rank[j]) > k:
                continue
            lam = abs(G[i] - G[j]) * abs(disc_k(rank[i]) - disc_k(rank[j]))
            d = abs(rank[i] - rank[j])
            loss2 = abs(G[i] - G[j]) * abs(1.0 / D(d) - 1.0 / D(d + 1))
            w = {"lambdarank": lam, "ndcg_loss1": G[i] / D(rank[i]),
                 "ndcg_loss2": loss2, "ndcg_loss2pp": mu * loss2 + lam}[weighting]
            rho = 1.0 / (1.0 + np.exp(sigma * (s[i] - s[j])))
            g[i] -= sigma * w * rho
            g[j] += sigma * w * rho
            h[i] += sigma**2 * w * rho * (1.0 - rho)
            h[j] += sigma**2 * w * rho * (1.0 - rho)
    return g, h


def _ref(y, s, group, k, weighting, mu=10.0, sigma=1.0):
    g = np.zeros(y.size)
    h = np.zeros(y.size)
    off = np.concatenate([[0], np.cumsum(group)])
    for q in range(len(group)):
        sl = slice(off[q], off[q + 1])
        g[sl], h[sl] = _ref_query(y[sl], s[sl], k, weighting, mu, sigma)
    return g, h


def _data(seed, n_queries=6, size=(1, 25), ties=True):
    rng = np.random.default_rng(seed)
    group = rng.integers(size[0], size[1], n_queries)
    n = int(group.sum())
    y = rng.integers(0, 4, n).astype(float)
    s = rng.standard_normal(n)
    if ties:
        s[rng.random(n) < 0.2] = 0.5  # score ties: the stable order decides
    return y, s, group


@pytest.mark.floors
@pytest.mark.parametrize("weighting", ("lambdarank", *WEIGHTINGS))
@pytest.mark.parametrize("k", (3, 30))
@pytest.mark.parametrize("seed", (0, 1))
def test_weightings_match_slow_reference(weighting, k, seed):
    y, s, group = _data(seed)
    obj = LambdaRank("ndcg", truncation=k, weighting=weighting, mu=7.0, sigma=1.5)
    g, h = obj.exact_grad_hess(y, s, group)
    g_ref, h_ref = _ref(y, s, group, k, weighting, mu=7.0, sigma=1.5)
    np.testing.assert_allclose(g, g_ref, rtol=1e-10, atol=1e-13)
    np.testing.assert_allclose(h, h_ref, rtol=1e-10, atol=1e-13)
    # What the booster gets: the same gradient, the Hessian raised to σ|λ|/max_step.
    gb, hb = obj.grad_hess(y, s, group)
    np.testing.assert_array_equal(gb, g)
    np.testing.assert_allclose(hb, np.maximum(h_ref, 1.5 * np.abs(g_ref) / 16.0),
                               rtol=1e-10, atol=1e-13)


def test_loss2pp_with_mu_zero_is_lambdarank():
    y, s, group = _data(3)
    a = LambdaRank(weighting="ndcg_loss2pp", mu=0.0).grad_hess(y, s, group)
    b = LambdaRank().grad_hess(y, s, group)
    np.testing.assert_allclose(a, b, rtol=1e-12, atol=1e-15)


@pytest.mark.parametrize("weighting", WEIGHTINGS)
@pytest.mark.parametrize("norm", (False, True))
def test_weightings_gradcheck(weighting, norm):
    y, s, group = _data(4, n_queries=4, size=(2, 15), ties=False)
    report = check(LambdaRank(weighting=weighting, norm=norm, truncation=5), y, s, group)
    assert report.ok, str(report)


@pytest.mark.parametrize("metric", ("err", "map", "mrr"))
@pytest.mark.parametrize("alpha", (0.3, 1.0))
def test_smoothing_is_the_mixture_of_the_two_gradients(metric, alpha):
    # λ and h are linear in the pair weights, so with w = (1 − α)|ΔZ| + α|ΔNDCG| they
    # are the same mixture of the two objectives' λ's and h's.
    y, s, group = _data(5)
    # (The true Hessians: the booster's is floored at σ|λ|/max_step, not linear.)
    mixed = LambdaRank(metric, smoothing=alpha, max_grade=3).exact_grad_hess(y, s, group)
    z = LambdaRank(metric, smoothing=0.0, max_grade=3).exact_grad_hess(y, s, group)
    nd = LambdaRank("ndcg").exact_grad_hess(y, s, group)
    for m, a, b in zip(mixed, z, nd, strict=True):
        np.testing.assert_allclose(m, (1 - alpha) * a + alpha * b, rtol=1e-10, atol=1e-14)


@pytest.mark.parametrize("metric", ("err", "map", "mrr"))
@pytest.mark.parametrize("norm", (False, True))
def test_smoothing_gradcheck(metric, norm):
    y, s, group = _data(6, n_queries=4, size=(2, 15), ties=False)
    report = check(LambdaRank(metric, smoothing=0.4, norm=norm), y, s, group)
    assert report.ok, str(report)


# The documented default shares (LambdaRank's docstring, chosen in
# experiments/results/ranking_quality.md on seeds the report does not use).
DEFAULT_SHARE = {"ndcg": 0.0, "err": 0.9, "map": 0.75, "mrr": 0.75}


@pytest.mark.parametrize("metric", ("ndcg", "err", "map", "mrr"))
def test_default_smoothing_is_the_documented_share(metric):
    y, s, group = _data(7)
    obj = LambdaRank(metric)
    assert obj.get_params()["smoothing"] is None  # stored as given, resolved at use
    got = obj.grad_hess(y, s, group)
    want = LambdaRank(metric, smoothing=DEFAULT_SHARE[metric]).grad_hess(y, s, group)
    np.testing.assert_array_equal(got[0], want[0])
    np.testing.assert_array_equal(got[1], want[1])
    assert obj.loss(y, s, group) == LambdaRank(
        metric, smoothing=DEFAULT_SHARE[metric]).loss(y, s, group)
    if metric != "ndcg":  # and it is not pure |ΔZ|
        plain = LambdaRank(metric, smoothing=0.0).grad_hess(y, s, group)
        assert np.abs(got[0] - plain[0]).max() > 1e-3


@pytest.mark.parametrize("metric", ("err", "map", "mrr"))
def test_default_smoothing_gradcheck(metric):
    y, s, group = _data(8, n_queries=4, size=(2, 15), ties=False)
    report = check(LambdaRank(metric), y, s, group)
    assert report.ok, str(report)


def test_smoothing_zero_is_plain():
    # smoothing=0 is the metric alone: the α = ½ mixture is (|ΔZ| + |ΔNDCG|)/2, so
    # twice its λ's minus NDCG's give the α = 0 λ's back.
    y, s, group = _data(7)
    for metric in ("err", "map", "mrr"):
        a = LambdaRank(metric, smoothing=0.0, max_grade=3).exact_grad_hess(y, s, group)
        half = LambdaRank(metric, smoothing=0.5, max_grade=3).exact_grad_hess(y, s, group)
        nd = LambdaRank("ndcg").exact_grad_hess(y, s, group)
        np.testing.assert_allclose(2 * half[0] - nd[0], a[0], rtol=1e-9, atol=1e-12)


def test_new_parameters_follow_the_contract():
    obj = LambdaRank(weighting="ndcg_loss2pp", mu=3, smoothing=0.2)
    params = obj.get_params()
    assert params["weighting"] == "ndcg_loss2pp"
    assert params["mu"] == 3 and isinstance(params["mu"], int)  # stored as given
    assert params["smoothing"] == 0.2
    c = clone(obj)
    assert c.get_params() == params
    obj.set_params(mu=5.0)
    assert obj.mu == 5.0


@pytest.mark.parametrize("kwargs, needle", [
    ({"weighting": "loss3"}, "weighting"),
    ({"mu": -1.0, "weighting": "ndcg_loss2pp"}, "mu"),
    ({"smoothing": 1.5, "metric": "err"}, "smoothing"),
    ({"smoothing": -0.1, "metric": "err"}, "smoothing"),
    ({"weighting": "ndcg_loss2", "metric": "err"}, "weighting"),
])
def test_bad_parameters_raise_at_use(kwargs, needle):
    obj = LambdaRank(**kwargs)  # stored as given: no error yet
    y, s, group = _data(8)
    with pytest.raises(ValueError, match=needle):
        obj.grad_hess(y, s, group)


def test_smoothing_needs_integer_grades_where_map_does_not():
    y = np.array([0.0, 0.5, 1.5, 2.0])
    s = np.array([0.1, 0.4, -0.2, 0.3])
    # MAP and MRR alone take real-valued labels; their default share needs NDCG's
    # integer grades, so with such labels the default is pure |ΔZ| (documented).
    for metric in ("map", "mrr"):
        np.testing.assert_array_equal(LambdaRank(metric).grad_hess(y, s)[0],
                                      LambdaRank(metric, smoothing=0.0).grad_hess(y, s)[0])
    with pytest.raises(ValueError, match="label"):
        LambdaRank("map", smoothing=0.5).grad_hess(y, s)
