"""LambdaRank's kernels on every path — grouped short queries (counting sort), long ones
(the no-sort, ranked and argsort paths), group-less, scores too spread for row
exponentials, threads — for every metric, weighting, smoothing share, norm and max_step,
against the slow reference (``tests/reference/position_bias.py`` with every pair factor
1): gradients, Hessians and the local loss. (Written against a verbatim copy of the
kernels before their pair terms were merged, which they equalled to 1.2e-15 of scale.)"""

from __future__ import annotations

import numpy as np
import pytest
from reference.position_bias import factored

from gbrank._kernels import _threads
from gbrank._kernels import lambdarank as K
from gbrank._kernels import lambdarank_long as KL
from gbrank.objectives import LambdaRank

PARAMS = [
    dict(metric="ndcg"),
    dict(metric="ndcg", norm=True),
    dict(metric="ndcg", truncation=3, sigma=2.0),
    dict(metric="ndcg", max_step=None),
    dict(metric="ndcg", smoothing=0.4),
    dict(metric="ndcg", smoothing=0.5, label_gain=[0.0, 1.0, 5.0, 6.0, 9.0]),
    dict(metric="ndcg", norm=True, smoothing=0.3, max_step=None),
    dict(metric="ndcg", truncation=80),
    dict(metric="ndcg", weighting="ndcg_loss1"),
    dict(metric="ndcg", weighting="ndcg_loss2", mu=0.5, truncation=9),
    dict(metric="ndcg", weighting="ndcg_loss2pp", mu=3.0, norm=True),
    dict(metric="ndcg", weighting="ndcg_loss2pp", sigma=0.7),
    dict(metric="err"),
    dict(metric="err", smoothing=0.0, norm=True),
    dict(metric="err", truncation=80),
    dict(metric="map"),
    dict(metric="map", smoothing=0.25, truncation=5),
    dict(metric="map", truncation=70, smoothing=0.5),
    dict(metric="mrr"),
    dict(metric="mrr", smoothing=0.0, max_step=2.0),
    dict(metric="mrr", truncation=100),
]


def _ids(p):
    return ",".join(f"{k}={v}" for k, v in p.items())


def _data(seed, sizes, grades=5, spread=1.0):
    rng = np.random.default_rng(seed)
    n = int(sum(sizes))
    y = rng.integers(0, grades, n).astype(float)
    s = np.round(rng.normal(size=n) + 0.3 * y, 1) * spread  # many tied scores
    return y, s


# Sizes 1 and 2, short queries, and long ones: above RANK_SORT_MAX (the long-query
# kernels, or NumPy's argsort under a truncation of half the query), over three blocks.
SIZES = [1, 2, 7, 30, 1, 55, K.RANK_SORT_MAX + 37, 12, 700, 3, 2 * KL.BLOCK + 300]


def _cases():
    """(name, y, s, sizes or None, weight or None): the inputs every option runs on."""
    y, s = _data(1, SIZES)
    w = np.repeat(np.random.default_rng(2).uniform(0.5, 2.0, len(SIZES)), SIZES)
    out = [("grouped", y, s, SIZES, w)]
    n = 2 * KL.BLOCK + 300
    y, s = _data(3, [n], grades=4)
    edges = [0, KL.BLOCK - 1, KL.BLOCK, 2 * KL.BLOCK - 1, 2 * KL.BLOCK, n - 1]
    s[edges] = 10.0 + np.arange(len(edges)) % 3  # top rows at block edges, tied
    out.append(("groupless", y, s, None, None))
    # Scores spread too wide for row exponentials: grouped (some queries) and group-less.
    sizes = [5, 30, 1, 55, 12, 40, K.RANK_SORT_MAX + 20]
    y, s = _data(11, sizes)
    s[5:35] *= 500.0
    s[-(K.RANK_SORT_MAX + 60):] *= 500.0
    out.append(("wide", y, s, sizes, None))
    y, s = _data(7, [KL.BLOCK + 100], spread=400.0)
    out.append(("wide groupless", y, s, None, None))
    return out


CASES = _cases()


def _reference(obj, y, s, sizes, weight, at):
    """(gradient, the booster's Hessian, local loss at ``at``) of the slow reference."""
    p = obj._params()
    sizes = [y.size] if sizes is None else sizes
    starts = np.cumsum([0, *sizes[:-1]])
    qw = None if weight is None else weight[starts]
    gain = obj._gain_table(p, y)
    kw = dict(ranknet=False, metric=p.metric, k=p.truncation, gain_tab=gain,
              thr=p.threshold, weighting=p.weighting, mu=p.mu,
              smooth=obj._smoothing(p, y))
    one = lambda i, j: 1.0  # noqa: E731
    grad, hess, _, _, _ = factored(y, s, sizes, factor=one, sigma=p.sigma, norm=p.norm,
                                   qweights=qw, **kw)
    _, _, loss, _, _ = factored(y, s, sizes, factor=one, sigma=p.sigma, norm=p.norm,
                                qweights=qw, at=at, **kw)
    if p.max_step:
        hess = np.maximum(hess, p.sigma * np.abs(grad) / p.max_step)
    return grad, hess, loss


def _close(got, want):
    scale = max(float(np.abs(want).max()), 1e-300)
    np.testing.assert_allclose(got, want, rtol=1e-9, atol=1e-12 * scale)


@pytest.mark.parametrize("params", PARAMS, ids=_ids)
def test_every_path_against_the_reference(params, monkeypatch):
    obj = LambdaRank(**params)
    for name, y, s, sizes, weight in CASES:
        at = s + np.random.default_rng(5).normal(scale=0.05, size=s.size)
        want_g, want_h, want_loss = _reference(obj, y, s, sizes, weight, at)
        assert obj.loss(y, s, sizes, weight=weight, at=at) == pytest.approx(want_loss,
                                                                           rel=1e-9), name
        for threads in (False, True):
            monkeypatch.setattr(_threads, "PARALLEL_MIN_ROWS", 1 if threads else 200_000)
            got_g, got_h = obj.grad_hess(y, s, sizes, weight=weight)
            _close(got_g, want_g)
            _close(got_h, want_h)


@pytest.mark.parametrize("metric", ["map", "mrr"])
def test_real_valued_labels_against_the_reference(metric):
    n = K.RANK_SORT_MAX + 50
    rng = np.random.default_rng(8)
    y = np.round(rng.uniform(0.0, 3.0, n), 2)
    s = np.round(rng.normal(size=n) + 0.3 * y, 1)
    obj = LambdaRank(metric=metric, smoothing=0.0)
    for sizes in (None, [n - 40, 40]):
        want_g, want_h, want_loss = _reference(obj, y, s, sizes, None, s)
        got_g, got_h = obj.grad_hess(y, s, sizes)
        _close(got_g, want_g)
        _close(got_h, want_h)
        assert obj.loss(y, s, sizes) == pytest.approx(want_loss, rel=1e-9)
