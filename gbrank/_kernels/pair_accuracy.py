"""Pair accuracy per query: concordant and score-tied pairs among differently-labelled
pairs, counted exactly in O(n log n) with a Fenwick tree over label classes.

Rows are visited by ascending score, one block of tied scores at a time. Small queries
get that order from a comparison sort; big ones (group-less data is the normal case)
with many distinct labels from the int32 radix order of the scores
(:mod:`gbrank._kernels._radix`), which at 10^6 rows costs a few linear passes instead
of ~20 comparison levels; big ones with few labels sort each label's scores and merge.
All paths count the same integers, so they agree exactly.
"""

import numpy as np
from numba import njit

from gbrank._kernels._grades import grade_classes_into, table_classes_into
from gbrank._kernels._order import RANK_ORDER_MAX, ascending_order, rank_order_into, run_end

# From this many rows per query the radix path is used (below, its fixed cost of
# histograms over 2^11 buckets per digit outweighs the comparison sort).
RADIX_MIN_ROWS = 4096  # also where the per-class sort path starts


@njit(cache=True, nogil=True, inline="always")
def _total_pairs(cls, n_cls):
    """Pairs with different labels: all pairs minus pairs inside one class."""
    m = cls.size
    counts = np.zeros(n_cls, dtype=np.int64)
    for i in range(m):
        counts[cls[i]] += 1
    same = 0
    for c in range(n_cls):
        same += counts[c] * (counts[c] - 1) // 2
    return m * (m - 1) // 2 - same


@njit(cache=True, nogil=True, inline="always")
def _sweep(s, order, cls_sorted, n_cls):
    """(concordant, score-tied) pairs, visiting rows ``order[0], order[1], …`` (scores
    ascending); ``cls_sorted[v]`` is the class of row ``order[v]``.

    Before a block of tied scores is added to the tree, the tree holds every row with a
    strictly lower score, so for row i the rows with a lower class among them are
    exactly its concordant partners below it. Pairs inside a block are score ties;
    those with different labels count 1/2.
    """
    m = order.size
    # int32 counts (a query has fewer than 2^31 rows): half the memory and cache
    # footprint when every label is distinct (n_cls = n).
    tree = np.zeros(n_cls + 1, dtype=np.int32)
    block_count = np.zeros(n_cls, dtype=np.int32)
    concordant = 0
    tied = 0
    t = 0
    while t < m:
        u = run_end(s, order, t)
        for v in range(t, u):
            # rows below with a smaller class: prefix sum over classes 0 … c - 1
            j = cls_sorted[v]
            while j > 0:
                concordant += tree[j]
                j -= j & (-j)
        if u - t > 1:
            same = 0
            for v in range(t, u):
                c = cls_sorted[v]
                same += block_count[c]
                block_count[c] += 1
            tied += (u - t) * (u - t - 1) // 2 - same
            for v in range(t, u):
                block_count[cls_sorted[v]] = 0
        for v in range(t, u):
            j = cls_sorted[v] + 1
            while j <= n_cls:
                tree[j] += 1
                j += j & (-j)
        t = u
    return concordant, tied


