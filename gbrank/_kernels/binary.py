"""Confusion counts at a threshold and the sorted sweep behind the F_beta threshold search."""

import numpy as np
from numba import njit

from gbrank._kernels._radix import descending_order_into


@njit(cache=True, nogil=True)
def confusion(y, s, w, threshold):
    """(TP, FP, FN, TN) with positive prediction ``s > threshold``; ``w`` per row, or an
    empty array for unit weights."""
    weighted = w.size > 0
    tp = 0.0
    fp = 0.0
    fn = 0.0
    tn = 0.0
    for i in range(y.size):
        wi = w[i] if weighted else 1.0
        if s[i] > threshold:
            if y[i] > 0.5:
                tp += wi
            else:
                fp += wi
        elif y[i] > 0.5:
            fn += wi
        else:
            tn += wi
    return tp, fp, fn, tn


@njit(cache=True, nogil=True)
def best_fbeta_cut(y, s, w, beta2):
    """Best F_beta over every cut of the scores sorted descending.

    Cut ``j`` (0 <= j <= number of distinct scores) predicts positive the rows with the
    ``j`` highest distinct scores. Returns ``(j, lowest, highest)``: the first cut
    reaching the maximum (the highest threshold among equals), the lowest score it
    predicts positive and the highest it predicts negative (NaN where there is none).
    F = 1 when TP + FP + FN = 0. Scratch: the int32 order (no copies of the scores).
    """
    n = y.size
    # The radix order at every size (descending_order's merge sort below 2,048 rows
    # gives the same order): one sort to compile instead of two, 2 s less on a first
    # call, and the same speed where it counts (large inputs).
    order = np.empty(n, dtype=np.int32)
    descending_order_into(s, order, np.empty(n, dtype=np.int32))
    weighted = w.size > 0
    pos_total = 0.0
    for i in range(n):
        if y[i] > 0.5:
            pos_total += w[i] if weighted else 1.0
    tp = 0.0
    fp = 0.0
    fn = pos_total
    best = 1.0 if fn == 0.0 else 0.0
    best_cut = 0
    best_end = 0  # position after the last row predicted positive at the best cut
    cut = 0
    t = 0
    while t < n:
        u = t
        top = s[order[t]]
        while u < n and s[order[u]] == top:
            i = order[u]
            wi = w[i] if weighted else 1.0
            if y[i] > 0.5:
                tp += wi
                fn -= wi
            else:
                fp += wi
            u += 1
        cut += 1
        num = (1.0 + beta2) * tp
        den = num + fp + beta2 * fn
        f = 1.0 if den == 0.0 else num / den
        if f > best:
            best = f
            best_cut = cut
            best_end = u
        t = u
    lowest = s[order[best_end - 1]] if best_end > 0 else np.nan
    highest = s[order[best_end]] if best_end < n else np.nan
    return best_cut, lowest, highest
