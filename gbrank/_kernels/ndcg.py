"""NDCG@k per query: DCG of the score ranking over DCG of the label ranking."""

from __future__ import annotations

import numpy as np
from numba import njit, prange

from gbrank._kernels._threads import threaded
from gbrank._kernels._topk import (
    BUFFER_MAX_K,
    full_order_into,
    full_order_needed,
    top_k_into,
    top_k_into_pruned,
)

# Queries are split into this many contiguous chunks; each chunk owns its scratch
# buffers, and the parallel form runs chunks on threads.
N_CHUNKS = 16


# Up to this many grades the ideal DCG counts rows per grade in vectorised passes of
# four grades each, from the top grade down, stopping once k rows are placed (one pass
# for LightGBM's usual 0-4 grades); more grades go through one histogram pass (a
# load-add-store per row, slower per pass).
GRADE_PASSES_MAX = 8


@njit(cache=True, nogil=True, fastmath=True)
def _four_grade_counts(y, a, b, g):
    """Rows of ``y[a:b]`` with grade ``g``, ``g - 1``, ``g - 2`` and ``g - 3``.

    ``fastmath`` lets LLVM split the four sums into vector lanes; the sums are of 0s
    and 1s in float64 (exact below 2**53), so reassociating them changes nothing.
    """
    f0 = float(g)
    f1 = f0 - 1.0
    f2 = f0 - 2.0
    f3 = f0 - 3.0
    c0 = 0.0
    c1 = 0.0
    c2 = 0.0
    c3 = 0.0
    for i in range(a, b):
        v = y[i]
        c0 += 1.0 if v == f0 else 0.0
        c1 += 1.0 if v == f1 else 0.0
        c2 += 1.0 if v == f2 else 0.0
        c3 += 1.0 if v == f3 else 0.0
    return c0, c1, c2, c3


@njit(cache=True, nogil=True, inline="always")
def _ideal_dcg_counted(y, a, b, kk, gain_table, discount, counts):
    """IDCG@kk of integer grades ``y[a:b]`` from the number of rows per grade."""
    n_grades = gain_table.size
    idcg = 0.0
    r = 0
    if n_grades <= GRADE_PASSES_MAX:
        g = n_grades - 1
        while r < kk and g > 0:
            c0, c1, c2, c3 = _four_grade_counts(y, a, b, g)
            # Grades below 1 are left to the end (a pass near the bottom would count
            # grade 0 or nothing as g - 2, g - 3).
            e0 = r + int(c0)
            e1 = e0 + (int(c1) if g > 1 else 0)
            e2 = e1 + (int(c2) if g > 2 else 0)
            e3 = e2 + (int(c3) if g > 3 else 0)
            end = min(e3, kk)
            # The grade at rank rr without a branch per rank; same summation order as
            # placing the rows one by one.
            for rr in range(r, end):
                grade = g - (rr >= e0) - (rr >= e1) - (rr >= e2)
                idcg += gain_table[grade] * discount[rr]
            r = end
            g -= 4
        while r < kk:  # the rest are grade 0 (its gain may be non-zero: label_gain)
            idcg += gain_table[0] * discount[r]
            r += 1
        return idcg
    for i in range(a, b):
        counts[int(y[i])] += 1
    g = n_grades - 1
    while r < kk:
        while counts[g] == 0:
            g -= 1
        take = min(counts[g], kk - r)
        for _ in range(take):
            idcg += gain_table[g] * discount[r]
            r += 1
        g -= 1
    counts[:] = 0  # a few grades: cheaper than a second pass over the rows
    return idcg


