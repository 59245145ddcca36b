"""Dask: whole queries per partition for distributed training, and exact distributed metrics.

LightGBM (``lightgbm.DaskLGBMRanker``) and XGBoost (``xgboost.dask``) train on a Dask
cluster with every worker computing gradients on its own partitions. A gbrank ranking
objective is a sum over queries, so a worker's gradients are the single-machine
gradients exactly when every query lies whole in one partition (rows adjacent, so that
LightGBM's query sizes describe it). This module provides:

- :func:`partition_by_query`: repartition a Dask DataFrame, Dask arrays, or in-memory
  data so that queries are whole and contiguous, and return the pieces the boosters'
  Dask APIs want (``group`` sizes chunked per partition for LightGBM, dense ``qid`` for
  XGBoost);
- :func:`check_query_partitions` (and :func:`lightgbm_group` for data already split by
  query): a ``ValueError`` naming the first query that straddles two partitions, or whose
  rows are not adjacent inside one;
- :func:`partition_pseudo_queries` and :func:`pseudo_queries`: the documented
  alternative for group-less ranking (one query of all rows cannot be split across
  workers);
- exact distributed metrics — :func:`pair_accuracy`, :func:`ndcg`, :func:`fbeta`,
  :func:`f1` — computed from per-partition sufficient statistics merged exactly, equal
  to :mod:`gbrank.metrics` on the same data.

The objectives themselves need nothing from here: a gbrank objective is pickled to the
workers as it is (``DaskLGBMRanker(objective=LambdaRank())``,
``xgboost.dask.train(..., obj=gbrank.xgboost.objective(LambdaRank()))``). Dask, pandas
and the boosters are imported inside the functions that need them.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import numpy as np

from gbrank._validation import as_float_array, check_choice, check_integer

__all__ = [
    "QueryPartitions",
    "partition_by_query",
    "check_query_partitions",
    "lightgbm_group",
    "pseudo_queries",
    "partition_pseudo_queries",
    "pair_accuracy",
    "ndcg",
    "fbeta",
    "f1",
]

# Helper columns added while repartitioning (dropped from the returned features).
_Q, _Y, _W, _KEY, _PART, _CODE = ("__gbrank_qid", "__gbrank_y", "__gbrank_w", "__gbrank_key",
                                  "__gbrank_part", "__gbrank_code")
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


# -- collections -----------------------------------------------------------------------

def _is_dask(x: Any) -> bool:
    return hasattr(x, "dask") and hasattr(x, "to_delayed")


def _is_dask_frame(x: Any) -> bool:
    return _is_dask(x) and hasattr(x, "map_partitions") and hasattr(x, "columns")


def _is_dask_array(x: Any) -> bool:
    return _is_dask(x) and hasattr(x, "chunks")


def _delayed_parts(x: Any, name: str) -> list[Any]:
    """One delayed object per row partition of a Dask array, Series or DataFrame."""
    if not _is_dask(x):
        raise ValueError(f"{name} must be a Dask array, Series or DataFrame, got "
                         f"{type(x).__name__}")
    if _is_dask_array(x):
        if x.ndim == 2 and len(x.chunks[1]) != 1:
            x = x.rechunk({1: -1})
        parts = x.to_delayed()
        return list(parts.reshape(parts.shape[0], -1)[:, 0])
    return list(x.to_delayed())


def _aligned_parts(arrays: dict[str, Any]) -> list[dict[str, Any]]:
    """Per partition, a dict name -> delayed part; every collection split alike."""
    named = {k: _delayed_parts(v, k) for k, v in arrays.items() if v is not None}
    counts = {k: len(v) for k, v in named.items()}
    if len(set(counts.values())) != 1:
        raise ValueError(f"the Dask collections have different numbers of partitions "
                         f"{counts}; they must be split alike (same partitions, same rows)")
    n = next(iter(counts.values()))
    return [{k: v[p] for k, v in named.items()} for p in range(n)]


def _compute(*tasks: Any) -> tuple[Any, ...]:
    import dask

    return dask.compute(*tasks)


def _delayed(func: Any, nout: int | None = None) -> Any:
    from dask import delayed

    return delayed(func, pure=True, nout=nout)


# -- query checks ----------------------------------------------------------------------

def _np(x: Any) -> np.ndarray:
    return np.asarray(x.to_numpy() if hasattr(x, "to_numpy") else x)


def _query_runs(qid: Any) -> dict[str, Any]:
    """Per partition: the query ids in order of appearance, their row counts, and the
    first id whose rows are not adjacent (``None`` when every query is one run)."""
    q = _np(qid).ravel()
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


def _raise_straddle(runs: list[dict[str, Any]], *, contiguous: bool) -> None:
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
    """
    parts = _delayed_parts(qid, "qid")
    runs = list(_compute(*[_delayed(_query_runs)(p) for p in parts]))
    _raise_straddle(runs, contiguous=True)


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
    """
    import dask.array as da

    parts = _delayed_parts(qid, "qid")
    runs = list(_compute(*[_delayed(_query_runs)(p) for p in parts]))
    _raise_straddle(runs, contiguous=True)
    return _group_array([r["sizes"] for r in runs], da)


def _group_array(sizes: list[np.ndarray], da: Any) -> Any:
    flat = np.concatenate(sizes) if sizes else np.zeros(0, np.int64)
    return da.from_array(flat.astype(np.int64), chunks=(tuple(int(s.size) for s in sizes),))


# -- repartitioning --------------------------------------------------------------------

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
    """

    X: Any
    y: Any
    qid: Any
    group: Any
    weight: Any
    query_ids: np.ndarray
    partition_rows: tuple[int, ...]
    partition_queries: tuple[int, ...]

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


