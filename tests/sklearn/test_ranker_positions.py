"""GBRanker on click logs: positions as a fit argument or a column of X, on both
boosters, against the boosters trained directly with the same parameters."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from conftest import needs_lightgbm_positions
from sklearn.base import clone
from sklearn.utils import check_random_state

from gbrank.objectives import LambdaRank, RankNet
from gbrank.sklearn import GBRanker

lgb = pytest.importorskip("lightgbm")
xgb = pytest.importorskip("xgboost")

ROUNDS = 5


@pytest.fixture(scope="module")
def clicks(click_log):
    """The shared click log (tests/conftest.py) as this file's tuple."""
    c = click_log
    return c.X, c.clicks, c.qid, c.group, c.position


def _seed(random_state):
    return int(check_random_state(random_state).randint(np.iinfo(np.int32).max))


def _direct(booster, obj, X, y, g, pos):
    """The booster trained directly with GBRanker's parameters (n_jobs=1, seed 0)."""
    seed = _seed(0)
    if booster == "lightgbm":
        import gbrank.lightgbm

        f = gbrank.lightgbm.objective(obj, position=pos)
        params = {"learning_rate": 0.1, "verbosity": -1, "seed": seed, "metric": "None",
                  "feature_pre_filter": False, "num_threads": 1, "objective": f}
        model = lgb.train(params, lgb.Dataset(X, y, group=g), ROUNDS)
        return model.predict(X, raw_score=True), f.position_bias_
    from gbrank.xgboost import objective

    params = {"eta": 0.1, "seed": seed, "verbosity": 0, "disable_default_eval_metric": 1,
              "nthread": 1, "base_score": 0.0}
    d = xgb.DMatrix(X, y, group=g)
    f = objective(obj, position=pos, learning_rate=0.1)
    model = xgb.train(params, d, ROUNDS, obj=f)
    return model.predict(d, output_margin=True), f.position_bias_


@pytest.mark.parametrize("booster", ["lightgbm", "xgboost"])
@pytest.mark.parametrize("method", ["unbiased", "additive"])
def test_fit_with_positions_equals_the_booster_trained_directly(clicks, booster, method):
    if booster == "lightgbm":
        needs_lightgbm_positions()
    X, y, qid, g, pos = clicks
    make = lambda: LambdaRank(position_bias=method)  # noqa: E731
    ranker = GBRanker(make(), booster=booster, n_estimators=ROUNDS, n_jobs=1,
                      random_state=0).fit(X, y, qid=qid, position=pos)
    expected, direct_est = _direct(booster, make(), X, y, g, pos)
    np.testing.assert_array_equal(ranker.predict(X), expected)
    est = ranker.position_bias_
    assert est.rounds == ROUNDS
    assert est.as_dict() == direct_est.as_dict()
    # the parameters are untouched: nothing learned lives on an objective
    assert "position_bias_" not in ranker.objective.__dict__
    assert "position_bias_" not in ranker.objective_.__dict__
    # the positions matter: shuffled across rows (not a relabelling of the slots, to
    # which both methods are invariant up to the reference position), another model
    rng = np.random.default_rng(5)  # within each session: a session shows a position once
    shuffled = np.concatenate([rng.permutation(part) for part in np.split(
        pos, np.cumsum(g)[:-1])])
    other = GBRanker(make(), booster=booster, n_estimators=ROUNDS, n_jobs=1,
                     random_state=0).fit(X, y, qid=qid, position=shuffled)
    assert np.abs(other.predict(X) - expected).max() > 1e-4


