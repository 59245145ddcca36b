"""gbrank.tuning._blocks: a click log's sessions of one query (or sharing a document)
stay on one side of the held-out split and of every fold."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

pytest.importorskip("optuna")

from gbrank.datasets import make_ranking, simulate_clicks  # noqa: E402
from gbrank.tuning import _cli as cli  # noqa: E402
from gbrank.tuning._folds import make_folds  # noqa: E402
from gbrank.tuning._sources import task_from_arrays  # noqa: E402

RHO = "1,0.5,0.3333,0.25,0.2,0.1667,0.1429,0.125"


def _log(n_sessions=4, n_queries=40):
    X, y, g = make_ranking(n_queries=n_queries, rows_per_query=12, n_features=5, seed=0)
    log = simulate_clicks(y, g, X[:, 0], top_n=8, n_sessions=n_sessions, sessions="keep",
                          seed=1)
    query = np.repeat(np.arange(g.size), g)[log.rows]  # each row's query, by construction
    return X[log.rows], log, query


def _shared(A, B):
    """Share of B's rows equal to some row of A (by hand, as bytes)."""
    seen = {r.tobytes() for r in np.ascontiguousarray(A)}
    return float(np.mean([r.tobytes() in seen for r in np.ascontiguousarray(B)]))


def test_no_held_out_or_validation_row_was_trained_on():
    """4 sessions per query: split by session, most held-out rows equal tuning rows (the
    probe: 96.7 %); split by blocks, none, in the held-out part and in every fold."""
    X, log, _ = _log()
    task = task_from_arrays("log", X, log.clicks, log.group, position=log.position,
                            propensity=log.examination)
    assert "sessions form 40 blocks" in task.notes[0]
    assert _shared(task.X, task.X_test) == 0.0
    for f in make_folds(task, 3, seed=2):
        assert _shared(task.X[f.train], task.X[f.valid]) == 0.0
    assert 0.15 <= task.group_test.size / log.group.size <= 0.3


def test_given_queries_are_the_blocks():
    X, log, query = _log()
    starts = np.r_[0, np.cumsum(log.group)[:-1]]
    task = task_from_arrays("log", X, log.clicks, log.group, position=log.position,
                            propensity=log.examination, blocks=query[starts])
    assert "by their queries" in task.notes[0]
    assert _shared(task.X, task.X_test) == 0.0
    with pytest.raises(ValueError, match="one per session"):
        task_from_arrays("log", X, log.clicks, log.group, position=log.position,
                         propensity=log.examination, blocks=[0, 1])


def test_a_log_whose_sessions_all_share_documents_is_refused():
    X, log, _ = _log()
    X = X.copy()
    X[np.r_[0, np.cumsum(log.group)[:-1]]] = 7.0  # every session's first row: one document
    with pytest.raises(ValueError, match="no split keeps the held-out part apart"):
        task_from_arrays("log", X, log.clicks, log.group, position=log.position,
                         propensity=log.examination)


def _csv(tmp_path, X, log, query):
    df = pd.DataFrame(X, columns=[f"f{i}" for i in range(X.shape[1])])
    df["session"] = np.repeat(np.arange(log.group.size), log.group)
    df["query"], df["shown_at"], df["clicked"] = query, log.position, log.clicks.astype(int)
    path = tmp_path / "log.csv"
    df.to_csv(path, index=False)
    return path, df


def _run(path, out, *extra):
    return cli.main(["--data", str(path), "--label-col", "clicked", "--qid-col", "session",
                     "--position-col", "shown_at", "--propensity", RHO, "--objectives",
                     "native:lambdarank", "--trials", "1", "--folds", "2", "--max-rounds",
                     "5", "--finalists", "1", "--repeats", "1", "--quiet", "--out",
                     str(out), *extra])


