"""objective: a gbrank objective for LightGBM with what a Dataset cannot carry (the
display positions of a click log as given), and the state one training learns."""

from __future__ import annotations

import weakref
from typing import Any

import numpy as np

from gbrank._fields import (
    is_lightgbm_dataset,
    lightgbm_dataset_fields,
    lightgbm_learning_rate,
    lightgbm_positions,
    lightgbm_subset_rows,
    note_custom_round,
    renumbered_like_lightgbm,
)
from gbrank._validation import check_number, check_positions


class LightGBMObjective:
    """A gbrank objective as LightGBM calls it, with the training data's display
    positions (see :func:`objective`). Not a set of parameters: it owns the state of
    the trainings it serves (one per training data set)."""

    def __init__(self, obj: Any, position: Any = None,
                 learning_rate: float | None = None) -> None:
        self.gbrank_objective = obj
        self.position = position
        self.learning_rate = learning_rate
        self._runs: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()
        self._direct: Any = None  # the run of LightGBM's scikit-learn API (no Dataset)
        self._report_to: LightGBMObjective | None = None
        self.position_bias_: Any = None

    # LightGBM deep-copies its params when a training starts (lgb.train, lgb.cv, and the
    # scikit-learn API through them): the copy is that training's, with fresh estimates,
    # and reports them to the object the user holds.
    def __deepcopy__(self, memo: dict) -> LightGBMObjective:
        new = LightGBMObjective(self.gbrank_objective, self.position, self.learning_rate)
        new._report_to = self
        memo[id(self)] = new
        return new

    # LightGBM's protocol: 2 arguments from lgb.train, 4 from the sklearn API (which
    # picks the form by counting parameters, so exactly four are declared here).
    def __call__(self, a: Any, b: Any, weight: Any = None, group: Any = None,
                 ) -> tuple[np.ndarray, np.ndarray]:
        obj = self.gbrank_objective
        if self.position is None:
            return obj(a, b, weight, group)
        if is_lightgbm_dataset(b):
            ds, preds = b, a
            y, weight, group = lightgbm_dataset_fields(b)
            obj._inspect_lightgbm_dataset(ds)
            note_custom_round(ds)
        else:
            ds, y, preds = None, a, b
        run = self._run(ds, int(np.size(preds)))
        obj._check_booster_queries(group)
        grad, hess = run.grad_hess(y, preds, group, weight)
        target: LightGBMObjective | None = self
        while target is not None:
            target.position_bias_ = run.estimates
            target = target._report_to
        return grad, hess

    def _run(self, ds: Any, n: int) -> Any:
        """The training state of ``ds`` (``None``: the scikit-learn API's one data set),
        made the first time it is seen from the positions of its rows."""
        run = self._direct if ds is None else self._runs.get(ds)
        if run is not None:
            return run
        pos = self.position
        rows = None if ds is None else lightgbm_subset_rows(ds)
        if pos.size != n and rows is not None and rows.size == n and rows.max() < pos.size:
            pos = pos[rows]  # a fold of lgb.cv: its rows of the positions given
        if pos.size != n:
            raise ValueError(
                f"position= holds {pos.size} positions and this LightGBM training data has "
                f"{n} rows: give one display position per row of the training Dataset, in "
                "its row order")
        held = None if ds is None else lightgbm_positions(ds)
        if held is not None and not np.array_equal(renumbered_like_lightgbm(pos),
                                                    np.asarray(held, dtype=np.int64)):
            raise ValueError(
                "position= disagrees with the positions this LightGBM Dataset was built "
                "with (compared through LightGBM's renumbering of them): pass the same "
                "positions, in the Dataset's row order")
        rate = self.learning_rate
        if rate is None and ds is not None:
            rate = lightgbm_learning_rate(ds)
        run = self.gbrank_objective.position_bias_training(pos, learning_rate=rate)
        if ds is None:
            self._direct = run
        else:
            self._runs[ds] = run
        return run

    def __getstate__(self) -> dict[str, Any]:
        return {"objective": self.gbrank_objective, "position": self.position,
                "learning_rate": self.learning_rate}

    def __setstate__(self, state: dict[str, Any]) -> None:
        self.__init__(state["objective"], state["position"], state["learning_rate"])

    def __repr__(self) -> str:
        extra = "" if self.position is None else f", position=<{self.position.size} rows>"
        return f"gbrank.lightgbm.objective({self.gbrank_objective!r}{extra})"


