"""LambdaRank: RankNet pairs weighted by |ΔZ|, only pairs with the higher-ranked row
in the top k. O(n log n + n·k) per query (one ordering, then k rows against the rest;
queries of up to ``RANK_SORT_MAX`` rows are ordered by counting ranks, O(n²) branch-free
comparisons, which beat a comparison sort at that size). Longer queries whose weights
read no rank below k go to :mod:`~gbrank._kernels.lambdarank_long` (O(n·k), no sort, no
n-row scratch); longer NDCG queries whose weights read every rank (LightGBM's discount,
the LambdaLoss weightings, or a truncation of at least half the query) to
:mod:`~gbrank._kernels.lambdarank_ranked` (an int32 radix order, pairs in blocks of
positions); the rest (ERR, MAP, MRR truncated at half the query or deeper) to NumPy's
argsort, as does the local loss. Queries run in chunks with scratch allocated once per
chunk, serial or threaded by ``_threads.dispatch``; one long query alone runs its blocks
on threads.

One kernel serves gradients and the local loss: the ranking, |ΔZ| and the optional
LightGBM rescalings are taken at scores ``at``; the pair terms at scores ``s``
(``at is s`` when the booster asks for gradients).

Pair weights other than |ΔZ| (SPEC, "LambdaLoss weightings"; ranks r from 1, D(r) =
log2(1 + r), G = gain / IDCG@k, the pair (i, j) with l_i > l_j):

- ``LOSS1``: w_ij = G_i / D(r_i) (NDCG-Loss1: a weight of the higher-labelled row);
- ``LOSS2``: w_ij = |G_i − G_j| · (1/D(|r_i − r_j|) − 1/D(|r_i − r_j| + 1));
- ``LOSS2PP``: μ · (the LOSS2 weight) + |ΔNDCG_ij|;

and the smoothing mixture w = (1 − α)|ΔZ| + α |ΔNDCG| (α = ``smooth``), which keeps a
share of NDCG's dense signal under a sparse Z (ERR, MRR). All are frozen at the
ranking of ``at``, like |ΔZ|, so the local loss and its gradient check are unchanged.

Compiled forms: the metric, the weighting (|ΔZ|, |ΔZ| with a smoothing share, or a
LambdaLoss scheme) and whether a query is too long for the counting sort are constants
of the entry points that :func:`_forms` makes per option (closures over those
constants, each cached by numba on its own). Beneath them every choice among pair
loops is made while typing (:func:`_sweep_for`), so a call compiles the code of its
own option and nothing of the others.
"""

import numpy as np
from numba import njit, prange, types
from numba.core.errors import TypingError
from numba.extending import overload

from gbrank._kernels import _threads
from gbrank._kernels._order import RANK_ORDER_MAX, rank_order_into
from gbrank._kernels._sigmoid import rho_pair, row_exponentials_into, softplus
from gbrank._kernels._threads import N_CHUNKS, chunk_bounds, dispatch
from gbrank._kernels._topk import BUFFER_MAX_K
from gbrank._kernels.delta import (
    ERR,
    LAMBDARANK,
    LGB_NORM_EPS,
    LOSS1,
    LOSS2,
    LOSS2PP,
    MAP,
    NDCG,
    discounts,
    pair_delta,
    prefix_arrays,
)
from reference.lambdarank_before.lambdarank_long import (
    long_query_grad_hess,
    long_query_kernel,
)
from reference.lambdarank_before.lambdarank_ranked import (
    ranked_query_grad_hess,
    ranked_query_kernel,
)

# The pair loops are compiled with these options. error_model="numpy": a float division
# may not raise, so the loop has no branch for it; with the per-pair loop written over
# slices that start at 0 (no negative-index wraparound to check) LLVM vectorises it.
_LOOP_OPTIONS = {"fastmath": True, "error_model": "numpy", "nogil": True}


def _sweep(metric, m, k, lab, sa, e, pre, sc, sigma, score_norm, g, h, tail, smoothed,
           smooth, pre_n, sc_n):
    """The pair loop for gradients, without data-dependent branches for NDCG, ERR and
    MAP (|ΔZ| is written branch-free and masked by l_a ≠ l_b), so LLVM can vectorise
    it; returns S = Σ 2σ w ρ for the norm. MRR keeps the generic |ΔZ|. With
    ``smoothed`` the weight is (1 − smooth)|ΔZ| + smooth |ΔNDCG| (NDCG's arrays
    ``pre_n``, ``sc_n``). For jitted code; ``metric`` and ``smoothed`` literals at the
    call (:func:`_queries`) compile that metric's weight alone and, without smoothing,
    no trace of the smoothing term (:func:`_sweep_code`)."""
    raise TypeError("_sweep is called from jitted code only")


