"""Cross-entropy of a sigmoid against targets in [0, 1] (the pointwise logistic loss):
ℓ(t, s) = −t log σ(s) − (1 − t) log(1 − σ(s)), ∂ℓ/∂s = σ(s) − t,
∂²ℓ/∂s² = σ(s)(1 − σ(s)). Row weights multiply all three."""

import numpy as np
from numba import njit


@njit(cache=True, nogil=True, inline="always")
def _softplus(x):
    """log(1 + e^x) without overflow or loss of the small value."""
    if x > 0.0:
        return x + np.log1p(np.exp(-x))
    return np.log1p(np.exp(x))


@njit(cache=True, nogil=True, inline="always")
def _sigmoid(x):
    if x >= 0.0:
        return 1.0 / (1.0 + np.exp(-x))
    e = np.exp(x)
    return e / (1.0 + e)


@njit(cache=True, nogil=True)
def cross_entropy_grad_hess(t, s, w, grad, hess):
    """Gradient and Hessian of Σ w_i ℓ(t_i, s_i) into ``grad``/``hess`` (``w`` empty:
    unweighted)."""
    weighted = w.size > 0
    for i in range(s.size):
        p = _sigmoid(s[i])
        g = p - t[i]
        h = p * (1.0 - p)
        if weighted:
            g *= w[i]
            h *= w[i]
        grad[i] = g
        hess[i] = h


@njit(cache=True, nogil=True)
def cross_entropy_loss(t, s, w):
    """Σ w_i ℓ(t_i, s_i), with ℓ = (1 − t)·s + log(1 + e^{−s}) = t·softplus(−s) +
    (1 − t)·softplus(s) (finite for any finite s)."""
    total = 0.0
    weighted = w.size > 0
    for i in range(s.size):
        v = t[i] * _softplus(-s[i]) + (1.0 - t[i]) * _softplus(s[i])
        total += v * w[i] if weighted else v
    return total
