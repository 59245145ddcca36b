"""Exact distributed metrics: per-partition statistics of :mod:`gbrank.metrics`
(:func:`~gbrank.metrics.ndcg_per_query`, :func:`~gbrank.metrics.pair_counts`,
:func:`~gbrank.metrics.confusion_counts`) merged exactly, equal to the single-machine
values."""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from gbrank import metrics
from gbrank._validation import (
    as_float_array,
    check_beta,
    check_bool,
    check_finite,
    check_grades,
    check_integer,
    check_threshold,
)
from gbrank.dask._collections import aligned_parts, as_numpy, compute, lazy
from gbrank.dask._queries import query_runs, raise_straddle

__all__ = ["pair_accuracy", "ndcg", "fbeta", "f1"]


def _ranking_part(y: Any, s: Any, qid: Any, w: Any, kind: str, kw: dict[str, Any]) -> dict:
    """Worker side: sufficient statistics of one partition holding whole queries."""
    runs = query_runs(qid)
    out: dict[str, Any] = {"runs": runs}
    if runs["rows"] == 0:
        out.update(num=0.0, den=0.0)
        return out
    yy, ss, qq = as_numpy(y).ravel(), as_numpy(s).ravel(), as_numpy(qid).ravel()
    ww = None if w is None else as_numpy(w).ravel()
    if kind == "pair_accuracy":
        good, pairs, weights = metrics.pair_counts(yy, ss, qid=qq, weight=ww)
        if weights is not None:
            good, pairs = good * weights, pairs * weights
        out.update(num=float(np.sum(good)), den=float(np.sum(pairs)))
    else:
        values, weights = metrics.ndcg_per_query(yy, ss, qid=qq, weight=ww, **kw)
        if weights is None:
            out.update(num=math.fsum(values), den=float(values.size))
        else:
            out.update(num=math.fsum(values * weights), den=math.fsum(weights))
    return out


def _merge_ranking(y: Any, s: Any, qid: Any, weight: Any, kind: str,
                   kw: dict[str, Any]) -> tuple[float, float]:
    parts = aligned_parts({"y": y, "s": s, "qid": qid, "weight": weight})
    stats = list(compute(*[lazy(_ranking_part)(pt["y"], pt["s"], pt["qid"],
                                               pt.get("weight"), kind, kw)
                           for pt in parts]))
    raise_straddle([st["runs"] for st in stats], contiguous=False)
    return math.fsum(st["num"] for st in stats), math.fsum(st["den"] for st in stats)


# Group-less pair accuracy: scores are cut into buckets by value (equal scores always
# share a bucket), rows are sent to their bucket, and each bucket returns its own exact
# pair counts plus a histogram of label classes. Every pair across two buckets is then
# ordered by the buckets: concordant iff the lower bucket holds the lower label.

def _pa_probe(y: Any, s: Any, n_sample: int) -> tuple[np.ndarray, np.ndarray, int]:
    yy = as_float_array(y, "labels") if np.size(as_numpy(y)) else np.zeros(0)
    ss = as_float_array(s, "scores") if np.size(as_numpy(s)) else np.zeros(0)
    if yy.size != ss.size:
        raise ValueError(f"labels have {yy.size} rows but scores have {ss.size} in a "
                         "partition")
    check_finite(ss, "scores")
    check_finite(yy, "labels")
    check_grades(yy, integer=False, max_grade=None)
    take = np.linspace(0, ss.size - 1, min(n_sample, ss.size)).astype(np.int64)
    sample = np.sort(ss)[take] if ss.size else ss
    return np.unique(yy), sample, int(ss.size)


def _pa_split(y: Any, s: Any, bounds: np.ndarray) -> list[tuple[np.ndarray, np.ndarray]]:
    yy, ss = as_numpy(y).ravel().astype(np.float64), as_numpy(s).ravel().astype(np.float64)
    b = np.searchsorted(bounds, ss, side="right")
    order = np.argsort(b, kind="stable")
    cuts = np.searchsorted(b[order], np.arange(bounds.size + 2))
    return [(yy[order[cuts[i]:cuts[i + 1]]], ss[order[cuts[i]:cuts[i + 1]]])
            for i in range(bounds.size + 1)]


