"""Per-partition statistics: the numbers a metric's value is built from, for code that
computes a metric piece by piece and merges the pieces (:mod:`gbrank.dask`).

A ranking metric is a (weighted) mean over queries, or a ratio of pooled pair counts;
a binary metric is a function of the confusion counts. When every query lies in one
piece of the data, these statistics of the pieces add up to those of the whole, so the
merged metric equals the single-machine one:

- :func:`ndcg_per_query`, :func:`err_per_query`, :func:`mean_ap_per_query`,
  :func:`mrr_per_query`: the metric of every query and the query weights;
  :func:`gbrank.metrics.ndcg`, :func:`~gbrank.metrics.err`,
  :func:`~gbrank.metrics.mean_ap` and :func:`~gbrank.metrics.mrr` are their
  (weighted) means;
- :func:`pair_counts`: correctly ordered and differently-labelled pairs per query;
  :func:`gbrank.metrics.pair_accuracy` is the ratio of their (weighted) sums;
- :func:`confusion_counts`: the (weighted) TP, FP, FN, TN of ``s > threshold``;
  :func:`gbrank.metrics.fbeta` and :func:`gbrank.metrics.balanced_measure` are
  functions of them.

Inputs are validated exactly as by the metrics they build.
"""

from __future__ import annotations

from typing import Any, NamedTuple

import numpy as np

from gbrank.metrics._binary import _counts
from gbrank.metrics._ranking import (
    _ap_per_query,
    _err_per_query,
    _ndcg_per_query,
    _pair_counts,
    _rr_per_query,
)

__all__ = ["QueryValues", "PairCounts", "ConfusionCounts", "ndcg_per_query", "err_per_query",
           "mean_ap_per_query", "mrr_per_query", "pair_counts", "confusion_counts"]


class QueryValues(NamedTuple):
    """A metric's value for every query, and the query weights.

    Attributes
    ----------
    values : ndarray of float64, shape (n_queries,)
        One value per query: in row order when every query's rows are contiguous (or
        the structure is given by ``group``), else in ascending ``qid`` order.
    weights : ndarray of float64 of shape (n_queries,), or None
        The weight of each query, in the order of ``values``; ``None`` when no
        ``weight`` was given (every query counts 1).

    Examples
    --------
    >>> from gbrank.metrics import ndcg_per_query
    >>> values, weights = ndcg_per_query([1, 0, 0, 1], [0.9, 0.2, 0.3, 0.8], group=[2, 2],
    ...                                  weight=[2.0, 1.0])
    >>> values.tolist(), weights.tolist()
    ([1.0, 1.0], [2.0, 1.0])
    """

    values: np.ndarray
    weights: np.ndarray | None


class PairCounts(NamedTuple):
    """Pair counts of every query (pair accuracy's numerator and denominator).

    Attributes
    ----------
    good : ndarray of float64, shape (n_queries,)
        :math:`C_q + T_q / 2`: correctly ordered differently-labelled pairs, score ties
        counting 1/2.
    pairs : ndarray of float64, shape (n_queries,)
        :math:`P_q`: pairs with different labels.
    weights : ndarray of float64 of shape (n_queries,), or None
        Query weights, as in :class:`QueryValues`.

    Examples
    --------
    Merging the counts of two pieces (whole queries each) gives the pair accuracy of
    all the data:

    >>> from gbrank.metrics import pair_accuracy, pair_counts
    >>> a = pair_counts([2, 0, 1], [0.3, 0.9, 0.1])
    >>> b = pair_counts([0, 1], [0.2, 0.2])
    >>> float((a.good.sum() + b.good.sum()) / (a.pairs.sum() + b.pairs.sum()))
    0.375
    >>> pair_accuracy([2, 0, 1, 0, 1], [0.3, 0.9, 0.1, 0.2, 0.2], group=[3, 2])
    0.375
    """

    good: np.ndarray
    pairs: np.ndarray
    weights: np.ndarray | None


class ConfusionCounts(NamedTuple):
    """Confusion counts of ``s > threshold`` (weighted sums when weights are given).

    Attributes
    ----------
    tp, fp, fn, tn : float
        True positives :math:`a`, false positives :math:`b`, false negatives
        :math:`c`, true negatives :math:`d`.

    Examples
    --------
    >>> from gbrank.metrics import confusion_counts
    >>> counts = confusion_counts([1, 0, 1, 0], [0.9, 0.6, 0.4, 0.1], weight=[1, 2, 1, 1])
    >>> counts
    ConfusionCounts(tp=1.0, fp=2.0, fn=1.0, tn=1.0)
    >>> counts.tp / (counts.tp + counts.fn)  # recall
    0.5
    """

    tp: float
    fp: float
    fn: float
    tn: float


