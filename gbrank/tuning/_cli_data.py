"""The data ``gbrank tune --data ...`` names, read into tasks: LETOR folders and files,
CSV/Parquet tables with their label, query-id and position columns; every mistake ends
the run with one line naming its fix (:func:`fail`)."""

from __future__ import annotations

import argparse
import re
import sys
from pathlib import Path

PROG = "gbrank tune"


def fail(message: str) -> None:
    """End the command: one line on stderr, exit code 2."""
    print(f"{PROG}: error: {message}", file=sys.stderr)
    raise SystemExit(2)


def load_tasks(args: argparse.Namespace):
    import numpy as np

    from gbrank.datasets import (
        TABLE_SUFFIXES,
        NonNumericColumnsError,
        load_data,
        load_table,
        table_columns,
    )
    from gbrank.tuning import Task, default_tasks, task_from_arrays
    from gbrank.tuning._sources import infer_kind

    if args.data is None:
        return default_tasks(quick=args.quick)
    letor = _letor_source(args)
    if letor is not None:
        from gbrank.tuning._sources import letor_task

        if args.fold is not None and not (isinstance(letor, Path)
                                          and (letor / "S1.txt").is_file()):
            fail("--fold chooses a fold of a LETOR 4.0 folder of parts (S1.txt … S5.txt); "
                 + (f"{args.data} holds one split already (train, vali, test)"
                    if isinstance(letor, Path) and (letor / "train.txt").is_file()
                    else f"{args.data} has no S1.txt"))

        try:
            return [letor_task(letor, args.fold or 1, test=args.test_data,
                               seed=args.seed)]
        except (OSError, ValueError) as exc:
            fail(f"--data: {' '.join(str(exc).split()) or type(exc).__name__}")
    if args.fold is not None:
        fail(f"--fold chooses a fold of a LETOR 4.0 folder of parts (S1.txt … S5.txt); "
             f"{args.data} is a single file or table, whose held-out part is 20% of its "
             "queries (or rows), or --test-data")
    table = args.data.suffix.lower() in TABLE_SUFFIXES
    drop = [c.strip() for c in (args.drop_cols or "").split(",") if c.strip()] or None
    if table and not args.label_col:
        fail(f"--label-col: {args.data} is a table (CSV/Parquet); name its column of "
             "labels with --label-col")
    if not table and (args.label_col or args.qid_col or drop):
        fail(f"--label-col, --qid-col and --drop-cols choose columns of a CSV/Parquet "
             f"table; {args.data} is read as LETOR/SVMlight")
    if not table and args.position_col:
        fail(f"--position-col chooses a column of a CSV/Parquet table; {args.data} is "
             "read as LETOR/SVMlight")
    if args.position_col and args.qid_col is None:
        fail("--position-col: a click log's positions are ranks within a session or "
             "query; name its column with --qid-col (without it every row would be one "
             "list, and ips_dcg@10 would judge the top 10 of the whole log)")
    if args.test_data is not None and (args.test_data.suffix.lower() in TABLE_SUFFIXES
                                       ) != table:
        fail(f"--test-data: {args.test_data} must be in the format of --data (a table with "
             "a table, LETOR/SVMlight with LETOR/SVMlight)")
    names = None
    sidecar = args.data.with_name(args.data.name + ".query")
    if table and args.qid_col is None and sidecar.exists():
        fail(f"{sidecar} gives query sizes, which only a LETOR/SVMlight file reads; a "
             f"table names its query column: add one and pass --qid-col <column>")
    try:
        if table:
            # The table's column names go to every booster the tuner trains and saves.
            X, y, g, names, order = load_table(args.data, args.label_col, args.qid_col,
                                               drop_cols=drop, return_order=True)
            X, names, pos = _position_column(args, args.data, X, names)
            X, names, qcol = _take_column(args, args.data, X, names, args.query_col,
                                          "--query-col")
            blocks = None if qcol is None else _session_queries(args, qcol, g)
            _refuse_list_ids(args, args.data, X, names, g)
        else:
            # Numbered as the held-out file will be (number_alike), when there is one.
            X, y, g, order = load_data(args.data, zero_based=True if args.test_data
                                       else "auto", return_order=True)
            pos = blocks = None
        clicks = ({} if pos is None else {"position": pos, "propensity": args.propensity})
        ranked = (pos is not None or args.groupless
                  or _ranks(args.metric))
        kind = args.task or ("ranking" if ranked else infer_kind(y, g))
        if table and args.task is None and g is None and kind != "ranking":
            _refuse_id_column(args.data, kind, names)
        groupless = _groupless(args, args.data, table, kind, g, names)
        guessed = None if args.task or kind == "ranking" else _guessed_kind(kind, y, table)
        notes = [guessed] if guessed else []
        if guessed and not args.quiet:
            print(f"[tune] {guessed}", flush=True)
        weights = _weight_columns(names) if table else None
        if weights:
            notes.append(weights)
            if not args.quiet:
                print(f"[tune] {weights}", flush=True)
        if args.test_data is None:
            task = task_from_arrays(args.data.name, X, y, None if groupless else g,
                                    kind=kind, seed=args.seed,
                                    description=f"{args.data}; 20% held out"
                                    + ("; group-less: all rows one query" if groupless
                                       else ""),
                                    feature_names=names, groupless=groupless,
                                    blocks=blocks, rows=order, **clicks)
            task.notes[:0] = notes
            _say(args, task.notes[len(notes):])
            return [task]
        n_feat = X.shape[1]
        logged = pos is not None  # the held-out rows' positions are read too
        if table:  # the same features, matched by name
            # A click log's held-out table without the position column holds true
            # grades (e.g. editorial judgments): its test is judged by them.
            has = table_columns(args.test_data)
            logged = logged and args.position_col in has
            cols = [*names, args.position_col] if logged else names
            missing = sorted(set(cols) - set(has))
            if missing:
                fail(f"--test-data: {args.test_data} lacks {len(missing)} feature column(s) "
                     f"of --data: {missing[:8]!r} (its features are matched by name)")
            Xt, yt, gt, _ = load_table(args.test_data, args.label_col, args.qid_col,
                                       feature_cols=cols)
            if logged:  # the test rows' positions, in their rows' order
                Xt, clicks["position_test"] = Xt[:, :-1], Xt[:, -1]
        else:  # LETOR/SVMlight: both files numbered alike (zero- or one-based)
            from gbrank.datasets import number_alike

            Xt, yt, gt = load_data(args.test_data, zero_based=True)
            if Xt.shape[1] <= n_feat:
                X, Xt = number_alike(X, Xt)
                n_feat = X.shape[1]
        if Xt.shape[1] != n_feat:
            raise ValueError(f"{args.test_data}: {Xt.shape[1]} features, --data has {n_feat}")
        if kind == "ranking":
            if groupless and gt is not None and len(gt) > 1:
                fail(f"--test-data: {args.test_data} has {len(gt)} queries and --data is "
                     "one query (group-less): give both parts the same structure")
            if not groupless and gt is None:
                fail(f"--test-data: {args.test_data} has no query ids"
                     + (f" (no {args.qid_col!r} column)" if args.qid_col else
                        " (no qid: fields, no .query file)")
                     + " and --data has queries: give the held-out rows the ids of their "
                     "queries")
        g = None if groupless else g
        gt = None if groupless else gt
        what = (f" (true grades in its {args.label_col!r} column, judged by ndcg@10 on "
                "them)" if pos is not None and not logged else "")
        if what and not args.quiet:  # said at once: a click table that lost its column
            print(f"[tune] --test-data {args.test_data} has no {args.position_col!r} column: "
                  f"its {args.label_col!r} column is read as true grades, and the held-out "
                  "test is judged by ndcg@10 on them (the tuning still by ips_dcg@10 on "
                  "the clicks)", flush=True)
        if g is not None and (pos is not None or blocks is not None):  # the folds' blocks
            from gbrank.tuning._blocks import session_blocks

            blocks, note = session_blocks(args.data.name, X, g, blocks, X_test=Xt,
                                          test_name=args.test_data.name)
            notes.append(note)
            _say(args, [note])
        return [Task(args.data.name, kind, X, np.asarray(y, float), g, Xt,
                     np.asarray(yt, float), gt,
                     f"{args.data}; test: {args.test_data}{what}"
                     + ("; group-less: all rows one query" if groupless else ""),
                     feature_names=names, groupless=groupless, notes=notes,
                     blocks=blocks, **clicks)]
    except NonNumericColumnsError as exc:
        fail(f"--data: {' '.join(exc.problem.split())}; encode them as numbers in the "
             f"file, or leave them out with --drop-cols {','.join(exc.columns)}")
    except (OSError, ValueError, ImportError, KeyError) as exc:
        msg = " ".join(str(exc).split()) or type(exc).__name__
        fail(f"--data: {msg}")


