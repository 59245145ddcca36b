"""The tuner (gbrank.tuning, the `gbrank tune` command line): issue 8's "What it must show" 1–4 plus
the pieces (folds, spaces, gate, storage names, loaders)."""

from __future__ import annotations

import dataclasses
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pytest

optuna = pytest.importorskip("optuna")

from gbrank.objectives import FocalLoss, LambdaRank  # noqa: E402
from gbrank.tuning import TuneConfig, task_from_arrays, tune_task  # noqa: E402
from gbrank.tuning._folds import make_folds  # noqa: E402
from gbrank.tuning._gate import gate  # noqa: E402
from gbrank.tuning._spaces import candidate, suggest_params  # noqa: E402
from gbrank.tuning._storage import open_storage, study_name  # noqa: E402

ROOT = Path(__file__).resolve().parents[2]
TUNE = [sys.executable, "-m", "gbrank.tuning"]  # what `gbrank tune` runs


def _binary_task(n=1500, seed=0):
    from gbrank.datasets import make_imbalanced

    X, y = make_imbalanced(n_rows=n, n_features=8, n_informative=4, positive_rate=0.1,
                           seed=seed)
    return task_from_arrays("tiny_binary", X, y, kind="binary", seed=seed)


def _ranking_task(nq=40, rows=12, seed=0):
    from gbrank.datasets import make_ranking

    X, y, g = make_ranking(n_queries=nq, rows_per_query=rows, n_features=6, seed=seed)
    return task_from_arrays("tiny_ranking", X, y, g, kind="ranking", seed=seed)


def _write_csv(path: Path, n=1500, seed=0) -> Path:
    import pandas as pd

    from gbrank.datasets import make_imbalanced

    X, y = make_imbalanced(n_rows=n, n_features=6, n_informative=4, positive_rate=0.1,
                           seed=seed)
    df = pd.DataFrame(X, columns=[f"f{i}" for i in range(X.shape[1])])
    df["label"] = y.astype(int)
    df.to_csv(path, index=False)
    return path


# ---- pieces -------------------------------------------------------------------------------

def test_group_folds_keep_queries_whole_and_are_reproducible():
    task = _ranking_task()
    folds = make_folds(task, 3, seed=0)
    again = make_folds(task, 3, seed=0)
    qid = np.repeat(np.arange(task.group.size), task.group)
    seen = np.zeros(task.y.size, int)
    for f, g in zip(folds, again, strict=True):
        np.testing.assert_array_equal(f.valid, g.valid)
        assert not set(qid[f.train]) & set(qid[f.valid])  # no query on both sides
        assert f.group_train.sum() == f.train.size and f.group_valid.sum() == f.valid.size
        # the fold's query sizes are the original sizes of its queries, in order
        np.testing.assert_array_equal(f.group_valid, task.group[np.unique(qid[f.valid])])
        seen[f.valid] += 1
    np.testing.assert_array_equal(seen, 1)  # every row validated exactly once


def test_holdout_split_holds_whole_queries_out():
    from gbrank.datasets import make_ranking

    X, y, g = make_ranking(n_queries=50, rows_per_query=8, n_features=4, seed=2)
    t = task_from_arrays("r", X, y, g, seed=1)
    assert t.group.size + t.group_test.size == 50
    assert t.group_test.size == 10
    assert t.y.size + t.y_test.size == 400 and t.group_test.sum() == t.y_test.size


def test_sigma_is_searched_only_with_l2():
    cand = candidate("lambdarank:ndcg")
    base = {"learning_rate": 0.1, "num_leaves": 15, "min_data_in_leaf": 20,
            "feature_fraction": 1.0, "bagging_fraction": 1.0, "lambda_l1": 1e-8,
            "extra_trees": False,
            "obj_truncation": 20, "obj_norm": False, "obj_weighting": "lambdarank",
            "obj_smoothing": 0.0, "obj_sigma": 2.0}
    _, op = suggest_params(optuna.trial.FixedTrial({**base, "lambda_l2": 1e-8}), cand,
                           "lightgbm")
    assert "sigma" not in op
    _, op = suggest_params(optuna.trial.FixedTrial({**base, "lambda_l2": 1.0}), cand,
                           "lightgbm")
    assert op["sigma"] == 2.0


def test_space_offers_only_parameters_the_objective_has():
    class Plain(LambdaRank):  # an objective without the LambdaLoss options
        def get_params(self, deep=True):
            p = super().get_params(deep)
            for k in ("weighting", "mu", "smoothing"):
                p.pop(k, None)
            return p

    cand = candidate("plain", obj=Plain())
    booster = {"learning_rate": 0.1, "num_leaves": 15, "min_data_in_leaf": 20,
               "feature_fraction": 1.0, "bagging_fraction": 1.0, "lambda_l1": 1e-8,
               "extra_trees": False,
               "lambda_l2": 1e-8}
    trial = optuna.trial.FixedTrial({**booster, "obj_truncation": 20, "obj_norm": False})
    _, op = suggest_params(trial, cand, "lightgbm")
    assert op == {"truncation": 20, "norm": False}
    # σ is searched only where it changes the model: with norm=True (or a penalty).
    trial = optuna.trial.FixedTrial({**booster, "obj_truncation": 20, "obj_norm": True,
                                     "obj_sigma": 2.0})
    _, op = suggest_params(trial, cand, "lightgbm")
    assert op == {"truncation": 20, "norm": True, "sigma": 2.0}


def test_calibration_weight_is_searched_for_a_calibrated_ranker_only():
    from gbrank.objectives import RankNet
    from gbrank.tuning._spaces import build_objective

    booster = {"learning_rate": 0.1, "num_leaves": 15, "min_data_in_leaf": 20,
               "feature_fraction": 1.0, "bagging_fraction": 1.0, "lambda_l1": 1e-8,
               "extra_trees": False,
               "lambda_l2": 1e-8}
    lr = {"obj_truncation": 20, "obj_norm": False, "obj_weighting": "lambdarank"}
    trial = optuna.trial.FixedTrial({**booster, **lr, "obj_calibration": 0.2,
                                     "obj_sigma": 2.0})
    _, op = suggest_params(trial, candidate("cal", obj=LambdaRank(calibration=0.5)),
                           "lightgbm")
    # α searched, and σ with it (σ scales the ranking term, not the pointwise one)
    assert op["calibration"] == 0.2 and op["sigma"] == 2.0
    built = build_objective(candidate("cal", obj=LambdaRank(calibration=0.5)), op)
    assert built.calibration == 0.2 and built.metric == "ndcg"
    _, op = suggest_params(trial, candidate("lambdarank:ndcg"), "lightgbm")
    assert "calibration" not in op and "sigma" not in op
    trial = optuna.trial.FixedTrial({**booster, "obj_ties": "skip", "obj_calibration": 0.05,
                                     "obj_sigma": 1.0})
    _, op = suggest_params(trial, candidate("cal", obj=RankNet(calibration=0.3)), "lightgbm")
    assert op == {"ties": "skip", "sigma": 1.0, "calibration": 0.05}
    _, op = suggest_params(trial, candidate("ranknet"), "lightgbm")
    assert op == {"ties": "skip"}


def test_unknown_objective_names_the_valid_ones():
    with pytest.raises(ValueError, match="unknown objective 'lambdarank:foo'.*ranknet"):
        candidate("lambdarank:foo")


