"""GBRanker early-stopping on click logs: IPS-DCG@k of the held-out queries' clicks,
positions and propensities, checked round by round against gbrank.metrics.ips_dcg."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from conftest import needs_lightgbm_positions
from sklearn.base import clone
from sklearn.utils import check_random_state

from gbrank.metrics import ips_dcg
from gbrank.objectives import LambdaRank, RankNet
from gbrank.sklearn import GBRanker

lgb = pytest.importorskip("lightgbm")
xgb = pytest.importorskip("xgboost")

ROUNDS, PATIENCE, FRACTION = 30, 4, 0.25


@pytest.fixture(scope="module")
def log(click_log):
    """The shared click log (tests/conftest.py) as this file's tuple."""
    c = click_log
    return c.X, c.clicks, c.qid, c.position, c.rho


def _split(qid, random_state):
    """The booster seed and the rows of the training and held-out queries: GBRanker's
    documented draw of round(fraction × queries) whole queries from random_state."""
    rng = check_random_state(random_state)
    seed = int(rng.randint(np.iinfo(np.int32).max))
    ids = np.unique(qid)
    held = np.isin(qid, ids[rng.permutation(ids.size)[:int(round(FRACTION * ids.size))]])
    return seed, np.flatnonzero(~held), np.flatnonzero(held)


def _direct_scores(booster, obj, seed, X, c, qid, pos, tr, va, rounds):
    """The held-out rows' scores after every round, of the booster trained directly on
    the training rows with GBRanker's parameters, without early stopping."""
    g = np.unique(qid[tr], return_counts=True)[1]
    uses = obj._uses_positions()
    if booster == "lightgbm":
        import gbrank.lightgbm

        f = gbrank.lightgbm.objective(obj, position=pos[tr]) if uses else obj
        params = {"learning_rate": 0.3, "verbosity": -1, "seed": seed, "metric": "None",
                  "feature_pre_filter": False, "num_threads": 1, "objective": f}
        model = lgb.train(params, lgb.Dataset(X[tr], c[tr], group=g), rounds)
        return [model.predict(X[va], raw_score=True, num_iteration=r)
                for r in range(1, rounds + 1)]
    from gbrank.xgboost import objective

    params = {"eta": 0.3, "seed": seed, "verbosity": 0, "disable_default_eval_metric": 1,
              "nthread": 1, "base_score": 0.0}
    fobj = (objective(obj, position=pos[tr], learning_rate=0.3) if uses
            else objective(obj))
    model = xgb.train(params, xgb.DMatrix(X[tr], c[tr], group=g), rounds, obj=fobj)
    dva = xgb.DMatrix(X[va])
    return [model.predict(dva, output_margin=True, iteration_range=(0, r))
            for r in range(1, rounds + 1)]


@pytest.mark.parametrize("booster", ["lightgbm", "xgboost"])
@pytest.mark.parametrize("method", ["ipw", "unbiased", None])
def test_best_round_is_the_best_ips_dcg_of_the_held_out_clicks(log, booster, method):
    if booster == "lightgbm":
        needs_lightgbm_positions()
    X, c, qid, pos, rho = log
    # ipw: the objective's propensities judge; otherwise the estimator's (halved beyond
    # position 1 for "unbiased", so that the metric provably reads the parameter).
    given = None if method == "ipw" else np.r_[rho[:1], rho[1:] / 2]
    obj = (RankNet() if method is None else
           LambdaRank(position_bias=method, propensity=rho if method == "ipw" else None))
    ranker = GBRanker(obj, booster=booster, scoring="ips_dcg@5", propensity=given,
                      early_stopping_rounds=PATIENCE, validation_fraction=FRACTION,
                      n_estimators=ROUNDS, learning_rate=0.3, n_jobs=1, random_state=7)
    ranker.fit(X, c, qid=qid, position=pos)
    series = ranker.evals_result_["valid"]["ips_dcg@5"]
    seed, tr, va = _split(qid, 7)
    judge = rho if given is None else given
    scores = _direct_scores(booster, clone(obj), seed, X, c, qid, pos, tr, va, len(series))
    by_hand = [ips_dcg(c[va], s, pos[va], judge, qid=qid[va], k=5) for s in scores]
    # XGBoost logs a custom metric's values to 6 significant digits
    np.testing.assert_allclose(series, by_hand, rtol=1e-12 if booster == "lightgbm" else
                               1e-6, atol=0)
    best = int(np.argmax(by_hand)) + 1
    assert ranker.best_iteration_ == best
    assert len(series) == ROUNDS or len(series) == best + PATIENCE
    assert len(set(np.round(by_hand, 12))) > 1  # the rounds differ: the choice is real
    # predict and score() at the best round, on the held-out rows
    np.testing.assert_allclose(ranker.predict(X[va]), scores[best - 1], atol=1e-12)
    assert ranker.score(X[va], c[va], qid=qid[va], position=pos[va]) == pytest.approx(
        by_hand[best - 1], abs=1e-12)