def _guessed_kind(kind: str, y, table: bool) -> str:
    """The line that says a task's kind was read off its labels (no ``--task``, no query
    ids): 0/1 or 0 … K−1 may be classes or the grades of queries whose ids were left
    out."""
    import numpy as np

    top = int(np.max(y))
    fix = ("--qid-col COL" if table else "qid:<id> fields") + " with --task ranking"
    return (f"the labels 0…{top} without query ids are read as a {kind} task (guessed "
            f"from the labels): if they are grades of queries, give the ids ({fix}); "
            f"--task {kind} says it and silences this note")


def _refuse_id_column(path: Path, kind: str, names: list[str] | None) -> None:
    """End the run when a table whose kind was inferred as a classification has a
    column named like query ids and no ``--qid-col``: its labels may be grades (0/1
    look binary, 0-2 multiclass), and the ids would be learned as a feature."""
    from gbrank._queries import id_like_names

    like = id_like_names(names or [])
    if like:
        col = like[0]
        fail(f"--data: {path} has a column {col!r} named like query ids and no --qid-col, "
             f"so its labels read as {kind} classes and {col!r} as a feature: for ranking, "
             f"name the column with --qid-col {col}; if the rows are not grouped in "
             f"queries, say so with --task {kind} and leave the ids out with "
             f"--drop-cols {col}")


