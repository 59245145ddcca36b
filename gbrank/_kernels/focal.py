"""Focal loss kernels (binary and softmax multiclass), in log space.

Binary: with t = +1 for a positive row and −1 for a negative one, write u = t·z
(the margin "on the right side"). Then p_t = σ(u), q = 1 − p_t = σ(−u),
ℓ = log p_t = log σ(u), log q = ℓ − u, and

    FL(u) = −α_t q^γ ℓ,
    FL'(u) = α_t q^γ (γ p_t ℓ − q),
    FL''(u) = α_t p_t q^γ [q (1 + 2γ + γ ℓ) − γ² p_t ℓ],

using dp_t/du = p_t q, dq/du = −p_t q, dℓ/du = q. Since u = t·z:
∂FL/∂z = t·FL'(u) and ∂²FL/∂z² = FL''(u). γ = 0 gives FL' = −q, FL'' = p_t q
(logistic loss).

Cost per row: one exp and one log1p give p_t, q and ℓ of both signs
(e = exp(−|u|), log σ(u) = min(u, 0) − log1p(e)), and one more exp gives
q^γ = exp(γ (ℓ − u)). Both are evaluated by polynomials (``exp_neg``,
``log1p_unit``) rather than libm calls, so the row loop has neither calls nor
branches and LLVM vectorises it. Nothing overflows for any finite z: e ∈ [0, 1]
and every other quantity is a ratio or product of bounded terms.

Multiclass (softmax over K raw scores, true class c): with
u = z_c − logsumexp_{j≠c} z_j the softmax probability of c is σ(u), so FL is the
binary formula in u. With π_j = softmax over the other classes (j ≠ c),
∂u/∂z_c = 1, ∂u/∂z_j = −π_j, ∂²u/∂z_j² = −π_j (1 − π_j), hence

    g_c = FL'(u),            h_c = FL''(u),
    g_j = −FL'(u) π_j,       h_j = FL''(u) π_j² − FL'(u) π_j (1 − π_j).

The booster's Hessian (binary, and each of the K entries of a multiclass row):
w·max(h, floor), then raised to at least |w g| / max_step when a step bound is given
(``_step.bound_hess``), in the same pass, on the values just computed.
"""

import numpy as np
from llvmlite import ir
from numba import njit, prange, types
from numba.extending import intrinsic

from gbrank._kernels._exp import INV_LN2, LN2_HI, LN2_LO, exp_taylor
from gbrank._kernels._step import bound_hess
from gbrank._kernels._threads import dispatch

# A loop without libm calls is vectorised by LLVM (4 rows per AVX2 instruction), faster
# per core than scalar exp/log1p (docs/performance.md) and nearly as accurate (a few ulp;
# the tests compare with np.exp / np.log1p).
_EXP_CUT = 745.5  # exp(−x) rounds to 0 in float64 beyond
_FASTMATH = {"contract"}  # fused multiply-add only; no reassociation


@intrinsic
def _int64_bits_as_float64(typingctx, bits):
    """Reinterpret the bits of an int64 as a float64 (no conversion)."""
    sig = types.float64(types.int64)

    def codegen(context, builder, signature, args):
        return builder.bitcast(args[0], ir.DoubleType())

    return sig, codegen


@njit(cache=True, nogil=True, inline="always")
def _pow2_neg(k):
    """2^−k for an integer 0 ≤ k ≤ 1022, built from its exponent bits (no table, no call:
    a table lookup would stop LLVM from vectorising the caller's loop)."""
    return _int64_bits_as_float64((1023 - k) << 52)


