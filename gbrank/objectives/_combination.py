"""Weighted sums of objectives, and the calibration term of the ranking objectives."""

from __future__ import annotations

from typing import Any

import numpy as np

from gbrank._queries import query_structure
from gbrank._validation import as_float_array, check_number
from gbrank.objectives._base import Objective

__all__ = ["Combination"]


class Combination(Objective):
    r"""A weighted sum of objectives: :math:`L = \sum_k c_k L_k`.

    Gradients and Hessians are the same weighted sums of the parts' (each part's
    Hessian as that part gives it to a booster, floored or bounded as the part does;
    :meth:`exact_grad_hess` sums the true ones). The typical use is a calibrated
    ranking objective, a ranking loss that orders rows within a query plus a pointwise
    loss that makes :math:`\sigma(s)` a probability across queries (what
    ``LambdaRank(calibration=α)`` builds):

    .. math:: L = (1 - \alpha) L_{rank}(s) + \alpha \sum_i \ell(t_i, \sigma(s_i)).

    Parts see the same labels, scores and query structure; per-row parts (``FocalLoss``,
    :class:`~gbrank.objectives.CrossEntropy`) see one weight per row — a query's weight
    on each of its rows when weights are per query.

    Parameters
    ----------
    objectives : list of (str, objective)
        Named parts, as in scikit-learn's ``Pipeline``: ``get_params(deep=True)``
        exposes each part as ``<name>`` and its parameters as ``<name>__<param>``, so
        ``clone`` and ``GridSearchCV`` reach them.
    weights : list of float, optional
        :math:`c_k \ge 0`, one per part; default 1 each.

    Notes
    -----
    The constant start (:meth:`init_score`) minimises :math:`\sum_k c_k L_k(c)` over
    constant scores; ranking parts are invariant to a constant shift, so it is the
    per-row parts' optimum.

    Examples
    --------
    >>> import numpy as np
    >>> from gbrank.objectives import Combination, CrossEntropy, RankNet
    >>> obj = Combination([("rank", RankNet()), ("calibration", CrossEntropy())],
    ...                   weights=[0.9, 0.1])
    >>> y, s = np.array([1.0, 0.0, 0.0, 1.0]), np.zeros(4)
    >>> grad, hess = obj.grad_hess(y, s, group=[2, 2])
    >>> np.allclose(grad, 0.9 * RankNet().grad_hess(y, s, [2, 2])[0]
    ...             + 0.1 * CrossEntropy().grad_hess(y, s)[0])
    True
    """

    def __init__(self, objectives: list[tuple[str, Any]], weights: list[float] | None = None,
                 ) -> None:
        self.objectives = objectives
        self.weights = weights

    # -- parameters: the parts are addressable as <name> and <name>__<param> -------------
    def get_params(self, deep: bool = True) -> dict[str, Any]:
        out: dict[str, Any] = {"objectives": self.objectives, "weights": self.weights}
        if deep:
            for name, obj in self._parts():
                out[name] = obj
                for key, value in obj.get_params(deep=True).items():
                    out[f"{name}__{key}"] = value
        return out

    def set_params(self, **params: Any) -> Combination:
        own = {k: params.pop(k) for k in ("objectives", "weights") if k in params}
        if own:
            super().set_params(**own)
        if not params:
            return self
        parts = list(self._parts())
        names = [n for n, _ in parts]
        nested: dict[str, dict[str, Any]] = {}
        for key, value in params.items():
            name, sep, sub = key.partition("__")
            if name not in names:
                raise ValueError(f"invalid parameter {key!r} for Combination; parts: "
                                 f"{names}")
            if sep:
                nested.setdefault(name, {})[sub] = value
            else:
                parts[names.index(name)] = (name, value)
        for name, sub in nested.items():
            dict(parts)[name].set_params(**sub)
        self.objectives = parts
        self.__dict__.pop("_checked", None)
        return self

    def _parts(self) -> list[tuple[str, Any]]:
        parts = self.objectives
        if not isinstance(parts, (list, tuple)) or not parts:
            raise ValueError("objectives must be a non-empty list of (name, objective) pairs, "
                             f"got {parts!r}")
        out = []
        for item in parts:
            if (not isinstance(item, (list, tuple)) or len(item) != 2
                    or not isinstance(item[0], str) or not isinstance(item[1], Objective)):
                raise ValueError("objectives must be (name, gbrank objective) pairs, got "
                                 f"{item!r}")
            out.append((item[0], item[1]))
        names = [n for n, _ in out]
        if len(set(names)) != len(names) or any("__" in n or not n for n in names):
            raise ValueError(f"part names must be distinct, non-empty and without '__', "
                             f"got {names}")
        return out

    def _validate_params(self) -> Any:
        from types import SimpleNamespace

        parts = self._parts()
        if self.weights is None:
            weights = [1.0] * len(parts)
        else:
            weights = list(self.weights)
            if len(weights) != len(parts):
                raise ValueError(f"weights has {len(weights)} entries for {len(parts)} "
                                 "objectives")
            weights = [check_number(w, "weights", 0.0) for w in weights]
        for _, obj in parts:
            obj._params()
        return SimpleNamespace(parts=parts, weights=weights)

    def _params(self) -> Any:  # the parts are mutable: validate on every use (cheap)
        return self._validate_params()

    # -- what kind of objective it is ----------------------------------------------------
    @property
    def task(self) -> str:  # type: ignore[override]
        """``"ranking"`` when a part is a ranking objective, else the parts' task."""
        tasks = {obj.task for _, obj in self._parts()}
        return "ranking" if "ranking" in tasks else tasks.pop()

    @property
    def loss_blocks(self) -> str:  # type: ignore[override]
        """``"query"`` when a part's loss is a sum over queries, else ``"row"``."""
        blocks = {obj.loss_blocks for _, obj in self._parts()}
        return "query" if "query" in blocks else "row"

    def _groupless(self) -> bool:
        """Group-less ranking is declared by a ranking part (``groupless=True``)."""
        return any(obj._groupless() for _, obj in self._parts())

    @property
    def probability(self) -> bool:
        """Whether σ(score) estimates a probability: some part is a per-row probability
        loss with positive weight."""
        p = self._params()
        return any(w > 0 and getattr(obj, "probability", False)
                   for (_, obj), w in zip(p.parts, p.weights, strict=True))

    # -- the loss ---------------------------------------------------------------------------
    def _each(self, method: str, y: Any, s: Any, group: Any, qid: Any, weight: Any,
              **kwargs: Any):
        """Call ``method`` of every part with weighted parts; returns (weights, results,
        queries) with results in query order when ``qid`` reorders rows."""
        p = self._params()
        y = as_float_array(y, "labels")
        s = as_float_array(s, "scores", allow_2d=True)
        ranking = self.loss_blocks == "query"
        queries = None
        if ranking and (qid is not None or weight is not None):
            queries = query_structure(y.size, group=group, qid=qid, weight=weight)
            y, s = queries.apply(y), queries.apply(s)
            if "at" in kwargs and kwargs["at"] is not None:
                kwargs["at"] = queries.apply(as_float_array(kwargs["at"], "at"))
            group, qid = (None if queries.n_queries == 1 and group is None and qid is None
                          else queries.sizes), None
        out = []
        for (_, obj), w in zip(p.parts, p.weights, strict=True):
            if w == 0.0:
                out.append(None)
                continue
            part_w = weight
            if queries is not None:
                q_w = queries.weights
                part_w = (q_w if obj.loss_blocks == "query"
                          else None if q_w is None else np.repeat(q_w, queries.sizes))
            g = None if obj.loss_blocks == "row" else group
            out.append(getattr(obj, method)(y, s, g, qid=qid, weight=part_w, **kwargs))
        return p.weights, out, queries

    def _grad_hess(self, method: str, y: Any, s: Any, group: Any, qid: Any,
                   weight: Any) -> tuple[np.ndarray, np.ndarray]:
        weights, results, queries = self._each(method, y, s, group, qid, weight)
        grad = hess = None
        for w, res in zip(weights, results, strict=True):
            if res is None:
                continue
            g, h = (np.asarray(a, dtype=np.float64) for a in res)
            grad = w * g if grad is None else grad + w * g
            hess = w * h if hess is None else hess + w * h
        if grad is None:  # every weight 0
            shape = np.shape(as_float_array(s, "scores", allow_2d=True))
            grad, hess = np.zeros(shape), np.zeros(shape)
        if queries is not None and queries.order is not None:
            grad, hess = queries.restore(grad), queries.restore(hess)
        return grad, hess

    def grad_hess(self, y: Any, s: Any, group: Any = None, *, qid: Any = None,
                  weight: Any = None) -> tuple[np.ndarray, np.ndarray]:
        """:math:`\\sum_k c_k` of the parts' gradients and (booster) Hessians."""
        return self._grad_hess("grad_hess", y, s, group, qid, weight)

    def exact_grad_hess(self, y: Any, s: Any, group: Any = None, *, qid: Any = None,
                        weight: Any = None) -> tuple[np.ndarray, np.ndarray]:
        """:math:`\\sum_k c_k` of the parts' gradients and true Hessians."""
        return self._grad_hess("exact_grad_hess", y, s, group, qid, weight)

    def loss(self, y: Any, s: Any, group: Any = None, *, qid: Any = None, weight: Any = None,
             at: Any = None) -> float:
        """:math:`\\sum_k c_k L_k` (``at`` freezes each part's score-dependent weights)."""
        weights, results, _ = self._each("loss", y, s, group, qid, weight, at=at)
        return float(sum(w * v for w, v in zip(weights, results, strict=True)
                         if v is not None))

    def target_mapping(self, y: Any) -> dict[str, Any] | None:
        """The mapping of the first part that has one."""
        for _, obj in self._params().parts:
            mapping = obj.target_mapping(y)
            if mapping is not None:
                return mapping
        return None

    def bind_data_defaults(self, y: Any) -> Combination:
        p = self._params()
        return Combination([(n, obj.bind_data_defaults(y)) for n, obj in p.parts],
                           weights=list(p.weights))

    def init_score(self, y: Any, weight: Any = None) -> float | np.ndarray:
        """The constant c minimising :math:`\\sum_k c_k L_k(c)` (see Notes)."""
        p = self._params()
        row = [(obj, w) for (_, obj), w in zip(p.parts, p.weights, strict=True)
               if w > 0 and obj.loss_blocks == "row"]
        if not row:
            return 0.0
        if len(row) == 1:
            return row[0][0].init_score(y, weight)
        from scipy.optimize import brentq

        y = as_float_array(y, "labels")

        def slope(c: float) -> float:
            s = np.full(y.size, c)
            return float(sum(w * np.sum(obj.grad_hess(y, s, weight=weight)[0])
                             for obj, w in row))

        lo, hi = -1.0, 1.0
        while slope(lo) > 0 and lo > -1e3:
            lo *= 2
        while slope(hi) < 0 and hi < 1e3:
            hi *= 2
        return float(brentq(slope, lo, hi, xtol=1e-14, rtol=1e-14, maxiter=500))