def _refuse_list_ids(args: argparse.Namespace, path: Path, X, names: list[str],
                     g) -> None:
    """End the run when a feature column is named like ids and holds one value per
    ``--qid-col`` list (a click log's query column, a copy of the ids): the model would
    learn which list a row is in."""
    from gbrank._queries import id_like_names
    from gbrank._sessions import session_columns

    if g is None:
        return
    for col in id_like_names(names):
        at = names.index(col)
        if session_columns(X[:, at:at + 1], g)[0]:
            also = (f"--query-col {col} if it names each session's query, or "
                    if args.position_col else "")
            fail(f"--data: column {col!r} of {path} is named like ids and holds one value "
                 f"per {args.qid_col!r} list, so it would be learned as a feature: "
                 f"{also}--drop-cols {col}")


def _groupless(args: argparse.Namespace, path: Path, table: bool, kind: str, group,
               names: list[str] | None = None) -> bool:
    """Whether ``path``'s data are group-less ranking: declared with ``--groupless``, or
    one query given explicitly (a qid column or qid: fields of one id). Ranking data
    without query ids and without the flag, and the flag beside several queries, end
    the run naming the fixes."""
    if kind != "ranking":
        return False
    if group is None and not args.groupless:
        from gbrank._queries import id_like_names

        like = id_like_names(names or [])
        col = like[0] if like else "COL"
        where = (f"name its column of query ids with --qid-col {col}" if table else
                 f"give every row the qid:<id> of its query (or a {path.name}.query file of "
                 "query sizes beside it)")
        why = ("" if args.task else
               " (graded labels; --task binary|multiclass if they are classes)")
        fail(f"--data: {path} is ranking data{why} without query ids: {where}, or, if all "
             "rows really are one query (group-less ranking), declare it with --groupless")
    if group is not None and len(group) > 1 and args.groupless:
        fail(f"--groupless declares all rows one query, and {path} has {len(group)} queries "
             "(qid: fields or a .query file): drop --groupless to rank within each query")
    return group is None or len(group) < 2


def _take_column(args: argparse.Namespace, path: Path, X, names: list[str],
                 col: str | None, flag: str):
    """``X`` and its feature names without column ``col`` (named by ``flag``), and that
    column (``None`` without the flag)."""
    import numpy as np

    if col is None:
        return X, names, None
    if col not in names:
        why = ("the label column" if col == args.label_col else "the qid column"
               if col == args.qid_col else "left out by --drop-cols"
               if col in (args.drop_cols or "").split(",") else "not a column")
        fail(f"{flag}: {col!r} is {why} of {path} (numeric columns: "
             f"{', '.join(names[:12])})")
    at = names.index(col)
    return np.delete(X, at, axis=1), [n for n in names if n != col], X[:, at]


