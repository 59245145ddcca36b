"""Tuning tasks: data with a held-out test split and the metrics that judge it (the
builders of tasks from arrays, the embedded data and LETOR folders are in
:mod:`~gbrank.tuning._sources`)."""

from __future__ import annotations

import hashlib
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from gbrank._queries import query_structure, tie_order
from gbrank._validation import check_choice

__all__ = ["Task", "check_metric", "is_cutoff", "native_learns_positions", "task_metrics",
           "with_metric"]

RANKING_METRICS = ("ndcg@10", "err@10", "map@10", "mrr@10", "pair_accuracy")
# Group-less ranking (all rows one query): a cut-off metric saturates on one long list
# of many rows per grade (NDCG@10 is 1 once the top 10 rows hold the top grade), so the
# headline is NDCG over the whole list.
GROUPLESS_METRICS = ("ndcg", *RANKING_METRICS)
# A click log is judged by the click metric only: a metric of the clicks as labels
# (NDCG of clicks) rewards reproducing the logging ranker's position bias.
CLICK_METRICS = ("ips_dcg@10",)
# The largest grade LightGBM's lambdarank takes with its default gain table (31 entries,
# 2^l − 1): a larger one fails every trial of the baseline the verdict needs.
MAX_NATIVE_GRADE = 30
BINARY_METRICS = ("ap", "f1")
MULTICLASS_METRICS = ("macro_f1", "weighted_f1", "balanced_accuracy", "mlogloss")

# The kinds of gbrank metric (gbrank.metrics.Metric.kind) that can judge a task of each
# kind; multiclass tasks are judged on (n, K) scores, by the multiclass metrics only.
METRIC_KINDS = {
    "ranking": ("ranking", "pointwise"),
    "binary": ("binary", "pointwise", "ranking"),
    "multiclass": ("multiclass",),
}
KINDS = tuple(METRIC_KINDS)


def task_metrics(kind: str, groupless: bool = False) -> tuple[str, ...]:
    """Every metric a study of this kind records (the first is the task's headline);
    group-less ranking (``groupless=True``) is headed by ``ndcg``, NDCG over the whole
    list, which a cut-off metric of one list of many rows would saturate.

    Examples
    --------
    >>> from gbrank.tuning._tasks import task_metrics
    >>> task_metrics("ranking")[0], task_metrics("ranking", groupless=True)[0]
    ('ndcg@10', 'ndcg')
    """
    if kind == "ranking" and groupless:
        return GROUPLESS_METRICS
    return {"ranking": RANKING_METRICS, "multiclass": MULTICLASS_METRICS}.get(
        kind, BINARY_METRICS)


def is_cutoff(metric: str) -> bool:
    """Whether ``metric`` judges only the top k rows of a list (``ndcg@10``,
    ``err@5``, ``ips_dcg@10``): on group-less ranking, one list of every row, such a
    metric saturates.

    Examples
    --------
    >>> from gbrank.tuning._tasks import is_cutoff
    >>> is_cutoff("ndcg@10"), is_cutoff("ndcg"), is_cutoff("pair_accuracy"), is_cutoff("ap")
    (True, False, False, False)
    """
    from gbrank.metrics import get_metric

    return get_metric(metric).params.get("k") is not None


