"""The settings of one tuning run, checked once for the command line and the importable
engine alike: the one home of every default (``gbrank tune`` builds its flags from it)."""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from gbrank._deps import require
from gbrank._help import plain_text
from gbrank._validation import check_bool, check_choice, check_integer, check_number

__all__ = ["BASELINES", "EMBEDDED_TIMEOUT", "QUICK", "TuneConfig", "field_help"]


#: What ``gbrank tune --quick`` (a smoke run) sets besides ``quick=True``, when the flag
#: of the setting is not given.
QUICK = {"trials": 3, "max_rounds": 40, "patience": 10, "finalists": 2, "repeats": 1}

#: The most rounds and the patience of every cross-validated training when
#: ``max_rounds``/``patience`` are ``None``, by what a task is judged on: its labels, or
#: a click log's held-out clicks weighted by propensity, where 1,000 rounds with patience
#: 50 fit the clicks' noise (test NDCG@10 on true grades −0.016 ± 0.008 against 100 and
#: 15, MQ2008, 5 rotations) while tasks judged on their labels gained
#: (experiments/results/tuner_vs_catboost.md, "The default budget").
ROUNDS = {"labels": (1000, 50), "clicks": (100, 15)}

#: The libraries ``baselines`` (``--baselines``) may name.
BASELINES = ("catboost",)

#: ``gbrank tune``'s ``timeout`` on its embedded data without ``--quick`` (seconds per
#: study), so that a first run ends in minutes.
EMBEDDED_TIMEOUT = 40.0

#: ``--anchor``'s smallest budget (seconds): LightGBMTunerCV, given the tuner's time on a
#: task, needs some time to finish a step when that time is a few seconds.
ANCHOR_MIN_SECONDS = 10


