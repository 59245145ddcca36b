"""LightGBM adapter: translate LightGBM's calling conventions to gbrank objects.

Objectives need nothing from here directly (an objective instance is a valid
``params["objective"]``); this module holds the translation they delegate to and
:func:`feval`, the metric adapter.
"""

from __future__ import annotations

from typing import Any

import numpy as np

__all__ = ["feval"]


def _is_dataset(x: Any) -> bool:
    import lightgbm

    return isinstance(x, lightgbm.Dataset)


def _dataset_fields(ds: Any) -> tuple[np.ndarray, Any, Any]:
    """Labels, weights and query sizes of a constructed ``lgb.Dataset``."""
    y = ds.get_label()
    w = ds.get_weight()
    g = ds.get_group()
    if w is not None and np.size(w) == 0:
        w = None
    if g is not None and np.size(g) == 0:
        g = None
    return y, w, g


def _call_objective(obj: Any, a: Any, b: Any, weight: Any, group: Any,
                    ) -> tuple[np.ndarray, np.ndarray]:
    """``obj(preds, train_set)`` (lgb.train) or ``obj(y, preds, weight, group)`` (sklearn)."""
    if _is_dataset(b):
        preds = a
        y, weight, group = _dataset_fields(b)
    else:
        y, preds = a, b
    if obj.task != "ranking" and obj.loss_blocks == "row":
        group = None  # per-row objectives ignore query structure
    return obj.grad_hess(y, preds, group, weight=weight)
