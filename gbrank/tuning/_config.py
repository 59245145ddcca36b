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

    ``metric`` (a gbrank metric name such as ``"ndcg@10"``, ``"err@10"``, ``"f1"``, or
    ``"ap"``): every study is tuned, early-stopped and compared on it, in its direction
    (``logloss`` and ``ece`` are minimised); ``None``: each objective on its own metric.
    ``finalists`` and ``repeats``: the pick rescores each study's ``finalists`` best trials on ``repeats`` fresh shuffles of the folds.

    Many processes may run the same configuration on one ``storage`` (PostgreSQL, or
    SQLite on one machine): they share each study and its total exactly. ``run_trials=False`` runs no trial
    (report from the stored studies); ``report=False`` skips the refit, test scores,
    models and plots (a worker that only adds trials). ``worker`` numbers a worker
    process in progress lines.

    Values are checked when the configuration is made (a ``ValueError`` naming the
    setting), and the booster's package must be installed.

    Parameters
    ----------
    booster : {"lightgbm", "xgboost"}, default "lightgbm"
        The booster every study trains (``--booster``); its package must be installed
        (an ImportError naming the extra otherwise).
    trials : int, default 12
        Trials per study in total, counting the complete and pruned trials already in
        the storage (earlier runs, other processes); failed trials do not count. At
        least 1 (``--trials``; the command line's default is 3 with ``--quick``).
    timeout : float, optional
        Seconds, > 0: after this long a study of this run starts no new trial in this
        process (running trials end normally); each study gets its own ``timeout``.
        ``None``: no time limit, each study stops at ``trials`` (``--timeout``; the
        command line uses 40 on its embedded data without ``--quick``, else none).
    n_folds : int, default 3
        Cross-validation folds of the tuning part, at least 2: whole queries per fold
        for grouped ranking, rows stratified by class for binary and multiclass tasks
        (``--folds``).
    max_rounds : int, default 200
        The most boosting rounds of each cross-validated training (early stopping
        usually ends it sooner); at least 1 (``--max-rounds``, whose default is 100,
        40 with ``--quick``).
    patience : int, default 20
        Early stopping: a fold's training stops after this many rounds without an
        improvement of the study's metric on the fold's validation rows; at least 1.
        No flag: the command line uses 15 (10 with ``--quick``).
    seed : int, default 0
        Seed of the run: the folds (the finalists' fresh folds use ``seed + 1``,
        ``seed + 2``, …), each study's TPE sampler (combined with the study's name),
        the gradient gate, the booster's ``seed`` parameter of the rescored and refit
        configurations and the ``random_state`` of gbrank objectives that leave it
        None (``--seed``).
    storage : str, optional
        SQLAlchemy URL of the Optuna storage holding the studies (PostgreSQL for
        processes on many machines, e.g. ``"postgresql://user@host/db"``); ``None``:
        ``sqlite:///<out_dir>/studies.db`` (``--storage``).
    out_dir : pathlib.Path, default Path("experiments/results")
        Folder of the outputs: the exported models under ``tune/models/<study>/``, the
        plots under ``tune/<task>/`` and the default SQLite storage (``--out``, whose
        default is ``./gbrank-results``; the command line writes ``SUMMARY.md`` there).
    quick : bool, default False
        Fewer studies: with ``objectives=None`` a shorter default list of gbrank
        objectives per task, and, when no ``native:`` key is chosen, only the first of
        the booster's default native objectives (click logs keep theirs). It changes
        nothing else: the command line's ``--quick`` also sets smaller data, fewer
        trials, rounds, finalists and repeats through the other settings.
    metric : str, optional
        A gbrank metric name (``"ndcg@10"``, ``"err@10"``, ``"f1"``, ``"logloss"``, …)
        or ``"ap"``, stored lower-cased: every study is tuned, early-stopped, picked and
        compared on it, in its direction (``logloss`` and ``ece`` are minimised); a
        task whose kind it cannot judge is refused (ValueError) when tuned. ``None``:
        each objective on its own metric (``--metric``).
    finalists : int, default 3
        How many of each study's best trials (by their CV value as tuned) the pick
        rescores on fresh folds; the best rescored one is recommended. At least 1
        (``--finalists``; the command line's default is 2 with ``--quick``).
    repeats : int, default 2
        Fresh shuffles of the ``n_folds`` folds the finalists are rescored on
        (``repeats * n_folds`` scores per metric); at least 1 (``--repeats``; the
        command line's default is 1 with ``--quick``).
    n_jobs : int, default 1
        Threads of each booster training; at least 1 (``--n-jobs``). More processes
        on one ``storage`` use more cores.
    objectives : list of str, optional
        Keys of the candidate objectives: gbrank ones (``"ranknet"``,
        ``"lambdarank:ndcg"``, ``"lambdarank:err"``, ``"focal"``,
        ``"fbeta_surrogate"``, …) and the booster's own (``"native:lambdarank"``,
        ``"native:binary"``, …); each task studies the keys of its kind. A list
        without a ``native:`` key gets the booster's default native objectives.
        ``None``: the defaults of each task (``--objectives``).
    custom : dict of str to objective, default {}
        Extra gbrank objective instances by study key (``{"my_rank":
        LambdaRank(sigma=2.0)}``): RankNet, LambdaRank, FocalLoss, FBetaSurrogate or
        their subclasses, each studied on the tasks of its kind, gated and tuned like
        the built-in ones. No flag.
    heartbeat : int, default 10
        Seconds between the heartbeats a running trial records in the storage, at
        least 1: a trial whose heartbeat is older than ``grace`` (its process was
        killed) is failed and its parameters are tried again (``--heartbeat``).
    grace : int, optional
        Seconds without a heartbeat after which a running trial is failed, at least 1;
        ``None``: ``3 * heartbeat``. No flag.
    anchor : bool, default False
        Also run Optuna's ``LightGBMTunerCV`` on native lambdarank, with the tuner's
        time on the task as its time budget, as one more result; only for ranking tasks
        that are not click logs, with ``booster="lightgbm"`` and ``report=True``.
        Needs ``gbrank[anchor]`` (``--anchor``).
    save_models : bool, default True
        Export each study's refit model and its ``params.json`` to
        ``<out_dir>/tune/models/<study>/`` (with ``report=True``). No flag.
    plots : bool, default True
        Draw each study's PNG plots under ``<out_dir>/tune/<task>/`` (with
        ``report=True``). No flag.
    progress : bool, default True
        Print progress lines (one updating line on a terminal); False: print nothing
        (``--quiet``).
    run_trials : bool, default True
        Run trials; False: only load the stored studies and report on them
        (``--report-only``, and the parent process of ``--workers N``).
    report : bool, default True
        After the trials, pick each study's recommended configuration, refit it on the
        whole tuning part, score it on the held-out part and save its model and plots;
        False: trials only, each result holds the trial counts and the best trial
        (``--trials-only``). ``run_trials`` and ``report`` may not both be False.
    worker : int, optional
        The number (at least 0) of a worker process, shown in its progress lines
        (``[tune w3]``, plain lines, never an updating one); ``None``: not a worker.
        ``--workers N`` sets it for the processes it starts.

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
    metric: str | None = None
    finalists: int = 3
    repeats: int = 2
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
                          ("n_jobs", 1), ("heartbeat", 1), ("finalists", 1), ("repeats", 1)):
            check_integer(getattr(self, name), name, low)
        check_integer(self.grace, "grace", 1, allow_none=True)
        check_integer(self.worker, "worker", 0, allow_none=True)
        for name in ("quick", "anchor", "save_models", "plots", "progress", "run_trials",
                     "report"):
            check_bool(getattr(self, name), name)
        if not (self.run_trials or self.report):
            raise ValueError("run_trials and report are both False: nothing to do")
        self._check_objectives()
        if self.metric is not None:
            from gbrank.metrics import get_metric

            if not isinstance(self.metric, str):
                raise ValueError(f"metric must be a metric name, got {self.metric!r}")
            self.metric = self.metric.strip().lower()
            try:
                get_metric(self.metric)
            except ValueError as exc:  # name the setting first, as the other checks do
                raise ValueError(f"metric {self.metric!r} is not a metric name: "
                                 f"{str(exc).split('; ', 1)[-1]}") from None
        if self.timeout is not None:
            check_number(self.timeout, "timeout", 0.0, low_open=True)

    def _check_objectives(self) -> None:
        """``objectives`` keys the booster knows and ``custom`` gbrank objectives, here
        rather than when the first task is tuned."""
        from gbrank.tuning._spaces import candidate

        if self.objectives is not None:
            if isinstance(self.objectives, str) or not all(
                    isinstance(k, str) for k in self.objectives):
                raise ValueError("objectives must be a list of objective keys such as "
                                 f"['lambdarank:ndcg', 'native:lambdarank'], got "
                                 f"{self.objectives!r}")
            for key in self.objectives:
                try:
                    candidate(key, self.booster)
                except ValueError as exc:
                    raise ValueError(f"objectives: {exc}") from None
        if not isinstance(self.custom, dict) or not all(
                isinstance(k, str) for k in self.custom):
            raise ValueError("custom must be a dict of study keys to gbrank objectives, got "
                             f"{self.custom!r}")
        for key, obj in self.custom.items():
            try:
                candidate(key, self.booster, obj)
            except ValueError as exc:
                raise ValueError(f"custom[{key!r}]: {exc}") from None
