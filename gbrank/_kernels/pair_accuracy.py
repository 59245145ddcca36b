"""Pair accuracy per query: concordant and score-tied pairs among differently-labelled
pairs, counted exactly in O(n log n) with a Fenwick tree over label ranks."""

import numpy as np
from numba import njit


@njit(cache=True, nogil=True)
def _pair_counts(y, s):
    """(concordant, score-tied, total) counts over pairs with different labels.

    Rows are visited by ascending score, one block of tied scores at a time. Before a
    block is added to the tree, the tree holds every row with a strictly lower score,
    so for row i the rows with a lower label among them are exactly its concordant
    partners below it. Pairs inside a block are score ties; those with different
    labels count 1/2.
    """
    m = y.size
    lorder = np.argsort(y, kind="mergesort")
    rank = np.empty(m, dtype=np.int64)
    r = 0
    same_label_pairs = 0
    run = 0
    for t in range(m):
        if t > 0 and y[lorder[t]] != y[lorder[t - 1]]:
            r += 1
            run = 0
        same_label_pairs += run
        run += 1
        rank[lorder[t]] = r + 1  # 1-based for the tree
    n_labels = r + 1
    total = m * (m - 1) // 2 - same_label_pairs
    if total == 0:
        return 0, 0, 0
    tree = np.zeros(n_labels + 1, dtype=np.int64)
    block_count = np.zeros(n_labels + 1, dtype=np.int64)
    sorder = np.argsort(s, kind="mergesort")
    concordant = 0
    tied = 0
    t = 0
    while t < m:
        u = t + 1
        while u < m and s[sorder[u]] == s[sorder[t]]:
            u += 1
        for v in range(t, u):
            # rows below with a smaller label: prefix sum up to rank - 1
            j = rank[sorder[v]] - 1
            while j > 0:
                concordant += tree[j]
                j -= j & (-j)
        if u - t > 1:
            same = 0
            for v in range(t, u):
                rv = rank[sorder[v]]
                same += block_count[rv]
                block_count[rv] += 1
            tied += (u - t) * (u - t - 1) // 2 - same
            for v in range(t, u):
                block_count[rank[sorder[v]]] = 0
        for v in range(t, u):
            j = rank[sorder[v]]
            while j <= n_labels:
                tree[j] += 1
                j += j & (-j)
        t = u
    return concordant, tied, total


@njit(cache=True, nogil=True)
def pair_counts_per_query(y, s, offsets):
    """Per query: concordant pairs + 1/2 per score-tied pair, and the number of pairs
    with different labels (float64: exact integers below 2**53)."""
    nq = offsets.size - 1
    good = np.empty(nq, dtype=np.float64)
    pairs = np.empty(nq, dtype=np.float64)
    for q in range(nq):
        a = offsets[q]
        b = offsets[q + 1]
        c, t, p = _pair_counts(y[a:b], s[a:b])
        good[q] = c + 0.5 * t
        pairs[q] = p
    return good, pairs
