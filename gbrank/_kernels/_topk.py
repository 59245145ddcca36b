"""Top-k of one query in the stable descending order (LightGBM's tie rule)."""

import numpy as np
from numba import njit

from gbrank._kernels._order import RANK_ORDER_MAX, descending_order, rank_order_into

# Above this k an insertion buffer loses to a full O(n log n) sort.
BUFFER_MAX_K = 64


@njit(cache=True, nogil=True, inline="always")
def _offer(v, i, m, kth, k, idx, val):
    """Offer row ``i`` (score ``v``) to the sorted buffer holding ``m`` of ``k`` rows,
    ``kth`` its lowest score once full; returns the new ``(m, kth)``. A row enters only
    when it beats ``kth`` strictly, after every buffered row at least as high."""
    if m == k:
        if not v > kth:
            return m, kth
        j = k - 1
    else:
        j = m
        m += 1
    while j > 0 and val[j - 1] < v:
        idx[j] = idx[j - 1]
        val[j] = val[j - 1]
        j -= 1
    idx[j] = i
    val[j] = v
    if m == k:
        kth = val[k - 1]
    return m, kth


@njit(cache=True, nogil=True)
def top_k_into(s, a, b, k, idx, val):
    """Write into ``idx[:k]`` the rows (absolute indices) of ``s[a:b]`` holding the ``k``
    highest scores, in stable descending order (``val[:k]`` gets their scores); needs
    ``k <= b - a``.

    One scan with a sorted buffer: a row enters only when it beats the current k-th
    score strictly (a tie loses to the earlier row) and is inserted after every
    buffered row with a score at least as high, so the buffer is exactly the head of
    the stable order. Random scores cost about ``n + k log(n / k)`` comparisons.
    """
    m = 0
    kth = 0.0  # val[k - 1] once the buffer is full
    for i in range(a, b):
        m, kth = _offer(s[i], i, m, kth, k, idx, val)


# The long scan looks at rows in chunks of this many: a chunk whose maximum does not
# beat the k-th score so far cannot change the buffer and is passed over after one
# vectorised maximum.
SCAN_CHUNK = 256


@njit(cache=True, nogil=True, fastmath=True)
def _max_of(s, a, b):
    """max(s[a:b]) of finite scores (fastmath: LLVM vectorises the reduction)."""
    m = s[a]
    for i in range(a + 1, b):
        m = max(m, s[i])
    return m


