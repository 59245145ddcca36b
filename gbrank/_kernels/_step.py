"""The bounded Newton step: the Hessian a booster receives, raised so that |g| ≤ c·h.

A booster's leaf value is −Σg/Σh over the leaf's rows (before the learning rate; an L2
penalty only shrinks it). If every row has |g_i| ≤ c·h_i, then |Σg| ≤ c·Σh and the
leaf value is at most c in size, whatever rows the tree puts together. Raising each
h_i to max(h_i, |g_i|/c) enforces it and leaves every row that satisfies it with room
to spare untouched.

The rule holds in float64 as a caller checks it, ``abs(g) <= c * h``: the factor is
1/c rounded up by four ulps (:func:`inverse_step`), so |g| times it, rounded, is still
≥ |g|/c, and c times that, rounded, ≥ |g| (rounding is monotone), for every product in
the normal range. The price: a row within ~5 ulps of the bound (|g| ≈ c·h) may be
raised by those ulps. A subnormal product (|g| < 2.2e-308·c, far below any gradient a
booster can use) may fall short of the bound by its last unit. Exact versions of both
(a compare-and-select instead of the max; a subnormal fix-up) slow the vectorised
focal row loop down measurably (docs/max_step.md), for no difference a booster sees.
"""

import numpy as np
from numba import njit


def inverse_step(max_step):
    """1/max_step rounded up by four ulps, for :func:`bound_hess`; 0.0 (no bound) for
    ``None``. ``max_step`` is validated by the caller (finite, > 0)."""
    if max_step is None:
        return 0.0
    with np.errstate(over="ignore"):
        r = np.float64(1.0) / np.float64(max_step)
    for _ in range(4):
        r = np.nextafter(r, np.inf)
    # a subnormal max_step would give inf, and 0·inf = NaN for rows with g = 0
    return float(min(r, np.finfo(np.float64).max))


@njit(cache=True, nogil=True, inline="always")
def bound_hess(g, h, inv_step):
    """max(h, |g|·inv_step), with ``inv_step`` from :func:`inverse_step` (callers skip
    it for 0, no bound). No branch: a caller's row loop still vectorises.

    numba's cache does not see a change of this function in its callers (``focal``,
    ``fbeta_surrogate``): delete their cache files after editing it."""
    return max(h, abs(g) * inv_step)