def _pa_bucket(classes: np.ndarray, *pieces: tuple[np.ndarray, np.ndarray],
               ) -> tuple[float, np.ndarray]:
    yy = np.concatenate([p[0] for p in pieces])
    ss = np.concatenate([p[1] for p in pieces])
    hist = np.bincount(np.searchsorted(classes, yy), minlength=classes.size)
    if yy.size < 2:
        return 0.0, hist.astype(np.int64)
    return float(metrics.pair_counts(yy, ss).good[0]), hist.astype(np.int64)


def _pair_accuracy_groupless(y: Any, s: Any) -> float:
    parts = aligned_parts({"y": y, "s": s})
    probes = compute(*[lazy(_pa_probe)(pt["y"], pt["s"], 64) for pt in parts])
    classes = np.unique(np.concatenate([pr[0] for pr in probes]))
    sample = np.sort(np.concatenate([pr[1] for pr in probes]))
    n = sum(pr[2] for pr in probes)
    if n == 0:
        raise ValueError("labels are empty")
    nb = max(1, len(parts))
    bounds = np.unique(np.quantile(sample, np.arange(1, nb) / nb)) if sample.size else \
        np.zeros(0)
    split = [lazy(_pa_split, nout=bounds.size + 1)(pt["y"], pt["s"], bounds)
             for pt in parts]
    buckets = compute(*[lazy(_pa_bucket)(classes, *[sp[b] for sp in split])
                        for b in range(bounds.size + 1)])
    # Exact integers: pairs across buckets, and all differently-labelled pairs.
    below = np.zeros(classes.size + 1, dtype=object)  # rows in lower buckets, per class
    cross = 0
    local = 0.0
    for good, hist in buckets:
        lower_class = np.cumsum(below)[:-1]  # rows below with class < c
        cross += int(sum(int(h) * int(lc) for h, lc in zip(hist, lower_class, strict=True)))
        below[1:] += hist.astype(object)
        local += good
    counts = [int(c) for c in below[1:]]
    pairs = n * (n - 1) // 2 - sum(c * (c - 1) // 2 for c in counts)
    if pairs == 0:
        return 1.0
    return (float(cross) + local) / float(pairs)


def pair_accuracy(y: Any, s: Any, qid: Any = None, *, weight: Any = None) -> float:
    r"""Distributed :func:`gbrank.metrics.pair_accuracy`: the share of correctly ordered
    differently-labelled pairs (score ties count 1/2), pooled, equal to the
    single-machine value.

    With ``qid``, every query must lie in one partition (checked: the error names the
    straddling query); each partition returns its weighted sums of
    :math:`C_q + T_q/2` and :math:`P_q`, which add up exactly.

    With ``qid=None`` (group-less: all rows one query), exact too: scores are cut into
    value buckets (equal scores share one), rows move to their bucket, each bucket counts
    its own pairs and returns a histogram of label classes :math:`H_b`; a pair across
    buckets :math:`b < b'` is concordant iff its lower-scored row has the lower label, so
    :math:`C = \sum_b C_b + \sum_{b' > b} \sum_{c < c'} H_b[c]\,H_{b'}[c']`, in integers.

    Parameters
    ----------
    y, s : dask Array or Series
        Labels and scores, partitioned alike.
    qid : dask Array or Series, optional
        Per-row query ids, partitioned alike.
    weight : dask Array or Series, optional
        Per-row weights, constant inside a query (needs ``qid``).

    Returns
    -------
    float
        Identical to the single-machine value (weighted: to rounding, ≤ 1e-12).

    Examples
    --------
    >>> import dask.array as da
    >>> import numpy as np
    >>> from gbrank import metrics
    >>> from gbrank.dask import pair_accuracy
    >>> y, s = np.array([2.0, 0, 1, 0, 1, 1]), np.array([0.3, 0.9, 0.1, 0.2, 0.8, 0.5])
    >>> qid = np.array([0, 0, 0, 1, 1, 1])
    >>> Y, S, Q = (da.from_array(a, chunks=3) for a in (y, s, qid))
    >>> pair_accuracy(Y, S, Q), metrics.pair_accuracy(y, s, qid=qid)
    (0.6, 0.6)
    >>> pair_accuracy(Y, S) == metrics.pair_accuracy(y, s)  # group-less
    True
    """
    if qid is None:
        if weight is not None:
            raise ValueError("weight is per query; group-less data is one query, so a "
                             "weight changes nothing: pass weight=None")
        return _pair_accuracy_groupless(y, s)
    num, den = _merge_ranking(y, s, qid, weight, "pair_accuracy", {})
    return 1.0 if den == 0.0 else num / den