def objective(obj: Any, position: Any = None,
              learning_rate: float | None = None) -> LightGBMObjective:
    """A gbrank objective for ``lgb.train`` / ``lgb.cv`` / LightGBM's scikit-learn API,
    with the display positions of a click log.

    Every gbrank objective is a LightGBM objective as it stands
    (``{"objective": LambdaRank()}``). One with ``position_bias`` also needs every
    training row's display position, which a LightGBM ``Dataset`` cannot hand over: once
    constructed it holds only LightGBM's renumbering of ``Dataset(position=...)`` (0, 1,
    … in order of first appearance), not the values. This wrapper carries them, and
    owns what each training learns from them (the position-bias estimates), so the
    objective itself stays a set of parameters.

    Parameters
    ----------
    obj : gbrank objective
        E.g. ``LambdaRank(position_bias="ipw", propensity=rho)``; used as it is (not
        copied), its parameters read at every round.
    position : array-like of int, optional
        The display position of every row of the training ``Dataset``, in its row order
        (1-based ranks or any integer slot ids). In ``lgb.cv`` each fold takes its rows'
        positions (the fold's ``used_indices``). When the Dataset was also built with
        ``position=``, the two must agree (checked through LightGBM's renumbering).
        Only for an objective with ``position_bias`` (an error otherwise).
    learning_rate : float, optional
        The step of ``position_bias="additive"``'s offsets, when neither the objective
        (``position_bias_learning_rate``) nor the Dataset says it: a Dataset
        constructed before ``lgb.train`` does not carry the training's parameters, and
        LightGBM's scikit-learn API hands over no Dataset.

    Returns
    -------
    callable
        ``f(preds, train_set)`` and ``f(y, preds, weight, group)``, LightGBM's two forms.
        After a training, ``f.position_bias_`` holds its estimates
        (:class:`~gbrank.objectives.PositionBias`; in ``lgb.cv``, those of the fold
        that trained last). Each training starts fresh: LightGBM copies its parameters
        when a training starts, and the copy owns that training's estimates.

    Examples
    --------
    >>> import lightgbm as lgb
    >>> from gbrank.datasets import make_ranking, simulate_clicks
    >>> from gbrank.lightgbm import objective
    >>> from gbrank.objectives import LambdaRank
    >>> X, y, group = make_ranking(n_queries=30, rows_per_query=20, n_features=5)
    >>> log = simulate_clicks(y, group, X[:, 0], top_n=10, n_sessions=2, sessions="keep")
    >>> f = objective(LambdaRank(position_bias="unbiased"), position=log.position)
    >>> booster = lgb.train({"objective": f, "verbosity": -1},
    ...                     lgb.Dataset(X[log.rows], log.clicks, group=log.group),
    ...                     num_boost_round=3)
    >>> f.position_bias_.positions.tolist(), f.position_bias_.rounds
    ([1, 2, 3, 4, 5, 6, 7, 8, 9, 10], 3)
    """
    from gbrank.objectives import Objective

    if not isinstance(obj, Objective):
        raise ValueError(f"objective() wraps a gbrank objective, got {obj!r}")
    uses = obj._uses_positions()
    if position is None:
        if uses:
            raise ValueError(
                f"{obj!r} learns from clicks and needs every training row's display "
                "position: objective(obj, position=positions)")
    else:
        if not uses:
            raise ValueError(f"position= is for an objective with position_bias; {obj!r} "
                             "has none")
        position = check_positions(position, np.size(position))
    if learning_rate is not None:
        learning_rate = check_number(learning_rate, "learning_rate", 0.0, low_open=True)
    return LightGBMObjective(obj, position, learning_rate)
