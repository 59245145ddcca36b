"""Query checks on partitioned data: every query whole and contiguous in one partition,
and LightGBM's query sizes chunked per partition."""

from __future__ import annotations

from typing import Any

import numpy as np

from gbrank.dask._collections import as_numpy, compute, delayed_parts, lazy

__all__ = ["query_runs", "raise_straddle", "check_query_partitions", "lightgbm_group",
           "group_array"]


def query_runs(qid: Any) -> dict[str, Any]:
    """Per partition: the query ids in order of appearance, their row counts, and the
    first id whose rows are not adjacent (``None`` when every query is one run)."""
    q = as_numpy(qid).ravel()
    if q.size == 0:
        return {"ids": q[:0], "sizes": np.zeros(0, np.int64), "split": None, "rows": 0}
    if q.dtype.kind == "f" and not np.all(np.isfinite(q)):
        bad = int(np.flatnonzero(~np.isfinite(q))[0])
        raise ValueError(f"qid must be finite: NaN/inf at row {bad} of a partition")
    starts = np.concatenate(([0], np.flatnonzero(q[1:] != q[:-1]) + 1))
    ids = q[starts]
    sizes = np.diff(np.concatenate((starts, [q.size]))).astype(np.int64)
    split = None
    if np.unique(ids).size != ids.size:
        # The first run whose id already appeared earlier in the partition.
        seen: set[Any] = set()
        for r, v in enumerate(ids.tolist()):
            if v in seen:
                split = (v, int(starts[r]))
                break
            seen.add(v)
    return {"ids": ids, "sizes": sizes, "split": split, "rows": int(q.size)}


def raise_straddle(runs: list[dict[str, Any]], *, contiguous: bool) -> None:
    """The one error for query ids found in two partitions (or split inside one)."""
    if contiguous:
        for p, r in enumerate(runs):
            if r["split"] is not None:
                v, row = r["split"]
                raise ValueError(
                    f"query {v!r} is not contiguous in partition {p}: its rows resume at "
                    f"row {row} of the partition after other queries' rows; rows of a "
                    "query must be adjacent (use gbrank.dask.partition_by_query)")
    ids = [np.unique(r["ids"]) for r in runs if r["ids"].size]
    if not ids or np.unique(np.concatenate(ids)).size == sum(a.size for a in ids):
        return  # every id in one partition (vectorised; the loop below names the culprit)
    owner: dict[Any, int] = {}
    for p, r in enumerate(runs):
        for v in np.unique(r["ids"]).tolist() if r["ids"].size else []:
            if v in owner:
                first = owner[v]
                raise ValueError(
                    f"query {v!r} straddles partitions {first} and {p}: every query must "
                    "lie whole in one partition, or each Dask worker sees only part "
                    "of it (use gbrank.dask.partition_by_query)")
            owner[v] = p


def check_query_partitions(qid: Any) -> None:
    """Check that every query lies whole and contiguous in one partition.

    Parameters
    ----------
    qid : Dask array or Series
        Per-row query ids, partitioned like the training data.

    Raises
    ------
    ValueError
        Naming the first query (in partition order) whose rows resume inside a partition
        after other queries' rows (a query must be one run of adjacent rows: LightGBM's
        ``group`` sizes describe runs), or that has rows in two partitions, and the
        partitions involved.

    Examples
    --------
    >>> import dask.array as da
    >>> import numpy as np
    >>> from gbrank.dask import check_query_partitions
    >>> check_query_partitions(da.from_array(np.array([1, 1, 2, 3, 3, 3]), chunks=3))
    >>> try:
    ...     check_query_partitions(da.from_array(np.array([1, 1, 2, 2, 2, 3]), chunks=3))
    ... except ValueError as exc:
    ...     print(str(exc).split(":")[0])
    query 2 straddles partitions 0 and 1
    """
    parts = delayed_parts(qid, "qid")
    runs = list(compute(*[lazy(query_runs)(p) for p in parts]))
    raise_straddle(runs, contiguous=True)


def lightgbm_group(qid: Any) -> Any:
    """Query sizes for ``DaskLGBMRanker.fit(X, y, group=...)`` from per-row ids.

    Checks the partitions first (:func:`check_query_partitions`) and returns a Dask
    array of query sizes with one chunk per partition of ``qid`` (LightGBM pairs the
    ``i``-th chunk of ``group`` with the ``i``-th partition of ``X``).

    Parameters
    ----------
    qid : Dask array or Series
        Per-row query ids, partitioned like ``X``.

    Returns
    -------
    dask.array.Array of int64

    Examples
    --------
    >>> import dask.array as da
    >>> import numpy as np
    >>> from gbrank.dask import lightgbm_group
    >>> group = lightgbm_group(da.from_array(np.array([4, 4, 7, 2, 2, 2]), chunks=3))
    >>> group.compute().tolist(), group.chunks
    ([2, 1, 3], ((2, 1),))
    """
    import dask.array as da

    parts = delayed_parts(qid, "qid")
    runs = list(compute(*[lazy(query_runs)(p) for p in parts]))
    raise_straddle(runs, contiguous=True)
    return group_array([r["sizes"] for r in runs], da)


def group_array(sizes: list[np.ndarray], da: Any) -> Any:
    """Query sizes as a Dask array with one chunk per partition (``da``: dask.array)."""
    flat = np.concatenate(sizes) if sizes else np.zeros(0, np.int64)
    return da.from_array(flat.astype(np.int64), chunks=(tuple(int(s.size) for s in sizes),))
