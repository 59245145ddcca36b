"""Query structure: query sizes or per-row query ids turned into a :class:`Queries`
description (offsets, the order that makes queries contiguous, query weights), checked
once; gbrank's one rule for gathering the rows of a query id; ranking input validated
with its query structure."""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

import numpy as np

from gbrank._validation import (
    MAX_EXACT_GRADE,
    _check_weight_values,
    _to_numpy,
    as_float_array,
    check_finite,
    check_grades,
    check_lengths,
)

__all__ = ["Queries", "check_declared_queries", "id_like_names", "prepare_ranking",
           "query_order", "query_structure"]


@dataclass(frozen=True)
class Queries:
    """Query structure of a data set after validation.

    Attributes
    ----------
    offsets : ndarray of int64, shape (n_queries + 1,)
        Query ``q`` holds rows ``offsets[q]:offsets[q + 1]`` (after ``order``).
    order : ndarray of int32 or None
        Row permutation that makes queries contiguous (per-row ``qid`` whose queries
        are not contiguous); ``None`` when each query's rows are already contiguous.
    weights : ndarray of float64 or None
        One weight per query, or ``None`` for unweighted.
    """

    offsets: np.ndarray
    order: np.ndarray | None = None
    weights: np.ndarray | None = None

    @property
    def n_queries(self) -> int:
        return len(self.offsets) - 1

    @property
    def n_rows(self) -> int:
        return int(self.offsets[-1])

    @property
    def sizes(self) -> np.ndarray:
        return np.diff(self.offsets)

    def apply(self, a: np.ndarray) -> np.ndarray:
        """Put a per-row array into query order."""
        return a if self.order is None else np.ascontiguousarray(a[self.order])

    def restore(self, a: np.ndarray, into: np.ndarray | None = None) -> np.ndarray:
        """Undo :meth:`apply` on a per-row result (gradients, per-row values).

        ``into``: an array of ``a``'s size and dtype that is no longer needed (the
        permuted copy of an input, after the kernel), written instead of a new one.
        """
        if self.order is None:
            return a
        out = np.empty_like(a) if into is None else into
        out[self.order] = a
        return out


def _group_offsets(group: Any, n: int) -> np.ndarray:
    g = _to_numpy(group)
    if g.ndim != 1:
        raise ValueError(f"group must be 1-D query sizes, got shape {g.shape}")
    if g.size == 0:
        raise ValueError("group is empty")
    if g.dtype.kind == "f":
        if not np.all(np.isfinite(g)) or np.any(g != np.floor(g)):
            raise ValueError("group sizes must be integers")
    elif g.dtype.kind not in "iub":
        raise ValueError(f"group sizes must be integers, got dtype {g.dtype}")
    g = g.astype(np.int64)
    if g.size == n and n > 1:
        if np.all(g == 1):  # sizes of n one-row queries, or the ids of one query
            raise ValueError(
                f"group is {n} ones: as query sizes (LightGBM's group) every row is a "
                "query of its own, with no pair to rank (every pairwise gradient 0; NDCG "
                "and MAP 1 by their rule), which more often means per-row ids of one "
                "query. If they are per-row query ids, pass them as qid=; if all rows are "
                "one query, pass group=[n_rows] (or declare group-less ranking); if every "
                "row really is its own query, there is nothing to rank: per-row metrics "
                "and objectives (gbrank.metrics.log_loss, FocalLoss) take such data "
                "without a group")
        raise ValueError(
            f"group has one entry per row ({n}): group takes query sizes (LightGBM's "
            "group), so these look like per-row query ids — pass them as qid= instead")
    nonpos = np.flatnonzero(g <= 0)
    if nonpos.size:
        raise ValueError(
            f"group sizes must be positive; {nonpos.size} are not (first at query "
            f"{nonpos[0]}: {g[nonpos[0]]})"
        )
    total = int(g.sum())
    if total != n:
        raise ValueError(f"group sizes sum to {total} but there are {n} rows")
    offsets = np.zeros(g.size + 1, dtype=np.int64)
    np.cumsum(g, out=offsets[1:])
    return offsets


