"""Repartitioning by query: one Dask shuffle (or a local sort of in-memory data) that
puts every query whole and contiguous in one partition, with what the boosters' Dask APIs
want (LightGBM's ``group`` sizes per partition, XGBoost's dense ``qid``)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from gbrank._validation import as_float_array, check_integer
from gbrank.dask._collections import (
    aligned_parts,
    as_numpy,
    delayed_parts,
    is_dask,
    is_dask_frame,
    lazy,
)

__all__ = ["QueryPartitions", "partition_by_query"]

# Helper columns added while repartitioning (dropped from the returned features).
_Q, _Y, _W, _KEY, _PART, _CODE = ("__gbrank_qid", "__gbrank_y", "__gbrank_w", "__gbrank_key",
                                  "__gbrank_part", "__gbrank_code")
_P = "__gbrank_position"
# Row order key: input partition << _KEY_SHIFT | position in it (keeps the order of a
# query's rows, which decides score ties, through the shuffle).
_KEY_SHIFT = 40

_GROUPLESS = (
    "no qid given: a group-less ranking objective or metric treats all rows as one "
    "query, and one query cannot be split across Dask workers (every worker would only "
    "compare its own rows, so the gradients differ from the single-machine ones). Pass "
    "the per-row query ids (qid=...), or cut the data into pseudo-queries of a size you "
    "choose with gbrank.dask.partition_pseudo_queries(X, y, size=...) (what that "
    "changes in the loss is stated in its docstring); the distributed metrics "
    "gbrank.dask.pair_accuracy and gbrank.dask.ndcg(k=...) accept qid=None exactly"
)


@dataclass(frozen=True)
class QueryPartitions:
    """Training data split so that every query lies whole and contiguous in one partition.

    Attributes
    ----------
    X : dask DataFrame or dask Array
        Features (a DataFrame when a DataFrame was given, else an array with known
        chunks), rows of a query adjacent, queries in ascending id order.
    y : dask Series or dask Array
        Labels, partitioned like ``X``.
    qid : dask Series or dask Array of int64
        Dense query codes 0 … n_queries − 1 in row order (what ``xgboost.dask``'s
        ``DaskDMatrix(qid=...)`` wants: integers, ascending in every partition).
    group : dask Array of int64
        Query sizes, one chunk per partition (``DaskLGBMRanker.fit(group=...)``).
    weight : dask Series, dask Array or None
        Row weights if given, partitioned like ``X``.
    query_ids : ndarray
        The original query id of each code (``query_ids[code]``).
    partition_rows, partition_queries : tuple of int
        Rows and queries per partition.
    position : dask Series, dask Array or None
        Display positions (click logs) if given, as float64, partitioned like ``X``:
        ``DaskDMatrix(..., label_lower_bound=parts.position)`` with
        ``gbrank.xgboost.objective(obj, position="label_lower_bound")``.
    npartitions : int
        Number of partitions.

    Examples
    --------
    >>> import numpy as np
    >>> from gbrank.dask import partition_by_query
    >>> X = np.arange(12.0).reshape(6, 2)
    >>> y = np.array([1.0, 0.0, 2.0, 0.0, 1.0, 0.0])
    >>> parts = partition_by_query(X, y, qid=[5, 3, 5, 3, 9, 9], npartitions=2)
    >>> parts.npartitions, parts.partition_rows, parts.partition_queries
    (2, (4, 2), (2, 1))
    >>> parts.query_ids.tolist(), parts.qid.compute().tolist()  # ids 3, 5, 9 as codes
    ([3, 5, 9], [0, 0, 1, 1, 2, 2])
    """

    X: Any
    y: Any
    qid: Any
    group: Any
    weight: Any
    query_ids: np.ndarray
    partition_rows: tuple[int, ...]
    partition_queries: tuple[int, ...]
    position: Any = None

    @property
    def npartitions(self) -> int:
        return len(self.partition_rows)


def _balanced_cuts(sizes: np.ndarray, npartitions: int) -> np.ndarray:
    """Query indices where partitions start (first is 0): cuts at query boundaries
    nearest to equal row counts, every partition non-empty."""
    nq = sizes.size
    p = max(1, min(npartitions, nq))
    ends = np.cumsum(sizes)
    targets = ends[-1] * np.arange(1, p) / p
    cuts = np.searchsorted(ends, targets, side="left") + 1  # first query of next part
    cuts = np.clip(cuts, 1, nq - 1) if nq > 1 else cuts[:0]
    cuts = np.unique(cuts)
    return np.concatenate(([0], cuts)).astype(np.int64)


def _label_part(part: Any, p: int, qcol: Any, ycol: Any, wcol: Any,
                pcol: Any = None) -> Any:
    """Worker side: the helper columns (qid, label, weight, position, order key) of one
    partition."""
    import pandas as pd

    extra = {}
    for out, col in ((_Q, qcol), (_Y, ycol), (_W, wcol), (_P, pcol)):
        if col is None:
            continue
        v = part[col].to_numpy() if isinstance(col, str) else as_numpy(col).ravel()
        extra[out] = v if out == _Q else v.astype(np.float64)
    frame = part if isinstance(part, pd.DataFrame) else pd.DataFrame(
        as_numpy(part), columns=[f"f{i}" for i in range(as_numpy(part).shape[1])])
    drop = [c for c in (qcol, ycol, wcol, pcol) if isinstance(c, str)]
    frame = frame.drop(columns=drop)
    n = len(frame)
    key = (np.int64(p) << _KEY_SHIFT) + np.arange(n, dtype=np.int64)
    return frame.assign(**extra, **{_KEY: key})


def _assign_partition(frame: Any, query_ids: np.ndarray, first_of_part: np.ndarray) -> Any:
    """Worker side: target partition and dense code of every row."""
    q = frame[_Q].to_numpy()
    code = np.searchsorted(query_ids, q).astype(np.int64)
    part = np.searchsorted(first_of_part, code, side="right").astype(np.int64) - 1
    return frame.assign(**{_CODE: code, _PART: part})


def _sort_part(frame: Any) -> Any:
    """Worker side: rows of a query adjacent, queries ascending, original order kept."""
    return frame.sort_values([_CODE, _KEY], kind="stable")


def partition_by_query(X: Any, y: Any, qid: Any, *, weight: Any = None,
                       npartitions: int | None = None, persist: bool = True,
                       position: Any = None) -> QueryPartitions:
    """Repartition training data so that every query lies whole and contiguous in one
    partition, and return what LightGBM's and XGBoost's Dask APIs want.

    Parameters
    ----------
    X : dask DataFrame, dask Array, pandas DataFrame or ndarray
        Features. In-memory data is split into ``npartitions`` Dask partitions.
    y : str, dask Series/Array, or array-like
        Labels: a column name of a DataFrame ``X`` (Dask or pandas; dropped from the
        features), or a collection partitioned like ``X`` (array-like for in-memory
        ``X``).
    qid : str, dask Series/Array, or array-like
        Per-row query ids, given like ``y`` (any sortable dtype). ``None`` is refused:
        see :func:`partition_pseudo_queries` for group-less data. A column ``"qid"`` of
        ``X`` is never a feature: ids given otherwise beside it are refused.
    weight : str, dask Series/Array, or array-like, optional
        Row weights, given like ``y``.
    npartitions : int, optional
        Number of partitions (at most one per query). Default: as many as ``X`` has
        (2 for in-memory data). Cuts are placed at query boundaries nearest to equal
        row counts.
    persist : bool, default True
        Persist the result on the cluster (the shuffle then runs once, not once per use).
        In-memory data scattered to a running cluster is always persisted.
    position : str, dask Series/Array, or array-like, optional
        Display positions of click logs (for an objective with ``position_bias``),
        given like ``y``; they travel with their rows (``parts.position``).

    Returns
    -------
    QueryPartitions
        ``X``, ``y``, ``qid`` (dense codes), ``group`` (sizes chunked per partition),
        ``weight``; use ``DaskLGBMRanker().fit(parts.X, parts.y, group=parts.group)`` or
        ``DaskDMatrix(client, parts.X, parts.y, qid=parts.qid)``.

    Notes
    -----
    Queries are ordered by id; inside a query the rows keep their input order (which
    decides how score ties are ranked). The data moves through one Dask shuffle
    (``set_index`` on the target partition); in-memory data is sorted locally.

    Examples
    --------
    In-memory data (a Dask DataFrame or Dask arrays are passed the same way):

    >>> import numpy as np
    >>> from gbrank.dask import partition_by_query
    >>> X = np.arange(12.0).reshape(6, 2)
    >>> y = np.array([1.0, 0.0, 2.0, 0.0, 1.0, 0.0])
    >>> parts = partition_by_query(X, y, qid=[5, 3, 5, 3, 9, 9], npartitions=2)
    >>> parts.y.compute().tolist()  # query 3's rows, then query 5's, then query 9's
    [0.0, 0.0, 1.0, 2.0, 1.0, 0.0]
    >>> parts.group.compute().tolist(), parts.group.chunks  # sizes, chunked per partition
    ([2, 2, 2], ((2, 1),))

    On a cluster: ``lightgbm.DaskLGBMRanker(objective=LambdaRank()).fit(parts.X, parts.y,
    group=parts.group)``.
    """
    if qid is None:
        raise ValueError(_GROUPLESS)
    if y is None:
        raise ValueError("y is required (labels, or the name of the label column)")
    columns = [str(c) for c in getattr(X, "columns", [])]
    if "qid" in columns and not (isinstance(qid, str) and qid == "qid"):
        # The library's convention: a column named qid holds ids and is never a feature.
        raise ValueError("X has a column 'qid', which would stay a feature while qid= gives "
                         "the ids: pass qid='qid' to take the ids from it (and out of the "
                         "features), or rename the column if it is a feature")
    if npartitions is not None:
        npartitions = check_integer(npartitions, "npartitions", 1)
    if is_dask(X):
        return _partition_dask(X, y, qid, weight, npartitions, persist, position)
    return _partition_local(X, y, qid, weight, 2 if npartitions is None else npartitions,
                            persist, position)


def _refuse_missing_ids(missing: int) -> None:
    """Rows without a query id would become one made-up query (in memory, NaN sorts
    last) or vanish from the query sizes (Dask's value_counts drops them)."""
    if missing:
        raise ValueError(f"qid is missing (NaN/None) on {missing} rows: every row needs "
                         "the id of its query; drop those rows or fill in their ids")


def _partition_local(X: Any, y: Any, qid: Any, weight: Any, npartitions: int,
                     persist: bool, position: Any = None) -> QueryPartitions:
    import dask.array as da
    import dask.dataframe as dd
    import pandas as pd

    frame = isinstance(X, pd.DataFrame)
    named = {k: v for k, v in (("y", y), ("qid", qid), ("weight", weight),
                               ("position", position)) if isinstance(v, str)}
    if named:  # columns of X, taken out of the features (as for a Dask DataFrame)
        if not frame:
            raise ValueError(f"column names {named} need X to be a DataFrame")
        missing = [v for v in named.values() if v not in X.columns]
        if missing:
            raise ValueError(f"{missing} are not columns of X")
        taken = {k: X[v].to_numpy() for k, v in named.items()}
        X = X.drop(columns=list(named.values()))
        y, qid = taken.get("y", y), taken.get("qid", qid)
        weight, position = taken.get("weight", weight), taken.get("position", position)
    n = len(X)
    q = as_numpy(qid).ravel()
    yy = as_float_array(y, "labels")
    if q.size != n or yy.size != n:
        raise ValueError(f"X has {n} rows, y {yy.size}, qid {q.size}; they must match")
    ww = None if weight is None else as_float_array(weight, "weight")
    pp = None if position is None else as_float_array(position, "position")
    if pp is not None and pp.size != n:
        raise ValueError(f"X has {n} rows, position {pp.size}; they must match")
    _refuse_missing_ids(int(pd.isna(q).sum()))
    order = np.argsort(q, kind="stable")
    qs = q[order]
    query_ids, sizes = np.unique(qs, return_counts=True)
    cuts = _balanced_cuts(sizes, npartitions)
    qbounds = np.concatenate((cuts, [query_ids.size]))
    rbounds = np.concatenate(([0], np.cumsum(sizes)))[qbounds]
    rows = tuple(int(r) for r in np.diff(rbounds))
    nqs = tuple(int(c) for c in np.diff(qbounds))
    codes = np.repeat(np.arange(query_ids.size, dtype=np.int64), sizes)
    Xs = X.iloc[order].reset_index(drop=True) if frame else np.asarray(X)[order]
    cols = [yy[order], codes, None if ww is None else ww[order],
            None if pp is None else pp[order]]
    client = _default_client()
    pieces = []
    for a, b in zip(rbounds[:-1], rbounds[1:], strict=True):
        piece = [Xs.iloc[a:b] if frame else Xs[a:b]] + [
            None if c is None else c[a:b] for c in cols]
        # Scattered to the workers when a cluster is up: the data does not travel
        # inside the task graph (dask warns about large graphs, and they are slow).
        pieces.append(client.scatter(piece) if client is not None else piece)

    def column(i: int, shape: Any, dtype: Any) -> Any:
        if client is None:
            return da.concatenate([da.from_array(p[i], chunks=p[i].shape) for p in pieces])
        return da.concatenate([da.from_delayed(p[i], shape=shape(r), dtype=dtype)
                               for p, r in zip(pieces, rows, strict=True)])

    if frame and client is None:
        Xd = dd.concat([dd.from_pandas(p[0], npartitions=1) for p in pieces])
    elif frame:
        Xd = dd.from_delayed([p[0] for p in pieces], meta=Xs.iloc[:0], verify_meta=False)
    else:
        Xd = column(0, lambda r: (r, Xs.shape[1]), Xs.dtype)
    yd = column(1, lambda r: (r,), np.float64)
    qd = column(2, lambda r: (r,), np.int64)
    wd = None if ww is None else column(3, lambda r: (r,), np.float64)
    pd_ = None if pp is None else column(4, lambda r: (r,), np.float64)
    group = da.from_array(sizes.astype(np.int64), chunks=(nqs,))
    if persist or client is not None:
        # Scattered pieces live only while their futures do: persist before they go.
        Xd, yd, qd = Xd.persist(), yd.persist(), qd.persist()
        wd = None if wd is None else wd.persist()
        pd_ = None if pd_ is None else pd_.persist()
    return QueryPartitions(Xd, yd, qd, group, wd, query_ids, rows, nqs, pd_)


def _partition_dask(X: Any, y: Any, qid: Any, weight: Any, npartitions: int | None,
                    persist: bool, position: Any = None) -> QueryPartitions:
    import dask
    import dask.array as da
    import dask.dataframe as dd

    frame = is_dask_frame(X)
    cols = {"y": y, "qid": qid, "weight": weight, "position": position}
    by_name = {k: v for k, v in cols.items() if isinstance(v, str)}
    if by_name and not frame:
        raise ValueError(f"column names {by_name} need X to be a Dask DataFrame")
    for k, v in cols.items():
        if v is not None and not isinstance(v, str) and not is_dask(v):
            raise ValueError(f"with Dask X, {k} must be a column name or a Dask collection "
                             f"partitioned like X, got {type(v).__name__}")
    x_parts = delayed_parts(X, "X")
    other = {k: v for k, v in cols.items() if v is not None and not isinstance(v, str)}
    aligned = aligned_parts({"X": X, **other}) if other else [{"X": p} for p in x_parts]
    if frame:
        meta = X._meta
    else:
        import pandas as pd

        meta = pd.DataFrame(np.zeros((0, X.shape[1]), dtype=X.dtype),
                            columns=[f"f{i}" for i in range(X.shape[1])])
    meta = meta.drop(columns=list(by_name.values()))
    extra_meta = {_Q: (X._meta[qid] if isinstance(qid, str) else _meta_of(qid)).dtype,
                  _Y: np.float64, _W: np.float64, _P: np.float64, _KEY: np.int64}
    for name, col in ((_Q, qid), (_Y, y), (_W, weight), (_P, position)):
        if col is not None:
            meta = meta.assign(**{name: np.zeros(0, dtype=extra_meta[name])})
    meta = meta.assign(**{_KEY: np.zeros(0, dtype=np.int64)})

    def ref(name: str, part: dict[str, Any]) -> Any:
        v = cols[name]
        return v if isinstance(v, str) or v is None else part[name]

    labelled = [lazy(_label_part)(part["X"], p, ref("qid", part), ref("y", part),
                                  ref("weight", part), ref("position", part))
                for p, part in enumerate(aligned)]
    df = dd.from_delayed(labelled, meta=meta, verify_meta=False)
    counts, missing = dask.compute(df[_Q].value_counts(), df[_Q].isna().sum())
    _refuse_missing_ids(int(missing))
    counts = counts.sort_index()
    query_ids = counts.index.to_numpy()
    sizes = counts.to_numpy().astype(np.int64)
    cuts = _balanced_cuts(sizes, len(aligned) if npartitions is None else npartitions)
    nparts = cuts.size
    from dask import delayed

    # One copy of the id table in the graph, shared by every partition's task.
    df = df.map_partitions(_assign_partition, delayed(query_ids), cuts,
                           meta=df._meta.assign(**{_CODE: np.zeros(0, np.int64),
                                                   _PART: np.zeros(0, np.int64)}))
    df = df.set_index(_PART, drop=True, divisions=tuple(range(nparts)) + (nparts,))
    df = df.map_partitions(_sort_part, meta=df._meta)
    if persist:
        df = df.persist()
    qbounds = np.concatenate((cuts, [query_ids.size]))
    rbounds = np.concatenate(([0], np.cumsum(sizes)))[qbounds]
    rows = tuple(int(r) for r in np.diff(rbounds))
    nqs = tuple(int(c) for c in np.diff(qbounds))
    features = [c for c in df.columns if c not in (_Q, _Y, _W, _P, _KEY, _CODE)]
    Xd = df[features]
    yd, qd = df[_Y], df[_CODE]
    wd = df[_W] if weight is not None else None
    pd_ = df[_P] if position is not None else None
    if not frame:
        Xd = Xd.to_dask_array(lengths=rows)
        yd, qd = yd.to_dask_array(lengths=rows), qd.to_dask_array(lengths=rows)
        wd = None if wd is None else wd.to_dask_array(lengths=rows)
        pd_ = None if pd_ is None else pd_.to_dask_array(lengths=rows)
    group = da.from_array(sizes, chunks=(nqs,))
    return QueryPartitions(Xd, yd, qd, group, wd, query_ids, rows, nqs, pd_)


def _default_client() -> Any:
    try:
        from distributed import default_client

        return default_client()
    except (ImportError, ValueError):
        return None


def _meta_of(x: Any) -> Any:
    m = getattr(x, "_meta", None)
    return np.asarray(m) if m is not None else np.zeros(0, dtype=x.dtype)