@njit(cache=True, nogil=True, inline="always", fastmath=_FASTMATH)
def exp_neg(x):
    """exp(−x) for x ≥ 0 (NaN gives a finite value; callers reject NaN input)."""
    xc = x if x < _EXP_CUT else _EXP_CUT
    k = np.floor(xc * INV_LN2 + 0.5)
    r = (xc - k * LN2_HI) - k * LN2_LO  # |r| ≤ ln2 / 2
    t = -r
    p = exp_taylor(t)
    # 2^−k in two normal factors (k ≤ 1076): exact, and the product rounds once
    ki = np.int64(k)
    k1 = ki >> 1
    return (p * _pow2_neg(k1)) * _pow2_neg(ki - k1)


@njit(cache=True, nogil=True, inline="always", fastmath=_FASTMATH)
def log1p_unit(e):
    """log1p(e) for e ∈ [0, 1], as 2 atanh(w) with w = e / (2 + e) ≤ 1/3."""
    w = e / (2.0 + e)
    w2 = w * w
    # atanh(w) / w = Σ_j w^{2j} / (2j + 1); 20 terms: remainder < 9^−20 < 1e-19
    s = 1.0 / 39.0
    s = s * w2 + 1.0 / 37.0
    s = s * w2 + 1.0 / 35.0
    s = s * w2 + 1.0 / 33.0
    s = s * w2 + 1.0 / 31.0
    s = s * w2 + 1.0 / 29.0
    s = s * w2 + 1.0 / 27.0
    s = s * w2 + 1.0 / 25.0
    s = s * w2 + 1.0 / 23.0
    s = s * w2 + 1.0 / 21.0
    s = s * w2 + 1.0 / 19.0
    s = s * w2 + 1.0 / 17.0
    s = s * w2 + 1.0 / 15.0
    s = s * w2 + 1.0 / 13.0
    s = s * w2 + 1.0 / 11.0
    s = s * w2 + 1.0 / 9.0
    s = s * w2 + 1.0 / 7.0
    s = s * w2 + 1.0 / 5.0
    s = s * w2 + 1.0 / 3.0
    s = s * w2 + 1.0
    return 2.0 * w * s


@njit(cache=True, nogil=True, inline="always", fastmath=_FASTMATH)
def _parts(u, gamma):
    """p_t, q, ℓ = log p_t and q^γ at margin u (selects only, no branches)."""
    e = exp_neg(abs(u))
    l1 = log1p_unit(e)
    inv = 1.0 / (1.0 + e)
    small = e * inv
    p = inv if u >= 0.0 else small
    q = small if u >= 0.0 else inv
    ell = (u if u < 0.0 else 0.0) - l1
    # log q = ℓ − u = −(l1 + max(u, 0)) ≤ 0; γ = 0 gives exp(−0) = 1 exactly
    qg = exp_neg(gamma * (l1 + (u if u > 0.0 else 0.0)))
    return p, q, ell, qg


@njit(cache=True, nogil=True, inline="always", fastmath=_FASTMATH)
def _derivs(p, q, ell, qg, gamma):
    d1 = qg * (gamma * p * ell - q)
    d2 = p * qg * (q * (1.0 + 2.0 * gamma + gamma * ell) - gamma * gamma * p * ell)
    return d1, d2


@njit(cache=True, nogil=True, inline="always", fastmath=_FASTMATH)
def _binary_row(i, y, s, w, weighted, gamma, alpha, floor, inv_step, grad, hess):
    """One row of :func:`binary_grad_hess`; returns (invalid, is 0 label, is −1 label)."""
    z = s[i]
    yi = y[i]
    is_zero = 1 if yi == 0.0 else 0
    is_minus = 1 if yi == -1.0 else 0
    bad_label = 0 if (yi == 0.0 or yi == -1.0 or yi == 1.0) else 1
    bad_score = 0 if z - z == 0.0 else 1  # NaN and ±inf give NaN
    pos = yi > 0.5
    u = z if pos else -z
    p, q, ell, qg = _parts(u, gamma)
    d1, d2 = _derivs(p, q, ell, qg, gamma)
    at = 1.0 if alpha < 0.0 else (alpha if pos else 1.0 - alpha)
    d1 *= at
    d2 *= at
    if floor >= 0.0:
        d2 = d2 if d2 > floor else floor
    wi = w[i] if weighted else 1.0
    g = (d1 if pos else -d1) * wi
    h = d2 * wi
    if inv_step > 0.0:
        h = bound_hess(g, h, inv_step)
    grad[i] = g
    hess[i] = h
    return bad_label + bad_score, is_zero, is_minus


