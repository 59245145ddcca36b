"""Tasks from data: arrays split into a tuning part and a held-out part, the embedded
default data, and LETOR folders or files with the benchmark's own held-out part."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np

from gbrank._validation import check_number
from gbrank.tuning._tasks import Task, _check_groupless

__all__ = ["default_tasks", "infer_kind", "letor_task", "multiclass_task", "task_from_arrays"]


def infer_kind(y: Any, group: Any) -> str:
    """``"binary"`` for 0/1 labels without query structure, ``"multiclass"`` for the
    labels ``0 … K−1`` of K > 2 classes (every one present) without query structure,
    else ``"ranking"`` (group-less graded labels that are classes: pass the kind).

    Examples
    --------
    >>> from gbrank.tuning._sources import infer_kind
    >>> infer_kind([0, 1, 1, 0], None), infer_kind([0, 2, 1, 2], None)
    ('binary', 'multiclass')
    >>> infer_kind([0, 2, 1, 2], [2, 2]), infer_kind([0.5, 2, 1], None)
    ('ranking', 'ranking')
    """
    y = np.asarray(y, dtype=np.float64)
    if group is not None:
        return "ranking"
    values = np.unique(y)
    if set(values) <= {0.0, 1.0}:
        return "binary"
    if values.size > 2 and np.array_equal(values, np.arange(values.size)):
        return "multiclass"
    return "ranking"


def task_from_arrays(name: str, X: Any, y: Any, group: Any = None, *, kind: str | None = None,
                     test_size: float = 0.2, seed: int = 0, description: str = "",
                     feature_names: list[str] | None = None, position: Any = None,
                     propensity: Any = None, groupless: bool = False,
                     blocks: Any = None, rows: Any = None) -> Task:
    """Split data into a tuning part and a held-out test part.

    Grouped ranking: a random ``test_size`` share of the queries is held out (whole
    queries). Group-less ranking (``groupless=True``, or ``group`` of one query given
    explicitly): random rows (both parts remain one query each); ranking data without
    ``group`` and without the declaration are refused, naming both.
    Binary and multiclass: a random share of the rows of each class (stratified).
    ``kind`` is inferred by default: binary for 0/1 labels, multiclass for the classes
    ``0 … K−1``, K > 2, without query structure; else ranking (ranking with
    ``groupless=True``).
    ``feature_names``: see :class:`Task`. A click log: ``position`` (every row's
    logged display position, split with its row) and ``propensity`` (see
    :class:`Task`); its labels are clicks and its kind is ranking. A click log's lists
    are sessions, and sessions of one query show the same documents: the held-out part
    and the folds split whole blocks of sessions, ``blocks`` (the query of each session)
    or, without it, the sessions linked by an identical feature row (the same document),
    directly or through other sessions; the task's ``notes`` say which. A block of more
    than half the sessions is refused: no split of it keeps the parts apart.

    Parameters
    ----------
    name : str
    X, y, group
        Features, labels and query sizes (``None``: binary, multiclass or group-less
        ranking).
    kind : {"ranking", "binary", "multiclass"}, optional
    test_size : float in (0, 1), default 0.2
        Share of the queries (grouped) or rows held out.
    seed : int, default 0
        Seed of the split.
    description : str, optional
        A line for the report.
    feature_names : list of str, optional
    position : array-like of int, optional
        Logged display positions of a click log, one per row.
    propensity : sequence or dict, optional
        Examination probabilities of the positions (required with ``position``).
    groupless : bool, default False
        Declares group-less ranking: all rows are one query (see :class:`Task`);
        refused with ``group`` of several queries.
    blocks : array-like, optional
        With ``group``: the query (any id) of each list, e.g. of each session of a click
        log; lists of one query are held out, and later split into folds, together.
    rows : array-like of int, optional
        Each row's place in its source, e.g. the file row
        :func:`~gbrank.datasets.load_data` ``(return_order=True)`` returns; default
        ``0 … n−1``. The held-out ones are the task's ``held_out_rows``.

    Returns
    -------
    Task

    Examples
    --------
    >>> from gbrank.datasets import make_ranking, simulate_clicks
    >>> from gbrank.tuning import task_from_arrays
    >>> X, y, group = make_ranking(n_queries=20, rows_per_query=10, n_features=5)
    >>> task = task_from_arrays("tiny", X, y, group)
    >>> task.kind, task.group.size, task.group_test.size  # 4 of 20 queries held out
    ('ranking', 16, 4)
    >>> task.held_out_rows.size == task.y_test.size  # their rows, by place in X
    True
    >>> log = simulate_clicks(y, group, X[:, 0], top_n=5, seed=0)
    >>> clicks = task_from_arrays("log", X[log.rows], log.clicks, log.group,
    ...                           position=log.position, propensity=log.examination)
    >>> clicks.metrics, clicks.position_test.size == clicks.y_test.size
    (('ips_dcg@10',), True)
    >>> task_from_arrays("one_list", X, y, groupless=True).metrics[0]  # declared
    'ndcg'
    """
    from gbrank._validation import check_bool

    y = np.asarray(y, dtype=np.float64)
    groupless = check_bool(groupless, "groupless")
    rows = np.arange(y.size) if rows is None else np.asarray(rows, dtype=np.int64).ravel()
    if rows.size != y.size:
        raise ValueError(f"{name}: rows gives the place of each row; {rows.size} values "
                         f"for {y.size} rows")
    one_query = False
    if group is not None:
        group = np.asarray(group, dtype=np.int64)
        if group.size < 2:  # one query given explicitly: one list
            group, one_query = None, True
    if kind is None:
        kind = ("ranking" if position is not None or groupless or one_query
                else infer_kind(y, group))
    if groupless:
        _check_groupless(name, kind, [] if group is None else ["group"])
    groupless = groupless or (one_query and kind == "ranking")
    if position is not None:
        from gbrank._validation import check_positions

        position = check_positions(position, y.size)
    clicks = {} if position is None else {"propensity": propensity}
    test_size = check_number(test_size, "test_size", 0.0, 1.0, low_open=True, high_open=True)
    rng = np.random.default_rng(seed)
    if group is not None:
        nq = group.size
        if nq < 4:
            raise ValueError(f"{name}: {nq} queries; need at least 4 to hold out a test split")
        note = None
        if position is not None or blocks is not None:
            from gbrank.tuning._blocks import session_blocks

            blocks, note = session_blocks(name, X, group, blocks)
        if blocks is None:
            test_q = np.zeros(nq, bool)
            test_q[rng.choice(nq, size=max(1, int(round(test_size * nq))), replace=False)] = True
        else:  # whole blocks, drawn in random order up to test_size of the lists
            from gbrank._sessions import held_out_blocks

            test_q = held_out_blocks(blocks, test_size, rng)
        row_q = np.repeat(np.arange(nq), group)
        te = test_q[row_q]
        if position is not None:
            clicks.update(position=position[~te], position_test=position[te])
        task = Task(name, kind, X[np.flatnonzero(~te)], y[~te], group[~test_q],
                    X[np.flatnonzero(te)], y[te], group[test_q], description,
                    feature_names=feature_names, groupless=groupless,
                    blocks=None if blocks is None else blocks[~test_q],
                    held_out_rows=rows[te], **clicks)
        task.notes += [note] if note else []
        return task
    n = y.size
    if kind == "binary":
        pos, neg = np.flatnonzero(y == 1), np.flatnonzero(y != 1)
        if pos.size < 4:
            raise ValueError(f"{name}: {pos.size} positive rows; need at least 4")
        te_idx = np.concatenate([
            rng.choice(pos, size=max(1, int(round(test_size * pos.size))), replace=False),
            rng.choice(neg, size=max(1, int(round(test_size * neg.size))), replace=False)])
    elif kind == "multiclass":
        te_idx = np.concatenate([
            rng.choice(members, size=int(round(test_size * members.size)), replace=False)
            for members in (np.flatnonzero(y == c) for c in np.unique(y))])
    else:
        te_idx = rng.choice(n, size=max(1, int(round(test_size * n))), replace=False)
    te = np.zeros(n, bool)
    te[te_idx] = True
    if position is not None:
        clicks.update(position=position[~te], position_test=position[te])
    return Task(name, kind, X[np.flatnonzero(~te)], y[~te], None,
                X[np.flatnonzero(te)], y[te], None, description,
                feature_names=feature_names, groupless=groupless,
                held_out_rows=rows[te], **clicks)


def letor_parts(tuning: list, test: list) -> tuple[tuple, tuple]:
    """LETOR/SVMlight files of the tuning part and of the test part, read with one
    feature numbering (:func:`~gbrank.datasets.number_alike`) and one width."""
    from gbrank.datasets import load_letor_files, number_alike

    (X, y, g), (Xt, yt, gt) = (load_letor_files(tuning, zero_based=True),
                               load_letor_files(test, zero_based=True))
    X, Xt = number_alike(X, Xt)
    return (X, y, g), (Xt, yt, gt)


def default_tasks(quick: bool = False) -> list[Task]:
    """The embedded default data (no downloads), deterministic:

    * ``ranking``: synthetic MSLR-shaped graded relevance with query structure;
    * ``demand_levels``: a group-less demand-level task (one query, five equal grades);
    * ``binary``: synthetic imbalanced binary classification (3% positives);
    * ``multiclass``: synthetic imbalanced 5-class classification (scikit-learn's
      ``make_classification``, classes of 90 %, 6 %, 2 %, 1.5 % and 0.5 %).

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
    >>> tasks = default_tasks(quick=True)
    >>> [(t.name, t.kind) for t in tasks]  # doctest: +NORMALIZE_WHITESPACE
    [('ranking', 'ranking'), ('demand_levels', 'ranking'), ('binary', 'binary'),
     ('multiclass', 'multiclass')]
    >>> [t.y.size + t.y_test.size for t in tasks]
    [3000, 2500, 5000, 2500]
    """
    from gbrank.datasets import make_demand_levels, make_imbalanced, make_ranking

    nq, rpq = (120, 25) if quick else (200, 25)
    X, y, g = make_ranking(n_queries=nq, rows_per_query=rpq, n_features=30, seed=0)
    rank = task_from_arrays("ranking", X, y, g, kind="ranking", seed=0, description=(
        f"make_ranking({nq} queries × {rpq} rows, 30 features, seed 0); "
        "20% of the queries held out"))
    n_d = 2500 if quick else 3000
    Xd, yd = make_demand_levels(n_rows=n_d, n_features=20, seed=0)
    # Group-less, declared: NDCG@10 saturates near 1 on 500+ rows per grade, so the
    # task's headline (its verdict's metric) is NDCG over the whole list (every row).
    demand = task_from_arrays("demand_levels", Xd, yd, None, kind="ranking", seed=0,
                              groupless=True,
                              description=(f"make_demand_levels({n_d} rows, 5 grades, seed 0): "
                                           "one query, group-less; 20% of the rows held out"))
    n_b = 5000 if quick else 10000
    Xb, yb = make_imbalanced(n_rows=n_b, positive_rate=0.03, seed=0)
    binary = task_from_arrays("binary", Xb, yb, None, kind="binary", seed=0, description=(
        f"make_imbalanced({n_b} rows, 3% positives, seed 0); stratified 20% held out"))
    multiclass = multiclass_task(2500 if quick else 4000, seed=0)
    return [rank, demand, binary, multiclass]


def multiclass_task(n_rows: int = 4000, seed: int = 0) -> Task:
    """The embedded multiclass task: ``make_classification(n_rows, 20, n_informative=10,
    n_classes=5, n_clusters_per_class=1, weights=[0.90, 0.06, 0.02, 0.015, 0.005],
    flip_y=0.01, random_state=seed)``, a stratified 20 % held out.

    Examples
    --------
    >>> from gbrank.tuning._sources import multiclass_task
    >>> task = multiclass_task(1000)
    >>> task.kind, task.num_class, task.metrics[0], task.y.size + task.y_test.size
    ('multiclass', 5, 'macro_f1', 1000)
    """
    from sklearn.datasets import make_classification

    X, y = make_classification(n_rows, 20, n_informative=10, n_classes=5,
                               n_clusters_per_class=1,
                               weights=[0.90, 0.06, 0.02, 0.015, 0.005], flip_y=0.01,
                               random_state=seed)
    return task_from_arrays("multiclass", X, y, None, kind="multiclass", seed=seed,
                            description=(
                                f"make_classification({n_rows} rows, 20 features, 5 classes "
                                "of 90/6/2/1.5/0.5 %, 1% flipped labels, seed "
                                f"{seed}); stratified 20% held out"))


# A LETOR fold folder (LETOR 3.0/4.0 and MSLR ship Fold1 … Fold5 so): its training and
# validation files are tuned on, its test file is held out.
_FOLD_FILES = (("train.txt",), ("vali.txt", "valid.txt", "validation.txt"), ("test.txt",))


def letor_task(source: Any, fold: int = 1, *, test: Any = None, seed: int = 0,
               name: str | None = None) -> Task:
    """A ranking task from LETOR data, tuned on the training parts and tested on the
    held-out part of the benchmark's own protocol.

    Parameters
    ----------
    source : path or list of paths
        * a LETOR 4.0 folder of the five parts ``S1.txt`` … ``S5.txt`` (MQ2008,
          MQ2007): fold ``fold``'s training and validation parts (four of five) are
          tuned on, its test part is held out (fold 1: S1–S4 / S5, as the readme's
          folds rotate);
        * a fold folder (``train.txt``, ``vali.txt``, ``test.txt``, as LETOR and MSLR
          ship ``Fold1`` … ``Fold5``): training and validation tuned on, test held out;
        * a list of LETOR/SVMlight files (``S1.txt``, ``S2.txt``, …), tuned on together;
          ``test`` is held out, or 20 % of their queries when ``test`` is None.
    fold : int, default 1
        The fold (1–5) of a folder of parts.
    test : path, optional
        The held-out file of a list of files.
    seed : int, default 0
        Seeds the held-out queries of a list of files without ``test``.
    name : str, optional
        The task's name (its section in ``SUMMARY.md``); default: the folder's name.

    Returns
    -------
    Task

    Examples
    --------
    >>> import tempfile
    >>> from pathlib import Path
    >>> from gbrank.tuning._sources import letor_task
    >>> folder = Path(tempfile.mkdtemp()) / "MQ-tiny"
    >>> folder.mkdir()
    >>> for p in range(1, 6):
    ...     rows = [f"{(p + q + r) % 3} qid:{10 * p + q} 1:{r / 4} 2:{q / 3}"
    ...             for q in range(3) for r in range(4)]
    ...     _ = (folder / f"S{p}.txt").write_text("\\n".join(rows) + "\\n")
    >>> task = letor_task(folder, fold=2)
    >>> task.name, task.group.size, task.group_test.size  # S2–S5 tuned, S1 held out
    ('MQ-tiny', 12, 3)
    """
    from gbrank.datasets import LETOR_PARTS, letor_rotation, load_letor_files

    if isinstance(source, (list, tuple)):
        paths = [Path(p) for p in source]
        if not paths:
            raise ValueError("letor_task: no files given")
        label = name or paths[0].parent.name or paths[0].stem
        if test is None:
            X, y, g = load_letor_files(paths)
            task = task_from_arrays(label, X, y, g, kind="ranking", seed=seed, description=(
                f"{', '.join(p.name for p in paths)} in {paths[0].parent}; 20% of the "
                "queries held out"))
            # Rows gathered from several files have no one numbering to list them by.
            task.held_out_rows = None
            return task
        (X, y, g), (Xt, yt, gt) = letor_parts(paths, [test])
        return Task(label, "ranking", X, y, g, Xt, yt, gt, description=(
            f"{', '.join(p.name for p in paths)} in {paths[0].parent} tuned on; "
            f"{Path(test).name} held out"))
    names = letor_rotation(fold)
    folder = Path(source)
    if not folder.is_dir():
        raise FileNotFoundError(f"{folder}: no such folder")
    label = name or folder.name
    if all((folder / f"{p}.txt").exists() for p in LETOR_PARTS):
        (X, y, g), (Xt, yt, gt) = letor_parts([folder / f"{p}.txt" for p in names[:4]],
                                              [folder / f"{names[4]}.txt"])
        return Task(label, "ranking", X, y, g, Xt, yt, gt, description=(
            f"LETOR 4.0 fold {fold} of {folder}: tuned on {'+'.join(names[:3])} (training) "
            f"and {names[3]} (validation), cross-validated over queries; {names[4]} (the "
            "fold's test part) held out"))
    found = [next((folder / n for n in files if (folder / n).exists()), None)
             for files in _FOLD_FILES]
    if all(found):
        (X, y, g), (Xt, yt, gt) = letor_parts(found[:2], found[2:])
        return Task(label, "ranking", X, y, g, Xt, yt, gt, description=(
            f"LETOR fold folder {folder}: tuned on {found[0].name} + {found[1].name}, "
            f"cross-validated over queries; {found[2].name} held out"))
    raise FileNotFoundError(
        f"{folder}: neither a LETOR 4.0 folder of parts (S1.txt … S5.txt) nor a fold "
        "folder (train.txt, vali.txt, test.txt)")
