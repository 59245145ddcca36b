"""The pair sigmoid in forms that neither overflow nor cancel, shared by the pairwise
kernels (RankNet, LambdaRank, RankNet's grid mode)."""

import numpy as np
from numba import njit


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


@njit(cache=True, nogil=True)
def row_exponentials_into(z, sigma, e):
    """Write e_r = exp(σ(z_r − mid)) into ``e[:z.size]`` and return True when the
    query's spread allows (``MAX_EXP_SPREAD``), so that ρ_uv = e_v / (e_u + e_v) costs
    no exp per pair; otherwise return False (``e`` untouched: pairs call
    :func:`rho_pair`)."""
    n = z.size
    if n == 0:
        return False
    zmax = z.max()
    zmin = z.min()
    fast = sigma * (zmax - zmin) <= MAX_EXP_SPREAD
    if fast:
        mid = 0.5 * (zmax + zmin)
        for r in range(n):
            e[r] = np.exp(sigma * (z[r] - mid))
    return fast


@njit(cache=True, nogil=True)
def row_exponentials(z, sigma):
    """``(fast, e)`` as :func:`row_exponentials_into`, ``e`` freshly allocated."""
    e = np.empty(z.size)
    fast = row_exponentials_into(z, sigma, e)
    return fast, e


@njit(cache=True, nogil=True)
def softplus(x):
    """log(1 + exp(x)) without overflow or loss of small values."""
    if x > 0.0:
        return x + np.log1p(np.exp(-x))
    return np.log1p(np.exp(x))
