"""exp(x) without a libm call, so that the loops calling it vectorise (libm's exp is a
scalar call): Cody–Waite reduction x = k·ln 2 + r with |r| ≤ ln(2)/2, then exp(r) by
its Taylor polynomial. Shared by the focal-loss kernels and the row exponentials of the
pairwise kernels; each caller builds 2^k its own way (the bits of an int64)."""

from numba import njit

# Cody–Waite split of ln 2: k·LN2_HI is exact for |k| < 2^20.
LN2_HI = 6.93147180369123816490e-01
LN2_LO = 1.90821492927058770002e-10
INV_LN2 = 1.44269504088896338700e00


@njit(cache=True, nogil=True, inline="always")
def exp_taylor(t):
    """exp(t) for |t| ≤ ln(2)/2 by its Taylor series to t^14 (truncation < 2e-17
    relative). Inlined: it takes the caller's fastmath flags."""
    p = 1.0 / 6227020800.0
    p = p * t + 1.0 / 479001600.0
    p = p * t + 1.0 / 39916800.0
    p = p * t + 1.0 / 3628800.0
    p = p * t + 1.0 / 362880.0
    p = p * t + 1.0 / 40320.0
    p = p * t + 1.0 / 5040.0
    p = p * t + 1.0 / 720.0
    p = p * t + 1.0 / 120.0
    p = p * t + 1.0 / 24.0
    p = p * t + 1.0 / 6.0
    p = p * t + 0.5
    p = p * t + 1.0
    return p * t + 1.0
