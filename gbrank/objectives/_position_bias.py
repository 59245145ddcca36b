"""Learning from clicks: the position-bias options of RankNet and LambdaRank.

``position_bias`` corrects the pairwise loss for the examination bias of click logs
(``docs/contract.md``, "Learning from clicks"): ``"ipw"`` weights pairs by the inverse
propensity of the clicked row's position, ``"unbiased"`` learns Hu et al.'s ratios
t⁺/t⁻ jointly with the model, ``"additive"`` learns LightGBM's per-position score
offsets. This module holds what the two objectives share: the parameters' checks and
their documentation, the estimates (:class:`PositionBias`), the loss with given
estimates frozen, and :class:`PositionBiasTraining`, what one training learns.

Parameters and learned state live apart. The objective holds only its parameters:
``grad_hess``, ``exact_grad_hess`` and ``loss`` use estimates given to them
(``estimates=``, a :class:`PositionBias`) or the start values, and never update
anything. A training owns a :class:`PositionBiasTraining`, made by the booster's
adapter for its training data (:func:`gbrank.lightgbm.objective`,
:func:`gbrank.xgboost.objective`, ``GBRanker``): each boosting round computes the
gradients with its current estimates, then updates them once.
"""

from __future__ import annotations

from dataclasses import dataclass
from types import SimpleNamespace
from typing import Any

import numpy as np

from gbrank._fields import lightgbm_positions
from gbrank._kernels import position_bias as _pk
from gbrank._validation import (
    check_bool,
    check_choice,
    check_clicks,
    check_number,
    check_positions,
    check_propensity,
    propensity_per_row,
)
from gbrank._warnings import warn_user
from gbrank.objectives._cascade import ON_CASCADE, check_users

__all__ = ["PositionBias", "PositionBiasMixin", "PositionBiasTraining", "METHODS",
           "NEEDS_POSITIONS", "with_position_bias_parameters", "MAX_WEIGHT", "BIAS_NORM",
           "REGULARIZATION"]

METHODS = ("ipw", "unbiased", "additive")

# The defaults of the three corrections, the one home of each: chosen from the whole
# table of click protocols (docs/evidence.md, "Click corrections: the defaults"), as the
# values that are never worse than no correction by more than a standard error there.
#: ``"ipw"``: weights 1/ρ clipped at 2.
MAX_WEIGHT = 2.0
#: ``"unbiased"``: the exponent r of t = (cost ratio)^(1/(1 + r)).
BIAS_NORM = 2.0
#: ``"additive"``: the L2 penalty λ on the offsets.
REGULARIZATION = 1.0

_COSTS = ("paper", "xgboost")
# XGBoost's Eps64: a ratio below it is not used (the pair is not debiased).
_TINY = 1e-16
# LightGBM's guard in the offsets' Newton step (rank_objective.hpp).
_NEWTON_GUARD = 0.001

#: How a booster's training gets the rows' display positions (for error messages).
NEEDS_POSITIONS = (
    "give the display position of every training row to the booster's adapter: for "
    "LightGBM, lgb.train({'objective': gbrank.lightgbm.objective(obj, position=pos)}, "
    "...); for XGBoost, xgb.train(..., obj=gbrank.xgboost.objective(obj, position=pos)); "
    "or gbrank.sklearn.GBRanker(obj).fit(X, y, qid=..., position=pos). Outside boosting, "
    "grad_hess/loss take position= (the estimates frozen)")