def test_study_name_is_stable_and_data_dependent():
    a, b = _binary_task(seed=0), _binary_task(seed=1)
    assert a.fingerprint() == _binary_task(seed=0).fingerprint()
    assert a.fingerprint() != b.fingerprint()
    # A value changed anywhere (past the first rows, or in the held-out part) is other
    # data: a corrected column once resumed the old data's studies (seventh probe).
    from scipy.sparse import csr_matrix

    for part in ("X", "X_test"):
        c = dataclasses.replace(a, **{part: getattr(a, part).copy()})
        getattr(c, part)[-1, 0] += 1.0
        assert c.fingerprint() != a.fingerprint()
    sparse = dataclasses.replace(a, X=csr_matrix(a.X))
    assert sparse.fingerprint() == dataclasses.replace(a, X=csr_matrix(a.X)).fingerprint()
    sparse.X[sparse.X.shape[0] - 1, 1] += 1.0
    assert sparse.fingerprint() != dataclasses.replace(a, X=csr_matrix(a.X)).fingerprint()
    # A stored zero is the same data as an absent one; hashing changes no matrix.
    stored = csr_matrix(a.X)
    stored.data[0] = 0.0  # an explicit zero
    plain = csr_matrix(stored.toarray())
    before = stored.copy()
    assert (dataclasses.replace(a, X=stored).fingerprint()
            == dataclasses.replace(a, X=plain).fingerprint())
    assert (stored != before).nnz == 0 and stored.nnz == before.nnz
    from gbrank.tuning._booster_spaces import SPACE_VERSION

    assert study_name("x", a.fingerprint(), "lightgbm", "focal") == (
        f"x-{a.fingerprint()}-lightgbm-s{SPACE_VERSION}-focal")
    # every trial's score depends on the folds, rounds and patience: another budget is
    # another study, never a resumed one
    from gbrank.tuning import TuneConfig

    assert study_name("x", "f", "lightgbm", "focal", None, TuneConfig().budget(False)) == (
        f"x-f-lightgbm-s{SPACE_VERSION}-cv3s0r1000p50-focal")
    assert study_name("x", "f", "lightgbm", "focal", None, (3, 0, 100, 15)) != study_name(
        "x", "f", "lightgbm", "focal", None, (3, 0, 1000, 50))
    assert TuneConfig(seed=1).budget(False) != TuneConfig().budget(False)  # other folds
    # the command line's help states ROUNDS, the one home of the defaults
    from gbrank.tuning._config import ROUNDS, field_help

    for i, name in enumerate(("max_rounds", "patience")):
        assert field_help(name, "None") == (f"{ROUNDS['labels'][i]}, or "
                                            f"{ROUNDS['clicks'][i]} on a click log.")


def test_load_table_gathers_queries(tmp_path):
    import pandas as pd

    from gbrank.datasets import load_data, load_table

    df = pd.DataFrame({"q": [7, 3, 7, 3, 9], "rel": [1, 0, 2, 1, 0],
                       "a": [0.1, 0.2, 0.3, 0.4, 0.5]})
    df.to_csv(tmp_path / "t.csv", index=False)
    X, y, g, names = load_table(tmp_path / "t.csv", "rel", "q")
    np.testing.assert_array_equal(g, [2, 2, 1])  # queries in ascending order of their ids
    np.testing.assert_array_equal(y, [0, 1, 1, 2, 0])
    np.testing.assert_array_equal(X[:, 0], [0.2, 0.4, 0.1, 0.3, 0.5])
    assert names == ["a"]
    pytest.importorskip("pyarrow")
    df.to_parquet(tmp_path / "t.parquet")
    X2, y2, g2 = load_data(tmp_path / "t.parquet", label_col="rel", qid_col="q")
    np.testing.assert_array_equal(X2, X)
    np.testing.assert_array_equal(g2, g)


def test_tuner_data_gathers_interleaved_query_ids(tmp_path):
    """gbrank tune --data / --test-data: a query id's rows are one query wherever
    they are in a LETOR file (queries in ascending order of their ids)."""
    tune = _tune_module()
    train, test = tmp_path / "train.txt", tmp_path / "test.txt"
    # qid 1, 1, 2, 2, 1, 1, 2, 2; feature 1 numbers the file's rows.
    train.write_text("".join(f"{lab} qid:{q} 1:{i + 1}\n" for i, (q, lab) in enumerate(
        zip([1, 1, 2, 2, 1, 1, 2, 2], [3, 0, 1, 2, 4, 0, 2, 1], strict=True))))
    test.write_text("1 qid:5 1:1\n0 qid:6 1:2\n2 qid:5 1:3\n")
    [task] = tune._load_tasks(tune.parse_args(["--data", str(train), "--test-data",
                                               str(test)]))
    assert task.kind == "ranking"
    np.testing.assert_array_equal(task.group, [4, 4])
    np.testing.assert_array_equal(task.X.toarray()[:, 0], [1, 2, 5, 6, 3, 4, 7, 8])
    np.testing.assert_array_equal(task.y, [3, 0, 4, 0, 1, 2, 2, 1])
    np.testing.assert_array_equal(task.group_test, [2, 1])
    np.testing.assert_array_equal(task.X_test.toarray()[:, 0], [1, 3, 2])
    assert task.feature_names is None  # LETOR columns have no names


def test_held_out_rows_are_the_source_rows_of_the_test_part(tmp_path):
    """Without --test-data the run draws the held-out queries itself; the task lists
    their rows by place in the file (0-based, data rows), in a LETOR file whose query
    ids interleave and in a table with a header, and SUMMARY.md's folder gets them."""
    import pandas as pd

    from gbrank.tuning._report import held_out_file

    tune = _tune_module()
    rng = np.random.default_rng(1)
    qids = rng.permutation(np.repeat(np.arange(10), 6))  # interleaved queries
    letor = tmp_path / "train.txt"  # feature 1 numbers the file's rows
    letor.write_text("".join(f"{i % 3} qid:{q} 1:{i + 1}\n" for i, q in enumerate(qids)))
    df = pd.DataFrame({"q": qids, "rel": np.arange(60) % 3, "a": np.arange(60.0) + 1})
    df.to_csv(tmp_path / "train.csv", index=False)
    for args in (["--data", str(letor)],
                 ["--data", str(tmp_path / "train.csv"), "--label-col", "rel",
                  "--qid-col", "q"]):
        [task] = tune._load_tasks(tune.parse_args(args))
        X_test = task.X_test.toarray() if hasattr(task.X_test, "toarray") else task.X_test
        assert task.group_test.size == 2  # 20 % of 10 queries
        # each held-out row's place in the file, in the order the held-out part holds it
        np.testing.assert_array_equal(task.held_out_rows, X_test[:, 0] - 1)
        assert set(qids[task.held_out_rows]) == set(qids[X_test[:, 0].astype(int) - 1])
        assert np.isin(qids, qids[task.held_out_rows]).sum() == 12  # whole queries
    from gbrank.tuning._report import write_summary

    write_summary(tmp_path / "out" / "SUMMARY.md", [task], [], config_line="")
    listed = (tmp_path / "out" / held_out_file(task)).read_text().split()
    np.testing.assert_array_equal(np.array(listed, dtype=int), task.held_out_rows)
    assert held_out_file(task) in (tmp_path / "out" / "SUMMARY.md").read_text()


def test_several_files_list_no_held_out_rows(tmp_path):
    """Rows gathered from several LETOR files have no one numbering: no list is written
    (review 60: the indices into the gathered rows were listed as if rows of a file)."""
    from gbrank.tuning._sources import letor_task

    paths = []
    for f in range(2):
        path = tmp_path / f"S{f}.txt"
        path.write_text("".join(f"{i % 3} qid:{10 * f + i % 5} 1:{i}\n" for i in range(40)))
        paths.append(path)
    task = letor_task(paths)
    assert task.group_test.size == 2 and task.held_out_rows is None


