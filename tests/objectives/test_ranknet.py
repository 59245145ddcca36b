"""RankNet: the seed's O(n²) loop, docs/contract.md's pair formulas, fast modes, bad input."""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy.special import expit

from gbrank._kernels.ranknet import ranknet_rows_grad_hess
from gbrank._kernels.ranknet_grid import (
    ranknet_grid_grad_hess,
    ranknet_window_grad_hess,
)
from gbrank.objectives import RankNet


def seed_ranknet_loss_v2(y_true, y_pred):
    """The seed article's ``ranknet_loss_v2`` (seed 003), as plain Python."""
    length = len(y_true)
    grad = np.zeros(length)
    hess = np.zeros(length)
    for i in range(length):
        for j in range(i + 1, length):
            if y_true[i] > y_true[j]:
                Sij = 1
            elif y_true[i] == y_true[j]:
                Sij = 0
            else:
                Sij = -1
            sigmoid_ij = 1 / (1 + math.exp(y_pred[j] - y_pred[i]))
            grad_i = -0.5 - 0.5 * Sij + sigmoid_ij
            hess_i = sigmoid_ij * (1 - sigmoid_ij)
            grad[i] += grad_i
            grad[j] -= grad_i
            hess[i] += hess_i
            hess[j] += hess_i
    return grad, hess


def slow_ranknet(y, s, group, sigma, pull, weights=None):
    """docs/contract.md's formulas, pair by pair (stable sigmoids)."""
    grad = np.zeros_like(s)
    hess = np.zeros_like(s)
    loss = 0.0
    start = 0
    for q, size in enumerate(group):
        wq = 1.0 if weights is None else weights[q]
        for i in range(start, start + size):
            for j in range(start, start + size):
                if i == j:
                    continue
                d = s[i] - s[j]
                rho = expit(-sigma * d)
                pq = rho * expit(sigma * d)
                if y[i] > y[j]:
                    grad[i] -= wq * sigma * rho
                    loss += wq * np.logaddexp(0.0, -sigma * d)
                elif y[i] < y[j]:
                    grad[i] += wq * sigma * expit(sigma * d)
                elif pull:
                    grad[i] += wq * sigma * (0.5 - rho)
                    # Each unordered pair is met twice here; C(Δs) = C(−Δs) and
                    # softplus(x) + softplus(−x) = 2 C.
                    loss += wq * 0.25 * (np.logaddexp(0.0, -sigma * d)
                                         + np.logaddexp(0.0, sigma * d))
                else:
                    continue
                hess[i] += wq * sigma**2 * pq
        start += size
    return grad, hess, loss


def rel_err(a, b):
    return float(np.abs(a - b).max() / max(np.abs(b).max(), 1e-300))


@pytest.mark.parametrize("seed", range(5))
def test_pull_equals_seed_loop(seed):
    rng = np.random.default_rng(seed)
    sizes = rng.integers(1, 60, 8)
    y = rng.integers(0, 5, sizes.sum()).astype(float)
    s = rng.normal(size=sizes.sum()) * rng.choice([0.1, 1.0, 5.0])
    grad, hess = RankNet(ties="pull").grad_hess(y, s, sizes)
    start = 0
    for size in sizes:
        sl = slice(start, start + size)
        rg, rh = seed_ranknet_loss_v2(y[sl], s[sl])
        if size > 1:
            assert rel_err(grad[sl], rg) <= 1e-12
            assert rel_err(hess[sl], rh) <= 1e-12
        start += size


@pytest.mark.floors
@pytest.mark.parametrize("pull", [False, True])
@pytest.mark.parametrize("sigma", [0.5, 2.0])
def test_matches_spec_pairs_with_weights(pull, sigma):
    rng = np.random.default_rng(int(pull) + 10 * int(sigma))
    sizes = np.array([1, 7, 12, 3, 20])
    y = rng.integers(0, 4, sizes.sum()).astype(float)
    s = np.round(rng.normal(size=sizes.sum()) * 3, 1)  # some ties
    w = rng.uniform(0.2, 3.0, sizes.size)
    obj = RankNet(sigma=sigma, ties="pull" if pull else "skip")
    grad, hess = obj.grad_hess(y, s, sizes, weight=w)
    rg, rh, rl = slow_ranknet(y, s, sizes, sigma, pull, w)
    assert rel_err(grad, rg) <= 1e-12
    assert rel_err(hess, rh) <= 1e-12
    assert obj.loss(y, s, sizes, weight=w) == pytest.approx(rl, rel=1e-12)


