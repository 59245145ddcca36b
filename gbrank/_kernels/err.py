"""Expected reciprocal rank (Chapelle et al. 2009) per query."""

import numpy as np
from numba import njit

from gbrank._kernels._topk import full_order_needed, top_k_scratch, top_rows_into


@njit(cache=True, nogil=True)
def _err_per_query(y, s, offsets, k, stop_prob, sorts, long_sorts):
    """ERR@k = sum_r (1/r) R_r prod_{i<r} (1 - R_i) over the top ``k`` (``k <= 0``: all).

    ``stop_prob[g]`` is R(g) = (2**g - 1) / 2**g_max for integer grade ``g``.
    """
    nq = offsets.size - 1
    out = np.empty(nq, dtype=np.float64)
    idx, val, cand, cand_val, seen = top_k_scratch(offsets)
    for q in range(nq):
        a = offsets[q]
        b = offsets[q + 1]
        kk = b - a if k <= 0 else min(k, b - a)
        top_rows_into(s, a, b, kk, idx, val, cand, cand_val, seen, sorts, long_sorts)
        go_on = 1.0
        total = 0.0
        for r in range(kk):
            p = stop_prob[int(y[idx[r]])]
            total += go_on * p / (r + 1.0)
            go_on *= 1.0 - p
        out[q] = total
    return out



def err_per_query(y, s, offsets, k, stop_prob):
    """:func:`_err_per_query` with its ``sorts`` and ``long_sorts`` arguments
    (:func:`~gbrank._kernels._topk.top_rows_into`): a full sort of the top rows is
    compiled only when some query's cut-off is deeper than the selection buffer."""
    return _err_per_query(y, s, offsets, k, stop_prob, *full_order_needed(offsets, k))
