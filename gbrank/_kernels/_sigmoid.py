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


@njit(cache=True, nogil=True)
def softplus(x):
    """log(1 + exp(x)) without overflow or loss of small values."""
    if x > 0.0:
        return x + np.log1p(np.exp(-x))
    return np.log1p(np.exp(x))
