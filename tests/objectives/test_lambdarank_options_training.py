"""LambdaRank's issue-10 options (LambdaLoss weightings, smoothing) trained through
LightGBM: each learns, and each metric's target rises on its own training data."""

from __future__ import annotations

import lightgbm as lgb
import numpy as np
import pytest

from gbrank.datasets import make_ranking
from gbrank.metrics import err, mean_ap, mrr, ndcg
from gbrank.objectives import LambdaRank

PARAMS = dict(num_leaves=15, learning_rate=0.1, min_data_in_leaf=5, verbose=-1,
              num_threads=2, deterministic=True, force_row_wise=True, seed=0)
SCORE = {"ndcg": lambda y, s, g: ndcg(y, s, g, k=10),
         "err": lambda y, s, g: err(y, s, g, k=10),
         "map": lambda y, s, g: mean_ap(y, s, g, k=10),
         "mrr": lambda y, s, g: mrr(y, s, g, k=10)}


@pytest.fixture(scope="module")
def data():
    return make_ranking(60, 20, 8, seed=2)


@pytest.mark.parametrize("metric, kwargs", [
    ("ndcg", {"weighting": "ndcg_loss1"}),
    ("ndcg", {"weighting": "ndcg_loss2"}),
    ("ndcg", {"weighting": "ndcg_loss2pp", "mu": 10.0}),
    ("ndcg", {"weighting": "ndcg_loss2pp", "norm": True}),
    ("err", {"smoothing": 0.5}),
    ("map", {"smoothing": 0.5}),
    ("mrr", {"smoothing": 0.5, "norm": True}),
    ("err", {}),
    ("mrr", {}),
], ids=str)
def test_options_learn_their_metric(metric, kwargs, data):
    X, y, g = data
    obj = LambdaRank(metric, **kwargs)
    start = SCORE[metric](y, np.zeros(y.size), g)  # all-equal scores: row order
    booster = lgb.train(dict(PARAMS, objective=obj), lgb.Dataset(X, y, group=g),
                        num_boost_round=15)
    after = SCORE[metric](y, booster.predict(X), g)
    assert after > start + 0.02, (start, after)