def _topk_part(y: Any, s: Any, p: int, k: int, label_gain: Any,
               gain: str) -> tuple[np.ndarray, ...]:
    """Worker side: the k best-scored rows (ties by row order) and the k best labels."""
    yy, ss = as_numpy(y).ravel().astype(np.float64), as_numpy(s).ravel().astype(np.float64)
    if yy.size:
        # Every row is checked as on one machine (NaN, grades), not only the candidates.
        metrics.ndcg(yy, ss, None, k=k, label_gain=label_gain, gain=gain)
    pos = np.arange(yy.size, dtype=np.int64)
    by_score = np.lexsort((pos, -ss))[:k]
    by_label = np.argsort(-yy, kind="stable")[:k]
    keep = np.union1d(by_score, by_label)
    return np.full(keep.size, p, dtype=np.int64), pos[keep], yy[keep], ss[keep]


def ndcg(y: Any, s: Any, qid: Any = None, k: int | None = 10, label_gain: Any = None, *,
         weight: Any = None, gain: str = "exponential") -> float:
    r"""Distributed :func:`gbrank.metrics.ndcg`, equal to the single-machine value.

    With ``qid``, every query must lie in one partition (checked); NDCG@k is local to a
    query, so each partition returns the (weighted) sum of its queries' values and their
    count (weight sum), merged by summation.

    With ``qid=None`` (one query of all rows) and a finite ``k``: each partition sends
    its k best-scored rows (ties by row order) and its k largest labels; the union,
    kept in row order, contains the global top k by score and the k largest labels of
    the data, so NDCG@k of the union is exactly NDCG@k of the data (O(k) per
    partition).

    Parameters
    ----------
    y, s, qid
        As in :func:`pair_accuracy` (dask collections partitioned alike).
    k, label_gain
        As in :func:`gbrank.metrics.ndcg`; ``k=None`` (all rows) needs ``qid``.
    weight
        As in :func:`pair_accuracy`.
    gain
        As in :func:`gbrank.metrics.ndcg`.

    Returns
    -------
    float
        Equal to the single-machine value up to the rounding of the sum over queries
        (≤ 1e-12 relative; group-less: identical).

    Examples
    --------
    >>> import dask.array as da
    >>> import numpy as np
    >>> from gbrank import metrics
    >>> from gbrank.dask import ndcg
    >>> y, s = np.array([2.0, 0, 1, 0, 1, 1]), np.array([0.3, 0.9, 0.1, 0.2, 0.8, 0.5])
    >>> qid = np.array([0, 0, 0, 1, 1, 1])
    >>> Y, S, Q = (da.from_array(a, chunks=3) for a in (y, s, qid))
    >>> round(ndcg(Y, S, Q, k=None), 4), round(metrics.ndcg(y, s, qid=qid, k=None), 4)
    (0.8295, 0.8295)
    >>> ndcg(Y, S, k=3) == metrics.ndcg(y, s, k=3)  # group-less, finite k
    True
    """
    kw = {"k": k, "label_gain": label_gain, "gain": gain}
    if qid is None:
        if k is None:
            raise ValueError("group-less ndcg with k=None ranks every row of the data: "
                             "pass a finite k, or qid")
        kk = check_integer(k, "k", 1)
        parts = aligned_parts({"y": y, "s": s})
        tops = compute(*[lazy(_topk_part)(pt["y"], pt["s"], p, kk, label_gain, gain)
                         for p, pt in enumerate(parts)])
        part, pos, yy, ss = (np.concatenate([t[i] for t in tops]) for i in range(4))
        order = np.lexsort((pos, part))  # row order of the data
        return metrics.ndcg(yy[order], ss[order], None, k=kk, label_gain=label_gain,
                            gain=gain)
    num, den = _merge_ranking(y, s, qid, weight, "ndcg", kw)
    return num / den


