"""The protocol every gbrank objective follows.

An objective owns its parameters and follows scikit-learn's parameter contract: the
constructor stores its arguments exactly as given, :meth:`Objective.get_params` /
:meth:`Objective.set_params` read and write them, and they are validated (through
``gbrank._validation``) where they are used — once per parameter setting, cached — so
``sklearn.base.clone`` and grid searches over ``objective__<name>`` work. Input data is
validated on every call, then a numba kernel runs.

An objective knows nothing of the boosters' modules. LightGBM calls it directly
(``obj(preds, dataset)`` or ``obj(y, preds, weight, group)``); the Dataset is
duck-typed here (anything with ``get_label`` and ``get_group``), so no booster or
adapter is imported.
"""

from __future__ import annotations

import inspect
from types import SimpleNamespace
from typing import Any, ClassVar

import numpy as np

from gbrank._fields import (
    check_fold_keeps_queries,
    is_lightgbm_dataset,
    lightgbm_dataset_fields,
    note_custom_round,
    refuse_lightgbm_bagging_by_query,
    warn_ignored_class_weight_params,
    warn_ignored_lightgbm_positions,
    warn_ignored_lightgbm_ranking_params,
    warn_lightgbm_builtin_metrics,
)
from gbrank._warnings import warn_user

__all__ = ["Objective"]

_MISSING = object()