def _sweep_code(M, S):
    """:func:`_sweep` for metric ``M`` and smoothing flag ``S``: a closure over both,
    so that numba drops the other metrics' code (and the smoothing term when ``S`` is
    False) before typing it. A run-time smoothing flag would slow plain NDCG
    (docs/performance.md)."""

    def sweep(metric, m, k, lab, sa, e, pre, sc, sigma, score_norm, g, h, tail, smoothed,
              smooth, pre_n, sc_n):
        n = lab.size
        total = 0.0
        s2 = sigma * sigma
        # ERR / MAP terms of rank B that exist only for B ≤ k, as arrays (0 beyond k);
        # ``tail`` is scratch of at least n entries for ERR and MAP (unread otherwise).
        if M == ERR or M == MAP:
            tail[:n] = 0.0
        if M == ERR:
            for b in range(min(k, n)):
                tail[b] = pre[1, b] / (b + 1.0)
        elif M == MAP:
            for b in range(min(k, n)):
                tail[b] = pre[1, b + 1] / (b + 1.0)
        p0 = pre[0]
        p1 = pre[1]
        p2 = pre[pre.shape[0] - 1]  # NDCG's and MRR's workspace has 2 rows (p2 unread)
        q0 = pre_n[0]
        q1 = pre_n[1]
        scn = sc_n[0]
        for a in range(m):
            la = lab[a]
            ea = e[a]
            saa = sa[a]
            A = a + 1.0
            x0 = p0[a]
            x1 = p1[a]
            inv_a = 1.0 / (1.0 - x0) if M == ERR else 0.0
            cut = p2[a + 1]
            y0 = q0[a] if S else 0.0
            y1 = q1[a] if S else 0.0
            # Row b = a + 1 + j of the query.
            lab_b = lab[a + 1:]
            e_b = e[a + 1:]
            sa_b = sa[a + 1:]
            p0_b = p0[a + 1:n]
            p1_b = p1[a + 1:n]
            p2_b = p2[a + 1:n]
            tail_b = tail[a + 1:n]
            q0_b = q0[a + 1:n] if S else q0[0:0]
            q1_b = q1[a + 1:n] if S else q1[0:0]
            g_b = g[a + 1:]
            h_b = h[a + 1:]
            gsum = 0.0
            hsum = 0.0
            tot = 0.0
            for j in range(lab_b.size):
                lb = lab_b[j]
                if M == NDCG:
                    w = abs(x1 - p1_b[j]) * abs(x0 - p0_b[j]) * sc[0]
                elif M == ERR:
                    rb = p0_b[j]
                    w = abs((rb - x0) * x1 / A + (p2_b[j] - cut) * (x0 - rb) * inv_a
                            + tail_b[j] * (x0 * (1.0 - rb) * inv_a - rb))
                elif M == MAP:
                    w = abs((x1 + 1.0) / A + p2_b[j] - cut - tail_b[j]) * sc[0] \
                        * abs(x0 - p0_b[j])
                else:
                    w = pair_delta(metric, a, a + 1 + j, k, pre, sc)
                if S:
                    w = (1.0 - smooth) * w + smooth * (abs(y1 - q1_b[j]) * abs(y0 - q0_b[j])
                                                       * scn)
                w = w if la != lb else 0.0
                if score_norm:
                    w /= LGB_NORM_EPS + abs(saa - sa_b[j])
                eb = e_b[j]
                inv = 1.0 / (ea + eb)
                up = la > lb
                # a is the higher-labelled row: rho = e_b/(e_a + e_b); otherwise e_a/(...).
                rho = (eb if up else ea) * inv
                pq = (eb * inv) * (ea * inv)
                lam = sigma * w * rho
                sl = lam if up else -lam
                gsum -= sl
                g_b[j] += sl
                hh = s2 * w * pq
                hsum += hh
                h_b[j] += hh
                tot += lam
            g[a] += gsum
            h[a] += hsum
            total += 2.0 * tot
        return total

    return sweep


@overload(_sweep, prefer_literal=True, jit_options=_LOOP_OPTIONS)
def _sweep_impl(metric, m, k, lab, sa, e, pre, sc, sigma, score_norm, g, h, tail,
                smoothed, smooth, pre_n, sc_n):
    if (isinstance(metric, types.IntegerLiteral)
            and isinstance(smoothed, types.BooleanLiteral)):
        return _sweep_code(metric.literal_value, smoothed.literal_value)
    raise TypingError("_sweep needs literal metric and smoothed arguments")


@njit(cache=True, nogil=True, fastmath=True, error_model="numpy")
def _sweep_lambdaloss(m, lab, sa, e, pre, sc, sigma, score_norm, g, h, scheme, mu, disc):
    """:func:`_sweep` for the LambdaLoss weightings of NDCG (``scheme`` LOSS1, LOSS2,
    LOSS2PP with ``mu``; ``disc`` the untruncated discounts), branch-free as
    :func:`_pair_weight` computes them. A separate function: folding these weights
    into :func:`_sweep` slows its plain NDCG loop (docs/performance.md)."""
    n = lab.size
    total = 0.0
    s2 = sigma * sigma
    p0 = pre[0]
    p1 = pre[1]
    c = sc[0]
    for a in range(m):
        la = lab[a]
        ea = e[a]
        saa = sa[a]
        x0 = p0[a]
        x1 = p1[a]
        ga = x1 * c * disc[a]
        lab_b = lab[a + 1:]
        e_b = e[a + 1:]
        sa_b = sa[a + 1:]
        p0_b = p0[a + 1:n]
        p1_b = p1[a + 1:n]
        disc_b = disc[a + 1:n]
        # LOSS2's 1/D(d) − 1/D(d + 1) for d = b − a = j + 1: disc[j] − disc[j + 1].
        dl = disc[0:n - a - 1]
        dr = disc[1:n - a]
        g_b = g[a + 1:]
        h_b = h[a + 1:]
        gsum = 0.0
        hsum = 0.0
        tot = 0.0
        for j in range(lab_b.size):
            lb = lab_b[j]
            up = la > lb
            if scheme == LOSS1:
                w = ga if up else p1_b[j] * c * disc_b[j]
            else:
                w = abs(x1 - p1_b[j]) * c * (dl[j] - dr[j])
                if scheme == LOSS2PP:
                    w = mu * w + abs(x1 - p1_b[j]) * abs(x0 - p0_b[j]) * c
            w = w if la != lb else 0.0
            if score_norm:
                w /= LGB_NORM_EPS + abs(saa - sa_b[j])
            eb = e_b[j]
            inv = 1.0 / (ea + eb)
            rho = (eb if up else ea) * inv
            pq = (eb * inv) * (ea * inv)
            lam = sigma * w * rho
            sl = lam if up else -lam
            gsum -= sl
            g_b[j] += sl
            hh = s2 * w * pq
            hsum += hh
            h_b[j] += hh
            tot += lam
        g[a] += gsum
        h[a] += hsum
        total += 2.0 * tot
    return total