# The numpydoc entries of the parameters this module checks, shared by RankNet and
# LambdaRank (``with_position_bias_parameters`` puts them in each class's Parameters).
_PARAMETERS_DOC = r"""    position_bias : {None, "ipw", "unbiased", "additive"}, default None
        Correct the loss for the examination bias of a click log (labels 0/1 clicks for
        ``"ipw"`` and ``"unbiased"``, any labels for ``"additive"``; formulas:
        ``docs/contract.md``, "Learning from clicks"). Needs every row's display
        position, given with the training data: :func:`gbrank.lightgbm.objective`
        ``(obj, position=...)``, :func:`gbrank.xgboost.objective` ``(obj,
        position=...)`` or ``GBRanker.fit(..., position=...)`` (``position=`` of
        :meth:`grad_hess` and :meth:`loss` outside boosting); 1-based ranks or any
        integer slot ids. ``"ipw"``: each pair times :math:`\min(1/\rho(p_i),
        \mathrm{max\_weight})`, :math:`p_i` the clicked row's position. ``"unbiased"``:
        Unbiased LambdaMART (Hu et al., WWW 2019), each pair divided by
        :math:`t^+(p_i)\,t^-(p_j)`, the ratios learned after every boosting round.
        ``"additive"``: LightGBM's position-bias model, the loss sees :math:`s_i +
        b(p_i)`, offsets learned after every round. A training's learned estimates
        (:class:`PositionBias`) are the adapter's ``position_bias_`` (``GBRanker``'s
        ``position_bias_``), fresh in every training and never part of a prediction.
    propensity : sequence or dict, optional
        ``"ipw"`` (required there): the examination probability of each position,
        :math:`\rho(1), \rho(2), \ldots` or ``{position: rho}``, each in (0, 1], for
        every position that occurs.
    max_weight : float > 0 or None, default 2.0
        ``"ipw"``: clip the weights :math:`1/\rho` at this value (less variance, some
        bias); ``None``: no clipping (the textbook estimator, whose variance at a few
        sessions per query made it worse than no correction on most click protocols;
        the default and its evidence: ``docs/evidence.md``).
    bias_norm : float >= 0, default 2.0
        ``"unbiased"``: the exponent r of the update
        :math:`t = (\text{cost ratio})^{1/(1 + r)}`, which shrinks the learned ratios
        toward 1. 0 is the paper's (Hu et al.), which over-corrects a good logger's
        clicks (−0.076 NDCG@10 against no correction there); XGBoost's
        ``lambdarank_bias_norm`` is 1 by default.
    bias_cost : {"paper", "xgboost"}, default "paper"
        ``"unbiased"``: the pair cost the ratios are estimated from, the paper's
        :math:`\log(1 + e^{-\sigma \Delta s})` or XGBoost's
        :math:`\log(1 + e^{+\sigma \Delta s})`; ``bias_cost="xgboost", bias_norm=1``
        is XGBoost's ``lambdarank_unbiased``.
    position_bias_regularization : float >= 0, default 1.0
        ``"additive"``: L2 penalty λ on the offsets (LightGBM's
        ``lambdarank_position_bias_regularization``, whose default 0 lets the offsets
        absorb relevance the logger put on top; ``0`` with ``norm=True,
        max_step=None`` is LightGBM's own model).
    position_bias_learning_rate : float > 0 or None, default None
        ``"additive"``: the offsets' step size; ``None``: the booster's learning rate.
    on_cascade : {"raise", "warn", "ignore"}, default "raise"
        What a correction's training does with a log of click sessions whose users look
        like cascade users, who stop after a click (far fewer sessions with two clicks
        than independent clicks at the positions' rates give; the figure:
        :func:`gbrank.datasets.multi_click_sessions`): refuse it with that figure, warn,
        or train. Every correction assumes the position-based model, and on a cascade
        user's log each did worse than no correction (``docs/evidence.md``).
"""


def with_position_bias_parameters(cls: type) -> type:
    """Class decorator: the position-bias parameters' entries in the docstring's
    Parameters section where the signature has them, before ``groupless`` (the last)."""
    entry = "\n    groupless : "
    if cls.__doc__ is None:  # python -OO
        return cls
    if entry not in cls.__doc__:
        raise RuntimeError(f"{cls.__name__}'s docstring has no groupless entry")
    cls.__doc__ = cls.__doc__.replace(entry, "\n" + _PARAMETERS_DOC + entry[1:], 1)
    return cls