def test_tuner_table_features_by_name(tmp_path):
    """A table's columns are the task's feature names (--drop-cols leaves some out); the
    test table's features are matched by name, whatever its column order."""
    import pandas as pd

    tune = _tune_module()
    df = pd.DataFrame({"q": [7, 3, 7, 3, 9, 9, 4, 4], "rel": [1, 0, 2, 1, 0, 2, 1, 0],
                       "url": list("abcdefgh"), "a": np.arange(8.0), "b": -np.arange(8.0)})
    df.to_csv(tmp_path / "train.csv", index=False)
    df[["b", "rel", "a", "q", "url"]].iloc[:4].to_csv(tmp_path / "test.csv", index=False)
    args = ["--data", str(tmp_path / "train.csv"), "--test-data", str(tmp_path / "test.csv"),
            "--label-col", "rel", "--qid-col", "q", "--drop-cols", "url"]
    [task] = tune._load_tasks(tune.parse_args(args))
    assert task.feature_names == ["a", "b"]
    np.testing.assert_array_equal(task.group, [2, 2, 2, 2])  # ids 3, 4, 7, 9
    np.testing.assert_array_equal(task.X[:, 0], [1, 3, 6, 7, 0, 2, 4, 5])
    # the test rows by name: each query's rows (ids 3, 7) in tie_order
    assert sorted(map(tuple, task.X_test[:2])) == [(1, -1), (3, -3)]
    assert sorted(map(tuple, task.X_test[2:])) == [(0, 0), (2, -2)]


@pytest.mark.parametrize("booster", ["lightgbm", "xgboost"])
def test_check_feature_names_refuses_what_the_booster_would_not_keep(booster, tmp_path):
    """Each name passes the check exactly when the booster trains with it and its saved
    model, read back, has it unchanged."""
    import lightgbm as lgb
    import xgboost as xgb

    from gbrank.tuning._cv import check_feature_names

    rng = np.random.default_rng(0)
    X, y = rng.random((60, 2)), rng.integers(0, 2, 60).astype(float)

    def kept(names):
        try:
            if booster == "lightgbm":
                bst = lgb.train({"verbose": -1, "min_data_in_leaf": 5, "num_threads": 1},
                                lgb.Dataset(X, y, feature_name=names), 2)
                bst.save_model(str(tmp_path / "m.txt"))
                return lgb.Booster(model_file=str(tmp_path / "m.txt")).feature_name() == names
            bst = xgb.train({"nthread": 1}, xgb.DMatrix(X, y, feature_names=names), 2)
            bst.save_model(str(tmp_path / "m.json"))
            return xgb.Booster(model_file=str(tmp_path / "m.json")).feature_names == names
        except (lgb.basic.LightGBMError, ValueError):
            return False

    verdicts = []
    for name in ["plain", "a b", "a\tb", "a\nb", "a,b", "a:b", "a[0]", 'a"', "a{", "a<b",
                 "a>b", "é", "x.y", "", "0"]:
        try:
            check_feature_names([name, "other"], booster)
            passed = True
        except ValueError as exc:
            passed = False
            assert repr(name) in str(exc)
        verdicts.append((name, passed, kept([name, "other"])))
    assert [v for v in verdicts if v[1] != v[2]] == []
    assert any(not v[1] for v in verdicts) and any(v[1] for v in verdicts)


@pytest.mark.parametrize("booster, key", [("lightgbm", "native:binary"),
                                          ("xgboost", "native:binary:logistic")])
def test_saved_model_carries_the_table_column_names(booster, key, tmp_path):
    """A CLI run on a CSV with a text column left out (--drop-cols): the refit model file,
    read back by the booster itself, names its features by the table's columns."""
    import pandas as pd

    csv = _write_csv(tmp_path / "d.csv", n=600)
    df = pd.read_csv(csv).rename(columns={"f0": "price", "f3": "click rate"})
    df.insert(2, "city", np.where(np.arange(len(df)) % 3, "Paris", "Rome"))
    df.to_csv(csv, index=False)
    features = [c for c in df.columns if c not in ("label", "city")]
    if booster == "lightgbm":  # LightGBM would save "click rate" as "click_rate"
        df.rename(columns={"click rate": "click_rate"}).to_csv(csv, index=False)
        features[features.index("click rate")] = "click_rate"
    out = tmp_path / "out"
    code = _tune_module().main([
        "--data", str(csv), "--label-col", "label", "--drop-cols", "city",
        "--booster", booster, "--objectives", key, "--trials", "1", "--max-rounds", "5",
        "--folds", "2", "--quiet", "--out", str(out)])
    assert code == 0
    [model] = (out / "tune" / "models").rglob("model.*")
    if booster == "lightgbm":
        import lightgbm as lgb

        assert lgb.Booster(model_file=str(model)).feature_name() == features
    else:
        import xgboost as xgb

        assert xgb.Booster(model_file=str(model)).feature_names == features


# ---- 3: the gate refuses a wrong Hessian ----------------------------------------------------

class HessianOffFocal(FocalLoss):
    """Focal loss whose Hessian is 3× too large: a bug the gate must catch."""

    def exact_grad_hess(self, y, s, group=None, *, qid=None, weight=None):
        g, h = super().exact_grad_hess(y, s, group, qid=qid, weight=weight)
        return g, 3.0 * h

    def grad_hess(self, y, s, group=None, *, qid=None, weight=None):
        g, h = super().grad_hess(y, s, group, qid=qid, weight=weight)
        return g, 3.0 * h


def test_gate_rejects_wrong_hessian_with_readable_message():
    task = _binary_task()
    assert gate(FocalLoss(gamma=2.0), task, "focal").ok  # the correct one passes
    res = gate(HessianOffFocal(gamma=2.0), task, "hessian_off")
    assert not res.ok
    assert res.message.startswith("hessian_off: rejected by the gradient gate on random inputs")
    assert "Hessian max rel. error" in res.message and "not tuned" in res.message
    assert "\n" not in res.message


def test_tuner_skips_rejected_objective_and_still_runs_the_rest(tmp_path):
    task = _binary_task()
    cfg = TuneConfig(trials=1, max_rounds=10, patience=5, n_folds=2, out_dir=tmp_path,
                     objectives=["native:binary"], custom={"hessian_off": HessianOffFocal()},
                     save_models=False, plots=False, progress=False)
    results = {r.key: r for r in tune_task(task, cfg)}
    assert results["hessian_off"].status == "rejected"
    assert "Hessian" in results["hessian_off"].message
    assert results["native:binary"].status == "done"
    assert results["native:binary"].n_complete == 1


def test_kernels_compile_before_the_study_clock_starts(tmp_path, monkeypatch):
    # Every kernel-selecting variant of the objective (LambdaRank's norm x weighting)
    # runs once on the first fold before run_budget starts the study's timeout.
    from gbrank.tuning import _study as study

    events: list = []
    real_grad_hess = LambdaRank.booster_grad_hess

    def record(self, y, preds, group=None, weight=None):
        events.append(("grad_hess", self.norm, self.weighting, y.size))
        return real_grad_hess(self, y, preds, group, weight)

    real_budget = study.run_budget

    def budget(*args, **kwargs):
        events.append(("budget",))
        return real_budget(*args, **kwargs)

    monkeypatch.setattr(LambdaRank, "booster_grad_hess", record)
    monkeypatch.setattr(study, "run_budget", budget)
    task = _ranking_task()
    cfg = TuneConfig(trials=1, max_rounds=3, patience=2, n_folds=2, out_dir=tmp_path,
                     objectives=["lambdarank:ndcg"], save_models=False, plots=False,
                     progress=False)
    tune_task(task, cfg)
    first = events.index(("budget",))
    warmed = {(e[1], e[2]) for e in events[:first] if e[0] == "grad_hess"}
    assert warmed >= {(norm, w) for norm in (False, True)
                      for w in ("lambdarank", "ndcg_loss1", "ndcg_loss2pp")}
    fold_rows = make_folds(task, 2, seed=0)[0].train.size
    assert any(e[0] == "grad_hess" and e[3] == fold_rows for e in events[:first])


# ---- 4: bad input on the command line -------------------------------------------------------

def _tune_module():
    """The command line of ``gbrank tune``."""
    from gbrank.tuning import _cli as cli

    return cli


def _main(argv, capsys):
    tune = _tune_module()
    with pytest.raises(SystemExit) as exc:
        tune.main(argv)
    err = capsys.readouterr().err
    return exc.value.code, err


