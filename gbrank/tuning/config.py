"""The settings of one tuning run (the command line's flags), checked once for the CLI
and the importable engine alike."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from gbrank._deps import require
from gbrank._validation import check_bool, check_choice, check_integer, check_number

__all__ = ["TuneConfig"]


@dataclass
class TuneConfig:
    """Settings of one tuning run (the command line's flags).

    ``trials`` is the total per study, counting trials already in the storage (complete
    or pruned), so re-running resumes and stops at the total. ``timeout`` (seconds) caps
    each study of this run. ``objectives``: keys (``"lambdarank:err"``,
    ``"native:binary"``); ``None`` = the defaults of each task. ``custom``: extra
    objective instances by name (gated and tuned like the built-in ones).

    Many processes may run the same configuration on one ``storage`` (PostgreSQL, or
    SQLite on one machine): they share each study and its total exactly (see
    :func:`~gbrank.tuning.budget.run_budget`). ``run_trials=False`` runs no trial
    (report from the stored studies); ``report=False`` skips the refit, test scores,
    models and plots (a worker that only adds trials). ``worker`` numbers a worker
    process in progress lines.

    Values are checked when the configuration is made (a ``ValueError`` naming the
    setting), and the booster's package must be installed.

    Examples
    --------
    >>> from pathlib import Path
    >>> from gbrank.tuning import TuneConfig
    >>> cfg = TuneConfig(trials=20, objectives=["lambdarank:ndcg", "ranknet"],
    ...                  out_dir=Path("studies"), plots=False)
    >>> cfg.booster, cfg.n_folds, cfg.max_rounds
    ('lightgbm', 3, 200)
    >>> try:
    ...     TuneConfig(n_folds=1)
    ... except ValueError as exc:
    ...     print("refused")
    refused
    """

    booster: str = "lightgbm"
    trials: int = 12
    timeout: float | None = None
    n_folds: int = 3
    max_rounds: int = 200
    patience: int = 20
    seed: int = 0
    storage: str | None = None
    out_dir: Path = Path("experiments/results")
    quick: bool = False
    n_jobs: int = 1
    objectives: list[str] | None = None
    custom: dict[str, Any] = field(default_factory=dict)
    heartbeat: int = 10
    grace: int | None = None
    anchor: bool = False
    save_models: bool = True
    plots: bool = True
    progress: bool = True
    run_trials: bool = True
    report: bool = True
    worker: int | None = None

    def __post_init__(self) -> None:
        # Checked here, once, for the CLI and the importable engine alike.
        check_choice(self.booster, "booster", ("lightgbm", "xgboost"))
        require(self.booster)  # before any work: an ImportError naming the extra
        for name, low in (("trials", 1), ("n_folds", 2), ("max_rounds", 1), ("patience", 1),
                          ("n_jobs", 1), ("heartbeat", 1)):
            check_integer(getattr(self, name), name, low)
        check_integer(self.grace, "grace", 1, allow_none=True)
        check_integer(self.worker, "worker", 0, allow_none=True)
        if not (check_bool(self.run_trials, "run_trials") or check_bool(self.report, "report")):
            raise ValueError("run_trials and report are both False: nothing to do")
        if self.timeout is not None:
            check_number(self.timeout, "timeout", 0.0, low_open=True)
