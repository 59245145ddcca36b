"""Loss-augmented argmax of the F_β / balanced structured surrogate (Joachims, ICML 2005).

For one structured example (a query) with labels y ∈ {±1}^r (here stored as 0/1),
P positives and N negatives, the surrogate is

    L(s) = max_v [Δ(v, y) + Σ_i (v_i − y_i) s_i].

Split v by its cell (a, b) = (#true positives, #false positives). Inside a cell Δ is
constant and the best v takes the top-a positives and the top-b negatives by score,
so with the positives' scores p_1 ≥ … ≥ p_P and the negatives' n_1 ≥ … ≥ n_N

    value(a, b) = Δ(a, b) − 2 Σ_{k>a} p_k + 2 Σ_{k≤b} n_k.

F_β: Δ(a, b) = 1 − (1+β²)a / (a + b + β²P) (and 0 when a + b + c = 0, i.e. P = 0 and
b = 0: F = 1 by docs/contract.md's rule). For fixed a, b ↦ value(a, b) is concave (the
Δ term is −const/(const + b), the score term is a prefix sum of a decreasing
sequence), so the smallest maximising b is found by bisection on the sign of the
increment

    value(a, b+1) − value(a, b) = (1+β²)a / (D (D + 1)) + 2 n_{b+1},  D = a + b + β²P,

which is positive only where n_{b+1} > −1/2 (the Δ increment is at most 1, and
only the P = 0, b = 0 step reaches 1): negatives at or below −1/2 can be dropped
before sorting. Total O(r log r) (sorting), O(P log N) for the search.

Balanced: Δ(a, b) = 1 − (a/P + (N − b)/N)/2 = ½ − a/(2P) + b/(2N) is additive, so
a positive is in v* iff its score > 1/(4P) and a negative iff its score > −1/(4N):
O(r), no sort.

Ties between cells: the smallest a, then the smallest b, attaining the maximum (the
seed's loop order with a strict ``>``). Ties between equal scores inside a cell:
earlier rows first (the contract's stable order).
"""

import numpy as np
from numba import njit, prange

from gbrank._kernels._step import bound_hess
from gbrank._kernels._threads import N_CHUNKS, chunk_bounds, dispatch

FBETA = 0
BALANCED = 1


@njit(cache=True, nogil=True)
def _cut(ranked, count):
    """``(t, ties)``: the top ``count`` of scores sorted descending in ``ranked`` are
    those above ``t`` plus the first ``ties`` (in row order) equal to it; ``(inf, 0)``
    for none."""
    if count == 0:
        return np.inf, 0
    thresh = ranked[count - 1]
    n_above = 0
    while n_above < count and ranked[n_above] > thresh:
        n_above += 1
    return thresh, count - n_above


@njit(cache=True, nogil=True)
def _fbeta_candidates(y, s, lo, hi, beta2):
    """The positives' scores and the negatives' that can enter v* (unsorted)."""
    n_pos = 0
    for i in range(lo, hi):
        n_pos += y[i] > 0.5
    # A negative can enter v* only where the increment can be positive: its Δ part
    # (1+β²)a / (D (D + 1)) < (1+β²)a / (a + β²P)² ≤ (1+β²) / (4β²P) (largest at
    # a = β²P), so with P > 0 scores at or below −(1+β²)/(8β²P) are dropped too (10^6
    # rows, 1% positives, N(0, 1) scores: 0.49 instead of 0.69 of the rows sorted).
    floor = -0.5
    if n_pos > 0 and beta2 > 0.0:
        floor = max(floor, -(1.0 + beta2) / (8.0 * beta2 * n_pos))
    n_cand = 0
    for i in range(lo, hi):
        n_cand += (y[i] <= 0.5) & (s[i] > floor)
    # Branch-free compaction (each row written, the count advanced by its test: half
    # the negatives pass, a branch would mispredict on every other row); one spare
    # slot each for the last write.
    pos = np.empty(n_pos + 1, dtype=np.float64)
    neg = np.empty(n_cand + 1, dtype=np.float64)
    jp = 0
    jn = 0
    for i in range(lo, hi):
        v = s[i]
        is_pos = y[i] > 0.5
        pos[jp] = v
        neg[jn] = v
        jp += is_pos
        jn += (not is_pos) & (v > floor)
    pos = pos[:n_pos]
    neg = neg[:n_cand]
    return pos, neg


@njit(cache=True, nogil=True)
def _fbeta_query(y, s, lo, hi, beta2, grad):
    """Oracle on rows lo:hi; writes v* − y (±1 units: 0 or ±2) to grad; returns L."""
    pos, neg = _fbeta_candidates(y, s, lo, hi, beta2)
    return _fbeta_search(y, s, lo, hi, beta2, np.sort(pos)[::-1], np.sort(neg)[::-1], grad)