def test_rows_kernel_and_extreme_spread_fallback():
    rng = np.random.default_rng(2)
    y = rng.integers(0, 3, 40).astype(float)
    for scale in (1.0, 1e3):  # 1e3: σ·spread > 1400, one exp per pair
        s = rng.normal(size=40) * scale
        rg, rh, _ = slow_ranknet(y, s, [40], 1.0, True)
        g1, h1 = RankNet(ties="pull").grad_hess(y, s)
        g2, h2 = ranknet_rows_grad_hess(y, s, 1.0, True)
        for g, h in ((g1, h1), (g2, h2)):
            assert rel_err(g, rg) <= 1e-12
            assert rel_err(h, rh) <= 1e-12


def test_spread_just_below_exp_limit():
    y = np.array([3.0, 2.0, 0.0, 1.0, 0.0, 4.0, 4.0])
    s = np.array([345.0, 345.0, 344.5, -345.0, -345.0, -344.0, 344.9])
    for pull in (False, True):
        g, h = RankNet(ties="pull" if pull else "skip").grad_hess(y, s)
        rg, rh, _ = slow_ranknet(y, s, [7], 1.0, pull)
        assert np.all(np.isfinite(g)) and np.all(np.isfinite(h))
        assert rel_err(g, rg) <= 1e-12 and rel_err(h, rh) <= 1e-12


def test_qid_permutation_restores_rows():
    rng = np.random.default_rng(4)
    sizes = np.array([5, 9, 4])
    y = rng.integers(0, 3, 18).astype(float)
    s = rng.normal(size=18)
    qid = np.repeat([10, 20, 30], sizes)
    perm = rng.permutation(18)
    g0, h0 = RankNet().grad_hess(y, s, sizes)
    g1, h1 = RankNet().grad_hess(y[perm], s[perm], qid=qid[perm])
    np.testing.assert_allclose(g1, g0[perm], rtol=1e-12, atol=1e-15)
    np.testing.assert_allclose(h1, h0[perm], rtol=1e-12, atol=1e-15)


@pytest.mark.parametrize("spread, expect, pull", [
    (0.1, "grid", False), (0.1, "grid", True), (10.0, "grid", True),
    pytest.param(1000.0, "window", False, marks=pytest.mark.slow),
])
def test_fast_mode_within_1e6_of_exact(spread, expect, pull):
    # The full sweep (spreads 0.1..1000, both tie rules) is in experiments/bench/bench_ranking.py.
    rng = np.random.default_rng(int(spread))
    n = 20_000
    y = rng.integers(0, 5, n).astype(float)
    s = rng.standard_normal(n) * spread
    ties = "pull" if pull else "skip"
    fast = RankNet(ties=ties, method="fast")
    g1, h1 = fast.grad_hess(y, s)
    assert fast.last_fast_methods_ == [expect]
    g0, h0 = ranknet_rows_grad_hess(y, s, 1.0, pull)
    assert rel_err(g1, g0) <= 1e-6
    assert rel_err(h1, h0) <= 1e-6


def test_grid_and_window_agree_on_small_query():
    rng = np.random.default_rng(8)
    y = rng.integers(0, 3, 500).astype(float)
    y[:50] = 7.5  # non-integer grades are fine for RankNet
    s = rng.normal(size=500) * 2
    for pull in (False, True):
        g0, h0 = ranknet_rows_grad_hess(y, s, 1.3, pull)
        gw, hw = ranknet_window_grad_hess(y, s, 1.3, pull)
        gg, hg = ranknet_grid_grad_hess(y, s, 1.3, pull)
        assert rel_err(gw, g0) <= 1e-12 and rel_err(hw, h0) <= 1e-12
        assert rel_err(gg, g0) <= 1e-6 and rel_err(hg, h0) <= 1e-6
    # All scores equal: every pair has ρ = ½ exactly, on the grid too.
    s0 = np.zeros(500)
    gg, hg = ranknet_grid_grad_hess(y, s0, 1.0, False)
    g0, h0 = ranknet_rows_grad_hess(y, s0, 1.0, False)
    assert rel_err(gg, g0) <= 1e-12 and rel_err(hg, h0) <= 1e-12


def test_auto_switches_at_exact_max_rows():
    rng = np.random.default_rng(9)
    y = rng.integers(0, 3, 300).astype(float)
    s = rng.normal(size=300)
    small = RankNet(exact_max_rows=100)
    small.grad_hess(y, s, [50, 250])
    assert len(small.last_fast_methods_) == 1
    big = RankNet()
    big.grad_hess(y, s, [50, 250])
    assert big.last_fast_methods_ == []


