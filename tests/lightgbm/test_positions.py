"""LightGBM on click logs: the display positions reach an objective as the user gave
them (gbrank.lightgbm.objective), never as LightGBM's renumbering of a constructed
Dataset's; gbrank.lightgbm.cv carries them into its folds; feval's click metrics read
the positions given to it."""

from __future__ import annotations

import numpy as np
import pytest
from sklearn.model_selection import GroupKFold

import gbrank.lightgbm
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


def _shuffled_within_sessions(clicks, seed=3):
    """Rows of each session not in display order, positions as slot ids 10, 20, …, 60:
    LightGBM's renumbering (0, 1, … by first appearance) is then neither position − 1
    nor the ids."""
    X, y, g, pos = clicks
    rng = np.random.default_rng(seed)
    starts = np.r_[0, np.cumsum(g)[:-1]]
    perm = np.concatenate([s + rng.permutation(m) for s, m in zip(starts, g, strict=True)])
    return X[perm], y[perm], g, pos[perm] * 10


def test_positions_reach_the_objective_as_given(clicks):
    """The issue's call: a Dataset with positions, trained with LightGBM's own lambdarank
    first (which constructs it), then with a gbrank ipw objective on the same object. The
    constructed Dataset holds only LightGBM's renumbering: the objective refuses it and
    names the fix; given through gbrank.lightgbm.objective the positions are the user's,
    on that reused Dataset, on one constructed by hand and on a fresh one alike."""
    X, y, g, ids = _shuffled_within_sessions(clicks)
    assert ids[0] != 10  # the renumbering would call it position 0 (or 1)
    propensity = {10 * p: 1.0 / p for p in range(1, 7)}

    def ipw():
        return LambdaRank(position_bias="ipw", propensity=propensity)

    d = lgb.Dataset(X, y, group=g, position=ids)
    lgb.train({**BASE, "objective": "lambdarank"}, d, 3)  # the native baseline first
    with pytest.raises(ValueError, match="renumbering.*gbrank.lightgbm.objective"):
        lgb.train({**BASE, "objective": ipw()}, d, 3)
    built = lgb.Dataset(X, y, group=g, position=ids, params=BASE).construct()
    with pytest.raises(ValueError, match="renumbering.*gbrank.lightgbm.objective"):
        lgb.train({**BASE, "objective": ipw()}, built, 3)

    # the reference: the positions bound in a plain function objective
    ref = ipw()

    def fobj(preds, ds):
        return ref.grad_hess(ds.get_label(), preds, g, position=ids)

    expected = lgb.train({**BASE, "objective": fobj}, lgb.Dataset(X, y, group=g), 5)
    want = expected.predict(X, raw_score=True)
    for data in (d, built, lgb.Dataset(X, y, group=g, position=ids),
                 lgb.Dataset(X, y, group=g)):
        f = gbrank.lightgbm.objective(ipw(), position=ids)
        model = lgb.train({**BASE, "objective": f}, data, 5)
        np.testing.assert_array_equal(model.predict(X, raw_score=True), want)
        assert f.position_bias_.positions.tolist() == [10, 20, 30, 40, 50, 60]
        np.testing.assert_allclose(f.position_bias_.propensity, [1.0 / p for p in range(1, 7)])
    # positions that disagree with the Dataset's own are refused
    wrong = gbrank.lightgbm.objective(ipw(), position=np.sort(ids))
    with pytest.raises(ValueError, match="disagrees with the positions this LightGBM Dataset"):
        lgb.train({**BASE, "objective": wrong}, d, 1)


def test_positions_an_objective_ignores_are_announced(clicks):
    """LightGBM's own lambdarank learns a position bias from Dataset(position=...); a
    gbrank objective without position_bias does not, and says so once."""
    import warnings

    X, y, g, pos = clicks
    with pytest.warns(UserWarning, match="display positions, which LambdaRank without "
                                         "position_bias ignores"):
        lgb.train({**BASE, "objective": LambdaRank()},
                  lgb.Dataset(X, y, group=g, position=pos), 3)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        lgb.train({**BASE, "objective": LambdaRank()}, lgb.Dataset(X, y, group=g), 3)