def _position_column(args: argparse.Namespace, path: Path, X, names: list[str]):
    """``X`` and its feature names without the ``--position-col`` column, and that
    column (``None`` without the flag)."""
    import numpy as np

    X, names, pos = _take_column(args, path, X, names, args.position_col, "--position-col")
    if pos is not None and pos.size and np.nanmin(pos) == 0:  # --propensity is per 1, 2, …
        fail(f"--position-col: {args.position_col!r} of {path} starts at 0, and display "
             "positions are 1, 2, … (--propensity gives the top position's first): add 1 "
             "to the column")
    return X, names, pos


def _session_queries(args: argparse.Namespace, query, g):
    """The query of each list (``g``: the lists' sizes) from the ``--query-col`` values
    of its rows; a list whose rows name several queries is refused."""
    import numpy as np

    starts = np.r_[0, np.cumsum(g)[:-1]]
    first = query[starts]
    mixed = np.flatnonzero(np.repeat(first, g) != query)
    if mixed.size:
        fail(f"--query-col: the rows of one {args.qid_col!r} list name several "
             f"{args.query_col!r} values (row {int(mixed[0])}): each list (session) belongs "
             "to one query")
    return first


# Column names that hold row weights in the ecosystem's tables: any name with "weight"
# in it (class_weight, sample_weights, ...), and the short forms wt, *_wt and w.
_WEIGHT_NAMES = re.compile(r"weight|(^|[_ ])wts?$|^w$", re.IGNORECASE)


def _weight_columns(names: list[str] | None) -> str | None:
    """A note when feature columns are named like row weights: the tuner weights no row,
    so such a column is learned as a feature (the model unweighted)."""
    found = [n for n in (names or []) if _WEIGHT_NAMES.search(str(n))]
    if not found:
        return None
    cols = ", ".join(repr(str(n)) for n in found)
    return (f"column(s) {cols} are learned as features: the tuner weights no rows. If they "
            f"hold row weights, leave them out with --drop-cols {','.join(map(str, found))} "
            "(GBRanker and GBClassifier take them as sample_weight=)")


def _say(args: argparse.Namespace, notes: list[str]) -> None:
    for note in notes:
        if not args.quiet:
            print(f"[tune] {note}", flush=True)


def _ranks(metric: str | None) -> bool:
    """Whether ``--metric`` names a ranking metric (an unknown name is judged later,
    where its error names the choices)."""
    try:
        return metric is not None and metric_kind(metric) == "ranking"
    except (KeyError, ValueError):
        return False


def metric_kind(name: str) -> str:
    from gbrank.metrics import get_metric

    return get_metric(name).kind


def _letor_source(args: argparse.Namespace):
    """A LETOR folder (parts or a fold folder) or a list of LETOR files named by
    ``--data``, or None for a single file or table."""
    data = args.data
    if data.is_dir():
        if args.groupless:
            fail(f"--groupless: {data} is a LETOR folder, tuned over its queries; drop "
                 "--groupless")
        if args.test_data is not None:
            fail(f"--test-data: {data} is a folder, which holds its own held-out part")
        if args.label_col or args.qid_col or args.drop_cols:
            fail(f"--label-col, --qid-col and --drop-cols choose columns of a CSV/Parquet "
                 f"table; {data} is a LETOR folder")
        if args.position_col:
            fail(f"--position-col chooses a column of a CSV/Parquet table; {data} is a "
                 "LETOR folder")
        return data
    if not data.exists() and "," in str(data):
        if args.groupless:
            fail("--groupless: --data names LETOR files, tuned over their queries; drop "
                 "--groupless")
        if args.position_col:
            fail("--position-col chooses a column of a CSV/Parquet table; --data names "
                 "LETOR files")
        paths = [Path(p.strip()) for p in str(data).split(",") if p.strip()]
        missing = [str(p) for p in paths if not p.is_file()]
        if missing:
            fail(f"--data: {', '.join(missing)}: no such file")
        return paths
    return None