def test_single_row_and_all_equal():
    g, h = RankNet().grad_hess([1.0], [0.3])
    assert g[0] == 0 and h[0] == 0
    g, h = RankNet().grad_hess([2.0, 2.0, 2.0], [0.3, 1.0, -1.0])
    assert not g.any() and not h.any()
    g, h = RankNet(ties="pull").grad_hess([2.0, 2.0], [1.0, 1.0])
    assert g[0] == 0 and h[0] == pytest.approx(0.25)


@pytest.mark.parametrize("kwargs, match", [
    ({"sigma": 0.0}, r"sigma must be a finite number in \(0, 1e\+06\], got 0\.0"),
    ({"sigma": -2.0}, r"sigma .* got -2\.0"), ({"sigma": "a"}, r"sigma .* got 'a'"),
    ({"ties": "keep"}, r"ties must be one of \['skip', 'pull'\], got 'keep'"),
    ({"method": "approx"}, r"method must be one of .*'fast'\], got 'approx'"),
    ({"exact_max_rows": 0}, r"exact_max_rows must be an integer in \[1, inf\], got 0"),
])
def test_bad_parameters(kwargs, match):
    # scikit-learn's contract: stored as given, validated where used.
    obj = RankNet(**kwargs)
    assert all(obj.get_params()[k] is v for k, v in kwargs.items())
    with pytest.raises(ValueError, match=match):
        obj.grad_hess([1.0, 0.0], [0.0, 0.0])
    with pytest.raises(ValueError, match=match):
        RankNet().set_params(**kwargs).loss([1.0, 0.0], [0.0, 0.0])


def test_bad_input():
    obj = RankNet()
    y = np.array([1.0, 0.0, 2.0])
    with pytest.raises(ValueError, match="NaN/inf"):
        obj.grad_hess(y, [0.0, np.nan, 1.0])
    with pytest.raises(ValueError, match="NaN/inf"):
        obj.grad_hess(y, [0.0, -np.inf, 1.0])
    with pytest.raises(ValueError, match="sum to"):
        obj.grad_hess(y, np.zeros(3), [1, 1])
    with pytest.raises(ValueError, match="qid"):
        obj.grad_hess(y, np.zeros(3), qid=[1, 2])
    with pytest.raises(ValueError, match="negative"):
        obj.grad_hess([-1.0, 0.0, 2.0], np.zeros(3))


def test_fft_length_is_the_smallest_5_smooth_size():
    from gbrank._kernels.ranknet_grid import _fft_length

    def smooth(v):
        for p in (2, 3, 5):
            while v % p == 0:
                v //= p
        return v == 1

    for n in (1, 2, 7, 97, 1000, 4097, 531_000):
        got = _fft_length(n)
        assert got >= n and smooth(got)
        assert not any(smooth(v) for v in range(n, got))


@pytest.mark.floors
@pytest.mark.parametrize("group", [None, [1000, 2000]])
def test_fast_mode_paths_with_query_weights_equal_exact(group):
    # The fast mode's own arrays are returned (one query) or written into place (every
    # query fast); query weights scale them in place. Both must equal the exact sums.
    rng = np.random.default_rng(0)
    y = rng.integers(0, 4, 3000).astype(float)
    s = rng.standard_normal(3000) * 3.0
    w = np.full(3000, 2.5) if group is None else np.r_[np.full(1000, 2.0),
                                                         np.full(2000, 0.5)]
    g_fast, h_fast = RankNet(method="fast").grad_hess(y, s, group, weight=w)
    g_exact, h_exact = RankNet(method="exact").grad_hess(y, s, group, weight=w)
    np.testing.assert_allclose(g_fast, g_exact, rtol=0, atol=1e-9 * np.abs(g_exact).max())
    np.testing.assert_allclose(h_fast, h_exact, rtol=0, atol=1e-9 * h_exact.max())


@pytest.mark.parametrize("case", ["huge_scores", "dense_with_outliers"])
def test_fast_mode_stays_exact_where_the_grid_cannot(case):
    # Scores ×1e100 once overflowed the bin count deep in numba; a dense cluster with
    # far outliers once went to a grid far coarser than its accuracy target.
    rng = np.random.default_rng(1)
    n = 6000
    y = rng.integers(0, 3, n).astype(float)
    s = rng.standard_normal(n)
    if case == "huge_scores":
        s = s * 1e100
    else:
        s[:10] = 1e6 + rng.standard_normal(10)
    obj = RankNet(method="fast")
    g, h = obj.grad_hess(y, s)
    assert obj.last_fast_methods_ == ["window"]
    g_exact, h_exact = RankNet(method="exact").grad_hess(y, s)
    np.testing.assert_allclose(g, g_exact, rtol=0, atol=1e-12 * np.abs(g_exact).max())
    np.testing.assert_allclose(h, h_exact, rtol=0, atol=1e-12 * max(h_exact.max(), 1e-300))