def ndcg_per_query(y: Any, s: Any, group: Any = None, k: int | None = 10,
                   label_gain: Any = None, *, qid: Any = None, weight: Any = None,
                   gain: str = "exponential") -> QueryValues:
    r"""NDCG@k of every query, and the query weights: what :func:`gbrank.metrics.ndcg`
    averages.

    :func:`gbrank.metrics.ndcg` is :math:`\sum_q w_q v_q / \sum_q w_q` (the plain mean
    without weights). NDCG@k is local to a query, so pieces of data that each hold
    whole queries merge exactly by adding their sums :math:`\sum_q w_q v_q` and
    :math:`\sum_q w_q`.

    Parameters
    ----------
    y, s, group, k, label_gain, qid, weight, gain
        As in :func:`gbrank.metrics.ndcg` (validated the same way).

    Returns
    -------
    QueryValues
        ``values`` (NDCG@k per query) and ``weights`` (per query, or ``None``).

    Examples
    --------
    >>> import numpy as np
    >>> from gbrank.metrics import ndcg, ndcg_per_query
    >>> y, s = [2, 0, 1, 0, 1], [0.3, 0.9, 0.1, 0.2, 0.8]
    >>> per_query = ndcg_per_query(y, s, group=[3, 2], k=None)
    >>> [round(v, 4) for v in per_query.values.tolist()]
    [0.659, 1.0]
    >>> float(np.mean(per_query.values)) == ndcg(y, s, group=[3, 2], k=None)
    True
    """
    values, queries = _ndcg_per_query(y, s, group, k, label_gain, qid=qid, weight=weight,
                                      gain=gain)
    return QueryValues(values, queries.weights)


def err_per_query(y: Any, s: Any, group: Any = None, k: int | None = 10,
                  max_grade: int | None = None, *, qid: Any = None,
                  weight: Any = None) -> QueryValues:
    r"""ERR@k of every query, and the query weights: what :func:`gbrank.metrics.err`
    averages.

    :func:`gbrank.metrics.err` is :math:`\sum_q w_q v_q / \sum_q w_q` (the plain mean
    without weights). :math:`g_{\max}` is ``max_grade``, by default the largest label of
    the whole call, as in :func:`gbrank.metrics.err`: pieces of data merge exactly
    only when they share it, so pass ``max_grade`` to compute them apart.

    Parameters
    ----------
    y, s, group, k, max_grade, qid, weight
        As in :func:`gbrank.metrics.err` (validated the same way).

    Returns
    -------
    QueryValues
        ``values`` (ERR@k per query) and ``weights`` (per query, or ``None``).

    Examples
    --------
    >>> import numpy as np
    >>> from gbrank.metrics import err, err_per_query
    >>> y, s = [1, 0, 0, 1], [0.9, 0.1, 0.8, 0.2]
    >>> per_query = err_per_query(y, s, group=[2, 2])  # R(1) = 1/2 at rank 1, then 2
    >>> per_query.values.tolist()
    [0.5, 0.25]
    >>> float(np.mean(per_query.values)) == err(y, s, group=[2, 2])
    True
    """
    values, queries = _err_per_query(y, s, group, k, max_grade, qid=qid, weight=weight)
    return QueryValues(values, queries.weights)


def mean_ap_per_query(y: Any, s: Any, group: Any = None, k: int | None = None,
                      threshold: float = 1, *, qid: Any = None,
                      weight: Any = None) -> QueryValues:
    r"""AP@k of every query, and the query weights: what :func:`gbrank.metrics.mean_ap`
    averages.

    :func:`gbrank.metrics.mean_ap` is :math:`\sum_q w_q v_q / \sum_q w_q` (the plain
    mean without weights); AP@k is local to a query, so pieces of data that each hold
    whole queries merge exactly by adding their sums.

    Parameters
    ----------
    y, s, group, k, threshold, qid, weight
        As in :func:`gbrank.metrics.mean_ap` (validated the same way).

    Returns
    -------
    QueryValues
        ``values`` (AP@k per query; 1 for a query without relevant rows) and
        ``weights`` (per query, or ``None``).

    Examples
    --------
    >>> from gbrank.metrics import mean_ap, mean_ap_per_query
    >>> y, s = [1, 0, 1, 0, 0], [0.9, 0.8, 0.7, 0.2, 0.1]
    >>> per_query = mean_ap_per_query(y, s, group=[3, 2])  # (1/1 + 2/3) / 2; no relevant
    >>> [round(v, 4) for v in per_query.values.tolist()]
    [0.8333, 1.0]
    """
    values, queries = _ap_per_query(y, s, group, k, threshold, qid=qid, weight=weight)
    return QueryValues(values, queries.weights)