@dataclass
class TuneConfig:
    """Settings of one tuning run: every default of ``gbrank tune`` lives here.

    The command line's flags are these fields (``--trials`` sets ``trials``, ``--folds``
    ``n_folds``, ``--out`` ``out_dir``, ``--quiet`` unsets ``progress``, …), with these
    defaults and this documentation (the first sentence of each parameter is the flag's
    help). Two exceptions of the command line: ``--quick`` also sets ``trials=3``,
    ``max_rounds=40``, ``patience=10``, ``finalists=2`` and ``repeats=1`` unless their
    flags are given, and on its embedded data without ``--quick`` ``timeout`` is 40 s.

    Many processes may run the same configuration on one ``storage`` (PostgreSQL, or
    SQLite on one machine): they share each study and its ``trials`` total exactly.
    Values are checked when the configuration is made (a ``ValueError`` naming the
    setting), and the booster's package must be installed.

    Parameters
    ----------
    booster : {"lightgbm", "xgboost"}, default "lightgbm"
        The booster every study trains. Its package must be installed (an ImportError
        naming the extra otherwise).
    trials : int, default 12
        Trials per study in total, counting the complete and pruned trials already
        stored (re-running resumes a study and stops at the total). Failed trials do not
        count; at least 1.
    timeout : float, optional
        Seconds per study in this run, after which it starts no new trial (running
        trials end normally). Each study gets its own; > 0. ``None``: no time limit,
        each study stops at ``trials``.
    n_folds : int, default 3
        Cross-validation folds of the tuning part: whole queries per fold for ranking,
        rows stratified by class for binary and multiclass tasks. At least 2.
    max_rounds : int, optional
        The most boosting rounds of each cross-validated training (early stopping
        usually ends it sooner). At least 1. ``None``: 1000, or 100 on a click log.
    patience : int, optional
        Early stopping: a fold's training stops after this many rounds without an
        improvement of the study's metric on the fold's validation rows. At least 1.
        ``None``: 50, or 15 on a click log.
    seed : int, default 0
        Seed of the folds, splits, samplers and boosters. The finalists' fresh folds use
        ``seed + 1``, ``seed + 2``, …; each study's TPE sampler combines it with the
        study's name; it is the booster's ``seed`` parameter of the rescored and refit
        configurations and the ``random_state`` of gbrank objectives that leave it None.
    storage : str, optional
        SQLAlchemy URL of the Optuna storage holding the studies, e.g.
        ``postgresql://user@host/db`` for processes on many machines. ``None``:
        ``sqlite:///<out_dir>/studies.db``.
    out_dir : pathlib.Path, default Path("gbrank-results")
        Output folder, relative to the working directory: ``SUMMARY.md`` (the command
        line's), plots and models under ``tune/``, and the default storage
        ``studies.db``. The exported models go under ``tune/models/<study>/``, the plots
        under ``tune/<task>/``.
    quick : bool, default False
        A smoke run: fewer studies and, on the command line, smaller data, trials,
        rounds, finalists and repeats. Here it only shortens the default objectives:
        with ``objectives=None`` a shorter default list of gbrank objectives per task,
        and, when no ``native:`` key is chosen, only the first of the booster's default
        native objectives (click logs keep theirs).
    metric : str, optional
        Tune, early-stop, pick and compare every candidate on this metric, in its
        direction: a gbrank metric name such as ndcg@10, err@10, map@5, pair_accuracy,
        f1, fbeta:2, ap, logloss (minimised), macro_f1 (any that
        :func:`gbrank.metrics.get_metric` reads). Stored
        lower-cased; a task whose kind it cannot judge is refused (ValueError) when
        tuned. ``None``: each objective on its own metric, the verdict on the task's
        first metric.
    finalists : int, default 3
        Best trials of each study (by their CV value as tuned) rescored on fresh folds
        before the pick. The best rescored one is recommended; at least 1.
    repeats : int, default 2
        Fresh shuffles of the folds the finalists are rescored on. ``repeats * n_folds``
        scores per metric; at least 1.
    n_jobs : int, default 1
        Booster threads per training. At least 1; more processes on one ``storage`` use
        more cores.
    objectives : list of str, optional
        Keys of the candidate objectives (comma-separated on the command line):
        ranknet, lambdarank:ndcg|err|map|mrr, focal, fbeta_surrogate, native:<booster
        objective>. Each task studies the keys of its
        kind; a list without a ``native:`` key gets the booster's default native
        objectives. ``None``: the defaults of each task.
    custom : dict of str to objective, default {}
        Extra gbrank objective instances by study key (``{"my_rank":
        LambdaRank(sigma=2.0)}``): RankNet, LambdaRank, FocalLoss, FBetaSurrogate or
        their subclasses, each studied on the tasks of its kind, gated and tuned like
        the built-in ones. No flag.
    heartbeat : int, default 10
        Seconds between the heartbeats a running trial records in the storage. A trial
        whose heartbeat is older than ``grace`` (its process was killed) is failed and
        its parameters are tried again; at least 1.
    grace : int, optional
        Seconds without a heartbeat after which a running trial is failed, at least 1;
        ``None``: ``3 * heartbeat``. No flag.
    anchor : bool, default False
        Also run Optuna's LightGBMTunerCV on native lambdarank, with the tuner's time on
        the task as its budget, as one more result the verdict compares with. Only for
        ranking tasks that are not click logs, with ``booster="lightgbm"`` and
        ``report=True``; needs ``gbrank[anchor]``.
    baselines : list of str, optional
        Other libraries tuned beside the studies as baselines the verdict can name
        (comma-separated on the command line): ``catboost`` tunes CatBoost's YetiRank,
        LambdaMart and QueryRMSE on the same folds and metric, with the same trials,
        finalists and rescoring as every study, refit and tested like them. Only for
        ranking tasks with queries that are not click logs, with ``report=True``; needs
        ``gbrank[catboost]`` (gbrank's objectives cannot run inside CatBoost: its custom
        objectives see no queries). ``None``: none.
    save_models : bool, default True
        Export each study's refit model and its ``params.json`` to
        ``<out_dir>/tune/models/<study>/`` (with ``report=True``). No flag.
    plots : bool, default True
        Draw each study's PNG plots under ``<out_dir>/tune/<task>/`` (with
        ``report=True``). No flag.
    progress : bool, default True
        Print progress lines (one updating line on a terminal). False (``--quiet``):
        print nothing.
    run_trials : bool, default True
        Run trials. False (``--report-only``, and the parent process of ``--workers
        N``): only load the stored studies and report on them.
    report : bool, default True
        After the trials, pick each study's recommended configuration, refit it on the
        whole tuning part, score it on the held-out part and save its model and plots.
        False (``--trials-only``): trials only, each result holds the trial counts and
        the best trial. ``run_trials`` and ``report`` may not both be False.
    worker : int, optional
        The number (at least 0) of a worker process, shown in its progress lines
        (``[tune w3]``, plain lines, never an updating one). ``None``: not a worker;
        ``--workers N`` sets it for the processes it starts.

    Examples
    --------
    >>> from pathlib import Path
    >>> from gbrank.tuning import TuneConfig
    >>> cfg = TuneConfig(trials=20, objectives=["lambdarank:ndcg", "ranknet"],
    ...                  out_dir=Path("studies"), plots=False)
    >>> cfg.booster, cfg.n_folds, cfg.rounds(clicks=False), cfg.rounds(clicks=True)
    ('lightgbm', 3, (1000, 50), (100, 15))
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
    max_rounds: int | None = None
    patience: int | None = None
    seed: int = 0
    storage: str | None = None
    out_dir: Path = Path("gbrank-results")
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
    baselines: list[str] | None = None
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
        for name, low in (("trials", 1), ("n_folds", 2), ("n_jobs", 1), ("heartbeat", 1),
                          ("finalists", 1), ("repeats", 1)):
            check_integer(getattr(self, name), name, low)
        for name in ("max_rounds", "patience"):
            check_integer(getattr(self, name), name, 1, allow_none=True)
        check_integer(self.grace, "grace", 1, allow_none=True)
        check_integer(self.worker, "worker", 0, allow_none=True)
        for name in ("quick", "anchor", "save_models", "plots", "progress", "run_trials",
                     "report"):
            check_bool(getattr(self, name), name)
        if not (self.run_trials or self.report):
            raise ValueError("run_trials and report are both False: nothing to do")
        self._check_objectives()
        self._check_baselines()
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

    def rounds(self, clicks: bool) -> tuple[int, int]:
        """The most rounds and the patience of a task's trainings: ``max_rounds`` and
        ``patience``, or else ``ROUNDS`` (this module) for a click log (``clicks``) or
        another task."""
        r, p = ROUNDS["clicks" if clicks else "labels"]
        return (r if self.max_rounds is None else self.max_rounds,
                p if self.patience is None else self.patience)

    def budget(self, clicks: bool) -> tuple[int, int, int, int]:
        """What every trial's score depends on besides its parameters and the data: CV
        folds, their seed, most rounds, patience (a part of each study's name)."""
        return (self.n_folds, self.seed, *self.rounds(clicks))

    def _check_baselines(self) -> None:
        """Known baseline libraries, installed (an ImportError naming the extra)."""
        if self.baselines is None:
            return
        if isinstance(self.baselines, str) or not all(
                isinstance(b, str) for b in self.baselines):
            raise ValueError(f"baselines must be a list of library names such as "
                             f"['catboost'], got {self.baselines!r}")
        self.baselines = [b.strip().lower() for b in self.baselines]
        for b in self.baselines:
            check_choice(b, "baselines", BASELINES)
        for b in self.baselines:
            require(b)

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


_PARAM = re.compile(r"^    (\w+) : ", re.M)
_SENTENCE_END = re.compile(r"(?<!e\.g)(?<!i\.e)\.(?:\s|$)")


def field_help(name: str, case: str | None = None) -> str:
    """The first sentence of field ``name``'s documentation in :class:`TuneConfig`, as
    plain text (the command line's help of its flag); with ``case`` (``"None"``,
    ``"False"``), what that value means: the text after ``None:`` or ``False (…):`` up
    to the end of its sentence.

    Examples
    --------
    >>> from gbrank.tuning._config import field_help
    >>> field_help("n_jobs")
    'Booster threads per training.'
    >>> field_help("storage", "None")
    'sqlite:///<out_dir>/studies.db.'
    >>> field_help("progress", "False")
    'print nothing.'
    """
    doc = TuneConfig.__doc__ or ""
    params = doc[doc.index("Parameters\n"):doc.index("Examples\n")]
    starts = {m.group(1): m.end() for m in _PARAM.finditer(params)}
    text = params[starts[name]:].split("\n", 1)[1]
    text = _PARAM.split(text, 1)[0]
    text = " ".join(text.split())
    text = plain_text(text)
    if case is not None:
        text = text[re.search(rf"{case}(?: \([^)]*\))?: ", text).end():]
    end = _SENTENCE_END.search(text)
    return text[: end.start() + 1] if end else text
