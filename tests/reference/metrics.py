"""Slow reference metrics written from docs/contract.md, pure Python, one query at a time.

They share nothing with gbrank's kernels: rankings come from ``sorted`` with an
explicit (-score, row) key, gains and sums are spelled out per the formulas.
"""

from __future__ import annotations

import math

import numpy as np


def ranking(s):
    """Stable descending order: ties by row order."""
    return sorted(range(len(s)), key=lambda i: (-s[i], i))


def dcg(labels_in_order, k, gain):
    return sum(gain(l) / math.log2(r + 2) for r, l in enumerate(labels_in_order[:k]))


def ndcg_q(y, s, k=None, gain=lambda l: 2.0**l - 1.0):
    n = len(y)
    k = n if k is None else min(k, n)
    ideal = dcg(sorted(y, reverse=True), k, gain)
    if ideal <= 0:
        return 1.0
    return dcg([y[i] for i in ranking(s)], k, gain) / ideal


def err_q(y, s, k=None, g_max=None):
    n = len(y)
    k = n if k is None else min(k, n)
    g_max = max(y) if g_max is None else g_max
    total, keep = 0.0, 1.0
    for r, i in enumerate(ranking(s)[:k], start=1):
        R = (2.0 ** y[i] - 1.0) / 2.0**g_max
        total += keep * R / r
        keep *= 1.0 - R
    return total


def ap_q(y, s, k=None, threshold=1):
    n = len(y)
    k = n if k is None else min(k, n)
    rel = [l >= threshold for l in y]
    npos = sum(rel)
    if npos == 0:
        return 1.0
    hits, total = 0, 0.0
    for r, i in enumerate(ranking(s)[:k], start=1):
        if rel[i]:
            hits += 1
            total += hits / r
    return total / min(npos, k)


def rr_q(y, s, k=None, threshold=1):
    for r, i in enumerate(ranking(s), start=1):
        if k is not None and r > k:
            break
        if y[i] >= threshold:
            return 1.0 / r
    return 0.0


def precision_q(y, s, k=None, threshold=1):
    n = len(y)
    k = n if k is None else min(k, n)
    return sum(y[i] >= threshold for i in ranking(s)[:k]) / k


def recall_q(y, s, k=None, threshold=1):
    n = len(y)
    k = n if k is None else min(k, n)
    npos = sum(l >= threshold for l in y)
    if npos == 0:
        return 1.0
    return sum(y[i] >= threshold for i in ranking(s)[:k]) / npos


def pair_counts_q(y, s):
    """O(n^2): (concordant + ties/2, differently-labelled pairs)."""
    good, pairs = 0.0, 0
    n = len(y)
    for i in range(n):
        for j in range(i + 1, n):
            if y[i] == y[j]:
                continue
            pairs += 1
            # Compare orders, not the product of differences (which underflows to 0
            # for subnormal score gaps and would count a strict order as a tie).
            if s[i] == s[j]:
                good += 0.5
            elif (s[i] > s[j]) == (y[i] > y[j]):
                good += 1.0
    return good, pairs


def split_queries(y, s, group=None, qid=None, weight=None):
    """Per-query (y, s, w) lists; qid queries keep rows in their original order."""
    y = list(map(float, y))
    s = list(map(float, s))
    n = len(y)
    if qid is not None:
        rows_of = {}
        for i, q in enumerate(qid):
            rows_of.setdefault(q, []).append(i)
        blocks = [rows_of[q] for q in sorted(rows_of)]
    elif group is not None:
        blocks, start = [], 0
        for g in group:
            blocks.append(list(range(start, start + int(g))))
            start += int(g)
    else:
        blocks = [list(range(n))]
    out = []
    for qi, rows in enumerate(blocks):
        if weight is None:
            w = 1.0
        elif len(weight) == n:
            w = float(weight[rows[0]])
        else:
            w = float(weight[qi])
        out.append(([y[i] for i in rows], [s[i] for i in rows], w))
    return out


def mean_over_queries(per_query, y, s, group=None, qid=None, weight=None):
    qs = split_queries(y, s, group, qid, weight)
    num = sum(w * per_query(qy, qs_) for qy, qs_, w in qs)
    return num / sum(w for _, _, w in qs)


def pair_accuracy(y, s, group=None, qid=None, weight=None):
    good = pairs = 0.0
    for qy, qs_, w in split_queries(y, s, group, qid, weight):
        g, p = pair_counts_q(qy, qs_)
        good += w * g
        pairs += w * p
    return 1.0 if pairs == 0 else good / pairs


def confusion(y, s, threshold, weight=None):
    a = b = c = d = 0.0
    for i, (yi, si) in enumerate(zip(y, s, strict=True)):
        w = 1.0 if weight is None else float(weight[i])
        pos = yi > 0
        if si > threshold:
            a, b = (a + w, b) if pos else (a, b + w)
        else:
            c, d = (c + w, d) if pos else (c, d + w)
    return a, b, c, d


def fbeta(y, s, beta=1.0, threshold=0.0, weight=None):
    a, b, c, _ = confusion(y, s, threshold, weight)
    if a + b + c == 0:
        return 1.0
    b2 = beta * beta
    return (1 + b2) * a / ((1 + b2) * a + b + b2 * c)


def brute_best_fbeta(y, s, beta=1.0, weight=None):
    cands = sorted(set(float(v) for v in s)) + [float(np.min(s)) - 1.0]
    return max(fbeta(y, s, beta, t, weight) for t in cands)


def balanced(y, s, threshold=0.0, weight=None):
    a, b, c, d = confusion(y, s, threshold, weight)
    recall = 1.0 if a + c == 0 else a / (a + c)
    specificity = 1.0 if b + d == 0 else d / (b + d)
    return (recall + specificity) / 2


def expected_calibration_error(t, p, n_bins, weight=None):
    """Equal-mass ECE of probabilities ``p`` against targets ``t``, one row at a time:
    rows sorted by (p, row); with n rows in b = min(n_bins, n) bins, the first n mod b
    bins hold one row more; each bin adds |Σ w t - Σ w p| / Σ w over all rows."""
    n = len(p)
    rows = sorted(range(n), key=lambda i: (float(p[i]), i))
    bins = min(n_bins, n)
    size, extra = divmod(n, bins)
    total_weight = sum(1.0 if weight is None else float(weight[i]) for i in range(n))
    ece, start = 0.0, 0
    for b in range(bins):
        stop = start + size + (1 if b < extra else 0)
        hit = pred = 0.0
        for i in rows[start:stop]:
            w = 1.0 if weight is None else float(weight[i])
            hit += w * float(t[i])
            pred += w * float(p[i])
        ece += abs(hit - pred)
        start = stop
    return ece / total_weight


def in_row_order(per_query, y, s, group=None, qid=None):
    """``per_query(y_q, s_q)`` of every query, in the order gbrank's per-query statistics
    return them: row order when each query's rows are contiguous (or with ``group``),
    else ascending ``qid``."""
    if qid is None:
        return [per_query(qy, qs) for qy, qs, _ in split_queries(y, s, group)]
    ids = list(qid)
    runs = [ids[0]] + [b for a, b in zip(ids, ids[1:], strict=False) if b != a]
    order = runs if len(runs) == len(set(ids)) else sorted(set(ids))
    return [per_query([float(y[i]) for i in range(len(ids)) if ids[i] == q],
                      [float(s[i]) for i in range(len(ids)) if ids[i] == q]) for q in order]
