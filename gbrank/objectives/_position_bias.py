"""Learning from clicks: the position-bias options of RankNet and LambdaRank.

``position_bias`` corrects the pairwise loss for the examination bias of click logs
(``docs/contract.md``, "Learning from clicks"): ``"ipw"`` weights pairs by the inverse
propensity of the clicked row's position, ``"unbiased"`` learns Hu et al.'s ratios
t⁺/t⁻ jointly with the model, ``"additive"`` learns LightGBM's per-position score
offsets. This module holds what the two objectives share: the parameters' checks, the
estimates of a training run (:class:`PositionBias`) and the rules that keep them state of
one run, and the booster path that updates them once per boosting round.

State of a training run. A run belongs to the booster's training data (the LightGBM
``Dataset`` or XGBoost ``DMatrix`` the objective is called with): it starts fresh the
first time the objective sees that data, and each booster call on it computes the
gradients with the current estimates and then updates them once. LightGBM trains a deep
copy of its ``params`` (``lgb.train``, ``lgb.cv``) and :func:`gbrank.xgboost.objective`
wraps a copy of its objective, so every training starts from a copy with no run; a copy
reports its estimates to the object it was copied from, whose ``position_bias_`` is then
the last training's. ``grad_hess``, ``exact_grad_hess`` and ``loss`` never update
anything: they use the estimates of ``position_bias_`` as they stand (the start values
before any training), so the gradient check sees the estimates frozen.
"""

from __future__ import annotations

import copy
import weakref
from dataclasses import dataclass
from types import SimpleNamespace
from typing import Any

import numpy as np

from gbrank._fields import (
    keep_calling_lightgbm_positions,
    lightgbm_learning_rate,
    lightgbm_positions,
)
from gbrank._kernels import position_bias as _pk
from gbrank._validation import (
    check_choice,
    check_clicks,
    check_number,
    check_positions,
    check_propensity,
    propensity_per_row,
)

__all__ = ["PositionBias", "PositionBiasMixin", "METHODS", "with_position_bias_parameters"]

METHODS = ("ipw", "unbiased", "additive")

_COSTS = ("paper", "xgboost")
# XGBoost's Eps64: a ratio below it is not used (the pair is not debiased).
_TINY = 1e-16
# LightGBM's guard in the offsets' Newton step (rank_objective.hpp).
_NEWTON_GUARD = 0.001

_NEEDS_POSITIONS = (
    "pass the display position of every row: position= to grad_hess/loss; for LightGBM, "
    "lgb.Dataset(X, y, group=..., position=...); for XGBoost, "
    "gbrank.xgboost.objective(obj, position=...); gbrank.sklearn.GBRanker.fit(X, y, "
    "qid=..., position=...)")


# The numpydoc entries of the parameters this module checks, shared by RankNet and
# LambdaRank (``with_position_bias_parameters`` puts them in each class's Parameters).
_PARAMETERS_DOC = r"""    position_bias : {None, "ipw", "unbiased", "additive"}, default None
        Correct the loss for the examination bias of a click log (labels 0/1 clicks for
        ``"ipw"`` and ``"unbiased"``, any labels for ``"additive"``; formulas:
        ``docs/contract.md``, "Learning from clicks"). Needs every row's display
        position: ``position=`` here, ``lgb.Dataset(position=...)``,
        :func:`gbrank.xgboost.objective` ``(obj, position=...)`` or
        ``GBRanker.fit(..., position=...)``; 1-based ranks or any integer slot ids.
        ``"ipw"``: each pair times :math:`\min(1/\rho(p_i), \text{max\_weight})`,
        :math:`p_i` the clicked row's position. ``"unbiased"``: Unbiased LambdaMART
        (Hu et al., WWW 2019), each pair divided by :math:`t^+(p_i)\,t^-(p_j)`, the
        ratios learned after every boosting round. ``"additive"``: LightGBM's
        position-bias model, the loss sees :math:`s_i + b(p_i)`, offsets learned after
        every round. Learned estimates are ``position_bias_`` (:class:`PositionBias`)
        after training, fresh in every training and never part of a prediction.
    propensity : sequence or dict, optional
        ``"ipw"`` (required there): the examination probability of each position,
        :math:`\rho(1), \rho(2), \ldots` or ``{position: rho}``, each in (0, 1], for
        every position that occurs.
    max_weight : float > 0 or None, default None
        ``"ipw"``: clip the weights :math:`1/\rho` at this value (less variance, some
        bias). ``None``: no clipping.
    bias_norm : float >= 0, default 0.0
        ``"unbiased"``: the exponent r of the update
        :math:`t = (\text{cost ratio})^{1/(1 + r)}`. 0 is the paper's; XGBoost's
        ``lambdarank_bias_norm`` is 1 by default.
    bias_cost : {"paper", "xgboost"}, default "paper"
        ``"unbiased"``: the pair cost the ratios are estimated from, the paper's
        :math:`\log(1 + e^{-\sigma \Delta s})` or XGBoost's
        :math:`\log(1 + e^{+\sigma \Delta s})`; ``bias_cost="xgboost", bias_norm=1``
        is XGBoost's ``lambdarank_unbiased``. Which does better on simulated clicks:
        ``docs/evidence.md``.
    position_bias_regularization : float >= 0, default 0.0
        ``"additive"``: L2 penalty λ on the offsets (LightGBM's
        ``lambdarank_position_bias_regularization``).
    position_bias_learning_rate : float > 0 or None, default None
        ``"additive"``: the offsets' step size; ``None``: the booster's learning rate.
"""