def _label_part(part: Any, p: int, qcol: Any, ycol: Any, wcol: Any) -> Any:
    """Worker side: the helper columns (qid, label, weight, order key) of one partition."""
    import pandas as pd

    extra = {}
    for out, col in ((_Q, qcol), (_Y, ycol), (_W, wcol)):
        if col is None:
            continue
        v = part[col].to_numpy() if isinstance(col, str) else _np(col).ravel()
        extra[out] = v if out == _Q else v.astype(np.float64)
    frame = part if isinstance(part, pd.DataFrame) else pd.DataFrame(
        _np(part), columns=[f"f{i}" for i in range(_np(part).shape[1])])
    drop = [c for c in (qcol, ycol, wcol) if isinstance(c, str)]
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
                       ) -> QueryPartitions:
    """Repartition training data so that every query lies whole and contiguous in one
    partition, and return what LightGBM's and XGBoost's Dask APIs want.

    Parameters
    ----------
    X : dask DataFrame, dask Array, pandas DataFrame or ndarray
        Features. In-memory data is split into ``npartitions`` Dask partitions.
    y : str, dask Series/Array, or array-like
        Labels: a column name of a Dask DataFrame ``X`` (dropped from the features),
        or a collection partitioned like ``X`` (array-like for in-memory ``X``).
    qid : str, dask Series/Array, or array-like
        Per-row query ids, given like ``y`` (any sortable dtype). ``None`` is refused:
        see :func:`partition_pseudo_queries` for group-less data.
    weight : str, dask Series/Array, or array-like, optional
        Row weights, given like ``y``.
    npartitions : int, optional
        Number of partitions (at most one per query). Default: as many as ``X`` has
        (2 for in-memory data). Cuts are placed at query boundaries nearest to equal
        row counts.
    persist : bool, default True
        Persist the result on the cluster (the shuffle then runs once, not once per use).
        In-memory data scattered to a running cluster is always persisted.

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
    """
    if qid is None:
        raise ValueError(_GROUPLESS)
    if y is None:
        raise ValueError("y is required (labels, or the name of the label column)")
    if npartitions is not None:
        npartitions = check_integer(npartitions, "npartitions", 1)
    if _is_dask(X):
        return _partition_dask(X, y, qid, weight, npartitions, persist)
    return _partition_local(X, y, qid, weight, 2 if npartitions is None else npartitions,
                            persist)


def _partition_local(X: Any, y: Any, qid: Any, weight: Any, npartitions: int,
                     persist: bool) -> QueryPartitions:
    import dask.array as da
    import dask.dataframe as dd
    import pandas as pd

    frame = isinstance(X, pd.DataFrame)
    n = len(X)
    q = _np(qid).ravel()
    yy = as_float_array(y, "labels")
    if q.size != n or yy.size != n:
        raise ValueError(f"X has {n} rows, y {yy.size}, qid {q.size}; they must match")
    ww = None if weight is None else as_float_array(weight, "weight")
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
    cols = [yy[order], codes, None if ww is None else ww[order]]
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
    group = da.from_array(sizes.astype(np.int64), chunks=(nqs,))
    if persist or client is not None:
        # Scattered pieces live only while their futures do: persist before they go.
        Xd, yd, qd = Xd.persist(), yd.persist(), qd.persist()
        wd = None if wd is None else wd.persist()
    return QueryPartitions(Xd, yd, qd, group, wd, query_ids, rows, nqs)


