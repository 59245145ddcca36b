"""LambdaRank's kernels after their pair terms were merged into one helper, against the
kernels as they stood before (``tests/reference/lambdarank_before``): gradients,
Hessians and the local loss of every path — grouped short queries (counting sort),
long ones (the no-sort, ranked and argsort paths), group-less, scores too spread for row
exponentials, threads — for every metric, weighting, smoothing share, norm and
max_step, equal to 1e-12 relative."""

from __future__ import annotations

import numpy as np
import pytest
from reference.lambdarank_before import lambdarank as OLD

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


def _run(kernels, obj, y, s, sizes, weight, at):
    yq, sq, queries = obj._prepare(y, s, sizes, None, weight)
    _, atq, _ = obj._prepare(y, at, sizes, None, None)
    qw = np.empty(0) if queries.weights is None else queries.weights
    args = obj._args(yq)
    p = obj._params()
    if kernels is OLD and p.metric == "ndcg":
        # The old kernels computed the smoothing mixture under NDCG too (as the no-op
        # (1 − α)|ΔNDCG| + α|ΔNDCG|); the objective now passes no share there.
        args = (*args[:-1], p.smoothing)
    grad, hess = kernels.lambdarank_grad_hess(yq, sq, queries.offsets, qw, *args,
                                              p.max_step)
    loss = kernels.lambdarank_loss(yq, sq, atq, queries.offsets, qw, *args)
    return grad, hess, loss


def _same(new, old):
    scale = max(float(np.abs(old).max()), 1e-300)
    np.testing.assert_allclose(new, old, rtol=1e-12, atol=1e-14 * scale)


@pytest.mark.parametrize("threads", [False, True], ids=["serial", "threads"])
@pytest.mark.parametrize("params", PARAMS, ids=_ids)
def test_new_kernels_equal_the_old(params, threads, monkeypatch):
    if threads:
        monkeypatch.setattr(_threads, "PARALLEL_MIN_ROWS", 1)
    obj = LambdaRank(**params)
    for name, y, s, sizes, weight in CASES:
        at = s + np.random.default_rng(5).normal(scale=0.05, size=s.size)
        new = _run(K, obj, y, s, sizes, weight, at)
        old = _run(OLD, obj, y, s, sizes, weight, at)
        for got, want in zip(new[:2], old[:2], strict=True):
            _same(got, want)
        assert new[2] == pytest.approx(old[2], rel=1e-12), name


@pytest.mark.parametrize("metric", ["map", "mrr"])
def test_new_kernels_equal_the_old_real_valued_labels(metric):
    n = K.RANK_SORT_MAX + 50
    rng = np.random.default_rng(8)
    y = np.round(rng.uniform(0.0, 3.0, n), 2)
    s = np.round(rng.normal(size=n) + 0.3 * y, 1)
    obj = LambdaRank(metric=metric, smoothing=0.0)
    for sizes in (None, [n - 40, 40]):
        new = _run(K, obj, y, s, sizes, None, s)
        old = _run(OLD, obj, y, s, sizes, None, s)
        for got, want in zip(new, old, strict=True):
            _same(np.atleast_1d(got), np.atleast_1d(want))
