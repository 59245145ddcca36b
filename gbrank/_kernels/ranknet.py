"""Exact all-pairs RankNet, O(n²) per query.

Rows of a query are put in label order (descending, stable) once, so that for row u
the rows with a strictly lower label form one contiguous block: the inner loop has no
label test. ρ = 1 / (1 + exp(σ (s_u − s_v))) comes from one exp per row
(e_u = exp(σ (s_u − mid))): ρ = e_v / (e_u + e_v), 1 − ρ = e_u / (e_u + e_v), exact to
rounding and free of cancellation; queries whose spread would overflow exp fall back
to one exp per pair.
"""

import numpy as np
from numba import njit, prange

from gbrank._kernels._sigmoid import rho_pair, row_exponentials, softplus


@njit(cache=True, nogil=True)
def _pair(fast, e, z, sigma, u, v):
    """(ρ, 1 − ρ) for Δs = s_u − s_v (z holds the scores in the same order as e)."""
    if fast:
        inv = 1.0 / (e[u] + e[v])
        return e[v] * inv, e[u] * inv
    return rho_pair(sigma * (z[u] - z[v]))


@njit(cache=True, nogil=True)
def _label_order(y):
    """Label-descending stable order and, per position, where strictly lower labels start."""
    n = y.size
    order = np.argsort(-y, kind="mergesort")
    lab = np.empty(n)
    for r in range(n):
        lab[r] = y[order[r]]
    nxt = np.empty(n, dtype=np.int64)
    nxt[n - 1] = n
    for r in range(n - 2, -1, -1):
        nxt[r] = nxt[r + 1] if lab[r] == lab[r + 1] else r + 1
    return order, nxt


@njit(cache=True, nogil=True, fastmath=True)
def _sweep_fast(e, nxt, pull, g, h):
    """The O(n²) loop with ρ = e_v / (e_u + e_v). fastmath lets LLVM vectorise the
    row sums (reassociation only changes rounding)."""
    n = e.size
    for u in range(n):
        eu = e[u]
        gu = 0.0
        hu = 0.0
        if pull:
            # Equal labels, target ½: ∂C/∂s_u = σ(½ − ρ), C symmetric in u, v.
            for v in range(u + 1, nxt[u]):
                inv = 1.0 / (eu + e[v])
                rho = e[v] * inv
                d = 0.5 - rho
                gu += d
                g[v] -= d
                pq = rho * eu * inv
                hu += pq
                h[v] += pq
        for v in range(nxt[u], n):
            inv = 1.0 / (eu + e[v])
            rho = e[v] * inv
            gu -= rho
            g[v] += rho
            pq = rho * eu * inv
            hu += pq
            h[v] += pq
        g[u] += gu
        h[u] += hu


@njit(cache=True, nogil=True)
def _query(y, s, sigma, pull, grad, hess):
    n = y.size
    if n < 2:
        return
    order, nxt = _label_order(y)
    z = np.empty(n)
    for r in range(n):
        z[r] = s[order[r]]
    fast, e = row_exponentials(z, sigma)
    g = np.zeros(n)
    h = np.zeros(n)
    if fast:
        _sweep_fast(e, nxt, pull, g, h)
    else:
        for u in range(n):
            gu = 0.0
            hu = 0.0
            if pull:
                # Equal labels, target ½: ∂C/∂s_u = σ(½ − ρ), C symmetric in u, v.
                for v in range(u + 1, nxt[u]):
                    rho, q = _pair(fast, e, z, sigma, u, v)
                    d = 0.5 - rho
                    gu += d
                    g[v] -= d
                    pq = rho * q
                    hu += pq
                    h[v] += pq
            for v in range(nxt[u], n):
                rho, q = _pair(fast, e, z, sigma, u, v)
                gu -= rho
                g[v] += rho
                pq = rho * q
                hu += pq
                h[v] += pq
            g[u] += gu
            h[u] += hu
    s2 = sigma * sigma
    for r in range(n):
        grad[order[r]] = sigma * g[r]
        hess[order[r]] = s2 * h[r]


@njit(cache=True, nogil=True, parallel=True)
def ranknet_grad_hess(y, s, offsets, qweights, sigma, pull, skip):
    """All queries; queries with ``skip[q]`` set are left at 0 (done by the grid mode)."""
    n = y.size
    grad = np.zeros(n)
    hess = np.zeros(n)
    for qi in prange(offsets.size - 1):
        if skip.size and skip[qi]:
            continue
        lo = offsets[qi]
        hi = offsets[qi + 1]
        _query(y[lo:hi], s[lo:hi], sigma, pull, grad[lo:hi], hess[lo:hi])
        if qweights.size:
            wq = qweights[qi]
            for r in range(lo, hi):
                grad[r] *= wq
                hess[r] *= wq
    return grad, hess


@njit(cache=True, nogil=True, parallel=True)
def ranknet_rows_grad_hess(y, s, sigma, pull):
    """One big query, parallel over rows (each row sums its own pairs: no write races,
    twice the arithmetic of :func:`ranknet_grad_hess`, which is serial within a query)."""
    n = y.size
    grad = np.zeros(n)
    hess = np.zeros(n)
    if n < 2:
        return grad, hess
    fast, e = row_exponentials(s, sigma)
    for u in prange(n):
        gu = 0.0
        hu = 0.0
        yu = y[u]
        for v in range(n):
            yv = y[v]
            if v == u or (yv == yu and not pull):
                continue
            rho, q = _pair(fast, e, s, sigma, u, v)
            if yu > yv:
                gu -= rho
            elif yu < yv:
                gu += q
            else:
                gu += 0.5 - rho
            hu += rho * q
        grad[u] = sigma * gu
        hess[u] = sigma * sigma * hu
    return grad, hess


@njit(cache=True, nogil=True)
def ranknet_loss(y, s, offsets, qweights, sigma, pull):
    """Σ_q w_q Σ_{l_i > l_j} log(1 + exp(−σ(s_i − s_j))) (+ ½σ|Δs|-centred tie terms)."""
    total = 0.0
    for qi in range(offsets.size - 1):
        lo = offsets[qi]
        hi = offsets[qi + 1]
        acc = 0.0
        for i in range(lo, hi):
            for j in range(i + 1, hi):
                d = sigma * (s[i] - s[j])
                if y[i] > y[j]:
                    acc += softplus(-d)
                elif y[i] < y[j]:
                    acc += softplus(d)
                elif pull:
                    # ½σΔs + log(1 + exp(−σΔs)) = log(2 cosh(σΔs/2)), symmetric.
                    acc += 0.5 * d + softplus(-d)
        total += acc * (qweights[qi] if qweights.size else 1.0)
    return total
