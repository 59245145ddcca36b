"""Dense grade classes: each label mapped to its rank among the distinct labels."""

import numpy as np
from numba import njit

from gbrank._kernels._order import ascending_order

# Integer labels spanning fewer values than this map through a table (O(n)); anything
# else is ranked through the int32 radix order of the labels (one n-row float64 array's
# worth of scratch: less time and half the memory of NumPy's unique and a binary search
# per row, docs/performance.md).
TABLE_MAX_SPAN = 4096


@njit(cache=True, nogil=True)
def table_classes_into(y, cls):
    """:func:`grade_classes_into` when the labels are integers spanning fewer than
    ``TABLE_MAX_SPAN`` values (one table, O(n)); otherwise return -1, ``cls`` unwritten."""
    n = y.size
    if n == 0:
        return 0
    lo = y[0]
    hi = y[0]
    integral = True
    for i in range(n):
        v = y[i]
        if v < lo:
            lo = v
        if v > hi:
            hi = v
        if v != np.floor(v):
            integral = False
    if not (integral and hi - lo < TABLE_MAX_SPAN):
        return -1
    m = int(hi - lo) + 1
    remap = np.zeros(m, dtype=np.int64)
    for i in range(n):
        remap[int(y[i] - lo)] = 1
    c = -1
    for v in range(m):
        if remap[v]:
            c += 1
        remap[v] = c
    for i in range(n):
        cls[i] = remap[int(y[i] - lo)]
    return c + 1


@njit(cache=True, nogil=True)
def grade_classes_into(y, cls):
    """Write into ``cls`` (any integer dtype wide enough) the class of every row,
    0 = lowest label, and return the class count."""
    n_cls = table_classes_into(y, cls)
    if n_cls >= 0:
        return n_cls
    order = ascending_order(y)
    c = -1
    prev = np.inf
    for p in range(y.size):
        v = y[order[p]]
        if v != prev:
            c += 1
            prev = v
        cls[order[p]] = c
    return c + 1