@njit(cache=True, nogil=True)
def _fbeta_search(y, s, lo, hi, beta2, pos, neg, grad):
    """:func:`_fbeta_query` given the candidates sorted descending."""
    n_pos = pos.size
    n_cand = neg.size
    # tail[a] = Σ_{k>a} p_k (suffix sums: no cancellation), head[b] = Σ_{k≤b} n_k
    tail = np.zeros(n_pos + 1)
    for k in range(n_pos - 1, -1, -1):
        tail[k] = tail[k + 1] + pos[k]
    head = np.zeros(n_cand + 1)
    for k in range(n_cand):
        head[k + 1] = head[k] + neg[k]
    c = beta2 * n_pos
    best = -np.inf
    best_a = 0
    best_b = 0
    for a in range(n_pos + 1):
        coef = (1.0 + beta2) * a
        # smallest b in [0, n_cand] with increment(b) <= 0 (increments are non-increasing)
        lo_b = 0
        hi_b = n_cand
        while lo_b < hi_b:
            mid = (lo_b + hi_b) // 2
            d = a + mid + c
            if d == 0.0:
                inc = 1.0 + 2.0 * neg[mid]
            else:
                inc = coef / (d * (d + 1.0)) + 2.0 * neg[mid]
            if inc > 0.0:
                lo_b = mid + 1
            else:
                hi_b = mid
        b = lo_b
        d = a + b + c
        delta = 0.0 if d == 0.0 else 1.0 - coef / d
        val = delta - 2.0 * tail[a] + 2.0 * head[b]
        if val > best:
            best = val
            best_a = a
            best_b = b
    # v* = the top best_a positives and top best_b negatives (ties: earlier rows), in
    # one pass without a branch per row (the score tests are coin flips for the
    # negatives): v* − y is 0 / −2 for a positive in / out, 2 / 0 for a negative.
    tp, ties_p = _cut(pos, best_a)
    tn, ties_n = _cut(neg, best_b)
    for i in range(lo, hi):
        v = s[i]
        is_pos = y[i] > 0.5
        t = tp if is_pos else tn
        left = ties_p if is_pos else ties_n
        tie = (v == t) & (left > 0)
        ties_p -= tie & is_pos
        ties_n -= tie & (not is_pos)
        take = (v > t) | tie
        grad[i] = 2.0 * take - 2.0 * is_pos
    return best


@njit(cache=True, nogil=True)
def _balanced_query(y, s, lo, hi, grad):
    n_pos = 0
    for i in range(lo, hi):
        if y[i] > 0.5:
            n_pos += 1
    n_neg = (hi - lo) - n_pos
    tp = 1.0 / (4.0 * n_pos)
    tn = -1.0 / (4.0 * n_neg)
    a = 0
    b = 0
    acc = 0.0
    for i in range(lo, hi):
        v = s[i]
        if y[i] > 0.5:
            if v > tp:
                a += 1
                grad[i] = 0.0
            else:
                acc -= 2.0 * v
                grad[i] = -2.0
        else:
            if v > tn:
                b += 1
                acc += 2.0 * v
                grad[i] = 2.0
            else:
                grad[i] = 0.0
    return 0.5 - a / (2.0 * n_pos) + b / (2.0 * n_neg) + acc


@njit(cache=True, nogil=True, inline="always")
def _query(y, s, lo, hi, measure, beta2, grad):
    if measure == BALANCED:
        return _balanced_query(y, s, lo, hi, grad)
    return _fbeta_query(y, s, lo, hi, beta2, grad)


@njit(cache=True, nogil=True, parallel=True)
def _oracle_parallel(y, s, offsets, measure, beta2, grad):
    nq = offsets.size - 1
    out = np.empty(nq)
    for q in prange(nq):
        out[q] = _query(y, s, offsets[q], offsets[q + 1], measure, beta2, grad)
    return out


@njit(cache=True, nogil=True)
def _oracle_serial(y, s, offsets, measure, beta2, grad):
    nq = offsets.size - 1
    out = np.empty(nq)
    for q in range(nq):
        out[q] = _query(y, s, offsets[q], offsets[q + 1], measure, beta2, grad)
    return out


