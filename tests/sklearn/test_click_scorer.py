"""make_scorer("ips_dcg@10", propensity=...) in cross_val_score and GridSearchCV on a click
log: each fold's score against gbrank.metrics.ips_dcg of the fold's model, computed by
hand on the held-out rows' clicks, sessions and logged positions."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
import sklearn
from sklearn.base import clone
from sklearn.model_selection import GridSearchCV, GroupKFold, cross_val_score

from gbrank.metrics import ips_dcg
from gbrank.objectives import LambdaRank
from gbrank.sklearn import GBRanker, make_scorer

pytest.importorskip("lightgbm")
pytest.importorskip("xgboost")

FAST = dict(n_estimators=6, n_jobs=1, random_state=0)


def _frame(c):
    df = pd.DataFrame(c.X, columns=[f"f{i}" for i in range(c.X.shape[1])])
    df["qid"], df["shown_at"] = c.qid, c.position
    return df


def _by_hand(make, df, c, rho, folds):
    out = []
    for tr, te in folds:
        fitted = make().fit(df.iloc[tr], c.clicks[tr])
        out.append(ips_dcg(c.clicks[te], fitted.predict(df.iloc[te]), c.position[te], rho,
                           qid=c.qid[te], k=10))
    return np.asarray(out)


@pytest.mark.parametrize("booster", ["lightgbm", "xgboost"])
def test_cross_val_score_is_each_folds_ips_dcg(click_log, booster):
    c, rho = click_log, click_log.rho
    df = _frame(c)
    make = lambda: GBRanker(LambdaRank(position_bias="ipw", propensity=rho),  # noqa: E731
                            booster=booster, position_col="shown_at", **FAST)
    folds = list(GroupKFold(3).split(df, groups=c.qid))
    scorer = make_scorer("ips_dcg@10", propensity=rho)
    got = cross_val_score(make(), df, c.clicks, groups=c.qid, cv=GroupKFold(3),
                          scoring=scorer)
    np.testing.assert_allclose(got, _by_hand(make, df, c, rho, folds), rtol=0, atol=1e-12)
    # The estimator's own score with the same metric and propensities agrees.
    own = cross_val_score(make().set_params(scoring="ips_dcg@10"), df, c.clicks,
                          groups=c.qid, cv=GroupKFold(3))
    np.testing.assert_allclose(own, got, rtol=0, atol=1e-12)
    # Routed positions and sessions give the same numbers as the columns of X.
    with sklearn.config_context(enable_metadata_routing=True):
        routed = cross_val_score(
            GBRanker(LambdaRank(position_bias="ipw", propensity=rho), booster=booster,
                     **FAST).set_fit_request(qid=True, position=True),
            c.X, c.clicks, cv=GroupKFold(3), scoring=make_scorer("ips_dcg@10",
                                                                  propensity=rho),
            params={"qid": c.qid, "position": c.position, "groups": c.qid})
    np.testing.assert_allclose(routed, got, rtol=0, atol=1e-12)


def test_grid_search_compares_naive_and_corrected_on_one_scale(click_log):
    """A naive objective may carry the position column when the estimator's scoring
    is the click metric; every candidate is judged with the scorer's propensities."""
    c, rho = click_log, click_log.rho
    df = _frame(c)
    base = GBRanker(LambdaRank(), position_col="shown_at", scoring="ips_dcg@10",
                    propensity=rho, **FAST)
    grid = {"objective": [LambdaRank(), LambdaRank(position_bias="ipw", propensity=rho)]}
    scorer = make_scorer("ips_dcg@10", propensity=rho)
    gs = GridSearchCV(base, grid, cv=GroupKFold(3), scoring=scorer).fit(df, c.clicks,
                                                                         groups=c.qid)
    folds = list(GroupKFold(3).split(df, groups=c.qid))
    for obj, mean in zip(grid["objective"], gs.cv_results_["mean_test_score"],
                         strict=True):
        hand = _by_hand(lambda obj=obj: clone(base).set_params(objective=clone(obj)),
                        df, c, rho, folds)
        assert mean == pytest.approx(hand.mean(), abs=1e-12)


def test_click_scorer_refuses_what_it_cannot_judge(click_log):
    c, rho = click_log, click_log.rho
    with pytest.raises(ValueError, match=r"make_scorer\('ips_dcg@10', propensity="):
        make_scorer("ips_dcg@10")
    with pytest.raises(ValueError, match="takes none"):
        make_scorer("ndcg@10", propensity=rho)
    with pytest.raises(ValueError, match="probabilities in"):
        make_scorer("ips_dcg@10", propensity=[1.0, 0.0])
    # Positions nowhere (no position_col, no routing): an error, not a number.
    df = _frame(c).drop(columns="shown_at")
    with pytest.raises(ValueError, match="position_col"):
        cross_val_score(GBRanker(LambdaRank(), **FAST), df, c.clicks, groups=c.qid,
                        cv=GroupKFold(3), scoring=make_scorer("ips_dcg@10", propensity=rho),
                        error_score="raise")
    # A position column with an objective that ignores it and no click scoring: refused,
    # naming the way to declare the positions are for judging.
    with pytest.raises(ValueError, match=r"scoring='ips_dcg@10', propensity="):
        GBRanker(LambdaRank(), position_col="shown_at", **FAST).fit(_frame(c), c.clicks)
