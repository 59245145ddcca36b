"""Slow references for learning from clicks (docs/contract.md, "Learning from clicks"):
pair loops in plain Python/NumPy, straight from the formulas, for the position-bias
options of RankNet and LambdaRank and their per-round estimate updates.

Pairs (i, j) of one query with l_i > l_j; the plain pair loss is
L_ij = w_ij · log(1 + exp(−σ(s_i − s_j))) (RankNet: w_ij = 1, every pair; LambdaRank:
w_ij the pair weight at the current ranking, pairs with the better-ranked row in the top
k). Each correction multiplies the pair by a factor f_ij:

- IPW: f_ij = min(1 / ρ(p_i), max_weight);
- Unbiased LambdaMART: f_ij = 1 / (t⁺(p_i) t⁻(p_j));
- additive: f_ij = 1 and the scores are s + b(p).
"""

from __future__ import annotations

import math

import numpy as np
from scipy.special import expit

from gbrank._kernels.delta import ERR, MAP, MRR, NDCG
from reference.delta import delta_matrix

LGB_EPS = float(np.float32(0.01))
METRICS = {"ndcg": NDCG, "err": ERR, "map": MAP, "mrr": MRR}


def _ranking(s):
    return np.argsort(-np.asarray(s, dtype=float), kind="stable")


def _weights(lab, metric, k, gain_tab, thr, weighting, mu, smooth, lgb_discount):
    """Pair weights w[a, b] for ranked positions a < b (labels in rank order)."""
    n = lab.size
    dz = delta_matrix(METRICS[metric], lab, k, gain_tab, thr, lgb_discount)
    ngain = np.exp2(np.arange(int(lab.max()) + 1)) - 1.0
    dn = dz if metric == "ndcg" else delta_matrix(NDCG, lab, k, ngain, thr, False)
    disc = 1.0 / np.log2(np.arange(n) + 2.0)
    idcg = sum(sorted((ngain[int(v)] for v in lab), reverse=True)[r] * disc[r]
               for r in range(min(k, n)))
    G = np.array([ngain[int(v)] for v in lab]) / idcg if idcg > 0 else np.zeros(n)
    w = np.zeros((n, n))
    for a in range(min(k, n - 1)):
        for b in range(a + 1, n):
            if lab[a] == lab[b]:
                continue
            hi = a if lab[a] > lab[b] else b
            if weighting == "lambdarank":
                w[a, b] = (1 - smooth) * dz[a, b] + smooth * dn[a, b]
            elif weighting == "ndcg_loss1":
                w[a, b] = G[hi] * disc[hi]
            else:
                d = b - a
                w[a, b] = abs(G[a] - G[b]) * (disc[d - 1] - disc[d])
                if weighting == "ndcg_loss2pp":
                    w[a, b] = mu * w[a, b] + dn[a, b]
    return w


def pairs_of_query(y, s, *, ranknet, metric="ndcg", k=30, gain_tab=None, thr=1.0,
                   weighting="lambdarank", mu=1.0, smooth=0.0, norm=False):
    """[(i, j, w_ij)] for the pairs of one query (row indices into the query), with
    ``norm``'s score-distance division applied, and whether the query's scores differ."""
    y = np.asarray(y, dtype=float)
    s = np.asarray(s, dtype=float)
    n = y.size
    out = []
    if ranknet:
        for i in range(n):
            for j in range(n):
                if y[i] > y[j]:
                    out.append((i, j, 1.0))
        return out
    order = _ranking(s)
    lab = y[order]
    sa = s[order]
    w = _weights(lab, metric, k, gain_tab, thr, weighting, mu, smooth,
                 norm and metric == "ndcg")
    spread = sa[0] != sa[-1]
    for a in range(min(k, n - 1)):
        for b in range(a + 1, n):
            if lab[a] == lab[b] or w[a, b] == 0.0:
                continue
            hi, lo = (a, b) if lab[a] > lab[b] else (b, a)
            wij = w[a, b]
            if norm and spread:
                wij /= LGB_EPS + abs(sa[hi] - sa[lo])
            out.append((int(order[hi]), int(order[lo]), wij))
    return out


