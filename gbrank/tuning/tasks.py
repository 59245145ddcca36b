"""Tuning tasks: data with a held-out test split and the metrics that judge it."""

from __future__ import annotations

import hashlib
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from gbrank._validation import check_choice, check_number

__all__ = ["Task", "default_tasks", "infer_kind", "task_from_arrays", "task_metrics"]

RANKING_METRICS = ("ndcg@10", "err@10", "map@10", "mrr@10", "pair_accuracy")
BINARY_METRICS = ("ap", "f1")


def task_metrics(kind: str) -> tuple[str, ...]:
    """Every metric a study of this kind records (the first is the task's headline)."""
    return RANKING_METRICS if kind == "ranking" else BINARY_METRICS


@dataclass
class Task:
    """One data set to tune on.

    ``X``, ``y``, ``group`` are the tuning part (cross-validated, then refit on);
    ``X_test``, ``y_test``, ``group_test`` the held-out part, never seen while tuning
    (for grouped ranking: whole queries). ``group`` is ``None`` for binary data and for
    group-less ranking (the rows are one query). ``feature_names`` (one per column of
    ``X``, e.g. a table's column names) name the features of every booster the tuner
    trains and saves; ``None``: the boosters' defaults (``Column_0``, ``f0``, ...).

    ``kind`` is ``"ranking"`` or ``"binary"``; ``metrics`` (default: those of the
    kind, the first being the headline) are recorded for every study of the task.
    :func:`task_from_arrays` makes a task with a held-out split from one data set.

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

    def __post_init__(self) -> None:
        check_choice(self.kind, "kind", ("ranking", "binary"))
        if not self.metrics:
            self.metrics = task_metrics(self.kind)
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

    @property
    def grouped(self) -> bool:
        """True when the rows are split into several queries."""
        return self.group is not None

    def lgb_group(self, group: np.ndarray | None, n: int) -> np.ndarray | None:
        """Query sizes to hand a booster: group-less ranking is one query of all rows."""
        if self.kind != "ranking":
            return None
        return np.asarray([n], dtype=np.int64) if group is None else group

    def fingerprint(self) -> str:
        """Short hash of the data (labels, query sizes, shape, a sample of X), so study
        names change when the data change and stay the same when they do not."""
        h = hashlib.sha1()
        for a in (self.y, self.group, self.y_test, self.group_test):
            h.update(b"-" if a is None else np.ascontiguousarray(a, dtype=np.float64).tobytes())
        h.update(repr((self.X.shape, self.X_test.shape)).encode())
        rows = self.X[: min(50, self.X.shape[0])]
        rows = rows.toarray() if hasattr(rows, "toarray") else np.asarray(rows)
        h.update(np.ascontiguousarray(rows, dtype=np.float64).tobytes())
        return h.hexdigest()[:8]


def _rows(X: Any, idx: np.ndarray) -> Any:
    return X[idx]


def infer_kind(y: Any, group: Any) -> str:
    """``"binary"`` for 0/1 labels without query structure, else ``"ranking"``."""
    y = np.asarray(y, dtype=np.float64)
    return "binary" if group is None and set(np.unique(y)) <= {0.0, 1.0} else "ranking"


def task_from_arrays(name: str, X: Any, y: Any, group: Any = None, *, kind: str | None = None,
                     test_size: float = 0.2, seed: int = 0, description: str = "",
                     feature_names: list[str] | None = None) -> Task:
    """Split data into a tuning part and a held-out test part.

    Grouped ranking: a random ``test_size`` share of the queries is held out (whole
    queries). Group-less ranking: random rows (both parts remain one query each).
    Binary: a stratified random share of the rows. ``kind`` defaults to ``"binary"``
    when the labels are all 0/1 and there is no query structure, else ``"ranking"``.
    ``feature_names``: see :class:`Task`.

    Parameters
    ----------
    name : str
    X, y, group
        Features, labels and query sizes (``None``: binary or group-less ranking).
    kind : {"ranking", "binary"}, optional
    test_size : float in (0, 1), default 0.2
        Share of the queries (grouped) or rows held out.
    seed : int, default 0
        Seed of the split.
    description : str, optional
        A line for the report.
    feature_names : list of str, optional

    Returns
    -------
    Task

    Examples
    --------
    >>> from gbrank.datasets import make_ranking
    >>> from gbrank.tuning import task_from_arrays
    >>> X, y, group = make_ranking(n_queries=20, rows_per_query=10, n_features=5)
    >>> task = task_from_arrays("tiny", X, y, group)
    >>> task.kind, task.group.size, task.group_test.size  # 4 of 20 queries held out
    ('ranking', 16, 4)
    """
    y = np.asarray(y, dtype=np.float64)
    if group is not None:
        group = np.asarray(group, dtype=np.int64)
        if group.size < 2:
            group = None
    if kind is None:
        kind = infer_kind(y, group)
    test_size = check_number(test_size, "test_size", 0.0, 1.0, low_open=True, high_open=True)
    rng = np.random.default_rng(seed)
    if group is not None:
        nq = group.size
        if nq < 4:
            raise ValueError(f"{name}: {nq} queries; need at least 4 to hold out a test split")
        test_q = np.zeros(nq, bool)
        test_q[rng.choice(nq, size=max(1, int(round(test_size * nq))), replace=False)] = True
        row_q = np.repeat(np.arange(nq), group)
        te = test_q[row_q]
        return Task(name, kind, _rows(X, np.flatnonzero(~te)), y[~te], group[~test_q],
                    _rows(X, np.flatnonzero(te)), y[te], group[test_q], description,
                    feature_names=feature_names)
    n = y.size
    if kind == "binary":
        pos, neg = np.flatnonzero(y == 1), np.flatnonzero(y != 1)
        if pos.size < 4:
            raise ValueError(f"{name}: {pos.size} positive rows; need at least 4")
        te_idx = np.concatenate([
            rng.choice(pos, size=max(1, int(round(test_size * pos.size))), replace=False),
            rng.choice(neg, size=max(1, int(round(test_size * neg.size))), replace=False)])
    else:
        te_idx = rng.choice(n, size=max(1, int(round(test_size * n))), replace=False)
    te = np.zeros(n, bool)
    te[te_idx] = True
    return Task(name, kind, _rows(X, np.flatnonzero(~te)), y[~te], None,
                _rows(X, np.flatnonzero(te)), y[te], None, description,
                feature_names=feature_names)


def default_tasks(quick: bool = False) -> list[Task]:
    """The embedded default data (no downloads), deterministic:

    * ``ranking``: synthetic MSLR-shaped graded relevance with query structure;
    * ``demand_levels``: a group-less demand-level task (one query, five equal grades);
    * ``binary``: synthetic imbalanced binary classification (3% positives).

    Parameters
    ----------
    quick : bool, default False
        Smaller data (the command line's ``--quick``).

    Returns
    -------
    list of Task

    Examples
    --------
    >>> from gbrank.tuning import default_tasks
    >>> [(t.name, t.kind, t.y.size + t.y_test.size) for t in default_tasks(quick=True)]
    [('ranking', 'ranking', 3000), ('demand_levels', 'ranking', 2500), ('binary', 'binary', 5000)]
    """
    from gbrank.datasets import make_demand_levels, make_imbalanced, make_ranking

    nq, rpq = (120, 25) if quick else (200, 25)
    X, y, g = make_ranking(n_queries=nq, rows_per_query=rpq, n_features=30, seed=0)
    rank = task_from_arrays("ranking", X, y, g, kind="ranking", seed=0, description=(
        f"make_ranking({nq} queries × {rpq} rows, 30 features, seed 0); "
        "20% of the queries held out"))
    n_d = 2500 if quick else 3000
    Xd, yd = make_demand_levels(n_rows=n_d, n_features=20, seed=0)
    demand = task_from_arrays("demand_levels", Xd, yd, None, kind="ranking", seed=0,
                              description=(f"make_demand_levels({n_d} rows, 5 grades, seed 0): "
                                           "one query, group-less; 20% of the rows held out"))
    # Group-less: NDCG@10 saturates near 1 on 600+ rows per grade, so the task also
    # records NDCG over the whole list (NDCG over every row) beside pair accuracy.
    demand.metrics = ("ndcg@10", "ndcg", "err@10", "map@10", "mrr@10", "pair_accuracy")
    n_b = 5000 if quick else 10000
    Xb, yb = make_imbalanced(n_rows=n_b, positive_rate=0.03, seed=0)
    binary = task_from_arrays("binary", Xb, yb, None, kind="binary", seed=0, description=(
        f"make_imbalanced({n_b} rows, 3% positives, seed 0); stratified 20% held out"))
    return [rank, demand, binary]