@njit(cache=True, nogil=True)
def _pair_weight(metric, scheme, mu, smooth, a, b, up, k, pre, sc, pre_n, sc_n, disc):
    """Weight of the pair at positions a < b (``up``: the row at a has the higher
    label) under ``scheme`` and the smoothing share ``smooth`` (see the module doc)."""
    if scheme == LAMBDARANK:
        w = pair_delta(metric, a, b, k, pre, sc)
        if smooth > 0.0:
            w = (1.0 - smooth) * w + smooth * pair_delta(NDCG, a, b, k, pre_n, sc_n)
        return w
    if scheme == LOSS1:
        # G_hi / D(r_hi) with the untruncated discount 1/log2(1 + r).
        return pre_n[1, a] * sc_n[0] * disc[a] if up else pre_n[1, b] * sc_n[0] * disc[b]
    d = b - a
    w = abs(pre_n[1, a] - pre_n[1, b]) * sc_n[0] * (disc[d - 1] - disc[d])
    if scheme == LOSS2PP:
        w = mu * w + pair_delta(NDCG, a, b, k, pre_n, sc_n)
    return w


# Queries up to this many rows are ordered by counting ranks (_rank_sort); longer ones
# by NumPy's stable argsort or take the long-query kernels.
RANK_SORT_MAX = RANK_ORDER_MAX
_rank_sort = rank_order_into


@njit(cache=True, nogil=True, inline="always")
def _is_long(n, k, scheme, lgb_discount):
    """Whether a query of n rows takes :mod:`~gbrank._kernels.lambdarank_long` (no full
    sort): too long to order by counting, and a weighting that reads no rank below k."""
    return (n > RANK_SORT_MAX and n > 2 * k and scheme == LAMBDARANK
            and not lgb_discount)


@njit(cache=True, nogil=True, inline="always")
def _is_ranked(n, k, metric, scheme, lgb_discount):
    """Whether a query of n rows takes :mod:`~gbrank._kernels.lambdarank_ranked` (an
    int32 radix order, pairs in blocks of positions): too long to order by counting,
    NDCG (the only metric of LightGBM's discount and of the LambdaLoss weightings), and
    not a query for the no-sort kernel."""
    return (n > RANK_SORT_MAX and metric == NDCG
            and not _is_long(n, k, scheme, lgb_discount))


@njit(cache=True, nogil=True, inline="always")
def _scratch(longest, metric, scheme, smooth):
    """Scratch for queries of up to ``longest`` rows, allocated once per call or chunk:
    the tuple (order, seen, lab, sa, e, g, h, tail, pre, sc, pre_n, sc_n)."""
    # Longer queries use the index array of their argsort as their order.
    order = np.empty(min(longest, RANK_SORT_MAX), dtype=np.int64)
    seen = np.empty(min(longest, RANK_SORT_MAX), dtype=np.int64)
    lab = np.empty(longest)
    sa = np.empty(longest)
    e = np.empty(longest)
    # Longer queries accumulate in the outputs themselves (end of the query loop).
    g = np.empty(min(longest, RANK_SORT_MAX))
    h = np.empty(min(longest, RANK_SORT_MAX))
    tail = np.empty(longest if (metric == ERR or metric == MAP) else 0)
    # ERR and MAP use three prefix rows, NDCG and MRR two (delta module doc).
    pre = np.empty((3 if (metric == ERR or metric == MAP) else 2, longest + 1))
    sc = np.empty(4)
    plain = scheme == LAMBDARANK and smooth == 0.0
    pre_n = np.empty((2, longest + 1) if not (metric == NDCG or plain) else (2, 0))
    sc_n = np.empty(4)
    return order, seen, lab, sa, e, g, h, tail, pre, sc, pre_n, sc_n


