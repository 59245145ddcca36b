"""RankNet and LambdaRank pairs on click logs: per-row side factors and per-position sums
of pair costs (the position-bias corrections of ``docs/contract.md``, "Learning from
clicks").

For a pair of one query with labels l_i > l_j (i the clicked, higher-labelled row, j the
other) the pair term of RankNet (w_ij = 1, every pair) or LambdaRank (w_ij the |ΔZ| or
LambdaLoss weight at the ranking of ``at``, only pairs whose better-ranked row is in the
top k) is multiplied by a factor built from two per-row arrays:

    f_ij = u_i · v_j   when u_i > 0 and v_j > 0,   else 1,

so that inverse propensity weighting passes u = min(1/ρ(p), max_weight), v = 1, and
Unbiased LambdaMART passes u = 1/t⁺(p), v = 1/t⁻(p) (0 marks a position whose ratio
is not used, as XGBoost's "untracked" positions). The query's λ's and Hessians are the
plain ones times f_ij; LightGBM's ``norm`` rescalings read the factored λ's, as
XGBoost's ``lambdarank_unbiased`` does.

With accumulators given, every pair adds its cost c_ij = w_q · w_ij · C(σΔs) (``w_ij``
after ``norm``'s score-distance division, before the query's log2 factor;
C(x) = log(1 + e^{−x}), or log(1 + e^{+x}) with ``xgb_cost``) to

    plus[slot_i]  += c_ij · v_j,        minus[slot_j] += c_ij · u_i,

the sums of Hu et al.'s ratio update (eq. 30, 31), one entry per position slot.

Queries are taken one after the other (click logs hold short queries: the displayed
rows); each is ordered by ``at`` (descending, ties by row order) for LambdaRank, not at
all for RankNet. Compiled forms: the pair weight (RankNet, or LambdaRank's metric with
its weighting: |ΔZ|, |ΔZ| with a smoothing share, a LambdaLoss scheme) and gradient vs
loss are constants of closures made per option (:func:`kernels`), so a call compiles
only the code of its own option.
"""

import numpy as np

from gbrank._kernels._order import descending_order
from gbrank._kernels._sigmoid import rho_pair, softplus
from gbrank._kernels._variant import compile_variant
from gbrank._kernels.delta import (
    LGB_NORM_EPS,
    LOSS1,
    LOSS2PP,
    NDCG,
    discounts,
    pair_delta,
    prefix_arrays,
)
from gbrank._kernels.lambdarank import _weigh_and_bound

# The pair weight of a form: RankNet's 1, or a LambdaRank metric (delta.NDCG, ERR, MAP,
# MRR) with one of these weightings.
RANKNET = -1
PLAIN = 0       # |ΔZ|
MIXED = 1       # (1 − α)|ΔZ| + α|ΔNDCG|
LAMBDALOSS = 2  # the LambdaLoss weights of NDCG (delta.LOSS1, LOSS2, LOSS2PP)


def _code(KIND, MIX, LOSS):  # noqa: N803
    """The query loop of one option (module doc): ``KIND`` RankNet or a metric, ``MIX``
    the weighting, ``LOSS`` False for gradients (rows of ``grad``/``hess``, every row
    written, times the query weight and bounded by ``max_step``; accumulators filled
    when they are not empty), True for the local loss Σ_q w_q · factor_q · Σ f w C."""
    ranked = KIND != RANKNET
    ndcg_too = MIX == MIXED and KIND != NDCG

    def queries(y, s, at, offsets, qweights, u, v, slot, k, sigma, gain_tab, ngain,
                threshold, norm, lgb_discount, scheme, mu, smooth, xgb_cost, max_step,
                disc, grad, hess, plus, minus):
        nq = offsets.size - 1
        longest = 1
        for qi in range(nq):
            longest = max(longest, offsets[qi + 1] - offsets[qi])
        lab = np.empty(longest)
        sa = np.empty(longest)
        g = np.empty(longest)
        h = np.empty(longest)
        pre = np.empty((3, longest + 1))
        sc = np.empty(4)
        pre_n = np.empty((3, longest + 1 if ndcg_too else 1))
        sc_n = np.empty(4)
        track = plus.size > 0
        total = 0.0
        for qi in range(nq):
            lo = offsets[qi]
            hi = offsets[qi + 1]
            n = hi - lo
            wq = qweights[qi] if qweights.size else 1.0
            if n < 2:
                if not LOSS:
                    for r in range(lo, hi):
                        grad[r] = 0.0
                        hess[r] = 0.0
                continue
            if ranked:
                order = descending_order(at[lo:hi])
            else:
                order = np.arange(n).astype(np.int32)
            for r in range(n):
                lab[r] = y[lo + order[r]]
                sa[r] = at[lo + order[r]]
                g[r] = 0.0
                h[r] = 0.0
            pn = pre
            scn = sc
            if ranked:
                prefix_arrays(KIND, lab[:n], k, gain_tab, threshold, lgb_discount, disc, pre,
                              sc)
                if ndcg_too:
                    # No LightGBM discount for the smoothing share (as lambdarank.py).
                    prefix_arrays(NDCG, lab[:n], k, ngain, threshold, lgb_discount and False,
                                  disc, pre_n, sc_n)
                    pn = pre_n
                    scn = sc_n
            score_norm = norm and sa[0] != sa[n - 1]
            m = min(k, n - 1) if ranked else n - 1
            lam_sum = 0.0
            acc = 0.0
            for a in range(m):
                la = lab[a]
                for b in range(a + 1, n):
                    lb = lab[b]
                    if la == lb:
                        continue
                    up = la > lb
                    if not ranked:
                        w = 1.0
                    elif MIX == LAMBDALOSS:
                        # NDCG's LambdaLoss weights (lambdarank.py's _pair_weight).
                        if scheme == LOSS1:
                            w = pre[1, a] * sc[0] * disc[a] if up else \
                                pre[1, b] * sc[0] * disc[b]
                        else:
                            d_ab = b - a
                            w = abs(pre[1, a] - pre[1, b]) * sc[0] * (disc[d_ab - 1]
                                                                      - disc[d_ab])
                            if scheme == LOSS2PP:
                                w = mu * w + pair_delta(NDCG, a, b, k, pre, sc)
                    elif MIX == MIXED:
                        w = (1.0 - smooth) * pair_delta(KIND, a, b, k, pre, sc) \
                            + smooth * pair_delta(NDCG, a, b, k, pn, scn)
                    else:
                        w = pair_delta(KIND, a, b, k, pre, sc)
                    if w == 0.0:
                        continue
                    top = a if up else b
                    bot = b if up else a
                    if score_norm:
                        w /= LGB_NORM_EPS + abs(sa[top] - sa[bot])
                    ri = lo + order[top]
                    rj = lo + order[bot]
                    ui = u[ri]
                    vj = v[rj]
                    f = ui * vj if (ui > 0.0 and vj > 0.0) else 1.0
                    if norm:
                        rho_at, _ = rho_pair(sigma * (sa[top] - sa[bot]))
                        lam_sum += 2.0 * sigma * w * f * rho_at
                    d = sigma * (s[ri] - s[rj])
                    if LOSS:
                        acc += w * f * softplus(-d)
                    else:
                        rho, q = rho_pair(d)
                        lam = sigma * w * f * rho
                        g[top] -= lam
                        g[bot] += lam
                        hh = sigma * sigma * w * f * rho * q
                        h[top] += hh
                        h[bot] += hh
                        if track:
                            cost = wq * w * (softplus(d) if xgb_cost else softplus(-d))
                            plus[slot[ri]] += cost * vj
                            minus[slot[rj]] += cost * ui
            factor = 1.0
            if norm and lam_sum > 0.0:
                factor = np.log2(1.0 + lam_sum) / lam_sum
            if LOSS:
                total += acc * factor * wq
                continue
            for r in range(n):
                grad[lo + order[r]] = g[r] * factor
                hess[lo + order[r]] = h[r] * factor
            _weigh_and_bound(grad, hess, lo, hi, wq, sigma, max_step)
        return total

    return queries


