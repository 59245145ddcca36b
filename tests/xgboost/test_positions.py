"""XGBoost on click logs: ips_dcg as a custom metric with positions from a DMatrix field."""

from __future__ import annotations

import numpy as np
import pytest

from gbrank.datasets import make_ranking, simulate_clicks
from gbrank.metrics import ips_dcg
from gbrank.objectives import LambdaRank
from gbrank.xgboost import metric, objective

xgb = pytest.importorskip("xgboost")


def test_ips_dcg_metric_reads_positions_and_stops_early():
    X, y, g = make_ranking(n_queries=60, rows_per_query=15, n_features=4, seed=2)
    weak = X[:, 0] + np.random.default_rng(0).normal(size=y.size)
    log = simulate_clicks(y, g, weak, top_n=6, n_sessions=1, sessions="keep", seed=4)
    Xc, c, gc, pos = X[log.rows], log.clicks, log.group, log.position
    cut = int(gc[:40].sum())
    rho = [1.0 / p for p in range(1, 7)]
    dtrain = xgb.DMatrix(Xc[:cut], c[:cut], group=gc[:40])
    dvalid = xgb.DMatrix(Xc[cut:], c[cut:], group=gc[40:])
    dvalid.set_float_info("label_lower_bound", pos[cut:].astype(np.float32))
    res: dict = {}
    booster = xgb.train({"eta": 0.3, "max_depth": 3, "nthread": 1, "base_score": 0.0,
                         "disable_default_eval_metric": 1}, dtrain, 200,
                        obj=objective(LambdaRank(position_bias="additive"),
                                      position=pos[:cut], learning_rate=0.3),
                        custom_metric=metric("ips_dcg@5", propensity=rho,
                                             position="label_lower_bound"),
                        evals=[(dvalid, "valid")], evals_result=res,
                        early_stopping_rounds=5, verbose_eval=False)
    hist = res["valid"]["gbrank_ips_dcg@5"]
    assert len(hist) < 200
    best = booster.best_iteration
    assert hist[best] == max(hist)  # maximised, as a gain
    pred = booster.predict(dvalid, output_margin=True, iteration_range=(0, best + 1))
    assert hist[best] == pytest.approx(ips_dcg(c[cut:], pred, pos[cut:], rho, gc[40:], k=5),
                                       rel=1e-6)
    with pytest.raises(ValueError, match="a DMatrix has no position field"):
        metric("ips_dcg@5", propensity=rho)
    with pytest.raises(ValueError, match="are for click metrics"):
        metric("ndcg@5", position="label_lower_bound")
    empty = metric("ips_dcg@5", propensity=rho, position="label_lower_bound")
    with pytest.raises(ValueError, match="empty on this evaluation data"):
        empty(np.zeros(cut), dtrain)
