"""Dask: whole queries per partition for distributed training, and exact distributed metrics.

LightGBM (``lightgbm.DaskLGBMRanker``) and XGBoost (``xgboost.dask``) train on a Dask
cluster with every worker computing gradients on its own partitions. A gbrank ranking
objective is a sum over queries, so a worker's gradients are the single-machine
gradients exactly when every query lies whole in one partition (rows adjacent, so that
LightGBM's query sizes describe it). This module provides:

- :func:`partition_by_query`: repartition a Dask DataFrame, Dask arrays, or in-memory
  data so that queries are whole and contiguous, and return the pieces the boosters'
  Dask APIs want (``group`` sizes chunked per partition for LightGBM, dense ``qid`` for
  XGBoost);
- :func:`check_query_partitions` (and :func:`lightgbm_group` for data already split by
  query): a ``ValueError`` naming the first query that straddles two partitions, or whose
  rows are not adjacent inside one;
- :func:`partition_pseudo_queries` and :func:`pseudo_queries`: the documented
  alternative for group-less ranking (one query of all rows cannot be split across
  workers);
- exact distributed metrics — :func:`pair_accuracy`, :func:`ndcg`, :func:`fbeta`,
  :func:`f1` — computed from per-partition sufficient statistics
  (:func:`gbrank.metrics.ndcg_per_query`, :func:`gbrank.metrics.pair_counts`,
  :func:`gbrank.metrics.confusion_counts`) merged exactly, equal to
  :mod:`gbrank.metrics` on the same data.

Click logs (an objective with ``position_bias``): ``partition_by_query(...,
position=...)`` moves every row's display position with its query
(``parts.position``); XGBoost takes them as ``DaskDMatrix(...,
label_lower_bound=parts.position)`` with ``gbrank.xgboost.objective(obj,
position="label_lower_bound")``. Each worker computes the gradients of its own queries
exactly; the per-position sums behind ``"unbiased"``'s ratios and ``"additive"``'s
offsets are summed over the workers (XGBoost's allreduce) before every update, so every
worker holds the whole data's estimates, as on one machine (``"ipw"`` has none). The
model differs from the single-machine one only as any XGBoost distributed model does
(its histograms). LightGBM's ``DaskLGBMRanker`` passes no positions to its workers'
Datasets: a position-bias objective refuses it with an error naming the fix.

The objectives themselves need nothing from here: a gbrank objective is pickled to the
workers as it is (``DaskLGBMRanker(objective=LambdaRank())``,
``xgboost.dask.train(..., obj=gbrank.xgboost.objective(LambdaRank()))``). Dask, pandas
and the boosters are imported inside the functions that need them.

The package's modules, one job each: ``_partition`` (repartitioning by query),
``_queries`` (the query checks), ``_pseudo`` (pseudo-queries), ``_metrics`` (the
distributed metrics) and ``_collections`` (Dask collections as per-partition pieces).
"""

from gbrank.dask._metrics import f1, fbeta, ndcg, pair_accuracy
from gbrank.dask._partition import QueryPartitions, partition_by_query
from gbrank.dask._pseudo import partition_pseudo_queries, pseudo_queries
from gbrank.dask._queries import check_query_partitions, lightgbm_group

__all__ = [
    "QueryPartitions",
    "partition_by_query",
    "check_query_partitions",
    "lightgbm_group",
    "pseudo_queries",
    "partition_pseudo_queries",
    "pair_accuracy",
    "ndcg",
    "fbeta",
    "f1",
]
