"""LambdaRank: RankNet pairs weighted by |ΔZ|, only pairs with the higher-ranked row
in the top k. O(n log n + n·k) per query (one sort, then k rows against the rest).

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

from gbrank._kernels._order import descending_order
from gbrank._kernels._sigmoid import rho_pair, row_exponentials, softplus
from gbrank._kernels.delta import ERR, MAP, NDCG, discounts, pair_delta, prefix_arrays

# Pair weightings (``scheme``): |ΔZ| (LambdaRank), and the LambdaLoss NDCG family.
LAMBDARANK = 0
LOSS1 = 1
LOSS2 = 2
LOSS2PP = 3

# LightGBM adds the float32 constant 0.01f to |Δs| before dividing (lambdarank_norm).
_LGB_EPS = float(np.float32(0.01))


# error_model="numpy": a float division may not raise, so the loop has no branch for
# it; with the per-pair loop written over slices that start at 0 (no negative-index
# wraparound to check) LLVM vectorises the pair loop: measured 2.7x per query.
@njit(cache=True, nogil=True, fastmath=True, error_model="numpy")
def _sweep(metric, m, k, lab, sa, e, pre, sc, sigma, score_norm, g, h):
    """The pair loop for gradients, without data-dependent branches for NDCG, ERR and
    MAP (|ΔZ| is written branch-free and masked by l_a ≠ l_b), so LLVM can vectorise
    it; returns S = Σ 2σ w ρ for the norm. MRR keeps the generic |ΔZ|."""
    n = lab.size
    total = 0.0
    s2 = sigma * sigma
    # ERR / MAP terms of rank B that exist only for B ≤ k, as arrays (0 beyond k).
    tail = np.zeros(n)
    if metric == ERR:
        for b in range(min(k, n)):
            tail[b] = pre[1, b] / (b + 1.0)
    elif metric == MAP:
        for b in range(min(k, n)):
            tail[b] = pre[1, b + 1] / (b + 1.0)
    p0 = pre[0]
    p1 = pre[1]
    p2 = pre[2]
    for a in range(m):
        la = lab[a]
        ea = e[a]
        saa = sa[a]
        A = a + 1.0
        x0 = p0[a]
        x1 = p1[a]
        inv_a = 1.0 / (1.0 - x0) if metric == ERR else 0.0
        cut = p2[a + 1]
        # Row b = a + 1 + j of the query.
        lab_b = lab[a + 1:]
        e_b = e[a + 1:]
        sa_b = sa[a + 1:]
        p0_b = p0[a + 1:n]
        p1_b = p1[a + 1:n]
        p2_b = p2[a + 1:n]
        tail_b = tail[a + 1:]
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
            w = w if la != lb else 0.0
            if score_norm:
                w /= _LGB_EPS + abs(saa - sa_b[j])
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


@njit(cache=True, nogil=True)
def _query(y, s, at, want_loss, metric, k, sigma, gain_tab, threshold, norm, lgb_discount,
           disc, grad, hess, scheme, mu, smooth):
    """One query: writes grad/hess (rows in input order) or returns the local loss."""
    n = y.size
    if n < 2:
        return 0.0
    order = descending_order(at)
    lab = np.empty(n)
    sa = np.empty(n)
    for r in range(n):
        lab[r] = y[order[r]]
        sa[r] = at[order[r]]
    pre = np.empty((3, n + 1))
    sc = np.empty(4)
    prefix_arrays(metric, lab, k, gain_tab, threshold, lgb_discount, disc, pre, sc)
    plain = scheme == LAMBDARANK and smooth == 0.0
    if metric == NDCG or plain:
        pre_n = pre
        sc_n = sc
    else:
        # NDCG's arrays beside Z's, gain 2^l − 1 (the LambdaLoss weights and the
        # smoothing share are NDCG's).
        pre_n = np.empty((3, n + 1))
        sc_n = np.empty(4)
        top = 0
        for r in range(n):
            top = max(top, int(lab[r]))
        ngain = np.exp2(np.arange(top + 1.0)) - 1.0
        prefix_arrays(NDCG, lab, k, ngain, threshold, False, disc, pre_n, sc_n)

    best = sa[0]
    worst = sa[n - 1]
    fast, e = row_exponentials(sa, sigma)
    score_norm = norm and best != worst
    g = np.zeros(n)
    h = np.zeros(n)
    sum_lambdas = 0.0
    loss = 0.0
    m = min(k, n - 1)
    if fast and not want_loss and plain:
        sum_lambdas = _sweep(metric, m, k, lab, sa, e, pre, sc, sigma, score_norm, g, h)
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
                    w /= _LGB_EPS + abs(sa[hi] - sa[lo])
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


@njit(cache=True, nogil=True, parallel=True)
def lambdarank_grad_hess(y, s, offsets, qweights, metric, k, sigma, gain_tab, threshold, norm,
                         lgb_discount, scheme=LAMBDARANK, mu=0.0, smooth=0.0, max_step=0.0):
    """Gradients and diagonal Hessians of all queries (``qweights`` empty = unweighted);
    ``scheme``, ``mu``, ``smooth``: the pair weighting (module doc).

    ``max_step`` > 0 returns the booster's Hessian max(h_i, σ|λ_i|/max_step) instead of
    the true h_i (0: the true Hessian). Then |λ_i| ≤ (max_step/σ)·h_i for every row, so
    the Newton value −Σλ/Σh of any set of rows (a leaf) is at most max_step/σ in size.
    A pair (hi, lo) has |λ|/h = 1/(σ(1 − ρ)): small while the pair is ordered, growing
    like e^{σ(s_lo − s_hi)}/σ once it is inverted, where the pair loss is linear and its
    curvature vanishes. A row's ratio is a weighted mean of its pairs', so the bound
    only acts on rows whose pairs are, on balance, badly inverted.
    """
    n = y.size
    grad = np.zeros(n)
    hess = np.zeros(n)
    nq = offsets.size - 1
    disc = discounts(_max_size(offsets))
    for qi in prange(nq):
        lo = offsets[qi]
        hi = offsets[qi + 1]
        _query(y[lo:hi], s[lo:hi], s[lo:hi], False, metric, k, sigma, gain_tab, threshold,
               norm, lgb_discount, disc, grad[lo:hi], hess[lo:hi], scheme, mu, smooth)
        if qweights.size:
            wq = qweights[qi]
            for r in range(lo, hi):
                grad[r] *= wq
                hess[r] *= wq
        if max_step > 0.0:
            ratio = sigma / max_step
            for r in range(lo, hi):
                bound = ratio * abs(grad[r])
                if hess[r] < bound:
                    hess[r] = bound
    return grad, hess


@njit(cache=True, nogil=True)
def lambdarank_loss(y, s, at, offsets, qweights, metric, k, sigma, gain_tab, threshold, norm,
                    lgb_discount, scheme=LAMBDARANK, mu=0.0, smooth=0.0):
    """Local loss Σ_q w_q Σ_pairs w_ij(at) · log(1 + exp(−σ (s_hi − s_lo)))."""
    total = 0.0
    dummy = np.empty(0)
    disc = discounts(_max_size(offsets))
    for qi in range(offsets.size - 1):
        lo = offsets[qi]
        hi = offsets[qi + 1]
        v = _query(y[lo:hi], s[lo:hi], at[lo:hi], True, metric, k, sigma, gain_tab, threshold,
                   norm, lgb_discount, disc, dummy, dummy, scheme, mu, smooth)
        total += v * (qweights[qi] if qweights.size else 1.0)
    return total


__all__ = ["LAMBDARANK", "LOSS1", "LOSS2", "LOSS2PP", "NDCG", "lambdarank_grad_hess",
           "lambdarank_loss"]
