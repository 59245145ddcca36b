"""Per-query ordering shared by metric and objective kernels."""

import numpy as np
from numba import njit

from gbrank._kernels._radix import descending_order_into

# From this many rows on, the int32 radix order is faster than NumPy's stable argsort
# inside numba (docs/performance.md); it also holds 4 bytes per row instead of 8 plus
# the merge sort's buffer.
RADIX_MIN_ROWS = 2048


@njit(cache=True, nogil=True)
def descending_order(s):
    """Positions sorted by score descending, ties by row order (LightGBM's rule), as
    int32.

    A stable sort of ``-s`` keeps tied rows in their original order; long inputs use
    :func:`~gbrank._kernels._radix.descending_order_into` (same order, both zeros one
    score as in ``-s``).
    """
    n = s.size
    if n >= RADIX_MIN_ROWS:
        order = np.empty(n, dtype=np.int32)
        descending_order_into(s, order, np.empty(n, dtype=np.int32))
        return order
    return np.argsort(-s, kind="mergesort").astype(np.int32)


# Queries up to this many rows are ordered by counting ranks (O(n²) comparisons without
# branches, which LLVM vectorises, where a comparison sort's branches mispredict half
# the time on random scores); longer ones by a sort (docs/performance.md).
RANK_ORDER_MAX = 512


@njit(cache=True, nogil=True, fastmath=True, error_model="numpy")
def rank_order_into(s, buf, key, idx, seen):
    """Positions of ``s`` by score descending, ties by row order (as
    :func:`descending_order`), into ``idx[:n]``, the sorted scores into ``key[:n]``;
    ``buf`` (float64) and ``seen`` (int64) are scratch. For up to ``RANK_ORDER_MAX``
    rows.

    The row i goes to position c_i + t_i, c_i = #{j : s_j > s_i} and t_i the number of
    earlier rows with the same score: tied rows share c_i and take c_i, c_i + 1, … in
    row order, and the next lower score starts after them, so the positions are
    distinct and stable. c_i is one comparison and one add per pair (vectorised); t_i
    comes from a count per c in a scalar pass in row order (counting the tie rule
    inside the pair loop, #{s_j = s_i, j < i}, takes three more vector operations per
    pair). fastmath here only licenses the vectorised count; comparisons of finite
    scores are exact."""
    n = s.size
    for r in range(n):
        buf[r] = s[r]
        seen[r] = 0
    for i in range(n):
        x = buf[i]
        c = 0
        for j in range(n):
            c += buf[j] > x
        p = c + seen[c]
        seen[c] += 1
        idx[p] = i
        key[p] = x


@njit(cache=True, nogil=True)
def ascending_order(keys):
    """Positions sorted by key ascending, as int32, tied keys in reverse row order: the
    int32 radix order of :func:`descending_order` reversed in place (scratch: its sort
    buffer, one int32 array, freed on return)."""
    n = keys.size
    order = np.empty(n, dtype=np.int32)
    descending_order_into(keys, order, np.empty(n, dtype=np.int32))
    for i in range(n // 2):
        order[i], order[n - 1 - i] = order[n - 1 - i], order[i]
    return order


@njit(cache=True, nogil=True, inline="always")
def run_end(keys, idx, a):
    """End (exclusive) of the run of equal keys that starts at position ``a`` of the
    index ``idx``: the first position after ``a`` whose ``keys[idx[...]]`` differs."""
    n = idx.size
    v = keys[idx[a]]
    b = a + 1
    while b < n and keys[idx[b]] == v:
        b += 1
    return b
