"""The one booster training loop: the estimators (``gbrank.sklearn``), the tuner's
cross-validation and refits, and its ``LightGBMTunerCV`` anchor train through it.

What it fixes once for both boosters:

- the objective: a gbrank objective goes to LightGBM as ``params["objective"]`` and to
  XGBoost as ``obj=gbrank.xgboost.objective(...)``; a booster objective name goes into
  the parameters;
- the constant start: the caller's data carry it (``init_score`` / ``base_margin``,
  :func:`start_data`), and predictions add it back;
- early stopping on one validation metric (a gbrank metric or any function), in its
  own direction, with the best round kept: LightGBM's ``best_iteration`` when it
  stopped, else every round; XGBoost's ``best_iteration + 1`` when early stopping ran,
  else every round;
- an optional learning-rate schedule and a per-round report of the validation value
  (the tuner's pruning).

Callers keep their own parameters and random streams; the loop adds none.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from gbrank._deps import require
from gbrank._fields import (
    LOG,
    LOGIT,
    SOFTMAX,
    SOFTPLUS,
    native_link,
    native_objective_name,
    warn_ignored_class_weight_params,
    warn_ignored_xgboost_ranking_params,
)
from gbrank._proba import logit

__all__ = ["Trained", "Validation", "start_data", "start_rows", "train"]


@dataclass(frozen=True)
class Validation:
    """How the validation set is judged.

    ``value(raw_predictions, data)`` returns the metric of the booster's raw predictions
    on the validation data (``data`` is the booster's ``Dataset`` / ``DMatrix``, for
    metrics that read labels, groups and weights from it); it is logged under ``name``.
    """

    name: str
    value: Callable[[np.ndarray, Any], float]
    higher_is_better: bool = True


@dataclass
class Trained:
    """A trained booster, the number of rounds to predict with, the validation curve
    (``{"valid": {name: [...]}}``, empty without validation data) and, for an objective
    with ``position_bias``, the training's estimates (a ``PositionBias``)."""

    model: Any
    best_iteration: int
    evals_result: dict = field(default_factory=dict)
    position_bias: Any = None


def start_data(booster: str, data: Any, init: Any) -> None:
    """Set the constant start of a constructed ``Dataset`` / ``DMatrix`` to ``init`` (a
    number, or one per class); ``None`` removes a LightGBM start and leaves a
    ``DMatrix`` as it is."""
    if booster == "lightgbm":
        data.set_init_score(None if init is None else start_rows(init, data.num_data()))
    elif init is not None:  # XGBoost cannot remove a margin; data without one keep none
        data.set_base_margin(start_rows(init, data.num_row()))


def start_rows(init: Any, n: int) -> np.ndarray:
    """A constant start repeated for ``n`` rows: ``(n,)`` for a number, ``(n, K)`` for
    one per class (both boosters take that layout)."""
    c = np.asarray(init, dtype=np.float64)
    return np.full(n, float(c)) if c.ndim == 0 else np.tile(c, (n, 1))


def _to_margins(booster: str, name: str | None) -> Callable[[np.ndarray], np.ndarray]:
    """The map from what the booster hands a custom metric (its built-in objective's
    transformed predictions: probabilities, rates) to the raw margins a Validation
    judges; the links are :data:`gbrank._fields.NATIVE_LINKS`."""
    if name is None:
        return lambda preds: preds
    if booster == "xgboost" and name == "multi:softmax":
        raise ValueError("objective 'multi:softmax' hands a metric class labels, not "
                         "scores; use 'multi:softprob' to validate on a gbrank metric")
    link = native_link(booster, name)
    # A confident model's probability rounds to exactly 0 or 1 (LightGBM's binary reaches
    # raw scores of -1,000 on 1:1000 data): each map below keeps it finite at the nearest
    # representable value, where an exact inverse gives ±inf, which the metrics refuse as
    # no score. Such rows are tied in the probabilities already.
    tiny = np.finfo(np.float64).tiny
    if link == LOGIT:
        below_one = np.nextafter(1.0, 0.0)

        def from_probabilities(preds: np.ndarray) -> np.ndarray:
            return logit(np.clip(np.asarray(preds, dtype=np.float64), tiny, below_one))
        return from_probabilities
    if link in (SOFTMAX, LOG):  # log-probabilities serve as margins of a softmax
        def log(preds: np.ndarray) -> np.ndarray:
            return np.log(np.maximum(np.asarray(preds, dtype=np.float64), tiny))
        return log
    if link == SOFTPLUS:
        def inverse_softplus(preds: np.ndarray) -> np.ndarray:
            return np.log(np.maximum(np.expm1(np.asarray(preds, dtype=np.float64)), tiny))
        return inverse_softplus
    return lambda preds: preds


