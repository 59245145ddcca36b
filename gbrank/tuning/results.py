"""What one study produced: trial counts, the best parameters and their cross-validated
scores, the refit's held-out test scores, and where its model and plots went."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

__all__ = ["StudyResult"]


@dataclass
class StudyResult:
    """The outcome of one (task, candidate objective) study, as the report reads it.

    Attributes
    ----------
    task, key, target : str
        The task's name, the candidate's key (``"lambdarank:err"``, ``"native:binary"``)
        and the metric its study maximises.
    native : bool
        Whether the candidate is the booster's own objective.
    status : {"done", "rejected", "no trials"}
        ``"rejected"``: the gradient gate refused the objective (``message`` says why).
    message, study : str
        A note for the report; the Optuna study's name.
    n_complete, n_pruned, n_fail : int
        Trials of the study by every process (surplus trials not counted).
    seconds : float
        Time spent in complete and pruned trials.
    n_here : int
        Trials this process ran (admitted into the budget).
    best_value, folds, best_params, rounds
        The best trial's mean CV score, its per-fold scores of every task metric, its
        parameters and the boosting rounds its refit uses.
    test : dict of str to float
        Held-out test scores of the refit model.
    model_path, plots
        Where the exported model and the study's plots were written.

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
    best_params: dict[str, Any] = field(default_factory=dict)
    rounds: int = 0
    test: dict[str, float] = field(default_factory=dict)
    model_path: str = ""
    plots: list[str] = field(default_factory=list)

    @property
    def trials_per_minute(self) -> float:
        """Complete and pruned trials per minute of trial time."""
        n = self.n_complete + self.n_pruned
        return 60.0 * n / self.seconds if self.seconds > 0 else float("nan")
