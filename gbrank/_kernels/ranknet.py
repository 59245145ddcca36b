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

from gbrank._kernels._order import RANK_ORDER_MAX, rank_order_into
from gbrank._kernels._sigmoid import (
    rho_pair,
    row_exponentials,
    row_exponentials_into,
    softplus,
)
from gbrank._kernels._threads import N_CHUNKS, chunk_bounds, dispatch


@njit(cache=True, nogil=True)
def _pair(fast, e, z, sigma, u, v):
    """(ρ, 1 − ρ) for Δs = s_u − s_v (z holds the scores in the same order as e)."""
    if fast:
        inv = 1.0 / (e[u] + e[v])
        return e[v] * inv, e[u] * inv
    return rho_pair(sigma * (z[u] - z[v]))


# Integer labels spanning fewer values than this are ordered by counting, not sorting.
COUNT_SORT_MAX_SPAN = 64


@njit(cache=True, nogil=True)
def _label_order(y, order, nxt, counts, buf, key, seen, mid):
    """Label-descending stable order of ``y`` into ``order[:n]`` and, per position, where
    strictly lower labels start into ``nxt[:n]``.

    Integer labels in a span below :data:`COUNT_SORT_MAX_SPAN` (``counts`` is that
    long) are placed by a counting sort, O(n); any others by counting ranks up to
    ``RANK_ORDER_MAX`` rows (``buf``, ``key``, ``seen``: scratch as long as ``y``) and
    by a stable merge sort above, compiled only when ``mid`` is True (``None``: numba
    drops it before typing). All give the same order.
    """
    n = y.size
    lo = y[0]
    hi = y[0]
    integral = True
    for r in range(n):
        v = y[r]
        lo = min(lo, v)
        hi = max(hi, v)
        integral &= v == np.floor(v)
    if integral and hi - lo < COUNT_SORT_MAX_SPAN:
        span = int(hi - lo) + 1
        for c in range(span):
            counts[c] = 0
        for r in range(n):
            counts[int(hi - y[r])] += 1  # slot 0 = highest label
        start = 0
        for c in range(span):
            cnt = counts[c]
            counts[c] = start
            start += cnt
        for r in range(n):
            c = int(hi - y[r])
            order[counts[c]] = r
            counts[c] += 1
        # counts[c] is now the end of label slot c: where lower labels start.
        for p in range(n):
            nxt[p] = counts[int(hi - y[order[p]])]
        return
    if n <= RANK_ORDER_MAX or mid is None:
        rank_order_into(y, buf, key, order, seen)
    else:
        srt = np.argsort(-y, kind="mergesort")
        for p in range(n):
            order[p] = srt[p]
    nxt[n - 1] = n
    for p in range(n - 2, -1, -1):
        nxt[p] = nxt[p + 1] if y[order[p]] == y[order[p + 1]] else p + 1


@njit(cache=True, nogil=True)
def _label_order_into(y, order, nxt, counts):
    """:func:`_label_order` with its own scratch (any query size)."""
    n = y.size
    _label_order(y, order, nxt, counts, np.empty(n), np.empty(n), np.empty(n, dtype=np.int64),
                 True)


@njit(cache=True, nogil=True, inline="always")
def _pair_run(eu, e_v, g_v, h_v, target, gu, hu):
    """Row u against the rows of ``e_v`` (all below it in label, or all tied with it),
    pair target ``target`` (0 = u ranks above, ½ = tie): ∂C/∂s_u = σ(target − ρ) with
    ρ = e_v / (e_u + e_v); the rows' shares go into ``g_v``/``h_v``, u's are returned
    added to ``gu``/``hu``."""
    for j in range(e_v.size):
        inv = 1.0 / (eu + e_v[j])
        rho = e_v[j] * inv
        d = target - rho
        gu += d
        g_v[j] -= d
        pq = rho * eu * inv
        hu += pq
        h_v[j] += pq
    return gu, hu


# error_model="numpy": a float division may not raise, so the pair loop has no
# zero-division branch (with the default error model it stays scalar, one vdivsd per
# pair); written over slices that start at 0 (no negative-index wraparound to check),
# LLVM vectorises it.
@njit(cache=True, nogil=True, fastmath=True, error_model="numpy")
def _sweep_fast(e, nxt, pull, g, h):
    """The O(n²) loop with ρ = e_v / (e_u + e_v). fastmath lets LLVM vectorise the
    row sums (reassociation only changes rounding). ``pull``: ``None`` (skip equal
    labels; numba drops their loop before typing) or True."""
    n = e.size
    for u in range(n):
        eu = e[u]
        gu = 0.0
        hu = 0.0
        if pull is not None:
            # Equal labels, target ½: C symmetric in u, v.
            lo = u + 1
            hi = nxt[u]
            gu, hu = _pair_run(eu, e[lo:hi], g[lo:hi], h[lo:hi], 0.5, gu, hu)
        lo = nxt[u]
        gu, hu = _pair_run(eu, e[lo:n], g[lo:n], h[lo:n], 0.0, gu, hu)
        g[u] += gu
        h[u] += hu


