"""Dense grade classes: each label mapped to its rank among the distinct labels."""

import numpy as np
from numba import njit

# Integer labels spanning fewer values than this map through a table (O(n)); anything
# else is ranked through a sort of the distinct values.
TABLE_MAX_SPAN = 4096


@njit(cache=True, nogil=True)
def grade_classes_into(y, cls):
    """Write into ``cls`` (any integer dtype wide enough) the class of every row,
    0 = lowest label, and return the class count."""
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
    if integral and hi - lo < TABLE_MAX_SPAN:
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
    values = np.unique(y)
    for i in range(n):
        cls[i] = np.searchsorted(values, y[i])
    return values.size