def check_metric(name: str, kind: str, *, clicks: bool = False) -> str:
    """The canonical name of metric ``name`` (any :func:`gbrank.metrics.get_metric`
    name), refused with a ValueError when it cannot judge a task of ``kind``.

    Ranking tasks take ranking metrics (``ndcg@10``, ``err@5``, ``pair_accuracy``, …)
    and the per-row calibration losses (``logloss``, ``ece``); binary tasks take binary
    metrics (``f1``, ``fbeta:2``, …), ``ap``, the calibration losses and ranking
    metrics over all rows as one list (``precision@100``); multiclass tasks take the
    multiclass metrics (``macro_f1``, ``weighted_f1``, ``balanced_accuracy``,
    ``mlogloss``, …). A click log (``clicks=True``: a ranking task whose labels are
    clicks, with positions) takes the click metrics only (``ips_dcg@k``): any metric
    of the clicks as labels rewards the logging ranker's position bias.

    Examples
    --------
    >>> from gbrank.tuning._tasks import check_metric
    >>> check_metric("NDCG@10", "ranking")
    'ndcg@10'
    >>> check_metric("ap", "binary")
    'ap'
    """
    from gbrank.metrics import get_metric

    m = get_metric(str(name))
    key, metric_kind = m.name, m.kind
    if clicks:
        if metric_kind != "clicks":
            raise ValueError(f"metric {key!r} would judge the clicks as true labels, which "
                             "rewards the position bias of the logged ranking; a click log "
                             "is judged by ips_dcg@k (clicks weighed by 1/propensity of "
                             "their logged positions), e.g. ips_dcg@10")
        return key
    if metric_kind not in METRIC_KINDS[kind]:
        examples = {"multiclass": ("macro_f1, weighted_f1, micro_f1, macro_fbeta:β, "
                                   "balanced_accuracy or mlogloss"),
                    "binary": "ap, f1, fbeta:β, balanced, logloss or ece",
                    "ranking": "ndcg@k, err@k, map@k, mrr or pair_accuracy"}[kind]
        raise ValueError(f"metric {key!r} is a {metric_kind} metric; a {kind} task is "
                         f"judged by {' or '.join(METRIC_KINDS[kind])} metrics, e.g. "
                         f"{examples}")
    return key


def with_metric(task: Task, metric: str) -> Task:
    """``task`` judged first by ``metric`` (checked with :func:`check_metric`): the
    metric heads the task's recorded metrics, which are otherwise kept.

    Examples
    --------
    >>> from gbrank.datasets import make_ranking
    >>> from gbrank.tuning import task_from_arrays
    >>> from gbrank.tuning._tasks import with_metric
    >>> X, y, group = make_ranking(n_queries=20, rows_per_query=10, n_features=5)
    >>> with_metric(task_from_arrays("tiny", X, y, group), "err@5").metrics[:2]
    ('err@5', 'ndcg@10')
    """
    from dataclasses import replace

    metric = check_metric(metric, task.kind, clicks=task.clicks)
    return replace(task, metrics=(metric, *(m for m in task.metrics if m != metric)),
                   notes=list(task.notes))


