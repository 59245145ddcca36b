"""XGBoost adapter: translate XGBoost's calling conventions to gbrank objects.

``xgb.train(..., obj=objective(o))`` passes ``(preds, dtrain)``; labels, weights and
query boundaries (``group_ptr``) are read from the ``DMatrix`` here. XGBoost itself is
imported only inside the functions that need it. The scikit-learn ranker that accepts
gbrank objectives lives in :mod:`gbrank.sklearn` (``gbrank.xgboost.XGBRanker`` still
resolves to it).
"""

from __future__ import annotations

import copy
from collections.abc import Callable
from typing import Any

import numpy as np

__all__ = ["objective", "metric"]


def _dmatrix_fields(dmat: Any) -> tuple[np.ndarray, Any, Any]:
    """Labels, weights (per query for ranking data) and query sizes of a ``DMatrix``."""
    y = dmat.get_label()
    w = dmat.get_weight()
    w = None if w.size == 0 else w
    ptr = dmat.get_uint_info("group_ptr")
    group = np.diff(ptr.astype(np.int64)) if ptr.size >= 2 else None
    return y, w, group


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
    """
    obj = copy.deepcopy(obj)

    def _xgb_objective(preds: np.ndarray, dtrain: Any) -> tuple[np.ndarray, np.ndarray]:
        y, w, group = _dmatrix_fields(dtrain)
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
    from xgboost import collective

    n = collective.get_world_size()
    if n > 1:
        raise ValueError(
            f"{type(obj).__name__} got no query ids on one of {n} XGBoost workers: a "
            "group-less objective treats all rows as one query, which cannot be split "
            "across workers. Pass qid to the DaskDMatrix (gbrank.dask.partition_by_query) "
            "or use pseudo-queries (gbrank.dask.partition_pseudo_queries)")


def _is_dmatrix(x: Any) -> bool:
    import xgboost

    return isinstance(x, xgboost.DMatrix)


class _XGBMetric:
    """XGBoost metric callable (module-level class: picklable with a fitted estimator)."""

    def __init__(self, metrics: tuple[Any, ...]) -> None:
        self.metrics = metrics
        # XGBoost's scikit-learn wrappers name the metric after ``func.__name__``.
        self.__name__ = ",".join(m.name for m in metrics)

    def __call__(self, a: Any, b: Any, sample_weight: Any = None) -> Any:
        if _is_dmatrix(b):
            y, w, group = _dmatrix_fields(b)
            out = [(m.name, m(y, a, group if m.kind == "ranking" else None, w))
                   for m in self.metrics]
            return out[0] if len(out) == 1 else out
        if len(self.metrics) != 1:
            raise ValueError(
                "XGBoost's scikit-learn API takes one metric per callable; got "
                f"{[m.name for m in self.metrics]}: use metric(name) for a single name"
            )
        return self.metrics[0](a, b, None, sample_weight)

    def __repr__(self) -> str:
        return f"metric({', '.join(repr(m.name) for m in self.metrics)})"


def metric(*names: str, threshold: float | None = None) -> _XGBMetric:
    """An XGBoost evaluation function computing gbrank metrics by name.

    Parameters
    ----------
    *names : str
        Registry names (:func:`gbrank.metrics.get_metric`): ``"ndcg@10"``, ``"err@5"``,
        ``"map"``, ``"mrr"``, ``"pair_accuracy"``, ``"f1"``, ``"fbeta:2"``, ...
    threshold : float, optional
        Threshold for binary metrics (``s > threshold``). Default 0, right for margins
        (custom objectives); with XGBoost's built-in ``binary:logistic`` the metric sees
        probabilities, so pass 0.5.

    Returns
    -------
    callable
        Two ways to use it:

        - ``xgb.train(..., custom_metric=f)`` calls ``f(preds, dmatrix)``: labels,
          weights and ``group_ptr`` come from the ``DMatrix`` and the value is exactly
          the gbrank metric (query-weighted mean; pair accuracy pooled). Returns
          ``(name, value)`` for one name, a list of them for several (XGBoost 3 accepts
          both). XGBoost's early stopping guesses the direction from the name and would
          minimise ``err``, ``mrr``, ``pair_accuracy``, ``f1``: pass ``maximize=True``
          (all gbrank metrics are higher-is-better). Set
          ``disable_default_eval_metric=1`` when a name equals XGBoost's own metric
          (``ndcg@10``, ``map@5``), which otherwise shares the key in ``evals_result``.
        - ``XGBRanker(eval_metric=f)`` (one name only): XGBoost calls ``f(y_q, s_q)``
          once per query and aggregates itself, weighting queries by their size and
          giving single-row queries 1.0, so the logged value differs from the gbrank
          mean (and pair accuracy is averaged per query, not pooled).
          ``XGBClassifier(eval_metric=f)`` calls ``f(y, s, sample_weight=w)`` on all rows.
    """
    from gbrank.metrics import get_metric

    if not names:
        raise ValueError("metric needs at least one metric name, e.g. metric('ndcg@10')")
    metrics = [get_metric(n) for n in names]
    if threshold is not None:
        metrics = [m.with_threshold(threshold) for m in metrics]
    return _XGBMetric(tuple(metrics))


def __getattr__(name: str) -> Any:
    # ``gbrank.xgboost.XGBRanker`` moved to gbrank.sklearn (one home for estimators);
    # the old name keeps working, and xgboost is imported only when it is asked for.
    if name == "XGBRanker":
        from gbrank.sklearn import XGBRanker

        return XGBRanker
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
