"""|ΔZ| for swapping two ranked rows of one query, O(1) per pair after O(n) prefix arrays.

Positions are 0-based here (``a < b``, ``a < k``); the formulas in the comments use
1-based ranks ``A = a + 1``, ``B = b + 1`` as docs/contract.md does. All functions work on one
query whose labels are already in rank order (scores descending, stable).

Prefix workspace ``pre`` (shape ``(3, n + 1)``; NDCG and MRR use only its first two rows,
so a ``(2, n + 1)`` workspace serves them) and scalars ``sc`` (length 4) per metric:

- NDCG: ``pre[0, r]`` discount of position r (``1/log2(r + 2)``, 0 beyond k unless the
  LightGBM discount is asked for), ``pre[1, r]`` gain of the row at r; ``sc[0]`` = 1/IDCG@k.
- ERR: ``pre[0, r]`` = R_r, ``pre[1, r]`` = Π_{i<r} (1 − R_i), ``pre[2, x]`` = Σ over the
  first x positions (only those ≤ k) of R·Π/rank.
- MAP: ``pre[0, r]`` relevant (0/1), ``pre[1, x]`` hits in the first x positions,
  ``pre[2, x]`` = Σ over relevant positions among the first x (only those ≤ k) of 1/rank;
  ``sc[0]`` = 1/min(#relevant, k) (0 when nothing is relevant).
- MRR: ``sc[0]`` first relevant rank, ``sc[1]`` second relevant rank (1-based; ``inf``
  when absent), ``sc[2]`` MRR@k of the current ranking; ``pre[0, r]`` relevant (0/1).
"""

import numpy as np
from numba import njit, types
from numba.extending import overload

NDCG = 0
ERR = 1
MAP = 2
MRR = 3

# LambdaRank's pair weightings (``scheme``): |ΔZ|, and the LambdaLoss NDCG family
# (:mod:`~gbrank._kernels.lambdarank` module doc).
LAMBDARANK = 0
LOSS1 = 1
LOSS2 = 2
LOSS2PP = 3

# LambdaRank's ``norm``: LightGBM adds the float32 constant 0.01f to |Δs| before dividing
# a pair's |ΔZ| by it (lambdarank_norm).
LGB_NORM_EPS = float(np.float32(0.01))


@njit(cache=True, nogil=True)
def discounts(n):
    """1/log2(r + 2) for positions r = 0..n-1 (computed once per call, not per query).
    An element loop: the same values as the array expression, which compiles more."""
    out = np.empty(n)
    for r in range(n):
        out[r] = 1.0 / np.log2(r + 2.0)
    return out


@njit(cache=True, nogil=True)
def ideal_dcg(lab, gain_tab, k, disc):
    """DCG@k of the labels sorted descending (counting sort: grades are small integers)."""
    n = lab.size
    top = 0
    for i in range(n):
        if lab[i] > top:
            top = int(lab[i])
    counts = np.zeros(top + 1, dtype=np.int64)
    for i in range(n):
        counts[int(lab[i])] += 1
    m = min(k, n)
    r = 0
    total = 0.0
    for g in range(top, -1, -1):
        c = counts[g]
        while c > 0 and r < m:
            total += gain_tab[g] * disc[r]
            r += 1
            c -= 1
        if r >= m:
            break
    return total


def prefix_arrays(metric, lab, k, gain_tab, threshold, lgb_discount, disc, pre, sc):
    """Fill ``pre``/``sc`` for one query whose labels ``lab`` are in rank order.

    ``gain_tab`` is the NDCG gain per grade, or R(l) per grade for ERR; ``disc`` holds
    :func:`discounts` for at least ``lab.size`` positions. For jitted code only: a
    literal ``metric`` at the call compiles that metric's code alone
    (:func:`_prefix_code`), any other all four behind a branch.
    """
    raise TypeError("prefix_arrays is called from jitted code only")