def factored(y, s, sizes, *, factor, sigma=1.0, norm=False, qweights=None, at=None,
             cost_sign=-1, slot=None, n_slots=0, u=None, v=None, **pair_kw):
    """Gradient, true Hessian, local loss and per-slot cost sums of the factored pair
    loss Σ_q w_q · c_q · Σ f_ij w_ij log(1 + exp(−σ(s_i − s_j))), with
    ``factor(i, j)`` the pair factor (global row indices), ``c_q`` LightGBM's norm
    factor at ``at`` (default ``s``). Cost sums: plus[slot_i] += w_q w_ij
    C(σΔs) v_j, minus[slot_j] += w_q w_ij C(σΔs) u_i, C(x) = log(1 + e^{cost_sign·x})."""
    y = np.asarray(y, dtype=float)
    s = np.asarray(s, dtype=float)
    at = s if at is None else np.asarray(at, dtype=float)
    grad = np.zeros(y.size)
    hess = np.zeros(y.size)
    plus = np.zeros(n_slots)
    minus = np.zeros(n_slots)
    loss = 0.0
    lo = 0
    for q, m in enumerate(sizes):
        wq = 1.0 if qweights is None else float(qweights[q])
        sl = slice(lo, lo + m)
        pairs = pairs_of_query(y[sl], at[sl], norm=norm, **pair_kw)
        g = np.zeros(m)
        h = np.zeros(m)
        total = 0.0
        acc = 0.0
        for i, j, w in pairs:
            f = factor(lo + i, lo + j)
            total += 2 * sigma * w * f * expit(-sigma * (at[lo + i] - at[lo + j]))
            x = sigma * (s[lo + i] - s[lo + j])
            rho = expit(-x)
            g[i] -= sigma * w * f * rho
            g[j] += sigma * w * f * rho
            h[i] += sigma**2 * w * f * rho * (1 - rho)
            h[j] += sigma**2 * w * f * rho * (1 - rho)
            acc += w * f * np.logaddexp(0.0, -x)
            if slot is not None:
                cost = wq * w * np.logaddexp(0.0, cost_sign * x)
                plus[slot[lo + i]] += cost * v[lo + j]
                minus[slot[lo + j]] += cost * u[lo + i]
        c = math.log2(1 + total) / total if (norm and total > 0) else 1.0
        grad[sl] = g * c * wq
        hess[sl] = h * c * wq
        loss += acc * c * wq
        lo += m
    return grad, hess, loss, plus, minus


def unbiased_update(plus, minus, t_plus, t_minus, bias_norm, keep_empty=True):
    """Hu et al.'s ratios: t⁺(k) = (plus_k / plus_ref)^{1/(1+r)}, the reference the first
    slot (the smallest position); a slot with no cost keeps its value (``keep_empty``)
    or becomes 0 (XGBoost)."""
    e = 1.0 / (1.0 + bias_norm)
    out = []
    for sums, old in ((plus, t_plus), (minus, t_minus)):
        new = np.array(old, dtype=float)
        if sums[0] >= 1e-16:
            for i in range(len(sums)):
                if sums[i] > 0 or not keep_empty:
                    new[i] = (sums[i] / sums[0]) ** e
        out.append(new)
    return out[0], out[1]


def additive_update(grad, hess, slot, b, lr, lam):
    """LightGBM's Newton step per position: b_k ← b_k − η (G_k + λ n_k b_k) /
    (|H_k + λ n_k| + 0.001)."""
    b = np.array(b, dtype=float)
    for k in range(b.size):
        rows = np.flatnonzero(np.asarray(slot) == k)
        G = grad[rows].sum()
        H = hess[rows].sum()
        n = rows.size
        b[k] -= lr * (G + lam * n * b[k]) / (abs(H + lam * n) + 0.001)
    return b
