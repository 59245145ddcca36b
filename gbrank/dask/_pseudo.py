"""Pseudo-queries: the documented alternative for group-less ranking on Dask, every
partition cut on its own into queries of a fixed size."""

from __future__ import annotations

from typing import Any

import numpy as np

from gbrank._validation import check_choice, check_integer
from gbrank.dask._collections import aligned_parts, as_numpy, compute, is_dask_frame, lazy
from gbrank.dask._partition import QueryPartitions
from gbrank.dask._queries import group_array

__all__ = ["pseudo_queries", "partition_pseudo_queries"]

_PSEUDO_DOC_ORDER = ("random", "sequential")


def pseudo_queries(n_rows: int, size: int, seed: int | None = 0, *,
                   order: str = "random") -> np.ndarray:
    r"""Per-row ids that cut ``n_rows`` rows into pseudo-queries of ``size`` rows.

    The group-less ranking loss compares every pair of rows; pseudo-queries compare only
    pairs inside one pseudo-query, which is what lets the loss be computed per worker.

    With :math:`n` rows and pseudo-queries of :math:`m` rows (the last one shorter when
    :math:`m` does not divide :math:`n`):

    - the number of pairs drops from :math:`n(n-1)/2` to about :math:`n(m-1)/2`;
    - with ``order="random"`` (rows assigned by a uniform random permutation), a given
      pair :math:`(i, j)` lands in one pseudo-query with probability
      :math:`p = (m-1)/(n-1)` (for :math:`m \mid n`: :math:`j` is one of the
      :math:`n-1` other rows, :math:`m-1` of which share :math:`i`'s pseudo-query). For
      RankNet, whose pair terms :math:`C_{ij}` do not depend on the other rows, the
      pseudo-query loss :math:`\tilde L = \sum_{ij} \mathbb 1[\text{same}]\,C_{ij}`
      therefore has :math:`\mathbb E[\tilde L] = p\,L` and, term by term,
      :math:`\mathbb E[\nabla \tilde L] = p\,\nabla L` and the same for the diagonal
      Hessian: an unbiased estimate of the all-pairs gradient up to the constant factor
      :math:`p`, which cancels in a Newton leaf value :math:`-\sum g / \sum h` taken on
      the expected gradient and Hessian (the ratio of the sampled sums is a ratio
      estimator: consistent, not exactly unbiased). It is one fixed draw for the whole
      training, so its error does not average out over rounds; larger :math:`m` means
      lower variance and more pairs.
    - LambdaRank's weights :math:`|\Delta Z_{ij}|` depend on ranks inside the query, so
      with pseudo-queries Z@k is the metric of each random pseudo-query's top k: a
      different objective, not an estimate of the group-less one (ranks within a
      pseudo-query are about :math:`m/n` of the global ranks).
    - ``order="sequential"`` cuts runs of adjacent rows: pairs of distant rows are never
      compared, biased whenever row order correlates with the label or the features.

    Parameters
    ----------
    n_rows : int
    size : int
        Rows per pseudo-query, ≥ 2.
    seed : int or None, default 0
        Seed of the permutation (``order="random"``).
    order : {"random", "sequential"}

    Returns
    -------
    ndarray of int64, shape (n_rows,)
        Pseudo-query ids 0 … ceil(n_rows / size) − 1.

    Examples
    --------
    >>> import numpy as np
    >>> from gbrank.dask import pseudo_queries
    >>> pseudo_queries(10, 4, order="sequential").tolist()
    [0, 0, 0, 0, 1, 1, 1, 1, 2, 2]
    >>> np.bincount(pseudo_queries(10, 4, seed=0)).tolist()  # the same sizes, shuffled
    [4, 4, 2]
    """
    n = check_integer(n_rows, "n_rows", 1)
    m = check_integer(size, "size", 2)
    check_choice(order, "order", _PSEUDO_DOC_ORDER)
    ids = np.arange(n, dtype=np.int64) // m
    if order == "random":
        rng = np.random.default_rng(seed)
        ids = ids[rng.permutation(n)]
    return ids