class CalibrationMixin:
    """``calibration=α`` of a ranking objective: the objective becomes
    ``Combination([("rank", itself with calibration=0), ("calibration",
    CrossEntropy(target=calibration_target))], weights=[1 − α, α])``.

    The ranking classes call :meth:`_calibrated` at the top of each loss method and
    delegate to the combination when it is not ``None``."""

    @property
    def probability(self) -> bool:
        """Whether σ(score) estimates a probability (``calibration`` > 0)."""
        return self._params().calibration > 0.0

    def init_score(self, y: Any, weight: Any = None) -> float | np.ndarray:
        """0 (a ranking loss ignores a constant shift); calibrated, the logit of the
        mean target (the calibration term's optimum)."""
        mix = self._calibrated()
        return 0.0 if mix is None else mix.init_score(y, weight)

    def target_mapping(self, y: Any) -> dict[str, Any] | None:
        """The calibration term's mapping (``None`` uncalibrated)."""
        mix = self._calibrated()
        return None if mix is None else mix.target_mapping(y)

    def _calibrated(self) -> Combination | None:
        p = self._params()
        if p.calibration == 0.0:
            return None
        cached = self.__dict__.get("_calibrated_cache")
        if cached is not None and cached[0] is p:
            return cached[1]
        from gbrank.objectives._cross_entropy import CrossEntropy

        rank = type(self)(**{**self.get_params(deep=False), "calibration": 0.0})
        max_grade = getattr(p, "max_grade", None)
        mix = Combination([("rank", rank), ("calibration", CrossEntropy(
            target=p.calibration_target, max_grade=max_grade))],
            weights=[1.0 - p.calibration, p.calibration])
        self.__dict__["_calibrated_cache"] = (p, mix)
        return mix