def test_query_col_names_the_blocks_and_is_no_feature(tmp_path, capsys):
    X, log, query = _log()
    path, df = _csv(tmp_path, X, log, query)
    assert _run(path, tmp_path / "o", "--query-col", "query") in (0, None)
    summary = (tmp_path / "o" / "SUMMARY.md").read_text()
    assert "sessions form 40 blocks by their queries (--query-col)" in summary
    (model,) = (tmp_path / "o" / "tune" / "models").glob("*/model.txt")
    (names,) = [ln for ln in model.read_text().splitlines() if ln.startswith("feature_names=")]
    assert names == "feature_names=f0 f1 f2 f3 f4"  # neither query nor position learnt
    df.loc[0, "query"] = 99  # a session naming two queries
    df.to_csv(path, index=False)
    with pytest.raises(SystemExit) as exc:
        _run(path, tmp_path / "o2", "--query-col", "query")
    assert exc.value.code == 2
    assert "each list (session) belongs to one query" in capsys.readouterr().err


def test_sessions_merged_under_one_id_are_refused_naming_the_session_column(tmp_path, capsys):
    """--qid-col naming the query of a log with 4 sessions per query: every list repeats
    positions 1 … 8, and IPS-DCG@10 would judge the top 10 of 4 sessions merged."""
    X, log, query = _log()
    path, _ = _csv(tmp_path, X, log, query)
    with pytest.raises(SystemExit) as exc:
        cli.main(["--data", str(path), "--label-col", "clicked", "--qid-col", "query",
                  "--position-col", "shown_at", "--propensity", RHO, "--drop-cols",
                  "session", "--quiet", "--out", str(tmp_path / "o")])
    err = capsys.readouterr().err
    assert exc.value.code == 2 and "shows position 1 on 4 rows" in err
    assert "--qid-col SESSION, with --query-col QUERY" in err


def test_a_sessions_own_feature_does_not_hide_its_documents():
    """An hour-of-day column, constant within each session, makes a document's rows
    differ between sessions: documents are read without it."""
    X, log, _ = _log()
    hour = np.random.default_rng(0).integers(0, 24, size=log.group.size)
    X = np.column_stack([X, np.repeat(hour, log.group)])
    task = task_from_arrays("log", X, log.clicks, log.group, position=log.position,
                            propensity=log.examination)
    assert "40 blocks" in task.notes[0] and "less the 1 column constant" in task.notes[0]
    assert _shared(task.X[:, :-1], task.X_test[:, :-1]) == 0.0
    for f in make_folds(task, 3, seed=2):
        assert _shared(task.X[f.train, :-1], task.X[f.valid, :-1]) == 0.0


def test_a_log_of_one_session_per_query_says_how_it_is_split():
    X, log, _ = _log(n_sessions=1)
    task = task_from_arrays("log", X, log.clicks, log.group, position=log.position,
                            propensity=log.examination)
    assert task.blocks is None and "no two of the log's 40 sessions share" in task.notes[0]


def test_a_held_out_log_of_the_same_queries_is_said(tmp_path, capsys):
    X, log, query = _log()
    path, df = _csv(tmp_path, X, log, query)
    late = df.session % 4 == 3  # each query's last session held out: the same documents
    df[~late].to_csv(tmp_path / "early.csv", index=False)
    df[late].to_csv(tmp_path / "late.csv", index=False)
    _run(tmp_path / "early.csv", tmp_path / "o", "--query-col", "query", "--test-data",
         str(tmp_path / "late.csv"))
    summary = (tmp_path / "o" / "SUMMARY.md").read_text()
    assert "the folds split whole queries; 100.0% of the rows of --test-data late.csv show " \
        "a document of --data (its test is not of unseen queries)" in summary


def test_a_query_column_left_among_the_features_is_refused(tmp_path, capsys):
    X, log, query = _log()
    path, _ = _csv(tmp_path, X, log, query)
    with pytest.raises(SystemExit) as exc:
        _run(path, tmp_path / "o")
    err = capsys.readouterr().err
    assert exc.value.code == 2 and "column 'query'" in err
    assert "holds one value per 'session' list" in err
    assert "--query-col query if it names each session's query, or --drop-cols query" in err