@njit(cache=True, nogil=True, inline="always")
def _small_counts(y, s, mid, cls, buf, key, idx, seen, ordered):
    """(concordant, score-tied, total) for one query of fewer than ``RADIX_MIN_ROWS``
    rows; the other arguments are scratch at least as long as the query (``cls``
    int32, ``buf``/``key`` float64, ``idx``/``seen``/``ordered`` int64). Up to
    ``RANK_ORDER_MAX`` rows the scores (and labels that are not small integers) are
    ordered by counting ranks; longer queries need ``mid`` True (``None``: numba drops
    their sorts before typing them), then NumPy's sort and the radix order of the
    labels. Any order gives the same counts: ties are counted by blocks of equal
    scores."""
    n = y.size
    cls = cls[:n]
    n_cls = table_classes_into(y, cls)
    if n_cls < 0:
        # Labels that are not small integers: dense ranks along their sorted order.
        if n <= RANK_ORDER_MAX or mid is None:
            rank_order_into(y, buf, key, idx, seen)  # descending: walk it backwards
            c = -1
            prev = np.inf
            for p in range(n - 1, -1, -1):
                v = key[p]
                if v != prev:
                    c += 1
                    prev = v
                cls[idx[p]] = c
            n_cls = c + 1
        else:
            n_cls = grade_classes_into(y, cls)
    total = _total_pairs(cls, n_cls)
    if total == 0:
        return 0, 0, 0
    if n <= RANK_ORDER_MAX or mid is None:
        # Scores ascending: the stable descending order reversed.
        rank_order_into(s, buf, key, idx, seen)
        for p in range(n):
            ordered[p] = idx[n - 1 - p]
        order = ordered[:n]
    else:
        order = np.argsort(s)
    cls_sorted = np.empty(n, dtype=np.int32)
    for p in range(n):
        cls_sorted[p] = cls[order[p]]
    c, t = _sweep(s, order, cls_sorted, n_cls)
    return c, t, total


@njit(cache=True, nogil=True)
def _pair_counts_small(y, s):
    """(concordant, score-tied, total) for one query, as :func:`_small_queries` counts
    it (any size here)."""
    n = y.size
    return _small_counts(y, s, True, np.empty(n, dtype=np.int32), np.empty(n), np.empty(n),
                         np.empty(n, dtype=np.int64), np.empty(n, dtype=np.int64),
                         np.empty(n, dtype=np.int64))


@njit(cache=True, nogil=True)
def _radix_counts(s, cls, n_cls):
    """(concordant, score-tied) pairs of one big query through the int32 radix order of
    its scores (reversed in place to ascending). Scratch: the order and its sort buffer,
    then the classes in that order (one float64 array's worth at a time), beside the
    caller's int32 classes."""
    m = s.size
    order = ascending_order(s)
    cls_sorted = np.empty(m, dtype=np.int32)
    for v in range(m):
        cls_sorted[v] = cls[order[v]]
    return _sweep(s, order, cls_sorted, n_cls)


@njit(cache=True, nogil=True)
def _pair_counts_radix(y, s):
    """(concordant, score-tied, total) for one big query, radix-sorted."""
    cls = np.empty(y.size, dtype=np.int32)
    n_cls = grade_classes_into(y, cls)
    total = _total_pairs(cls, n_cls)
    if total == 0:
        return 0, 0, 0
    c, t = _radix_counts(s, cls, n_cls)
    return c, t, total


@njit(cache=True, nogil=True)
def _scores_by_class(s, cls, n_cls):
    """Scores grouped by class (class 0 first, row order inside) and class offsets."""
    m = s.size
    starts = np.zeros(n_cls + 1, dtype=np.int64)
    for i in range(m):
        starts[cls[i] + 1] += 1
    for c in range(n_cls):
        starts[c + 1] += starts[c]
    fill = starts[:-1].copy()
    out = np.empty(m)
    for i in range(m):
        c = cls[i]
        out[fill[c]] = s[i]
        fill[c] += 1
    return out, starts


@njit(cache=True, nogil=True)
def _merge_counts(sorted_by_class, starts):
    """(concordant, score-tied) pairs from each class's scores sorted ascending.

    For classes a < b and each score x of class b, the rows of class a below x are
    concordant partners and those equal to x are ties: two pointers per class pair,
    O((C − 1)·n) for C classes.
    """
    n_cls = starts.size - 1
    concordant = 0
    tied = 0
    for a in range(n_cls):
        a0 = starts[a]
        a1 = starts[a + 1]
        for b in range(a + 1, n_cls):
            lt = a0  # first score of class a that is >= x
            le = a0  # first score of class a that is > x
            for i in range(starts[b], starts[b + 1]):
                x = sorted_by_class[i]
                while lt < a1 and sorted_by_class[lt] < x:
                    lt += 1
                if le < lt:
                    le = lt
                while le < a1 and sorted_by_class[le] <= x:
                    le += 1
                concordant += lt - a0
                tied += le - lt
    return concordant, tied