def _queries_code(M, SCHEME, MIXED, LAMBDALOSS, BIG, LOSS, PAIRWISE):  # noqa: N803
    """The query loop of one option, as a closure over its constants, so that numba
    drops the code of every other option before typing it (a call compiles only what
    it runs). Compiled as the serial entry points (:func:`_make_forms`) and, inside the
    threaded one, through :func:`_chunk_queries`.

    - ``M``, ``SCHEME``: the metric and the weighting; ``MIXED``: the |ΔZ| weight with
      a smoothing share (``smooth`` > 0); ``LAMBDALOSS``: a LambdaLoss weighting.
    - ``LOSS`` False: gradients, each query's rows of ``grad``/``hess`` (input order,
      every row), times its weight and bounded by ``max_step``
      (:func:`_weigh_and_bound`); long queries (:func:`_is_long`, :func:`_is_ranked`)
      are left untouched for their own kernels. True: the local loss Σ w_q loss_q over
      every query is returned (``grad``, ``hess``, ``wide`` unused).
    - ``PAIRWISE`` False: a query whose score spread rules out row exponentials
      (:func:`~gbrank._kernels._sigmoid.row_exponentials_into`) is flagged in ``wide``
      and left untouched, for a pass with ``PAIRWISE`` True, which takes such queries
      pair by pair (one exp per pair).
    - ``BIG`` False: no query here has more than ``RANK_SORT_MAX`` rows (NumPy's
      argsort for them is not compiled).

    The loop runs over queries ``q0 … q1 - 1``, those set in ``only`` when it is not
    empty, with scratch allocated once (:func:`_scratch`); ``disc`` holds the discounts
    of :func:`_discount_length` positions.
    """
    # NDCG's prefix arrays beside Z's: the smoothing share and the LambdaLoss weights
    # are NDCG's (with NDCG as Z they are Z's own).
    ndcg_too = M != NDCG and (MIXED or LAMBDALOSS)

    def queries(y, s, at, offsets, qweights, k, sigma, gain_tab, threshold, norm,
                lgb_discount, mu, smooth, max_step, disc, q0, q1, only, wide, grad, hess):
        longest = q0 - q0  # an int64 from the start (a literal 0 would type twice)
        for qi in range(q0, q1):
            n = offsets[qi + 1] - offsets[qi]
            if LOSS or not (_is_long(n, k, SCHEME, lgb_discount)
                            or _is_ranked(n, k, M, SCHEME, lgb_discount)):
                longest = max(longest, n)
        order0, seen, lab, sa, e, g0, h0, tail, pre, sc, pre_n_buf, sc_n_buf = _scratch(
            longest, M, SCHEME, smooth)
        total = 0.0
        for qi in range(q0, q1):
            if only.size and not only[qi]:
                continue
            lo = offsets[qi]
            hi = offsets[qi + 1]
            n = hi - lo
            if not LOSS and (_is_long(n, k, SCHEME, lgb_discount)
                             or _is_ranked(n, k, M, SCHEME, lgb_discount)):
                continue  # done by the long-query pass, compiled only for such queries
            wq = qweights[qi] if qweights.size else 1.0
            if n < 2:
                if LOSS:
                    total += 0.0 * wq
                else:
                    for r in range(lo, hi):
                        grad[r] = 0.0
                        hess[r] = 0.0
                    _weigh_and_bound(grad, hess, lo, hi, wq, sigma, max_step)
                continue
            sq = s[lo:hi]
            atq = at[lo:hi]
            yq = y[lo:hi]
            gq = grad[lo:hi]
            hq = hess[lo:hi]
            order = order0
            g = g0
            h = h0
            if n <= RANK_SORT_MAX or not BIG:
                _rank_sort(atq, e, sa, order, seen)
            else:
                # Stable argsort of −s (as descending_order) with e as the key buffer;
                # its index array is the order (no n-row copies beyond NumPy's merge
                # buffer).
                for r in range(n):
                    e[r] = -atq[r]
                order = np.argsort(e[:n], kind="mergesort")
                for r in range(n):
                    sa[r] = atq[order[r]]
            far = n > RANK_SORT_MAX
            if not LOSS and far:
                # Gradients in rank order straight into the outputs, permuted at the end.
                g = gq
                h = hq
            for r in range(n):
                lab[r] = yq[order[r]]
            prefix_arrays(M, lab[:n], k, gain_tab, threshold, lgb_discount, disc, pre, sc)
            pre_n = pre
            sc_n = sc
            if ndcg_too:
                pre_n = pre_n_buf
                sc_n = sc_n_buf
                top = 0
                for r in range(n):
                    top = max(top, int(lab[r]))
                ngain = np.empty(top + 1)
                for r in range(top + 1):
                    ngain[r] = np.exp2(r * 1.0) - 1.0
                # No LightGBM discount for the smoothing share (a run-time False: the
                # prefix arrays of the main NDCG form, not a literal's own).
                prefix_arrays(NDCG, lab[:n], k, ngain, threshold, lgb_discount and False,
                              disc, pre_n, sc_n)

            best = sa[0]
            worst = sa[n - 1]
            # g is scratch until zeroed below (for the loss a long query's g is shorter
            # than the query: the loss path is not the hot one, it allocates).
            fast = row_exponentials_into(sa[:n], sigma, e, g if g.size >= n else np.empty(n))
            if not PAIRWISE and not fast:
                wide[qi] = True
                continue
            score_norm = norm and best != worst
            if not LOSS:
                for r in range(n):
                    g[r] = 0.0
                    h[r] = 0.0
            sum_lambdas = 0.0
            acc = 0.0
            m = min(k, n - 1)
            if not LOSS and fast:
                if LAMBDALOSS:
                    # The LambdaLoss weightings need metric NDCG (checked by the
                    # objective): their NDCG arrays are Z's own.
                    sum_lambdas = _sweep_lambdaloss(m, lab[:n], sa[:n], e[:n], pre, sc,
                                                    sigma, score_norm, g[:n], h[:n], SCHEME,
                                                    mu, disc)
                elif MIXED:
                    sum_lambdas = _sweep(M, m, k, lab[:n], sa[:n], e[:n], pre, sc, sigma,
                                         score_norm, g[:n], h[:n], tail, True, smooth,
                                         pre_n, sc_n)
                else:
                    sum_lambdas = _sweep(M, m, k, lab[:n], sa[:n], e[:n], pre, sc, sigma,
                                         score_norm, g[:n], h[:n], tail, False, 0.0, pre,
                                         sc)
            elif PAIRWISE:
                for a in range(m):
                    la = lab[a]
                    for b in range(a + 1, n):
                        lb = lab[b]
                        if la == lb:
                            continue
                        if MIXED or LAMBDALOSS:
                            w = _pair_weight(M, SCHEME, mu, smooth, a, b, la > lb, k, pre,
                                             sc, pre_n, sc_n, disc)
                        else:
                            w = pair_delta(M, a, b, k, pre, sc)
                        if w == 0.0:
                            continue
                        if la > lb:
                            hi_ = a
                            lo_ = b
                        else:
                            hi_ = b
                            lo_ = a
                        if score_norm:
                            w /= LGB_NORM_EPS + abs(sa[hi_] - sa[lo_])
                        # rho = 1 / (1 + exp(σ (s_hi − s_lo))), q = 1 − rho without
                        # cancellation.
                        if fast:
                            inv = 1.0 / (e[hi_] + e[lo_])
                            rho = e[lo_] * inv
                            q = e[hi_] * inv
                        else:
                            rho, q = rho_pair(sigma * (sa[hi_] - sa[lo_]))
                        sum_lambdas += 2.0 * sigma * w * rho
                        if LOSS:
                            acc += w * softplus(-sigma * (sq[order[hi_]] - sq[order[lo_]]))
                        else:
                            lam = sigma * w * rho
                            g[hi_] -= lam
                            g[lo_] += lam
                            hh = sigma * sigma * w * rho * q
                            h[hi_] += hh
                            h[lo_] += hh
            factor = 1.0
            if norm and sum_lambdas > 0.0:
                factor = np.log2(1.0 + sum_lambdas) / sum_lambdas
            if LOSS:
                total += acc * factor * wq
                continue
            if far:
                # g, h are the outputs in rank order; sa and e are dead now: copy there,
                # then scatter (independent stores; following the permutation's cycles
                # in place is slower at 10^6 rows, one cache miss after another).
                for r in range(n):
                    e[r] = g[r]
                    sa[r] = h[r]
                for r in range(n):
                    gq[order[r]] = e[r] * factor
                    hq[order[r]] = sa[r] * factor
            else:
                for r in range(n):
                    gq[order[r]] = g[r] * factor
                    hq[order[r]] = h[r] * factor
            _weigh_and_bound(grad, hess, lo, hi, wq, sigma, max_step)
        return total

    return queries


