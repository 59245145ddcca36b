"""Per-query ordering shared by metric and objective kernels."""

import numpy as np
from numba import njit


@njit(cache=True, nogil=True)
def descending_order(s):
    """Positions sorted by score descending, ties by row order (LightGBM's rule).

    A stable sort of ``-s`` keeps tied rows in their original order.
    """
    return np.argsort(-s, kind="mergesort")
