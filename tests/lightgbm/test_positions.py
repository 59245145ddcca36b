"""LightGBM on click logs: lgb.train reads the Dataset's positions (as given, not
LightGBM's renumbering), gbrank.lightgbm.cv carries them into its folds."""

from __future__ import annotations

import numpy as np
import pytest
from sklearn.model_selection import GroupKFold

from gbrank.datasets import make_ranking, simulate_clicks
from gbrank.lightgbm import cv
from gbrank.objectives import LambdaRank

lgb = pytest.importorskip("lightgbm")

BASE = {"verbose": -1, "num_threads": 1, "learning_rate": 0.1, "min_data_in_leaf": 5,
        "deterministic": True, "force_row_wise": True, "metric": "None"}


@pytest.fixture(scope="module")
def clicks():
    X, y, g = make_ranking(n_queries=45, rows_per_query=15, n_features=4, seed=7)
    weak = X[:, 0] + np.random.default_rng(0).normal(size=y.size)
    log = simulate_clicks(y, g, weak, top_n=6, n_sessions=1, sessions="keep", seed=1)
    return X[log.rows], log.clicks, log.group, log.position


def test_train_reads_the_positions_as_given(clicks):
    """Slot ids 10, 20, …, 60, rows not logged in display order: LightGBM renumbers them
    0, 1, … by first appearance; the objective must still see the ids given (its
    propensities are keyed by them)."""
    X, y, g, pos = clicks
    rng = np.random.default_rng(3)
    ids = pos * 10
    starts = np.r_[0, np.cumsum(g)[:-1]]
    perm = np.concatenate([s + rng.permutation(m) for s, m in zip(starts, g, strict=True)])
    X, y, ids = X[perm], y[perm], ids[perm]
    assert ids[0] != 10  # LightGBM's renumbering would call it position 1
    propensity = {10 * p: 1.0 / p for p in range(1, 7)}
    obj = LambdaRank(position_bias="ipw", propensity=propensity)
    model = lgb.train({**BASE, "objective": obj}, lgb.Dataset(X, y, group=g, position=ids), 5)
    est = obj.position_bias_
    assert est.positions.tolist() == [10, 20, 30, 40, 50, 60]
    np.testing.assert_allclose(est.propensity, [1.0 / p for p in range(1, 7)])

    # the same training with the positions bound in a plain function objective
    ref = LambdaRank(position_bias="ipw", propensity=propensity)

    def fobj(preds, ds):
        return ref.grad_hess(ds.get_label(), preds, g, position=ids)

    expected = lgb.train({**BASE, "objective": fobj}, lgb.Dataset(X, y, group=g), 5)
    np.testing.assert_array_equal(model.predict(X, raw_score=True),
                                  expected.predict(X, raw_score=True))
    # a Dataset constructed before training holds only the renumbering: number s is
    # read as position s + 1, and the propensities keyed by the ids are refused
    built = lgb.Dataset(X, y, group=g, position=ids, params=BASE).construct()
    with pytest.raises(ValueError, match="no value for position 1.*renumbered"):
        lgb.train({**BASE, "objective": LambdaRank(position_bias="ipw",
                                                   propensity=propensity)}, built, 1)


def test_cv_carries_positions_into_folds(clicks):
    X, y, g, pos = clicks
    obj = LambdaRank(position_bias="additive")
    full = lgb.Dataset(X, y, group=g, position=pos)
    res = cv({**BASE, "objective": obj}, full, 4, nfold=3, return_cvbooster=True)
    qidx = np.repeat(np.arange(g.size), g)
    folds = list(GroupKFold(n_splits=3).split(X, groups=qidx))
    for booster, (tr, _) in zip(res["cvbooster"].boosters, folds, strict=True):
        sizes = np.bincount(qidx[tr])
        fold = lgb.Dataset(X[tr], y[tr], group=sizes[sizes > 0], position=pos[tr],
                           reference=full)
        alone = lgb.train({**BASE, "objective": LambdaRank(position_bias="additive")},
                          fold, 4)
        np.testing.assert_array_equal(booster.predict(X, raw_score=True),
                                      alone.predict(X, raw_score=True))
    # the positions mattered: the plain objective gives other models
    plain = cv({**BASE, "objective": LambdaRank()}, lgb.Dataset(X, y, group=g), 4,
               nfold=3, return_cvbooster=True)
    assert np.abs(plain["cvbooster"].boosters[0].predict(X, raw_score=True)
                  - res["cvbooster"].boosters[0].predict(X, raw_score=True)).max() > 1e-4
