"""Public metrics (plain functions on labels, scores and query structure).

Ranking metrics take ``group`` (query sizes) or ``qid=`` (per-row ids) and return
the (query-weighted) mean over queries; they only order the scores, so any scale
serves. Binary, calibration and multiclass metrics read probabilities by default, as
scikit-learn does, and raw margins (log-odds) with ``margin=True``; binary ones judge
``s > threshold`` (0.5 on probabilities, 0 on margins).
Names for adapters (``"ndcg@10"``, ``"fbeta:2"``, ...) are resolved by
:func:`gbrank.metrics.get_metric`. The per-query and per-partition statistics that
metrics are built from (:func:`ndcg_per_query`, :func:`err_per_query`,
:func:`mean_ap_per_query`, :func:`mrr_per_query`, :func:`pair_counts`,
:func:`confusion_counts`) serve per-query analysis and code that merges partial
results, such as :mod:`gbrank.dask`.
"""

from gbrank.metrics._binary import average_precision, balanced_measure, best_threshold, f1, fbeta
from gbrank.metrics._calibration import expected_calibration_error, log_loss
from gbrank.metrics._clicks import ips_dcg
from gbrank.metrics._multiclass import (
    balanced_accuracy,
    best_class_offsets,
    fbeta_multiclass,
    multiclass_log_loss,
)
from gbrank.metrics._paired import PairedDifference, paired_difference
from gbrank.metrics._ranking import (
    err,
    mean_ap,
    mrr,
    ndcg,
    pair_accuracy,
    precision_at_k,
    recall_at_k,
)
from gbrank.metrics._registry import Metric, get_metric, metric_names
from gbrank.metrics._statistics import (
    ConfusionCounts,
    PairCounts,
    QueryValues,
    confusion_counts,
    err_per_query,
    mean_ap_per_query,
    mrr_per_query,
    ndcg_per_query,
    pair_counts,
)

__all__ = [
    "ndcg",
    "err",
    "mean_ap",
    "mrr",
    "precision_at_k",
    "recall_at_k",
    "pair_accuracy",
    "fbeta",
    "f1",
    "balanced_measure",
    "best_threshold",
    "average_precision",
    "log_loss",
    "expected_calibration_error",
    "ips_dcg",
    "fbeta_multiclass",
    "balanced_accuracy",
    "multiclass_log_loss",
    "best_class_offsets",
    "Metric",
    "get_metric",
    "metric_names",
    "ndcg_per_query",
    "err_per_query",
    "mean_ap_per_query",
    "mrr_per_query",
    "pair_counts",
    "confusion_counts",
    "QueryValues",
    "PairCounts",
    "ConfusionCounts",
    "paired_difference",
    "PairedDifference",
]