@pytest.mark.parametrize("case", ["missing", "unparsable", "no_label_col", "no_qid_col",
                                  "unknown_objective", "bad_trials", "bad_timeout",
                                  "bad_folds", "bad_workers", "workers_and_role",
                                  "bad_storage", "text_column", "unknown_drop_col",
                                  "bad_feature_name", "drop_cols_on_letor"])
def test_bad_input_exits_2_with_one_line(case, tmp_path, capsys):
    import pandas as pd

    csv = _write_csv(tmp_path / "d.csv", n=200)
    df = pd.read_csv(csv)
    df.insert(1, "city", np.where(np.arange(len(df)) % 2, "Paris", "Rome"))
    df.to_csv(tmp_path / "text.csv", index=False)
    df.drop(columns="city").rename(columns={"f2": "f2:raw"}).to_csv(tmp_path / "name.csv",
                                                                      index=False)
    letor = tmp_path / "r.txt"
    letor.write_text("1 qid:1 1:0.5\n0 qid:1 1:0.1\n")
    bad = tmp_path / "bad.txt"
    bad.write_text("this is not\nan svmlight file\n")
    argv = {
        "missing": ["--data", str(tmp_path / "nope.txt")],
        "unparsable": ["--data", str(bad)],
        "no_label_col": ["--data", str(csv), "--label-col", "rel"],
        "no_qid_col": ["--data", str(csv), "--label-col", "label", "--qid-col", "query"],
        "unknown_objective": ["--objectives", "ranknet,lambdarank:foo"],
        "bad_trials": ["--trials", "0"],
        "bad_timeout": ["--timeout", "0"],
        "bad_folds": ["--folds", "1"],
        "bad_workers": ["--workers", "0"],
        "workers_and_role": ["--workers", "2", "--trials-only"],
        "bad_storage": ["--data", str(csv), "--label-col", "label", "--storage", "nowhere"],
        "text_column": ["--data", str(tmp_path / "text.csv"), "--label-col", "label"],
        "unknown_drop_col": ["--data", str(csv), "--label-col", "label", "--drop-cols", "zz"],
        "bad_feature_name": ["--data", str(tmp_path / "name.csv"), "--label-col", "label"],
        "drop_cols_on_letor": ["--data", str(letor), "--drop-cols", "f1"],
    }[case]
    code, err = _main(argv + ["--out", str(tmp_path / "out")], capsys)
    assert code == 2
    lines = err.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("gbrank tune: error: "), err
    expect = {"missing": "no such file", "unparsable": "cannot parse",
              "no_label_col": "label_col='rel' is not a column",
              "no_qid_col": "qid_col='query' is not a column",
              "unknown_objective": "unknown objective 'lambdarank:foo'",
              "bad_trials": "--trials: trials must be an integer in [1, inf], got 0",
              "bad_timeout": "--timeout: timeout must be a finite number in (0, inf)",
              "bad_folds": "--folds: n_folds must be an integer in [2, inf], got 1",
              "bad_workers": "--workers: must be an integer >= 1, got 0",
              "workers_and_role": "--workers cannot be combined with --trials-only",
              "bad_storage": "--storage: storage='nowhere' is invalid",
              "text_column": "not numeric: ['city'] ('city' has dtype",
              "unknown_drop_col": "drop_cols names 1 column(s) the table does not have: "
                                  "['zz']",
              "bad_feature_name": "feature name 'f2:raw' contains ':', which lightgbm does "
                                  "not accept",
              "drop_cols_on_letor": "r.txt is read as LETOR/SVMlight"}[case]
    assert expect in lines[0]
    if case == "text_column":  # names the way out
        assert lines[0].endswith("or leave them out with --drop-cols city")
    assert not (tmp_path / "out" / "SUMMARY.md").exists()


def test_bad_input_in_a_real_process_has_no_traceback(tmp_path):
    out = subprocess.run([*TUNE, "--data", str(tmp_path / "missing.csv"),
                          "--label-col", "y"], capture_output=True, text=True, timeout=120)
    assert out.returncode == 2
    assert "Traceback" not in out.stderr
    # One line of ours; a third-party import may warn first (LightGBM 4.0 imports Dask,
    # which warns about old pyarrow releases).
    ours = [ln for ln in out.stderr.splitlines() if ln.startswith("gbrank tune: ")]
    assert len(ours) == 1 and "no such file" in ours[0]
    assert all("Warning" in ln or ln.startswith(("  ", "gbrank tune: "))
               for ln in out.stderr.splitlines())


# ---- 1: --quick end to end ------------------------------------------------------------------

def _numbers(text: str) -> list[float]:
    import re

    return [float(x) for x in re.findall(r"(?<![\w.])-?\d+\.\d{4}(?!\d)", text)]


