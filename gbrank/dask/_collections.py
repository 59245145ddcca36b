"""Dask collections as lists of per-partition pieces: the helpers every part of
:mod:`gbrank.dask` shares (Dask is imported inside the functions that need it)."""

from __future__ import annotations

from typing import Any

import numpy as np

__all__ = ["is_dask", "is_dask_frame", "is_dask_array", "delayed_parts", "aligned_parts",
           "compute", "lazy", "as_numpy"]


def is_dask(x: Any) -> bool:
    """Whether ``x`` is a Dask collection (duck-typed: Dask is not imported)."""
    return hasattr(x, "dask") and hasattr(x, "to_delayed")


def is_dask_frame(x: Any) -> bool:
    """Whether ``x`` is a Dask DataFrame."""
    return is_dask(x) and hasattr(x, "map_partitions") and hasattr(x, "columns")


def is_dask_array(x: Any) -> bool:
    """Whether ``x`` is a Dask array."""
    return is_dask(x) and hasattr(x, "chunks")


def delayed_parts(x: Any, name: str) -> list[Any]:
    """One delayed object per row partition of a Dask array, Series or DataFrame."""
    if not is_dask(x):
        raise ValueError(f"{name} must be a Dask array, Series or DataFrame, got "
                         f"{type(x).__name__}")
    if is_dask_array(x):
        if x.ndim == 2 and len(x.chunks[1]) != 1:
            x = x.rechunk({1: -1})
        parts = x.to_delayed()
        return list(parts.reshape(parts.shape[0], -1)[:, 0])
    return list(x.to_delayed())


def aligned_parts(arrays: dict[str, Any]) -> list[dict[str, Any]]:
    """Per partition, a dict name -> delayed part; every collection split alike."""
    named = {k: delayed_parts(v, k) for k, v in arrays.items() if v is not None}
    counts = {k: len(v) for k, v in named.items()}
    if len(set(counts.values())) != 1:
        raise ValueError(f"the Dask collections have different numbers of partitions "
                         f"{counts}; they must be split alike (same partitions, same rows)")
    n = next(iter(counts.values()))
    return [{k: v[p] for k, v in named.items()} for p in range(n)]


def compute(*tasks: Any) -> tuple[Any, ...]:
    """``dask.compute`` of the tasks, on the default scheduler or client."""
    import dask

    return dask.compute(*tasks)


def lazy(func: Any, nout: int | None = None) -> Any:
    """``func`` as a pure ``dask.delayed`` function (``nout`` outputs when a tuple)."""
    from dask import delayed

    return delayed(func, pure=True, nout=nout)


def as_numpy(x: Any) -> np.ndarray:
    """A partition (pandas object or array) as a NumPy array."""
    return np.asarray(x.to_numpy() if hasattr(x, "to_numpy") else x)
