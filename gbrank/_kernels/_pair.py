"""LambdaRank's pair term and NDCG's pair weights, written once for every LambdaRank
kernel: the grouped sweeps and the pair-by-pair pass of :mod:`~gbrank._kernels.lambdarank`,
the blocks of :mod:`~gbrank._kernels.lambdarank_ranked`, the segments and top pairs of
:mod:`~gbrank._kernels.lambdarank_long` (docs/contract.md, section 5).

A pair of rows a and b of one query has a weight w (0 when their labels are equal) and
``up`` when a has the higher label; with ρ = 1/(1 + e^{σ(s_hi − s_lo)}) and q = 1 − ρ,

    λ = σ w ρ:  the higher row's gradient loses λ, the lower row's gains it;
    both Hessians gain σ² w ρ q.

ρ and ρq come from row exponentials (:func:`rho_rows`, no exp per pair) or, for a query
whose score spread rules those out, from one exp per pair (:func:`rho_spread`).
:func:`pair_update` adds row b's part in place and returns row a's, so that a loop over
the rows b of one top row a keeps a's sums in registers; :func:`ndcg_pairs` is that loop
for the NDCG family of weights (:func:`ndcg_weight`: |ΔNDCG| and the LambdaLoss
weightings).

Every function here is ``inline="always"``: numba copies it into the caller, whose loop
is compiled with the caller's ``fastmath`` and ``error_model="numpy"`` and stays
branch-free, so LLVM vectorises it (a call per pair would not be vectorised).
"""

from numba import njit

from gbrank._kernels._sigmoid import rho_pair
from gbrank._kernels.delta import LAMBDARANK, LGB_NORM_EPS, LOSS1, LOSS2PP


@njit(cache=True, nogil=True, inline="always")
def rho_rows(up, ea, eb):
    """(ρ, ρq) of the pair (a, b) from the rows' exponentials e = exp(σ(s − mid)):
    e_lo / (e_a + e_b) and the product of e_a / (e_a + e_b) and e_b / (e_a + e_b),
    which does not depend on which row is the higher."""
    inv = 1.0 / (ea + eb)
    return (eb if up else ea) * inv, (eb * inv) * (ea * inv)


@njit(cache=True, nogil=True, inline="always")
def rho_spread(up, d):
    """(ρ, ρq) of the pair (a, b) from d = σ(s_a − s_b), one exp
    (:func:`~gbrank._kernels._sigmoid.rho_pair`, neither overflow nor cancellation)."""
    rho, q = rho_pair(d if up else -d)
    return rho, rho * q


@njit(cache=True, nogil=True, inline="always")
def pair_update(w, up, rho, rq, sigma, g, h, j):
    """Adds the pair (a, b)'s gradient and Hessian terms (module doc; ``rq`` = ρq) to
    row b's ``g[j]``, ``h[j]``; returns row a's (gradient term, Hessian term) and σwρ,
    the pair's half of LightGBM's norm sum S."""
    lam = sigma * w * rho
    d = lam if up else -lam
    hh = sigma * sigma * w * rq
    g[j] += d
    h[j] += hh
    return -d, hh, lam


@njit(cache=True, nogil=True, inline="always")
def ndcg_weight(scheme, mu, up, j, x0, x1, ga, c, gain, dtr, untr, dl, dr):
    """The NDCG weight of the pair (a, b) under ``scheme`` (the ``lambdarank`` module
    doc; LOSS2PP with ``mu``), b being entry ``j`` of the arrays: ``x0``, ``x1`` a's
    discount and gain, ``ga`` = x1 · c · (a's untruncated discount), ``c`` = 1/IDCG@k;
    ``gain``, ``dtr``, ``untr`` b's gain, discount (truncated at k, or LightGBM's) and
    untruncated discount; ``dl[j] − dr[j]`` = 1/D(d) − 1/D(d + 1) for d = b − a. Only
    the arrays the scheme reads are read."""
    if scheme == LAMBDARANK:
        return abs(x1 - gain[j]) * abs(x0 - dtr[j]) * c
    if scheme == LOSS1:
        return ga if up else gain[j] * c * untr[j]
    w = abs(x1 - gain[j]) * c * (dl[j] - dr[j])
    if scheme == LOSS2PP:
        w = mu * w + abs(x1 - gain[j]) * abs(x0 - dtr[j]) * c
    return w


@njit(cache=True, nogil=True, inline="always")
def ndcg_pairs(scheme, mu, fast, la, ea, sa, x0, x1, ga, c, lab, s, e, gain, dtr, untr, dl,
               dr, sigma, score_norm, g, h):
    """Top row a (label ``la``, exponential ``ea``, score ``sa``; ``x0``, ``x1``, ``ga``,
    ``c`` as :func:`ndcg_weight`) against the rows b of the slices, which start at 0:
    their labels, scores, exponentials, the arrays of :func:`ndcg_weight` and their
    outputs ``g``, ``h``. ``fast``: ρ from the exponentials, else one exp per pair
    (``e`` unread). Returns a's (gradient sum, Hessian sum, Σσwρ). With ``scheme`` and
    ``fast`` constants of the caller the loop has no data-dependent branch."""
    gsum = 0.0
    hsum = 0.0
    tot = 0.0
    for j in range(lab.size):
        lb = lab[j]
        up = la > lb
        w = ndcg_weight(scheme, mu, up, j, x0, x1, ga, c, gain, dtr, untr, dl, dr)
        w = w if la != lb else 0.0
        if score_norm:
            w /= LGB_NORM_EPS + abs(sa - s[j])
        if fast:
            rho, rq = rho_rows(up, ea, e[j])
        else:
            rho, rq = rho_spread(up, sigma * (sa - s[j]))
        da, ha, lam = pair_update(w, up, rho, rq, sigma, g, h, j)
        gsum += da
        hsum += ha
        tot += lam
    return gsum, hsum, tot
