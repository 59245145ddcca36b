"""What a log of click sessions says of its users: whether they stop after a click (a
cascade user), which the position-based model of every ``position_bias`` correction
does not describe. One statistic, read by the corrections' training check
(:mod:`gbrank.objectives._cascade`) and by the public diagnostic
:func:`gbrank.datasets.multi_click_sessions`. And which sessions show the same
documents (:func:`linked_sessions`), which a held-out split must keep together."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

__all__ = ["CASCADE_MIN_EXPECTED", "CASCADE_RATIO", "feature_rows", "held_out_blocks",
           "linked_sessions", "looks_cascade", "multi_click_shares", "session_columns"]

# A cascade-like log: sessions with two or more clicks below this share of what
# independent examination gives, once that model expects this many such sessions. On the
# click protocols' position-based logs the share was 0.54-0.72 of it, unit by unit
# (sessions without a click dropped); a cascade user's, 0
# (experiments/results/cascade_sign.md).
CASCADE_RATIO = 0.25
CASCADE_MIN_EXPECTED = 20.0


def multi_click_shares(y: np.ndarray, group: Any, slot: np.ndarray, k: int,
                       reduce_sum: Callable[[np.ndarray], np.ndarray] | None = None
                       ) -> tuple[float, float, float] | None:
    """Of the sessions with a click, the share with two or more, and that share under
    independent clicks at the log's per-position click rates, with the expected number
    of such sessions: ``(seen, independent, expected_count)``; ``None`` when the rows
    cannot be read as sessions of clicks (labels 0/1 in groups, no group showing a
    position twice) or none has a click.

    ``y``: the labels, ``group``: session sizes (or None), ``slot``/``k``: each row's
    position slot and the number of slots, ``reduce_sum``: sums over the workers of a
    distributed training (None: one machine). Every worker makes the same reductions (a
    worker whose rows do not qualify adds zeros) and all get the same answer."""
    reduce_sum = reduce_sum or (lambda a: a)
    sizes = None if group is None else np.asarray(group, dtype=np.int64).ravel()
    usable = (sizes is not None and sizes.size > 0 and sizes.sum() == y.size
              and bool(np.all((y == 0.0) | (y == 1.0))))
    if usable:  # a group that shows a position twice is not one session (a query's
        # sessions concatenated): its clicks cannot be counted per session
        session = np.repeat(np.arange(sizes.size, dtype=np.int64), sizes)
        key = session * k + slot
        usable = np.unique(key).size == key.size
    counts = np.zeros(2 * k + 1)
    if usable:
        counts[:k] = np.bincount(slot, weights=y, minlength=k)
        counts[k:2 * k] = np.bincount(slot, minlength=k)
    else:
        counts[2 * k] = 1.0  # rows that cannot be read as sessions of clicks
    counts = reduce_sum(counts)
    sums = np.zeros(4)  # expected ≥ 2 clicks, expected ≥ 1, seen ≥ 2, seen ≥ 1
    if usable:
        rate = counts[:k] / np.maximum(counts[k:2 * k], 1.0)
        p = np.minimum(rate[slot], 1.0 - 1e-9)
        none = np.exp(np.bincount(session, np.log1p(-p), minlength=sizes.size))
        one = none * np.bincount(session, p / (1.0 - p), minlength=sizes.size)
        n_clicks = np.bincount(session, y, minlength=sizes.size)
        sums[:] = (np.sum(1.0 - none - one), np.sum(1.0 - none),
                   np.sum(n_clicks >= 2), np.sum(n_clicks >= 1))
    expected_two, expected_any, seen_two, seen_any = reduce_sum(sums)
    if counts[2 * k] > 0 or seen_any == 0:
        return None
    return seen_two / seen_any, expected_two / expected_any, expected_two


def looks_cascade(seen: float, independent: float, expected_count: float) -> bool:
    """Whether :func:`multi_click_shares`'s figures are a cascade user's: far fewer
    sessions with two clicks than independent clicks give, with enough of them expected
    to tell."""
    return expected_count >= CASCADE_MIN_EXPECTED and seen < CASCADE_RATIO * independent


def session_columns(X: Any, group: np.ndarray) -> np.ndarray:
    """Which columns of ``X`` hold one value on every row of each list (``group``: the
    lists' sizes, rows contiguous): a session's own features (its hour, device), not the
    document's, so a document shown in two sessions differs there."""
    V = X.to_numpy() if hasattr(X, "iloc") else (
        X.toarray() if hasattr(X, "toarray") else np.asarray(X))
    V = V.reshape(V.shape[0], -1)
    if V.shape[0] == 0:
        return np.zeros(V.shape[1], dtype=bool)
    first = np.repeat(V[np.r_[0, np.cumsum(group)[:-1]]], group, axis=0)
    with np.errstate(invalid="ignore"):
        same = (V == first) | ((V != V) & (first != first))  # NaN as NaN
    return np.asarray(same, dtype=bool).all(axis=0)


def feature_rows(X: Any, drop: np.ndarray | None = None) -> np.ndarray:
    """One id per distinct feature row of ``X`` (an array, a sparse matrix or a
    DataFrame) less the columns ``drop`` marks: equal rows, equal ids (+0.0 and -0.0
    alike, as the trees see them). With every column marked, every column is read."""
    keep = None if drop is None or drop.all() or not drop.any() else ~np.asarray(drop)
    if hasattr(X, "iloc"):  # a DataFrame, whatever its column types
        import pandas as pd

        h = pd.util.hash_pandas_object(X if keep is None else X.iloc[:, keep],
                                       index=False).to_numpy()
        return np.unique(h, return_inverse=True)[1].ravel()
    X = X.toarray() if hasattr(X, "toarray") else np.asarray(X, dtype=np.float64)
    X = np.ascontiguousarray(X, dtype=np.float64).reshape(X.shape[0], -1)
    X = (X if keep is None else X[:, keep]) + 0.0
    return np.unique(X, axis=0, return_inverse=True)[1].ravel()


def linked_sessions(rows: np.ndarray, group: np.ndarray) -> np.ndarray:
    """Block id of each session (``group``: sessions' sizes, rows contiguous; ``rows``:
    each row's document, :func:`feature_rows` less the :func:`session_columns`):
    sessions that share a document, directly or through others, get one id (0, 1, … in
    order of first session)."""
    from scipy.sparse import coo_matrix
    from scipy.sparse.csgraph import connected_components

    ns = group.size
    session = np.repeat(np.arange(ns), group)
    n = ns + int(rows.max(initial=-1)) + 1
    graph = coo_matrix((np.ones(session.size), (session, ns + rows)), shape=(n, n))
    labels = connected_components(graph, directed=False)[1][:ns]
    return np.unique(labels, return_inverse=True)[1].ravel()


def held_out_blocks(blocks: np.ndarray, share: float, rng: Any) -> np.ndarray:
    """Which lists to hold out (a boolean per list): whole blocks (``blocks``: each
    list's block id 0 … B−1, B ≥ 2) drawn in ``rng``'s random order until they hold
    ``share`` of the lists; at least one block on each side."""
    nb = int(blocks.max()) + 1
    order = rng.permutation(nb)
    filled = np.cumsum(np.bincount(blocks, minlength=nb)[order])
    k = min(max(int(np.searchsorted(filled, share * blocks.size)) + 1, 1), nb - 1)
    return np.isin(blocks, order[:k])