def with_position_bias_parameters(cls: type) -> type:
    """Class decorator: the position-bias parameters' entries at the end of the
    docstring's Parameters section (before its Notes)."""
    heading = "\n    Notes\n    -----\n"
    if cls.__doc__ is None:  # python -OO
        return cls
    if heading not in cls.__doc__:
        raise RuntimeError(f"{cls.__name__}'s docstring has no Notes section")
    cls.__doc__ = cls.__doc__.replace(heading, _PARAMETERS_DOC + heading, 1)
    return cls


@dataclass(frozen=True, eq=False)
class PositionBias:
    r"""Per-position estimates of one training run (``objective.position_bias_``).

    Attributes
    ----------
    method : {"ipw", "unbiased", "additive"}
    positions : ndarray of int64
        The positions of the training data, ascending; every other array has one entry
        per position.
    t_plus, t_minus : ndarray or None
        ``"unbiased"``: the ratios :math:`t^+(p)` (clicked side) and :math:`t^-(p)`
        (unclicked side), 1 at the reference position (the smallest). Under the
        position-based click model with ``bias_norm=0``, :math:`t^+(p)` estimates
        :math:`\rho(p)/\rho(p_{ref})` only when every position shows similar rows (a
        randomised display order); on clicks logged from a ranking the better rows sit
        on top and the ratios fall below the examination ratios (``docs/contract.md``,
        learning from clicks).
    offsets : ndarray or None
        ``"additive"``: the score offsets :math:`b(p)`.
    propensity : ndarray or None
        ``"ipw"``: the propensities :math:`\rho(p)` used (nothing is learned).
    rounds : int
        Boosting rounds that computed gradients with these estimates (and updated them).

    Examples
    --------
    >>> import numpy as np
    >>> from gbrank.objectives import PositionBias
    >>> est = PositionBias("unbiased", np.array([1, 2, 3]), t_plus=np.array([1.0, 0.6, 0.4]),
    ...                    t_minus=np.array([1.0, 0.9, 0.8]))
    >>> est.as_dict()["t_plus"]
    {1: 1.0, 2: 0.6, 3: 0.4}
    """

    method: str
    positions: np.ndarray
    t_plus: np.ndarray | None = None
    t_minus: np.ndarray | None = None
    offsets: np.ndarray | None = None
    propensity: np.ndarray | None = None
    rounds: int = 0

    def as_dict(self) -> dict[str, Any]:
        """The estimates as ``{name: {position: value}}`` (plain Python numbers)."""
        out: dict[str, Any] = {"method": self.method, "rounds": self.rounds}
        for name in ("t_plus", "t_minus", "offsets", "propensity"):
            values = getattr(self, name)
            if values is not None:
                out[name] = {int(p): float(v) for p, v in zip(self.positions, values,
                                                                strict=True)}
        return out

    def __repr__(self) -> str:
        parts = [f"method={self.method!r}", f"positions={self.positions.tolist()}"]
        for name in ("t_plus", "t_minus", "offsets", "propensity"):
            values = getattr(self, name)
            if values is not None:
                parts.append(f"{name}={np.round(values, 6).tolist()}")
        return f"PositionBias({', '.join(parts)}, rounds={self.rounds})"