@pytest.mark.slow
def test_cli_small_run_end_to_end(tmp_path):
    """A small run of `gbrank tune` on a CSV, as a user outside the checkout starts it:
    summary with numbers, plots, models, resumable storage, all in ./gbrank-results."""
    csv = _write_csv(tmp_path / "d.csv")
    out = tmp_path / "gbrank-results"
    cmd = [sys.executable, "-m", "gbrank", "tune", "--data", str(csv), "--label-col", "label",
           "--objectives", "focal,native:binary", "--trials", "2", "--max-rounds", "15",
           "--folds", "2"]
    r = subprocess.run(cmd, capture_output=True, text=True, timeout=600, cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    summary = (out / "SUMMARY.md").read_text()
    assert "| focal | ap |" in summary and "| native:binary | ap |" in summary
    assert len(_numbers(summary)) >= 8
    assert "/4" in summary  # units won out of 2 folds × 2 repeats
    assert summary.index("## Verdict") < summary.index("## d.csv")
    pngs = list((out / "tune").rglob("*.png"))
    assert any(p.name == "focal_history.png" for p in pngs)
    assert (out / "tune" / "comparison_d.csv.png").exists()
    assert all(p.stat().st_size > 5000 for p in pngs)
    models = list((out / "tune" / "models").rglob("params.json"))
    assert len(models) == 2
    # Re-running with the same total does no new trial (the studies resume, complete).
    storage = open_storage(f"sqlite:///{out / 'studies.db'}")
    before = {s.study_name: s.n_trials for s in optuna.get_all_study_summaries(storage)}
    assert sorted(before.values()) == [2, 2]
    r2 = subprocess.run(cmd, capture_output=True, text=True, timeout=600, cwd=tmp_path)
    assert r2.returncode == 0, r2.stderr
    after = {s.study_name: s.n_trials for s in optuna.get_all_study_summaries(storage)}
    assert after == before


@pytest.mark.slow
def test_quick_run_end_to_end(tmp_path):
    out = tmp_path / "out"
    r = subprocess.run([*TUNE, "--quick", "--out", str(out)],
                       capture_output=True, text=True, timeout=900)
    assert r.returncode == 0, r.stderr
    summary = (out / "SUMMARY.md").read_text()
    for section in ("## Verdict", "## ranking", "## demand_levels", "## binary",
                    "## multiclass", "### multiclass: macro_f1"):
        assert section in summary
    assert len(_numbers(summary)) >= 30
    for task in ("ranking", "demand_levels", "binary", "multiclass"):
        assert (out / "tune" / f"comparison_{task}.png").stat().st_size > 5000
        assert list((out / "tune" / task).glob("*_history.png"))
    # The group-less task: the native study is tuned on its headline, NDCG over the whole
    # list (NDCG@10 saturates there), and the code declares the mode.
    verdict = summary[summary.index("### demand_levels: ndcg"):summary.index("### binary")]
    assert "`native:lambdarank` was tuned for ndcg rather than its own cut-off" in verdict
    assert "groupless=True" in verdict and ").fit(X, y)" in verdict
    assert "| native:lambdarank | ndcg (own: ndcg@10) |" in summary
    assert "is flat" not in verdict


@pytest.mark.slow
def test_quick_run_on_a_saturated_metric_recommends_no_flat_study(tmp_path):
    """`--quick --metric map@10`: on the group-less task almost every trial scores MAP@10
    1 (the top 10 of one list of 2000 rows are all relevant). A study whose trials all
    scored the same is called flat and never recommended; when every study is flat the
    verdict recommends nothing and says why. Which studies are flat depends on the
    sampler's draws (a trial that learns nothing scores less), so they are read from the
    stored trials; the grouped task is unaffected."""
    import optuna

    out = tmp_path / "out"
    r = subprocess.run([*TUNE, "--quick", "--metric", "map@10", "--quiet", "--out", str(out)],
                       capture_output=True, text=True, timeout=900)
    assert r.returncode == 0, r.stderr
    summary = (out / "SUMMARY.md").read_text()
    verdict = summary[summary.index("### demand_levels: map@10"):summary.index("## How")]
    storage = f"sqlite:///{out / 'studies.db'}"
    flat = {}
    for name in optuna.get_all_study_names(storage):
        if name.startswith("demand_levels-"):
            values = {t.value for t in optuna.load_study(study_name=name, storage=storage)
                      .trials if t.value is not None}
            flat[name.split("-")[-3]] = values == {1.0}
    assert set(flat) == {"ranknet", "native:lambdarank"} and any(flat.values())
    for key, is_flat in flat.items():
        said = (f"`{key}` is flat: every trial scored 1.0000 on map@10; not a basis for a "
                "recommendation") in verdict
        assert said == is_flat, key
    if all(flat.values()):
        assert "nothing to recommend" in verdict and "`--metric ndcg`" in verdict
        assert "Use" not in verdict and "```python" not in verdict
    else:
        (used,) = [k for k, f in flat.items() if not f]
        assert f"**Use `{used}`**" in verdict
    ranking = summary[summary.index("### ranking: map@10"):summary.index("### demand_levels")]
    assert "**Use `" in ranking and "is flat" not in ranking
    assert "**flat**: every trial" in summary[summary.index("## demand_levels"):]


# ---- 2: SIGKILL and resume ------------------------------------------------------------------

@pytest.mark.slow
def test_sigkill_then_resume_keeps_completed_and_retries_stale(tmp_path):
    # Data large enough that a trial trains for about a second on a quiet machine: the
    # kill must land inside one (on 3000 rows a quiet CI run once finished first).
    csv = _write_csv(tmp_path / "d.csv", n=12000)
    out = tmp_path / "out"
    total = 8
    cmd = [*TUNE, "--data", str(csv), "--label-col", "label",
           "--objectives", "native:binary", "--trials", str(total), "--max-rounds", "300",
           "--folds", "3", "--heartbeat", "1", "--quiet",
           "--out", str(out)]
    storage_url = f"sqlite:///{out / 'studies.db'}"
    proc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                            start_new_session=True)
    S = optuna.trial.TrialState
    killed_running = None
    try:
        deadline = time.time() + 300
        while time.time() < deadline and proc.poll() is None:
            time.sleep(0.05)
            if not (out / "studies.db").exists():
                continue
            try:
                study = optuna.load_study(study_name=None, storage=open_storage(storage_url))
            except (KeyError, ValueError):
                continue
            trials = study.get_trials(deepcopy=False)
            done = [t for t in trials if t.state in (S.COMPLETE, S.PRUNED)]
            running = [t for t in trials if t.state == S.RUNNING]
            # Kill while a trial trains: all its parameters stored (so its heartbeat,
            # written before the objective starts, is too). A trial killed before
            # that has nothing to retry with and no heartbeat to go stale.
            keys = set(done[0].params) if done else None
            training = [t for t in running if keys and set(t.params) == keys]
            if len(done) >= 2 and training:
                os.killpg(proc.pid, signal.SIGKILL)
                killed_running = training[0].number
                break
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
        proc.wait()
    assert killed_running is not None, "the run finished before it could be killed"
    storage = open_storage(storage_url)
    study = optuna.load_study(study_name=None, storage=storage)
    before = {t.number: t.value for t in study.get_trials() if t.state == S.COMPLETE}
    assert study.get_trials()[killed_running].state == S.RUNNING  # left behind by the kill
    # Past the grace period (3 heartbeats of 1 s), with margin for SQLite's
    # whole-second timestamps.
    time.sleep(5.0)
    r = subprocess.run(cmd, capture_output=True, text=True, timeout=600)
    assert r.returncode == 0, r.stderr
    study = optuna.load_study(study_name=None, storage=open_storage(storage_url))
    trials = study.get_trials()
    assert not [t for t in trials if t.state == S.RUNNING]
    for n, v in before.items():  # completed trials survive unchanged
        assert trials[n].state == S.COMPLETE and trials[n].value == v
    assert trials[killed_running].state == S.FAIL
    retried = [t for t in trials if t.system_attrs.get("failed_trial") == killed_running]
    assert retried and retried[0].params == trials[killed_running].params
    assert sum(t.state in (S.COMPLETE, S.PRUNED) for t in trials) == total


@pytest.mark.slow
def test_xgboost_studies_run_custom_and_native(tmp_path):
    pytest.importorskip("xgboost")
    task = _binary_task(n=1000)
    cfg = TuneConfig(booster="xgboost", trials=1, max_rounds=8, patience=4, n_folds=2,
                     out_dir=tmp_path, objectives=["focal", "native:binary:logistic"],
                     save_models=True, plots=False, progress=False)
    results = {r.key: r for r in tune_task(task, cfg)}
    assert set(results) == {"focal", "native:binary:logistic"}
    for r in results.values():
        assert r.status == "done" and r.n_complete == 1
        assert 0.0 < r.test["ap"] <= 1.0 and len(r.folds["ap"]) == 2
        assert Path(r.model_path).exists() and Path(r.model_path).suffix == ".json"


def test_tune_config_refuses_bad_settings():
    from gbrank.tuning import TuneConfig

    with pytest.raises(ValueError, match=r"trials must be an integer in \[1, inf\], got 0"):
        TuneConfig(trials=0)
    with pytest.raises(ValueError, match="booster must be one of"):
        TuneConfig(booster="catboost")
    # Each flag is checked on its own (``report="no"`` used to pass as True whenever
    # run_trials was True).
    with pytest.raises(ValueError, match="report must be True or False, got 'no'"):
        TuneConfig(report="no")
    with pytest.raises(ValueError, match="plots must be True or False, got 1"):
        TuneConfig(plots=1)
    # Objective keys and custom objectives fail here, not when the first task is tuned.
    with pytest.raises(ValueError, match=r"objectives: unknown objective 'nonsense'"):
        TuneConfig(objectives=["nonsense"])
    with pytest.raises(ValueError, match="objectives must be a list of objective keys"):
        TuneConfig(objectives="lambdarank:ndcg")
    with pytest.raises(ValueError, match=r"custom\['mine'\]: .* is not a gbrank objective"):
        TuneConfig(custom={"mine": object()})
    assert TuneConfig(objectives=["lambdarank:err", "native:lambdarank"]).objectives == [
        "lambdarank:err", "native:lambdarank"]


