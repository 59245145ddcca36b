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
if not hasattr(lgb.Dataset, "get_position"):
    pytest.skip("LightGBM < 4.1 has no Dataset positions", allow_module_level=True)

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


# -- ips_dcg as a registry name: feval and early stopping on click logs -------------------


def test_ips_dcg_registry_name_hand_worked():
    from gbrank.metrics import get_metric

    m = get_metric("IPS_DCG@2")
    assert (m.name, m.kind, m.higher_is_better, m.params) == ("ips_dcg@2", "clicks", True,
                                                              {"k": 2})
    with pytest.raises(ValueError, match="none is bound"):
        m([1, 0], [0.1, 0.9], position=[1, 2])
    bound = m.with_propensity([1.0, 0.5, 0.25])
    with pytest.raises(ValueError, match="logged display position"):
        bound([1, 0], [0.1, 0.9])
    # query 1: clicks at logged positions 3 (ρ 0.25) and 1, ranked 1st and 3rd (cut at 2):
    # 1/0.25/log2(2) = 4; query 2: a click at position 2 ranked 2nd: 1/0.5/log2(3)
    y = [1, 0, 1, 1, 0]
    s = [0.1, 0.5, 0.9, 0.2, 0.7]
    pos = [1, 2, 3, 2, 1]
    expected = (4.0 + 2.0 / np.log2(3)) / 2
    assert bound(y, s, [3, 2], position=pos) == pytest.approx(expected, rel=1e-12)
    assert get_metric("ips_dcg").with_propensity([1.0, 0.5, 0.25]).params["k"] is None
    with pytest.raises(ValueError, match="probabilities in"):
        m.with_propensity([1.0, 0.0])


def test_feval_ips_dcg_reads_positions_and_stops_early(clicks):
    from gbrank.lightgbm import feval, metric_key
    from gbrank.metrics import ips_dcg

    X, y, g, pos = clicks
    cut = int(g[:30].sum())
    rho = [1.0 / p for p in range(1, 7)]
    train = lgb.Dataset(X[:cut], y[:cut], group=g[:30], position=pos[:cut])
    valid = lgb.Dataset(X[cut:], y[cut:], group=g[30:], position=pos[cut:], reference=train)
    res: dict = {}
    booster = lgb.train({**BASE, "objective": LambdaRank(position_bias="unbiased"),
                         "learning_rate": 0.3}, train, 200, valid_sets=[valid],
                        feval=feval("ips_dcg@5", propensity=rho),
                        callbacks=[lgb.record_evaluation(res),
                                   lgb.early_stopping(5, verbose=False)])
    hist = res["valid_0"][metric_key("ips_dcg@5")]
    assert len(hist) < 200
    pred = booster.predict(X[cut:], raw_score=True, num_iteration=booster.best_iteration)
    direct = ips_dcg(y[cut:], pred, pos[cut:], rho, g[30:], k=5)
    assert hist[booster.best_iteration - 1] == pytest.approx(direct, rel=1e-12)
    assert max(hist) == hist[booster.best_iteration - 1]
    with pytest.raises(ValueError, match="propensity= is for click metrics"):
        feval("ndcg@5", propensity=rho)
    with pytest.raises(ValueError, match="has none: build it with"):
        lgb.train({**BASE, "objective": LambdaRank()}, lgb.Dataset(X[:cut], y[:cut],
                                                                  group=g[:30]), 2,
                  valid_sets=[lgb.Dataset(X[cut:], y[cut:], group=g[30:])],
                  feval=feval("ips_dcg@5", propensity=rho))


def test_additive_on_a_dataset_constructed_before_training_asks_for_the_rate(clicks):
    """A Dataset constructed before lgb.train keeps its own parameters, not the
    training's: the learning rate the additive offsets move by is unknown there, so the
    objective says so instead of assuming LightGBM's default 0.1."""
    X, y, g, pos = clicks
    params = {**BASE, "learning_rate": 0.3}

    def dataset(construct):
        ds = lgb.Dataset(X, y, group=g, position=pos,
                         params={"verbose": -1, "min_data_in_leaf": 5})
        return ds.construct() if construct else ds

    obj = LambdaRank(position_bias="additive")
    with pytest.raises(ValueError, match="constructed before lgb.train"):
        lgb.train({**params, "objective": obj}, dataset(True), 2)
    told = LambdaRank(position_bias="additive", position_bias_learning_rate=0.3)
    a = lgb.train({**params, "objective": told}, dataset(True), 3)
    b = lgb.train({**params, "objective": obj}, dataset(False), 3)
    np.testing.assert_array_equal(a.predict(X, raw_score=True), b.predict(X, raw_score=True))
