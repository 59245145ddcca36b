"""metric: gbrank metrics as XGBoost evaluation functions, under names of their own."""

from __future__ import annotations

import sys
import weakref
from typing import Any

import numpy as np

from gbrank._deps import require
from gbrank._fields import (
    dmatrix_fields,
    dmatrix_positions,
    margins_by_values,
    missing_start_error,
    per_row_weights,
    start_kind,
)
from gbrank._queries import check_declared_queries


def _is_dmatrix(x: Any) -> bool:
    xgboost = require("xgboost")

    return isinstance(x, xgboost.DMatrix)



# XGBoost callback containers whose early stopping has been pointed at gbrank metrics.
_DIRECTION_SET: weakref.WeakSet = weakref.WeakSet()


def _from_the_stack() -> tuple[Any, bool]:
    """What the call stack says about the call of the metric calling this: the
    ``CallbackContainer`` of the XGBoost training whose evaluation called it (XGBoost's
    container calls ``Booster.eval_set``, which calls the metric; ``None`` when the
    layout differs), and whether XGBoost's scikit-learn wrapper handed it every
    evaluation row at once (its caller holds the evaluation ``DMatrix``: XGBRegressor,
    XGBClassifier), not one query at a time (XGBRanker's per-query loop). The one place
    that reads the stack."""
    caller = sys._getframe(2)
    every_row = (caller is not None
                 and str(caller.f_globals.get("__name__", "")).startswith("xgboost")
                 and any(_is_dmatrix(v) for v in caller.f_locals.values()))
    frame = caller
    for _ in range(8):
        if frame is None:
            return None, every_row
        owner = frame.f_locals.get("self")
        if isinstance(getattr(owner, "callbacks", None), list) and hasattr(owner, "history"):
            return owner, every_row
        frame = frame.f_back
    return None, every_row


# Per training (its callback container): each evaluated DMatrix's kind of start
# (gbrank._fields.start_kind), by the DMatrix's id.
_STARTS: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()


def _direction_in_early_stopping(directions: dict[str, bool], container: Any) -> None:
    """Point XGBoost's early stopping the right way for the gbrank metrics being
    evaluated (``directions``: logged name → higher is better).

    XGBoost guesses the direction from the metric's name (``maximize=None``: only names
    starting with ``auc``, ``map``, ``ndcg``, ``pre`` are maximised), so it would
    minimise ``gbrank_err@10``, ``gbrank_pair_accuracy`` or ``gbrank_f1`` and keep the
    worst round. The ``EarlyStopping`` callback of the training that evaluates this
    metric (found through the call stack: XGBoost's ``CallbackContainer`` calls
    ``Booster.eval_set``, which calls the metric) gets the metric's own direction before
    it first compares scores; an explicit ``maximize`` against it is refused. It watches
    ``metric_name``, or the last metric logged, which is the last gbrank one (custom
    metrics come after XGBoost's). Nothing happens when the layout differs.
    """
    if container is None:
        return
    try:
        if container in _DIRECTION_SET:
            return
        _DIRECTION_SET.add(container)
    except TypeError:
        pass
    EarlyStopping = require("xgboost.callback").EarlyStopping

    last = list(directions)[-1]
    for cb in container.callbacks:
        if not isinstance(cb, EarlyStopping):
            continue
        watched = cb.metric_name or last
        if watched not in directions:
            continue
        higher = directions[watched]
        if cb.maximize is None:
            cb.maximize = higher
        elif bool(cb.maximize) != higher:
            raise ValueError(
                f"early stopping is set to {'minimise' if higher else 'maximise'} "
                f"{watched}, a gbrank metric for which {'higher' if higher else 'lower'} "
                f"is better: pass maximize={higher} or leave maximize unset")


