"""What one study produced: trial counts, the best trial as tuned, the picked
configuration and its rescored cross-validated scores, the refit's held-out test
scores, and where its model and plots went."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

__all__ = ["StudyResult"]


@dataclass
class StudyResult:
    """The outcome of one (task, candidate objective) study, as the report reads it.

    The tuner makes them; each parameter is kept as the attribute of the same name.

    Parameters
    ----------
    task : str
        The task's name.
    key : str
        The candidate's key (``"lambdarank:err"``, ``"native:binary"``, a custom
        objective's name, ``"anchor:LightGBMTunerCV"``).
    target : str
        The metric the study is judged on: tuned, early-stopped, picked and compared.
    native : bool
        Whether the candidate is the booster's own objective (the anchor's included).
    status : {"done", "rejected", "no trials"}
        ``"rejected"``: the gradient gate refused the objective, which was not tuned
        (``message`` says why); ``"no trials"``: no study in the storage (a report-only
        run) or no complete trial.
    message : str, default ""
        A note for the report (the gate's refusal, why there are no trials, the
        anchor's budget).
    study : str, default ""
        The Optuna study's name (empty when the gate rejected the objective).
    n_complete : int, default 0
        Complete trials of the study, by every process.
    n_pruned : int, default 0
        Pruned trials of the study, by every process.
    n_fail : int, default 0
        Failed trials of the study, by every process (surplus trials, failed unrun when
        the budget was already taken, not counted).
    seconds : float, default 0.0
        Seconds spent in the study's complete and pruned trials, by every process (the
        anchor: its wall time).
    n_here : int, default 0
        Trials this process ran (admitted into the budget).
    best_value : float, optional
        The best trial's value as tuned: its mean over the folds of ``target``
        (``None`` without a complete trial).
    folds : dict of str to list of float, default {}
        The best trial's score of every task metric (and ``target``) on each fold,
        each fold early-stopped on the rows it is scored on.
    values : list of float, default []
        Every complete trial's value as tuned (its mean of ``target`` over the folds),
        in trial order: a study whose trials all scored the same is flat, no basis for
        a recommendation.
    best_params : dict, default {}
        The recommended trial's parameters as Optuna drew them (objective parameters
        prefixed ``obj_``); the configuration trained is ``booster_params`` and
        ``objective_params``.
    rounds : int, default 0
        The boosting rounds of the recommended configuration's refit (for a study: the
        mean of its trial's early-stopped rounds over the folds, rounded).
    own_target : str, default ""
        The metric the objective exists for; empty: ``target`` (they differ when
        ``TuneConfig.metric``, ``--metric``, chose another).
    higher_is_better : bool, default True
        The direction of ``target`` (False for ``logloss``, ``ece``).
    best_trial : int, optional
        The number of the best trial as tuned.
    pick_trial : int, optional
        The number of the recommended trial: the finalist with the best rescored mean of ``target``.
    units : dict of str to list of float, default {}
        The pick's rescored scores of every task metric and ``target``, one per
        (repeat, fold) unit of the task's fresh folds (the same units in every study
        of the task).
    finalists : list of dict, default []
        Each finalist, the pick first: its ``"trial"`` number, ``"cv"`` value as
        tuned, ``"rescored"`` mean of ``target`` and ``"rounds"``.
    booster_params : dict, default {}
        The pick's booster parameters, as refit and saved (a study's: floats rounded
        to 4 significant digits, the booster's ``seed`` set).
    objective_params : dict, default {}
        The pick's objective parameters, as refit and saved (``{}`` for a native
        objective; with ``position_bias="ipw"`` they include the propensities).
    rescore_seconds : float, default 0.0
        Seconds the rescoring of the finalists took (for values read back from the
        study, the time recorded when they were computed).
    cuts : dict of str to float or list of float, default {}
        Binary tasks: for each threshold metric (``f1``, ``fbeta:2``, ``balanced``), the
        probability threshold best on the pick's out-of-fold predictions (every rescored
        unit's validation rows pooled), 6 significant digits; the test part is judged
        at it, and the code decides at the threshold of ``target`` (or of the first
        threshold metric recorded). Multiclass tasks whose ``target`` is a macro F_β:
        under ``target``, the K class offsets best there (added to the
        log-probabilities), at which every metric reading the decided class is judged
        on the test part and the code decides (``GBClassifier(decision=[...])``).
    test : dict of str to float, default {}
        The refit model's scores on the held-out test part, by metric (threshold
        metrics at their ``cuts``).
    model_path : str, default ""
        The exported model file (empty when no model was saved).
    plots : list of str, default []
        The paths of the study's plots.

    Examples
    --------
    :func:`~gbrank.tuning.tune` returns them; one made by hand:

    >>> from gbrank.tuning import StudyResult
    >>> res = StudyResult(task="ranking", key="lambdarank:ndcg", target="ndcg@10",
    ...                   native=False, status="done", n_complete=10, n_pruned=2,
    ...                   seconds=30.0)
    >>> res.trials_per_minute
    24.0
    """

    task: str
    key: str
    target: str
    native: bool
    status: str  # "done", "rejected", "no trials"
    message: str = ""
    study: str = ""
    n_complete: int = 0
    n_pruned: int = 0
    n_fail: int = 0
    seconds: float = 0.0
    n_here: int = 0  # trials this process ran (admitted into the budget)
    best_value: float | None = None
    folds: dict[str, list[float]] = field(default_factory=dict)
    values: list[float] = field(default_factory=list)
    best_params: dict[str, Any] = field(default_factory=dict)
    rounds: int = 0
    own_target: str = ""
    higher_is_better: bool = True
    best_trial: int | None = None
    pick_trial: int | None = None
    units: dict[str, list[float]] = field(default_factory=dict)
    finalists: list[dict[str, Any]] = field(default_factory=list)
    booster_params: dict[str, Any] = field(default_factory=dict)
    objective_params: dict[str, Any] = field(default_factory=dict)
    rescore_seconds: float = 0.0
    cuts: dict[str, Any] = field(default_factory=dict)
    test: dict[str, float] = field(default_factory=dict)
    model_path: str = ""
    plots: list[str] = field(default_factory=list)

    def __post_init__(self) -> None:
        self.own_target = self.own_target or self.target

    @property
    def estimate(self) -> float | None:
        """The pick's rescored mean of ``target`` (None before a pick)."""
        v = self.units.get(self.target)
        return float(sum(v) / len(v)) if v else None

    @property
    def trials_per_minute(self) -> float:
        """Complete and pruned trials per minute of trial time."""
        n = self.n_complete + self.n_pruned
        return 60.0 * n / self.seconds if self.seconds > 0 else float("nan")