@pytest.mark.parametrize("booster", ["lightgbm", "xgboost"])
def test_position_column_of_X(clicks, booster):
    if booster == "lightgbm":
        needs_lightgbm_positions()
    X, y, qid, g, pos = clicks
    df = pd.DataFrame(X, columns=[f"f{i}" for i in range(X.shape[1])])
    df.insert(1, "shown_at", pos)
    df["qid"] = qid
    kw = dict(booster=booster, n_estimators=ROUNDS, n_jobs=1, random_state=0)
    by_arg = GBRanker(RankNet(position_bias="unbiased"), **kw).fit(X, y, qid=qid,
                                                                    position=pos)
    by_col = GBRanker(RankNet(position_bias="unbiased"), position_col="shown_at",
                      **kw).fit(df, y)
    np.testing.assert_array_equal(by_col.predict(df), by_arg.predict(X))
    imp = by_col.feature_importances_
    assert imp.shape == (df.shape[1],) and imp[1] == 0.0 and imp[-1] == 0.0
    assert imp.sum() == pytest.approx(1.0)
    # by index, on an array: column 1
    arr = np.column_stack([X[:, :1], pos, X[:, 1:]])
    by_idx = GBRanker(RankNet(position_bias="unbiased"), position_col=1, qid_col=None,
                      **kw).fit(arr, y, qid=qid)
    np.testing.assert_array_equal(by_idx.predict(arr), by_arg.predict(X))
    assert clone(by_col).get_params()["position_col"] == "shown_at"


def test_bad_positions_name_the_fix(clicks):
    X, y, qid, g, pos = clicks
    ranker = GBRanker(LambdaRank(position_bias="unbiased"), n_estimators=2, n_jobs=1)
    with pytest.raises(ValueError, match="needs every row's display position"):
        ranker.fit(X, y, qid=qid)
    with pytest.raises(ValueError, match="position has 3 entries"):
        ranker.fit(X, y, qid=qid, position=pos[:3])
    with pytest.raises(ValueError, match="has no position_bias and would ignore them"):
        GBRanker(LambdaRank(), n_estimators=2, n_jobs=1).fit(X, y, qid=qid, position=pos)
    df = pd.DataFrame(X, columns=[f"f{i}" for i in range(X.shape[1])])
    df["p"] = pos
    with pytest.raises(ValueError, match="position_col='q' is not a column of X"):
        GBRanker(LambdaRank(position_bias="unbiased"), position_col="q").fit(df, y, qid=qid)
    with pytest.raises(ValueError, match="positions given twice"):
        GBRanker(LambdaRank(position_bias="unbiased"), position_col="p", n_estimators=2,
                 n_jobs=1).fit(df, y, qid=qid, position=pos + 1)
    with pytest.raises(ValueError, match="name the same column"):
        GBRanker(LambdaRank(position_bias="unbiased"), position_col=0, qid_col=0).fit(
            X, y, position=pos)


def test_a_learned_correction_on_a_log_that_cannot_identify_it_is_warned():
    """Every document of a query always at the same place: "unbiased" and "additive" cannot
    tell position from relevance, and say so with the figure; a randomised share of the
    sessions (the same documents elsewhere) silences it; ipw needs no such log."""
    import warnings

    from gbrank.datasets import make_ranking, simulate_clicks

    X, y, g = make_ranking(n_queries=40, rows_per_query=15, n_features=4, seed=1)

    def fit(obj, share):
        log = simulate_clicks(y, g, X[:, 0], top_n=8, n_sessions=3, sessions="keep",
                              randomized=share, seed=2)
        qid = np.repeat(np.arange(log.group.size), log.group)
        GBRanker(obj, n_estimators=2, n_jobs=1).fit(X[log.rows], log.clicks, qid=qid,
                                                    position=log.position)

    for method in ("unbiased", "additive"):
        with pytest.warns(UserWarning, match=rf"position_bias='{method}' learns position "
                                             r"effects.*none of its 320 query–document "
                                             r"pairs.*estimate_propensity"):
            fit(LambdaRank(position_bias=method), 0.0)
        with warnings.catch_warnings():
            warnings.simplefilter("error")
            fit(LambdaRank(position_bias=method), 0.5)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        fit(LambdaRank(position_bias="ipw", propensity=[1 / p for p in range(1, 9)]), 0.0)


