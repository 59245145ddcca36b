"""Expected reciprocal rank (Chapelle et al. 2009) per query."""

import numpy as np
from numba import njit

from gbrank._kernels._topk import top_k_rows_into, top_k_scratch


@njit(cache=True, nogil=True)
def err_per_query(y, s, offsets, k, stop_prob):
    """ERR@k = sum_r (1/r) R_r prod_{i<r} (1 - R_i) over the top ``k`` (``k <= 0``: all).

    ``stop_prob[g]`` is R(g) = (2**g - 1) / 2**g_max for integer grade ``g``.
    """
    nq = offsets.size - 1
    out = np.empty(nq, dtype=np.float64)
    idx, val, cand, cand_val = top_k_scratch(offsets)
    for q in range(nq):
        a = offsets[q]
        b = offsets[q + 1]
        kk = b - a if k <= 0 else min(k, b - a)
        top_k_rows_into(s, a, b, kk, idx, val, cand, cand_val)
        go_on = 1.0
        total = 0.0
        for r in range(kk):
            p = stop_prob[int(y[idx[r]])]
            total += go_on * p / (r + 1.0)
            go_on *= 1.0 - p
        out[q] = total
    return out