def _pseudo_part(part: Any, y: Any, w: Any, p: int, size: int, seed: Any,
                 order: str) -> tuple[Any, np.ndarray, np.ndarray, Any]:
    """Worker side: one partition cut into pseudo-queries, rows of each adjacent."""
    n = len(part)
    yy = as_numpy(y).ravel()
    if n == 0:
        return part, yy, np.zeros(0, np.int64), w
    s = None if seed is None else [int(seed), p]
    ids = pseudo_queries(n, size, s, order=order)
    perm = np.argsort(ids, kind="stable")
    sizes = np.bincount(ids).astype(np.int64)
    xp = part.iloc[perm] if hasattr(part, "iloc") else as_numpy(part)[perm]
    wp = None if w is None else as_numpy(w).ravel()[perm]
    return xp, yy[perm], sizes, wp


def partition_pseudo_queries(X: Any, y: Any, size: int, *, weight: Any = None,
                             seed: int | None = 0, order: str = "random") -> QueryPartitions:
    """The documented alternative for group-less ranking on Dask: cut every partition
    into pseudo-queries of ``size`` rows.

    Each partition is cut on its own (no data moves between workers); rows are
    reordered inside the partition so that every pseudo-query is contiguous. What this
    changes in the loss is derived in :func:`pseudo_queries`: only pairs inside a
    pseudo-query are compared (about n·(size − 1)/2 pairs instead of n(n − 1)/2); with
    ``order="random"`` RankNet's gradient is an unbiased estimate of the all-pairs one
    up to the factor (size − 1)/(n − 1) *if the partitions are themselves a random split
    of the rows* (pairs across partitions are never compared).

    Parameters
    ----------
    X : dask DataFrame or dask Array
    y : dask Series or dask Array
        Labels, partitioned like ``X``.
    size : int
        Rows per pseudo-query, ≥ 2.
    weight : dask Series or Array, optional
    seed : int or None, default 0
        The permutation of partition p uses ``numpy.random.default_rng([seed, p])``.
    order : {"random", "sequential"}

    Returns
    -------
    QueryPartitions
        ``qid`` holds pseudo-query codes unique over the whole data set.

    Examples
    --------
    Two partitions of 4 rows, each cut into pseudo-queries of 2 rows:

    >>> import dask.array as da
    >>> import numpy as np
    >>> from gbrank.dask import partition_pseudo_queries
    >>> X = da.from_array(np.arange(16.0).reshape(8, 2), chunks=(4, 2))
    >>> y = da.from_array(np.array([0.0, 1, 2, 0, 1, 0, 2, 1]), chunks=4)
    >>> parts = partition_pseudo_queries(X, y, size=2)
    >>> parts.partition_queries, parts.qid.compute().tolist()
    ((2, 2), [0, 0, 1, 1, 2, 2, 3, 3])
    >>> parts.group.compute().tolist()
    [2, 2, 2, 2]
    """
    import dask.array as da
    import dask.dataframe as dd

    m = check_integer(size, "size", 2)
    check_choice(order, "order", _PSEUDO_DOC_ORDER)
    parts = aligned_parts({"X": X, "y": y, "weight": weight})
    cut = [lazy(_pseudo_part)(pt["X"], pt["y"], pt.get("weight"), p, m, seed, order)
           for p, pt in enumerate(parts)]
    sizes = list(compute(*[c[2] for c in cut]))
    rows = tuple(int(s.sum()) for s in sizes)
    nqs = tuple(int(s.size) for s in sizes)
    offsets = np.concatenate(([0], np.cumsum(nqs)))

    def codes(p: int) -> Any:
        return da.from_array(np.repeat(np.arange(offsets[p], offsets[p + 1]), sizes[p]),
                             chunks=(rows[p],))

    ya = da.concatenate([da.from_delayed(c[1], shape=(rows[p],), dtype=np.float64)
                         for p, c in enumerate(cut)])
    qa = da.concatenate([codes(p) for p in range(len(cut))])
    wa = None
    if weight is not None:
        wa = da.concatenate([da.from_delayed(c[3], shape=(rows[p],), dtype=np.float64)
                             for p, c in enumerate(cut)])
    if is_dask_frame(X):
        Xd = dd.from_delayed([c[0] for c in cut], meta=X._meta, verify_meta=False)
    else:
        width = X.shape[1]
        Xd = da.concatenate([da.from_delayed(c[0], shape=(rows[p], width), dtype=X.dtype)
                             for p, c in enumerate(cut)])
    group = group_array(sizes, da)
    return QueryPartitions(Xd, ya, qa, group, wa, np.arange(offsets[-1]), rows, nqs)