# Compiled entry points per option, made on first use (:func:`_forms`).
_FORMS: dict = {}


def _chunk_queries(metric, scheme, mixed, lambdaloss, big, y, s, at, offsets, qweights, k,
                   sigma, gain_tab, threshold, norm, lgb_discount, mu, smooth, max_step,
                   disc, q0, q1, only, wide, grad, hess):
    """The gradient pass of an option (literal ``metric``, ``scheme``, ``mixed``,
    ``lambdaloss``, ``big``) over queries ``q0 … q1 - 1``: the option's serial entry
    point (:func:`_make_forms`, called with the arguments from ``y`` on), for the
    threaded entry point, which cannot refer to that closure itself (numba's cache
    cannot key a closure over another). For jitted code only."""
    raise TypeError("_chunk_queries is called from jitted code only")


@overload(_chunk_queries, prefer_literal=True, jit_options={"nogil": True})
def _chunk_queries_impl(metric, scheme, mixed, lambdaloss, big, y, s, at, offsets,
                        qweights, k, sigma, gain_tab, threshold, norm, lgb_discount, mu,
                        smooth, max_step, disc, q0, q1, only, wide, grad, hess):
    flags = (metric, scheme, mixed, lambdaloss, big)
    if not all(isinstance(f, types.Literal) for f in flags):
        raise TypingError("_chunk_queries needs literal option arguments")
    # The option's serial entry point itself: compiled once per process (typing asks
    # for this implementation twice, the threaded loop and its body apart) and shared
    # with serial calls.
    queries = _forms_of(tuple(f.literal_value for f in flags))[0]

    def chunk(metric, scheme, mixed, lambdaloss, big, y, s, at, offsets, qweights, k, sigma,
              gain_tab, threshold, norm, lgb_discount, mu, smooth, max_step, disc, q0, q1,
              only, wide, grad, hess):
        queries(y, s, at, offsets, qweights, k, sigma, gain_tab, threshold, norm,
                lgb_discount, mu, smooth, max_step, disc, q0, q1, only, wide, grad, hess)
    return chunk