@njit(cache=True, nogil=True)
def _small_queries(y, s, offsets, min_big_rows, mid, good, pairs):
    """Counts of every query below ``min_big_rows`` rows; big ones are left out.
    ``mid``: True when some of them has more than ``RANK_ORDER_MAX`` rows, else
    ``None`` (:func:`_small_counts`)."""
    longest = 0
    for q in range(offsets.size - 1):
        m = offsets[q + 1] - offsets[q]
        if m < min_big_rows:
            longest = max(longest, m)
    cls = np.empty(longest, dtype=np.int32)
    buf = np.empty(longest)
    key = np.empty(longest)
    idx = np.empty(longest, dtype=np.int64)
    seen = np.empty(longest, dtype=np.int64)
    ordered = np.empty(longest, dtype=np.int64)
    for q in range(offsets.size - 1):
        a = offsets[q]
        b = offsets[q + 1]
        if b - a < min_big_rows:
            c, t, p = _small_counts(y[a:b], s[a:b], mid, cls, buf, key, idx, seen, ordered)
            good[q] = c + 0.5 * t
            pairs[q] = p


# Up to this many distinct labels a big query is counted by sorting each class's
# scores (NumPy's vectorised sort) and merging class pairs; above, the radix sort of all
# scores and the Fenwick sweep (O(n log C) instead of O(n C)).
MERGE_MAX_CLASSES = 16


def _pair_counts_big(y: np.ndarray, s: np.ndarray) -> tuple[int, int, int]:
    """(concordant, score-tied, total) of one big query.

    Scratch: an int32 class per row and one float64 copy of the scores (1.5 float64
    arrays) when the labels take at most ``MERGE_MAX_CLASSES`` values; otherwise the
    classes and the int32 radix order with its sort buffer (1.5 arrays' worth).
    """
    cls = np.empty(y.size, dtype=np.int32)
    # Small integer grades take the table alone (the general path, through a sort of
    # the labels, is compiled only for other labels).
    n_cls = table_classes_into(y, cls)
    if n_cls < 0:
        n_cls = grade_classes_into(y, cls)
    total = _total_pairs(cls, n_cls)
    if total == 0:
        return 0, 0, 0
    if n_cls > MERGE_MAX_CLASSES:
        c, t = _radix_counts(s, cls, n_cls)
        return int(c), int(t), int(total)
    by_class, starts = _scores_by_class(s, cls, n_cls)
    del cls
    for c in range(n_cls):
        by_class[starts[c]:starts[c + 1]].sort()  # in place, SIMD in NumPy >= 2
    c, t = _merge_counts(by_class, starts)
    return int(c), int(t), int(total)


def pair_counts_per_query(y: np.ndarray, s: np.ndarray,
                          offsets: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Per query: concordant pairs + 1/2 per score-tied pair, and the number of pairs
    with different labels (float64: exact integers below 2**53)."""
    nq = offsets.size - 1
    good = np.empty(nq, dtype=np.float64)
    pairs = np.empty(nq, dtype=np.float64)
    sizes = np.diff(offsets)
    small = sizes < RADIX_MIN_ROWS
    if small.any():
        # Compiled only for data with small queries (not for one group-less query),
        # with the sorts of queries above RANK_ORDER_MAX rows only when there are any.
        mid = True if (sizes[small] > RANK_ORDER_MAX).any() else None
        _small_queries(y, s, offsets, RADIX_MIN_ROWS, mid, good, pairs)
    for q in np.flatnonzero(~small):
        a, b = int(offsets[q]), int(offsets[q + 1])
        c, t, p = _pair_counts_big(y[a:b], s[a:b])
        good[q] = c + 0.5 * t
        pairs[q] = p
    return good, pairs