class Objective:
    """Base class of gbrank objectives.

    Subclasses implement :meth:`grad_hess` (what the booster receives) and
    :meth:`loss` (the function whose gradient ``grad`` is), override
    :meth:`exact_grad_hess` when the booster gets a modified Hessian (a floor, a
    constant) so that :func:`gbrank.gradcheck.check` can compare the true one, and
    implement ``_validate_params`` (checked, converted parameters as a namespace,
    read through ``_params``).

    An instance is directly a LightGBM objective: ``lgb.train({"objective": obj})``
    calls ``obj(preds, train_set)`` and ``LGBMRanker(objective=obj)`` /
    ``LGBMClassifier(objective=obj)`` call ``obj(y_true, y_pred, weight, group)``.
    For XGBoost use :func:`gbrank.xgboost.objective`.

    Attributes
    ----------
    task : {"ranking", "binary", "multiclass"}
        How adapters and the tuner treat the objective.
    loss_blocks : {"query", "row"}
        What the loss is a sum over (gradient checks perturb within one block).

    Examples
    --------
    A new objective subclasses :class:`Objective`: a constructor that stores its
    arguments, :meth:`grad_hess` and :meth:`loss`. It then has scikit-learn's
    parameter methods, passes :func:`gbrank.gradcheck.check` when its derivatives are
    right, and trains with LightGBM as it stands.

    >>> import numpy as np
    >>> from gbrank.gradcheck import check
    >>> from gbrank.objectives import Objective
    >>> class SquaredError(Objective):
    ...     task = "binary"
    ...     loss_blocks = "row"  # a sum of one term per row
    ...     def __init__(self, scale=1.0):
    ...         self.scale = scale
    ...     def grad_hess(self, y, s, group=None, *, qid=None, weight=None):
    ...         r = np.asarray(s, dtype=float) - np.asarray(y, dtype=float)
    ...         return self.scale * r, np.full(r.shape, float(self.scale))
    ...     def loss(self, y, s, group=None, *, qid=None, weight=None, at=None):
    ...         r = np.asarray(s, dtype=float) - np.asarray(y, dtype=float)
    ...         return 0.5 * self.scale * float(r @ r)
    >>> obj = SquaredError(scale=2.0)
    >>> obj
    SquaredError(scale=2.0)
    >>> grad, hess = obj.grad_hess([1.0, 0.0], [0.5, 0.5])
    >>> grad.tolist(), hess.tolist()
    ([-1.0, 1.0], [2.0, 2.0])
    >>> check(obj, [1.0, 0.0, 1.0], [0.2, -0.4, 1.5]).ok
    True
    >>> obj.set_params(scale=1.0).get_params()
    {'scale': 1.0}
    """

    #: "ranking", "binary" or "multiclass": how adapters and the tuner treat it.
    task: ClassVar[str] = "ranking"
    #: Blocks the loss is a sum over: "query" (one term per query; group-less = one
    #: query) or "row" (one term per row). Gradient checks perturb within a block, and
    #: per-row objectives ignore any query structure a booster hands them
    #: (:meth:`booster_grad_hess`).
    loss_blocks: ClassVar[str] = "query"
    #: Attributes that belong to one training run (e.g. a round counter), dropped by
    #: :meth:`set_params` so that new parameters start a new run.
    _training_state: ClassVar[tuple[str, ...]] = ()

    # -- the loss -------------------------------------------------------------------
    def grad_hess(self, y: Any, s: Any, group: Any = None, *, qid: Any = None,
                  weight: Any = None) -> tuple[np.ndarray, np.ndarray]:
        """Gradient and diagonal Hessian of the loss w.r.t. the raw scores ``s``."""
        raise NotImplementedError

    def exact_grad_hess(self, y: Any, s: Any, group: Any = None, *, qid: Any = None,
                        weight: Any = None) -> tuple[np.ndarray, np.ndarray]:
        """Gradient and the true diagonal Hessian (default: same as :meth:`grad_hess`)."""
        return self.grad_hess(y, s, group, qid=qid, weight=weight)

    def loss(self, y: Any, s: Any, group: Any = None, *, qid: Any = None, weight: Any = None,
             at: Any = None) -> float:
        """Value of the loss. ``at`` freezes any score-dependent pair weights at other
        scores (LambdaRank's local loss); objectives without such weights ignore it."""
        raise NotImplementedError

    def bind_data_defaults(self, y: Any) -> Objective:
        """This objective with any default that depends on the whole data (LambdaRank's
        ERR ``g_max``) fixed from labels ``y``; ``self`` when there is none. Used where
        the loss is evaluated on parts of the data (the gradient check)."""
        return self

    def init_score(self, y: Any, weight: Any = None) -> float | np.ndarray:
        """Loss-optimal constant raw score (LightGBM starts custom objectives at 0)."""
        return 0.0

    def target_mapping(self, y: Any) -> dict[str, Any] | None:
        """How this objective's probability term maps its training labels ``y`` to
        targets in [0, 1], as the calibration metrics take it (``{"target",
        "max_grade", "threshold"}``, a default that depends on the data fixed from
        ``y``), so that other rows are judged against the targets the model learned;
        ``None`` without such a term."""
        return None

    # -- boosters ---------------------------------------------------------------------
    def booster_grad_hess(self, y: Any, preds: Any, group: Any = None,
                          weight: Any = None, *,
                          start_fix: str | None = None) -> tuple[np.ndarray, np.ndarray]:
        """:meth:`grad_hess` as a booster asks for it, with the query structure the
        booster holds (``group``: query sizes or ``None``). ``start_fix``: how the
        caller's user passes a start, named by the warning a first round far from the
        loss-optimal start gives (default: the boosters' ``init_score``/``base_margin``).

        The one place of the rule "per-row objectives ignore the query structure":
        a loss that is a sum over rows (``loss_blocks == "row"``) gets ``group=None``
        and per-row weights, whatever groups the training data carries.
        """
        if self.loss_blocks == "row":
            group = None
        else:
            self._check_booster_queries(group)
        self._check_booster_columns(y, preds)
        self._warn_if_no_start(y, preds, weight, start_fix)
        return self.grad_hess(y, preds, group, weight=weight)

    def _check_booster_columns(self, y: Any, preds: Any) -> None:
        """Refuse several scores per row for a one-score objective: the booster was
        told ``num_class`` (LightGBM's and XGBoost's own parameter)."""
        if getattr(self, "num_class", None) is not None or self.task == "multiclass":
            return
        n, size = np.size(y), np.size(preds)
        if n and size != n and size % n == 0:
            k = size // n
            raise ValueError(
                f"{type(self).__name__} takes one score per row, and the booster hands it "
                f"{k} per row: the training's parameters set num_class={k}. Leave num_class "
                "out for one score per row"
                + (", or train K classes with FocalLoss(num_class=K)"
                   if self.task == "binary" else ""))

    def _groupless(self) -> bool:
        """Whether the objective declares group-less ranking (``groupless=True``)."""
        return False

    def _check_booster_queries(self, group: Any) -> None:
        """A ranking loss from a booster call without query structure is group-less
        ranking only when declared; declared, the data must not have several queries.
        (A plain :meth:`grad_hess` call without ``group`` keeps its one-list meaning.)"""
        if self.task != "ranking" or self.loss_blocks != "query":
            return
        declared = self._groupless()
        name = type(self).__name__
        if group is None and not declared:
            raise ValueError(
                f"{name} got no query structure from the booster (a LightGBM Dataset "
                "without group=, an XGBoost DMatrix without group/qid, LGBMRanker without "
                "group): every row would be ranked as one list. Pass the queries — "
                "lgb.Dataset(X, y, group=sizes), xgb.DMatrix(X, y, qid=ids) — or, if all "
                f"rows really are one query (group-less ranking), declare it: "
                f"{name}(groupless=True)")
        if group is not None and declared and np.size(group) > 1:
            raise ValueError(
                f"{name}(groupless=True) declares all rows one query, but the training data "
                f"has {np.size(group)} queries: drop groupless=True to rank within each "
                "query, or drop the query structure")

    def _warn_if_no_start(self, y: Any, preds: Any, weight: Any,
                          fix: str | None = None) -> None:
        """Warn when a booster starts this objective from a constant far from its
        loss-optimal one (:meth:`init_score`): LightGBM starts every custom objective
        at raw score 0 and XGBoost at ``base_score``, unless the data carry a start
        (``init_score`` / ``base_margin``). Only constant ``preds`` (a first round) are
        looked at. A per-row loss must lose more than 1% to the optimum; other losses
        (a calibrated ranking loss, whose loss is not per row) warn from a distance of
        0.1 in raw score."""
        if self.task == "ranking" and not getattr(self, "probability", False):
            return  # a ranking loss ignores a constant shift
        p = np.asarray(preds)
        if p.size == 0 or p.ndim > 2:
            return
        rows = p.reshape(p.shape[0], -1)
        start = rows[0]
        if np.any(rows[-1] != start) or not np.all(rows == start):
            self._refuse_scrambled_start(rows)
            return
        try:
            best = np.atleast_1d(np.asarray(self.init_score(y, weight), dtype=np.float64))
        except (ValueError, TypeError):
            return  # bad input: the gradient call itself names it
        if best.size != start.size or np.allclose(best, start, rtol=0.0, atol=1e-3):
            return
        cost = ""
        if self.loss_blocks == "row":
            at_start = np.broadcast_to(start, rows.shape).reshape(p.shape)
            at_best = np.broadcast_to(best, rows.shape).reshape(p.shape)
            try:
                here = float(self.loss(y, at_start, weight=weight))
                there = float(self.loss(y, at_best, weight=weight))
            except (ValueError, TypeError, NotImplementedError):
                return
            if not (np.isfinite(here) and np.isfinite(there)) \
                    or here - there <= 0.01 * abs(there):
                return
            cost = f" (its loss there {here:.6g}, at the optimum {there:.6g})"
        elif np.max(np.abs(best - start)) <= 0.1:
            return
        shown = (f"{float(best[0]):.6g}" if best.size == 1
                 else "[" + ", ".join(f"{b:.4g}" for b in best) + "]")
        if fix is None:
            fix = ("the boosters give a custom objective no start of their own. Pass it "
                   "with the data — LightGBM: lgb.Dataset(X, y, init_score=np.full(len(y), "
                   "obj.init_score(y))) (an (n, K) array for K classes); XGBoost: "
                   "DMatrix(..., base_margin=...) — and add it to the raw predictions; or "
                   "use gbrank.sklearn."
                   f"{'GBRanker' if self.task == 'ranking' else 'GBClassifier'}, which "
                   "does both")
        warn_user(
            f"{type(self).__name__} starts from raw score {float(start[0]):.6g}"
            f"{'' if start.size == 1 else ' (class 0; one per class)'}, and its "
            f"loss-optimal constant start is {shown}{cost}: {fix}")

    @staticmethod
    def _refuse_scrambled_start(rows: np.ndarray) -> None:
        """Refuse a K-class first round whose scores are one constant start laid out
        row-major and read class-major (``init_score=np.tile(c, n)``: LightGBM reads a
        flat start class by class), which trains from a start that differs row by row."""
        n, k = rows.shape
        if k < 2 or n < 2 * k or not np.array_equal(rows[:k, 0], rows[k:2 * k, 0]):
            return  # O(K) for every later round, whose scores vary row by row
        flat = rows.T.reshape(-1)  # the flat vector as the booster was given it
        c = flat[:k]
        if np.all(flat.reshape(n, k) == c) and not np.all(c == c[0]):
            raise ValueError(
                f"the first round's scores are a constant start of {k} classes laid out "
                "row-major (init_score=np.tile(c, n)), which LightGBM reads class by "
                "class: every row starts from another permutation. Pass the start as an "
                "(n, K) array: init_score=np.tile(obj.init_score(y), (n, 1))")
        # The mirror: LightGBM's class-major flat start (np.repeat(c, n)) given to
        # XGBoost, which reads a flat base_margin row by row: each row starts from one
        # class's constant in every class, which the softmax cancels (no start at all).
        c = rows.reshape(-1)[::n]
        if not np.all(c == c[0]) and np.array_equal(rows.reshape(-1), np.repeat(c, n)):
            raise ValueError(
                f"the first round's scores are a constant start of {k} classes laid out "
                "class by class (LightGBM's flat form, np.repeat(c, n)), which XGBoost "
                "reads row by row: every row starts from one class's value in all "
                f"classes, which the softmax cancels. Pass base_margin as an (n, K) "
                "array: np.tile(obj.init_score(y), (n, 1))")

    # LightGBM's protocol: 2 arguments from lgb.train, 4 from the sklearn API (which
    # picks the form by counting parameters, so exactly four are declared here).
    def __call__(self, a: Any, b: Any, weight: Any = None, group: Any = None,
                 ) -> tuple[np.ndarray, np.ndarray]:
        """``obj(preds, train_set)`` (``lgb.train``) or ``obj(y, preds, weight, group)``
        (LightGBM's scikit-learn API).

        LightGBM casts what it receives to new float32 arrays, so the float64 arrays
        returned here are dead once the call returns: objectives that support it
        (RankNet, LambdaRank on grouped data) write into the arrays of their previous
        call instead of fresh ones: rewriting kept arrays avoids the first-touch page
        faults of two fresh n-row arrays on every call, a cost that grows with n
        (figures: ``docs/evidence.md``). Arrays returned by this call are therefore
        overwritten by the next; :meth:`grad_hess` always returns new arrays.
        """
        if is_lightgbm_dataset(b):
            ds = b
            y, weight, group = lightgbm_dataset_fields(b)
            preds = a
        else:  # LightGBM's scikit-learn API hands no Dataset
            ds = None
            y, preds = a, b
        self._inspect_lightgbm_dataset(ds)
        if ds is not None:
            note_custom_round(ds)
        return self._lightgbm_grad_hess(y, preds, group, weight, ds)

    def _lightgbm_grad_hess(self, y: Any, preds: Any, group: Any, weight: Any,
                            ds: Any) -> tuple[np.ndarray, np.ndarray]:
        """What a LightGBM call computes, with the Dataset it comes from (``None`` when
        unknown): :meth:`booster_grad_hess_reusing` (objectives that read more of the
        Dataset, such as positions, override it)."""
        return self.booster_grad_hess_reusing(y, preds, group, weight)

    def _uses_positions(self) -> bool:
        """Whether the booster must give this objective the rows' display positions
        (a ranking objective with ``position_bias``)."""
        return False

    def _inspect_lightgbm_dataset(self, ds: Any) -> None:
        """Refuse a LightGBM fold that cuts queries (for a loss summed over queries) and
        warn about built-in metrics LightGBM computes meaninglessly beside a custom
        objective; each Dataset is inspected once."""
        if ds is None:
            return
        if self.loss_blocks == "query":
            check_fold_keeps_queries(ds)
        warn_lightgbm_builtin_metrics(ds)
        if self.task == "ranking" and not self._uses_positions():
            warn_ignored_lightgbm_positions(ds, type(self).__name__)
        if self.task == "ranking":
            refuse_lightgbm_bagging_by_query(getattr(ds, "params", None),
                                             type(self).__name__)
            warn_ignored_lightgbm_ranking_params(ds, type(self).__name__)
        else:
            warn_ignored_class_weight_params(getattr(ds, "params", None),
                                             type(self).__name__, "lightgbm", ds)

    def booster_grad_hess_reusing(self, y: Any, preds: Any, group: Any = None,
                                  weight: Any = None) -> tuple[np.ndarray, np.ndarray]:
        """:meth:`booster_grad_hess` for a booster that copies what it receives
        (LightGBM, XGBoost): objectives that support it write into the arrays of their
        previous such call (see :meth:`__call__`), which this call's result overwrites
        the next time."""
        self.__dict__["_reuse_outputs"] = True
        try:
            return self.booster_grad_hess(y, preds, group, weight)
        finally:
            self.__dict__["_reuse_outputs"] = False

    def _output_buffers(self, n: int) -> tuple[np.ndarray, np.ndarray] | None:
        """Gradient and Hessian arrays of ``n`` rows kept from the previous LightGBM
        call (see :meth:`__call__`), or ``None`` outside that protocol (the kernel
        allocates)."""
        if not self.__dict__.get("_reuse_outputs"):
            return None
        kept = self.__dict__.get("_outputs")
        if kept is None or kept[0].size != n:
            kept = (np.empty(n), np.empty(n))
            self.__dict__["_outputs"] = kept
        return kept

    # -- scikit-learn's parameter contract ----------------------------------------------
    @classmethod
    def _get_param_names(cls) -> tuple[str, ...]:
        names = cls.__dict__.get("_param_names_cache")
        if names is None:
            sig = inspect.signature(cls.__init__)
            names = tuple(p.name for p in sig.parameters.values()
                          if p.name != "self" and p.kind not in (p.VAR_KEYWORD, p.VAR_POSITIONAL))
            cls._param_names_cache = names
        return names

    def get_params(self, deep: bool = True) -> dict[str, Any]:
        """Constructor parameters, exactly as given (scikit-learn's contract).

        ``deep`` is accepted for scikit-learn (objectives hold no sub-estimators).
        """
        return {name: getattr(self, name) for name in self._get_param_names()}

    def set_params(self, **params: Any) -> Objective:
        """Set constructor parameters (validated at the next use); returns ``self``."""
        valid = self._get_param_names()
        for key, value in params.items():
            if key not in valid:
                raise ValueError(f"invalid parameter {key!r} for {type(self).__name__}; "
                                 f"valid parameters: {list(valid)}")
            setattr(self, key, value)
        self.__dict__.pop("_checked", None)
        for name in self._training_state:  # new parameters: a new training
            self.__dict__.pop(name, None)
        return self

    def _params(self) -> SimpleNamespace:
        """The parameters, validated and converted; computed once per setting.

        The cache is keyed on the identity of the stored values, so ``set_params`` and
        plain attribute assignment both invalidate it; the per-round cost is a few
        attribute reads.
        """
        raw = tuple(self.__dict__.get(n, _MISSING) for n in self._get_param_names())
        cached = self.__dict__.get("_checked")
        if cached is not None and len(cached[0]) == len(raw) and all(
                a is b for a, b in zip(cached[0], raw, strict=True)):
            return cached[1]
        view = self._validate_params()
        self.__dict__["_checked"] = (raw, view)
        return view

    def _validate_params(self) -> SimpleNamespace:
        return SimpleNamespace()

    def __getstate__(self) -> dict[str, Any]:
        state = dict(self.__dict__)
        for name in ("_checked", "_outputs", "_reuse_outputs", "_calibrated_cache"):
            state.pop(name, None)
        return state

    def __repr__(self) -> str:
        args = ", ".join(f"{k}={v!r}" for k, v in self.get_params(deep=False).items())
        return f"{type(self).__name__}({args})"
