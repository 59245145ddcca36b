"""LambdaRank's gradients for one long query of NDCG whose pair weights read every
row's rank: LightGBM's untruncated discount (``norm=True``), the LambdaLoss weightings,
or a truncation of at least half the query (where the no-sort kernel of
:mod:`~gbrank._kernels.lambdarank_long` would gain nothing).

The full-sort path of :mod:`~gbrank._kernels.lambdarank` keeps about nine n-row arrays
for such a query (an int64 order and NumPy's merge buffer, labels, scores,
exponentials, gains and discounts in rank order, the untruncated discount table).
Here the only n-row array beside the outputs is the order itself, int32, from a radix
sort of the row indices (:func:`~gbrank._kernels._radix.descending_order_into`). The
pairs (top position a < k, any position b > a) are then taken in blocks of
:data:`BLOCK` positions: each block gathers its rows' labels, scores and exponentials
through the order, makes the discounts 1/log2(p + 2) of its positions (and of the
distances p − a the LOSS2 weight reads) in a small table, runs every top row against
its positions in one branch-free loop, and scatters its rows' sums to the outputs.
Blocks own their rows, so they run on threads (in :data:`N_CHUNKS` chunks); the top
rows' own sums are kept per chunk and added at the end.

The pair weights and pair terms are those of the grouped NDCG sweep of
:mod:`~gbrank._kernels.lambdarank`: the same inlined loop,
:func:`~gbrank._kernels._pair.ndcg_pairs`, with the block's arrays.
"""

import numpy as np
from numba import njit, prange, types
from numba.core.errors import TypingError
from numba.extending import overload

from gbrank._kernels._pair import ndcg_pairs
from gbrank._kernels._radix import descending_order_into
from gbrank._kernels._sigmoid import MAX_EXP_SPREAD, exp_scaled_into
from gbrank._kernels._variant import compile_variant
from gbrank._kernels.delta import discounts, ideal_dcg

# Blocks of BLOCK positions (the block's labels, scores, exponentials, gains, truncated
# discounts, g, h and its discount table stay in L1/L2 while the top rows pass over
# them), dealt to N_CHUNKS chunks, as in the no-sort kernel.
from gbrank._kernels.lambdarank_long import BLOCK, N_CHUNKS, finish_top_rows


@njit(cache=True, nogil=True)
def _start(y, s, k, sigma, gain_tab):
    """The order (int32), the top rows' values and the whole query's scalars."""
    n = y.size
    order = np.empty(n, dtype=np.int32)
    descending_order_into(s, order, np.empty(n, dtype=np.int32))
    m = min(k, n - 1)
    smax = s[order[0]]
    smin = s[order[n - 1]]
    fast = sigma * (smax - smin) <= MAX_EXP_SPREAD
    mid = 0.5 * (smax + smin)
    disc_k = discounts(min(k, n))
    ideal = ideal_dcg(y, gain_tab, k, disc_k)
    c = 1.0 / ideal if ideal > 0.0 else 0.0
    # Per top position a: gain, discount (a < k: truncated and untruncated agree),
    # label, score, exponential.
    top = np.empty((5, m))
    for a in range(m):
        r = order[a]
        top[0, a] = gain_tab[int(y[r])]
        top[1, a] = disc_k[a]
        top[2, a] = y[r]
        top[3, a] = s[r]
    if fast:
        exp_scaled_into(top[3], sigma, mid, top[4], np.empty(m, dtype=np.int64))
    sums = np.zeros((N_CHUNKS, m, 3))
    return order, m, fast, mid, c, top, sums


@njit(cache=True, nogil=True, fastmath=True, error_model="numpy")
def _pairs(scheme, mu, fast, x0, x1, la, ea, saa, c, sigma, score_norm, lab, sb, e, gain,
           dtr, untr, dl, dr, g, h):
    """Top position a (gain ``x1``, discount ``x0``, label ``la``, exponential ``ea``,
    score ``saa``) against block rows below it (the slices passed), through
    :func:`~gbrank._kernels._pair.ndcg_pairs`; returns a's (gradient sum, Hessian sum,
    Σσwρ). ``scheme`` and ``fast`` are constants at the calls, for each of which numba
    compiles this function on its own (with ``fast`` branch-free and vectorised; without,
    one exp per pair for a query whose score spread rules out row exponentials)."""
    # a < k: its truncated and untruncated discounts agree (LOSS1 reads the latter).
    return ndcg_pairs(scheme, mu, fast, la, ea, saa, x0, x1, x1 * c * x0, c, lab, sb, e,
                      gain, dtr, untr, dl, dr, sigma, score_norm, g, h)