@dataclass(frozen=True, eq=False)
class PositionBias:
    r"""Per-position estimates of one training (the adapters' ``position_bias_``).

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


class PositionBiasMixin:
    """The ``position_bias`` options of a pairwise objective (module doc).

    A class using it provides ``_prepare`` (validated labels, scores and queries in
    query order), ``_plain_grad_hess`` / ``_plain_loss`` (the objective without
    position bias), ``_pair_options(p, y)`` (the pair kernel's weight arguments) and
    ``_check_position_params(p)`` (its own restrictions)."""

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
            learning_rate=lr,
            on_cascade=check_choice(self.on_cascade, "on_cascade", ON_CASCADE))

    def _shared_params(self, p: SimpleNamespace) -> None:
        """Validate into ``p`` what the pairwise ranking objectives share: the
        ``position_bias`` options (``p.pb``), ``groupless``, and their one exclusion."""
        p.pb = self._position_params()
        p.groupless = check_bool(self.groupless, "groupless")
        if p.pb.method is not None and p.calibration > 0.0:
            raise ValueError(f"position_bias={p.pb.method!r} with calibration="
                             f"{self.calibration!r} is not supported: a calibration term on "
                             "biased clicks learns the bias; use calibration=0")

    def _groupless(self) -> bool:
        return self._params().groupless

    def _uses_positions(self) -> bool:
        return self._params().pb.method is not None

    # -- estimates ------------------------------------------------------------------------
    def _frozen(self, pb: SimpleNamespace, pos: np.ndarray,
                estimates: PositionBias | None) -> tuple[np.ndarray, ...]:
        """Per-row (u, v) or offsets b from ``estimates`` (start values for the positions
        it does not hold, and without it): what a plain call uses."""
        if estimates is not None and not isinstance(estimates, PositionBias):
            raise ValueError(f"estimates must be a PositionBias (an adapter's "
                             f"position_bias_) or None, got {estimates!r}")
        if estimates is not None and estimates.method != pb.method:
            raise ValueError(f"estimates are of position_bias={estimates.method!r}, this "
                             f"objective's is {pb.method!r}")
        if pb.method == "ipw":
            return self._ipw_factors(pb, pos)
        n = pos.size
        est = estimates
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
                             + NEEDS_POSITIONS)
        return check_positions(position, n)

    def _check_clicks(self, pb: SimpleNamespace, y: np.ndarray) -> None:
        if pb.method in ("ipw", "unbiased"):
            check_clicks(y, f"position_bias={pb.method!r}")

    def _factored(self, p: SimpleNamespace, y: Any, s: Any, group: Any, qid: Any,
                  weight: Any, position: Any, max_step: float,
                  estimates: PositionBias | None) -> tuple[np.ndarray, ...]:
        """Gradients and Hessians with the frozen estimates (no update)."""
        pb = p.pb
        n = np.size(s)
        pos = self._checked_positions(position, n)
        if pb.method == "additive":
            (b,) = self._frozen(pb, pos, estimates)
            shifted = np.asarray(s, dtype=np.float64) + b
            return self._plain_grad_hess(y, shifted, group, qid, weight, max_step)
        y2, s2, queries = self._prepare(y, s, group, qid, weight)
        self._check_clicks(pb, y2)
        u, v = self._frozen(pb, pos, estimates)
        grad, hess, _, _ = self._pair_call(p, y2, s2, queries, queries.apply(u),
                                           queries.apply(v), max_step)
        return queries.restore(grad, into=s2), queries.restore(hess, into=y2)

    def _factored_loss(self, p: SimpleNamespace, y: Any, s: Any, group: Any, qid: Any,
                       weight: Any, position: Any, at: Any,
                       estimates: PositionBias | None) -> float:
        pb = p.pb
        n = np.size(s)
        pos = self._checked_positions(position, n)
        if pb.method == "additive":
            (b,) = self._frozen(pb, pos, estimates)
            s1 = np.asarray(s, dtype=np.float64) + b
            at1 = s1 if at is None else np.asarray(at, dtype=np.float64) + b
            return self._plain_loss(y, s1, group, qid, weight, at1)
        y2, s2, queries = self._prepare(y, s, group, qid, weight)
        self._check_clicks(pb, y2)
        at2 = s2 if at is None else self._prepare(y, at, group, qid, None)[1]
        u, v = self._frozen(pb, pos, estimates)
        qw = _EMPTY if queries.weights is None else queries.weights
        opts = self._pair_options(p, y2)
        return _pk.pair_loss(y2, s2, at2, queries.offsets, qw, queries.apply(u),
                             queries.apply(v), *opts)

    def _pair_call(self, p: SimpleNamespace, y2: np.ndarray, s2: np.ndarray, queries: Any,
                   u: np.ndarray, v: np.ndarray, max_step: float, slot: Any = None,
                   n_slots: int = 0, out: Any = None) -> tuple[np.ndarray, ...]:
        """The pair kernel on validated arrays in query order."""
        self._check_query_sizes(queries)
        qw = _EMPTY if queries.weights is None else queries.weights
        return _pk.pair_grad_hess(y2, s2, queries.offsets, qw, u, v,
                                  *self._pair_options(p, y2), max_step, slot=slot,
                                  n_slots=n_slots, xgb_cost=p.pb.xgb_cost, out=out)

    def _check_query_sizes(self, queries: Any) -> None:
        """Hook: refuse queries the pair kernel should not take (RankNet's O(n²))."""

    # -- boosters -------------------------------------------------------------------------
    def booster_grad_hess(self, y: Any, preds: Any, group: Any = None,
                          weight: Any = None, *,
                          start_fix: str | None = None) -> tuple[np.ndarray, np.ndarray]:
        if self._uses_positions():
            raise ValueError(f"{type(self).__name__}(position_bias="
                             f"{self.position_bias!r}) learns from the rows' display "
                             f"positions during training, and this booster call has none: "
                             f"{NEEDS_POSITIONS}")
        return super().booster_grad_hess(y, preds, group, weight, start_fix=start_fix)

    def _lightgbm_grad_hess(self, y: Any, preds: Any, group: Any, weight: Any,
                            ds: Any) -> tuple[np.ndarray, np.ndarray]:
        if not self._uses_positions():
            return super()._lightgbm_grad_hess(y, preds, group, weight, ds)
        has = ds is not None and lightgbm_positions(ds) is not None
        why = ("this LightGBM Dataset has positions, but a constructed Dataset holds only "
               "LightGBM's renumbering of them (0, 1, … in order of first appearance), not "
               "the values given" if has else
               "LightGBM passes the objective no positions")
        raise ValueError(f"{type(self).__name__}(position_bias={self.position_bias!r}) "
                         f"needs every row's display position: {why}. Pass them with the "
                         "objective: lgb.train({'objective': gbrank.lightgbm.objective(obj, "
                         "position=pos)}, dataset) (also for lgb.cv and LGBMRanker), or use "
                         "gbrank.sklearn.GBRanker(obj).fit(X, y, qid=..., position=pos)")

    def position_bias_training(self, position: Any, *, learning_rate: Any = None,
                               reduce: Any = None, hint: str = "") -> PositionBiasTraining:
        """The state of one training on data whose rows have the display positions
        ``position``: the position-bias estimates it learns, updated once per boosting
        round (the boosters' adapters make one for every training data set)."""
        return PositionBiasTraining(self, position, learning_rate=learning_rate,
                                    reduce=reduce, hint=hint)


def _warn_if_groups_repeat_positions(group: Any, slot: np.ndarray, positions: np.ndarray,
                                     method: str) -> None:
    """A correction reads each group as one session. A group that shows a position on
    several rows is one session of a grid (several rows per position id) or, more
    often, a query's sessions put together, whose pairs would cross sessions (a document
    paired with itself) and whose users the cascade check cannot count: warned about
    (on this worker's rows in a distributed training)."""
    from gbrank._validation import repeated_position

    if group is None:
        return
    twice = repeated_position(np.asarray(slot, dtype=np.int64),
                              np.asarray(group, dtype=np.int64).ravel())
    if twice is None:
        return
    i, at, rows = twice
    warn_user(
        f"group {i} shows position {positions[at]} on {rows} rows, and position_bias="
        f"{method!r} reads each group as one session, pairing a clicked row with the "
        "unclicked rows of its group. If a group is one session showing several rows per "
        "position (a grid), that is what is meant; if it holds a query's sessions put "
        "together, the pairs cross sessions (a document paired with itself) and the "
        "check of the log's users cannot count sessions: give one group per session — "
        "lgb.Dataset(group=session sizes), xgb.DMatrix(qid=session ids), "
        "GBRanker.fit(qid=session ids) (simulate_clicks(..., sessions='keep') logs them)")


class PositionBiasTraining:
    """What one training learns about position bias: the estimates of one objective on
    one training data set, updated once per boosting round.

    The boosters' adapters make one for every training data set
    (:func:`gbrank.lightgbm.objective`, :func:`gbrank.xgboost.objective`, ``GBRanker``:
    one per fold of ``lgb.cv``), so trainings never share estimates and the objective
    itself stays a set of parameters.

    Parameters
    ----------
    objective : RankNet or LambdaRank
        With ``position_bias`` set; its parameters are read at every round.
    position : array-like of int
        The display position of every row of the training data, in its row order.
    learning_rate : float, optional
        The booster's learning rate, the step of ``"additive"``'s offsets unless the
        objective sets ``position_bias_learning_rate``.
    reduce : callable, optional
        ``reduce(array, op)``: sums (``op == "sum"``) and maxima (``"max"``) over the
        workers of a distributed training, so that every worker updates the same
        estimates; ``None`` on one machine.
    hint : str
        Appended to the error naming a position without a propensity.

    Attributes
    ----------
    estimates : PositionBias
        The estimates after the rounds so far (start values before the first).
    """

    def __init__(self, objective: Any, position: Any, *, learning_rate: Any = None,
                 reduce: Any = None, hint: str = "") -> None:
        pb = objective._params().pb
        if pb.method is None:
            raise ValueError(f"{objective!r} has no position_bias: nothing to learn from "
                             "positions")
        self.objective = objective
        self.learning_rate = learning_rate
        pos = check_positions(position, np.size(position))
        self.n = pos.size
        self.method = pb.method
        self.reduce = reduce
        if reduce is None:
            self.values, slot = np.unique(pos, return_inverse=True)
            self.slot = slot.astype(np.int64).ravel()
            present = np.ones(self.values.size, dtype=bool)
        else:
            # Distributed: slots are the positions themselves, so that every worker's
            # sums line up; the extent and the positions present are agreed first.
            top = int(reduce(np.array([pos.max() if pos.size else 0], dtype=np.float64),
                             "max")[0])
            self.values = np.arange(top + 1, dtype=np.int64)
            self.slot = pos.astype(np.int64)
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
        self._labels_checked = False
        self._outputs: tuple[np.ndarray, np.ndarray] | None = None
        self.propensity = None
        if pb.method == "ipw":  # every position has a propensity, or the error names it
            self.u, self.v = objective._ipw_factors(pb, pos, hint)
            self.propensity = propensity_per_row(pb.table, self.values[present],
                                                 "propensity", hint)

    @property
    def estimates(self) -> PositionBias:
        keep = self.present
        pos = self.values[keep]
        if self.method == "unbiased":
            return PositionBias("unbiased", pos, t_plus=self.t_plus[keep].copy(),
                                t_minus=self.t_minus[keep].copy(), rounds=self.rounds)
        if self.method == "additive":
            return PositionBias("additive", pos, offsets=self.offsets[keep].copy(),
                                rounds=self.rounds)
        return PositionBias("ipw", pos, propensity=self.propensity, rounds=self.rounds)

    def _sum(self, a: np.ndarray) -> np.ndarray:
        """``a`` summed over the workers of a distributed training (itself otherwise)."""
        return a if self.reduce is None else self.reduce(a, "sum")

    def _buffers(self, n: int) -> tuple[np.ndarray, np.ndarray]:
        # The boosters copy the gradients they receive, so this training's arrays are
        # rewritten every round instead of allocating two new n-row arrays.
        if self._outputs is None or self._outputs[0].size != n:
            self._outputs = (np.empty(n), np.empty(n))
        return self._outputs

    def grad_hess(self, y: Any, preds: Any, group: Any = None,
                  weight: Any = None) -> tuple[np.ndarray, np.ndarray]:
        """One boosting round: gradients and the booster's Hessians with the current
        estimates, then the estimates' update. Arrays returned are overwritten by the
        next round (the boosters copy them)."""
        obj = self.objective
        p = obj._params()
        pb = p.pb
        if pb.method != self.method:
            raise ValueError("the objective's position_bias changed during training")
        n = int(np.size(preds))
        if n != self.n:
            raise ValueError(f"the training data of this run has {self.n} rows (positions "
                             f"given), this call has {n}")
        if self.rounds == 0:
            _warn_if_groups_repeat_positions(group, self.slot, self.values, self.method)
            check_users(np.asarray(y, dtype=np.float64).ravel(), group, self.slot,
                        self.values.size, self.method, pb.on_cascade, self._sum)
        if pb.method == "additive":
            lr = pb.learning_rate if pb.learning_rate is not None else self.learning_rate
            if lr is None:
                raise ValueError(
                    "position_bias='additive' moves its offsets by the booster's learning "
                    "rate, which this training does not know: set "
                    "position_bias_learning_rate=, or pass learning_rate= to the adapter "
                    "(gbrank.lightgbm.objective / gbrank.xgboost.objective)")
            shifted = np.asarray(preds, dtype=np.float64) + self.offsets[self.slot]
            grad, hess = obj._plain_grad_hess(y, shifted, group, None, weight, p.max_step)
            k = self.values.size
            g = self._sum(np.bincount(self.slot, weights=grad, minlength=k))
            h = self._sum(np.bincount(self.slot, weights=hess, minlength=k))
            cnt = self._sum(np.bincount(self.slot, minlength=k).astype(np.float64))
            lam = pb.regularization
            self.offsets -= float(lr) * (g + lam * cnt * self.offsets) / (
                np.abs(h + lam * cnt) + _NEWTON_GUARD)
        else:
            y2, s2, queries = obj._prepare(y, preds, group, None, weight)
            if not self._labels_checked:
                obj._check_clicks(pb, y2)
                self._labels_checked = True
            if pb.method == "ipw":
                u, v, slot, k = self.u, self.v, None, 0
            else:
                u, v = _inverse(self.t_plus)[self.slot], _inverse(self.t_minus)[self.slot]
                slot, k = queries.apply(self.slot), self.values.size
            grad, hess, plus, minus = obj._pair_call(
                p, y2, s2, queries, queries.apply(u), queries.apply(v), p.max_step,
                slot=slot, n_slots=k, out=self._buffers(y2.size))
            grad, hess = queries.restore(grad, into=s2), queries.restore(hess, into=y2)
            if pb.method == "unbiased":
                _update_ratios(self, self._sum(plus), self._sum(minus), pb)
        self.rounds += 1
        return grad, hess


_EMPTY = np.empty(0, dtype=np.float64)


def _inverse(t: np.ndarray) -> np.ndarray:
    """1/t, and 0 (the ratio is not used) where t is below XGBoost's epsilon."""
    out = np.zeros(t.size)
    ok = t >= _TINY
    out[ok] = 1.0 / t[ok]
    return out


def _update_ratios(run: PositionBiasTraining, plus: np.ndarray, minus: np.ndarray,
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
