"""Average precision at k per query (LightGBM's MAP@k definition)."""

import numpy as np
from numba import njit

from gbrank._kernels._topk import top_k_rows_into, top_k_scratch


@njit(cache=True, nogil=True)
def average_precision_per_query(y, s, offsets, k, threshold):
    """AP@k = sum_{r <= k, relevant} hits(r) / r  /  min(#relevant, k); 1 if none relevant.

    Relevant means ``y >= threshold``; ``k <= 0`` means all rows.
    """
    nq = offsets.size - 1
    out = np.empty(nq, dtype=np.float64)
    idx, val, cand, cand_val = top_k_scratch(offsets)
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
        top_k_rows_into(s, a, b, kk, idx, val, cand, cand_val)
        hits = 0
        total = 0.0
        for r in range(kk):
            if y[idx[r]] >= threshold:
                hits += 1
                total += hits / (r + 1.0)
        out[q] = total / min(npos, kk)
    return out