def _partition_dask(X: Any, y: Any, qid: Any, weight: Any, npartitions: int | None,
                    persist: bool) -> QueryPartitions:
    import dask.array as da
    import dask.dataframe as dd

    frame = _is_dask_frame(X)
    cols = {"y": y, "qid": qid, "weight": weight}
    by_name = {k: v for k, v in cols.items() if isinstance(v, str)}
    if by_name and not frame:
        raise ValueError(f"column names {by_name} need X to be a Dask DataFrame")
    for k, v in cols.items():
        if v is not None and not isinstance(v, str) and not _is_dask(v):
            raise ValueError(f"with Dask X, {k} must be a column name or a Dask collection "
                             f"partitioned like X, got {type(v).__name__}")
    x_parts = _delayed_parts(X, "X")
    other = {k: v for k, v in cols.items() if v is not None and not isinstance(v, str)}
    aligned = _aligned_parts({"X": X, **other}) if other else [{"X": p} for p in x_parts]
    if frame:
        meta = X._meta
    else:
        import pandas as pd

        meta = pd.DataFrame(np.zeros((0, X.shape[1]), dtype=X.dtype),
                            columns=[f"f{i}" for i in range(X.shape[1])])
    meta = meta.drop(columns=list(by_name.values()))
    extra_meta = {_Q: (X._meta[qid] if isinstance(qid, str) else _meta_of(qid)).dtype,
                  _Y: np.float64, _W: np.float64, _KEY: np.int64}
    for name, col in ((_Q, qid), (_Y, y), (_W, weight)):
        if col is not None:
            meta = meta.assign(**{name: np.zeros(0, dtype=extra_meta[name])})
    meta = meta.assign(**{_KEY: np.zeros(0, dtype=np.int64)})

    def ref(name: str, part: dict[str, Any]) -> Any:
        v = cols[name]
        return v if isinstance(v, str) or v is None else part[name]

    labelled = [_delayed(_label_part)(part["X"], p, ref("qid", part), ref("y", part),
                                      ref("weight", part))
                for p, part in enumerate(aligned)]
    df = dd.from_delayed(labelled, meta=meta, verify_meta=False)
    counts = df[_Q].value_counts().compute().sort_index()
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
    features = [c for c in df.columns if c not in (_Q, _Y, _W, _KEY, _CODE)]
    Xd = df[features]
    yd, qd = df[_Y], df[_CODE]
    wd = df[_W] if weight is not None else None
    if not frame:
        Xd = Xd.to_dask_array(lengths=rows)
        yd, qd = yd.to_dask_array(lengths=rows), qd.to_dask_array(lengths=rows)
        wd = None if wd is None else wd.to_dask_array(lengths=rows)
    group = da.from_array(sizes, chunks=(nqs,))
    return QueryPartitions(Xd, yd, qd, group, wd, query_ids, rows, nqs)


def _default_client() -> Any:
    try:
        from distributed import default_client

        return default_client()
    except (ImportError, ValueError):
        return None


def _meta_of(x: Any) -> Any:
    m = getattr(x, "_meta", None)
    return np.asarray(m) if m is not None else np.zeros(0, dtype=x.dtype)