def test_the_validation_split_of_a_click_log_keeps_a_querys_sessions_together(monkeypatch):
    """Sessions of one query show the same documents: a split by session would judge
    early stopping on rows the booster trains on (4 sessions per query: most of them).
    The split holds out whole blocks of sessions linked by a shared row."""
    from gbrank.datasets import make_ranking, simulate_clicks
    X, y, g = make_ranking(n_queries=40, rows_per_query=12, n_features=5, seed=0)
    log = simulate_clicks(y, g, X[:, 0], top_n=8, n_sessions=4, sessions="keep", seed=1)
    seen = {}
    cls = next(c for c in GBRanker.__mro__ if "_train" in c.__dict__)
    train = cls._train

    def spy(self, p, obj, Xt, yt, gt, wt, init, Xv, *args, **kw):
        seen["train"], seen["valid"] = np.asarray(Xt), np.asarray(Xv)
        return train(self, p, obj, Xt, yt, gt, wt, init, Xv, *args, **kw)

    monkeypatch.setattr(cls, "_train", spy)
    qid = np.repeat(np.arange(log.group.size), log.group)
    # each session's own hour of day: a document's rows differ between its sessions there
    hour = np.repeat(np.random.default_rng(0).integers(0, 24, log.group.size), log.group)
    GBRanker(LambdaRank(position_bias="ipw", propensity=log.examination), n_estimators=5,
             early_stopping_rounds=2, validation_fraction=0.25, random_state=0,
             scoring="ips_dcg@10", n_jobs=1).fit(np.column_stack([X[log.rows], hour]),
                                                 log.clicks, qid=qid, position=log.position)
    trained = {r.tobytes() for r in np.ascontiguousarray(seen["train"][:, :-1])}
    assert not any(r.tobytes() in trained
                   for r in np.ascontiguousarray(seen["valid"][:, :-1]))
    assert 0.2 <= len(seen["valid"]) / len(log.rows) <= 0.32


def test_early_stopping_a_correction_on_raw_click_pair_accuracy_is_warned(clicks):
    X, c, qid, _, pos = clicks
    obj = LambdaRank(position_bias="ipw", propensity=[1.0, 0.6, 0.4, 0.3, 0.25, 0.2, 0.17,
                                                       0.15, 0.13, 0.12])
    with pytest.warns(UserWarning, match="scoring='ips_dcg@10'"):
        GBRanker(obj, n_estimators=3, early_stopping_rounds=2, n_jobs=1).fit(
            X, c, qid=qid, position=pos)
    import warnings

    with warnings.catch_warnings():
        warnings.simplefilter("error")
        GBRanker(obj, n_estimators=3, early_stopping_rounds=2, scoring="ips_dcg@10",
                 n_jobs=1).fit(X, c, qid=qid, position=pos)


def test_sessions_merged_under_one_qid_are_warned_about_once():
    """A query id over several sessions: a correction pairs rows across sessions, and
    IPS-DCG reads each list as one session: warned about, by the correction's training
    (which the boosters' own adapters reach too; eleventh probe) or, for the metric
    alone, by GBRanker."""
    from gbrank.datasets import make_ranking, simulate_clicks

    X, y, g = make_ranking(n_queries=20, rows_per_query=10, n_features=5, seed=0)
    log = simulate_clicks(y, g, X[:, 0], top_n=5, n_sessions=3, sessions="keep", seed=1)
    query = np.repeat(np.arange(g.size), g)[log.rows]
    with pytest.warns(UserWarning, match=r"shows position \d+ on 3 rows, and "
                      r"position_bias='ipw' reads each group as one session") as seen:
        GBRanker(LambdaRank(position_bias="ipw", propensity=log.examination),
                 n_estimators=2, n_jobs=1).fit(X[log.rows], log.clicks, qid=query,
                                               position=log.position)
    assert len([w for w in seen if "session" in str(w.message)]) == 1
    with pytest.warns(UserWarning, match="several sessions under one id"):
        GBRanker(LambdaRank(), n_estimators=2, n_jobs=1, scoring="ips_dcg@10",
                 early_stopping_rounds=1, validation_fraction=0.3,
                 propensity=log.examination).fit(X[log.rows], log.clicks, qid=query,
                                                 position=log.position)