def _qid_structure(qid: Any, n: int) -> tuple[np.ndarray, np.ndarray | None,
                                               np.ndarray | None]:
    """``(offsets, order, run_of_rank)`` from per-row query ids.

    Rows of each query contiguous (the usual case, ids in any order): no permutation;
    ``run_of_rank[k]`` is the run holding the k-th smallest id when the runs are not
    ascending (per-query weights come in ascending-id order). Otherwise ``order``
    (int32) is the stable permutation into ascending-id order; its offsets are found
    without a sorted copy of the ids."""
    q = _to_numpy(qid)
    if q.ndim != 1:
        raise ValueError(f"qid must be 1-D, got shape {q.shape}")
    if q.size != n:
        raise ValueError(f"qid has {q.size} entries but there are {n} rows")
    if q.dtype.kind == "f" and not np.all(np.isfinite(q)):
        # NaN != NaN: each NaN row would silently become a query of its own.
        bad = np.flatnonzero(~np.isfinite(q))
        raise ValueError(f"qid must be finite: {bad.size} NaN/inf ids, first at row "
                         f"{int(bad[0])}")
    if q.size <= 1:
        return np.array([0, q.size], dtype=np.int64), None, None
    starts = np.flatnonzero(q[1:] != q[:-1]) + 1  # where runs of equal ids begin
    if np.all(q[1:] >= q[:-1]):  # ascending ids: the runs are the queries
        return np.concatenate(([0], starts, [n])).astype(np.int64), None, None
    if starts.size < max(n // 8, 4096):
        # Few runs (their arrays are small beside the rows): is every query one run?
        offsets = np.concatenate(([0], starts, [n])).astype(np.int64)
        run_ids = q[offsets[:-1]]
        run_of_rank = np.argsort(run_ids, kind="stable")
        ranked = run_ids[run_of_rank]
        if np.all(ranked[1:] != ranked[:-1]):
            return offsets, None, run_of_rank
    del starts
    # A query split over several runs: permute rows into ascending-id order. Stable:
    # rows of a query keep their relative order (the tie rule needs it).
    order = np.argsort(q, kind="stable").astype(np.int32)
    change = np.zeros(n, dtype=np.bool_)
    step = 1 << 20  # boundaries a block at a time: no sorted copy of the ids
    for a in range(1, n, step):
        b = min(n, a + step)
        change[a:b] = q[order[a:b]] != q[order[a - 1:b - 1]]
    starts = np.flatnonzero(change)
    return np.concatenate(([0], starts, [n])).astype(np.int64), order, None


def check_declared_queries(n_queries: int | None, groupless: bool, metric: str, where: str,
                           ids: str, declare: str) -> None:
    """The metric adapters' rule (``feval``, ``custom_metric``, ``make_scorer``) for
    evaluation data whose query ids may have been left out, where one list of every row
    would be a plausible wrong number.

    ``n_queries``: the queries the data carries (``None``: no query structure). Without
    ``groupless`` such data is refused, naming both fixes (``ids``: how to pass them;
    ``declare``: the call that declares all rows one query); with it, data of several
    queries is refused. ``where`` names the data in the message.
    """
    if groupless:
        if n_queries is not None and n_queries > 1:
            raise ValueError(
                f"{declare} declares all rows one query, but {where} has {n_queries} "
                f"queries: leave groupless out to judge {metric} per query")
    elif n_queries is None:
        raise ValueError(
            f"{metric} judges rankings per query, and {where} has no query structure: "
            f"{ids}, or declare all rows one query with {declare}")


def query_structure(n: int, group: Any = None, qid: Any = None,
                    weight: Any = None) -> Queries:
    """Query offsets from sizes (``group``), per-row ids (``qid``) or neither.

    ``group=None`` and ``qid=None`` means group-less: all rows form one query.
    ``weight`` is per query (length ``n_queries``) or per row (length ``n``, the first
    row's weight of each query is used, as LightGBM does).
    """
    if group is not None and qid is not None:
        raise ValueError("pass either group (query sizes) or qid (per-row ids), not both")
    order = run_of_rank = None
    if qid is not None:
        offsets, order, run_of_rank = _qid_structure(qid, n)
    elif group is not None:
        offsets = _group_offsets(group, n)
    else:
        offsets = np.array([0, n], dtype=np.int64)
    weights = None
    if weight is not None:
        w = as_float_array(weight, "weight")
        nq = len(offsets) - 1
        if w.size == n:
            w = w[order] if order is not None else w
            first = w[offsets[:-1]]
            # Ranking weights belong to queries. LightGBM's metrics average row weights
            # and its objectives use each row's own: the two agree only when weights are
            # constant within a query, so anything else is refused rather than guessed.
            varies = np.flatnonzero(w != np.repeat(first, np.diff(offsets)))
            if varies.size:
                q = int(np.searchsorted(offsets, varies[0], side="right") - 1)
                raise ValueError(
                    f"weights are per query here, but rows of query {q} have different "
                    f"weights ({float(first[q])} and {float(w[varies[0]])} at row "
                    f"{varies[0]}); pass one weight per query or a per-row weight constant "
                    "within each query"
                )
            w = np.ascontiguousarray(first)
        elif w.size != nq:
            raise ValueError(
                f"weight has {w.size} entries; expected one per query ({nq}) or per row ({n})"
            )
        elif run_of_rank is not None:
            # One weight per query in ascending-id order; the queries here are in row
            # order.
            per_run = np.empty_like(w)
            per_run[run_of_rank] = w
            w = per_run
        _check_weight_values(w, "weights")
        weights = w
    return Queries(offsets=offsets, order=order, weights=weights)


def query_order(qid: Any) -> np.ndarray:
    """The rows gathered by query: ascending query id, each query's rows in their given
    order (a stable sort). The one gathering rule of gbrank's estimators and loaders, so
    that the same rows in any order of queries train the same model."""
    q = _to_numpy(qid)
    if q.ndim != 1:
        raise ValueError(f"qid must be 1-D, got shape {q.shape}")
    if q.dtype.kind == "f" and not np.all(np.isfinite(q)):
        bad = np.flatnonzero(~np.isfinite(q))
        raise ValueError(f"qid must be finite: {bad.size} NaN/inf ids, first at row "
                         f"{int(bad[0])}")
    try:
        return np.argsort(q, kind="stable")
    except TypeError:
        raise ValueError("qid holds ids that cannot be ordered (mixed types, e.g. numbers "
                         "and strings): use ids of one type") from None


# Column names that hold query ids in the ecosystem's data (LETOR's qid, session logs,
# Expedia's srch_id, ...), named in the errors when a ranking entry point gets no ids.
_ID_LIKE = re.compile(r"^((q|qid|query|queries|session|sessions|group|groups|search|srch|"
                      r"request|req|list|impression|serp)([_ ]?ids?)?|topics?[_ ]?ids?)$",
                      re.IGNORECASE)


def id_like_names(names: Any, skip: Any = None) -> list[str]:
    """The names among ``names`` (a table's columns) that look like query ids, but
    ``skip``."""
    return [str(c) for c in names if str(c) != str(skip) and _ID_LIKE.match(str(c).strip())]


def prepare_ranking(y: Any, s: Any, group: Any = None, qid: Any = None, weight: Any = None,
                    *, integer_grades: bool = True,
                    max_grade: int | None = MAX_EXACT_GRADE,
                    max_grade_reason: str | None = None,
                    ) -> tuple[np.ndarray, np.ndarray, Queries]:
    """Validate ranking input; return ``(y, s, queries)`` with rows in query order.

    ``max_grade`` bounds the labels (``max_grade_reason`` explains the bound in the
    error: a ``label_gain`` length, an ERR ``max_grade``)."""
    y = as_float_array(y, "labels")
    s = as_float_array(s, "scores")
    check_lengths(y, s)
    # Metrics run this on every boosting round: one fused numba pass when all is well
    # (cheaper than the separate NumPy checks; figures in docs/evidence.md), the NumPy
    # checks to name the problem.
    from gbrank._kernels._checks import ranking_rows_ok

    if not ranking_rows_ok(y, s, integer_grades,
                           np.inf if max_grade is None else float(max_grade)):
        check_finite(s, "scores")
        check_finite(y, "labels")
        check_grades(y, integer=integer_grades, max_grade=max_grade,
                     max_grade_reason=max_grade_reason)
    queries = query_structure(y.size, group=group, qid=qid, weight=weight)
    return queries.apply(y), queries.apply(s), queries


def _mix(x: np.ndarray) -> np.ndarray:
    """MurmurHash3's 64-bit finaliser, elementwise (wrapping uint64 arithmetic)."""
    x = x.copy()
    x ^= x >> np.uint64(33)
    x *= np.uint64(0xFF51AFD7ED558CCD)
    x ^= x >> np.uint64(33)
    x *= np.uint64(0xC4CEB9FE1A85EC53)
    x ^= x >> np.uint64(33)
    return x


def _value_bits(a: np.ndarray) -> np.ndarray:
    """The bits of float64 values, one NaN for every NaN and 0.0 for -0.0."""
    a = np.where(np.isnan(a), np.nan, np.asarray(a, dtype=np.float64)) + 0.0
    return np.ascontiguousarray(a).view(np.uint64)


def row_hash(X: Any, y: Any, rows: int = 8192) -> np.ndarray:
    """A pseudo-random uint64 of each row's feature values and label: the wrapping sum,
    over its non-zero values, of a hash of (column, value bits), hashed with the label.
    Exact bits, so a dense array in any memory layout, its CSR matrix and a DataFrame of
    its numeric columns give the same keys."""
    n = len(y)
    acc = np.zeros(n, dtype=np.uint64)
    with np.errstate(over="ignore"):
        if hasattr(X, "tocsr"):
            X = X.tocsr()
            X.sum_duplicates()
            for i in range(0, n, rows):  # in blocks: a few copies of a block's values
                lo, hi = X.indptr[i], X.indptr[min(i + rows, n)]
                data = X.data[lo:hi]
                h = _mix(_value_bits(data) ^ _mix(X.indices[lo:hi].astype(np.uint64)
                                                  + np.uint64(0x9E3779B97F4A7C15)))
                h[data == 0] = 0
                np.add.at(acc, i + np.repeat(np.arange(min(rows, n - i)),
                                             np.diff(X.indptr[i:i + rows + 1])), h)
        else:
            if hasattr(X, "select_dtypes"):  # a DataFrame: numbers, and categories' codes
                numeric = set(X.select_dtypes(include=["number", "bool"]).columns)
                X = np.column_stack(
                    [X[c].cat.codes.to_numpy(np.float64) if str(X[c].dtype) == "category"
                     else X[c].to_numpy(np.float64) for c in X.columns
                     if str(X[c].dtype) == "category" or c in numeric]
                    or [np.zeros(len(X))])
            X = np.asarray(X)
            col = _mix(np.arange(X.shape[1], dtype=np.uint64) + np.uint64(0x9E3779B97F4A7C15))
            for i in range(0, n, rows):
                part = np.asarray(X[i:i + rows], dtype=np.float64)
                h = _mix(_value_bits(part) ^ col)
                h[part == 0] = 0
                acc[i:i + rows] = h.sum(axis=1, dtype=np.uint64)
        return _mix(acc ^ _mix(_value_bits(np.asarray(y, dtype=np.float64))))


def tie_order(X: Any, y: Any, sizes: Any = None) -> np.ndarray:
    """The rows of each query (contiguous, of the given sizes; ``None``: one query) in
    the order of :func:`row_hash`: the order in which a validation or test part is
    judged. Every ranking metric breaks a tie of scores by row order (LightGBM's rule),
    so data whose rows are sorted by grade within each query (a common export) let a
    model that scores a query's rows alike rank them perfectly; in a hash of the rows'
    values no order of the data can score, and the same rows in any order are judged
    alike."""
    n = len(y)
    query = (np.zeros(n, dtype=np.int64) if sizes is None
             else np.repeat(np.arange(np.size(sizes)), sizes))
    return np.lexsort((tie_keys(row_hash(X, y), query), query))


def tie_keys(hashes: np.ndarray, query: np.ndarray) -> np.ndarray:
    """Row hashes mixed with their query's index: rows alike in every value but the
    grade would otherwise meet in one grade order in every query."""
    with np.errstate(over="ignore"):
        return _mix(hashes ^ _mix(np.asarray(query).astype(np.uint64)
                                  + np.uint64(0x632BE59BD9B4E019)))