@njit(cache=True, nogil=True)
def top_k_into_long(s, a, b, k, idx, val):
    """:func:`top_k_into` (same result, no scratch beyond ``idx``/``val``) for long
    ranges (``b − a ≥ 2k``). First a lower bound T of the k-th score: the smallest of
    the maxima of k strided blocks (rows a + j, a + j + k, …: one vectorised running
    maximum), k distinct rows at or above T. Then the buffer scan, in chunks of
    :data:`SCAN_CHUNK` rows: a chunk is scanned only when its maximum reaches T and,
    once the buffer is full, beats the current k-th score strictly (exactly the
    condition for any of its rows to enter). Scores ascending in row order, where every
    row would enter the plain buffer, are pruned to the top k by T (figures in
    docs/performance.md)."""
    n = b - a
    for j in range(k):
        val[j] = s[a + j]
    for base in range(a + k, a + (n // k) * k, k):
        for j in range(k):
            val[j] = max(val[j], s[base + j])
    bound = np.inf
    for j in range(k):
        bound = min(bound, val[j])
    m = 0
    kth = 0.0
    for c0 in range(a, b, SCAN_CHUNK):
        c1 = min(b, c0 + SCAN_CHUNK)
        top = _max_of(s, c0, c1)
        if top < bound or (m == k and not top > kth):
            continue
        for i in range(c0, c1):
            v = s[i]
            if v >= bound:
                m, kth = _offer(v, i, m, kth, k, idx, val)


# Candidates of the pruned scan are ordered by counting ranks (c² branch-free,
# vectorised comparisons) up to this many; above it (many ties at the bound, a long
# query) the sorted buffer's c·k worst case is cheaper.
RANK_COUNT_MAX = 128


@njit(cache=True, nogil=True, inline="always")
def top_k_into_pruned(s, a, b, k, idx, val, cand, cand_val):
    """:func:`top_k_into` with a cheap first pass that discards most rows (same result);
    ``idx`` and ``val`` need ``k + 1`` slots (the last is scratch).

    Split the rows into ``k`` blocks, block ``j`` = rows ``a + j, a + j + k, …`` (strided,
    so the maxima are one vectorised running maximum over slices of ``k`` rows): the
    ``k`` block maxima are ``k`` distinct rows, so the smallest of them, T, is at most
    the k-th highest score, and every row of the top k has a score ≥ T. One
    branch-free pass copies the rows with ``s ≥ T`` (in row order, so ties keep their
    order) into ``cand``/``cand_val`` (each at least ``b - a`` long): about 2.5·k
    rows at 100 rows and k = 10. Each candidate's position in the stable order is
    then counted, ``#{c_j > c_i} + #{j < i: c_j = c_i}`` (every row above a top-k row
    is a candidate, so that is its rank in the whole query), and it is written to
    ``idx[min(rank, k)]``: no unpredictable branch. With more than
    :data:`RANK_COUNT_MAX` candidates the sorted buffer takes them instead. Below
    ``2 k`` rows the plain scan is used.
    """
    n = b - a
    if n < 2 * k:
        top_k_into(s, a, b, k, idx, val)
        return
    for j in range(k):
        val[j] = s[a + j]
    for base in range(a + k, a + (n // k) * k, k):
        for j in range(k):
            val[j] = max(val[j], s[base + j])
    bound = np.inf
    for j in range(k):
        bound = min(bound, val[j])
    c = 0
    for i in range(a, b):
        v = s[i]
        cand[c] = i
        cand_val[c] = v
        c += v >= bound
    if c <= RANK_COUNT_MAX:
        for i in range(c):
            v = cand_val[i]
            r = 0
            for j in range(c):
                r += (cand_val[j] > v) | ((cand_val[j] == v) & (j < i))
            idx[min(r, k)] = cand[i]
        for r in range(k):
            val[r] = s[idx[r]]
        return
    m = 0
    kth = 0.0
    for r in range(c):
        m, kth = _offer(cand_val[r], cand[r], m, kth, k, idx, val)


@njit(cache=True, nogil=True)
def top_k_scratch(offsets):
    """Buffers for :func:`top_k_rows_into` over every query of ``offsets`` (allocated
    once per kernel call, not per query): (idx, val, cand, cand_val, seen)."""
    longest = 0
    for q in range(offsets.size - 1):
        longest = max(longest, offsets[q + 1] - offsets[q])
    return (np.empty(longest, dtype=np.int64), np.empty(longest),
            np.empty(longest, dtype=np.int64), np.empty(longest),
            np.empty(longest, dtype=np.int64))


@njit(cache=True, nogil=True)
def top_k_rows_into(s, a, b, k, idx, val, cand, cand_val):
    """``idx[:k]`` = the rows (absolute indices) of the ``k`` highest scores of
    ``s[a:b]`` in stable descending order; ``k <= b - a``, buffers from
    :func:`top_k_scratch`. The pruned buffer scan for small ``k``, a full stable sort
    otherwise."""
    if k < b - a and k <= BUFFER_MAX_K:
        top_k_into_pruned(s, a, b, k, idx, val, cand, cand_val)
        return
    order = descending_order(s[a:b])
    for r in range(k):
        idx[r] = a + order[r]


@njit(cache=True, nogil=True)
def top_rows_into(s, a, b, kk, idx, val, cand, cand_val, seen, sorts, long_sorts):
    """:func:`top_k_rows_into` for kernels that know how deep their cut-offs go
    (:func:`full_order_needed`), with the scratch of :func:`top_k_scratch`. ``sorts``
    and ``long_sorts`` are ``None`` or True, and numba drops the code of a ``None``
    before typing it: ``sorts`` ``None``, no cut-off exceeds ``BUFFER_MAX_K`` (no full
    sort); ``long_sorts`` ``None``, the queries sorted in full have at most
    ``RANK_ORDER_MAX`` rows (ordered by counting ranks; longer ones by
    :func:`~gbrank._kernels._order.descending_order`). A cut-off of the whole query
    within the buffer's depth takes the buffer. All give the same stable order."""
    if kk <= BUFFER_MAX_K:
        if kk < b - a:
            top_k_into_pruned(s, a, b, kk, idx, val, cand, cand_val)
        else:
            top_k_into(s, a, b, kk, idx, val)
    elif sorts is not None:
        full_order_into(s, a, b, kk, idx, val, cand, cand_val, seen, long_sorts)


@njit(cache=True, nogil=True, inline="always")
def full_order_into(s, a, b, kk, idx, buf, rows, keys, seen, long_sorts):
    """``idx[:kk]`` = the rows (absolute) of the kk highest scores of ``s[a:b]`` from
    its full stable descending order: counting ranks up to ``RANK_ORDER_MAX`` rows
    (``buf``, ``rows``, ``keys``, ``seen``: scratch as long as the query), else
    :func:`~gbrank._kernels._order.descending_order`, compiled only when
    ``long_sorts`` is not ``None`` (see :func:`top_rows_into`)."""
    if b - a <= RANK_ORDER_MAX or long_sorts is None:
        rank_order_into(s[a:b], buf, keys, rows, seen)
        for r in range(kk):
            idx[r] = a + rows[r]
    else:
        order = descending_order(s[a:b])
        for r in range(kk):
            idx[r] = a + order[r]


def full_order_needed(offsets, k):
    """(``sorts``, ``long_sorts``) of :func:`top_rows_into` for queries ``offsets`` and
    cut-off ``k`` (``k <= 0``: every row): True when some query's cut-off min(k, n) is
    deeper than the selection buffer (and, for ``long_sorts``, that query has more than
    ``RANK_ORDER_MAX`` rows), else ``None``."""
    sizes = offsets[1:] - offsets[:-1]
    if sizes.size == 0:
        return None, None
    deep = sizes > BUFFER_MAX_K if (k <= 0 or k > BUFFER_MAX_K) else sizes < 0
    if not deep.any():
        return None, None
    return True, (True if (sizes[deep] > RANK_ORDER_MAX).any() else None)


@njit(cache=True, nogil=True)
def top_k_order(s, k):
    """The first ``min(k, n)`` positions of the stable descending order of ``s``."""
    n = s.size
    if k >= n or k > BUFFER_MAX_K:
        return descending_order(s)[: min(k, n)].astype(np.int64)
    idx = np.empty(k, dtype=np.int64)
    top_k_into(s, 0, n, k, idx, np.empty(k, dtype=np.float64))
    return idx
