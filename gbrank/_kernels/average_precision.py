"""Average precision at k per query (LightGBM's MAP@k definition)."""

import numpy as np
from numba import njit

from gbrank._kernels._topk import full_order_needed, top_k_scratch, top_rows_into


@njit(cache=True, nogil=True)
def _average_precision_per_query(y, s, offsets, k, threshold, sorts, long_sorts):
    """AP@k = sum_{r <= k, relevant} hits(r) / r  /  min(#relevant, k); 1 if none relevant.

    Relevant means ``y >= threshold``; ``k <= 0`` means all rows.
    """
    nq = offsets.size - 1
    out = np.empty(nq, dtype=np.float64)
    idx, val, cand, cand_val, seen = top_k_scratch(offsets)
    for q in range(nq):
        a = offsets[q]
        b = offsets[q + 1]
        npos = 0
        for i in range(a, b):
            if y[i] >= threshold:
                npos += 1
        if npos == 0:
            out[q] = 1.0
            continue
        kk = b - a if k <= 0 else min(k, b - a)
        top_rows_into(s, a, b, kk, idx, val, cand, cand_val, seen, sorts, long_sorts)
        hits = 0
        total = 0.0
        for r in range(kk):
            if y[idx[r]] >= threshold:
                hits += 1
                total += hits / (r + 1.0)
        out[q] = total / min(npos, kk)
    return out



def average_precision_per_query(y, s, offsets, k, threshold):
    """:func:`_average_precision_per_query` with its ``sorts`` and ``long_sorts`` arguments
    (:func:`~gbrank._kernels._topk.top_rows_into`): a full sort of the top rows is
    compiled only when some query's cut-off is deeper than the selection buffer."""
    return _average_precision_per_query(y, s, offsets, k, threshold, *full_order_needed(offsets, k))