def _prefix_code(M):  # noqa: N803
    """:func:`prefix_arrays` for metric ``M``: a closure over it, so that numba drops
    the other metrics' code before typing it."""

    def prefix(metric, lab, k, gain_tab, threshold, lgb_discount, disc, pre, sc):
        n = lab.size
        for r in range(4):
            sc[r] = 0.0
        if M == NDCG:
            idcg = ideal_dcg(lab, gain_tab, k, disc)
            sc[0] = 1.0 / idcg if idcg > 0.0 else 0.0
            for r in range(n):
                pre[0, r] = disc[r] if (r < k or lgb_discount) else 0.0
                pre[1, r] = gain_tab[int(lab[r])]
        elif M == ERR:
            p = 1.0
            q = 0.0
            pre[2, 0] = 0.0
            for r in range(n):
                R = gain_tab[int(lab[r])]
                pre[0, r] = R
                pre[1, r] = p
                if r < k:
                    q += R * p / (r + 1.0)
                pre[2, r + 1] = q
                p *= 1.0 - R
        elif M == MAP:
            hits = 0.0
            t = 0.0
            pre[1, 0] = 0.0
            pre[2, 0] = 0.0
            for r in range(n):
                rel = 1.0 if lab[r] >= threshold else 0.0
                pre[0, r] = rel
                hits += rel
                if rel > 0.0 and r < k:
                    t += 1.0 / (r + 1.0)
                pre[1, r + 1] = hits
                pre[2, r + 1] = t
            d = min(hits, float(k))
            sc[0] = 1.0 / d if d > 0.0 else 0.0
        else:  # MRR
            first = np.inf
            second = np.inf
            for r in range(n):
                rel = 1.0 if lab[r] >= threshold else 0.0
                pre[0, r] = rel
                if rel > 0.0:
                    if first == np.inf:
                        first = r + 1.0
                    elif second == np.inf:
                        second = r + 1.0
            sc[0] = first
            sc[1] = second
            sc[2] = 1.0 / first if first <= k else 0.0

    return prefix


@overload(prefix_arrays, prefer_literal=True, jit_options={"nogil": True})
def _prefix_arrays_impl(metric, lab, k, gain_tab, threshold, lgb_discount, disc, pre,
                        sc):
    if isinstance(metric, types.IntegerLiteral):
        return _prefix_code(metric.literal_value)

    def any_metric(metric, lab, k, gain_tab, threshold, lgb_discount, disc, pre, sc):
        if metric == NDCG:
            prefix_arrays(NDCG, lab, k, gain_tab, threshold, lgb_discount, disc, pre, sc)
        elif metric == ERR:
            prefix_arrays(ERR, lab, k, gain_tab, threshold, lgb_discount, disc, pre, sc)
        elif metric == MAP:
            prefix_arrays(MAP, lab, k, gain_tab, threshold, lgb_discount, disc, pre, sc)
        else:
            prefix_arrays(MRR, lab, k, gain_tab, threshold, lgb_discount, disc, pre, sc)
    return any_metric


@njit(cache=True, nogil=True, inline="always")
def pair_delta(metric, a, b, k, pre, sc):
    """|Z(after swapping positions a < b) − Z(now)|, O(1)."""
    if metric == NDCG:
        return abs(pre[1, a] - pre[1, b]) * abs(pre[0, a] - pre[0, b]) * sc[0]
    A = a + 1.0
    B = b + 1.0
    if metric == ERR:
        # Ranks before A and after B keep their terms (the product over the first B
        # ranks is the same multiset); rank A, the ranks between (their products
        # trade 1 − R_A for 1 − R_B) and rank B change. R < 1 always, so 1 − R_A > 0.
        ra = pre[0, a]
        rb = pre[0, b]
        inv = 1.0 / (1.0 - ra)
        d = (rb - ra) * pre[1, a] / A
        d += (pre[2, b] - pre[2, a + 1]) * (ra - rb) * inv
        if B <= k:
            d += pre[1, b] * (ra * (1.0 - rb) * inv - rb) / B
        return abs(d)
    if metric == MAP:
        if pre[0, a] == pre[0, b]:
            return 0.0
        # The relevant row of the pair sits at A (with H_{A-1} + 1 hits) on one side
        # and at B (with H_B hits) on the other; relevant rows in between gain or lose
        # one hit each. Terms beyond k are absent.
        d = (pre[1, a] + 1.0) / A + (pre[2, b] - pre[2, a + 1])
        if B <= k:
            d -= pre[1, b + 1] / B
        return abs(d) * sc[0]
    # MRR
    rel_a = pre[0, a]
    if rel_a == pre[0, b]:
        return 0.0
    first = sc[0]
    if rel_a == 0.0:
        # A relevant row moves up from B to A: matters only above the first relevant.
        if A < first:
            return 1.0 / A - sc[2]
        return 0.0
    if A == first:
        nf = min(B, sc[1])
        new = 1.0 / nf if nf <= k else 0.0
        return 1.0 / A - new
    return 0.0