def oracle(y, s, offsets, measure, beta2, grad):
    """Per-query surrogate values; ``grad`` receives v* − y per row (unweighted).

    Queries run in parallel when there are several and enough rows (the rule of
    ``_threads.dispatch``); a single query (group-less data) runs on one core.
    """
    if measure == FBETA and offsets.size == 2:
        # One query (group-less data): sorted by NumPy, whose vectorised sort is much
        # faster than numba's (docs/performance.md); the rest stays compiled.
        lo, hi = int(offsets[0]), int(offsets[1])
        pos, neg = _fbeta_candidates(y, s, lo, hi, beta2)
        pos = np.sort(pos)[::-1]
        neg = np.sort(neg)[::-1]
        return np.array([_fbeta_search(y, s, lo, hi, beta2, pos, neg, grad)])
    parallel = _oracle_parallel if offsets.size > 2 else _oracle_serial
    return dispatch(parallel, _oracle_serial, s.size, y, s, offsets, measure, beta2, grad)


@njit(cache=True, nogil=True)
def _examples(y, s, perm, offsets, beta2, grad, e0, e1):
    """Examples ``e0 … e1 − 1``: example e holds the rows ``perm[offsets[e]:offsets[e
    + 1]]``, gathered into scratch sized for the longest (no n-row copies of y and s in
    example order); v* − y is written to those rows of ``grad``."""
    longest = 0
    for e in range(e0, e1):
        longest = max(longest, offsets[e + 1] - offsets[e])
    ye = np.empty(longest)
    se = np.empty(longest)
    ge = np.empty(longest)
    out = np.empty(e1 - e0)
    for e in range(e0, e1):
        lo = offsets[e]
        m = offsets[e + 1] - lo
        for j in range(m):
            r = perm[lo + j]
            ye[j] = y[r]
            se[j] = s[r]
        out[e - e0] = _fbeta_query(ye, se, 0, m, beta2, ge)
        for j in range(m):
            grad[perm[lo + j]] = ge[j]
    return out


@njit(cache=True, nogil=True, parallel=True)
def _examples_parallel(y, s, perm, offsets, beta2, grad):
    out = np.empty(offsets.size - 1)
    bounds = chunk_bounds(offsets)
    for c in prange(N_CHUNKS):
        out[bounds[c]:bounds[c + 1]] = _examples(y, s, perm, offsets, beta2, grad,
                                                 bounds[c], bounds[c + 1])
    return out


@njit(cache=True, nogil=True)
def _examples_serial(y, s, perm, offsets, beta2, grad):
    return _examples(y, s, perm, offsets, beta2, grad, 0, offsets.size - 1)


def oracle_examples(y, s, perm, offsets, beta2, grad):
    """The F_β oracle on random structured examples: example e is the rows
    ``perm[offsets[e]:offsets[e + 1]]`` (a permutation of whole queries cut into
    pieces); returns the per-example values, ``grad`` receives v* − y per row in the
    caller's order (unweighted). Same values as :func:`oracle` on ``y[perm]``,
    ``s[perm]`` without those two n-row copies."""
    rows = s.size if offsets.size - 1 >= N_CHUNKS else 0
    return dispatch(_examples_parallel, _examples_serial, rows, y, s, perm, offsets, beta2,
                    grad)


@njit(cache=True, nogil=True)
def scale_by_query(grad, offsets, qw, h, inv_step, hess):
    """grad[r] *= w_q and hess[r] = h · w_q for every row r of query q, in place (no
    n-row array of weights); ``inv_step > 0`` (``_step.inverse_step(max_step)``) then
    raises hess[r] to at least |grad[r]| / max_step (``_step.bound_hess``)."""
    for q in range(offsets.size - 1):
        w = qw[q]
        hw = h * w
        if inv_step > 0.0:
            for r in range(offsets[q], offsets[q + 1]):
                g = grad[r] * w
                grad[r] = g
                hess[r] = bound_hess(g, hw, inv_step)
        else:
            for r in range(offsets[q], offsets[q + 1]):
                grad[r] *= w
                hess[r] = hw


@njit(cache=True, nogil=True)
def constant_score_loss(c, n_pos, n_neg, qw, measure, beta2):
    """Σ_q w_q L_q(c·1): on constant scores value(a, b) = Δ(a, b) + 2c(a + b − P), and for
    a fixed k = a + b both Δs decrease in a, so a = max(0, k − N) is best."""
    total = 0.0
    for q in range(n_pos.size):
        P = n_pos[q]
        N = n_neg[q]
        best = -np.inf
        for k in range(P + N + 1):
            a = max(0, k - N)
            b = k - a
            if measure == BALANCED:
                delta = 0.5 - a / (2.0 * P) + b / (2.0 * N)
            else:
                d = a + b + beta2 * P
                delta = 0.0 if d == 0.0 else 1.0 - (1.0 + beta2) * a / d
            val = delta + 2.0 * c * (k - P)
            if val > best:
                best = val
        total += qw[q] * best
    return total