def test_task_refuses_parts_that_do_not_fit():
    """Rows, query sizes, columns and metric names are checked when a Task is made,
    naming the part (they failed later, inside scikit-learn's splitter or as an
    IndexError, or not at all)."""
    from gbrank.datasets import make_ranking
    from gbrank.tuning import Task

    X, y, g = make_ranking(n_queries=12, rows_per_query=10, n_features=4, seed=0)
    Xt, yt, gt = make_ranking(n_queries=4, rows_per_query=10, n_features=4, seed=1)
    short = g.copy()
    short[-1] -= 3
    cases = [((X, y, short, Xt, yt, gt), {},
              r"group \(query sizes of y's 120 rows, in row order\): group sizes sum to 117 "
              "but there are 120 rows"),
             ((X, y, g, Xt, yt, gt[:-1]), {},
              r"group_test \(query sizes of y_test's 40 rows, in row order\): group sizes "
              "sum to 30 but there are 40 rows"),
             ((X, y, np.r_[g[:-1], 0, g[-1]], Xt, yt, gt), {},
              "group sizes must be positive; 1 are not"),
             ((X[:-2], y, g, Xt, yt, gt), {}, "X has 118 rows and y 120 labels"),
             ((X, y, g, Xt[:, :3], yt, gt), {}, "X has 4 columns and X_test 3"),
             ((X, y, g, Xt, yt, gt), {"metrics": ("nonsense@10",)},
              "metrics: unknown metric 'nonsense@10'"),
             ((X, y, g, Xt, yt, gt), {"metrics": ("f1",)}, "metrics: .*ranking")]
    for args, kw, message in cases:
        with pytest.raises(ValueError, match=message):
            Task("t", "ranking", *args, **kw)
    assert Task("t", "ranking", X, y, g, Xt, yt, gt, metrics=("ERR@5",)).metrics == ("err@5",)


def test_trials_only_then_report_only_share_the_stored_study(tmp_path):
    """A trials-only worker fits nothing; a report-only run adds no trial and refits
    the stored best trial."""
    task = _binary_task(n=1000)
    common = dict(trials=2, max_rounds=10, patience=5, n_folds=2, out_dir=tmp_path,
                  objectives=["native:binary"], plots=False, progress=False)
    worker = tune_task(task, TuneConfig(report=False, **common))[0]
    assert worker.n_complete + worker.n_pruned == 2 and worker.n_here == 2
    assert worker.test == {} and worker.model_path == ""
    report = tune_task(task, TuneConfig(run_trials=False, **common))[0]
    assert (report.n_complete, report.n_pruned) == (worker.n_complete, worker.n_pruned)
    assert report.n_here == 0 and report.best_value == worker.best_value
    assert Path(report.model_path).exists() and 0.0 < report.test["ap"] <= 1.0
    with pytest.raises(ValueError, match="nothing to do"):
        TuneConfig(run_trials=False, report=False)


@pytest.mark.parametrize("booster, kind, key", [("lightgbm", "binary", "focal"),
                                                ("xgboost", "ranking", "lambdarank:ndcg")])
def test_saved_best_model_is_served_by_the_booster_alone(booster, kind, key, tmp_path):
    """The refit best model of a gbrank objective is written exported: the plain booster
    predicts, from the file alone, the tuner's test scores through the link (σ of raw
    score + start for binary, the raw score for ranking), recomputed here by a refit."""
    import json

    from gbrank import predict_proba
    from gbrank.objectives import get_objective
    from gbrank.tuning._cv import fit_full

    pytest.importorskip(booster)
    if kind == "binary":  # judged on AP alone: no decision threshold is chosen
        from gbrank.datasets import make_imbalanced

        X, y = make_imbalanced(n_rows=800, n_features=8, n_informative=4,
                               positive_rate=0.1, seed=0)
        task = dataclasses.replace(task_from_arrays("tiny_binary", X, y, kind="binary"),
                                   metrics=("ap",))
    else:
        task = _ranking_task(nq=30, rows=10)
    cfg = TuneConfig(booster=booster, trials=1, max_rounds=8, patience=4, n_folds=2,
                     out_dir=tmp_path, objectives=[key], plots=False, progress=False)
    res = {r.key: r for r in tune_task(task, cfg)}[key]  # (the native baseline too)
    meta = json.loads((Path(res.model_path).parent / "params.json").read_text())
    assert meta["served_max_abs_diff"] <= 1e-6
    assert "start (init_score) is in the trees" in meta["usage"] or kind == "ranking"
    if kind == "binary":
        # No threshold was chosen, so the usage decides at 0.5, not at a missing one.
        assert meta["threshold"] is None and "positive when probability > 0.5" in meta["usage"]
    obj = get_objective(key).set_params(**meta["objective_params"])
    _, init, s_test = fit_full(task, booster, meta["booster_params"], obj,
                               meta["num_boost_round"])
    expected = predict_proba(s_test) if kind == "binary" else s_test
    if booster == "lightgbm":
        import lightgbm as lgb

        served = lgb.Booster(model_file=res.model_path).predict(task.X_test)
    else:
        import xgboost as xgb

        served = xgb.Booster(model_file=res.model_path).predict(xgb.DMatrix(task.X_test))
    assert (init is None) == (kind == "ranking")
    np.testing.assert_allclose(served, expected, rtol=0, atol=1e-6)


# ---- group-less ranking on the command line is declared ----------------------------------

def _graded_files(tmp_path):
    """A graded table (with a column of query ids, and one without it), LETOR files with
    and without qid: fields."""
    import pandas as pd

    rng = np.random.default_rng(0)
    n = 120
    df = pd.DataFrame(rng.standard_normal((n, 3)), columns=["a", "b", "c"])
    df["rel"] = rng.choice([0, 1, 2, 4], n)  # grades, not the classes 0 … K-1
    df["query_id"] = rng.integers(0, 12, n)
    df.to_csv(tmp_path / "q.csv", index=False)
    df.drop(columns="query_id").to_csv(tmp_path / "flat.csv", index=False)
    df.drop(columns="query_id").assign(rel=df.rel % 2).to_csv(tmp_path / "binary.csv",
                                                               index=False)
    # Grades that look like classes, beside a column of query ids (a ranking table)
    df.assign(rel=df.rel % 2).to_csv(tmp_path / "qbinary.csv", index=False)
    df.assign(rel=rng.integers(0, 3, n)).to_csv(tmp_path / "q012.csv", index=False)
    rows = [f"{r.rel} qid:{r.query_id} 1:{r.a:.4f} 2:{r.b:.4f}" for r in df.itertuples()]
    (tmp_path / "q.txt").write_text("\n".join(rows) + "\n")
    (tmp_path / "flat.txt").write_text("\n".join(r.replace(r.split()[1] + " ", "")
                                                 for r in rows) + "\n")
    return tmp_path