@njit(cache=True, nogil=True, parallel=True, fastmath=_FASTMATH)
def _binary_grad_hess_parallel(y, s, w, gamma, alpha, floor, inv_step, grad, hess):
    weighted = w.size > 0
    n_bad = 0
    n_zero = 0
    n_minus = 0
    for i in prange(s.size):
        b, zr, mn = _binary_row(i, y, s, w, weighted, gamma, alpha, floor, inv_step,
                                grad, hess)
        n_bad += b
        n_zero += zr
        n_minus += mn
    return n_bad, n_zero, n_minus


@njit(cache=True, nogil=True, fastmath=_FASTMATH)
def _binary_grad_hess_serial(y, s, w, gamma, alpha, floor, inv_step, grad, hess):
    weighted = w.size > 0
    n_bad = 0
    n_zero = 0
    n_minus = 0
    for i in range(s.size):
        b, zr, mn = _binary_row(i, y, s, w, weighted, gamma, alpha, floor, inv_step,
                                grad, hess)
        n_bad += b
        n_zero += zr
        n_minus += mn
    return n_bad, n_zero, n_minus


def binary_grad_hess(y, s, w, gamma, alpha, floor, inv_step, grad, hess):
    """Fill grad/hess in place; a row is positive iff ``y > 0.5`` ({0, 1} or {−1, +1}).

    ``w`` empty means unweighted; ``alpha < 0`` means no α weighting; ``floor < 0``
    means the true Hessian, otherwise ``w · max(h, floor)``, which ``inv_step > 0``
    (:func:`gbrank._kernels._step.inverse_step` of ``max_step``; 0: no bound) raises to
    at least ``|w g| / max_step`` (:func:`gbrank._kernels._step.bound_hess`).
    Validation is fused into this pass (it runs every boosting round): returns the
    counts of invalid rows (non-finite score or label outside {−1, 0, 1}), of 0
    labels and of −1 labels; the caller raises if any is invalid or 0 and −1 labels
    are mixed.
    """
    return dispatch(_binary_grad_hess_parallel, _binary_grad_hess_serial, s.size,
                    y, s, w, gamma, alpha, floor, inv_step, grad, hess)


@njit(cache=True, nogil=True, inline="always", fastmath=_FASTMATH)
def _binary_loss_row(i, y, s, w, weighted, gamma, alpha):
    pos = y[i] > 0.5
    u = s[i] if pos else -s[i]
    p, q, ell, qg = _parts(u, gamma)
    at = 1.0 if alpha < 0.0 else (alpha if pos else 1.0 - alpha)
    wi = w[i] if weighted else 1.0
    return -qg * ell * at * wi


@njit(cache=True, nogil=True, parallel=True, fastmath=_FASTMATH)
def _binary_loss_parallel(y, s, w, gamma, alpha):
    weighted = w.size > 0
    total = 0.0
    for i in prange(s.size):
        total += _binary_loss_row(i, y, s, w, weighted, gamma, alpha)
    return total


@njit(cache=True, nogil=True, fastmath=_FASTMATH)
def _binary_loss_serial(y, s, w, gamma, alpha):
    weighted = w.size > 0
    total = 0.0
    for i in range(s.size):
        total += _binary_loss_row(i, y, s, w, weighted, gamma, alpha)
    return total


@njit(cache=True, nogil=True, inline="always")
def _other_lse(z, c):
    """max and Σ exp(z_j − max) over j ≠ c."""
    k = z.size
    m = -np.inf
    for j in range(k):
        if j != c and z[j] > m:
            m = z[j]
    acc = 0.0
    for j in range(k):
        if j != c:
            acc += np.exp(z[j] - m)
    return m, acc


