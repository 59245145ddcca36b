"""Reciprocal rank of the first relevant row per query, in O(n) without sorting."""

import numpy as np
from numba import njit


@njit(cache=True, nogil=True)
def reciprocal_rank_per_query(y, s, offsets, k, threshold):
    """1/r of the first relevant (``y >= threshold``) row if r <= k (``k <= 0``: any), else 0.

    The first relevant row of the stable descending order is the relevant row with the
    highest score (earliest on ties); its rank counts the rows ahead of it, so no sort
    is needed.
    """
    nq = offsets.size - 1
    out = np.empty(nq, dtype=np.float64)
    for q in range(nq):
        a = offsets[q]
        b = offsets[q + 1]
        best = -1
        for i in range(a, b):
            if y[i] >= threshold and (best < 0 or s[i] > s[best]):
                best = i
        if best < 0:
            out[q] = 0.0
            continue
        top = s[best]
        rank = 1
        for i in range(a, b):
            if s[i] > top or (s[i] == top and i < best):
                rank += 1
        out[q] = 1.0 / rank if (k <= 0 or rank <= k) else 0.0
    return out