class _Run:
    """The estimates of one training run on one training data set (module doc).

    ``slot``: each row's index into ``values`` (the positions, ascending); ``ref``: the
    reference slot (the smallest position that occurs)."""

    def __init__(self, method: str, position: np.ndarray, reduce: Any) -> None:
        self.method = method
        self.reduce = reduce
        if reduce is None:
            self.values, self.slot = np.unique(position, return_inverse=True)
            self.slot = self.slot.astype(np.int64).ravel()
            present = np.ones(self.values.size, dtype=bool)
        else:
            # Distributed: slots are the positions themselves, so that every worker's
            # sums line up; the extent and the positions present are agreed first.
            top = int(reduce(np.array([position.max() if position.size else 0],
                                      dtype=np.float64), "max")[0])
            self.values = np.arange(top + 1, dtype=np.int64)
            self.slot = position.astype(np.int64)
            counts = reduce(np.bincount(self.slot, minlength=top + 1).astype(np.float64),
                            "sum")
            present = counts > 0
        self.present = present
        self.ref = int(np.argmax(present))
        k = self.values.size
        self.t_plus = np.ones(k)
        self.t_minus = np.ones(k)
        self.offsets = np.zeros(k)
        self.rounds = 0
        self.labels_checked = False

    def sum(self, a: np.ndarray) -> np.ndarray:
        """``a`` summed over the workers of a distributed training (itself otherwise)."""
        return a if self.reduce is None else self.reduce(a, "sum")

    def snapshot(self, propensity: np.ndarray | None) -> PositionBias:
        keep = self.present
        pos = self.values[keep]
        if self.method == "unbiased":
            return PositionBias("unbiased", pos, t_plus=self.t_plus[keep].copy(),
                                t_minus=self.t_minus[keep].copy(), rounds=self.rounds)
        if self.method == "additive":
            return PositionBias("additive", pos, offsets=self.offsets[keep].copy(),
                                rounds=self.rounds)
        return PositionBias("ipw", pos, propensity=propensity, rounds=self.rounds)