@pytest.mark.parametrize("argv,match", [
    (["--data", "flat.csv", "--label-col", "rel"],
     "flat.csv is ranking data (graded labels; --task binary|multiclass if they are "
     "classes) without query ids: name its column of query ids with --qid-col COL, or, if "
     "all rows really are one query (group-less ranking), declare it with --groupless"),
    (["--data", "q.csv", "--label-col", "rel"], "with --qid-col query_id, or"),
    (["--data", "binary.csv", "--label-col", "rel", "--task", "ranking"],
     "binary.csv is ranking data without query ids: name its column"),
    (["--data", "qbinary.csv", "--label-col", "rel"],
     "qbinary.csv has a column 'query_id' named like query ids and no --qid-col, so its "
     "labels read as binary classes and 'query_id' as a feature: for ranking, name the "
     "column with --qid-col query_id; if the rows are not grouped in queries, say so with "
     "--task binary and leave the ids out with --drop-cols query_id"),
    (["--data", "q012.csv", "--label-col", "rel"],
     "labels read as multiclass classes and 'query_id' as a feature: for ranking, name the "
     "column with --qid-col query_id;"),
    (["--data", "qbinary.csv", "--label-col", "rel", "--metric", "ndcg@10"],
     "qbinary.csv is ranking data (graded labels; --task binary|multiclass if they are "
     "classes) without query ids: name its column of query ids with --qid-col query_id"),
    (["--data", "q.csv", "--label-col", "rel", "--task", "binary", "--drop-cols",
      "query_id"], "q.csv: y: binary labels must be {0, 1} or {-1, +1}; found 4 distinct "
     "values including [2.0, 4.0] (a binary task; graded labels are a ranking or "
     "multiclass task)"),
    (["--data", "flat.txt"],
     "flat.txt is ranking data (graded labels; --task binary|multiclass if they are "
     "classes) without query ids: give every row the qid:<id> of its query (or a "
     "flat.txt.query file of query sizes beside it), or, if all rows really are one query "
     "(group-less ranking), declare it with --groupless"),
    (["--data", "flat.txt,q.txt"], "flat.txt: no query structure (no qid: fields"),
    (["--data", "q.csv", "--label-col", "rel", "--qid-col", "query_id", "--groupless"],
     "--groupless declares all rows one query, and --qid-col query_id names query ids"),
    (["--data", "q.txt", "--groupless"],
     "--groupless declares all rows one query, and q.txt has 12 queries"),
    (["--data", "flat.csv", "--label-col", "rel", "--groupless", "--task", "binary"],
     "--groupless declares group-less ranking (all rows one query), not --task binary"),
    (["--groupless"], "--groupless and --fold need --data"),
    (["--fold", "2"], "--groupless and --fold need --data"),
    (["--data", "q.txt", "--fold", "2"], "--fold chooses a fold of a LETOR 4.0 folder of "
     "parts (S1.txt … S5.txt); q.txt is a single file or table"),
    (["--data", ".", "--groupless"], "is a LETOR folder, tuned over its queries"),
    (["--data", "flat.txt", "--groupless", "--test-data", "q.txt"],
     "--test-data: q.txt has 12 queries and --data is one query (group-less)"),
    (["--data", "q.txt", "--test-data", "flat.txt"],
     "--test-data: flat.txt has no query ids (no qid: fields, no .query file)"),
])
def test_ranking_data_without_query_ids_names_qid_and_groupless(argv, match, tmp_path,
                                                                 capsys, monkeypatch):
    monkeypatch.chdir(_graded_files(tmp_path))
    code, err = _main([*argv, "--out", str(tmp_path / "out")], capsys)
    assert code == 2
    lines = err.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("gbrank tune: error: "), err
    assert match in lines[0], lines[0]
    assert not (tmp_path / "out" / "SUMMARY.md").exists()


@pytest.mark.parametrize("argv", [
    ["--data", "flat.csv", "--label-col", "rel", "--groupless"],
    ["--data", "binary.csv", "--label-col", "rel", "--groupless"],  # 0/1 grades: ranking
    ["--data", "flat.txt", "--groupless"],
    ["--data", "flat.csv", "--label-col", "rel", "--groupless", "--test-data", "flat.csv"],
    ["--data", "flat.txt", "--groupless", "--test-data", "flat.txt"],
])
def test_groupless_flag_declares_one_query(argv, tmp_path, monkeypatch):
    monkeypatch.chdir(_graded_files(tmp_path))
    tune = _tune_module()
    [task] = tune._load_tasks(tune.parse_args(argv))
    assert task.kind == "ranking" and task.groupless
    assert task.group is None and task.group_test is None and task.metrics[0] == "ndcg"
    assert "group-less: all rows one query" in task.description


@pytest.mark.parametrize("extra,noted", [([], True), (["--task", "multiclass"], False),
                                          (["--quiet"], True)])
def test_a_kind_read_off_the_labels_is_said(extra, noted, tmp_path, monkeypatch, capsys):
    """Grades 0-2 of queries whose id column has no id-like name ("subject") read as
    three classes: said at once and in SUMMARY.md, naming the ids and --task."""
    import pandas as pd

    monkeypatch.chdir(_graded_files(tmp_path))
    pd.read_csv("q012.csv").rename(columns={"query_id": "subject"}).to_csv("topic.csv",
                                                                            index=False)
    tune = _tune_module()
    [task] = tune._load_tasks(tune.parse_args(["--data", "topic.csv", "--label-col", "rel",
                                               *extra]))
    assert task.kind == "multiclass"
    said = ("the labels 0…2 without query ids are read as a multiclass task (guessed from "
            "the labels): if they are grades of queries, give the ids (--qid-col COL with "
            "--task ranking); --task multiclass says it and silences this note")
    assert task.notes == ([said] if noted else [])
    printed = capsys.readouterr().out
    assert (said in printed) == (noted and "--quiet" not in extra)


@pytest.mark.parametrize("case", ["topic_id", "sidecar"])
def test_query_ids_a_table_does_not_name_are_refused(case, tmp_path, monkeypatch, capsys):
    """TREC's `topic_id` column, and a LightGBM `.query` file beside a CSV, were tuned as
    a 3-class task with the ids a feature (probe 65): each ends the run naming
    --qid-col."""
    import pandas as pd

    monkeypatch.chdir(_graded_files(tmp_path))
    df = pd.read_csv("q012.csv")
    if case == "topic_id":
        df.rename(columns={"query_id": "topic_id"}).to_csv("t.csv", index=False)
    else:
        df.drop(columns="query_id").to_csv("t.csv", index=False)
        Path("t.csv.query").write_text("".join(
            f"{n}\n" for n in df.groupby("query_id", sort=False).size()))
    tune = _tune_module()
    with pytest.raises(SystemExit) as exit_:
        tune._load_tasks(tune.parse_args(["--data", "t.csv", "--label-col", "rel"]))
    assert exit_.value.code == 2
    err = capsys.readouterr().err
    assert "--qid-col" in err and ("topic_id" in err if case == "topic_id" else
                                   "t.csv.query" in err)


def test_one_query_id_given_explicitly_is_group_less(tmp_path, monkeypatch):
    import pandas as pd

    monkeypatch.chdir(_graded_files(tmp_path))
    pd.read_csv("q.csv").assign(query_id=7).to_csv("one.csv", index=False)
    tune = _tune_module()
    [task] = tune._load_tasks(tune.parse_args(["--data", "one.csv", "--label-col", "rel",
                                               "--qid-col", "query_id"]))
    assert task.groupless and task.group is None


def test_f1_of_rare_positives_is_judged_at_each_models_own_held_out_cut(tmp_path):
    """Focal margins on 3.5 % positives rarely pass 0: judged at margin > 0 every trial
    scored F1 = 0 ("flat") though the model ranks the positives well. Judged at a
    held-out cut the study is not flat, and the test F1 is the saved model's at the
    reported threshold (scikit-learn's f1_score of its probabilities)."""
    import json

    import lightgbm as lgb
    from sklearn.metrics import f1_score

    from gbrank.datasets import make_imbalanced

    X, y = make_imbalanced(n_rows=3000, n_features=8, n_informative=4,
                           positive_rate=0.035, seed=1)
    task = task_from_arrays("rare", X, y, kind="binary", seed=0)
    cfg = TuneConfig(trials=2, max_rounds=30, patience=10, n_folds=2, finalists=1,
                     repeats=1, out_dir=tmp_path, objectives=["focal"], metric="f1",
                     plots=False, progress=False)
    res = next(r for r in tune_task(task, cfg) if r.key == "focal")
    assert min(res.values) > 0.2 and res.estimate > 0.2
    # never resumes a study whose trials were judged at margin > 0
    assert res.study.endswith("-focal-on-f1-xcut")
    p = res.cuts["f1"]
    prob = lgb.Booster(model_file=res.model_path).predict(task.X_test)
    assert res.test["f1"] == pytest.approx(f1_score(task.y_test, prob > p), abs=1e-12)
    meta = json.loads((Path(res.model_path).parent / "params.json").read_text())
    assert meta["threshold"]["probability"] == p and meta["threshold"]["best_for"] == "f1"
    assert "positive when probability > threshold['probability']" in meta["usage"]


