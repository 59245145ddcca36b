"""Relevant rows among the top k per query (precision@k and recall@k)."""

import numpy as np
from numba import njit

from gbrank._kernels._topk import full_order_needed, top_k_scratch, top_rows_into


@njit(cache=True, nogil=True)
def _hits_at_k(y, s, offsets, k, threshold, sorts, long_sorts):
    """Per query: relevant rows (``y >= threshold``) in the top ``min(k, n)`` (``k <= 0``:
    all rows), the number of relevant rows, and ``min(k, n)``."""
    nq = offsets.size - 1
    hits = np.empty(nq, dtype=np.float64)
    npos = np.empty(nq, dtype=np.float64)
    depth = np.empty(nq, dtype=np.float64)
    idx, val, cand, cand_val, seen = top_k_scratch(offsets)
    for q in range(nq):
        a = offsets[q]
        b = offsets[q + 1]
        kk = b - a if k <= 0 else min(k, b - a)
        p = 0
        for i in range(a, b):
            if y[i] >= threshold:
                p += 1
        h = p
        if kk < b - a:
            top_rows_into(s, a, b, kk, idx, val, cand, cand_val, seen, sorts, long_sorts)
            h = 0
            for r in range(kk):
                if y[idx[r]] >= threshold:
                    h += 1
        hits[q] = h
        npos[q] = p
        depth[q] = kk
    return hits, npos, depth



def hits_at_k(y, s, offsets, k, threshold):
    """:func:`_hits_at_k` with its ``sorts`` and ``long_sorts`` arguments
    (:func:`~gbrank._kernels._topk.top_rows_into`): a full sort of the top rows is
    compiled only when some query's cut-off is deeper than the selection buffer."""
    return _hits_at_k(y, s, offsets, k, threshold, *full_order_needed(offsets, k))