def _confusion_part(y: Any, s: Any, w: Any, threshold: float | None,
                    margin: bool) -> tuple[float, ...]:
    """Worker side: (TP, FP, FN, TN) of one partition, validated as on one machine."""
    if np.size(as_numpy(y)) == 0:
        return 0.0, 0.0, 0.0, 0.0
    return metrics.confusion_counts(as_numpy(y), as_numpy(s), threshold, margin=margin,
                                    weight=None if w is None else as_numpy(w))


def fbeta(y: Any, s: Any, beta: float = 1.0, threshold: float | None = None, *,
          weight: Any = None, margin: bool = False) -> float:
    r"""Distributed :func:`gbrank.metrics.fbeta` of ``s > threshold``.

    The confusion counts (weighted sums) of every partition add up to those of the
    whole data: :math:`F_\beta = (1+\beta^2)a / ((1+\beta^2)a + b + \beta^2 c)`, 1 when
    :math:`a + b + c = 0`.

    Parameters
    ----------
    y, s : dask Array or Series
        Labels {0, 1} or {-1, +1} and scores, partitioned alike: probabilities (or
        predicted labels), or with ``margin=True`` raw margins.
    beta, threshold
        As in :func:`gbrank.metrics.fbeta` (``threshold=None``: 0.5 on probabilities, 0
        on margins).
    weight : dask Array or Series, optional
        Row weights, partitioned like ``y`` (counts become weighted sums).
    margin
        As in :func:`gbrank.metrics.fbeta`.

    Returns
    -------
    float
        Identical to the single-machine value (weighted: to rounding).

    Examples
    --------
    >>> import dask.array as da
    >>> import numpy as np
    >>> from gbrank.dask import fbeta
    >>> y = da.from_array(np.array([1.0, 0, 1, 1, 0, 0]), chunks=3)
    >>> p = da.from_array(np.array([0.9, 0.6, 0.45, 0.8, 0.3, 0.55]), chunks=3)
    >>> fbeta(y, p, beta=2)  # a = 2, b = 2, c = 1: 10 / (10 + 2 + 4)
    0.625
    >>> s = da.from_array(np.array([0.8, 0.3, -0.2, 1.5, -1.0, 0.1]), chunks=3)
    >>> fbeta(y, s, beta=2, margin=True)  # the same predictions as margins
    0.625
    """
    b = check_beta(beta)
    t = None if threshold is None else check_threshold(threshold)
    margin = check_bool(margin, "margin")
    parts = aligned_parts({"y": y, "s": s, "weight": weight})
    counts = compute(*[lazy(_confusion_part)(pt["y"], pt["s"], pt.get("weight"), t, margin)
                       for pt in parts])
    tp, fp, fn = (math.fsum(c[i] for c in counts) for i in range(3))
    num = (1.0 + b * b) * tp
    den = num + fp + b * b * fn
    return 1.0 if den == 0.0 else num / den


def f1(y: Any, s: Any, threshold: float | None = None, *, weight: Any = None,
       margin: bool = False) -> float:
    """Distributed :func:`gbrank.metrics.f1` (:func:`fbeta` with β = 1).

    Parameters
    ----------
    y, s, threshold, weight, margin
        As in :func:`fbeta`.

    Returns
    -------
    float

    Examples
    --------
    >>> import dask.array as da
    >>> import numpy as np
    >>> from gbrank.dask import f1
    >>> y = da.from_array(np.array([1.0, 0, 1, 1, 0, 0]), chunks=3)
    >>> s = da.from_array(np.array([0.8, 0.3, -0.2, 1.5, -1.0, 0.1]), chunks=3)
    >>> round(f1(y, s, margin=True), 4)  # margins: a = 2, b = 2, c = 1: 4 / 7
    0.5714
    """
    return fbeta(y, s, 1.0, threshold, weight=weight, margin=margin)
