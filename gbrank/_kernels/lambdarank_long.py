"""LambdaRank's gradients for one long query (group-less data) without sorting it.

docs/contract.md admits only the pairs whose higher-ranked row is in the top k. For a row ranked
below k, every |ΔZ| formula of :mod:`~gbrank._kernels.delta` reads nothing of it but
one value u of its label: its NDCG discount is 0, its ERR and MAP prefix terms are the
constants of the first k ranks, and MRR only asks whether its rank exceeds k. Each
formula then factorises (top position a, 1-based A = a + 1, row b below the top k):

- NDCG: |G_a − G_b| · D_a / IDCG@k, u = G (the gain);
- ERR: |R_b − R_a| · |Π_a / A − (S_k − S_{A}) / (1 − R_a)|, u = R (S_x the ERR sum of
  the first x ranks, Π_a the product of 1 − R above a);
- MAP: |rel_a − rel_b| · |(H_a + 1)/A + T_k − T_A| / min(#rel, k), u = rel (H_a the hits
  above a, T_x the sum of 1/rank over the relevant ranks among the first x);
- MRR: |rel_a − rel_b| · c_a with c_a = 1/A − MRR@k when a is not relevant and A is
  above the first relevant rank; 1/A − 1/(second relevant rank, 0 if beyond k) when a
  is the first relevant; 0 otherwise; u = rel;

so w_ab = α_a |u_a − u_b| (+ β_a |v_a − v_b| for the |ΔNDCG| smoothing share, v the
NDCG gain 2^l − 1), with α_a, β_a computed once per top row. The rows then need no
ranks beyond k, no copies in rank order and no scatter back: an O(n) selection of the
top k (stable, LightGBM's tie rule; for k above the selection buffer's
``BUFFER_MAX_K``, the head of an int32 radix order, whose scratch is freed before the
pairs), then k × n pairs in input order, in blocks of rows
whose exponentials e and values u, v are made once per block (a table lookup inside the
pair loop stops LLVM from vectorising it: measured 6x slower). No n-row array beside
the two outputs, where the full sort of :mod:`lambdarank` holds about six (order,
labels, scores and exponentials in rank order, two or three prefix rows).

Only the |ΔZ| weighting with the truncated discount and an optional |ΔNDCG| smoothing
share: LightGBM's untruncated discount and the LambdaLoss weightings read every row's
rank (:mod:`~gbrank._kernels.lambdarank_ranked`). Every output row is written (no
zeroing needed).
"""

import numpy as np
from numba import njit, prange, types
from numba.core.errors import TypingError
from numba.extending import overload

from gbrank._kernels._pair import pair_update, rho_rows, rho_spread
from gbrank._kernels._radix import descending_order_into
from gbrank._kernels._sigmoid import MAX_EXP_SPREAD, exp_scaled_into
from gbrank._kernels._topk import top_k_into_long
from gbrank._kernels._variant import compile_variant
from gbrank._kernels.delta import (
    ERR,
    LGB_NORM_EPS,
    MAP,
    NDCG,
    ideal_dcg,
    pair_delta,
    prefix_arrays,
)

# Blocks are dealt to this many chunks (run on threads); each chunk keeps one set of the
# top rows' partial sums, so their memory does not grow with n.
N_CHUNKS = 64

# Rows per block: y, s, grad, hess and the block's e, u, v (7 × 8 × 512 = 28 kB) stay
# in L1 while the k top rows pass over them.
BLOCK = 512


@njit(cache=True, nogil=True, inline="always")
def _coefficient(metric, a, k, pre, sc):
    """α_a of the module doc: |ΔZ| of top position a against any row below the top k
    is α_a · |u_a − u_b|. ``pre``/``sc``: the prefix arrays of the top k rows, with the
    whole query's 1/IDCG@k (NDCG) or 1/min(#rel, k) (MAP) in ``sc[0]``."""
    A = a + 1.0
    if metric == NDCG:
        return pre[0, a] * sc[0]
    if metric == ERR:
        return abs(pre[1, a] / A - (pre[2, k] - pre[2, a + 1]) / (1.0 - pre[0, a]))
    if metric == MAP:
        return abs((pre[1, a] + 1.0) / A + pre[2, k] - pre[2, a + 1]) * sc[0]
    # MRR: sc = (first relevant rank, second, MRR@k), inf when absent.
    if pre[0, a] == 0.0:
        return 1.0 / A - sc[2] if A < sc[0] else 0.0
    if A == sc[0]:
        return 1.0 / A - (1.0 / sc[1] if sc[1] <= k else 0.0)
    return 0.0