def test_cv_carries_positions_into_folds(clicks):
    X, y, g, pos = clicks
    f = gbrank.lightgbm.objective(LambdaRank(position_bias="additive"), position=pos)
    full = lgb.Dataset(X, y, group=g)
    res = cv({**BASE, "objective": f}, full, 4, nfold=3, return_cvbooster=True)
    qidx = np.repeat(np.arange(g.size), g)
    folds = list(GroupKFold(n_splits=3).split(X, groups=qidx))
    for booster, (tr, _) in zip(res["cvbooster"].boosters, folds, strict=True):
        sizes = np.bincount(qidx[tr])
        fold = lgb.Dataset(X[tr], y[tr], group=sizes[sizes > 0], reference=full)
        alone = gbrank.lightgbm.objective(LambdaRank(position_bias="additive"),
                                          position=pos[tr])
        alone = lgb.train({**BASE, "objective": alone}, fold, 4)
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


def test_feval_ips_dcg_reads_the_positions_given_and_stops_early(clicks):
    from gbrank.lightgbm import feval, metric_key
    from gbrank.metrics import ips_dcg

    X, y, g, ids = _shuffled_within_sessions(clicks)
    cut = int(g[:30].sum())
    rho = {10 * p: 1.0 / p for p in range(1, 7)}
    pt, pv = ids[:cut], ids[cut:]
    train = lgb.Dataset(X[:cut], y[:cut], group=g[:30], position=pt)
    valid = lgb.Dataset(X[cut:], y[cut:], group=g[30:], position=pv, reference=train)
    res: dict = {}
    f = gbrank.lightgbm.objective(LambdaRank(position_bias="unbiased"), position=pt)
    booster = lgb.train({**BASE, "objective": f, "learning_rate": 0.3}, train, 200,
                        valid_sets=[valid],
                        feval=feval("ips_dcg@5", propensity=rho, position=pv),
                        callbacks=[lgb.record_evaluation(res),
                                   lgb.early_stopping(5, verbose=False)])
    hist = res["valid_0"][metric_key("ips_dcg@5")]
    assert len(hist) < 200
    pred = booster.predict(X[cut:], raw_score=True, num_iteration=booster.best_iteration)
    direct = ips_dcg(y[cut:], pred, pv, rho, g[30:], k=5)
    assert hist[booster.best_iteration - 1] == pytest.approx(direct, rel=1e-12)
    assert max(hist) == hist[booster.best_iteration - 1]
    with pytest.raises(ValueError, match="propensity= and position= are for click metrics"):
        feval("ndcg@5", propensity=rho)
    # the Dataset's own positions are LightGBM's renumbering once constructed: refused
    with pytest.raises(ValueError, match="feval\\('ips_dcg@5', propensity=..., position="):
        lgb.train({**BASE, "objective": LambdaRank()}, train, 2, valid_sets=[valid],
                  feval=feval("ips_dcg@5", propensity=rho))
    # positions of another data set are refused
    with pytest.raises(ValueError, match="disagree|rows"):
        lgb.train({**BASE, "objective": LambdaRank()}, train, 2, valid_sets=[valid],
                  feval=feval("ips_dcg@5", propensity=rho, position=np.sort(pv)))


def test_additive_on_a_dataset_constructed_before_training_asks_for_the_rate(clicks):
    """A Dataset constructed before lgb.train keeps its own parameters, not the
    training's: the learning rate the additive offsets move by is unknown there, so the
    objective says so instead of assuming LightGBM's default 0.1."""
    X, y, g, pos = clicks
    params = {**BASE, "learning_rate": 0.3}

    def dataset(construct):
        ds = lgb.Dataset(X, y, group=g, params={"verbose": -1, "min_data_in_leaf": 5})
        return ds.construct() if construct else ds

    def additive(**kw):
        return LambdaRank(position_bias="additive", **kw)

    with pytest.raises(ValueError, match="learning rate"):
        lgb.train({**params, "objective": gbrank.lightgbm.objective(additive(), position=pos)},
                  dataset(True), 2)
    told = gbrank.lightgbm.objective(additive(position_bias_learning_rate=0.3), position=pos)
    a = lgb.train({**params, "objective": told}, dataset(True), 3)
    told_adapter = gbrank.lightgbm.objective(additive(), position=pos, learning_rate=0.3)
    c = lgb.train({**params, "objective": told_adapter}, dataset(True), 3)
    b = lgb.train({**params, "objective": gbrank.lightgbm.objective(additive(), position=pos)},
                  dataset(False), 3)
    np.testing.assert_array_equal(a.predict(X, raw_score=True), b.predict(X, raw_score=True))
    np.testing.assert_array_equal(c.predict(X, raw_score=True), b.predict(X, raw_score=True))