class _XGBMetric:
    """XGBoost metric callable (module-level class: picklable with a fitted estimator)."""

    def __init__(self, metrics: tuple[Any, ...], position: str | None = None,
                 margin: bool | None = None, groupless: bool = False) -> None:
        self.metrics = metrics
        self.position = position
        self.margin = margin
        self.groupless = groupless
        self.keys = tuple(m.key for m in metrics)
        # XGBoost's scikit-learn wrappers name the metric after ``func.__name__``.
        self.__name__ = ",".join(self.keys)

    def __call__(self, a: Any, b: Any, sample_weight: Any = None) -> Any:
        container, every_row = _from_the_stack()
        _direction_in_early_stopping(
            {k: m.higher_is_better for k, m in zip(self.keys, self.metrics, strict=True)},
            container)
        if _is_dmatrix(b):
            self._check_starts(container, b)
            y, w, group = dmatrix_fields(b)
            group = self._queries(group)
            w_rows = per_row_weights(w, group, y.size)
            metrics = self._scaled(a)
            out = [(key, self._value(m, y, a, group, w, w_rows, b))
                   for key, m in zip(self.keys, metrics, strict=True)]
            return out[0] if len(out) == 1 else out
        if len(self.metrics) != 1:
            raise ValueError(
                "XGBoost's scikit-learn API takes one metric per callable; got "
                f"{[m.name for m in self.metrics]}: use metric(name) for a single name"
            )
        if self.metrics[0].kind in ("ranking", "clicks") and every_row:
            # XGBRegressor/XGBClassifier: every evaluation row, no query reaches here
            # (XGBRanker calls once per query instead).
            check_declared_queries(
                None, self.groupless, self.metrics[0].name,
                "the rows XGBoost's scikit-learn model hands it (every evaluation row)",
                "rank with XGBRanker(qid=...) or xgb.train with xgb.DMatrix(X, y, qid=ids)",
                "metric(..., groupless=True)")
        return self._scaled(b)[0](a, b, None, sample_weight)

    def _check_starts(self, container: Any, dmat: Any) -> None:
        """Refuse evaluation data of one training of which some DMatrix has a
        ``base_margin`` and another none (:func:`~gbrank._fields.missing_start_error`).
        Seen only when the DMatrix with the start (the training one) is evaluated too;
        each DMatrix's start is read once per training."""
        if container is None:
            return
        try:
            seen = _STARTS.setdefault(container, {})
        except TypeError:
            return
        if id(dmat) not in seen:
            seen[id(dmat)] = start_kind(dmat.get_base_margin(), dmat.num_row())
        kinds = set(seen.values())
        if None not in kinds or len(kinds) == 1:
            return
        kind = "constant" if kinds == {None, "constant"} else "per row"
        message = missing_start_error(
            kind, self.metrics,
            "an evaluation DMatrix of this training has no base_margin and another has one",
            "XGBoost adds each DMatrix's own start", "xgb.DMatrix(X_valid, y_valid, "
            "base_margin=...)")
        if message is not None:
            raise ValueError(message)

    def _queries(self, group: Any) -> Any:
        """The query sizes ranking metrics judge: the DMatrix's, or none (all rows one
        query) when ``groupless=True`` declares it (:func:`check_declared_queries`)."""
        ranking = [m.name for m in self.metrics if m.kind in ("ranking", "clicks")]
        if not ranking:
            return group
        check_declared_queries(None if group is None else int(np.size(group)),
                               self.groupless, ranking[0], "this DMatrix",
                               "pass the queries (xgb.DMatrix(X, y, qid=ids) or group=sizes)",
                               "metric(..., groupless=True)")
        return None if self.groupless else group

    def _scaled(self, preds: Any) -> tuple[Any, ...]:
        """The metrics with the scale of ``preds`` bound where they read it: the
        explicit ``margin``, else raw margins when some prediction lies outside
        [0, 1]; all inside is refused (a DMatrix does not say which objective trained:
        a native ``binary:logistic`` hands probabilities, a custom one margins)."""
        scaled = [m.name for m in self.metrics if m.reads_scale]
        if not scaled:
            return self.metrics
        margin = self.margin
        if margin is None:
            margin = margins_by_values(preds)
        if margin is None:
            raise ValueError(
                f"{scaled[0]} reads probabilities or raw margins, and XGBoost does not say "
                "which it hands over (a native objective such as 'binary:logistic' gives "
                "probabilities, a custom one raw margins); every prediction lies in "
                "[0, 1], so both could be meant: pass metric(..., margin=False) for "
                "probabilities or metric(..., margin=True) for raw margins")
        return tuple(m.with_margin(margin) for m in self.metrics)

    def _value(self, m: Any, y: Any, s: Any, group: Any, w: Any, w_rows: Any,
               dmat: Any) -> float:
        if m.kind == "ranking":
            return m(y, s, group, w)
        if m.kind == "clicks":
            pos = dmatrix_positions(dmat, self.position)
            if pos is None:
                raise ValueError(
                    f"{m.name} reads positions from the DMatrix field {self.position!r}, "
                    "which is empty on this evaluation data: dvalid.set_float_info("
                    f"{self.position!r}, positions)")
            return m(y, s, group, w, position=pos)
        return m(y, s, None, w_rows)

    def __repr__(self) -> str:
        return f"metric({', '.join(repr(m.name) for m in self.metrics)})"