def mrr_per_query(y: Any, s: Any, group: Any = None, k: int | None = None,
                  threshold: float = 1, *, qid: Any = None,
                  weight: Any = None) -> QueryValues:
    r"""Reciprocal rank of every query, and the query weights: what
    :func:`gbrank.metrics.mrr` averages.

    A query's value is :math:`1/r` of its first relevant row when :math:`r \le k`, else
    0; :func:`gbrank.metrics.mrr` is :math:`\sum_q w_q v_q / \sum_q w_q` (the plain
    mean without weights), so pieces of data that each hold whole queries merge exactly
    by adding their sums.

    Parameters
    ----------
    y, s, group, k, threshold, qid, weight
        As in :func:`gbrank.metrics.mrr` (validated the same way).

    Returns
    -------
    QueryValues
        ``values`` (reciprocal rank per query) and ``weights`` (per query, or ``None``).

    Examples
    --------
    >>> from gbrank.metrics import mrr_per_query
    >>> y, s = [0, 1, 0, 0, 1], [0.9, 0.8, 0.1, 0.5, 0.2]
    >>> mrr_per_query(y, s, qid=[4, 4, 4, 9, 9]).values.tolist()  # ascending qid order
    [0.5, 0.5]
    >>> mrr_per_query(y, s, group=[3, 2], weight=[2.0, 1.0]).weights.tolist()
    [2.0, 1.0]
    """
    values, queries = _rr_per_query(y, s, group, k, threshold, qid=qid, weight=weight)
    return QueryValues(values, queries.weights)


def pair_counts(y: Any, s: Any, group: Any = None, *, qid: Any = None,
                weight: Any = None) -> PairCounts:
    r"""Per query, the correctly ordered pairs and all differently-labelled pairs: what
    :func:`gbrank.metrics.pair_accuracy` pools.

    :func:`gbrank.metrics.pair_accuracy` is
    :math:`\sum_q w_q (C_q + T_q/2) / \sum_q w_q P_q` (1 when the denominator is 0).
    Pieces of data that each hold whole queries merge exactly by adding both sums.

    Parameters
    ----------
    y, s, group, qid, weight
        As in :func:`gbrank.metrics.pair_accuracy` (validated the same way).

    Returns
    -------
    PairCounts
        ``good`` (:math:`C_q + T_q/2`), ``pairs`` (:math:`P_q`) and ``weights`` (per
        query, or ``None``).

    Examples
    --------
    >>> import numpy as np
    >>> from gbrank.metrics import pair_accuracy, pair_counts
    >>> y, s = [2, 0, 1, 0, 1], [0.3, 0.9, 0.1, 0.2, 0.2]
    >>> counts = pair_counts(y, s, group=[3, 2])
    >>> counts.good.tolist(), counts.pairs.tolist()
    ([1.0, 0.5], [3.0, 1.0])
    >>> float(np.sum(counts.good) / np.sum(counts.pairs)) == pair_accuracy(y, s, group=[3, 2])
    True
    """
    good, pairs, queries = _pair_counts(y, s, group, qid=qid, weight=weight)
    return PairCounts(good, pairs, queries.weights)


def confusion_counts(y: Any, s: Any, threshold: float | None = None, *, weight: Any = None,
                     margin: bool = False) -> ConfusionCounts:
    r"""Confusion counts of the prediction ``s > threshold``: what
    :func:`gbrank.metrics.fbeta`, :func:`gbrank.metrics.f1` and
    :func:`gbrank.metrics.balanced_measure` are computed from.

    With :math:`a, b, c` = TP, FP, FN,
    :math:`F_\beta = (1+\beta^2)a / ((1+\beta^2)a + b + \beta^2 c)` (1 when
    :math:`a + b + c = 0`). Counts of disjoint pieces of the rows add up to those of
    the whole.

    Parameters
    ----------
    y, s, threshold, weight, margin
        As in :func:`gbrank.metrics.fbeta` (validated the same way: probabilities by
        default, cut at 0.5; raw margins with ``margin=True``, cut at 0).

    Returns
    -------
    ConfusionCounts
        ``tp``, ``fp``, ``fn``, ``tn`` (weighted sums when ``weight`` is given).

    Examples
    --------
    >>> from gbrank.metrics import confusion_counts, f1
    >>> y, s = [1, 0, 1, 1, 0], [0.8, 0.3, -0.2, 1.5, -1.0]
    >>> tp, fp, fn, tn = confusion_counts(y, s, margin=True)
    >>> tp, fp, fn, tn
    (2.0, 1.0, 1.0, 1.0)
    >>> 2 * tp / (2 * tp + fp + fn) == f1(y, s, margin=True)
    True
    """
    return ConfusionCounts(*_counts(y, s, threshold, weight, margin))