# -- pseudo-queries ------------------------------------------------------------------------

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
    yy = _np(y).ravel()
    if n == 0:
        return part, yy, np.zeros(0, np.int64), w
    s = None if seed is None else [int(seed), p]
    ids = pseudo_queries(n, size, s, order=order)
    perm = np.argsort(ids, kind="stable")
    sizes = np.bincount(ids).astype(np.int64)
    xp = part.iloc[perm] if hasattr(part, "iloc") else _np(part)[perm]
    wp = None if w is None else _np(w).ravel()[perm]
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
    """
    import dask.array as da
    import dask.dataframe as dd

    m = check_integer(size, "size", 2)
    check_choice(order, "order", _PSEUDO_DOC_ORDER)
    parts = _aligned_parts({"X": X, "y": y, "weight": weight})
    cut = [_delayed(_pseudo_part)(pt["X"], pt["y"], pt.get("weight"), p, m, seed, order)
           for p, pt in enumerate(parts)]
    sizes = list(_compute(*[c[2] for c in cut]))
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
    if _is_dask_frame(X):
        Xd = dd.from_delayed([c[0] for c in cut], meta=X._meta, verify_meta=False)
    else:
        width = X.shape[1]
        Xd = da.concatenate([da.from_delayed(c[0], shape=(rows[p], width), dtype=X.dtype)
                             for p, c in enumerate(cut)])
    group = _group_array(sizes, da)
    return QueryPartitions(Xd, ya, qa, group, wa, np.arange(offsets[-1]), rows, nqs)


# -- distributed metrics -----------------------------------------------------------------

def _ranking_part(y: Any, s: Any, qid: Any, w: Any, kind: str, kw: dict[str, Any]) -> dict:
    """Worker side: sufficient statistics of one partition holding whole queries."""
    from gbrank.metrics import _ranking

    runs = _query_runs(qid)
    out: dict[str, Any] = {"runs": runs}
    if runs["rows"] == 0:
        out.update(num=0.0, den=0.0)
        return out
    yy, ss, qq = _np(y).ravel(), _np(s).ravel(), _np(qid).ravel()
    ww = None if w is None else _np(w).ravel()
    if kind == "pair_accuracy":
        good, pairs, queries = _ranking._pair_counts(yy, ss, qid=qq, weight=ww)
        if queries.weights is not None:
            good, pairs = good * queries.weights, pairs * queries.weights
        out.update(num=float(np.sum(good)), den=float(np.sum(pairs)))
    else:
        values, queries = _ranking._ndcg_per_query(yy, ss, qid=qq, weight=ww, **kw)
        if queries.weights is None:
            out.update(num=math.fsum(values), den=float(values.size))
        else:
            out.update(num=math.fsum(values * queries.weights),
                       den=math.fsum(queries.weights))
    return out


def _merge_ranking(y: Any, s: Any, qid: Any, weight: Any, kind: str,
                   kw: dict[str, Any]) -> tuple[float, float]:
    parts = _aligned_parts({"y": y, "s": s, "qid": qid, "weight": weight})
    stats = list(_compute(*[_delayed(_ranking_part)(pt["y"], pt["s"], pt["qid"],
                                                    pt.get("weight"), kind, kw)
                            for pt in parts]))
    _raise_straddle([st["runs"] for st in stats], contiguous=False)
    return math.fsum(st["num"] for st in stats), math.fsum(st["den"] for st in stats)


# Group-less pair accuracy: scores are cut into buckets by value (equal scores always
# share a bucket), rows are sent to their bucket, and each bucket returns its own exact
# pair counts plus a histogram of label classes. Every pair across two buckets is then
# ordered by the buckets: concordant iff the lower bucket holds the lower label.

def _pa_probe(y: Any, s: Any, n_sample: int) -> tuple[np.ndarray, np.ndarray, int]:
    yy = as_float_array(y, "labels") if np.size(_np(y)) else np.zeros(0)
    ss = as_float_array(s, "scores") if np.size(_np(s)) else np.zeros(0)
    if yy.size != ss.size:
        raise ValueError(f"labels have {yy.size} rows but scores have {ss.size} in a "
                         "partition")
    from gbrank._validation import check_finite, check_grades

    check_finite(ss, "scores")
    check_finite(yy, "labels")
    check_grades(yy, integer=False, max_grade=None)
    take = np.linspace(0, ss.size - 1, min(n_sample, ss.size)).astype(np.int64)
    sample = np.sort(ss)[take] if ss.size else ss
    return np.unique(yy), sample, int(ss.size)


def _pa_split(y: Any, s: Any, bounds: np.ndarray) -> list[tuple[np.ndarray, np.ndarray]]:
    yy, ss = _np(y).ravel().astype(np.float64), _np(s).ravel().astype(np.float64)
    b = np.searchsorted(bounds, ss, side="right")
    order = np.argsort(b, kind="stable")
    cuts = np.searchsorted(b[order], np.arange(bounds.size + 2))
    return [(yy[order[cuts[i]:cuts[i + 1]]], ss[order[cuts[i]:cuts[i + 1]]])
            for i in range(bounds.size + 1)]


def _pa_bucket(classes: np.ndarray, *pieces: tuple[np.ndarray, np.ndarray],
               ) -> tuple[float, np.ndarray]:
    from gbrank.metrics import _ranking

    yy = np.concatenate([p[0] for p in pieces])
    ss = np.concatenate([p[1] for p in pieces])
    hist = np.bincount(np.searchsorted(classes, yy), minlength=classes.size)
    if yy.size < 2:
        return 0.0, hist.astype(np.int64)
    good, _, _ = _ranking._pair_counts(yy, ss)
    return float(good[0]), hist.astype(np.int64)


def _pair_accuracy_groupless(y: Any, s: Any) -> float:
    parts = _aligned_parts({"y": y, "s": s})
    probes = _compute(*[_delayed(_pa_probe)(pt["y"], pt["s"], 64) for pt in parts])
    classes = np.unique(np.concatenate([pr[0] for pr in probes]))
    sample = np.sort(np.concatenate([pr[1] for pr in probes]))
    n = sum(pr[2] for pr in probes)
    if n == 0:
        raise ValueError("labels are empty")
    nb = max(1, len(parts))
    bounds = np.unique(np.quantile(sample, np.arange(1, nb) / nb)) if sample.size else \
        np.zeros(0)
    split = [_delayed(_pa_split, nout=bounds.size + 1)(pt["y"], pt["s"], bounds)
             for pt in parts]
    buckets = _compute(*[_delayed(_pa_bucket)(classes, *[sp[b] for sp in split])
                         for b in range(bounds.size + 1)])
    # Exact integers: pairs across buckets, and all differently-labelled pairs.
    below = np.zeros(classes.size + 1, dtype=object)  # rows in lower buckets, per class
    cross = 0
    local = 0.0
    for good, hist in buckets:
        lower_class = np.cumsum(below)[:-1]  # rows below with class < c
        cross += int(sum(int(h) * int(lc) for h, lc in zip(hist, lower_class, strict=True)))
        below[1:] += hist.astype(object)
        local += good
    counts = [int(c) for c in below[1:]]
    pairs = n * (n - 1) // 2 - sum(c * (c - 1) // 2 for c in counts)
    if pairs == 0:
        return 1.0
    return (float(cross) + local) / float(pairs)


def pair_accuracy(y: Any, s: Any, qid: Any = None, *, weight: Any = None) -> float:
    r"""Distributed :func:`gbrank.metrics.pair_accuracy`: the share of correctly ordered
    differently-labelled pairs (score ties count 1/2), pooled, equal to the
    single-machine value.

    With ``qid``, every query must lie in one partition (checked: the error names the
    straddling query); each partition returns its weighted sums of
    :math:`C_q + T_q/2` and :math:`P_q`, which add up exactly.

    With ``qid=None`` (group-less: all rows one query), exact too: scores are cut into
    value buckets (equal scores share one), rows move to their bucket, each bucket counts
    its own pairs and returns a histogram of label classes :math:`H_b`; a pair across
    buckets :math:`b < b'` is concordant iff its lower-scored row has the lower label, so
    :math:`C = \sum_b C_b + \sum_{b' > b} \sum_{c < c'} H_b[c]\,H_{b'}[c']`, in integers.

    Parameters
    ----------
    y, s : dask Array or Series
        Labels and scores, partitioned alike.
    qid : dask Array or Series, optional
        Per-row query ids, partitioned alike.
    weight : dask Array or Series, optional
        Per-row weights, constant inside a query (needs ``qid``).

    Returns
    -------
    float
        Identical to the single-machine value (weighted: to rounding, ≤ 1e-12).
    """
    if qid is None:
        if weight is not None:
            raise ValueError("weight is per query; group-less data is one query, so a "
                             "weight changes nothing: pass weight=None")
        return _pair_accuracy_groupless(y, s)
    num, den = _merge_ranking(y, s, qid, weight, "pair_accuracy", {})
    return 1.0 if den == 0.0 else num / den


def _topk_part(y: Any, s: Any, p: int, k: int, label_gain: Any,
               gain: str) -> tuple[np.ndarray, ...]:
    """Worker side: the k best-scored rows (ties by row order) and the k best labels."""
    from gbrank import metrics

    yy, ss = _np(y).ravel().astype(np.float64), _np(s).ravel().astype(np.float64)
    if yy.size:
        # Every row is checked as on one machine (NaN, grades), not only the candidates.
        metrics.ndcg(yy, ss, None, k=k, label_gain=label_gain, gain=gain)
    pos = np.arange(yy.size, dtype=np.int64)
    by_score = np.lexsort((pos, -ss))[:k]
    by_label = np.argsort(-yy, kind="stable")[:k]
    keep = np.union1d(by_score, by_label)
    return np.full(keep.size, p, dtype=np.int64), pos[keep], yy[keep], ss[keep]


def ndcg(y: Any, s: Any, qid: Any = None, k: int | None = 10, label_gain: Any = None, *,
         weight: Any = None, gain: str = "exponential") -> float:
    r"""Distributed :func:`gbrank.metrics.ndcg`, equal to the single-machine value.

    With ``qid``, every query must lie in one partition (checked); NDCG@k is local to a
    query, so each partition returns the (weighted) sum of its queries' values and their
    count (weight sum), merged by summation.

    With ``qid=None`` (one query of all rows) and a finite ``k``: each partition sends
    its k best-scored rows (ties by row order) and its k largest labels; the union,
    kept in row order, contains the global top k by score and the k largest labels of
    the data, so NDCG@k of the union is exactly NDCG@k of the data (O(k) per
    partition).

    Parameters
    ----------
    y, s, qid, weight
        As in :func:`pair_accuracy` (dask collections partitioned alike).
    k, label_gain, gain
        As in :func:`gbrank.metrics.ndcg`; ``k=None`` (all rows) needs ``qid``.

    Returns
    -------
    float
        Equal to the single-machine value up to the rounding of the sum over queries
        (≤ 1e-12 relative; group-less: identical).
    """
    from gbrank import metrics

    kw = {"k": k, "label_gain": label_gain, "gain": gain}
    if qid is None:
        if k is None:
            raise ValueError("group-less ndcg with k=None ranks every row of the data: "
                             "pass a finite k, or qid")
        kk = check_integer(k, "k", 1)
        parts = _aligned_parts({"y": y, "s": s})
        tops = _compute(*[_delayed(_topk_part)(pt["y"], pt["s"], p, kk, label_gain, gain)
                          for p, pt in enumerate(parts)])
        part, pos, yy, ss = (np.concatenate([t[i] for t in tops]) for i in range(4))
        order = np.lexsort((pos, part))  # row order of the data
        return metrics.ndcg(yy[order], ss[order], None, k=kk, label_gain=label_gain,
                            gain=gain)
    num, den = _merge_ranking(y, s, qid, weight, "ndcg", kw)
    return num / den


def _confusion_part(y: Any, s: Any, w: Any, threshold: float) -> tuple[float, ...]:
    """Worker side: (TP, FP, FN, TN) of one partition, validated as on one machine."""
    from gbrank.metrics import _binary

    if np.size(_np(y)) == 0:
        return 0.0, 0.0, 0.0, 0.0
    return _binary._counts(_np(y), _np(s), threshold, None if w is None else _np(w))


def fbeta(y: Any, s: Any, beta: float = 1.0, threshold: float = 0.0, *,
          weight: Any = None) -> float:
    r"""Distributed :func:`gbrank.metrics.fbeta` of ``s > threshold``.

    The confusion counts (weighted sums) of every partition add up to those of the
    whole data: :math:`F_\beta = (1+\beta^2)a / ((1+\beta^2)a + b + \beta^2 c)`, 1 when
    :math:`a + b + c = 0`.

    Parameters
    ----------
    y, s : dask Array or Series
        Labels {0, 1} or {-1, +1} and scores, partitioned alike.
    beta, threshold
        As in :func:`gbrank.metrics.fbeta`.
    weight : dask Array or Series, optional

    Returns
    -------
    float
        Identical to the single-machine value (weighted: to rounding).
    """
    from gbrank._validation import check_number, check_threshold

    b = check_number(beta, "beta", 0.0, low_open=True)
    t = check_threshold(threshold)
    parts = _aligned_parts({"y": y, "s": s, "weight": weight})
    counts = _compute(*[_delayed(_confusion_part)(pt["y"], pt["s"], pt.get("weight"), t)
                        for pt in parts])
    tp, fp, fn = (math.fsum(c[i] for c in counts) for i in range(3))
    num = (1.0 + b * b) * tp
    den = num + fp + b * b * fn
    return 1.0 if den == 0.0 else num / den


def f1(y: Any, s: Any, threshold: float = 0.0, *, weight: Any = None) -> float:
    """Distributed :func:`gbrank.metrics.f1` (:func:`fbeta` with β = 1)."""
    return fbeta(y, s, 1.0, threshold, weight=weight)