@njit(cache=True, nogil=True, inline="always")
def _multiclass_row(i, y, s, w, weighted, gamma, alpha, floor, inv_step, grad, hess):
    k = s.shape[1]
    z = s[i]
    c = int(y[i])
    m, acc = _other_lse(z, c)
    u = z[c] - (m + np.log(acc))
    p, q, ell, qg = _parts(u, gamma)
    d1, d2 = _derivs(p, q, ell, qg, gamma)
    scale = 1.0
    if alpha.size > 0:
        scale = alpha[c]
    if weighted:
        scale *= w[i]
    for j in range(k):
        if j == c:
            g = d1
            h = d2
        else:
            pi = np.exp(z[j] - m) / acc
            g = -d1 * pi
            h = d2 * pi * pi - d1 * pi * (1.0 - pi)
        if floor >= 0.0 and h < floor:
            h = floor
        g *= scale
        h *= scale
        if inv_step > 0.0:
            h = bound_hess(g, h, inv_step)
        grad[i, j] = g
        hess[i, j] = h


@njit(cache=True, nogil=True, parallel=True)
def _multiclass_grad_hess_parallel(y, s, w, gamma, alpha, floor, inv_step, grad, hess):
    weighted = w.size > 0
    for i in prange(s.shape[0]):
        _multiclass_row(i, y, s, w, weighted, gamma, alpha, floor, inv_step, grad, hess)


@njit(cache=True, nogil=True)
def _multiclass_grad_hess_serial(y, s, w, gamma, alpha, floor, inv_step, grad, hess):
    weighted = w.size > 0
    for i in range(s.shape[0]):
        _multiclass_row(i, y, s, w, weighted, gamma, alpha, floor, inv_step, grad, hess)


@njit(cache=True, nogil=True, inline="always")
def _multiclass_loss_row(i, y, s, w, weighted, gamma, alpha):
    z = s[i]
    c = int(y[i])
    m, acc = _other_lse(z, c)
    u = z[c] - (m + np.log(acc))
    p, q, ell, qg = _parts(u, gamma)
    v = -qg * ell
    if alpha.size > 0:
        v *= alpha[c]
    if weighted:
        v *= w[i]
    return v


@njit(cache=True, nogil=True, parallel=True)
def _multiclass_loss_parallel(y, s, w, gamma, alpha):
    weighted = w.size > 0
    total = 0.0
    for i in prange(s.shape[0]):
        total += _multiclass_loss_row(i, y, s, w, weighted, gamma, alpha)
    return total


@njit(cache=True, nogil=True)
def _multiclass_loss_serial(y, s, w, gamma, alpha):
    weighted = w.size > 0
    total = 0.0
    for i in range(s.shape[0]):
        total += _multiclass_loss_row(i, y, s, w, weighted, gamma, alpha)
    return total


def binary_loss(y, s, w, gamma, alpha):
    """Σ_i w_i FL_i."""
    return dispatch(_binary_loss_parallel, _binary_loss_serial, s.size, y, s, w, gamma, alpha)


def multiclass_grad_hess(y, s, w, gamma, alpha, floor, inv_step, grad, hess):
    """Softmax focal loss; ``s``, grad, hess are (n, K); ``alpha`` per class or empty;
    ``floor`` and ``inv_step`` elementwise, as in :func:`binary_grad_hess`."""
    return dispatch(_multiclass_grad_hess_parallel, _multiclass_grad_hess_serial, s.size,
                    y, s, w, gamma, alpha, floor, inv_step, grad, hess)


def multiclass_loss(y, s, w, gamma, alpha):
    """Σ_i w_i FL_i for softmax scores (n, K)."""
    return dispatch(_multiclass_loss_parallel, _multiclass_loss_serial, s.size,
                    y, s, w, gamma, alpha)