class PositionBiasMixin:
    """The ``position_bias`` options of a pairwise objective (module doc).

    A class using it provides ``_prepare`` (validated labels, scores and queries in
    query order), ``_plain_grad_hess`` / ``_plain_loss`` (the objective without
    position bias), ``_pair_options(p, y)`` (the pair kernel's weight arguments) and
    ``_check_position_params(p)`` (its own restrictions)."""

    _training_state = ("position_bias_", "_position_runs")

    # -- parameters --------------------------------------------------------------------
    def _position_params(self) -> SimpleNamespace:
        method = self.position_bias
        if method is not None:
            method = check_choice(method, "position_bias", METHODS)
        table = None
        if self.propensity is not None:
            table = check_propensity(self.propensity, "propensity")
        elif method == "ipw":
            raise ValueError("position_bias='ipw' needs propensity=: the examination "
                             "probability of every position (a sequence for positions 1, "
                             "2, …, or a mapping {position: probability})")
        max_weight = None if self.max_weight is None else check_number(
            self.max_weight, "max_weight", 0.0, low_open=True)
        lr = None if self.position_bias_learning_rate is None else check_number(
            self.position_bias_learning_rate, "position_bias_learning_rate", 0.0,
            low_open=True)
        return SimpleNamespace(
            method=method, table=table, max_weight=max_weight,
            bias_norm=check_number(self.bias_norm, "bias_norm", 0.0),
            xgb_cost=check_choice(self.bias_cost, "bias_cost", _COSTS) == "xgboost",
            regularization=check_number(self.position_bias_regularization,
                                        "position_bias_regularization", 0.0),
            learning_rate=lr)

    def _uses_positions(self) -> bool:
        return self._params().pb.method is not None

    # -- estimates ------------------------------------------------------------------------
    def _frozen(self, pb: SimpleNamespace, pos: np.ndarray) -> tuple[np.ndarray, ...]:
        """Per-row (u, v) or offsets b from ``position_bias_`` (start values for the
        positions it does not hold): what a plain call uses."""
        est = self.__dict__.get("position_bias_")
        if est is not None and est.method != pb.method:
            est = None
        if pb.method == "ipw":
            return self._ipw_factors(pb, pos)
        n = pos.size
        if est is None or est.positions.size == 0:
            if pb.method == "additive":
                return (np.zeros(n),)
            return np.ones(n), np.ones(n)
        at = np.minimum(np.searchsorted(est.positions, pos), est.positions.size - 1)
        known = est.positions[at] == pos
        if pb.method == "additive":
            return (np.where(known, est.offsets[at], 0.0),)
        tp = np.where(known, est.t_plus[at], 1.0)
        tm = np.where(known, est.t_minus[at], 1.0)
        return _inverse(tp), _inverse(tm)

    def _ipw_factors(self, pb: SimpleNamespace, pos: np.ndarray,
                     hint: str = "") -> tuple[np.ndarray, np.ndarray]:
        rho = propensity_per_row(pb.table, pos, "propensity", hint)
        u = 1.0 / rho
        if pb.max_weight is not None:
            u = np.minimum(u, pb.max_weight)
        return u, np.ones(pos.size)

    # -- the loss with frozen estimates ------------------------------------------------
    def _checked_positions(self, position: Any, n: int) -> np.ndarray:
        if position is None:
            raise ValueError(f"position_bias={self.position_bias!r} needs positions: "
                             + _NEEDS_POSITIONS)
        return check_positions(position, n)

    def _check_clicks(self, pb: SimpleNamespace, y: np.ndarray) -> None:
        if pb.method in ("ipw", "unbiased"):
            check_clicks(y, f"position_bias={pb.method!r}")

    def _factored(self, p: SimpleNamespace, y: Any, s: Any, group: Any, qid: Any,
                  weight: Any, position: Any, max_step: float) -> tuple[np.ndarray, ...]:
        """Gradients and Hessians with the frozen estimates (no update)."""
        pb = p.pb
        n = np.size(s)
        pos = self._checked_positions(position, n)
        if pb.method == "additive":
            (b,) = self._frozen(pb, pos)
            shifted = np.asarray(s, dtype=np.float64) + b
            return self._plain_grad_hess(y, shifted, group, qid, weight, max_step)
        y2, s2, queries = self._prepare(y, s, group, qid, weight)
        self._check_clicks(pb, y2)
        u, v = self._frozen(pb, pos)
        grad, hess, _, _ = self._pair_call(p, y2, s2, queries, queries.apply(u),
                                           queries.apply(v), max_step)
        return queries.restore(grad, into=s2), queries.restore(hess, into=y2)

    def _factored_loss(self, p: SimpleNamespace, y: Any, s: Any, group: Any, qid: Any,
                       weight: Any, position: Any, at: Any) -> float:
        pb = p.pb
        n = np.size(s)
        pos = self._checked_positions(position, n)
        if pb.method == "additive":
            (b,) = self._frozen(pb, pos)
            s1 = np.asarray(s, dtype=np.float64) + b
            at1 = s1 if at is None else np.asarray(at, dtype=np.float64) + b
            return self._plain_loss(y, s1, group, qid, weight, at1)
        y2, s2, queries = self._prepare(y, s, group, qid, weight)
        self._check_clicks(pb, y2)
        at2 = s2 if at is None else self._prepare(y, at, group, qid, None)[1]
        u, v = self._frozen(pb, pos)
        qw = _EMPTY if queries.weights is None else queries.weights
        opts = self._pair_options(p, y2)
        return _pk.pair_loss(y2, s2, at2, queries.offsets, qw, queries.apply(u),
                             queries.apply(v), *opts)

    def _pair_call(self, p: SimpleNamespace, y2: np.ndarray, s2: np.ndarray, queries: Any,
                   u: np.ndarray, v: np.ndarray, max_step: float, slot: Any = None,
                   n_slots: int = 0) -> tuple[np.ndarray, ...]:
        """The pair kernel on validated arrays in query order."""
        self._check_query_sizes(queries)
        qw = _EMPTY if queries.weights is None else queries.weights
        return _pk.pair_grad_hess(y2, s2, queries.offsets, qw, u, v,
                                  *self._pair_options(p, y2), max_step, slot=slot,
                                  n_slots=n_slots, xgb_cost=p.pb.xgb_cost,
                                  out=self._output_buffers(y2.size))

    def _check_query_sizes(self, queries: Any) -> None:
        """Hook: refuse queries the pair kernel should not take (RankNet's O(n²))."""

    # -- the booster path -----------------------------------------------------------------
    def booster_grad_hess(self, y: Any, preds: Any, group: Any = None,
                          weight: Any = None) -> tuple[np.ndarray, np.ndarray]:
        if self._uses_positions():
            raise ValueError(f"{type(self).__name__}(position_bias="
                             f"{self.position_bias!r}) gets positions from the training "
                             f"data; this booster call has none: {_NEEDS_POSITIONS}")
        return super().booster_grad_hess(y, preds, group, weight)

    def _lightgbm_grad_hess(self, y: Any, preds: Any, group: Any, weight: Any,
                            ds: Any) -> tuple[np.ndarray, np.ndarray]:
        if not self._uses_positions():
            return super()._lightgbm_grad_hess(y, preds, group, weight, ds)
        if ds is None:
            raise ValueError(
                f"position_bias={self.position_bias!r} reads positions from the LightGBM "
                "Dataset, and this call has none (LightGBM's scikit-learn API, "
                "LGBMRanker.fit, passes no positions): train with lgb.train(params, "
                "lgb.Dataset(X, y, group=..., position=...)) or gbrank.sklearn.GBRanker")
        position = None
        runs = self.__dict__.get("_position_runs")
        if runs is None or _lookup(runs, ds) is None:
            position = lightgbm_positions(ds)
            if position is None:
                raise ValueError(
                    f"position_bias={self.position_bias!r} needs the display position of "
                    "every row, and this LightGBM Dataset has none: build it with "
                    "lgb.Dataset(X, y, group=..., position=...) for lgb.train / lgb.cv "
                    "(LightGBM's LGBMRanker and DaskLGBMRanker pass no positions: use "
                    "gbrank.sklearn.GBRanker(...).fit(..., position=...), or on Dask "
                    "xgboost.dask with gbrank.dask.partition_by_query(..., position=...))")
        self.__dict__["_reuse_outputs"] = True
        try:
            return self.booster_position_grad_hess(
                y, preds, group, weight, position=position, data=ds,
                learning_rate=lightgbm_learning_rate(ds), hint=_LIGHTGBM_HINT)
        finally:
            self.__dict__["_reuse_outputs"] = False

    def booster_position_grad_hess(self, y: Any, preds: Any, group: Any, weight: Any, *,
                                   position: Any, data: Any, learning_rate: Any = None,
                                   reduce: Any = None, hint: str = "",
                                   ) -> tuple[np.ndarray, np.ndarray]:
        """One boosting round: gradients and the booster's Hessians with the current
        estimates of the run on ``data`` (fresh the first time ``data`` is seen), then
        the estimates' update (module doc).

        ``position``: the rows' positions (read when the run starts; ``None`` once it
        exists). ``learning_rate``: the booster's, for ``"additive"`` (unless
        ``position_bias_learning_rate`` is set). ``reduce(array, op)``: sums (``op``
        ``"sum"``) and maxima (``"max"``) over the workers of a distributed training,
        so that every worker updates the same estimates; ``None`` on one machine.
        """
        p = self._params()
        pb = p.pb
        runs = self.__dict__.get("_position_runs")
        if runs is None:
            runs = self.__dict__["_position_runs"] = _Runs()
        run = _lookup(runs, data)
        n = int(np.size(preds))
        if run is None:
            pos = self._checked_positions(position, n)
            if pb.method == "ipw":
                self._ipw_factors(pb, pos, hint)  # every position has a propensity
            run = _Run(pb.method, pos, reduce)
            run.propensity = (propensity_per_row(pb.table, run.values[run.present],
                                                 "propensity", hint)
                              if pb.method == "ipw" else None)
            if pb.method == "ipw":
                run.u, run.v = self._ipw_factors(pb, pos, hint)
            _store(runs, data, run)
        elif run.slot.size != n:
            raise ValueError(f"the training data of this run had {run.slot.size} rows, "
                             f"this call has {n}")
        if pb.method == "additive":
            lr = pb.learning_rate if pb.learning_rate is not None else learning_rate
            if lr is None:
                raise ValueError(
                    "position_bias='additive' moves its offsets by the booster's learning "
                    "rate, which this booster call does not say: set "
                    "position_bias_learning_rate=, or pass learning_rate= to "
                    "gbrank.xgboost.objective (a LightGBM Dataset constructed before "
                    "lgb.train keeps its own parameters, not the training's: pass it "
                    "unconstructed, or set position_bias_learning_rate=)")
            shifted = np.asarray(preds, dtype=np.float64) + run.offsets[run.slot]
            grad, hess = self._plain_grad_hess(y, shifted, group, None, weight, p.max_step)
            k = run.values.size
            g = run.sum(np.bincount(run.slot, weights=grad, minlength=k))
            h = run.sum(np.bincount(run.slot, weights=hess, minlength=k))
            cnt = run.sum(np.bincount(run.slot, minlength=k).astype(np.float64))
            lam = pb.regularization
            run.offsets -= float(lr) * (g + lam * cnt * run.offsets) / (
                np.abs(h + lam * cnt) + _NEWTON_GUARD)
        else:
            y2, s2, queries = self._prepare(y, preds, group, None, weight)
            if not run.labels_checked:
                self._check_clicks(pb, y2)
                run.labels_checked = True
            if pb.method == "ipw":
                u, v, slot, k = run.u, run.v, None, 0
            else:
                u, v = _inverse(run.t_plus)[run.slot], _inverse(run.t_minus)[run.slot]
                slot, k = queries.apply(run.slot), run.values.size
            grad, hess, plus, minus = self._pair_call(
                p, y2, s2, queries, queries.apply(u), queries.apply(v), p.max_step,
                slot=slot, n_slots=k)
            grad, hess = queries.restore(grad, into=s2), queries.restore(hess, into=y2)
            if pb.method == "unbiased":
                _update_ratios(run, run.sum(plus), run.sum(minus), pb)
        run.rounds += 1
        self._publish(run.snapshot(run.propensity))
        return grad, hess

    def _publish(self, estimates: PositionBias) -> None:
        """``position_bias_`` of this object and of the objects it was copied from (LightGBM
        copies its params more than once per training)."""
        target: Any = self
        while target is not None:
            target.__dict__["position_bias_"] = estimates
            target = target.__dict__.get("_position_origin")

    # -- copies -------------------------------------------------------------------------
    def __deepcopy__(self, memo: dict) -> Any:
        """A copy with the same parameters and no estimates, which reports the estimates
        of its trainings to this object (LightGBM trains a deep copy of its params)."""
        new = type(self).__new__(type(self))
        memo[id(self)] = new
        skip = {"position_bias_", "_position_runs", "_position_origin", "_checked",
                "_outputs", "_reuse_outputs", "_calibrated_cache"}
        for key, value in self.__dict__.items():
            if key not in skip:
                new.__dict__[key] = copy.deepcopy(value, memo)
        # A strong reference: LightGBM's intermediate copies are gone by the time the last
        # one trains, and the chain must reach the object the user holds.
        new.__dict__["_position_origin"] = self
        if self.__dict__.get("position_bias") is not None:
            # lgb.train / lgb.cv copy their params before they construct train_set:
            # the last moment its positions are still the values given.
            keep_calling_lightgbm_positions()
        return new

    def __getstate__(self) -> dict[str, Any]:
        state = super().__getstate__()
        state.pop("_position_runs", None)
        state.pop("_position_origin", None)
        return state


