"""Cross-validation folds: over queries (GroupKFold) or over rows (KFold), fixed once per
task so every study of the task sees the same folds and differences pair fold by fold."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from gbrank._queries import row_hash, tie_keys
from gbrank.tuning._tasks import Task

__all__ = ["Fold", "make_folds"]


@dataclass(frozen=True)
class Fold:
    """Row indices of one fold and query sizes: queries contiguous, in their order;
    the training rows ascending, a ranking task's validation rows of each query in
    :func:`~gbrank._queries.tie_order`."""

    train: np.ndarray
    valid: np.ndarray
    group_train: np.ndarray | None
    group_valid: np.ndarray | None


def make_folds(task: Task, n_folds: int = 3, seed: int = 0) -> list[Fold]:
    """``n_folds`` folds of ``task``'s tuning part.

    Grouped ranking: whole queries per fold (scikit-learn's ``GroupKFold`` over query
    ids after a seeded shuffle of the query order); a click log's whole blocks of
    sessions (:attr:`Task.blocks <gbrank.tuning.Task>`) when it has them. Group-less
    ranking: ``KFold`` over rows (each side is one query). Binary and multiclass:
    ``StratifiedKFold`` over rows (by class).
    """
    from sklearn.model_selection import GroupKFold, KFold, StratifiedKFold

    from gbrank._validation import check_integer

    n_folds = check_integer(n_folds, "n_folds", 2)
    n = task.y.size
    if task.grouped:
        nq = task.group.size
        if nq < n_folds:
            raise ValueError(f"n_folds={n_folds} is invalid: the data have only {nq} queries")
        block = np.arange(nq) if task.blocks is None else task.blocks
        nb = int(block.max()) + 1
        if nb < n_folds:
            raise ValueError(f"n_folds={n_folds} is invalid: the log's {nq} sessions form "
                             f"only {nb} blocks (sessions of one query stay together)")
        perm = np.random.default_rng(seed).permutation(nb)
        qid = np.repeat(perm[block], task.group)  # shuffled: GroupKFold splits by size
        splits = GroupKFold(n_splits=n_folds).split(np.zeros(n), groups=qid)
    elif n < 2 * n_folds:
        raise ValueError(f"n_folds={n_folds} is invalid: the tuning part has only {n} rows "
                         f"(at least {2 * n_folds} needed to split them into {n_folds} "
                         "folds); give more rows or fewer --folds")
    elif task.kind in ("binary", "multiclass"):
        splits = StratifiedKFold(n_folds, shuffle=True, random_state=seed).split(
            np.zeros(n), task.y)
    else:
        splits = KFold(n_folds, shuffle=True, random_state=seed).split(np.zeros(n))
    row_q = np.repeat(np.arange(task.group.size), task.group) if task.grouped else None
    # A validation part is judged in tie_order within each query (not a click log's,
    # whose rows stay in display order): no order of the data breaks its score ties.
    query = np.zeros(n, dtype=np.int64) if row_q is None else row_q
    keys = (tie_keys(row_hash(task.X, task.y), query)
            if task.kind == "ranking" and not task.clicks else None)
    folds = []
    for tr, va in splits:
        tr, va = np.sort(tr), np.sort(va)
        if keys is not None:
            va = va[np.lexsort((keys[va], query[va]))]
        if row_q is None:
            folds.append(Fold(tr, va, None, None))
        else:
            folds.append(Fold(tr, va, np.bincount(row_q[tr])[np.unique(row_q[tr])],
                              np.bincount(row_q[va])[np.unique(row_q[va])]))
    return folds
