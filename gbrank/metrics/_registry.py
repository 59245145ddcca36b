"""Metric names adapters accept: ``"ndcg@10"``, ``"map"``, ``"fbeta:2"``, ...

``get_metric(name)`` parses a name into a :class:`Metric`, a callable
``(y, s, group=None, weight=None) -> float`` that every adapter (LightGBM ``feval``,
XGBoost ``custom_metric``) uses. Forms:

- ``ndcg``, ``err``, ``map``, ``mrr`` with an optional ``@k`` (``ndcg@10``); without
  ``@k`` the metric runs over every row of a query (``k=None``), unlike LightGBM's
  ``ndcg`` which defaults to ``eval_at=1..5`` and :func:`gbrank.metrics.ndcg`, whose
  ``k`` defaults to 10. ``precision@<k>``, ``recall@<k>``: over every row they would
  not depend on the scores, so the cut-off is required.
- ``pair_accuracy``.
- ``ips_dcg``, ``ips_dcg@<k>``: inverse-propensity-scored DCG on click logs (labels are
  clicks); it needs every row's logged position and the examination propensities,
  bound with :meth:`Metric.with_propensity` (``feval("ips_dcg@10", propensity=...)``
  reads the positions from the LightGBM ``Dataset``).
- ``f1``, ``fbeta:<beta>`` (``fbeta:2``), ``balanced`` (the balanced measure); these
  judge ``s > 0.5`` on probabilities, ``s > 0`` on margins, unless a threshold is
  given (:meth:`Metric.with_threshold`). ``ap``: average precision, a binary metric of
  the rows' order (any scale).
- ``logloss`` and ``ece`` / ``ece:<bins>`` (10 bins by default): calibration of
  predicted probabilities against clicks, rates or mapped grades, per row; lower is
  better.
- multiclass, on (n, K) scores: ``macro_f1``, ``weighted_f1``, ``micro_f1``,
  ``macro_fbeta:<beta>`` (and ``weighted_``/``micro_``), ``balanced_accuracy``,
  ``mlogloss`` (lower is better).

The metrics whose value depends on the scale of the scores (:attr:`Metric.reads_scale`:
the binary and calibration metrics and ``mlogloss``) read probabilities, as the plain
functions do by default, or raw margins once :meth:`Metric.with_margin` binds
``margin=True``; the adapters bind it from what the booster hands over.

Names are case-insensitive; ``Metric.name`` is the canonical lower-case form.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field, replace
from types import MappingProxyType
from typing import Any

from gbrank._validation import check_beta, check_bool, check_propensity, check_threshold
from gbrank.metrics import _binary, _calibration, _clicks, _multiclass, _ranking

__all__ = ["Metric", "METRICS", "get_metric", "metric_names"]


@dataclass(frozen=True)
class Metric:
    """A metric resolved from its name, with its parameters bound.

    Attributes
    ----------
    name : str
        Canonical name (``"ndcg@10"``), used as the metric's name in booster logs.
    kind : str
        ``"ranking"`` (uses the query structure), ``"clicks"`` (a ranking metric of
        click logs: also the rows' positions and bound propensities), ``"binary"``
        (labels 0/1 judged per row: ``s > threshold``, or the rows' order for ``ap``),
        ``"pointwise"`` (calibration of predicted
        probabilities per row) or ``"multiclass"`` ((n, K) scores).
    higher_is_better : bool
        False for the losses (``logloss``, ``ece``, ``mlogloss``), True for the rest.
    func : callable
        The public function in :mod:`gbrank.metrics`.
    params : mapping
        Keyword arguments bound to ``func`` (``k``, ``beta``, ``threshold``,
        ``margin``, ...).

    Examples
    --------
    >>> from gbrank.metrics import get_metric
    >>> m = get_metric("NDCG@2")
    >>> m.name, m.kind, m.params, m.key
    ('ndcg@2', 'ranking', {'k': 2}, 'gbrank_ndcg@2')
    >>> m([1, 0, 0, 1], [0.9, 0.2, 0.3, 0.8], group=[2, 2])  # each query ideal
    1.0
    >>> f1 = get_metric("f1")  # probabilities, cut at 0.5
    >>> f1([1, 0, 1], [0.7, 0.6, 0.2])
    0.5
    >>> on_margins = f1.with_margin(True)  # raw margins, cut at 0
    >>> on_margins.params, on_margins([1, 0, 1], [0.85, 0.4, -1.4])
    ({'margin': True}, 0.5)
    """

    name: str
    kind: str
    func: Callable[..., float]
    # A plain dict (not hashed): LightGBM's and scikit-learn's copies deep-copy it.
    params: dict[str, Any] = field(default_factory=dict, hash=False)
    higher_is_better: bool = True

    @property
    def key(self) -> str:
        """The name boosters log the metric under: ``"gbrank_" + name``, a ``:`` written
        ``_`` (``gbrank_fbeta_2``; XGBoost splits its evaluation log at ``:``). LightGBM
        and XGBoost have metrics called ``ndcg@10`` or ``map@5`` of their own, whose
        values would otherwise share one key in ``evals_result`` and early stopping."""
        return "gbrank_" + self.name.replace(":", "_")

    def __call__(self, y: Any, s: Any, group: Any = None, weight: Any = None, *,
                 qid: Any = None, position: Any = None) -> float:
        """Value on labels ``y``, scores ``s``; ranking metrics read the query structure
        (``group`` sizes or per-row ``qid``) and per-query or per-row ``weight``; the
        others ignore it and take one weight per row. Click metrics (``ips_dcg``) also
        need ``position``, the rows' logged display positions."""
        if self.kind == "ranking":
            return self.func(y, s, group, qid=qid, weight=weight, **self.params)
        if self.kind == "clicks":
            if "propensity" not in self.params:
                raise ValueError(
                    f"{self.name} weighs each click by the examination propensity of its "
                    "logged position, and none is bound: get_metric("
                    f"{self.name!r}).with_propensity(rho), or feval({self.name!r}, "
                    "propensity=rho)")
            if position is None:
                raise ValueError(
                    f"{self.name} needs every row's logged display position: pass "
                    "position=, or for LightGBM build the evaluation Dataset with "
                    "lgb.Dataset(..., position=...)")
            return self.func(y, s, position, group=group, qid=qid, weight=weight,
                             **self.params)
        return self.func(y, s, weight=weight, **self.params)

    def with_propensity(self, propensity: Any) -> Metric:
        """The same click metric with the examination propensities bound (a sequence
        for positions 1, 2, … or a mapping ``{position: ρ}``, as
        :func:`gbrank.metrics.ips_dcg` takes them); other metrics are returned
        unchanged."""
        if self.kind != "clicks":
            return self
        check_propensity(propensity)
        return replace(self, params={**self.params, "propensity": propensity})

    def with_threshold(self, threshold: float) -> Metric:
        """The same binary metric judging ``s > threshold``, the threshold on the scale
        of the scores (a probability, or a margin with :meth:`with_margin`). Ranking
        and calibration metrics and ``ap`` (the order alone) are returned unchanged."""
        threshold = check_threshold(threshold)
        if self.kind != "binary" or not self.reads_scale:  # ap: the order, no cut
            return self
        return replace(self, params={**self.params, "threshold": threshold})

    def with_targets(self, mapping: Mapping[str, Any] | None) -> Metric:
        """The same calibration metric (``logloss``, ``ece``) mapping labels to targets
        as ``mapping`` says (``target``, ``max_grade``, ``threshold``: a calibrated
        objective's :meth:`~gbrank.objectives.CrossEntropy.target_mapping` of its
        training labels), so a validation part whose grades happen to be 0 or 1 is
        judged against the targets the model learned. Other metrics, and ``None``, are
        returned unchanged."""
        if mapping is None or not self.maps_targets:
            return self
        keys = {"target", "max_grade", "threshold"}
        if not set(mapping) <= keys:
            raise ValueError(f"a target mapping holds {sorted(keys)}, got {sorted(mapping)}")
        return replace(self, params={**self.params, **mapping})

    @property
    def maps_targets(self) -> bool:
        """Whether the metric maps labels to targets in [0, 1] (the calibration
        metrics: :meth:`with_targets` binds how)."""
        return self.func in (_calibration.log_loss, _calibration.expected_calibration_error)

    @property
    def reads_scale(self) -> bool:
        """Whether the value depends on the scale of the scores, probabilities or raw
        margins: True for the binary and calibration metrics and ``mlogloss``; ranking
        metrics only order the scores, and multiclass F_β and balanced accuracy only
        read each row's argmax, which neither a sigmoid nor a softmax changes."""
        return self.func in _READS_SCALE

    def with_margin(self, margin: bool) -> Metric:
        """The same metric reading raw margins (``True``: log-odds, a custom
        objective's scores, ``predict(raw_score=True)``) or probabilities (``False``,
        the plain functions' default), bound as the parameter ``margin``. Metrics that
        do not read the scale (:attr:`reads_scale`) are returned unchanged."""
        margin = check_bool(margin, "margin")
        if not self.reads_scale:
            return self
        return replace(self, params={**self.params, "margin": margin})


# family -> (function, kind, takes "@k")
METRICS: Mapping[str, tuple[Callable[..., float], str, bool]] = MappingProxyType({
    "ndcg": (_ranking.ndcg, "ranking", True),
    "err": (_ranking.err, "ranking", True),
    "map": (_ranking.mean_ap, "ranking", True),
    "mrr": (_ranking.mrr, "ranking", True),
    "precision": (_ranking.precision_at_k, "ranking", True),
    "recall": (_ranking.recall_at_k, "ranking", True),
    "pair_accuracy": (_ranking.pair_accuracy, "ranking", False),
    "ips_dcg": (_clicks.ips_dcg, "clicks", True),
    "f1": (_binary.f1, "binary", False),
    "ap": (_binary.average_precision, "binary", False),
    "balanced": (_binary.balanced_measure, "binary", False),
    "logloss": (_calibration.log_loss, "pointwise", False),
    "ece": (_calibration.expected_calibration_error, "pointwise", False),
    "balanced_accuracy": (_multiclass.balanced_accuracy, "multiclass", False),
    "mlogloss": (_multiclass.multiclass_log_loss, "multiclass", False),
})
# Lower is better.
_LOSSES = {"logloss", "ece", "mlogloss"}
# Functions whose value depends on whether the scores are probabilities or margins.
_READS_SCALE = frozenset({_binary.fbeta, _binary.f1, _binary.balanced_measure,
                          _calibration.log_loss, _calibration.expected_calibration_error,
                          _multiclass.multiclass_log_loss})

_NAME_FORMS = (
    "ndcg, ndcg@<k>, err, err@<k>, map, map@<k>, mrr, mrr@<k>, precision@<k>, "
    "recall@<k>, pair_accuracy, ips_dcg, ips_dcg@<k>, f1, fbeta:<beta>, balanced, ap, "
    "logloss, ece, ece:<bins>, macro_f1, weighted_f1, micro_f1, macro_fbeta:<beta>, "
    "weighted_fbeta:<beta>, micro_fbeta:<beta>, balanced_accuracy, mlogloss"
)
_AT_K = re.compile(r"^([a-z_]+)@(\d+)$")
_FBETA_NAME = re.compile(r"^fbeta:(.+)$")
_ECE = re.compile(r"^ece:(\d+)$")
_AVERAGED = re.compile(r"^(macro|weighted|micro)_(f1|fbeta:(.+))$")


def metric_names() -> str:
    """The accepted name forms, as shown in error messages.

    Returns
    -------
    str
        The forms, comma-separated (``<k>`` a cut-off, ``<beta>`` a positive number).

    Examples
    --------
    >>> from gbrank.metrics import metric_names
    >>> metric_names().split(", ")[:4]
    ['ndcg', 'ndcg@<k>', 'err', 'err@<k>']
    """
    return _NAME_FORMS


def _unknown(name: str, why: str = "unknown metric") -> ValueError:
    return ValueError(f"{why} {name!r}; valid forms: {_NAME_FORMS} (k a positive integer, "
                      "beta a positive number)")


def get_metric(name: str | Metric) -> Metric:
    """Resolve a metric name (see the module docstring for the forms).

    Parameters
    ----------
    name : str or Metric
        ``"ndcg@10"``, ``"map"``, ``"fbeta:2"``, ... (case-insensitive); a
        :class:`Metric` is returned as it is.

    Returns
    -------
    Metric
        Callable as ``metric(y, s, group=None, weight=None, *, qid=None)``.

    Raises
    ------
    ValueError
        For an unknown name or a bad ``k`` / ``beta``, listing the valid forms.

    Examples
    --------
    >>> from gbrank.metrics import get_metric
    >>> get_metric("fbeta:2").params
    {'beta': 2.0}
    >>> get_metric("logloss").higher_is_better
    False
    >>> get_metric("ndcg@10")([1, 0], [0.2, 0.9]) == get_metric("ndcg")([1, 0], [0.2, 0.9])
    True
    """
    if isinstance(name, Metric):
        return name
    if not isinstance(name, str):
        raise ValueError(f"metric name must be a string, got {type(name).__name__}")
    key = name.strip().lower()
    m = _FBETA_NAME.match(key)
    if m:
        try:
            beta = check_beta(float(m.group(1)))
        except ValueError:
            raise _unknown(name, "bad beta in metric") from None
        return Metric(name=key, kind="binary", func=_binary.fbeta,
                      params={"beta": beta})
    m = _AVERAGED.match(key)
    if m:
        beta = 1.0
        if m.group(3) is not None:
            try:
                beta = check_beta(float(m.group(3)))
            except ValueError:
                raise _unknown(name, "bad beta in metric") from None
        return Metric(name=key, kind="multiclass", func=_multiclass.fbeta_multiclass,
                      params={"beta": beta, "average": m.group(1)})
    m = _ECE.match(key)
    if m:
        bins = int(m.group(1))
        if bins < 1:
            raise _unknown(name, "bad number of bins in metric")
        return Metric(name=key, kind="pointwise", func=_calibration.expected_calibration_error,
                      params={"n_bins": bins}, higher_is_better=False)
    if key in ("balanced_measure", "log_loss"):
        key = {"balanced_measure": "balanced", "log_loss": "logloss"}[key]
    k = None
    family = key
    m = _AT_K.match(key)
    if m:
        family, k = m.group(1), int(m.group(2))
    if family not in METRICS:
        raise _unknown(name)
    func, kind, takes_k = METRICS[family]
    if family in ("precision", "recall") and k is None:
        # Over every row of a query the share of relevant rows (recall: 1) is the same
        # for any scores: early stopping, a scorer or a study would judge nothing.
        raise ValueError(
            f"metric {name!r} without a cut-off judges every row of a query, and "
            f"{'the share of relevant rows' if family == 'precision' else 'recall, 1,'} "
            f"is then the same whatever the scores: name one, {family}@10")
    if m and (not takes_k or k < 1):
        raise _unknown(name, "bad cut-off in metric" if takes_k else "no @k for metric")
    params: dict[str, Any] = {"k": k} if takes_k else {}
    return Metric(name=key, kind=kind, func=func, params=params,
                  higher_is_better=family not in _LOSSES)