def train(booster: str, params: dict[str, Any], objective: Any, dtrain: Any,
          dvalid: Any = None, *, rounds: int, validation: Validation | None = None,
          early_stopping: int | None = None,
          learning_rates: Callable[[int], float] | None = None,
          on_iteration: Callable[[int, float], Any] | None = None,
          position: Any = None) -> Trained:
    """Train ``booster`` ("lightgbm" or "xgboost") for at most ``rounds`` rounds.

    Parameters
    ----------
    booster : {"lightgbm", "xgboost"}
    params : dict
        The booster's parameters, as the caller chose them (learning rate, tree shape,
        seed, threads, ...); not modified.
    objective : gbrank objective, str or None
        A gbrank objective instance, a booster objective name, or ``None`` (the name is
        in ``params``).
    dtrain, dvalid : Dataset / DMatrix
        Constructed training data (and optional validation data), carrying their start
        (:func:`start_data`).
    rounds : int
    validation : Validation, optional
        The metric on ``dvalid`` (required with ``dvalid``).
    early_stopping : int, optional
        Stop when ``validation`` has not improved for this many rounds.
    learning_rates : callable, optional
        ``round -> learning rate``.
    on_iteration : callable, optional
        ``(round, validation value)`` after every round; it may raise to stop training
        (an Optuna ``TrialPruned``).
    position : array-like, optional
        Display positions of ``dtrain``'s rows, for a gbrank objective with
        ``position_bias``: it gets them through :func:`gbrank.lightgbm.objective` /
        :func:`gbrank.xgboost.objective` (a constructed LightGBM ``Dataset`` holds only
        LightGBM's renumbering of its own), with the learning rate of ``params`` for
        ``"additive"``'s offsets. Ignored for a booster objective name (LightGBM's
        ``lambdarank`` reads a ``Dataset``'s positions itself).

    Returns
    -------
    Trained
    """
    if dvalid is not None and validation is None:
        raise ValueError("validation data need a Validation (the metric that judges them)")
    evals_result: dict[str, Any] = {}
    with_positions = (position is not None and objective is not None
                      and not isinstance(objective, str) and objective._uses_positions())
    if booster == "lightgbm":
        lgb = require("lightgbm")
        p = dict(params)
        wrapped = None
        if with_positions:
            from gbrank.lightgbm import objective as lgb_objective

            wrapped = lgb_objective(objective, position=position,
                                    learning_rate=_learning_rate(booster, p))
            p["objective"] = wrapped
        elif objective is not None:
            p["objective"] = objective
        callbacks: list[Any] = []
        feval = None
        if learning_rates is not None:
            callbacks.append(lgb.reset_parameter(learning_rate=learning_rates))
        if dvalid is not None:
            v = validation
            margins = _to_margins("lightgbm", native_objective_name("lightgbm", p))

            def feval(preds: np.ndarray, data: Any) -> tuple[str, float, bool]:
                return v.name, v.value(margins(preds), data), v.higher_is_better

            callbacks.append(lgb.record_evaluation(evals_result))
            if early_stopping is not None:
                callbacks.append(lgb.early_stopping(early_stopping, first_metric_only=True,
                                                    verbose=False))
            if on_iteration is not None:
                def report(env: Any, name: str = v.name) -> None:
                    for _, metric, value, _ in env.evaluation_result_list:
                        if metric == name:
                            on_iteration(env.iteration, value)

                callbacks.append(report)
        valid_sets = [] if dvalid is None else [dvalid]
        model = lgb.train(p, dtrain, num_boost_round=rounds, valid_sets=valid_sets,
                          valid_names=["valid"][:len(valid_sets)], feval=feval,
                          callbacks=callbacks)
        best = model.best_iteration if model.best_iteration > 0 else model.current_iteration()
        return Trained(model, int(best), evals_result,
                       None if wrapped is None else wrapped.position_bias_)
    xgb = require("xgboost")
    p = dict(params)
    fobj = None
    if objective is not None and not isinstance(objective, str):
        from gbrank.xgboost import objective as xgb_objective

        if with_positions:
            fobj = xgb_objective(objective, position=position,
                                 learning_rate=_learning_rate(booster, p))
        else:
            fobj = xgb_objective(objective)
        p.pop("objective", None)
        # A gbrank objective starts from raw score 0, as LightGBM starts a custom one, or
        # from the data's base_margin (which replaces base_score): never from XGBoost's
        # base_score 0.5, which the code a model is shown with would not reproduce.
        p.setdefault("base_score", 0.0)
        if objective.task == "ranking":
            warn_ignored_xgboost_ranking_params(p, type(objective).__name__)
        else:
            warn_ignored_class_weight_params(p, type(objective).__name__, "xgboost")
    elif objective is not None:
        p["objective"] = objective
    callbacks = []
    if learning_rates is not None:
        callbacks.append(xgb.callback.LearningRateScheduler(learning_rates))
    evals: list[Any] = []
    metric = None
    if dvalid is not None:
        v = validation
        # XGBoost splits its evaluation log at ":" (fbeta:2): logged as "_", given back
        # under the metric's own name below.
        logged = v.name.replace(":", "_")
        evals = [(dvalid, "valid")]
        margins = _to_margins("xgboost", None if fobj is not None
                              else native_objective_name("xgboost", p))

        def metric(preds: np.ndarray, data: Any) -> tuple[str, float]:
            return logged, v.value(margins(preds), data)

        if early_stopping is not None:
            callbacks.append(xgb.callback.EarlyStopping(
                rounds=early_stopping, metric_name=logged, data_name="valid",
                maximize=v.higher_is_better, save_best=False))
        if on_iteration is not None:
            class _Report(xgb.callback.TrainingCallback):
                def after_iteration(self, model: Any, epoch: int, evals_log: Any) -> bool:
                    on_iteration(epoch, evals_log["valid"][logged][-1])
                    return False

            callbacks.append(_Report())
    model = xgb.train(p, dtrain, num_boost_round=rounds, evals=evals,
                      evals_result=evals_result, obj=fobj, custom_metric=metric,
                      callbacks=callbacks or None, verbose_eval=False)
    if evals and logged != validation.name:
        evals_result["valid"][validation.name] = evals_result["valid"].pop(logged)
    if evals and early_stopping is not None and getattr(model, "best_iteration", None) \
            is not None:
        best = int(model.best_iteration) + 1
    else:
        best = int(model.num_boosted_rounds())
    return Trained(model, best, evals_result,
                   fobj.position_bias_ if with_positions else None)


def _learning_rate(booster: str, params: dict[str, Any]) -> float:
    """The learning rate ``params`` name (any alias), else the booster's default."""
    keys = (("learning_rate", "shrinkage_rate", "eta") if booster == "lightgbm"
            else ("eta", "learning_rate"))
    rate = next((params[k] for k in keys if k in params), None)
    return float(rate) if rate is not None else (0.1 if booster == "lightgbm" else 0.3)