def test_position_column_follows_the_held_out_rows(log):
    X, c, qid, pos, rho = log
    df = pd.DataFrame(X, columns=[f"f{i}" for i in range(X.shape[1])])
    df["qid"], df["shown_at"] = qid, pos
    make = lambda: GBRanker(LambdaRank(position_bias="ipw", propensity=rho),  # noqa: E731
                            booster="xgboost", scoring="ips_dcg@10", n_estimators=12,
                            early_stopping_rounds=3, n_jobs=1, random_state=0)
    by_col = clone(make().set_params(position_col="shown_at")).fit(df, c)
    by_arg = make().fit(X, c, qid=qid, position=pos)
    assert by_col.evals_result_ == by_arg.evals_result_
    assert by_col.get_params()["propensity"] is None
    assert by_col.feature_importances_[-1] == 0.0  # the position column is no feature


def test_click_metric_refuses_what_it_cannot_judge_honestly(log):
    X, c, qid, pos, rho = log
    es = dict(scoring="ips_dcg@10", early_stopping_rounds=3, n_estimators=5)
    # learned estimates are no propensities: the estimator's propensity= is the fix
    for method in ("unbiased", "additive"):
        with pytest.raises(ValueError, match=r"GBRanker\(propensity="):
            GBRanker(LambdaRank(position_bias=method), **es).fit(X, c, qid=qid,
                                                                   position=pos)
    with pytest.raises(ValueError, match=r"GBRanker\(propensity="):
        GBRanker("lambdarank", **es).fit(X, c, qid=qid)
    # no positions for the held-out clicks
    with pytest.raises(ValueError, match=r"position=\.\.\.\) or position_col"):
        GBRanker("lambdarank", propensity=rho, **es).fit(X, c, qid=qid)
    # propensities with a metric of true labels would be ignored
    with pytest.raises(ValueError, match="scoring='ips_dcg@10'"):
        GBRanker("lambdarank", propensity=rho, scoring="ndcg@10").fit(X, c, qid=qid)
    with pytest.raises(ValueError, match="probabilities in"):
        GBRanker("lambdarank", propensity=[0.0, 1.0], **es).fit(X, c, qid=qid,
                                                                position=pos)
    # positions without position_bias are fine for the metric only
    ranker = GBRanker("lambdarank", propensity=rho, **es).fit(X, c, qid=qid, position=pos)
    assert list(ranker.evals_result_["valid"]) == ["ips_dcg@10"]
    params = clone(ranker).get_params()
    assert params["propensity"] is rho or np.array_equal(params["propensity"], rho)
    assert params["scoring"] == "ips_dcg@10"


def test_lightgbm_native_lambdarank_learns_from_the_positions(log):
    """LightGBM's own lambdarank takes the positions (its Dataset's): the model of
    lgb.train on Dataset(position=...), and another one without them."""
    needs_lightgbm_positions()
    X, c, qid, pos, _ = log
    fit = lambda **kw: GBRanker("native:lambdarank", n_estimators=5, n_jobs=1,  # noqa: E731
                                random_state=0).fit(X, c, qid=qid, **kw)
    g = np.unique(qid, return_counts=True)[1]
    params = {"objective": "lambdarank", "learning_rate": 0.1, "verbosity": -1,
              "seed": _split(qid, 0)[0], "metric": "None", "feature_pre_filter": False,
              "num_threads": 1}
    direct = lgb.train(params, lgb.Dataset(X, c, group=g, position=pos), 5)
    with_pos = fit(position=pos).predict(X)
    np.testing.assert_array_equal(with_pos, direct.predict(X, raw_score=True))
    assert np.abs(fit().predict(X) - with_pos).max() > 1e-6
    with pytest.raises(ValueError, match="would ignore them"):
        GBRanker("native:lambdarank", booster="xgboost").fit(X, c, qid=qid, position=pos)


def test_repeated_positions_without_query_ids_are_refused():
    """Many sessions' rows with no query ids would be ranked and judged as one list."""
    rng = np.random.default_rng(0)
    X = rng.normal(size=(40, 3))
    clicks = (rng.random(40) < 0.3).astype(float)
    position = np.tile(np.arange(1, 11), 4)
    ranker = GBRanker(LambdaRank(position_bias="ipw", propensity=[1 / p for p in range(1, 11)]),
                      n_estimators=2, qid_col=None)
    with pytest.raises(ValueError, match="got no query ids"):
        ranker.fit(X, clicks, position=position)
    # declared group-less, the repeated positions still betray many sessions
    ranker.set_params(groupless=True)
    with pytest.raises(ValueError, match="position 1 is on 4 rows and there are no query ids"):
        ranker.fit(X, clicks, position=position)
    # one session (each position once) is one list: fine
    ranker.fit(X[:10], clicks[:10], position=position[:10])
