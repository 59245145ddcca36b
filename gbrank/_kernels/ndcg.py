"""NDCG@k per query: DCG of the score ranking over DCG of the label ranking."""

import numpy as np
from numba import njit

from gbrank._kernels._order import descending_order
from gbrank._kernels._topk import BUFFER_MAX_K, top_k_into, top_k_values


# Serial on purpose: on the shared 2-core machine a prange version was slower in the
# median (OpenMP threads spin while other jobs hold the cores) and one thread already
# does 10^6 rows in ~8 ms.
@njit(cache=True, nogil=True)
def ndcg_per_query(y, s, offsets, k, gain_table, linear, discount):
    """NDCG@k of every query; a query whose ideal DCG is 0 scores 1 (LightGBM's rule).

    ``gain(l) = l`` when ``linear`` else ``gain_table[int(l)]`` (the table covers
    every grade present); ``discount[r]`` is ``1 / log2(r + 2)`` for 0-based rank
    ``r`` (length at least the largest cut-off); ``k <= 0`` means all rows. The
    ideal ranking sorts labels (not gains) descending, as LightGBM does; with integer
    grades it is built by counting rows per grade.
    """
    nq = offsets.size - 1
    out = np.empty(nq, dtype=np.float64)
    # Scratch buffers allocated once, not per query (10^4 small queries is typical).
    buf = np.empty(BUFFER_MAX_K, dtype=np.int64)
    buf_scores = np.empty(BUFFER_MAX_K, dtype=np.float64)
    counts = np.zeros(1 if linear else gain_table.size, dtype=np.int64)
    for q in range(nq):
        a = offsets[q]
        b = offsets[q + 1]
        kk = b - a if k <= 0 else min(k, b - a)
        idcg = 0.0
        if linear:
            ideal = top_k_values(y[a:b], kk)
            for r in range(kk):
                idcg += ideal[r] * discount[r]
        else:
            for i in range(a, b):
                counts[int(y[i])] += 1
            g = counts.size - 1
            r = 0
            while r < kk:
                while counts[g] == 0:
                    g -= 1
                take = min(counts[g], kk - r)
                for _ in range(take):
                    idcg += gain_table[g] * discount[r]
                    r += 1
                g -= 1
            for i in range(a, b):
                counts[int(y[i])] = 0
        if idcg <= 0.0:
            out[q] = 1.0
            continue
        dcg = 0.0
        if kk < b - a and kk <= BUFFER_MAX_K:
            top_k_into(s, a, b, kk, buf, buf_scores)
            for r in range(kk):
                lab = y[buf[r]]
                dcg += (lab if linear else gain_table[int(lab)]) * discount[r]
        else:
            order = descending_order(s[a:b])
            for r in range(kk):
                lab = y[a + order[r]]
                dcg += (lab if linear else gain_table[int(lab)]) * discount[r]
        out[q] = dcg / idcg
    return out