@njit(cache=True, nogil=True)
def _weigh_and_bound(grad, hess, lo, hi, wq, sigma, max_step):
    """Rows ``lo … hi − 1`` of one query: times its weight ``wq``, then the Hessian
    bound of ``max_step`` (see :func:`lambdarank_grad_hess`)."""
    if wq != 1.0:
        for r in range(lo, hi):
            grad[r] *= wq
            hess[r] *= wq
    if max_step > 0.0:
        ratio = sigma / max_step
        for r in range(lo, hi):
            bound = ratio * abs(grad[r])
            if hess[r] < bound:
                hess[r] = bound


def _discount_length(sizes, k, lgb_discount, scheme, every_position):
    """How many positions' discounts 1/log2(r + 2) are read: the first k (IDCG@k and
    the truncated NDCG discount), and under LightGBM's discount and the LambdaLoss
    weights every position of the queries that are sorted here (``every_position``: all
    of them, as the local loss sorts every query; for gradients only those of up to
    ``RANK_SORT_MAX`` rows, the longer ones making their own in blocks). No n-row array
    for a group-less query's gradients."""
    longest = int(sizes.max()) if sizes.size else 0
    if lgb_discount or scheme != LAMBDARANK:
        if every_position:
            return longest
        return min(longest, max(k, RANK_SORT_MAX))
    return min(longest, k)


def _make_forms(metric, scheme, mixed, lambdaloss, big):
    """The entry points of one option (:func:`_queries_code`): ``serial``, ``parallel``
    (chunks of queries on threads), ``pairwise`` (the queries flagged ``wide`` by
    either) and ``loss``. Each is a closure over the option's constants, which numba
    caches per value of those constants; all but ``parallel`` take the arguments of
    :func:`_chunk_queries` from ``y`` on, ``parallel`` those without ``at``, ``q0``,
    ``q1`` and ``only`` (all queries)."""
    code = (metric, scheme, mixed, lambdaloss, big)
    serial = njit(cache=True, nogil=True)(_queries_code(*code, False, False))
    pairwise = njit(cache=True, nogil=True)(_queries_code(*code, False, True))
    loss = njit(cache=True, nogil=True)(_queries_code(*code, True, True))

    @njit(cache=True, nogil=True, parallel=True)
    def parallel(y, s, offsets, qweights, k, sigma, gain_tab, threshold, norm,
                 lgb_discount, mu, smooth, max_step, disc, wide, grad, hess):
        bounds = chunk_bounds(offsets)
        for c in prange(N_CHUNKS):
            _chunk_queries(metric, scheme, mixed, lambdaloss, big, y, s, s, offsets,
                           qweights, k, sigma, gain_tab, threshold, norm, lgb_discount, mu,
                           smooth, max_step, disc, bounds[c], bounds[c + 1], wide[:0], wide,
                           grad, hess)

    return serial, parallel, pairwise, loss


def _option(metric, scheme, smooth, big):
    """(metric, scheme, mixed, lambdaloss, big): the constants of an option's compiled
    forms for ``metric``, ``scheme``, the smoothing share ``smooth`` (only whether it is
    positive matters) and ``big`` (some query they handle has more than
    ``RANK_SORT_MAX`` rows)."""
    lambdaloss = scheme != LAMBDARANK
    return (int(metric), int(scheme), bool(not lambdaloss and smooth > 0.0),
            bool(lambdaloss), bool(big))


def _forms(metric, scheme, smooth, big):
    """(serial, parallel, pairwise, loss) entry points of the option (:func:`_option`)."""
    return _forms_of(_option(metric, scheme, smooth, big))


def _forms_of(key):
    forms = _FORMS.get(key)
    if forms is None:
        forms = _FORMS[key] = _make_forms(*key)
    return forms


def _make_long_forms(metric, deep, smoothed):
    """The long-query pass: queries ``which`` through
    :func:`~gbrank._kernels.lambdarank_long.long_query_grad_hess`, one after the other
    or on threads, for ``metric``, ``deep`` (k > ``BUFFER_MAX_K``) and ``smoothed``
    (constants there, as in :func:`_make_forms`)."""

    @njit(cache=True, nogil=True)
    def serial(y, s, offsets, qweights, k, sigma, gain_tab, threshold, norm, smooth,
               max_step, disc, which, grad, hess):
        for t in range(which.size):
            lo = offsets[which[t]]
            hi = offsets[which[t] + 1]
            long_query_grad_hess(metric, deep, smoothed, y[lo:hi], s[lo:hi], k, sigma,
                                 gain_tab, threshold, norm, smooth, disc, grad[lo:hi],
                                 hess[lo:hi])
            _weigh_and_bound(grad, hess, lo, hi,
                             qweights[which[t]] if qweights.size else 1.0, sigma, max_step)

    @njit(cache=True, nogil=True, parallel=True)
    def parallel(y, s, offsets, qweights, k, sigma, gain_tab, threshold, norm, smooth,
                 max_step, disc, which, grad, hess):
        for t in prange(which.size):
            lo = offsets[which[t]]
            hi = offsets[which[t] + 1]
            long_query_grad_hess(metric, deep, smoothed, y[lo:hi], s[lo:hi], k, sigma,
                                 gain_tab, threshold, norm, smooth, disc, grad[lo:hi],
                                 hess[lo:hi])
            _weigh_and_bound(grad, hess, lo, hi,
                             qweights[which[t]] if qweights.size else 1.0, sigma, max_step)

    return serial, parallel