def metric(*names: str, threshold: float | None = None, propensity: Any = None,
           position: str | None = None, margin: bool | None = None,
           groupless: bool = False) -> _XGBMetric:
    """An XGBoost evaluation function computing gbrank metrics by name.

    Parameters
    ----------
    *names : str
        Registry names (:func:`gbrank.metrics.get_metric`): ``"ndcg@10"``, ``"err@5"``,
        ``"map"``, ``"mrr"``, ``"pair_accuracy"``, ``"f1"``, ``"fbeta:2"``, ...
    threshold : float, optional
        Threshold for binary metrics (``s > threshold``), on the scale of the
        predictions. Default: 0 on raw margins, 0.5 on probabilities.
    propensity : sequence or dict, optional
        Examination propensities for click metrics (``"ips_dcg@10"``): ρ(1), ρ(2), …
        or ``{position: ρ}``.
    position : str, optional
        For click metrics: the per-row float field of each evaluated ``DMatrix`` that
        holds the rows' logged display positions (a ``DMatrix`` has no position
        field), e.g. ``"label_lower_bound"`` (``dvalid.set_float_info(
        "label_lower_bound", positions)``), as :func:`gbrank.xgboost.objective` reads
        them.
    margin : bool, optional
        Whether XGBoost hands raw margins (``True``: a custom objective, e.g. every
        gbrank one, or ``binary:logitraw``) or probabilities (``False``:
        ``binary:logistic``, ``multi:softprob``) to the metrics that read the scale
        (binary, ``logloss``, ``ece``, ``mlogloss``). ``None`` (default) infers it from
        the values, as a ``DMatrix`` does not say which objective trained: any
        prediction outside [0, 1] means margins, and all inside is refused as ambiguous.
        An explicit value is used as given.
    groupless : bool, default False
        Declare that every row of an evaluated ``DMatrix`` is one query, for ranking and
        click metrics on a ``DMatrix`` without ``qid`` / ``group`` (which is otherwise
        refused); a ``DMatrix`` with several queries is then refused.

    Returns
    -------
    callable
        Two ways to use it:

        - ``xgb.train(..., custom_metric=f)`` calls ``f(preds, dmatrix)``: labels,
          weights and ``group_ptr`` come from the ``DMatrix`` and the value is exactly
          the gbrank metric (query-weighted mean; pair accuracy pooled). Returns
          ``("gbrank_<name>", value)`` for one name, a list of them for several
          (XGBoost 3 accepts both), logged under :func:`gbrank.lightgbm.metric_key`'s
          ``"gbrank_<name>"`` (a ``:`` written ``_``, as XGBoost's log splits at it) so that no
          XGBoost metric of the same name (``ndcg@10``, ``map@5``) shares its key.
          XGBoost's early stopping guesses the direction from a metric's name; an
          unset ``maximize`` becomes the gbrank metric's own direction (higher is
          better, except ``logloss`` and ``ece``) for early stopping that watches
          it, and a ``maximize`` against it is refused.
        - ``XGBRanker(eval_metric=f)`` (one name only): XGBoost calls ``f(y_q, s_q)``
          once per query and aggregates itself, weighting queries by their size and
          giving single-row queries 1.0, so the logged value differs from the gbrank
          mean (and pair accuracy is averaged per query, not pooled).
          ``XGBClassifier(eval_metric=f)`` calls ``f(y, s, sample_weight=w)`` on all rows
          (no query structure reaches it there: a ranking metric is refused unless
          ``groupless=True`` declares the rows one list).

    Raises
    ------
    ValueError
        When a ranking metric meets a ``DMatrix`` without query structure (and no
        ``groupless=True``), or a scale-reading metric meets predictions that all lie in
        [0, 1] (and no ``margin=``); both messages name the fix.

    Examples
    --------
    >>> import xgboost as xgb
    >>> from gbrank.datasets import make_ranking
    >>> from gbrank.objectives import LambdaRank
    >>> from gbrank.xgboost import metric, objective
    >>> X, y, group = make_ranking(n_queries=20, rows_per_query=10, n_features=5)
    >>> dtrain = xgb.DMatrix(X, y, group=group)
    >>> log = {}
    >>> booster = xgb.train({"base_score": 0.0, "nthread": 1,
    ...                      "disable_default_eval_metric": 1}, dtrain, num_boost_round=3,
    ...                     obj=objective(LambdaRank()),
    ...                     custom_metric=metric("ndcg@10", "pair_accuracy"),
    ...                     evals=[(dtrain, "train")], evals_result=log, verbose_eval=False)
    >>> sorted(log["train"]), len(log["train"]["gbrank_ndcg@10"])
    (['gbrank_ndcg@10', 'gbrank_pair_accuracy'], 3)
    """
    from gbrank._validation import check_bool
    from gbrank.metrics import get_metric

    if not names:
        raise ValueError("metric needs at least one metric name, e.g. metric('ndcg@10')")
    metrics = [get_metric(n) for n in names]
    if threshold is not None:
        metrics = [m.with_threshold(threshold) for m in metrics]
    clicks = any(m.kind == "clicks" for m in metrics)
    if (propensity is not None or position is not None) and not clicks:
        raise ValueError("propensity= and position= are for click metrics such as "
                         f"'ips_dcg@10'; none of {[m.name for m in metrics]} is one")
    if clicks and not isinstance(position, str):
        raise ValueError(
            "a click metric (ips_dcg) needs every evaluated row's logged position, and a "
            "DMatrix has no position field: store them in a per-row float field and name "
            "it, metric('ips_dcg@10', propensity=rho, position='label_lower_bound') with "
            "dvalid.set_float_info('label_lower_bound', positions)")
    if propensity is not None:
        metrics = [m.with_propensity(propensity) for m in metrics]
    margin = None if margin is None else check_bool(margin, "margin")
    return _XGBMetric(tuple(metrics), position, margin, check_bool(groupless, "groupless"))
