"""objective: a gbrank objective as an XGBoost ``obj`` callable."""

from __future__ import annotations

import copy
import weakref
from collections.abc import Callable
from typing import Any

import numpy as np

from gbrank._deps import require
from gbrank._fields import dmatrix_fields, dmatrix_positions
from gbrank._validation import check_positions


def objective(obj: Any, position: Any = None, learning_rate: float | None = None,
              ) -> XGBoostObjective:
    """Wrap a gbrank objective for ``xgb.train(obj=...)``.

    Parameters
    ----------
    obj : gbrank objective
        For example ``LambdaRank(metric="ndcg")`` or ``FocalLoss(gamma=2)``.
    position : array-like or str, optional
        Display positions for an objective with ``position_bias`` (a ``DMatrix`` has no
        position field): one per row of the training ``DMatrix``, or the name of a
        per-row float field of the ``DMatrix`` that carries them —
        ``"label_lower_bound"``, which only survival objectives read, is the one that
        travels with the rows where XGBoost moves them (``xgboost.dask``'s
        ``DaskDMatrix(label_lower_bound=...)`` partitions it with its queries).
    learning_rate : float, optional
        The booster's learning rate (``eta``), by which ``position_bias="additive"``
        moves its offsets (XGBoost does not tell an objective); not needed when the
        objective sets ``position_bias_learning_rate``.

    Returns
    -------
    callable
        ``f(preds, dtrain) -> (grad, hess)``, holding its own copy of ``obj`` (as
        LightGBM copies its params), so an objective with per-training state
        (``FBetaSurrogate(batch_size=...)`` counts rounds) starts afresh in every
        wrapper: use one ``objective(obj)`` per ``xgb.train``. With ``position_bias``
        the wrapper owns the estimates of its training: ``f.position_bias_``
        (:class:`~gbrank.objectives.PositionBias`) after it. In distributed training
        (``xgboost.dask``) every worker computes the gradients of its own queries
        exactly, and the per-position sums behind the ``"unbiased"`` and ``"additive"``
        estimates are summed over the workers (XGBoost's allreduce) before each update,
        so every worker holds the estimates of the whole data — in its own copy of the
        wrapper: the client's ``f.position_bias_`` stays ``None`` (Dask sends the
        workers copies; the estimates are never part of a prediction). Every query
        must lie whole in one partition (:func:`gbrank.dask.partition_by_query`):
        XGBoost reads a query cut by a partition as two, and gbrank's gradients, which
        see only a worker's rows, cannot tell.

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

    Clicks and positions (the top 10 of every query shown to two sessions):

    >>> import numpy as np
    >>> from gbrank.datasets import simulate_clicks
    >>> log = simulate_clicks(y, group, X[:, 0], top_n=10, n_sessions=2, sessions="keep")
    >>> dclicks = xgb.DMatrix(X[log.rows], log.clicks, group=log.group)
    >>> f = objective(LambdaRank(position_bias="unbiased"), position=log.position)
    >>> booster = xgb.train({"base_score": 0.0, "nthread": 1}, dclicks, num_boost_round=3,
    ...                     obj=f)
    >>> f.position_bias_.positions.tolist()
    [1, 2, 3, 4, 5, 6, 7, 8, 9, 10]
    """
    from gbrank.objectives import Objective

    if not isinstance(obj, Objective):
        raise ValueError(f"objective() wraps a gbrank objective, got {obj!r}")
    uses_positions = obj._uses_positions()
    if position is not None and not uses_positions:
        raise ValueError(f"position= is for an objective with position_bias; {obj!r} "
                         "has none")
    if position is not None and not isinstance(position, str):
        position = check_positions(position, np.size(position))
    return XGBoostObjective(copy.deepcopy(obj), position, learning_rate)


class XGBoostObjective:
    """A gbrank objective as ``xgb.train(obj=...)`` calls it (see :func:`objective`):
    it owns the state of its training (position-bias estimates, per ``DMatrix``)."""

    def __init__(self, obj: Any, position: Any, learning_rate: float | None) -> None:
        self.gbrank_objective = obj
        self.position = position
        self.learning_rate = learning_rate
        self._runs: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()
        self.position_bias_: Any = None
        self.__name__ = type(obj).__name__

    def __call__(self, preds: np.ndarray, dtrain: Any) -> tuple[np.ndarray, np.ndarray]:
        obj = self.gbrank_objective
        if isinstance(dtrain, np.ndarray):  # XGBoost's scikit-learn API: (y_true, y_pred)
            raise TypeError(
                f"gbrank.xgboost.objective(...) is xgb.train's form (preds, dtrain); "
                f"XGBoost's scikit-learn estimators call objective(y_true, y_pred): pass "
                f"the gbrank objective itself there, e.g. XGBClassifier(objective="
                f"{type(obj).__name__}(...)), or use gbrank.sklearn.GBClassifier / "
                "gbrank.xgboost.XGBRanker")
        y, w, group = dmatrix_fields(dtrain)
        if group is None and obj.loss_blocks == "query":
            _refuse_distributed_groupless(obj)
        if not obj._uses_positions():
            # XGBoost copies the gradients into its own buffers before it returns, so
            # the arrays of the previous round can be rewritten (as for LightGBM).
            return obj.booster_grad_hess_reusing(y, preds, group, w)
        obj._check_booster_queries(group)
        run = self._runs.get(dtrain)
        if run is None:
            pos = self.position
            if pos is None:
                raise ValueError(f"{obj!r} learns from clicks and needs every training "
                                 "row's display position: objective(obj, position=...)")
            if isinstance(pos, str):
                field = pos
                pos = dmatrix_positions(dtrain, field)
                if pos is None:
                    raise ValueError(f"position={field!r} names a DMatrix field that is "
                                     "empty on this training data; set it, e.g. "
                                     f"dtrain.set_float_info({field!r}, positions)")
            if np.size(pos) != np.size(preds):
                raise ValueError(f"position= holds {np.size(pos)} positions and the "
                                 f"training DMatrix has {np.size(preds)} rows: give one "
                                 "per row, in its row order")
            run = obj.position_bias_training(pos, learning_rate=self.learning_rate,
                                             reduce=_distributed_reduce())
            self._runs[dtrain] = run
        grad, hess = run.grad_hess(y, preds, group, w)
        self.position_bias_ = run.estimates
        return grad, hess

    def __getstate__(self) -> dict[str, Any]:
        return {"obj": self.gbrank_objective, "position": self.position,
                "learning_rate": self.learning_rate}

    def __setstate__(self, state: dict[str, Any]) -> None:
        self.__init__(state["obj"], state["position"], state["learning_rate"])

    def __repr__(self) -> str:
        return f"gbrank.xgboost.objective({self.gbrank_objective!r})"


def _distributed_reduce() -> Callable[[np.ndarray, str], np.ndarray] | None:
    """Sums and maxima over XGBoost's workers (its collective allreduce) in distributed
    training; ``None`` on one machine."""
    collective = require("xgboost.collective")

    if collective.get_world_size() <= 1:
        return None

    def reduce(values: np.ndarray, op: str) -> np.ndarray:
        how = collective.Op.SUM if op == "sum" else collective.Op.MAX
        return np.asarray(collective.allreduce(np.ascontiguousarray(values, np.float64), how))

    return reduce


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
