"""gbrank on a Dask cluster, end to end (the user guide's "Scaling out",
docs/guide/scaling.md).

Starts a 2-worker ``distributed.LocalCluster`` on loopback (or uses the client you
pass to :func:`main`), splits synthetic ranking data so that every query lies whole in
one partition, trains ``LambdaRank`` through LightGBM's and XGBoost's Dask APIs, scores
held-out data with the exact distributed metrics, and trains group-less RankNet on
pseudo-queries.

    python experiments/examples/dask_example.py
"""

from __future__ import annotations

import warnings
from typing import Any

import numpy as np


def main(client: Any) -> dict[str, float]:
    import dask.array as da
    import lightgbm as lgb
    import xgboost.dask as xgb_dask

    import gbrank.dask as gd
    import gbrank.xgboost
    from gbrank import metrics
    from gbrank.datasets import make_demand_levels, make_ranking
    from gbrank.objectives import LambdaRank, RankNet

    warnings.filterwarnings("ignore", message="Parameter n_jobs will be ignored")
    out: dict[str, float] = {}

    # 1. Whole queries per partition: what DaskLGBMRanker (group) and xgboost.dask (qid) need.
    X, y, group = make_ranking(n_queries=300, rows_per_query=20, n_features=10, seed=0)
    qid = np.repeat(np.arange(group.size), group)
    train, test = qid < 240, qid >= 240
    parts = gd.partition_by_query(X[train], y[train], qid[train], npartitions=2)
    held = gd.partition_by_query(X[test], y[test], qid[test], npartitions=2)

    # 2. LightGBM: the objective instance is pickled to the workers as it is.
    ranker = lgb.DaskLGBMRanker(objective=LambdaRank(metric="ndcg"), n_estimators=30,
                                verbose=-1, client=client)
    ranker.fit(parts.X, parts.y, group=parts.group)
    pred = ranker.predict(held.X, raw_score=True)  # a dask array, chunked like held.X
    out["lightgbm ndcg@10"] = gd.ndcg(held.y, pred, held.qid, k=10)
    out["lightgbm pair_accuracy"] = gd.pair_accuracy(held.y, pred, held.qid)
    # the same numbers on one machine (exact merge of per-partition statistics)
    s_local = ranker.to_local().predict(X[test], raw_score=True)
    assert abs(out["lightgbm ndcg@10"] - metrics.ndcg(y[test], s_local, qid=qid[test])) < 1e-12
    assert out["lightgbm pair_accuracy"] == metrics.pair_accuracy(y[test], s_local, qid=qid[test])

    # 3. XGBoost: xgboost.dask.train with gbrank.xgboost.objective (DaskXGBRanker refuses
    #    callable objectives); every worker's DMatrix carries its queries from qid.
    dtrain = xgb_dask.DaskDMatrix(client, parts.X, parts.y, qid=parts.qid)
    booster = xgb_dask.train(client, {"tree_method": "hist", "disable_default_eval_metric": 1},
                             dtrain, num_boost_round=30,
                             obj=gbrank.xgboost.objective(LambdaRank(metric="ndcg")))["booster"]
    pred = xgb_dask.predict(client, booster, held.X)
    out["xgboost ndcg@10"] = gd.ndcg(held.y, pred, held.qid, k=10)

    # 4. Group-less data (one query of all rows) cannot be split across workers:
    #    partition_by_query(..., qid=None) refuses it; pseudo-queries of 200 rows can be.
    Xg, yg = make_demand_levels(n_rows=4000, seed=0)
    Xd, yd = da.from_array(Xg, chunks=(2000, -1)), da.from_array(yg, chunks=2000)
    try:
        gd.partition_by_query(Xd, yd, None)
    except ValueError as exc:
        print("refused:", str(exc)[:72], "...")
    pseudo = gd.partition_pseudo_queries(Xd, yd, size=200, seed=0)
    ranker = lgb.DaskLGBMRanker(objective=RankNet(), n_estimators=30, verbose=-1,
                                client=client)
    ranker.fit(pseudo.X, pseudo.y, group=pseudo.group)
    # judged on all pairs of the whole set at once (exact, distributed)
    out["group-less pair_accuracy"] = gd.pair_accuracy(yd, ranker.predict(Xd, raw_score=True))
    for name, value in out.items():
        print(f"{name}: {value:.4f}")
    return out


if __name__ == "__main__":
    from distributed import Client, LocalCluster

    with LocalCluster(n_workers=2, threads_per_worker=1, processes=True, host="127.0.0.1",
                      dashboard_address=None, silence_logs=40) as cluster, \
            Client(cluster) as client:
        main(client)