# Compiled forms per option, made on first use (:func:`kernels`).
_FORMS: dict = {}


def kernels(kind: int, mix: int, loss: bool):
    """The compiled query loop of an option (module doc): ``kind`` :data:`RANKNET` or a
    metric, ``mix`` :data:`PLAIN`, :data:`MIXED` or :data:`LAMBDALOSS`, ``loss`` the
    local loss instead of gradients."""
    key = (int(kind), int(mix) if kind != RANKNET else PLAIN, bool(loss))
    form = _FORMS.get(key)
    if form is None:
        form = _FORMS[key] = compile_variant(_code(*key), key)
    return form


def pair_grad_hess(y, s, offsets, qweights, u, v, kind, mix, k, sigma, gain_tab, ngain,
                   threshold, norm, lgb_discount, scheme, mu, smooth, max_step,
                   slot=None, n_slots=0, xgb_cost=False, out=None):
    """Gradients and diagonal Hessians of all queries with pair factors from ``u``,
    ``v`` (module doc); with ``slot`` (the position slot of every row, 0 …
    ``n_slots`` − 1) also the per-slot cost sums ``(plus, minus)``, else two empty
    arrays. ``out``: a pair of n-row arrays to write instead of new ones."""
    n = int(y.size)
    grad, hess = (np.empty(n), np.empty(n)) if out is None else out
    plus = np.zeros(n_slots if slot is not None else 0)
    minus = np.zeros(plus.size)
    slots = slot if slot is not None else np.empty(0, dtype=np.int64)
    disc = discounts(max(int(np.diff(offsets).max()) if offsets.size > 1 else 1, 1))
    kernels(kind, mix, False)(y, s, s, offsets, qweights, u, v, slots, int(k), float(sigma),
                              gain_tab, ngain, float(threshold), bool(norm),
                              bool(lgb_discount), int(scheme), float(mu), float(smooth),
                              bool(xgb_cost), float(max_step), disc, grad, hess, plus, minus)
    return grad, hess, plus, minus


def pair_loss(y, s, at, offsets, qweights, u, v, kind, mix, k, sigma, gain_tab, ngain,
              threshold, norm, lgb_discount, scheme, mu, smooth):
    """Local loss Σ_q w_q · factor_q · Σ_pairs f_ij w_ij(at) log(1 + e^{−σ(s_i − s_j)})
    (the weights, the ranking and ``norm``'s rescalings frozen at ``at``)."""
    disc = discounts(max(int(np.diff(offsets).max()) if offsets.size > 1 else 1, 1))
    none = np.empty(0)
    return float(kernels(kind, mix, True)(
        y, s, at, offsets, qweights, u, v, np.empty(0, dtype=np.int64), int(k), float(sigma),
        gain_tab, ngain, float(threshold), bool(norm), bool(lgb_discount), int(scheme),
        float(mu), float(smooth), False, 0.0, disc, none, none, none, none))


__all__ = ["LAMBDALOSS", "MIXED", "PLAIN", "RANKNET", "kernels", "pair_grad_hess",
           "pair_loss"]