@njit(cache=True, nogil=True)
def _chunk(ch, y, s, order, k, m, sigma, gain_tab, lgb_discount, scheme, mu, fast, mid,
           score_norm, c, top, grad, hess, sums):
    """The blocks of chunk ``ch`` (an equal share of all blocks). A block: positions
    ``blk·BLOCK …`` against every top position above them; writes their rows' outputs
    (every row of the block) and adds the top rows' partial sums to ``sums[ch]``
    (m × 3). ``scheme`` and ``fast``: constants of the caller (:func:`_pairs`)."""
    n_blocks = (y.size + BLOCK - 1) // BLOCK
    acc = sums[ch]
    for blk in range(ch * n_blocks // N_CHUNKS, (ch + 1) * n_blocks // N_CHUNKS):
        n = y.size
        p0 = blk * BLOCK
        p1 = min(n, p0 + BLOCK)
        nb = p1 - p0
        # 1/log2(t + 2) for t = base … p1 − 1: the block's positions and the distances
        # p − a − 1, p − a of LOSS2 (a < m).
        base = max(0, p0 - m - 1)
        table = np.empty(p1 - base)
        for t in range(base, p1):
            table[t - base] = 1.0 / np.log2(t + 2.0)
        lab = np.empty(nb)
        sb = np.empty(nb)
        e = np.empty(nb)
        gain = np.empty(nb)
        dtr = np.empty(nb)
        g = np.zeros(nb)
        h = np.zeros(nb)
        for j in range(nb):
            r = order[p0 + j]
            lab[j] = y[r]
            sb[j] = s[r]
            gain[j] = gain_tab[int(y[r])]
            p = p0 + j
            dtr[j] = table[p - base] if (p < k or lgb_discount) else 0.0
        if fast:
            exp_scaled_into(sb, sigma, mid, e, np.empty(nb, dtype=np.int64))
        for a in range(m):
            j0 = max(0, a + 1 - p0)
            if j0 >= nb:
                continue
            untr = table[p0 + j0 - base:p1 - base]
            dl = table[p0 + j0 - a - 1 - base:p1 - a - 1 - base]
            dr = table[p0 + j0 - a - base:p1 - a - base]
            g1, h1, t1 = _pairs(scheme, mu, fast, top[1, a], top[0, a], top[2, a], top[4, a],
                                top[3, a], c, sigma, score_norm, lab[j0:], sb[j0:], e[j0:],
                                gain[j0:], dtr[j0:], untr, dl, dr, g[j0:], h[j0:])
            acc[a, 0] += g1
            acc[a, 1] += h1
            acc[a, 2] += t1
        for j in range(nb):
            r = order[p0 + j]
            grad[r] = g[j]
            hess[r] = h[j]


def _ranked_code(SCHEME, THREADS, FAST):  # noqa: N803
    """One NDCG query of at least 2 rows for weighting ``SCHEME`` (a closure over it,
    ``THREADS``: the chunks of blocks in a ``prange`` loop, compiled with
    ``parallel=True``, and ``FAST``: ρ from row exponentials, which a query whose score
    spread exceeds ``MAX_EXP_SPREAD`` rules out: then it returns False with the outputs
    untouched, for the form without ``FAST``, compiled only for such a query; True when
    done). The arguments are :func:`ranked_query_grad_hess`'s from ``y`` on."""

    def one_query(y, s, k, sigma, gain_tab, norm, lgb_discount, mu, grad, hess):
        order, m, fast, mid, c, top, sums = _start(y, s, k, sigma, gain_tab)
        if FAST and not fast:
            return False
        score_norm = norm and s[order[0]] != s[order[y.size - 1]]
        # THREADS is read here, not only passed to the decorator: numba keys a cached
        # closure by the values it reads, and the serial and threaded forms must not
        # share an entry.
        if THREADS:
            for ch in prange(N_CHUNKS):
                _chunk(ch, y, s, order, k, m, sigma, gain_tab, lgb_discount, SCHEME, mu,
                       FAST, mid, score_norm, c, top, grad, hess, sums)
        else:
            for ch in range(N_CHUNKS):
                _chunk(ch, y, s, order, k, m, sigma, gain_tab, lgb_discount, SCHEME, mu,
                       FAST, mid, score_norm, c, top, grad, hess, sums)
        finish_top_rows(m, order, sums, 0.0, norm, grad, hess)
        return True

    return one_query


def ranked_query_grad_hess(scheme, fast, y, s, k, sigma, gain_tab, norm, lgb_discount, mu,
                           grad, hess):
    """Gradients and Hessians of one NDCG query of at least 2 rows into ``grad`` and
    ``hess`` (every row written), on one thread; False (the outputs untouched) when
    ``fast`` and the query's score spread rules out row exponentials, else True. For
    jitted code, with literal ``scheme`` and ``fast``."""
    raise TypeError("ranked_query_grad_hess is called from jitted code only")


@overload(ranked_query_grad_hess, prefer_literal=True, jit_options={"nogil": True})
def _ranked_query_grad_hess_impl(scheme, fast, y, s, k, sigma, gain_tab, norm, lgb_discount,
                                 mu, grad, hess):
    if not (isinstance(scheme, types.IntegerLiteral)
            and isinstance(fast, types.BooleanLiteral)):
        raise TypingError("ranked_query_grad_hess needs literal scheme and fast")
    # The compiled function Python calls for one query: shared, compiled once.
    kernel = ranked_query_kernel(scheme.literal_value, False, fast.literal_value)

    def one_query(scheme, fast, y, s, k, sigma, gain_tab, norm, lgb_discount, mu, grad,
                  hess):
        return kernel(y, s, k, sigma, gain_tab, norm, lgb_discount, mu, grad, hess)
    return one_query


# Compiled forms of one query called from Python, made on first use.
_ONE_QUERY: dict = {}


def ranked_query_kernel(scheme, threads, fast=True):
    """:func:`ranked_query_grad_hess` for ``scheme`` and ``fast`` as a compiled function
    called with its arguments from ``y`` on; with ``threads`` the blocks run on
    threads."""
    key = (int(scheme), bool(threads), bool(fast))
    kernel = _ONE_QUERY.get(key)
    if kernel is None:
        kernel = _ONE_QUERY[key] = compile_variant(_ranked_code(*key), key,
                                                   parallel=key[1])
    return kernel


def ranked_query(scheme, threads, *args):
    """One ranked query from Python (the arguments of :func:`ranked_query_grad_hess`
    from ``y`` on): the fast form, then, for a query whose score spread rules out row
    exponentials (rare: a diverging fit), the form with one exp per pair."""
    if not ranked_query_kernel(scheme, threads)(*args):
        ranked_query_kernel(scheme, threads, False)(*args)