@pytest.mark.parametrize("error", ["ValueError", "LightGBMError"])
def test_a_run_whose_every_trial_failed_says_why_and_exits_1(tmp_path, monkeypatch, capsys,
                                                             error):
    """Every trial raising (as an XGBoost metric named with ":" once did) left
    "nothing to recommend" with exit code 0 and the cause only in Optuna's log. A
    booster's own error fails the trial as a ValueError does; another error ends the
    run with it."""
    import lightgbm as lgb

    import gbrank.tuning._study as study_mod
    from gbrank.tuning import _cli as cli

    cls = ValueError if error == "ValueError" else lgb.basic.LightGBMError

    def broken(*args, **kwargs):
        raise cls("too many values to unpack (expected 2)")

    monkeypatch.setattr(study_mod, "run_cv", broken)
    code = cli.main(["--quick", "--objectives", "native:binary", "--trials", "2", "--quiet",
                     "--out", str(tmp_path)])
    err = capsys.readouterr().err
    assert code == 1 and f"every trial failed, the first with {error}: too many" in err
    assert "every trial failed" in (tmp_path / "SUMMARY.md").read_text()
    if error == "LightGBMError":

        def other(*args, **kwargs):
            raise RuntimeError("not a trial's failure")

        monkeypatch.setattr(study_mod, "run_cv", other)
        with pytest.raises(RuntimeError, match="not a trial's failure"):
            cli.main(["--quick", "--objectives", "native:binary", "--trials", "2", "--quiet",
                      "--out", str(tmp_path / "b")])


def test_lightgbms_lambdarank_is_not_tuned_on_a_list_over_its_limit(tmp_path):
    """LightGBM's lambdarank refuses a query of more than 10,000 rows (LightGBMError):
    a group-less task of one longer list ended the whole run with a traceback."""
    import lightgbm as lgb

    from gbrank.datasets import make_demand_levels

    X, y = make_demand_levels(n_rows=12_600)
    with pytest.raises(lgb.basic.LightGBMError, match="exceeds upper limit of 10000"):
        lgb.train({"objective": "lambdarank", "verbose": -1, "num_threads": 1},
                  lgb.Dataset(X[:10_001], y[:10_001], group=[10_001]), 1)
    task = task_from_arrays("long", X, y, groupless=True, seed=0)  # 10,080 tuning rows
    cfg = TuneConfig(trials=1, max_rounds=3, patience=2, n_folds=2, finalists=1, repeats=1,
                     out_dir=tmp_path, objectives=["native:lambdarank"], plots=False,
                     progress=False, save_models=False)
    (res,) = tune_task(task, cfg)
    assert res.status == "no trials" and "holds 10,080" in res.message


def test_report_only_without_a_stored_study_keeps_the_summary(tmp_path, capsys):
    argv = ["--quick", "--quiet", "--objectives", "native:binary", "--trials", "1",
            "--out", str(tmp_path)]
    tune = _tune_module()
    assert tune.main(argv) in (0, None)
    before = (tmp_path / "SUMMARY.md").read_text()
    code, err = _main([*argv, "--report-only", "--seed", "1"], capsys)
    assert code == 2 and "--report-only: no study" in err and "--seed" in err
    assert (tmp_path / "SUMMARY.md").read_text() == before


def test_data_too_small_for_the_folds_is_refused_before_any_study(tmp_path, capsys):
    (tmp_path / "tiny.txt").write_text("2 qid:1 1:0.5\n0 qid:1 1:0.1\n1 qid:1 1:0.3\n")
    code, err = _main(["--data", str(tmp_path / "tiny.txt"), "--quick", "--out",
                       str(tmp_path / "o")], capsys)
    assert code == 2 and "the tuning part has only 2 rows" in err


def test_a_column_named_like_row_weights_is_said_to_be_a_feature(tmp_path):
    """The tuner weights no rows: a table's `weight` column was learned as a feature
    without a word (seventh probe). Said in the SUMMARY, naming --drop-cols; with it
    dropped, nothing is said."""
    import pandas as pd

    from gbrank.tuning import _cli as cli

    csv = _write_csv(tmp_path / "d.csv", n=400)
    df = pd.read_csv(csv)
    df.assign(Weight=1.0 + df["f0"].abs()).to_csv(csv, index=False)
    common = ["--data", str(csv), "--label-col", "label", "--objectives", "native:binary",
              "--trials", "1", "--max-rounds", "5", "--folds", "2", "--finalists", "1",
              "--repeats", "1", "--quiet"]
    assert cli.main([*common, "--out", str(tmp_path / "a")]) == 0
    said = "olumn(s) 'Weight' are learned as features: the tuner weights no rows"
    assert said in (tmp_path / "a" / "SUMMARY.md").read_text()
    assert "--drop-cols Weight" in (tmp_path / "a" / "SUMMARY.md").read_text()
    assert cli.main([*common, "--drop-cols", "Weight", "--out", str(tmp_path / "b")]) == 0
    assert "learned as features" not in (tmp_path / "b" / "SUMMARY.md").read_text()


@pytest.mark.parametrize("name,weight_like", [
    ("class_weight", True), ("sample_wt", True), ("wt", True), ("W", True),
    ("instance_weights", True), ("Weight", True), ("width", False), ("twt", False),
    ("weekday", False), ("w2", False)])
def test_weight_like_column_names(name, weight_like):
    """Only six exact names were said (probe 65: a class_weight column, learned as a
    feature, lifted test AP from 0.63 to 0.86 without a word)."""
    from gbrank.tuning._cli_data import _weight_columns

    assert (_weight_columns(["f0", name]) is not None) == weight_like


def test_another_commands_summary_in_the_same_out_is_kept(tmp_path):
    """--report-only with fewer --objectives (or other data) in the same --out replaced
    SUMMARY.md and its verdict (seventh probe): the earlier one is kept under its time;
    the same command again overwrites its own."""
    from gbrank.tuning import _cli as cli

    csv = _write_csv(tmp_path / "d.csv", n=400)
    common = ["--data", str(csv), "--label-col", "label", "--trials", "1", "--max-rounds",
              "5", "--folds", "2", "--finalists", "1", "--repeats", "1", "--quiet",
              "--out", str(tmp_path / "o")]
    assert cli.main([*common, "--objectives", "focal,native:binary"]) == 0
    assert cli.main([*common, "--objectives", "focal,native:binary"]) == 0
    assert not list((tmp_path / "o").glob("SUMMARY-*.md"))  # the same command: replaced
    assert cli.main([*common, "--objectives", "native:binary", "--report-only"]) == 0
    kept = list((tmp_path / "o").glob("SUMMARY-*.md"))
    assert len(kept) == 1 and "focal" in kept[0].read_text()
    now = (tmp_path / "o" / "SUMMARY.md").read_text()
    assert "no gbrank objective is among this run's studies (`--objectives`)" in now
    # The kept summary's list of held-out rows went with it, renamed as it names it.
    stamp = kept[0].stem.removeprefix("SUMMARY-")
    assert f"`held_out_d.csv-{stamp}.txt`" in kept[0].read_text()
    assert "`held_out_d.csv.txt`" in now
    old_rows = (tmp_path / "o" / f"held_out_d.csv-{stamp}.txt").read_text()
    assert old_rows == (tmp_path / "o" / "held_out_d.csv.txt").read_text() != ""  # one split


def test_the_summary_says_when_studies_ran_fewer_trials_than_the_budget(tmp_path):
    """--timeout stopped every study after a few trials while the header said "100
    trials per study"; --trials 1 recommended untuned defaults as "settings" (seventh
    probe). Both are said in the header."""
    from gbrank.tuning import _cli as cli

    csv = _write_csv(tmp_path / "d.csv", n=400)
    common = ["--data", str(csv), "--label-col", "label", "--objectives", "native:binary",
              "--max-rounds", "5", "--folds", "2", "--finalists", "1", "--repeats", "1",
              "--quiet"]
    assert cli.main([*common, "--trials", "40", "--timeout", "0.01",
                     "--out", str(tmp_path / "a")]) == 0
    head = (tmp_path / "a" / "SUMMARY.md").read_text()
    assert "studies ran fewer trials than that**, stopped by --timeout 0.01 s" in head
    assert cli.main([*common, "--trials", "1", "--out", str(tmp_path / "b")]) == 0
    assert "With 1 trial(s) per study nothing is tuned" in (
        tmp_path / "b" / "SUMMARY.md").read_text()