@dataclass
class Task:
    """One data set to tune on.

    ``X``, ``y``, ``group`` are the tuning part (cross-validated, then refit on);
    ``X_test``, ``y_test``, ``group_test`` the held-out part, never seen while tuning
    (for grouped ranking: whole queries). ``group`` is ``None`` for binary and
    multiclass data and for group-less ranking, which is declared, never inferred: a
    ranking task without query sizes needs ``groupless=True`` (all rows of each part
    are one query), else it is refused naming both fixes.
    ``feature_names`` (one per column of ``X``, e.g. a table's column names) name the
    features of every booster the tuner trains and saves; ``None``: the boosters'
    defaults (``Column_0``, ``f0``, ...).

    ``kind`` is ``"ranking"``, ``"binary"`` or ``"multiclass"`` (labels: the integers
    ``0 … K−1``, K > 2, the class of each row); ``metrics`` (default: those of the
    kind, the first being the headline) are recorded for every study of the task.
    :func:`task_from_arrays` makes a task with a held-out split from one data set.
    A ranking task's labels are grades 0 … 30 (LightGBM's ``lambdarank``, the baseline,
    takes no more). Its validation and held-out rows are judged in a pseudo-random
    order within each query, a hash of each row's values (a click log's stay in display
    order): every ranking metric breaks a tie of scores by row order, so an order in
    the data, rows sorted by grade, must not score.

    A click log is a ranking task whose labels are clicks (0/1): ``position`` and
    ``position_test`` hold every row's logged display position (they follow their rows
    through every fold and split), ``propensity`` the examination probabilities
    ρ(1), ρ(2), … (or ``{position: ρ}``) of the positions, required with positions:
    the task is judged by ``ips_dcg@10`` (its ``metrics``), each held-out click divided
    by the ρ of its position, which no learned estimate may replace. A click log whose
    held-out part has true grades instead (``position_test=None``, e.g. editorial
    judgments) is tuned on the clicks as above and its test part is judged by the
    ranking metrics on those grades (``test_metrics``).

    Parameters
    ----------
    name : str
        The task's name: it names the task's studies (with a hash of the data, so a
        re-run on the same data resumes them), its section of ``SUMMARY.md`` and its
        plots' folder.
    kind : {"ranking", "binary", "multiclass"}
        What the labels are: relevance grades of ranked lists, the classes 0/1, or the
        classes ``0 … K−1`` (K > 2).
    X : ndarray or scipy.sparse matrix of shape (n_rows, n_features)
        Features of the tuning part (cross-validated, then refit on); rows are taken
        as ``X[idx]``.
    y : ndarray of shape (n_rows,)
        Labels of the tuning part: grades (ranking), 0/1 (binary), class indices
        (multiclass), or 0/1 clicks (a click log).
    group : ndarray of int, optional
        Query sizes of the tuning part in row order (each query's rows contiguous), at
        least two queries; ``None`` for binary and multiclass data and for group-less
        ranking (``groupless=True``).
    X_test : ndarray or scipy.sparse matrix of shape (n_test, n_features)
        Features of the held-out part, never seen while tuning: only the refit models
        are scored on it.
    y_test : ndarray of shape (n_test,)
        Labels of the held-out part, as ``y`` (or true grades, see ``position_test``).
    group_test : ndarray of int, optional
        Query sizes of the held-out part, as ``group`` (given with ``group``, ``None``
        without it).
    description : str, default ""
        A line about the data for the progress lines and the report (empty: the
        progress lines show the kind).
    metrics : tuple of str, default ()
        The metrics recorded for every study of the task (per fold, rescored and on
        the held-out part), the first being the headline the report's verdict uses;
        gbrank metric names that suit the kind. Empty: those of the kind
        (``ndcg@10``, ``err@10``, ``map@10``, ``mrr@10``, ``pair_accuracy`` for
        ranking, headed by ``ndcg`` for group-less ranking; ``ap``, ``f1`` for binary;
        ``macro_f1``, ``weighted_f1``, ``balanced_accuracy``, ``mlogloss`` for
        multiclass; ``ips_dcg@10`` for a click log). A run with :class:`TuneConfig`'s
        ``metric`` puts that metric first (checked for the kind), keeping the others.
    feature_names : list of str, optional
        One unique name per column of ``X`` and ``X_test`` (e.g. a table's column
        names), given to every booster the tuner trains and saves; ``None``: the
        boosters' defaults (``Column_0``, ``f0``, ...).
    position : ndarray of int, optional
        Makes the task a click log (kind ``"ranking"``, ``y`` of 0/1 clicks): every
        tuning row's logged display position (an integer ≥ 0, e.g. 1-based ranks),
        kept with its row through every fold; ``propensity`` is then required.
        ``None``: not a click log. The command line reads it from ``--position-col``.
    position_test : ndarray of int, optional
        The held-out rows' logged positions, when the held-out part is clicks too
        (judged by ``ips_dcg@10``). ``None`` with ``position`` given: ``y_test`` holds
        true grades (e.g. editorial judgments), judged by the ranking metrics
        (``test_metrics``), as the command line reads a ``--test-data`` table without
        the ``--position-col`` column. Refused without ``position``.
    propensity : sequence of float or dict of int to float, optional
        Examination probabilities in (0, 1] of the logged positions: ρ(1), ρ(2), …
        of positions 1, 2, …, or ``{position: ρ}``; every logged position needs one.
        Required with ``position`` and refused without it (the command line's
        ``--propensity``). ``ips_dcg@10`` divides each click it scores (validation
        folds, held-out part) by the ρ of its position; the gbrank studies'
        ``position_bias="ipw"`` uses them too.
    groupless : bool, default False
        Declares group-less ranking: each part's rows are one query (``group`` and
        ``group_test`` are ``None``); folds are over rows, the code the report shows
        trains ``GBRanker(..., groupless=True)``, the default ``metrics`` are headed by
        ``ndcg`` (NDCG over the whole list), and a study whose objective's own metric
        is a cut-off one (``ndcg@10``), which one list of many rows saturates, is judged
        on the task's headline instead. A ranking task without ``group`` must declare
        it (or give query sizes); refused beside ``group`` and for binary and
        multiclass tasks. The command line's ``--groupless``.
    blocks : ndarray of int, optional
        A click log's block of each tuning-part session (``group``'s lists): sessions of
        one block (one query, or sessions sharing a document) stay on one side of every
        fold; None: each list its own block.
    notes : list of str
        What a run found in the data that changed its search (a click log that cannot
        identify position effects, or whose users look like cascade users): printed as
        the run goes and written under the task's heading in SUMMARY.md. Filled by
        the run, not given.
    held_out_rows : ndarray of int64, optional
        The held-out rows' places in the source the task was drawn from, in the order
        the held-out part holds them (:func:`~gbrank.tuning.task_from_arrays` sets them:
        its ``rows``); ``None`` when the held-out part was given apart. ``SUMMARY.md``
        lists them in ``held_out_<task>.txt`` beside it, so the test figures can be
        checked: rows taken in that order give them exactly, ties of scores included.

    Examples
    --------
    >>> from gbrank.datasets import make_ranking
    >>> from gbrank.tuning import Task
    >>> X, y, group = make_ranking(n_queries=20, rows_per_query=10, n_features=5)
    >>> task = Task("tiny", "ranking", X[:150], y[:150], group[:15],
    ...             X[150:], y[150:], group[15:])
    >>> task.grouped, task.metrics[0]
    (True, 'ndcg@10')
    """

    name: str
    kind: str
    X: Any
    y: np.ndarray
    group: np.ndarray | None
    X_test: Any
    y_test: np.ndarray
    group_test: np.ndarray | None
    description: str = ""
    metrics: tuple[str, ...] = field(default=())
    feature_names: list[str] | None = None
    position: np.ndarray | None = None
    position_test: np.ndarray | None = None
    propensity: Any = None
    groupless: bool = False
    blocks: np.ndarray | None = None
    notes: list[str] = field(default_factory=list)
    held_out_rows: np.ndarray | None = None

    def __post_init__(self) -> None:
        from gbrank._validation import check_bool

        check_choice(self.kind, "kind", KINDS)
        self.groupless = check_bool(self.groupless, "groupless")
        self._check_queries()
        self._check_shapes()
        if self.blocks is not None:
            self.blocks = np.unique(np.asarray(self.blocks).ravel(),
                                    return_inverse=True)[1].ravel().astype(np.int64)
            if self.group is None or self.blocks.size != self.group.size:
                raise ValueError(f"{self.name}: blocks gives the block of each query of the "
                                 f"tuning part; {self.blocks.size} values for "
                                 f"{0 if self.group is None else self.group.size} queries")
        if self.position is None and self.position_test is not None:
            raise ValueError(f"{self.name}: the test part has positions and the tuning part "
                             "has none; a click log needs position (and position_test for "
                             "a held-out part of clicks; none for one of true grades)")
        if self.position is not None:
            self._check_clicks()
        elif self.propensity is not None:
            raise ValueError(f"{self.name}: propensities weigh the clicks of logged "
                             "positions, and the task has no positions")
        if self.kind == "binary":
            from gbrank._validation import prepare_binary

            for part, y in (("y", self.y), ("y_test", self.y_test)):
                try:  # refused here, before any study starts, not in its first metric
                    prepare_binary(y, np.zeros(len(y)))
                except ValueError as exc:
                    raise ValueError(f"{self.name}: {part}: {exc} (a binary task; "
                                     "graded labels are a ranking or multiclass task)"
                                     ) from None
        if self.kind == "multiclass":
            for part, y in (("y", self.y), ("y_test", self.y_test)):
                y = np.asarray(y, dtype=np.float64)
                bad = np.flatnonzero((y != np.floor(y)) | (y < 0))
                if bad.size:
                    raise ValueError(f"{self.name}: multiclass labels must be the integers "
                                     f"0 … K-1; {part}[{bad[0]}] is {y[bad[0]]!r}")
            if self.num_class < 3:
                raise ValueError(f"{self.name}: a multiclass task needs labels of 3 or "
                                 f"more classes; the largest is {self.num_class - 1:g}")
            seen = np.union1d(np.unique(self.y), np.unique(self.y_test))
            if seen.size < self.num_class:  # labels 1 … K, or with gaps
                missing = sorted(set(range(self.num_class)) - set(seen.astype(int).tolist()))
                raise ValueError(
                    f"{self.name}: multiclass labels are the classes 0 … K-1, and class(es) "
                    f"{missing[:5]} of 0 … {self.num_class - 1} have no row (labels "
                    f"{seen.astype(int).tolist()[:8]}): number the classes from 0 without "
                    "gaps, e.g. np.unique(y, return_inverse=True)[1]")
        if self.kind == "ranking":
            self._check_grades()
            if self.position_test is None:  # no display order to keep (graded, or no log)
                self._order_test_ties()
        if not self.metrics:
            self.metrics = (CLICK_METRICS if self.clicks
                            else task_metrics(self.kind, self.groupless))
        elif isinstance(self.metrics, str):
            raise ValueError(f"{self.name}: metrics must be a tuple of metric names, got "
                             f"{self.metrics!r}")
        else:
            try:
                self.metrics = tuple(check_metric(m, self.kind, clicks=self.clicks)
                                     for m in self.metrics)
            except ValueError as exc:
                raise ValueError(f"{self.name}: metrics: {exc}") from None
        if self.feature_names is not None:
            names = [str(n) for n in self.feature_names]
            for part, X in (("X", self.X), ("X_test", self.X_test)):
                if X.shape[1] != len(names):
                    raise ValueError(f"{self.name}: {len(names)} feature_names for "
                                     f"{X.shape[1]} columns of {part}")
            twice = sorted({n for n in names if names.count(n) > 1})
            if twice:
                raise ValueError(f"{self.name}: feature_names must be unique; {twice!r} "
                                 "occur more than once")
            self.feature_names = names

    def _check_grades(self) -> None:
        """Ranking labels are the grades 0, 1, 2, … that every ranking metric and
        LightGBM's ``lambdarank`` (whose gain table ends at 30) read; anything else is
        refused here, naming the fix, not in the first study's traceback."""
        for part, y in (("y", self.y), ("y_test", self.y_test)):
            y = np.asarray(y, dtype=np.float64)
            bad = np.flatnonzero((y != np.floor(y)) | (y < 0) | ~np.isfinite(y))
            if bad.size:
                raise ValueError(
                    f"{self.name}: ranking labels must be the grades 0, 1, 2, …; "
                    f"{part}[{bad[0]}] is {y[bad[0]]!r}: shift or round them to grades "
                    "(the order of the grades is what counts), or pass --task "
                    "binary|multiclass if they are classes")
            if not self.clicks and y.size and y.max() > MAX_NATIVE_GRADE:
                raise ValueError(
                    f"{self.name}: {part} has grades up to {y.max():g}; NDCG's gain 2^l − 1 "
                    f"and LightGBM's lambdarank (the baseline) take grades 0 … "
                    f"{MAX_NATIVE_GRADE}: map them to fewer levels (e.g. quantiles, or "
                    "np.unique(y, return_inverse=True)[1] for up to "
                    f"{MAX_NATIVE_GRADE + 1} distinct grades)")

    def _order_test_ties(self) -> None:
        """The held-out part's rows of each query in :func:`~gbrank._queries.tie_order`
        (the folds' validation parts are judged in it too, :func:`make_folds`): a
        file's order, rows sorted by grade, no longer breaks the ties of a model that
        scores rows alike (a 1-round pick reported NDCG@10 0.92 where its ties averaged
        0.75, probe 65). ``held_out_rows`` follow their rows; a task made again from a
        task's arrays (``dataclasses.replace``) keeps them as they are."""
        order = tie_order(self.X_test, self.y_test, self.group_test)
        if not np.array_equal(order, np.arange(order.size)):
            X = self.X_test.tocsr() if hasattr(self.X_test, "tocsr") else self.X_test
            self.X_test, self.y_test = X[order], np.asarray(self.y_test)[order]
            if self.held_out_rows is not None:
                self.held_out_rows = np.asarray(self.held_out_rows)[order]

    def _check_queries(self) -> None:
        """Group-less ranking is declared: a ranking task without query sizes needs
        ``groupless=True``, which refuses query sizes and other kinds."""
        given = [part for part, g in (("group", self.group), ("group_test", self.group_test))
                 if g is not None]
        if self.groupless:
            _check_groupless(self.name, self.kind, given)
            return
        if self.kind != "ranking":
            return
        if not given:
            raise ValueError(f"{self.name}: a ranking task without query sizes: give them "
                             "(group=, group_test=; task_from_arrays(..., group)) or, if all "
                             "rows of each part really are one query (group-less ranking), "
                             "declare it: groupless=True")
        if len(given) == 1:
            have, lack = given[0], ({"group", "group_test"} - set(given)).pop()
            raise ValueError(f"{self.name}: {have} (query sizes) is given and {lack} is "
                             f"not: give {lack} too (both parts have queries), or declare "
                             "group-less ranking with groupless=True and neither")
        if np.size(self.group) < 2:
            raise ValueError(f"{self.name}: group holds one query; the folds are over "
                             "queries and need several: give the query sizes of several "
                             "queries or, for one query of all rows, declare it: "
                             "groupless=True (with group=None, folds over rows)")

    def _check_shapes(self) -> None:
        """Rows of X and labels agree in each part, both parts have the same columns, and
        query sizes are positive and cover their part's rows (the folds and the
        held-out scores would otherwise fail far from here, or pair the wrong rows)."""
        for part, X, y, group in (("", self.X, self.y, self.group),
                                  ("_test", self.X_test, self.y_test, self.group_test)):
            n = np.shape(y)[0]
            if X.shape[0] != n:
                raise ValueError(f"{self.name}: X{part} has {X.shape[0]} rows and y{part} "
                                 f"{n} labels")
            if group is not None:
                try:
                    query_structure(n, group=group)
                except ValueError as exc:
                    raise ValueError(f"{self.name}: group{part} (query sizes of y{part}'s "
                                     f"{n} rows, in row order): {exc}") from None
        if self.X.shape[1] != self.X_test.shape[1]:
            raise ValueError(f"{self.name}: X has {self.X.shape[1]} columns and X_test "
                             f"{self.X_test.shape[1]}")

    def _check_clicks(self) -> None:
        """A click log: a ranking task of 0/1 clicks, every row's position, and the
        propensities of every logged position."""
        from gbrank._validation import (
            check_clicks,
            check_grades,
            check_positions,
            check_propensity,
            propensity_per_row,
            repeated_position,
        )

        if self.kind != "ranking":
            raise ValueError(f"{self.name}: positions belong to a click log, a ranking "
                             f"task; this task is {self.kind}")
        if self.propensity is None:
            raise ValueError(
                f"{self.name}: a click log is judged by ips_dcg@10, which divides each "
                "held-out click by the examination propensity of its logged position; give "
                "the propensities (gbrank tune --propensity rho1,rho2,...; "
                "Task(propensity=...))")
        table = check_propensity(self.propensity, "propensity")
        if self.position_test is None:  # a held-out part of true grades
            check_grades(np.asarray(self.y_test, dtype=np.float64), integer=False,
                         max_grade=None, name=f"{self.name}: the held-out part's grades")
        for part, pos, y, g in (("position", self.position, self.y, self.group),
                                ("position_test", self.position_test, self.y_test,
                                 self.group_test)):
            if pos is None:
                continue
            pos = check_positions(pos, np.size(y), part)
            twice = repeated_position(pos, g)
            if twice is not None:
                i, at, rows = twice
                raise ValueError(
                    f"{self.name}: {part}: list {i} shows position {at} on {rows} rows: its "
                    "rows are several sessions under one id, and a click log's lists are "
                    "sessions (each position once); give each session its own id (gbrank "
                    "tune --qid-col SESSION, with --query-col QUERY for the queries)")
            propensity_per_row(table, pos, "propensity",
                               " (gbrank tune --propensity: one value per position 1, 2, …)")
            setattr(self, part, pos)
            check_clicks(np.asarray(y, dtype=np.float64), f"{self.name}: a click log "
                         "(rows with positions)", "its labels")

    @property
    def clicks(self) -> bool:
        """True for a click log (rows with logged positions, judged by ``ips_dcg@10``)."""
        return self.position is not None

    @property
    def graded_test(self) -> bool:
        """True for a click log whose held-out part has true grades (no positions)."""
        return self.position is not None and self.position_test is None

    @property
    def test_metrics(self) -> tuple[str, ...]:
        """The metrics of the held-out part: the ranking metrics on its true grades for
        a ``graded_test``, else ``metrics``."""
        return task_metrics("ranking") if self.graded_test else self.metrics

    @property
    def graded_test_metric(self) -> str | None:
        """The metric a ``graded_test``'s true grades are reported by (``None`` for any
        other task)."""
        return self.test_metrics[0] if self.graded_test else None

    def positions(self, idx: np.ndarray) -> np.ndarray | None:
        """The logged positions of tuning rows ``idx`` (``None`` without positions)."""
        return None if self.position is None else self.position[idx]

    @property
    def num_class(self) -> int:
        """The number of classes K of a multiclass task (the largest label + 1, over
        both parts); 1 for the other kinds."""
        if self.kind != "multiclass":
            return 1
        return int(max(np.max(self.y, initial=0), np.max(self.y_test, initial=0))) + 1

    @property
    def grouped(self) -> bool:
        """True when the rows are split into several queries."""
        return self.group is not None

    def lgb_group(self, group: np.ndarray | None, n: int) -> np.ndarray | None:
        """Query sizes to hand a booster: group-less ranking is one query of all rows."""
        if self.kind != "ranking":
            return None
        return np.asarray([n], dtype=np.int64) if self.groupless else group

    def fingerprint(self) -> str:
        """Short hash of the data (labels, query sizes, every feature value of both
        parts), so study names change when the data change and stay the same when they
        do not."""
        h = hashlib.sha1()
        for a in (self.y, self.group, self.y_test, self.group_test):
            h.update(b"-" if a is None else np.ascontiguousarray(a, dtype=np.float64).tobytes())
        h.update(repr((self.X.shape, self.X_test.shape)).encode())
        if self.clicks:  # (tasks without positions keep the hash they always had)
            for a in (self.position, self.position_test):
                h.update(b"-" if a is None else
                         np.ascontiguousarray(a, dtype=np.float64).tobytes())
            h.update(repr(np.asarray(self.propensity if not isinstance(
                self.propensity, dict) else sorted(self.propensity.items()))).encode())
        if self.blocks is not None:  # the folds split whole blocks
            h.update(b"blocks" + np.ascontiguousarray(self.blocks, np.float64).tobytes())
        # Every value: a sample of rows let a corrected column past it resume the old
        # data's studies (their CV reported as the new data's).
        for X in (self.X, self.X_test):
            _hash_matrix(h, X)
        return h.hexdigest()[:8]


