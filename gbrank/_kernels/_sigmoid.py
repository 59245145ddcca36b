"""The pair sigmoid in forms that neither overflow nor cancel, shared by the pairwise
kernels (RankNet, LambdaRank, RankNet's grid mode)."""

import numpy as np
from numba import njit

from gbrank._kernels._exp import INV_LN2, LN2_HI, LN2_LO, exp_taylor


@njit(cache=True, nogil=True, inline="always")
def rho_pair(x):
    """``(ρ, 1 − ρ)`` with ρ = 1 / (1 + e^x), each computed from e^{−|x|} so that neither
    overflows nor loses its small value to cancellation."""
    if x > 0.0:
        t = np.exp(-x)
        return t / (1.0 + t), 1.0 / (1.0 + t)
    t = np.exp(x)
    return 1.0 / (1.0 + t), t / (1.0 + t)


# Within this spread σ·(max − min) of a query, ρ comes from one exp per row instead of
# one per pair: e = exp(σ(s − mid)) lies in [e^-350, e^350], so every product of two
# e's or of two 1/(e_i + e_j) stays a normal float64 in any association order
# (fastmath may reorder).
MAX_EXP_SPREAD = 700.0


# exp(x) = 2^k · exp(r), k = round(x / ln 2), r = x − k ln 2 (``_exp``): within 1 ulp of
# libm's exp over |x| ≤ 300 and vectorised by LLVM, where libm's exp is a scalar call
# (docs/performance.md). No fastmath here: it would reassociate the reduction.


@njit(cache=True, nogil=True, error_model="numpy")
def exp_scaled_into(z, sigma, mid, e, bits):
    """``e[r] = exp(σ(z_r − mid))`` for ``|σ(z_r − mid)| ≤ 700``; ``bits`` is int64
    scratch as long as ``z`` (2^k is built from its exponent bits)."""
    for r in range(z.size):
        x = sigma * (z[r] - mid)
        kf = np.floor(x * INV_LN2 + 0.5)
        t = (x - kf * LN2_HI) - kf * LN2_LO
        e[r] = exp_taylor(t)
        bits[r] = (np.int64(kf) + 1023) << 52
    scale = bits.view(np.float64)
    for r in range(z.size):
        e[r] *= scale[r]


@njit(cache=True, nogil=True, inline="always")
def row_exponentials_into(z, sigma, e, scratch):
    """Write e_r = exp(σ(z_r − mid)) into ``e[:z.size]`` and return True when the
    query's spread allows (``MAX_EXP_SPREAD``), so that ρ_uv = e_v / (e_u + e_v) costs
    no exp per pair; otherwise return False (``e`` untouched: pairs call
    :func:`rho_pair`). ``scratch`` is a float64 array at least ``z.size`` long whose
    contents are overwritten."""
    n = z.size
    if n == 0:
        return False
    # One pass for both extremes: for finite scores the values of z.max() and z.min(),
    # whose generic implementations (nditer) take longer to compile than this loop.
    zmax = z[0]
    zmin = z[0]
    for r in range(1, n):
        v = z[r]
        if v > zmax:
            zmax = v
        if v < zmin:
            zmin = v
    fast = sigma * (zmax - zmin) <= MAX_EXP_SPREAD
    if fast:
        exp_scaled_into(z, sigma, 0.5 * (zmax + zmin), e[:n], scratch[:n].view(np.int64))
    return fast


@njit(cache=True, nogil=True)
def row_exponentials(z, sigma):
    """``(fast, e)`` as :func:`row_exponentials_into`, ``e`` freshly allocated."""
    e = np.empty(z.size)
    fast = row_exponentials_into(z, sigma, e, np.empty(z.size))
    return fast, e


@njit(cache=True, nogil=True)
def softplus(x):
    """log(1 + exp(x)) without overflow or loss of small values."""
    if x > 0.0:
        return x + np.log1p(np.exp(-x))
    return np.log1p(np.exp(x))