@njit(cache=True, nogil=True)
def _ndcg_chunk(y, s, offsets, q0, q1, k, gain_table, linear, sorts, long_sorts, discount,
                out):
    """NDCG@k of queries ``q0 … q1 - 1`` into ``out`` (see :func:`ndcg_per_query`).

    ``linear``, ``sorts`` and ``long_sorts`` are ``None`` or True, so that numba drops
    the code of a ``None`` before typing it: ``linear`` True, gain(l) = l (the ideal
    ranking from the labels' top k; else the counted grades and ``gain_table``);
    ``sorts``, ``long_sorts``: the full sorts of
    :func:`~gbrank._kernels._topk.top_rows_into`, for cut-offs deeper than the
    selection buffer (a cut-off of the whole query within its depth takes the buffer:
    the same stable order)."""
    longest = 0
    for q in range(q0, q1):
        longest = max(longest, offsets[q + 1] - offsets[q])
    buf = np.empty(BUFFER_MAX_K + 1, dtype=np.int64)
    buf_scores = np.empty(BUFFER_MAX_K + 1, dtype=np.float64)
    cand = np.empty(longest, dtype=np.int64)
    cand_scores = np.empty(longest, dtype=np.float64)
    counts = np.zeros(1 if linear is not None else gain_table.size, dtype=np.int64)
    # Scratch of the full sorts (top_rows_into): top rows, keys, rank counts.
    rows = np.empty(longest if sorts is not None else 0, dtype=np.int64)
    keys = np.empty(longest if sorts is not None else 0)
    seen = np.empty(longest if sorts is not None else 0, dtype=np.int64)
    for q in range(q0, q1):
        a = offsets[q]
        b = offsets[q + 1]
        kk = b - a if k <= 0 else min(k, b - a)
        idcg = 0.0
        if linear is not None:
            # The labels' top kk in descending order (the ideal ranking).
            if kk <= BUFFER_MAX_K:
                top_k_into(y, a, b, kk, buf, buf_scores)
                for r in range(kk):
                    idcg += buf_scores[r] * discount[r]
            elif sorts is not None:
                full_order_into(y, a, b, kk, rows, keys, cand, cand_scores, seen,
                                long_sorts)
                for r in range(kk):
                    idcg += y[rows[r]] * discount[r]
        else:
            idcg = _ideal_dcg_counted(y, a, b, kk, gain_table, discount, counts)
        if idcg <= 0.0:
            out[q] = 1.0
            continue
        dcg = 0.0
        if kk <= BUFFER_MAX_K:
            # The scores' top kk in stable descending order: the pruned scan, or the
            # selection buffer over the whole query when kk is all of it.
            if kk < b - a:
                top_k_into_pruned(s, a, b, kk, buf, buf_scores, cand, cand_scores)
            else:
                top_k_into(s, a, b, kk, buf, buf_scores)
            for r in range(kk):
                lab = y[buf[r]]
                if linear is not None:
                    dcg += lab * discount[r]
                else:
                    dcg += gain_table[int(lab)] * discount[r]
        elif sorts is not None:
            full_order_into(s, a, b, kk, rows, keys, cand, cand_scores, seen, long_sorts)
            for r in range(kk):
                lab = y[rows[r]]
                if linear is not None:
                    dcg += lab * discount[r]
                else:
                    dcg += gain_table[int(lab)] * discount[r]
        out[q] = dcg / idcg


@njit(cache=True, nogil=True, parallel=True)
def _ndcg_parallel_kernel(y, s, offsets, k, gain_table, linear, sorts, long_sorts,
                          discount, out):
    nq = offsets.size - 1
    for c in prange(N_CHUNKS):
        _ndcg_chunk(y, s, offsets, c * nq // N_CHUNKS, (c + 1) * nq // N_CHUNKS, k,
                    gain_table, linear, sorts, long_sorts, discount, out)


def _flags(offsets, k, linear):
    """(linear, sorts, long_sorts) as ``None`` or True for the kernels
    (:func:`~gbrank._kernels._topk.full_order_needed`)."""
    return (True if linear else None), *full_order_needed(offsets, k)


def _ndcg_serial(y, s, offsets, k, gain_table, linear, discount, out):
    """:func:`ndcg_per_query` on one thread, into ``out``."""
    _ndcg_chunk(y, s, offsets, 0, offsets.size - 1, int(k), gain_table,
                *_flags(offsets, k, linear), discount, out)


def _ndcg_parallel(y, s, offsets, k, gain_table, linear, discount, out):
    """:func:`ndcg_per_query` with chunks of queries on threads, into ``out``."""
    _ndcg_parallel_kernel(y, s, offsets, int(k), gain_table, *_flags(offsets, k, linear),
                          discount, out)


def ndcg_per_query(y: np.ndarray, s: np.ndarray, offsets: np.ndarray, k: int,
                   gain_table: np.ndarray, linear: bool, discount: np.ndarray) -> np.ndarray:
    """NDCG@k of every query; a query whose ideal DCG is 0 scores 1 (LightGBM's rule).

    ``gain(l) = l`` when ``linear`` else ``gain_table[int(l)]`` (the table covers
    every grade present); ``discount[r]`` is ``1 / log2(r + 2)`` for 0-based rank
    ``r`` (length at least the largest cut-off); ``k <= 0`` means all rows. The
    ideal ranking sorts labels (not gains) descending, as LightGBM does; with integer
    grades it is built by counting rows per grade. Serial below
    :data:`~gbrank._kernels._threads.PARALLEL_MIN_ROWS` rows or with fewer queries
    than chunks, chunks of queries on threads above (the rule of
    :func:`~gbrank._kernels._threads.dispatch`).
    """
    nq = offsets.size - 1
    out = np.empty(nq, dtype=np.float64)
    # Threads work on chunks of whole queries: with fewer queries than chunks (one
    # group-less query) there is nothing to share, so the rows do not count.
    rows = int(y.size) if nq >= N_CHUNKS else 0
    if threaded(rows):
        _ndcg_parallel_kernel(y, s, offsets, int(k), gain_table,
                              *_flags(offsets, k, linear), discount, out)
    else:
        # The serial form is the chunk kernel over all queries (no wrapper compiled).
        _ndcg_chunk(y, s, offsets, 0, nq, int(k), gain_table, *_flags(offsets, k, linear),
                    discount, out)
    return out
