"""Every pair's |ΔZ| of one ranked list, from the delta kernels' own pieces: what the
tests compare the pair weights of LambdaRank's kernels (and the slow references built
on them) against, and check against metric swaps."""

from __future__ import annotations

import numpy as np
from numba import njit

from gbrank._kernels.delta import discounts, pair_delta, prefix_arrays


@njit(nogil=True)
def delta_matrix(metric, lab, k, gain_tab, threshold, lgb_discount):
    """All |ΔZ| for positions a < b with a < k (others 0) of labels ``lab`` in ranked
    order (``metric``: a code of :mod:`gbrank._kernels.delta`)."""
    n = lab.size
    pre = np.zeros((3, n + 1))
    sc = np.zeros(4)
    prefix_arrays(metric, lab, k, gain_tab, threshold, lgb_discount, discounts(n), pre, sc)
    out = np.zeros((n, n))
    for a in range(min(k, n)):
        for b in range(a + 1, n):
            out[a, b] = pair_delta(metric, a, b, k, pre, sc)
    return out