@njit(cache=True, nogil=True)
def _chunk(y, s, offsets, qweights, sigma, pull, mid, skip, q0, q1, grad, hess):
    """Queries ``q0 … q1 - 1`` into ``grad``/``hess``, with scratch allocated once for
    the chunk. ``pull``, ``mid``: ``None`` or True (:func:`_sweep_fast`,
    :func:`_label_order`)."""
    longest = 0
    for qi in range(q0, q1):
        longest = max(longest, offsets[qi + 1] - offsets[qi])
    order = np.empty(longest, dtype=np.int64)
    nxt = np.empty(longest, dtype=np.int64)
    counts = np.empty(COUNT_SORT_MAX_SPAN, dtype=np.int64)
    z = np.empty(longest)
    e = np.empty(longest)
    g = np.empty(longest)
    h = np.empty(longest)
    buf = np.empty(longest)
    seen = np.empty(longest, dtype=np.int64)
    s2 = sigma * sigma
    for qi in range(q0, q1):
        lo = offsets[qi]
        hi = offsets[qi + 1]
        n = hi - lo
        if (skip.size and skip[qi]) or n < 2:
            for r in range(lo, hi):
                grad[r] = 0.0
                hess[r] = 0.0
            continue
        yq = y[lo:hi]
        sq = s[lo:hi]
        _label_order(yq, order, nxt, counts, buf, z, seen, mid)  # z: scratch until set
        for r in range(n):
            z[r] = sq[order[r]]
        fast = row_exponentials_into(z[:n], sigma, e, g)  # g: scratch until zeroed
        for r in range(n):
            g[r] = 0.0
            h[r] = 0.0
        if fast:
            _sweep_fast(e[:n], nxt[:n], pull, g, h)
        else:
            for u in range(n):
                gu = 0.0
                hu = 0.0
                if pull is not None:
                    # Equal labels, target ½: ∂C/∂s_u = σ(½ − ρ), C symmetric in u, v.
                    for v in range(u + 1, nxt[u]):
                        rho, q = rho_pair(sigma * (z[u] - z[v]))
                        d = 0.5 - rho
                        gu += d
                        g[v] -= d
                        pq = rho * q
                        hu += pq
                        h[v] += pq
                for v in range(nxt[u], n):
                    rho, q = rho_pair(sigma * (z[u] - z[v]))
                    gu -= rho
                    g[v] += rho
                    pq = rho * q
                    hu += pq
                    h[v] += pq
                g[u] += gu
                h[u] += hu
        for r in range(n):
            grad[lo + order[r]] = sigma * g[r]
            hess[lo + order[r]] = s2 * h[r]
        if qweights.size:
            wq = qweights[qi]
            for r in range(lo, hi):
                grad[r] *= wq
                hess[r] *= wq


@njit(cache=True, nogil=True, parallel=True)
def _parallel(y, s, offsets, qweights, sigma, pull, mid, skip, grad, hess):
    bounds = chunk_bounds(offsets)
    for c in prange(N_CHUNKS):
        _chunk(y, s, offsets, qweights, sigma, pull, mid, skip, bounds[c], bounds[c + 1],
               grad, hess)


def _flags(offsets, skip, pull):
    """(pull, mid) as ``None`` or True: pull equal labels; some query summed here has
    more than ``RANK_ORDER_MAX`` rows (:func:`_label_order`)."""
    sizes = offsets[1:] - offsets[:-1]
    if skip.size:
        sizes = sizes[~skip]
    mid = sizes.size > 0 and int(sizes.max()) > RANK_ORDER_MAX
    return (True if pull else None), (True if mid else None)


def _grad_hess_parallel(y, s, offsets, qweights, sigma, pull, skip, grad, hess):
    """All queries (``skip``: as :func:`ranknet_grad_hess`), chunks on threads."""
    _parallel(y, s, offsets, qweights, float(sigma), *_flags(offsets, skip, pull), skip,
              grad, hess)


def _grad_hess_serial(y, s, offsets, qweights, sigma, pull, skip, grad, hess):
    """All queries on one thread: the chunk kernel over all of them."""
    _chunk(y, s, offsets, qweights, float(sigma), *_flags(offsets, skip, pull), skip, 0,
           offsets.size - 1, grad, hess)


def ranknet_grad_hess(y: np.ndarray, s: np.ndarray, offsets: np.ndarray,
                      qweights: np.ndarray, sigma: float, pull: bool,
                      skip: np.ndarray, out: tuple[np.ndarray, np.ndarray] | None = None,
                      ) -> tuple[np.ndarray, np.ndarray]:
    """All queries; queries with ``skip[q]`` set are left at 0 (done by the grid mode).
    ``out``: a pair of n-row float64 arrays to write and return instead of new ones
    (every row is written).

    Serial below :data:`~gbrank._kernels._threads.PARALLEL_MIN_ROWS` rows (of queries
    not skipped) or with fewer queries than chunks, chunks of queries on threads above
    (:func:`~gbrank._kernels._threads.dispatch`).
    """
    grad, hess = (np.empty(y.size), np.empty(y.size)) if out is None else out
    # Threads work on chunks of whole queries; rows of skipped queries (done by the
    # grid mode) and data with fewer queries than chunks leave nothing to share.
    nq = offsets.size - 1
    rows = int(y.size) if nq >= N_CHUNKS else 0
    if rows and skip.size:
        sizes = np.diff(offsets)
        rows = int(sizes[~skip].sum())
    dispatch(_grad_hess_parallel, _grad_hess_serial, rows, y, s, offsets, qweights,
             float(sigma), bool(pull), skip, grad, hess)
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