@njit(cache=True, nogil=True, inline="always")
def _u(metric, label, gain_tab, threshold):
    """The value u of a label that |ΔZ| reads below the top k (module doc)."""
    if metric == NDCG or metric == ERR:
        return gain_tab[int(label)]
    return 1.0 if label >= threshold else 0.0


@njit(cache=True, nogil=True, fastmath=True, error_model="numpy")
def _segment(fast, y, s, e, u, v, lo, hi, off, la, ea, sa, alpha, beta, ua, va, smoothed,
             sigma, score_norm, grad, hess):
    """Top row (label ``la``, exponential ``ea``, score ``sa``, coefficients) against
    rows ``lo … hi − 1``, none of them in the top k; ``e``, ``u``, ``v`` hold their
    values from block position ``off``. Returns the top row's (Σλ, Σh, Σσwρ). ``fast``
    is a constant at the calls, for each of which numba compiles this function on its
    own: with it ρ comes from the exponentials and the loop is branch-free, so LLVM
    vectorises it (``error_model="numpy"``: no zero-division branch; slices from 0);
    without it, one exp per pair (a query whose score spread rules out exponentials,
    ``e`` unread)."""
    y_b = y[lo:hi]
    s_b = s[lo:hi]
    e_b = e[off:off + hi - lo]
    u_b = u[off:off + hi - lo]
    v_b = v[off:off + hi - lo]
    g_b = grad[lo:hi]
    h_b = hess[lo:hi]
    gsum = 0.0
    hsum = 0.0
    tot = 0.0
    for j in range(y_b.size):
        lb = y_b[j]
        w = alpha * abs(ua - u_b[j])
        if smoothed:
            w += beta * abs(va - v_b[j])
        w = w if la != lb else 0.0
        if score_norm:
            w /= LGB_NORM_EPS + abs(sa - s_b[j])
        up = la > lb
        if fast:
            rho, rq = rho_rows(up, ea, e_b[j])
        else:
            rho, rq = rho_spread(up, sigma * (sa - s_b[j]))
        da, ha, lam = pair_update(w, up, rho, rq, sigma, g_b, h_b, j)
        gsum += da
        hsum += ha
        tot += lam
    return gsum, hsum, tot


@njit(cache=True, nogil=True, inline="always")
def _count_below(tops, x):
    """How many of the sorted ``tops`` are below ``x`` (``np.searchsorted(tops, x)``)."""
    lo = 0
    hi = tops.size
    while lo < hi:
        mid = (lo + hi) // 2
        if tops[mid] < x:
            lo = mid + 1
        else:
            hi = mid
    return lo


@njit(cache=True, nogil=True)
def _block(y, s, fast, mid, blk, metric, gain_tab, threshold, ngain, smoothed, sigma,
           score_norm, tops, idx, lab, e_top, coef, grad, hess, acc):
    """Rows of block ``blk`` against every top row: zeroes and fills their outputs
    (top rows included, which no segment touches) and adds the top rows' partial
    (Σλ, Σh, Σσwρ) to ``acc`` (k × 3). ``tops``: the top rows in row order; ``fast``
    a constant of the caller (:func:`_segment`). (A function of its own: merged into
    the chunk loop it ran slower.)"""
    lo = blk * BLOCK
    hi = min(y.size, lo + BLOCK)
    e = np.empty(hi - lo)
    if fast:
        exp_scaled_into(s[lo:hi], sigma, mid, e, np.empty(hi - lo, dtype=np.int64))
    u = np.empty(hi - lo)
    v = np.empty(hi - lo if smoothed else 0)
    for r in range(lo, hi):
        grad[r] = 0.0
        hess[r] = 0.0
        u[r - lo] = _u(metric, y[r], gain_tab, threshold)
        if smoothed:
            v[r - lo] = ngain[int(y[r])]
    # Segments of the block between top rows (almost always the whole block).
    first = _count_below(tops, lo)
    last = _count_below(tops, hi)
    for a in range(idx.size):
        i = idx[a]
        gs = 0.0
        hs = 0.0
        ts = 0.0
        start = lo
        for t in range(first, last + 1):
            stop = tops[t] if t < last else hi
            if stop > start:
                g1, h1, t1 = _segment(fast, y, s, e, u, v, start, stop, start - lo, lab[a],
                                      e_top[a], s[i], coef[0, a], coef[1, a], coef[2, a],
                                      coef[3, a], smoothed, sigma, score_norm, grad, hess)
                gs += g1
                hs += h1
                ts += t1
            start = stop + 1
        acc[a, 0] += gs
        acc[a, 1] += hs
        acc[a, 2] += ts