def _hash_matrix(h: Any, X: Any, rows: int = 8192) -> None:
    """Feed every value of ``X`` (dense or sparse) to hash ``h``, a block of rows at a
    time (no float64 copy of the whole matrix)."""
    if hasattr(X, "tocsr"):
        X = X.tocsr()
        if not X.has_canonical_format:  # on a copy: the task's matrix is not changed
            X = X.copy()
            X.sum_duplicates()
        kept = X.data != 0  # a stored zero is the same data as an absent one
        rows = np.repeat(np.arange(X.shape[0], dtype=np.int64), np.diff(X.indptr))
        for a in (rows[kept], X.indices[kept]):
            h.update(np.ascontiguousarray(a, dtype=np.int64).tobytes())
        h.update(np.ascontiguousarray(X.data[kept], dtype=np.float64).tobytes())
        return
    X = np.asarray(X)
    for start in range(0, X.shape[0], rows):
        h.update(np.ascontiguousarray(X[start:start + rows], dtype=np.float64).tobytes())


def native_learns_positions(booster_params: dict) -> bool:
    """Whether a native LightGBM configuration learns from a click log's positions (its
    training Dataset holds them): exactly when its position-bias penalty is searched,
    i.e. on a click log whose users are not cascade-like (``NATIVE_CLICKS``)."""
    return "lambdarank_position_bias_regularization" in booster_params


def _check_groupless(name: str, kind: str, given: list[str]) -> None:
    """``groupless=True`` declares group-less ranking: refused for another kind and
    beside query sizes (the parts named in ``given``)."""
    if kind != "ranking":
        raise ValueError(f"{name}: groupless=True declares group-less ranking (all rows one "
                         f"query); this task is {kind}: drop groupless=True")
    if given:
        raise ValueError(f"{name}: groupless=True declares all rows one query, and "
                         f"{' and '.join(given)} (query sizes) "
                         f"{'was' if len(given) == 1 else 'were'} given: drop "
                         "groupless=True to rank within each query, or the query sizes")
