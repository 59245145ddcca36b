"""XGBoost adapter: translate XGBoost's calling conventions to gbrank objects.

``xgb.train(..., obj=objective(o))`` passes ``(preds, dtrain)``; labels, weights and
query boundaries (``group_ptr``) are read from the ``DMatrix`` here.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

__all__ = ["objective", "metric", "XGBRanker"]


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
        ``f(preds, dtrain) -> (grad, hess)``.
    """

    def _xgb_objective(preds: np.ndarray, dtrain: Any) -> tuple[np.ndarray, np.ndarray]:
        y, w, group = _dmatrix_fields(dtrain)
        if obj.loss_blocks == "row":
            group = None
        return obj.grad_hess(y, preds, group, weight=w)

    _xgb_objective.__name__ = type(obj).__name__
    _xgb_objective.gbrank_objective = obj  # type: ignore[attr-defined]
    return _xgb_objective


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
    from gbrank._registry import get_metric

    if not names:
        raise ValueError("metric needs at least one metric name, e.g. metric('ndcg@10')")
    metrics = [get_metric(n) for n in names]
    if threshold is not None:
        metrics = [m.with_threshold(float(threshold)) for m in metrics]
    return _XGBMetric(tuple(metrics))


# --- XGBRanker with gbrank objectives -------------------------------------------------
# Importing XGBoost here (not lazily) because the class below subclasses its ranker.
import xgboost as _xgb  # noqa: E402


class XGBRanker(_xgb.XGBRanker):
    """``xgboost.XGBRanker`` that also accepts a gbrank objective.

    XGBoost's own ``XGBRanker`` refuses callable objectives ("custom objective
    function not supported by XGBRanker"). This subclass takes a gbrank objective
    (``XGBRanker(objective=LambdaRank(metric="err"), n_estimators=100)``) and trains
    it with ``xgb.train(params, dtrain, obj=gbrank.xgboost.objective(obj))``; string
    objectives (``"rank:ndcg"``, ...) go to XGBoost's ``fit`` unchanged.

    With a gbrank objective, ``fit`` builds the ``DMatrix`` from ``X, y`` and
    ``group`` (query sizes) or ``qid`` (per-row ids; rows of a query must be
    contiguous, as XGBoost requires), ``sample_weight`` (one weight per query, as in
    XGBoost), and the same for ``eval_set`` / ``eval_group`` / ``eval_qid`` /
    ``sample_weight_eval_set``. ``eval_metric`` may be an XGBoost metric name, a list
    of them, or :func:`metric` (called as ``f(preds, dmatrix)``). ``base_score``
    defaults to 0 (gbrank ranking objectives start at 0, as LightGBM does). The
    booster's ``objective`` parameter is set to ``"rank:pairwise"`` only so that
    XGBoost treats the model as a ranker (raw-margin predictions); the gradients
    come from the gbrank objective. ``predict`` returns raw margins.
    """

    def __init__(self, *, objective: Any = "rank:ndcg", **kwargs: Any) -> None:
        custom = hasattr(objective, "grad_hess")
        super().__init__(objective="rank:pairwise" if custom else objective, **kwargs)
        self.objective = objective

    def get_xgb_params(self) -> dict[str, Any]:
        # scikit-learn's deep get_params expands the objective's own parameters
        # ("objective__sigma", ...); they are not booster parameters.
        params = super().get_xgb_params()
        return {k: v for k, v in params.items() if not k.startswith("objective__")}

    def fit(self, X: Any, y: Any, *, group: Any = None, qid: Any = None,
            sample_weight: Any = None, eval_set: Any = None, eval_group: Any = None,
            eval_qid: Any = None, sample_weight_eval_set: Any = None,
            verbose: Any = False, xgb_model: Any = None, **kwargs: Any) -> XGBRanker:
        """Fit; see the class docstring (other XGBoost ``fit`` arguments with a
        string objective only)."""
        obj = self.objective
        if not hasattr(obj, "grad_hess"):
            return super().fit(X, y, group=group, qid=qid, sample_weight=sample_weight,
                               eval_set=eval_set, eval_group=eval_group, eval_qid=eval_qid,
                               sample_weight_eval_set=sample_weight_eval_set,
                               verbose=verbose, xgb_model=xgb_model, **kwargs)
        if kwargs:
            raise ValueError(f"XGBRanker.fit with a gbrank objective does not take "
                             f"{sorted(kwargs)}")
        if group is None and qid is None:
            raise ValueError("Either `group` or `qid` is required for ranking task")

        def dmat(Xi: Any, yi: Any, gi: Any, qi: Any, wi: Any) -> Any:
            return _xgb.DMatrix(Xi, yi, group=gi, qid=qi, weight=wi, missing=self.missing,
                                enable_categorical=self.enable_categorical,
                                nthread=self.n_jobs, feature_types=self.feature_types)

        dtrain = dmat(X, y, group, qid, sample_weight)
        evals = []
        for i, (Xe, ye) in enumerate(eval_set or []):
            ge = None if eval_group is None else eval_group[i]
            qe = None if eval_qid is None else eval_qid[i]
            we = None if sample_weight_eval_set is None else sample_weight_eval_set[i]
            evals.append((dmat(Xe, ye, ge, qe, we), f"validation_{i}"))
        params = self.get_xgb_params()
        params["objective"] = "rank:pairwise"
        if params.get("base_score") is None:
            params["base_score"] = 0.0
        custom_metric = None
        em = params.pop("eval_metric", None)
        if callable(em):
            custom_metric = em
            params["disable_default_eval_metric"] = 1
        elif em is not None:
            params["eval_metric"] = em
        evals_result: dict = {}
        self._Booster = _xgb.train(
            params, dtrain, num_boost_round=self.get_num_boosting_rounds(),
            evals=evals, evals_result=evals_result, obj=objective(obj),
            custom_metric=custom_metric, verbose_eval=verbose, xgb_model=xgb_model,
            early_stopping_rounds=self.early_stopping_rounds, callbacks=self.callbacks,
        )
        self._set_evaluation_result(evals_result)
        return self