@njit(cache=True, nogil=True, inline="always")
def _chunk(ch, y, s, fast, mid, metric, gain_tab, threshold, ngain, smoothed, sigma,
           score_norm, tops, idx, lab, e_top, coef, grad, hess, sums):
    """The blocks of chunk ``ch`` (an equal share of all blocks), sums into ``sums[ch]``."""
    n_blocks = (y.size + BLOCK - 1) // BLOCK
    for blk in range(ch * n_blocks // N_CHUNKS, (ch + 1) * n_blocks // N_CHUNKS):
        _block(y, s, fast, mid, blk, metric, gain_tab, threshold, ngain, smoothed, sigma,
               score_norm, tops, idx, lab, e_top, coef, grad, hess, sums[ch])


@njit(cache=True, nogil=True)
def finish_top_rows(k, rows, sums, tot, norm, grad, hess):
    """Adds the chunk sums ``sums[chunk, a]`` = (Σλ, Σh, Σσwρ) of top position a (row
    ``rows[a]``) to the outputs, and applies LightGBM's norm factor with the pairs'
    total S = 2(``tot`` + Σ Σσwρ). Shared with :mod:`~gbrank._kernels.lambdarank_ranked`."""
    for a in range(k):
        g = 0.0
        h = 0.0
        for ch in range(sums.shape[0]):
            g += sums[ch, a, 0]
            h += sums[ch, a, 1]
            tot += sums[ch, a, 2]
        grad[rows[a]] += g
        hess[rows[a]] += h
    total = 2.0 * tot
    if norm and total > 0.0:
        factor = np.log2(1.0 + total) / total
        for r in range(grad.size):
            grad[r] *= factor
            hess[r] *= factor


@njit(cache=True, nogil=True, inline="always")
def _sorted_rows(idx):
    """The row indices ``idx`` in ascending order (insertion sort: k ≤ BUFFER_MAX_K)."""
    out = idx.copy()
    for i in range(1, out.size):
        v = out[i]
        j = i - 1
        while j >= 0 and out[j] > v:
            out[j + 1] = out[j]
            j -= 1
        out[j + 1] = v
    return out


def _long_code(M, DEEP, SMOOTHED, THREADS, FAST):  # noqa: N803
    """One long query of metric ``M``, as a closure over its constants so that numba
    drops every other metric's code before typing it: ``DEEP``, k above
    ``BUFFER_MAX_K`` (the top k from the int32 radix order, else the selection
    buffer); ``SMOOTHED``, a smoothing share ``smooth`` > 0; ``THREADS``, the chunks of
    blocks in a ``prange`` loop (compiled with ``parallel=True``); ``FAST``, ρ from row
    exponentials e = exp(σ(s − mid)) (as row_exponentials_into), which a query whose
    score spread exceeds ``MAX_EXP_SPREAD`` rules out: then it returns False with the
    outputs untouched, for the form without ``FAST`` (one exp per pair, compiled only
    for such a query), which returns True as the fast form does when it is done. The
    arguments are :func:`long_query_grad_hess`'s from ``y`` on."""

    def long_query(y, s, k, sigma, gain_tab, threshold, norm, smooth, disc, grad, hess):
        n = y.size
        # Extremes in one loop (finite scores: the values of s.max() and s.min()).
        smax = s[0]
        smin = s[0]
        for r in range(1, n):
            v = s[r]
            if v > smax:
                smax = v
            if v < smin:
                smin = v
        if FAST and sigma * (smax - smin) > MAX_EXP_SPREAD:
            return False
        score_norm = norm and smax != smin
        mid = 0.5 * (smax + smin)
        # Top k, their row exponentials, prefix arrays and per-top-row coefficients
        # (module doc). The other rows' exponentials are made block by block (no n-row
        # array).
        idx = np.empty(k, dtype=np.int64)
        val = np.empty(k)
        if DEEP:
            # Too deep for the selection buffer: the head of the int32 radix order (one
            # n-row array's worth of scratch while it sorts, freed before the pairs).
            order = np.empty(n, dtype=np.int32)
            descending_order_into(s, order, np.empty(n, dtype=np.int32))
            for a in range(k):
                idx[a] = order[a]
                val[a] = s[order[a]]
            order = np.empty(0, dtype=np.int32)  # freed before the pairs
            tops = np.sort(idx)
        else:
            top_k_into_long(s, 0, n, k, idx, val)
            tops = _sorted_rows(idx)
        e_top = np.empty(k)
        if FAST:
            exp_scaled_into(val, sigma, mid, e_top, np.empty(k, dtype=np.int64))

        lab = np.empty(k)
        for a in range(k):
            lab[a] = y[idx[a]]
        pre = np.empty((3, k + 1))
        sc = np.empty(4)
        prefix_arrays(M, lab, k, gain_tab, threshold, False, disc, pre, sc)
        # Whole-query scalars that the top k alone cannot give.
        if M == NDCG:
            ideal = ideal_dcg(y, gain_tab, k, disc)
            sc[0] = 1.0 / ideal if ideal > 0.0 else 0.0
        elif M == MAP:
            rel = 0
            for r in range(n):
                rel += y[r] >= threshold
            hits = min(float(rel), float(k))
            sc[0] = 1.0 / hits if hits > 0.0 else 0.0
        # The smoothing share is |ΔNDCG| with gain 2^l − 1 on the integer grades (a
        # share is Z other than NDCG's: under NDCG the mixture is |ΔZ| itself).
        ngain = gain_tab
        pre_n = np.empty((2, k + 1))
        sc_n = np.empty(4)
        if SMOOTHED:
            top = 0
            for r in range(n):
                top = max(top, int(y[r]))
            ngain = np.empty(top + 1)
            for r in range(top + 1):
                ngain[r] = np.exp2(r * 1.0) - 1.0
            prefix_arrays(NDCG, lab, k, ngain, threshold, False, disc, pre_n, sc_n)
            ideal = ideal_dcg(y, ngain, k, disc)
            sc_n[0] = 1.0 / ideal if ideal > 0.0 else 0.0
        # Per top position: α_a, β_a, u_a, v_a.
        coef = np.zeros((4, k))
        for a in range(k):
            coef[0, a] = (1.0 - smooth) * _coefficient(M, a, k, pre, sc)
            coef[2, a] = _u(M, lab[a], gain_tab, threshold)
            if SMOOTHED:
                coef[1, a] = smooth * _coefficient(NDCG, a, k, pre_n, sc_n)
                coef[3, a] = ngain[int(lab[a])]
        sums = np.zeros((N_CHUNKS, k, 3))

        # Blocks first: they zero the outputs of all their rows, top rows included.
        # Each block owns its rows' outputs and each chunk of blocks one slice of the
        # partial sums: no two threads write one place.
        # THREADS is read here, not only passed to the decorator: numba keys a cached
        # closure by the values it reads, and the serial and threaded forms must not
        # share an entry.
        if THREADS:
            for ch in prange(N_CHUNKS):
                _chunk(ch, y, s, FAST, mid, M, gain_tab, threshold, ngain, SMOOTHED, sigma,
                       score_norm, tops, idx, lab, e_top, coef, grad, hess, sums)
        else:
            for ch in range(N_CHUNKS):
                _chunk(ch, y, s, FAST, mid, M, gain_tab, threshold, ngain, SMOOTHED, sigma,
                       score_norm, tops, idx, lab, e_top, coef, grad, hess, sums)

        # The pairs among the top k (positions a < b < k).
        tot = 0.0
        for a in range(k):
            la = lab[a]
            i = idx[a]
            for b in range(a + 1, k):
                lb = lab[b]
                if la == lb:
                    continue
                w = pair_delta(M, a, b, k, pre, sc)
                if SMOOTHED:
                    w = (1.0 - smooth) * w + smooth * pair_delta(NDCG, a, b, k, pre_n, sc_n)
                up = la > lb
                j = idx[b]
                if score_norm:
                    w /= LGB_NORM_EPS + abs(s[i] - s[j])
                if FAST:
                    rho, rq = rho_rows(up, e_top[a], e_top[b])
                else:
                    rho, rq = rho_spread(up, sigma * (s[i] - s[j]))
                da, ha, lam = pair_update(w, up, rho, rq, sigma, grad, hess, j)
                grad[i] += da
                hess[i] += ha
                tot += lam
        finish_top_rows(k, idx, sums, tot, norm, grad, hess)
        return True

    return long_query


def long_query_grad_hess(metric, deep, smoothed, fast, y, s, k, sigma, gain_tab, threshold,
                         norm, smooth, disc, grad, hess):
    """Gradients and Hessians of one query of more than ``2 k`` rows into ``grad`` and
    ``hess`` (``disc``: discounts of at least k positions), on one thread; False (the
    outputs untouched) when ``fast`` and the query's score spread rules out row
    exponentials, else True. For jitted code, with literal ``metric``, ``deep`` (k >
    ``BUFFER_MAX_K``), ``smoothed`` (``smooth`` > 0) and ``fast``: the code of that case
    alone compiles (:func:`_long_code`)."""
    raise TypeError("long_query_grad_hess is called from jitted code only")


@overload(long_query_grad_hess, prefer_literal=True, jit_options={"nogil": True})
def _long_query_grad_hess_impl(metric, deep, smoothed, fast, y, s, k, sigma, gain_tab,
                               threshold, norm, smooth, disc, grad, hess):
    flags = (metric, deep, smoothed, fast)
    if not all(isinstance(f, types.Literal) for f in flags):
        raise TypingError("long_query_grad_hess needs literal metric, deep, smoothed, fast")
    # The compiled function Python calls for one query: shared, compiled once.
    m, d, sm, f = (f.literal_value for f in flags)
    kernel = long_query_kernel(m, d, sm, False, f)

    def one_query(metric, deep, smoothed, fast, y, s, k, sigma, gain_tab, threshold, norm,
                  smooth, disc, grad, hess):
        return kernel(y, s, k, sigma, gain_tab, threshold, norm, smooth, disc, grad, hess)
    return one_query


# Compiled forms of one long query called from Python, made on first use.
_ONE_QUERY: dict = {}


def long_query_kernel(metric, deep, smoothed, threads, fast=True):
    """:func:`long_query_grad_hess` for ``metric``, ``deep``, ``smoothed`` and ``fast``
    as a compiled function called with its arguments from ``y`` on; with ``threads``
    the blocks run on threads (each block owns its rows' outputs and each chunk of
    blocks one slice of the partial sums: no two threads write one place)."""
    key = (int(metric), bool(deep), bool(smoothed), bool(threads), bool(fast))
    kernel = _ONE_QUERY.get(key)
    if kernel is None:
        kernel = _ONE_QUERY[key] = compile_variant(_long_code(*key), key,
                                                   parallel=key[3])
    return kernel


def long_query(metric, deep, smoothed, threads, *args):
    """One long query from Python (the arguments of :func:`long_query_grad_hess` from
    ``y`` on): the fast form, then, for a query whose score spread rules out row
    exponentials (rare: a diverging fit), the form with one exp per pair."""
    if not long_query_kernel(metric, deep, smoothed, threads)(*args):
        long_query_kernel(metric, deep, smoothed, threads, False)(*args)
