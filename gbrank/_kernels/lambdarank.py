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
"""

import numpy as np
from numba import njit, prange

from gbrank._kernels import _threads
from gbrank._kernels._sigmoid import rho_pair, row_exponentials_into, softplus
from gbrank._kernels._threads import N_CHUNKS, chunk_bounds, dispatch
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
from gbrank._kernels.lambdarank_long import (
    long_query_grad_hess,
    long_query_grad_hess_parallel,
)
from gbrank._kernels.lambdarank_ranked import (
    ranked_query_grad_hess,
    ranked_query_grad_hess_parallel,
)


# error_model="numpy": a float division may not raise, so the loop has no branch for
# it; with the per-pair loop written over slices that start at 0 (no negative-index
# wraparound to check) LLVM vectorises the pair loop: measured 2.7x per query.
@njit(cache=True, nogil=True, inline="always")
def _sweep_body(metric, m, k, lab, sa, e, pre, sc, sigma, score_norm, g, h, tail,
                smoothed, smooth, pre_n, sc_n):
    """The pair loop for gradients, without data-dependent branches for NDCG, ERR and
    MAP (|ΔZ| is written branch-free and masked by l_a ≠ l_b), so LLVM can vectorise
    it; returns S = Σ 2σ w ρ for the norm. MRR keeps the generic |ΔZ|. With
    ``smoothed`` the weight is (1 − smooth)|ΔZ| + smooth |ΔNDCG| (NDCG's arrays
    ``pre_n``, ``sc_n``). Inlined into :func:`_sweep` (``smoothed`` False) and
    :func:`_sweep_smooth` (True), where the constant flag folds away: the plain loop
    keeps no trace of the smoothing term (folding it in at run time slowed plain NDCG
    by ~25%)."""
    n = lab.size
    total = 0.0
    s2 = sigma * sigma
    # ERR / MAP terms of rank B that exist only for B ≤ k, as arrays (0 beyond k);
    # ``tail`` is scratch of at least n entries for ERR and MAP (unread otherwise).
    if metric == ERR or metric == MAP:
        tail[:n] = 0.0
    if metric == ERR:
        for b in range(min(k, n)):
            tail[b] = pre[1, b] / (b + 1.0)
    elif metric == MAP:
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
        inv_a = 1.0 / (1.0 - x0) if metric == ERR else 0.0
        cut = p2[a + 1]
        y0 = q0[a] if smoothed else 0.0
        y1 = q1[a] if smoothed else 0.0
        # Row b = a + 1 + j of the query.
        lab_b = lab[a + 1:]
        e_b = e[a + 1:]
        sa_b = sa[a + 1:]
        p0_b = p0[a + 1:n]
        p1_b = p1[a + 1:n]
        p2_b = p2[a + 1:n]
        tail_b = tail[a + 1:n]
        q0_b = q0[a + 1:n] if smoothed else q0[0:0]
        q1_b = q1[a + 1:n] if smoothed else q1[0:0]
        g_b = g[a + 1:]
        h_b = h[a + 1:]
        gsum = 0.0
        hsum = 0.0
        tot = 0.0
        for j in range(lab_b.size):
            lb = lab_b[j]
            if metric == NDCG:
                w = abs(x1 - p1_b[j]) * abs(x0 - p0_b[j]) * sc[0]
            elif metric == ERR:
                rb = p0_b[j]
                w = abs((rb - x0) * x1 / A + (p2_b[j] - cut) * (x0 - rb) * inv_a
                        + tail_b[j] * (x0 * (1.0 - rb) * inv_a - rb))
            elif metric == MAP:
                w = abs((x1 + 1.0) / A + p2_b[j] - cut - tail_b[j]) * sc[0] \
                    * abs(x0 - p0_b[j])
            else:
                w = pair_delta(metric, a, a + 1 + j, k, pre, sc)
            if smoothed:
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


@njit(cache=True, nogil=True, fastmath=True, error_model="numpy")
def _sweep(metric, m, k, lab, sa, e, pre, sc, sigma, score_norm, g, h, tail):
    """:func:`_sweep_body` for the plain |ΔZ| weight."""
    return _sweep_body(metric, m, k, lab, sa, e, pre, sc, sigma, score_norm, g, h, tail,
                       False, 0.0, pre, sc)


@njit(cache=True, nogil=True, fastmath=True, error_model="numpy")
def _sweep_smooth(metric, m, k, lab, sa, e, pre, sc, sigma, score_norm, g, h, tail,
                  smooth, pre_n, sc_n):
    """:func:`_sweep_body` with the |ΔNDCG| smoothing share ``smooth`` > 0."""
    return _sweep_body(metric, m, k, lab, sa, e, pre, sc, sigma, score_norm, g, h, tail,
                       True, smooth, pre_n, sc_n)


@njit(cache=True, nogil=True, fastmath=True, error_model="numpy")
def _sweep_lambdaloss(m, lab, sa, e, pre, sc, sigma, score_norm, g, h, scheme, mu, disc):
    """:func:`_sweep` for the LambdaLoss weightings of NDCG (``scheme`` LOSS1, LOSS2,
    LOSS2PP with ``mu``; ``disc`` the untruncated discounts), branch-free as
    :func:`_pair_weight` computes them. A separate function: folding these weights
    into :func:`_sweep` slowed its plain NDCG loop by a quarter."""
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


@njit(cache=True, nogil=True, inline="always")
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


# Queries up to this many rows are ordered by counting ranks (O(n²) comparisons without
# branches, which LLVM vectorises); longer ones by NumPy's stable argsort. Measured on
# 250k random scores cut into queries of n rows, one core, counting vs argsort: n = 100
# 1.5 vs 8.7 ms, 250: 4.1 vs 10.5, 400: 7.1 vs 12.2, 600: 9.0 vs 12.4 (a comparison
# sort's branches mispredict half the time on random scores).
RANK_SORT_MAX = 512


@njit(cache=True, nogil=True, fastmath=True, error_model="numpy")
def _rank_sort(s, buf, key, idx, seen):
    """Positions of ``s`` by score descending, ties by row order (as
    :func:`~gbrank._kernels._order.descending_order`), into ``idx[:n]``, the sorted
    scores into ``key[:n]``; ``buf`` (float64) and ``seen`` (int64) are scratch.

    The row i goes to position c_i + t_i, c_i = #{j : s_j > s_i} and t_i the number of
    earlier rows with the same score: tied rows share c_i and take c_i, c_i + 1, … in
    row order, and the next lower score starts after them, so the positions are
    distinct and stable. c_i is one comparison and one add per pair (vectorised); t_i
    comes from a count per c in a scalar pass in row order. Counting the tie rule
    inside the pair loop (#{s_j = s_i, j < i}) took three more vector operations per
    pair: 4.3 ms against 1.5 ms for 2,500 queries of 100 rows. (fastmath here only
    licenses the vectorised count; comparisons of finite scores are exact.)"""
    n = s.size
    for r in range(n):
        buf[r] = s[r]
        seen[r] = 0
    for i in range(n):
        x = buf[i]
        c = 0
        for j in range(n):
            c += buf[j] > x
        p = c + seen[c]
        seen[c] += 1
        idx[p] = i
        key[p] = x


@njit(cache=True, nogil=True)
def _is_long(n, k, scheme, lgb_discount):
    """Whether a query of n rows takes :mod:`~gbrank._kernels.lambdarank_long` (no full
    sort): too long to order by counting, and a weighting that reads no rank below k."""
    return (n > RANK_SORT_MAX and n > 2 * k and scheme == LAMBDARANK
            and not lgb_discount)


@njit(cache=True, nogil=True)
def _is_ranked(n, k, metric, scheme, lgb_discount):
    """Whether a query of n rows takes :mod:`~gbrank._kernels.lambdarank_ranked` (an
    int32 radix order, pairs in blocks of positions): too long to order by counting,
    NDCG (the only metric of LightGBM's discount and of the LambdaLoss weightings), and
    not a query for the no-sort kernel."""
    return (n > RANK_SORT_MAX and metric == NDCG
            and not _is_long(n, k, scheme, lgb_discount))


@njit(cache=True, nogil=True)
def _scratch(longest, metric, scheme, smooth):
    """Scratch for queries of up to ``longest`` rows, allocated once per chunk: the
    tuple (order, seen, lab, sa, e, g, h, tail, pre, sc, pre_n, sc_n) that
    :func:`_query` takes."""
    # Longer queries use the index array of their argsort as their order.
    order = np.empty(min(longest, RANK_SORT_MAX), dtype=np.int64)
    seen = np.empty(min(longest, RANK_SORT_MAX), dtype=np.int64)
    lab = np.empty(longest)
    sa = np.empty(longest)
    e = np.empty(longest)
    # Longer queries accumulate in the outputs themselves (end of :func:`_query`).
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


@njit(cache=True, nogil=True)
def _query(y, s, at, want_loss, metric, k, sigma, gain_tab, threshold, norm, lgb_discount,
           disc, grad, hess, scheme, mu, smooth, order, seen, lab, sa, e, g, h, tail,
           pre, sc, pre_n_buf, sc_n_buf):
    """One query: writes grad/hess (rows in input order, every row) or returns the local
    loss. The arrays after ``smooth`` are scratch from :func:`_scratch`."""
    n = y.size
    if n < 2:
        if not want_loss:
            for r in range(n):
                grad[r] = 0.0
                hess[r] = 0.0
        return 0.0
    # Long queries' gradients never come here: :func:`_chunk` sends them to their own
    # kernels (so that they are compiled once, not into both compiled forms of this).
    if n <= RANK_SORT_MAX:
        _rank_sort(at, e, sa, order, seen)
    else:
        # Stable argsort of −s (as descending_order) with e as the key buffer; its
        # index array is the order (no n-row copies beyond NumPy's merge buffer).
        for r in range(n):
            e[r] = -at[r]
        order = np.argsort(e[:n], kind="mergesort")
        for r in range(n):
            sa[r] = at[order[r]]
    big = n > RANK_SORT_MAX
    if big and not want_loss:
        # Gradients in rank order straight into the outputs, permuted at the end.
        g = grad
        h = hess
    for r in range(n):
        lab[r] = y[order[r]]
    prefix_arrays(metric, lab[:n], k, gain_tab, threshold, lgb_discount, disc, pre, sc)
    plain = scheme == LAMBDARANK and smooth == 0.0
    if metric == NDCG or plain:
        pre_n = pre
        sc_n = sc
    else:
        # NDCG's arrays beside Z's, gain 2^l − 1 (the LambdaLoss weights and the
        # smoothing share are NDCG's).
        pre_n = pre_n_buf
        sc_n = sc_n_buf
        top = 0
        for r in range(n):
            top = max(top, int(lab[r]))
        ngain = np.exp2(np.arange(top + 1.0)) - 1.0
        prefix_arrays(NDCG, lab[:n], k, ngain, threshold, False, disc, pre_n, sc_n)

    best = sa[0]
    worst = sa[n - 1]
    # g is scratch until zeroed below (with want_loss a long query's g is shorter than
    # the query: the loss path is not the hot one, it allocates).
    fast = row_exponentials_into(sa[:n], sigma, e, g if g.size >= n else np.empty(n))
    score_norm = norm and best != worst
    if not want_loss:
        for r in range(n):
            g[r] = 0.0
            h[r] = 0.0
    sum_lambdas = 0.0
    loss = 0.0
    m = min(k, n - 1)
    if fast and not want_loss and plain:
        sum_lambdas = _sweep(metric, m, k, lab[:n], sa[:n], e[:n], pre, sc, sigma,
                             score_norm, g[:n], h[:n], tail)
    elif fast and not want_loss and scheme == LAMBDARANK:
        # A smoothing share > 0 (plain is the case above).
        sum_lambdas = _sweep_smooth(metric, m, k, lab[:n], sa[:n], e[:n], pre, sc, sigma,
                                    score_norm, g[:n], h[:n], tail, smooth, pre_n, sc_n)
    elif fast and not want_loss and scheme != LAMBDARANK:
        # The LambdaLoss weightings need metric NDCG (checked by the objective): their
        # NDCG arrays are Z's own.
        sum_lambdas = _sweep_lambdaloss(m, lab[:n], sa[:n], e[:n], pre, sc, sigma,
                                        score_norm, g[:n], h[:n], scheme, mu, disc)
    else:
        for a in range(m):
            la = lab[a]
            for b in range(a + 1, n):
                lb = lab[b]
                if la == lb:
                    continue
                if plain:
                    w = pair_delta(metric, a, b, k, pre, sc)
                else:
                    w = _pair_weight(metric, scheme, mu, smooth, a, b, la > lb, k, pre, sc,
                                     pre_n, sc_n, disc)
                if w == 0.0:
                    continue
                if la > lb:
                    hi = a
                    lo = b
                else:
                    hi = b
                    lo = a
                if score_norm:
                    w /= LGB_NORM_EPS + abs(sa[hi] - sa[lo])
                # rho = 1 / (1 + exp(σ (s_hi − s_lo))), q = 1 − rho without cancellation.
                if fast:
                    inv = 1.0 / (e[hi] + e[lo])
                    rho = e[lo] * inv
                    q = e[hi] * inv
                else:
                    rho, q = rho_pair(sigma * (sa[hi] - sa[lo]))
                sum_lambdas += 2.0 * sigma * w * rho
                if want_loss:
                    loss += w * softplus(-sigma * (s[order[hi]] - s[order[lo]]))
                else:
                    lam = sigma * w * rho
                    g[hi] -= lam
                    g[lo] += lam
                    hh = sigma * sigma * w * rho * q
                    h[hi] += hh
                    h[lo] += hh
    factor = 1.0
    if norm and sum_lambdas > 0.0:
        factor = np.log2(1.0 + sum_lambdas) / sum_lambdas
    if want_loss:
        return loss * factor
    if big:
        # g, h are the outputs in rank order; sa and e are dead now: copy there, then
        # scatter (independent stores; following the permutation's cycles in place
        # measured 1.5x slower at 10^6 rows, one cache miss after another).
        for r in range(n):
            e[r] = g[r]
            sa[r] = h[r]
        for r in range(n):
            grad[order[r]] = e[r] * factor
            hess[order[r]] = sa[r] * factor
        return 0.0
    for r in range(n):
        grad[order[r]] = g[r] * factor
        hess[order[r]] = h[r] * factor
    return 0.0


@njit(cache=True, nogil=True)
def _max_size(offsets):
    m = 0
    for q in range(offsets.size - 1):
        m = max(m, offsets[q + 1] - offsets[q])
    return m


@njit(cache=True, nogil=True)
def _discounts_for(offsets, k, lgb_discount, scheme, every_position):
    """1/log2(r + 2) for as many positions as are read: the first k (IDCG@k and the
    truncated NDCG discount), and under LightGBM's discount and the LambdaLoss weights
    every position of the queries that are sorted here (``every_position``: all of
    them, as the local loss sorts every query; for gradients only those of up to
    ``RANK_SORT_MAX`` rows, the longer ones making their own in blocks). No n-row
    array for a group-less query's gradients."""
    longest = _max_size(offsets)
    if lgb_discount or scheme != LAMBDARANK:
        if every_position:
            return discounts(longest)
        return discounts(min(longest, max(k, RANK_SORT_MAX)))
    return discounts(min(longest, k))


@njit(cache=True, nogil=True)
def _chunk(y, s, offsets, qweights, metric, k, sigma, gain_tab, threshold, norm,
           lgb_discount, scheme, mu, smooth, max_step, disc, q0, q1, grad, hess):
    """Queries ``q0 … q1 - 1`` into ``grad``/``hess``, scratch allocated once; the long
    ones (:func:`_long_query_indices`) are left untouched for the pass after it."""
    longest = 0
    for qi in range(q0, q1):
        n = offsets[qi + 1] - offsets[qi]
        if not (_is_long(n, k, scheme, lgb_discount)
                or _is_ranked(n, k, metric, scheme, lgb_discount)):
            longest = max(longest, n)
    order, seen, lab, sa, e, g, h, tail, pre, sc, pre_n, sc_n = _scratch(
        longest, metric, scheme, smooth)
    for qi in range(q0, q1):
        lo = offsets[qi]
        hi = offsets[qi + 1]
        n = hi - lo
        if (_is_long(n, k, scheme, lgb_discount)
                or _is_ranked(n, k, metric, scheme, lgb_discount)):
            continue  # done by _long_queries, compiled only when such queries exist
        if metric == NDCG and scheme == LAMBDARANK:
            # The default objective gets its own compiled _query: literal arguments
            # are constants there, so the branches of the other metrics, weightings
            # and of the loss fold away (measured 15% of a call, 2,500 queries of 100).
            _query(y[lo:hi], s[lo:hi], s[lo:hi], False, NDCG, k, sigma, gain_tab,
                   threshold, norm, lgb_discount, disc, grad[lo:hi], hess[lo:hi],
                   LAMBDARANK, mu, smooth, order, seen, lab, sa, e, g, h, tail, pre, sc,
                   pre_n, sc_n)
        else:
            _query(y[lo:hi], s[lo:hi], s[lo:hi], False, metric, k, sigma, gain_tab,
                   threshold, norm, lgb_discount, disc, grad[lo:hi], hess[lo:hi], scheme,
                   mu, smooth, order, seen, lab, sa, e, g, h, tail, pre, sc, pre_n, sc_n)
        _weigh_and_bound(grad, hess, lo, hi, qweights[qi] if qweights.size else 1.0,
                         sigma, max_step)


@njit(cache=True, nogil=True)
def _long_query_indices(offsets, k, metric, scheme, lgb_discount):
    """Indices of the queries that :func:`_chunk` leaves to :func:`_long_queries`."""
    nq = offsets.size - 1
    out = np.empty(nq, dtype=np.int64)
    m = 0
    for qi in range(nq):
        n = offsets[qi + 1] - offsets[qi]
        if (_is_long(n, k, scheme, lgb_discount)
                or _is_ranked(n, k, metric, scheme, lgb_discount)):
            out[m] = qi
            m += 1
    return out[:m]


@njit(cache=True, nogil=True)
def _long_query(y, s, offsets, qweights, metric, k, sigma, gain_tab, threshold, norm,
                lgb_discount, scheme, mu, smooth, max_step, disc, qi, grad, hess):
    lo = offsets[qi]
    hi = offsets[qi + 1]
    if metric == NDCG and scheme == LAMBDARANK:
        # Literal NDCG / LAMBDARANK, as in _chunk: a compiled form with the other
        # metrics' and weightings' branches folded away (the ranked kernel with
        # norm=True: 32.5 vs 42.3 ms serial on 400 queries of 600 rows).
        if _is_long(hi - lo, k, LAMBDARANK, lgb_discount):
            long_query_grad_hess(y[lo:hi], s[lo:hi], k, NDCG, sigma, gain_tab, threshold,
                                 norm, smooth, disc, grad[lo:hi], hess[lo:hi])
        else:
            ranked_query_grad_hess(y[lo:hi], s[lo:hi], k, sigma, gain_tab, norm,
                                   lgb_discount, LAMBDARANK, mu, smooth, grad[lo:hi],
                                   hess[lo:hi])
    elif _is_long(hi - lo, k, scheme, lgb_discount):
        long_query_grad_hess(y[lo:hi], s[lo:hi], k, metric, sigma, gain_tab, threshold,
                             norm, smooth, disc, grad[lo:hi], hess[lo:hi])
    else:
        ranked_query_grad_hess(y[lo:hi], s[lo:hi], k, sigma, gain_tab, norm, lgb_discount,
                               scheme, mu, smooth, grad[lo:hi], hess[lo:hi])
    _weigh_and_bound(grad, hess, lo, hi, qweights[qi] if qweights.size else 1.0, sigma,
                     max_step)


@njit(cache=True, nogil=True, parallel=True)
def _long_queries_parallel(y, s, offsets, qweights, metric, k, sigma, gain_tab, threshold,
                           norm, lgb_discount, scheme, mu, smooth, max_step, which, grad,
                           hess):
    disc = _discounts_for(offsets, k, lgb_discount, scheme, False)
    for t in prange(which.size):
        _long_query(y, s, offsets, qweights, metric, k, sigma, gain_tab, threshold, norm,
                    lgb_discount, scheme, mu, smooth, max_step, disc, which[t], grad, hess)


@njit(cache=True, nogil=True)
def _long_queries_serial(y, s, offsets, qweights, metric, k, sigma, gain_tab, threshold,
                         norm, lgb_discount, scheme, mu, smooth, max_step, which, grad,
                         hess):
    disc = _discounts_for(offsets, k, lgb_discount, scheme, False)
    for t in range(which.size):
        _long_query(y, s, offsets, qweights, metric, k, sigma, gain_tab, threshold, norm,
                    lgb_discount, scheme, mu, smooth, max_step, disc, which[t], grad, hess)


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


@njit(cache=True, nogil=True, parallel=True)
def _grad_hess_parallel(y, s, offsets, qweights, metric, k, sigma, gain_tab, threshold,
                        norm, lgb_discount, scheme, mu, smooth, max_step, grad, hess):
    disc = _discounts_for(offsets, k, lgb_discount, scheme, False)
    bounds = chunk_bounds(offsets)
    for c in prange(N_CHUNKS):
        _chunk(y, s, offsets, qweights, metric, k, sigma, gain_tab, threshold, norm,
               lgb_discount, scheme, mu, smooth, max_step, disc, bounds[c], bounds[c + 1],
               grad, hess)


@njit(cache=True, nogil=True)
def _grad_hess_serial(y, s, offsets, qweights, metric, k, sigma, gain_tab, threshold,
                      norm, lgb_discount, scheme, mu, smooth, max_step, grad, hess):
    disc = _discounts_for(offsets, k, lgb_discount, scheme, False)
    _chunk(y, s, offsets, qweights, metric, k, sigma, gain_tab, threshold, norm,
           lgb_discount, scheme, mu, smooth, max_step, disc, 0, offsets.size - 1, grad,
           hess)


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
    if (nq == 1 and _threads.threaded(n)
            and _is_long(n, int(k), int(scheme), bool(lgb_discount))):
        # One long query (group-less data): its blocks of rows on threads.
        disc = _discounts_for(offsets, int(k), bool(lgb_discount), int(scheme), False)
        long_query_grad_hess_parallel(y, s, int(k), int(metric), float(sigma), gain_tab,
                                      float(threshold), bool(norm), float(smooth), disc,
                                      grad, hess)
        _weigh_and_bound(grad, hess, 0, n, float(qweights[0]) if qweights.size else 1.0,
                         float(sigma), float(max_step))
        return grad, hess
    if (nq == 1 and _threads.threaded(n)
            and _is_ranked(n, int(k), int(metric), int(scheme), bool(lgb_discount))):
        # One long query whose weights read every rank: its blocks of positions on threads.
        ranked_query_grad_hess_parallel(y, s, int(k), float(sigma), gain_tab, bool(norm),
                                        bool(lgb_discount), int(scheme), float(mu),
                                        float(smooth), grad, hess)
        _weigh_and_bound(grad, hess, 0, n, float(qweights[0]) if qweights.size else 1.0,
                         float(sigma), float(max_step))
        return grad, hess
    rows = n if nq >= N_CHUNKS else 0
    dispatch(_grad_hess_parallel, _grad_hess_serial, rows, y, s, offsets, qweights,
             int(metric), int(k), float(sigma), gain_tab, float(threshold), bool(norm),
             bool(lgb_discount), int(scheme), float(mu), float(smooth), float(max_step),
             grad, hess)
    # Queries of more than RANK_SORT_MAX rows take the long-query kernels, called from
    # here so that data without such queries never compiles them (a first call on an
    # empty numba cache: 49 s with them inside the chunk kernel, see the commit).
    which = _long_query_indices(offsets, int(k), int(metric), int(scheme),
                                bool(lgb_discount))
    if which.size:
        long_rows = int((offsets[which + 1] - offsets[which]).sum())
        dispatch(_long_queries_parallel, _long_queries_serial,
                 long_rows if which.size > 1 else 0, y, s, offsets, qweights, int(metric),
                 int(k), float(sigma), gain_tab, float(threshold), bool(norm),
                 bool(lgb_discount), int(scheme), float(mu), float(smooth),
                 float(max_step), which, grad, hess)
    return grad, hess


@njit(cache=True, nogil=True)
def lambdarank_loss(y, s, at, offsets, qweights, metric, k, sigma, gain_tab, threshold, norm,
                    lgb_discount, scheme=LAMBDARANK, mu=0.0, smooth=0.0):
    """Local loss Σ_q w_q Σ_pairs w_ij(at) · log(1 + exp(−σ (s_hi − s_lo)))."""
    total = 0.0
    dummy = np.empty(0)
    longest = _max_size(offsets)
    disc = _discounts_for(offsets, k, lgb_discount, scheme, True)
    order, seen, lab, sa, e, g, h, tail, pre, sc, pre_n, sc_n = _scratch(
        longest, metric, scheme, smooth)
    for qi in range(offsets.size - 1):
        lo = offsets[qi]
        hi = offsets[qi + 1]
        v = _query(y[lo:hi], s[lo:hi], at[lo:hi], True, metric, k, sigma, gain_tab, threshold,
                   norm, lgb_discount, disc, dummy, dummy, scheme, mu, smooth, order, seen,
                   lab, sa, e, g, h, tail, pre, sc, pre_n, sc_n)
        total += v * (qweights[qi] if qweights.size else 1.0)
    return total


__all__ = ["LAMBDARANK", "LOSS1", "LOSS2", "LOSS2PP", "NDCG", "lambdarank_grad_hess",
           "lambdarank_loss"]