_EMPTY = np.empty(0, dtype=np.float64)
_LIGHTGBM_HINT = (" (a constructed LightGBM Dataset holds its positions renumbered 0, 1, … "
                  "in order of first appearance; gbrank reads number s as position s + 1)")


def _inverse(t: np.ndarray) -> np.ndarray:
    """1/t, and 0 (the ratio is not used) where t is below XGBoost's epsilon."""
    out = np.zeros(t.size)
    ok = t >= _TINY
    out[ok] = 1.0 / t[ok]
    return out


def _update_ratios(run: _Run, plus: np.ndarray, minus: np.ndarray,
                   pb: SimpleNamespace) -> None:
    """Hu et al.'s update (eq. 30, 31): each ratio is its side's cost sum relative to the
    reference position's, to the power 1/(1 + r). With the paper's cost a position with
    no cost keeps its value; with XGBoost's it becomes 0 (not used), as XGBoost does."""
    e = 1.0 / (1.0 + pb.bias_norm)
    for sums, t in ((plus, run.t_plus), (minus, run.t_minus)):
        ref = sums[run.ref]
        if ref < _TINY:
            continue
        ratio = sums / ref
        if pb.xgb_cost:
            t[:] = np.where(run.present, ratio**e, t)
        else:
            has = sums > 0
            t[has] = ratio[has] ** e


class _Runs:
    """Runs keyed by the booster's training data: weakly where the data allows (a run
    goes with its Dataset / DMatrix), else by identity."""

    def __init__(self) -> None:
        self.weak: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()
        self.strong: dict[int, tuple[Any, _Run]] = {}


def _lookup(runs: _Runs, data: Any) -> _Run | None:
    try:
        return runs.weak.get(data)
    except TypeError:
        hit = runs.strong.get(id(data))
        return hit[1] if hit is not None and hit[0] is data else None


def _store(runs: _Runs, data: Any, run: _Run) -> None:
    try:
        runs.weak[data] = run
    except TypeError:
        runs.strong[id(data)] = (data, run)
