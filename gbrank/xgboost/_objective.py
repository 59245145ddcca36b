"""objective: a gbrank objective as an XGBoost ``obj`` callable."""

from __future__ import annotations

import copy
from collections.abc import Callable
from typing import Any

import numpy as np

from gbrank._deps import require
from gbrank._fields import dmatrix_fields


def objective(obj: Any) -> Callable[[np.ndarray, Any], tuple[np.ndarray, np.ndarray]]:
    """Wrap a gbrank objective for ``xgb.train(obj=...)``.

    Parameters
    ----------
    obj : gbrank objective
        For example ``LambdaRank(metric="ndcg")`` or ``FocalLoss(gamma=2)``.

    Returns
    -------
    callable
        ``f(preds, dtrain) -> (grad, hess)``, holding its own copy of ``obj`` (as
        LightGBM copies its params), so an objective with per-training state
        (``FBetaSurrogate(batch_size=...)`` counts rounds) starts afresh in every
        wrapper: use one ``objective(obj)`` per ``xgb.train``.

    Examples
    --------
    >>> import xgboost as xgb
    >>> from gbrank.datasets import make_ranking
    >>> from gbrank.objectives import LambdaRank
    >>> from gbrank.xgboost import objective
    >>> X, y, group = make_ranking(n_queries=20, rows_per_query=10, n_features=5)
    >>> dtrain = xgb.DMatrix(X, y, group=group)
    >>> booster = xgb.train({"base_score": 0.0, "nthread": 1}, dtrain, num_boost_round=3,
    ...                     obj=objective(LambdaRank(metric="ndcg")))
    >>> booster.predict(dtrain, output_margin=True).shape
    (200,)
    """
    obj = copy.deepcopy(obj)

    def _xgb_objective(preds: np.ndarray, dtrain: Any) -> tuple[np.ndarray, np.ndarray]:
        y, w, group = dmatrix_fields(dtrain)
        if group is None and obj.loss_blocks == "query":
            _refuse_distributed_groupless(obj)
        # XGBoost copies the gradients into its own buffers before it returns, so the
        # arrays of the previous round can be rewritten (as for LightGBM).
        return obj.booster_grad_hess_reusing(y, preds, group, w)

    _xgb_objective.__name__ = type(obj).__name__
    _xgb_objective.gbrank_objective = obj  # type: ignore[attr-defined]
    return _xgb_objective


def _refuse_distributed_groupless(obj: Any) -> None:
    """A group-less loss (one query of all rows) cannot be summed per worker: in
    distributed training (xgboost.dask) each worker would see only its own rows."""
    collective = require("xgboost.collective")

    n = collective.get_world_size()
    if n > 1:
        raise ValueError(
            f"{type(obj).__name__} got no query ids on one of {n} XGBoost workers: a "
            "group-less objective treats all rows as one query, which cannot be split "
            "across workers. Pass qid to the DaskDMatrix (gbrank.dask.partition_by_query) "
            "or use pseudo-queries (gbrank.dask.partition_pseudo_queries)")
