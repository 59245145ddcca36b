"""Relevant rows among the top k per query (precision@k and recall@k)."""

import numpy as np
from numba import njit

from gbrank._kernels._topk import top_k_rows_into, top_k_scratch


@njit(cache=True, nogil=True)
def hits_at_k(y, s, offsets, k, threshold):
    """Per query: relevant rows (``y >= threshold``) in the top ``min(k, n)`` (``k <= 0``:
    all rows), the number of relevant rows, and ``min(k, n)``."""
    nq = offsets.size - 1
    hits = np.empty(nq, dtype=np.float64)
    npos = np.empty(nq, dtype=np.float64)
    depth = np.empty(nq, dtype=np.float64)
    idx, val, cand, cand_val = top_k_scratch(offsets)
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
            top_k_rows_into(s, a, b, kk, idx, val, cand, cand_val)
            h = 0
            for r in range(kk):
                if y[idx[r]] >= threshold:
                    h += 1
        hits[q] = h
        npos[q] = p
        depth[q] = kk
    return hits, npos, depth