def _make_ranked_forms(scheme):
    """The ranked-query pass for ``scheme``: queries ``which`` through
    :func:`~gbrank._kernels.lambdarank_ranked.ranked_query_grad_hess` (NDCG only)."""

    @njit(cache=True, nogil=True)
    def serial(y, s, offsets, qweights, k, sigma, gain_tab, norm, lgb_discount, mu,
               smooth, max_step, which, grad, hess):
        for t in range(which.size):
            lo = offsets[which[t]]
            hi = offsets[which[t] + 1]
            ranked_query_grad_hess(scheme, y[lo:hi], s[lo:hi], k, sigma, gain_tab, norm,
                                   lgb_discount, mu, smooth, grad[lo:hi], hess[lo:hi])
            _weigh_and_bound(grad, hess, lo, hi,
                             qweights[which[t]] if qweights.size else 1.0, sigma, max_step)

    @njit(cache=True, nogil=True, parallel=True)
    def parallel(y, s, offsets, qweights, k, sigma, gain_tab, norm, lgb_discount, mu,
                 smooth, max_step, which, grad, hess):
        for t in prange(which.size):
            lo = offsets[which[t]]
            hi = offsets[which[t] + 1]
            ranked_query_grad_hess(scheme, y[lo:hi], s[lo:hi], k, sigma, gain_tab, norm,
                                   lgb_discount, mu, smooth, grad[lo:hi], hess[lo:hi])
            _weigh_and_bound(grad, hess, lo, hi,
                             qweights[which[t]] if qweights.size else 1.0, sigma, max_step)

    return serial, parallel


def _long_forms(metric, k, smooth):
    key = ("long", int(metric), k > BUFFER_MAX_K, smooth > 0.0)
    forms = _FORMS.get(key)
    if forms is None:
        forms = _FORMS[key] = _make_long_forms(*key[1:])
    return forms


def _ranked_forms(scheme):
    key = ("ranked", int(scheme))
    forms = _FORMS.get(key)
    if forms is None:
        forms = _FORMS[key] = _make_ranked_forms(key[1])
    return forms


def _long_kernels(sizes, k, metric, scheme, lgb_discount):
    """Per query, whether it takes the no-sort kernel (:func:`_is_long`) and whether the
    ranked one (:func:`_is_ranked`): the same rules on all query sizes at once."""
    far = sizes > RANK_SORT_MAX
    long_ = far & (sizes > 2 * k) if (scheme == LAMBDARANK and not lgb_discount) else (
        np.zeros(sizes.size, dtype=np.bool_))
    ranked = far & ~long_ if metric == NDCG else np.zeros(sizes.size, dtype=np.bool_)
    return long_, ranked


