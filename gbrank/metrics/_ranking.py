"""Ranking metrics: validate once, run a per-query numba kernel, average over queries.

Every function takes the query structure as ``group`` (sizes, LightGBM style) or
``qid=`` (per-row ids, any order; rows of a query keep their relative order), or
neither (group-less: all rows are one query). ``weight`` is per query, or per row
(the first row of each query counts, as LightGBM does). The result is the
query-weighted mean of the per-query values.

Rank positions come from sorting scores descending with ties broken by row order
within the query (a stable sort, LightGBM's rule).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from gbrank._kernels.average_precision import average_precision_per_query
from gbrank._kernels.err import err_per_query
from gbrank._kernels.ndcg import ndcg_per_query
from gbrank._kernels.pair_accuracy import pair_counts_per_query
from gbrank._kernels.precision_recall import hits_at_k
from gbrank._kernels.reciprocal_rank import reciprocal_rank_per_query
from gbrank._queries import Queries, prepare_ranking
from gbrank._validation import (
    MAX_EXACT_GRADE,
    check_choice,
    check_integer,
    check_label_gain,
    check_threshold,
)

__all__ = ["ndcg", "err", "mean_ap", "mrr", "precision_at_k", "recall_at_k", "pair_accuracy"]

_ALL_ROWS = 0  # kernels read k <= 0 as "every row of the query"


def _check_k(k: Any) -> int:
    k = check_integer(k, "k", 1, allow_none=True)  # None: every row of the query
    return _ALL_ROWS if k is None else k


def _mean(values: np.ndarray, queries: Queries) -> float:
    if queries.weights is None:
        return float(np.mean(values))
    w = queries.weights
    return float(np.dot(w, values) / np.sum(w))


def _gain_table(label_gain: Any, gain: str) -> tuple[np.ndarray, bool]:
    check_choice(gain, "gain", ("exponential", "linear"))
    if label_gain is not None:
        if gain == "linear":
            raise ValueError("pass either label_gain or gain='linear', not both")
        return check_label_gain(label_gain), False
    if gain == "linear":
        return np.zeros(1), True
    return np.exp2(np.arange(MAX_EXACT_GRADE + 1, dtype=np.float64)) - 1.0, False


def _ndcg_per_query(y: Any, s: Any, group: Any = None, k: int | None = 10,
                    label_gain: Any = None, *, qid: Any = None, weight: Any = None,
                    gain: str = "exponential") -> tuple[np.ndarray, Queries]:
    kk = _check_k(k)
    table, linear = _gain_table(label_gain, gain)
    if linear:
        y, s, queries = prepare_ranking(y, s, group, qid, weight, integer_grades=False,
                                        max_grade=None)
    elif label_gain is not None:
        y, s, queries = prepare_ranking(
            y, s, group, qid, weight, integer_grades=True, max_grade=table.size - 1,
            max_grade_reason=f"label_gain has only {table.size} entries "
                             f"(grades 0..{table.size - 1})")
    else:
        y, s, queries = prepare_ranking(y, s, group, qid, weight, integer_grades=True,
                                        max_grade=MAX_EXACT_GRADE)
    if not linear:
        # The kernel keeps one count per grade per thread chunk: only grades present.
        table = np.ascontiguousarray(table[: int(y.max()) + 1])
    depth = int(np.max(queries.sizes))
    depth = depth if kk == _ALL_ROWS else min(kk, depth)
    discount = 1.0 / np.log2(np.arange(2, depth + 2, dtype=np.float64))
    return ndcg_per_query(y, s, queries.offsets, kk, table, linear, discount), queries


def ndcg(y: Any, s: Any, group: Any = None, k: int | None = 10, label_gain: Any = None, *,
         qid: Any = None, weight: Any = None, gain: str = "exponential") -> float:
    r"""Normalised discounted cumulative gain at ``k``, averaged over queries.

    .. math::

        \mathrm{DCG@k} = \sum_{r=1}^{\min(k, n)} \frac{\mathrm{gain}(l_r)}{\log_2(r + 1)},
        \qquad \mathrm{NDCG@k} = \mathrm{DCG@k} / \mathrm{IDCG@k}

    with :math:`l_r` the label at rank :math:`r` of the scores sorted descending (ties
    by row order) and IDCG the DCG of the labels sorted descending. A query whose
    IDCG is 0 (no relevant row) scores 1, as in LightGBM, and counts with its weight
    (LightGBM's weighted ``ndcg@k`` adds it unweighted: ``docs/contract.md`` §3).

    Parameters
    ----------
    y : array-like of shape (n,)
        Non-negative grades. Integers for the default gain and for ``label_gain``.
    s : array-like of shape (n,)
        Scores (any monotone transform gives the same value).
    group : array-like of int, optional
        Query sizes in row order. ``None`` (and no ``qid``): all rows are one query.
    k : int or None, default 10
        Cut-off; ``None`` means every row of the query.
    label_gain : array-like of float, optional
        LightGBM's ``label_gain``: ``gain(l) = label_gain[l]``. The ideal ranking still
        sorts labels, not gains, as LightGBM does.
    qid : array-like, optional
        Per-row query ids instead of ``group``.
    weight : array-like, optional
        Per-query weights, or per-row (first row of each query counts).
    gain : {"exponential", "linear"}, default "exponential"
        ``2**l - 1`` (LightGBM, XGBoost) or ``l`` (the gain of scikit-learn's
        ``ndcg_score`` and trec_eval's ``ndcg_cut``; labels may be non-integer). Tied
        scores are still ranked by row order: ``ndcg_score`` averages the gains of
        tied rows (``ignore_ties=False``), so the two agree when no scores tie, and
        an all-zero query scores 1 here, 0 there.

    Returns
    -------
    float
        Query-weighted mean NDCG@k.

    Examples
    --------
    One query of two rows: ranking the relevant row second leaves DCG =
    :math:`1 / \log_2 3` against an ideal of 1.

    >>> from gbrank.metrics import ndcg
    >>> ndcg([1, 0], [0.9, 0.2])
    1.0
    >>> round(ndcg([1, 0], [0.2, 0.9]), 4)
    0.6309

    Two queries, as sizes (``group``) or per-row ids (``qid``), averaged:

    >>> y, s = [2, 0, 1, 0, 1], [0.3, 0.9, 0.1, 0.2, 0.8]
    >>> round(ndcg(y, s, group=[3, 2], k=None), 4)
    0.8295
    >>> round(ndcg(y, s, qid=[7, 7, 7, 3, 3], k=None), 4)
    0.8295
    """
    values, queries = _ndcg_per_query(y, s, group, k, label_gain, qid=qid, weight=weight,
                                      gain=gain)
    return _mean(values, queries)


def _stop_probabilities(max_grade: int) -> np.ndarray:
    g = np.arange(max_grade + 1, dtype=np.float64)
    return (np.exp2(g) - 1.0) / np.exp2(float(max_grade))


def _err_per_query(y: Any, s: Any, group: Any = None, k: int | None = 10,
                   max_grade: int | None = None, *, qid: Any = None,
                   weight: Any = None) -> tuple[np.ndarray, Queries]:
    kk = _check_k(k)
    g_max = check_integer(max_grade, "max_grade", 0, MAX_EXACT_GRADE, allow_none=True)
    y, s, queries = prepare_ranking(
        y, s, group, qid, weight, integer_grades=True,
        max_grade=MAX_EXACT_GRADE if g_max is None else g_max,
        max_grade_reason=None if g_max is None else f"it exceeds max_grade={g_max}")
    if g_max is None:
        g_max = int(y.max())
    return err_per_query(y, s, queries.offsets, kk, _stop_probabilities(g_max)), queries


def err(y: Any, s: Any, group: Any = None, k: int | None = 10, max_grade: int | None = None,
        *, qid: Any = None, weight: Any = None) -> float:
    r"""Expected reciprocal rank at ``k`` (Chapelle et al. 2009), averaged over queries.

    .. math::

        \mathrm{ERR@k} = \sum_{r=1}^{\min(k, n)} \frac{1}{r} R_r \prod_{i<r} (1 - R_i),
        \qquad R(l) = \frac{2^l - 1}{2^{g_{\max}}}

    Unnormalised: a query with only grade-0 rows scores 0.

    Parameters
    ----------
    y, s, group
        As in :func:`ndcg`; grades must be integers (0..53).
    k : int or None, default 10
        Cut-off; ``None`` means every row.
    max_grade : int, optional
        :math:`g_{\max}`. Default: the largest label in ``y`` (the whole call, not per
        query), so values depend on the data passed; fix it to compare across data sets.
        Any integral number counts (``max_grade=y.max()`` of float labels works).
    qid, weight
        As in :func:`ndcg`.

    Returns
    -------
    float

    Examples
    --------
    With :math:`g_{\max} = 1` a relevant row stops the user with probability
    :math:`R(1) = 1/2`: at rank 1 that gives 1/2, at rank 2 :math:`\tfrac12 \cdot
    \tfrac12`.

    >>> from gbrank.metrics import err
    >>> err([1, 0], [0.9, 0.1])
    0.5
    >>> err([0, 1], [0.9, 0.1])
    0.25
    >>> err([0, 1], [0.9, 0.1], max_grade=2)  # R(1) = 1/4
    0.125
    """
    values, queries = _err_per_query(y, s, group, k, max_grade, qid=qid, weight=weight)
    return _mean(values, queries)


def _relevance_input(y: Any, s: Any, group: Any, qid: Any, weight: Any):
    # Relevance is a comparison with a threshold: grades need not be integers.
    return prepare_ranking(y, s, group, qid, weight, integer_grades=False, max_grade=None)


def _ap_per_query(y: Any, s: Any, group: Any = None, k: int | None = None,
                  threshold: float = 1, *, qid: Any = None,
                  weight: Any = None) -> tuple[np.ndarray, Queries]:
    kk = _check_k(k)
    t = check_threshold(threshold)
    y, s, queries = _relevance_input(y, s, group, qid, weight)
    return average_precision_per_query(y, s, queries.offsets, kk, t), queries


def mean_ap(y: Any, s: Any, group: Any = None, k: int | None = None, threshold: float = 1,
            *, qid: Any = None, weight: Any = None) -> float:
    r"""Mean average precision at ``k``, LightGBM's definition.

    Relevant means ``y >= threshold``. With :math:`h_r` the relevant rows among the
    top :math:`r`,

    .. math::

        \mathrm{AP@k} = \frac{\sum_{r \le \min(k,n),\ \mathrm{rel}_r} h_r / r}
                             {\min(\#\mathrm{relevant}, k)}

    and a query without relevant rows scores 1.

    Parameters
    ----------
    y, s, group
        As in :func:`ndcg`; grades need not be integers.
    k : int or None, default None
        Cut-off; ``None`` means every row.
    threshold : float, default 1
        Relevance threshold on the labels (LightGBM: ``label > 0.5``, the same on
        integer grades).
    qid, weight
        As in :func:`ndcg`.

    Returns
    -------
    float

    Examples
    --------
    Relevant rows at ranks 1 and 3: AP = (1/1 + 2/3) / 2.

    >>> from gbrank.metrics import mean_ap
    >>> round(mean_ap([1, 0, 1], [0.9, 0.8, 0.7]), 4)
    0.8333
    >>> mean_ap([1, 0, 1], [0.9, 0.8, 0.7], k=2)  # (1/1) / min(2, 2)
    0.5
    """
    values, queries = _ap_per_query(y, s, group, k, threshold, qid=qid, weight=weight)
    return _mean(values, queries)


def _rr_per_query(y: Any, s: Any, group: Any = None, k: int | None = None,
                  threshold: float = 1, *, qid: Any = None,
                  weight: Any = None) -> tuple[np.ndarray, Queries]:
    kk = _check_k(k)
    t = check_threshold(threshold)
    y, s, queries = _relevance_input(y, s, group, qid, weight)
    return reciprocal_rank_per_query(y, s, queries.offsets, kk, t), queries


def mrr(y: Any, s: Any, group: Any = None, k: int | None = None, threshold: float = 1, *,
        qid: Any = None, weight: Any = None) -> float:
    r"""Mean reciprocal rank: :math:`1/r` of the first relevant row (``y >= threshold``) if
    :math:`r \le k`, else 0 (also 0 for a query without relevant rows).

    O(n) per query: the rank of the first relevant row is counted, not sorted for.

    Parameters
    ----------
    y, s, group
        As in :func:`ndcg`; grades need not be integers.
    k : int or None, default None
        Cut-off; ``None`` means every row.
    threshold : float, default 1
        Relevance threshold on the labels.
    qid, weight
        As in :func:`ndcg`.

    Returns
    -------
    float

    Examples
    --------
    >>> from gbrank.metrics import mrr
    >>> mrr([0, 1, 0], [0.9, 0.8, 0.1])  # first relevant row at rank 2
    0.5
    >>> mrr([0, 1, 0, 1, 0], [0.9, 0.8, 0.1, 0.5, 0.2], group=[3, 2])  # (1/2 + 1) / 2
    0.75
    """
    values, queries = _rr_per_query(y, s, group, k, threshold, qid=qid, weight=weight)
    return _mean(values, queries)


def _hits(y: Any, s: Any, group: Any, k: int | None, threshold: float, qid: Any,
          weight: Any):
    kk = _check_k(k)
    t = check_threshold(threshold)
    y, s, queries = _relevance_input(y, s, group, qid, weight)
    hits, npos, depth = hits_at_k(y, s, queries.offsets, kk, t)
    return hits, npos, depth, queries


def _precision_per_query(y: Any, s: Any, group: Any = None, k: int | None = 10,
                         threshold: float = 1, *, qid: Any = None,
                         weight: Any = None) -> tuple[np.ndarray, Queries]:
    hits, _, depth, queries = _hits(y, s, group, k, threshold, qid, weight)
    return hits / depth, queries


def precision_at_k(y: Any, s: Any, group: Any = None, k: int | None = 10,
                   threshold: float = 1, *, qid: Any = None, weight: Any = None) -> float:
    r"""Precision at ``k``: relevant rows among the top :math:`\min(k, n)`, divided by
    :math:`\min(k, n)` (as XGBoost's ``pre@k``; trec_eval's ``P_k`` divides by ``k``
    and so penalises queries shorter than ``k``).

    Parameters
    ----------
    y, s, group
        As in :func:`ndcg`; grades need not be integers.
    k : int or None, default 10
        Cut-off; ``None`` means every row (the share of relevant rows).
    threshold : float, default 1
        Relevance means ``y >= threshold``.
    qid, weight
        As in :func:`ndcg`.

    Returns
    -------
    float

    Examples
    --------
    >>> from gbrank.metrics import precision_at_k
    >>> y, s = [1, 0, 1, 1], [0.9, 0.8, 0.7, 0.1]
    >>> precision_at_k(y, s, k=2)  # 1 relevant row among the top 2
    0.5
    >>> precision_at_k(y, s, k=10)  # min(k, n) = 4 rows: 3 of them relevant
    0.75
    """
    values, queries = _precision_per_query(y, s, group, k, threshold, qid=qid, weight=weight)
    return _mean(values, queries)


def _recall_per_query(y: Any, s: Any, group: Any = None, k: int | None = 10,
                      threshold: float = 1, *, qid: Any = None,
                      weight: Any = None) -> tuple[np.ndarray, Queries]:
    hits, npos, _, queries = _hits(y, s, group, k, threshold, qid, weight)
    values = np.ones_like(hits)
    has = npos > 0
    values[has] = hits[has] / npos[has]
    return values, queries


def recall_at_k(y: Any, s: Any, group: Any = None, k: int | None = 10, threshold: float = 1,
                *, qid: Any = None, weight: Any = None) -> float:
    r"""Recall at ``k``: relevant rows among the top :math:`\min(k, n)` divided by all
    relevant rows of the query; a query without relevant rows scores 1 (nothing to
    find, as MAP and NDCG do).

    Parameters
    ----------
    y, s, group
        As in :func:`ndcg`; grades need not be integers.
    k : int or None, default 10
        Cut-off; ``None`` means every row (recall 1).
    threshold : float, default 1
        Relevance means ``y >= threshold``.
    qid, weight
        As in :func:`ndcg`.

    Returns
    -------
    float

    Examples
    --------
    >>> from gbrank.metrics import recall_at_k
    >>> y, s = [1, 0, 1, 1], [0.9, 0.8, 0.7, 0.1]
    >>> round(recall_at_k(y, s, k=2), 4)  # 1 of the 3 relevant rows in the top 2
    0.3333
    >>> round(recall_at_k(y, s, k=3), 4)
    0.6667
    """
    values, queries = _recall_per_query(y, s, group, k, threshold, qid=qid, weight=weight)
    return _mean(values, queries)


def _pair_counts(y: Any, s: Any, group: Any = None, *, qid: Any = None,
                 weight: Any = None) -> tuple[np.ndarray, np.ndarray, Queries]:
    y, s, queries = _relevance_input(y, s, group, qid, weight)
    good, pairs = pair_counts_per_query(y, s, queries.offsets)
    return good, pairs, queries


def pair_accuracy(y: Any, s: Any, group: Any = None, *, qid: Any = None,
                  weight: Any = None) -> float:
    r"""Share of correctly ordered pairs, pooled over queries.

    Over pairs :math:`(i, j)` of one query with :math:`l_i \ne l_j`, a pair counts 1
    when :math:`(s_i - s_j)(l_i - l_j) > 0` and 1/2 when :math:`s_i = s_j`:

    .. math::

        \mathrm{PA} = \frac{\sum_q w_q (C_q + T_q / 2)}{\sum_q w_q P_q}

    (:math:`C_q` concordant, :math:`T_q` score-tied, :math:`P_q` all pairs with
    different labels in query :math:`q`). Pairs are pooled, not averaged per query.
    Exact in O(n log n) per query (two sorts and a Fenwick tree), so group-less data
    with millions of rows is fine. Data without any differently-labelled pair
    scores 1 (nothing to order).

    Parameters
    ----------
    y, s, group, qid, weight
        As in :func:`ndcg`; labels need only be ordered (non-integer allowed).

    Returns
    -------
    float

    Examples
    --------
    Three rows, three differently-labelled pairs: (2, 1) and (2, 0) are ordered
    correctly, (1, 0) is not; a score tie counts 1/2.

    >>> from gbrank.metrics import pair_accuracy
    >>> round(pair_accuracy([2, 1, 0], [0.9, 0.1, 0.5]), 4)
    0.6667
    >>> round(pair_accuracy([2, 1, 0], [0.9, 0.5, 0.5]), 4)  # (1 + 1 + 1/2) / 3
    0.8333
    """
    good, pairs, queries = _pair_counts(y, s, group, qid=qid, weight=weight)
    if queries.weights is not None:
        good = good * queries.weights
        pairs = pairs * queries.weights
    den = float(np.sum(pairs))
    return 1.0 if den == 0.0 else float(np.sum(good)) / den