def lambdarank_grad_hess(y, s, offsets, qweights, metric, k, sigma, gain_tab, threshold,
                         norm, lgb_discount, scheme=LAMBDARANK, mu=0.0, smooth=0.0,
                         max_step=0.0, out=None):
    """Gradients and diagonal Hessians of all queries (``qweights`` empty = unweighted);
    ``scheme``, ``mu``, ``smooth``: the pair weighting (module doc).

    ``max_step`` > 0 returns the booster's Hessian max(h_i, σ|λ_i|/max_step) instead of
    the true h_i (0: the true Hessian). Then |λ_i| ≤ (max_step/σ)·h_i for every row, so
    the Newton value −Σλ/Σh of any set of rows (a leaf) is at most max_step/σ in size.
    A pair (hi, lo) has |λ|/h = 1/(σ(1 − ρ)): small while the pair is ordered, growing
    like e^{σ(s_lo − s_hi)}/σ once it is inverted, where the pair loss is linear and its
    curvature vanishes. A row's ratio is a weighted mean of its pairs', so the bound
    only acts on rows whose pairs are, on balance, badly inverted.

    Serial below :data:`~gbrank._kernels._threads.PARALLEL_MIN_ROWS` rows or with fewer
    queries than chunks; chunks of whole queries on threads above
    (:func:`~gbrank._kernels._threads.dispatch`). Every output row is written by its
    query, so the outputs start uninitialised: ``out``, a pair of n-row float64
    arrays, is written and returned instead of new arrays.
    """
    n = int(y.size)
    grad, hess = (np.empty(n), np.empty(n)) if out is None else out
    nq = offsets.size - 1
    metric, k, scheme = int(metric), int(k), int(scheme)
    sigma, threshold, mu, smooth = float(sigma), float(threshold), float(mu), float(smooth)
    norm, lgb_discount, max_step = bool(norm), bool(lgb_discount), float(max_step)
    sizes = np.diff(offsets)
    if nq == 1 and _threads.threaded(n):
        wq = float(qweights[0]) if qweights.size else 1.0
        if _is_long(n, k, scheme, lgb_discount):
            # One long query (group-less data): its blocks of rows on threads.
            disc = discounts(_discount_length(sizes, k, lgb_discount, scheme, False))
            option = (metric, k > BUFFER_MAX_K, smooth > 0.0)
            long_query_kernel(*option, True)(y, s, k, sigma, gain_tab, threshold, norm,
                                             smooth, disc, grad, hess)
            _weigh_and_bound(grad, hess, 0, n, wq, sigma, max_step)
            return grad, hess
        if _is_ranked(n, k, metric, scheme, lgb_discount):
            # One long query whose weights read every rank: its blocks of positions on
            # threads.
            ranked_query_kernel(scheme, True)(y, s, k, sigma, gain_tab, norm, lgb_discount,
                                              mu, smooth, grad, hess)
            _weigh_and_bound(grad, hess, 0, n, wq, sigma, max_step)
            return grad, hess
    long_, ranked = _long_kernels(sizes, k, metric, scheme, lgb_discount)
    aside = long_ | ranked
    disc = discounts(_discount_length(sizes, k, lgb_discount, scheme, False))
    if not aside.all():
        # Queries of more than RANK_SORT_MAX rows take the long-query kernels below,
        # except under a truncation of at least half the query (ERR, MAP, MRR).
        big = bool((sizes[~aside] > RANK_SORT_MAX).any())
        serial, parallel, pairwise, _ = _forms(metric, scheme, smooth, big)
        wide = np.zeros(nq, dtype=np.bool_)
        if _threads.threaded(n if nq >= N_CHUNKS else 0):
            parallel(y, s, offsets, qweights, k, sigma, gain_tab, threshold, norm,
                     lgb_discount, mu, smooth, max_step, disc, wide, grad, hess)
        else:
            serial(y, s, s, offsets, qweights, k, sigma, gain_tab, threshold, norm,
                   lgb_discount, mu, smooth, max_step, disc, 0, nq, wide[:0], wide, grad,
                   hess)
        if wide.any():
            # Scores spread too wide for row exponentials (rare: a diverging fit), so
            # their queries go pair by pair, in a kernel compiled only when needed.
            pairwise(y, s, s, offsets, qweights, k, sigma, gain_tab, threshold,
                     norm, lgb_discount, mu, smooth, max_step, disc, 0, nq, wide, wide, grad,
                     hess)
    if aside.any():
        # Called from here, one kernel per kind, so that data without such queries
        # never compiles them.
        long_rows = int(sizes[aside].sum()) if np.count_nonzero(aside) > 1 else 0
        if nq == 1 and long_[0]:
            # Group-less data below the threads' threshold: the one query's kernel
            # called directly (no loop over queries compiled around it).
            option = (metric, k > BUFFER_MAX_K, smooth > 0.0)
            long_query_kernel(*option, False)(y, s, k, sigma, gain_tab, threshold, norm,
                                              smooth, disc, grad, hess)
            _weigh_and_bound(grad, hess, 0, n, float(qweights[0]) if qweights.size else 1.0,
                             sigma, max_step)
        elif long_.any():
            serial, parallel = _long_forms(metric, k, smooth)
            dispatch(parallel, serial, long_rows, y, s, offsets, qweights, k, sigma,
                     gain_tab, threshold, norm, smooth, max_step, disc,
                     np.flatnonzero(long_), grad, hess)
        if nq == 1 and ranked[0]:
            # Group-less data below the threads' threshold: the one query's kernel.
            ranked_query_kernel(scheme, False)(y, s, k, sigma, gain_tab, norm, lgb_discount,
                                               mu, smooth, grad, hess)
            _weigh_and_bound(grad, hess, 0, n, float(qweights[0]) if qweights.size else 1.0,
                             sigma, max_step)
        elif ranked.any():
            serial, parallel = _ranked_forms(scheme)
            dispatch(parallel, serial, long_rows, y, s, offsets, qweights, k, sigma,
                     gain_tab, norm, lgb_discount, mu, smooth, max_step,
                     np.flatnonzero(ranked), grad, hess)
    return grad, hess


def lambdarank_loss(y, s, at, offsets, qweights, metric, k, sigma, gain_tab, threshold, norm,
                    lgb_discount, scheme=LAMBDARANK, mu=0.0, smooth=0.0):
    """Local loss Σ_q w_q Σ_pairs w_ij(at) · log(1 + exp(−σ (s_hi − s_lo)))."""
    sizes = np.diff(offsets)
    nq = int(sizes.size)
    big = nq > 0 and int(sizes.max()) > RANK_SORT_MAX
    loss = _forms(metric, scheme, float(smooth), big)[3]
    disc = discounts(_discount_length(sizes, int(k), bool(lgb_discount), int(scheme), True))
    none = np.empty(0, dtype=np.bool_)
    return loss(y, s, at, offsets, qweights, int(k), float(sigma), gain_tab,
                float(threshold), bool(norm), bool(lgb_discount), float(mu), float(smooth),
                0.0, disc, 0, nq, none, none, none.astype(np.float64),
                none.astype(np.float64))


__all__ = ["LAMBDARANK", "LOSS1", "LOSS2", "LOSS2PP", "NDCG", "lambdarank_grad_hess",
           "lambdarank_loss"]
