"""The tuner on a click log (`gbrank tune --position-col ... --propensity ...`): the
position-bias correction is searched, positions follow their rows through the folds
and the test split, and every candidate is judged by IPS-DCG@10 on held-out clicks."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

optuna = pytest.importorskip("optuna")
lgb = pytest.importorskip("lightgbm")
xgb = pytest.importorskip("xgboost")

from gbrank._queries import query_order, tie_order  # noqa: E402
from gbrank.datasets import make_ranking, simulate_clicks  # noqa: E402
from gbrank.metrics import ips_dcg  # noqa: E402
from gbrank.tuning import _cli as cli  # noqa: E402
from gbrank.tuning._cv import FoldData, run_fixed  # noqa: E402
from gbrank.tuning._folds import make_folds  # noqa: E402
from gbrank.tuning._sources import task_from_arrays  # noqa: E402

RHO = "1,0.5,0.3333,0.25,0.2,0.1667,0.1429,0.125"


def _click_log(n_queries=60, seed=0):
    X, y, g = make_ranking(n_queries=n_queries, rows_per_query=16, n_features=5, seed=seed)
    weak = X[:, 0] + np.random.default_rng(seed).normal(size=y.size)
    log = simulate_clicks(y, g, weak, top_n=8, n_sessions=2, sessions="keep", seed=1,
                          epsilon_minus=0.05)
    return X[log.rows], log


@pytest.fixture(scope="module")
def csv_log(tmp_path_factory):
    """A click log as CSV files, training sessions and held-out sessions."""
    import pandas as pd

    X, log = _click_log()
    session = np.repeat(np.arange(log.group.size), log.group)
    df = pd.DataFrame(X, columns=[f"f{i}" for i in range(X.shape[1])])
    df["session"], df["shown_at"] = session, log.position
    df["clicked"] = log.clicks.astype(int)
    cut = int(np.searchsorted(session, int(0.75 * log.group.size)))
    folder = tmp_path_factory.mktemp("clicks")
    df.iloc[:cut].to_csv(folder / "train.csv", index=False)
    df.iloc[cut:].to_csv(folder / "test.csv", index=False)
    return folder


def _args(folder: Path, booster: str, out: Path, *extra: str, position: str = "shown_at"
          ) -> list[str]:
    return ["--data", str(folder / "train.csv"), "--test-data", str(folder / "test.csv"),
            "--label-col", "clicked", "--qid-col", "session", "--position-col", position,
            "--booster", booster, "--trials", "3", "--folds", "2", "--max-rounds", "8",
            "--finalists", "1", "--repeats", "1", "--quick", "--quiet", "--out", str(out),
            *extra]


@pytest.mark.parametrize("booster", ["lightgbm", "xgboost"])
def test_cli_tunes_the_position_bias_and_judges_by_ips_dcg(csv_log, booster, tmp_path):
    import pandas as pd

    out = tmp_path / "out"
    assert cli.main(_args(csv_log, booster, out, "--propensity", RHO,
                          "--objectives", "lambdarank:ndcg")) == 0
    storage = f"sqlite:///{out / 'studies.db'}"
    summaries = optuna.get_all_study_summaries(storage)
    ours = [s for s in summaries if "lambdarank:ndcg" in s.study_name]
    assert len(ours) == 1 and len(summaries) == 2  # and the booster's own (positions)
    for s in summaries:
        assert s.user_attrs["metric"] == "ips_dcg@10"
    trials = optuna.load_study(study_name=ours[0].study_name, storage=storage).trials
    assert all("obj_position_bias" in t.params for t in trials)
    # Its sessions repeat the logger's order (no row at two positions): learned
    # corrections are not searched, through the trials, the pick and the refit.
    assert all(t.params["obj_position_bias"] in (None, "ipw") for t in trials)
    test = pd.read_csv(csv_log / "test.csv")
    rho = [float(r) for r in RHO.split(",")]
    features = test[[f"f{i}" for i in range(5)]].to_numpy()
    for params in (out / "tune" / "models").rglob("params.json"):
        meta = json.loads(params.read_text())
        assert meta["metric"] == "ips_dcg@10" and list(meta["test"]) == ["ips_dcg@10"]
        if meta["objective_params"] is not None:  # the refit checked the log as code does
            assert meta["objective_params"]["on_cascade"] == "raise"
        model = next(p for p in params.parent.iterdir() if p.name.startswith("model."))
        if booster == "lightgbm":
            s = lgb.Booster(model_file=str(model)).predict(features)
        else:
            s = xgb.Booster(model_file=str(model)).predict(
                xgb.DMatrix(features, feature_names=[f"f{i}" for i in range(5)]))
        expected = ips_dcg(test["clicked"], s, test["shown_at"], rho, qid=test["session"])
        assert meta["test"]["ips_dcg@10"] == pytest.approx(expected, rel=1e-6)
    # the booster's own study searches its position-bias knob
    native = "lambdarank_position_bias_regularization" if booster == "lightgbm" else \
        "lambdarank_bias_norm"
    (theirs,) = [s for s in summaries if s is not ours[0]]
    assert all(native in t.params for t in optuna.load_study(
        study_name=theirs.study_name, storage=storage).trials)
    assert "ips_dcg@10" in (out / "SUMMARY.md").read_text()


@pytest.mark.slow  # an end-to-end run; the floors run has the other one
def test_a_held_out_table_of_true_grades_judges_the_test_by_them(tmp_path):
    """Tuned on clicks (IPS-DCG@10), tested on a table of true grades without the
    position column: every study's test NDCG@10 is that of its saved model on those
    grades, recomputed here."""
    import pandas as pd

    from gbrank.metrics import err, ndcg

    X, y, g = make_ranking(n_queries=80, rows_per_query=16, n_features=5, seed=4)
    weak = X[:, 0] + np.random.default_rng(4).normal(size=y.size)
    train_rows = np.arange(60 * 16)
    log = simulate_clicks(y[train_rows], g[:60], weak[train_rows], top_n=8, n_sessions=2,
                          sessions="keep", seed=1, epsilon_minus=0.05)
    names = [f"f{i}" for i in range(5)]
    df = pd.DataFrame(X[train_rows][log.rows], columns=names)
    df["session"] = np.repeat(np.arange(log.group.size), log.group)
    df["shown_at"], df["label"] = log.position, log.clicks.astype(int)
    df.to_csv(tmp_path / "clicks.csv", index=False)
    graded = pd.DataFrame(X[60 * 16:], columns=names)
    graded["session"] = np.repeat(np.arange(20), 16)
    graded["label"] = y[60 * 16:]
    graded.to_csv(tmp_path / "graded.csv", index=False)
    out = tmp_path / "out"
    args = ["--data", str(tmp_path / "clicks.csv"), "--test-data", str(tmp_path / "graded.csv"),
            "--label-col", "label", "--qid-col", "session", "--position-col", "shown_at",
            "--propensity", RHO, "--objectives", "lambdarank:ndcg", "--trials", "3",
            "--folds", "2", "--max-rounds", "8", "--finalists", "1", "--repeats", "1",
            "--quick", "--quiet", "--out", str(out)]
    assert cli.main(args) == 0
    for s in optuna.get_all_study_summaries(f"sqlite:///{out / 'studies.db'}"):
        assert s.user_attrs["metric"] == "ips_dcg@10"  # tuned on the clicks
    metas = list((out / "tune" / "models").rglob("params.json"))
    assert len(metas) == 2  # lambdarank:ndcg and LightGBM's lambdarank on the positions
    # the graded part is judged with each query's rows in tie_order (no display order)
    q = graded["session"].to_numpy()
    g = query_order(q)
    o = g[tie_order(graded[names].to_numpy()[g], graded["label"].to_numpy()[g],
                    np.unique(q, return_counts=True)[1])]
    judged = graded.iloc[o].reset_index(drop=True)
    for params in metas:
        meta = json.loads(params.read_text())
        assert "ips_dcg@10" not in meta["test"]
        model = next(p for p in params.parent.iterdir() if p.name.startswith("model."))
        s = lgb.Booster(model_file=str(model)).predict(graded[names].to_numpy())[o]
        assert meta["test"]["ndcg@10"] == pytest.approx(
            ndcg(judged["label"], s, qid=judged["session"], k=10), rel=1e-9)
        assert meta["test"]["err@10"] == pytest.approx(
            err(judged["label"], s, qid=judged["session"], k=10), rel=1e-9)
    summary = (out / "SUMMARY.md").read_text()
    assert "held-out test: ndcg@10 on true grades" in summary
    assert "true grades in its 'label' column" in summary
    # Grades where clicks are expected are still refused on the tuning part.
    df.assign(label=df["label"] * 2).to_csv(tmp_path / "bad.csv", index=False)
    with pytest.raises(SystemExit) as exc:
        cli.main([*args[:1], str(tmp_path / "bad.csv"), *args[2:]])
    assert exc.value.code == 2


def test_positions_follow_their_rows_through_the_folds():
    """Each fold's IPS-DCG@10 of a fixed configuration equals the booster trained by hand
    on the fold's training rows with their positions and judged on its validation rows'
    clicks, positions and propensities (LightGBM's lambdarank learns from positions)."""
    X, log = _click_log(n_queries=40)
    task = task_from_arrays("log", X, log.clicks, log.group, position=log.position,
                            propensity=log.examination, seed=0)
    assert task.metrics == ("ips_dcg@10",)
    folds = make_folds(task, 2, seed=0)
    params = {"objective": "lambdarank", "verbose": -1, "metric": "None",
              "lambdarank_position_bias_regularization": 0.1, "seed": 0}
    got = run_fixed(FoldData(task, folds, "lightgbm", n_jobs=1), params, None, 6,
                    task.metrics)["ips_dcg@10"]
    from gbrank.tuning._cv import LGB_DATASET_PARAMS

    def by_hand(fold, with_positions):
        extra = {"position": task.position[fold.train]} if with_positions else {}
        ds = lgb.Dataset(task.X[fold.train], task.y[fold.train], group=fold.group_train,
                         params=dict(LGB_DATASET_PARAMS, num_threads=1), **extra)
        model = lgb.train({**params, "num_threads": 1}, ds, 6)
        s = model.predict(task.X[fold.valid], raw_score=True)
        qid = np.repeat(np.arange(fold.group_valid.size), fold.group_valid)
        return ips_dcg(task.y[fold.valid], s, task.position[fold.valid], log.examination,
                       qid=qid)

    for f, fold in enumerate(folds):
        assert got[f] == pytest.approx(by_hand(fold, True), rel=1e-12)
    # the positions matter: without them LightGBM learns other models
    assert [by_hand(fold, False) for fold in folds] != pytest.approx(got, rel=1e-9)


def test_additive_offsets_move_by_the_trials_learning_rate():
    """The folds' LightGBM Datasets are constructed once for all trials and keep their
    own parameters: the additive offsets still move by the trial's learning rate, as
    when LightGBM trains on an unconstructed Dataset of the fold's rows by hand."""
    from gbrank.objectives import RankNet
    from gbrank.tuning._cv import LGB_DATASET_PARAMS

    X, log = _click_log(n_queries=40)
    task = task_from_arrays("log", X, log.clicks, log.group, position=log.position,
                            propensity=log.examination, seed=0)
    folds = make_folds(task, 2, seed=0)
    params = {"learning_rate": 0.3, "verbose": -1, "metric": "None", "seed": 0}
    got = run_fixed(FoldData(task, folds, "lightgbm", n_jobs=1), params,
                    RankNet(position_bias="additive"), 5, task.metrics)["ips_dcg@10"]

    def by_hand(fold, obj):
        import gbrank.lightgbm

        ds = lgb.Dataset(task.X[fold.train], task.y[fold.train], group=fold.group_train,
                         params=dict(LGB_DATASET_PARAMS, num_threads=1))
        f = gbrank.lightgbm.objective(obj, position=task.position[fold.train])
        model = lgb.train({**params, "num_threads": 1, "objective": f}, ds, 5)
        s = model.predict(task.X[fold.valid], raw_score=True)
        qid = np.repeat(np.arange(fold.group_valid.size), fold.group_valid)
        return ips_dcg(task.y[fold.valid], s, task.position[fold.valid], log.examination,
                       qid=qid)

    for f, fold in enumerate(folds):
        assert got[f] == pytest.approx(by_hand(fold, RankNet(position_bias="additive")),
                                       rel=1e-12)
    # a step of 0.1 (LightGBM's default rate, what a constructed Dataset would say)
    # learns other offsets
    slow = [by_hand(fold, RankNet(position_bias="additive", position_bias_learning_rate=0.1))
            for fold in folds]
    assert slow != pytest.approx(got, rel=1e-9)


def test_bad_click_log_flags_exit_2_naming_the_fix(csv_log, tmp_path, capsys):
    def run(*extra, args=None):
        with pytest.raises(SystemExit) as exc:
            cli.main((args or _args(csv_log, "lightgbm", tmp_path / "o")) + list(extra))
        return exc.value.code, capsys.readouterr().err

    code, err = run()  # no propensities
    assert code == 2 and "--propensity" in err and len(err.strip().splitlines()) == 1
    code, err = run(args=_args(csv_log, "lightgbm", tmp_path / "o", "--propensity", RHO,
                               position="rank"))
    assert code == 2 and "--position-col: 'rank' is not a column" in err
    code, err = run("--propensity", "1,0.5")  # positions 3 … 8 have none
    assert code == 2 and "position 3" in err
    code, err = run("--propensity", "1,half")
    assert code == 2 and "--propensity" in err
    code, err = run("--propensity", "1,,0.3333,0.25,0.2,0.1667,0.1429,0.125")
    assert code == 2 and "--propensity" in err
    without_qid = _args(csv_log, "lightgbm", tmp_path / "o", "--propensity", RHO)
    at = without_qid.index("--qid-col")
    code, err = run(args=without_qid[:at] + without_qid[at + 2:])
    assert code == 2 and "--qid-col" in err
    code, err = run("--propensity", RHO, "--metric", "ndcg@10")
    assert code == 2 and "ips_dcg" in err
    code, err = run("--propensity", RHO, "--objectives", "native:rank_xendcg")
    assert code == 2 and "ignore the click log's positions" in err
    code, err = run(args=["--data", str(csv_log / "train.csv"), "--label-col", "clicked",
                          "--propensity", RHO])
    assert code == 2 and "--position-col" in err
    import pandas as pd

    zero = tmp_path / "zero"
    zero.mkdir()
    for part in ("train", "test"):  # slot ids from 0 (the newcomer's log)
        pd.read_csv(csv_log / f"{part}.csv").eval("shown_at = shown_at - 1").to_csv(
            zero / f"{part}.csv", index=False)
    code, err = run(args=_args(zero, "lightgbm", tmp_path / "o", "--propensity", RHO))
    assert code == 2 and err.strip().endswith(
        "--position-col: 'shown_at' of " + str(zero / "train.csv") + " starts at 0, and "
        "display positions are 1, 2, … (--propensity gives the top position's first): add "
        "1 to the column")
    letor = tmp_path / "r.txt"
    letor.write_text("1 qid:1 1:0.5\n0 qid:1 1:0.1\n")
    code, err = run(args=["--data", str(letor), "--position-col", "p", "--propensity", RHO])
    assert code == 2 and "CSV/Parquet" in err



def _candidates(X, log, booster="lightgbm", order=None):
    """The click log's task, its candidates as the tuner makes them, and the lines the
    run printed about it (``order``: the rows reordered within their sessions)."""
    from gbrank.tuning import TuneConfig
    from gbrank.tuning._progress import Progress
    from gbrank.tuning._runner import _click_candidates

    rows = np.arange(log.clicks.size) if order is None else order
    task = task_from_arrays("log", X[log.rows][rows], log.clicks[rows], log.group,
                            position=log.position[rows], propensity=log.examination, seed=0)
    lines = []

    class Lines(Progress):
        def line(self, text):
            lines.append(text)

    cands = _click_candidates(task, TuneConfig(booster=booster, progress=False),
                              Lines(False))
    return task, cands, lines


@pytest.mark.parametrize("randomized", [0.0, 0.5])
def test_learned_corrections_are_searched_only_where_the_log_identifies_them(randomized):
    """A log where no document of a query was shown at two positions: gbrank's studies
    draw no correction or ipw only, and the run says why with the log's figure; a log
    with randomised sessions (swaps) keeps unbiased and additive in the search."""
    from gbrank.tuning._spaces import suggest_params

    X, y, g = make_ranking(n_queries=40, rows_per_query=16, n_features=5, seed=2)
    log = simulate_clicks(y, g, X[:, 0], top_n=8, n_sessions=4, sessions="keep", seed=1,
                          randomized=randomized)
    _, cands, lines = _candidates(X, log)
    ours = [c for c in cands if not c.is_native]
    assert ours and all(c.identifiable == (randomized > 0) for c in ours)
    assert any(c.is_native for c in cands)  # the booster's own stay, said in the line
    drawn = set()
    study = optuna.create_study(sampler=optuna.samplers.RandomSampler(seed=0))
    for _ in range(40):
        drawn.add(suggest_params(study.ask(), ours[0], "lightgbm")[1]["position_bias"])
    if randomized:
        assert drawn == {None, "ipw", "unbiased", "additive"} and not lines
    else:
        assert drawn == {None, "ipw"}
        (line,) = lines
        assert "'unbiased' and 'additive' left out" in line
        assert "none of its" in line and "shown at two positions" in line


def test_a_cascade_users_log_is_tuned_without_corrections():
    """Users who stop after a click (one click per session here, where independent
    clicks give many sessions two): every correction refuses such a log by default, so
    gbrank's studies draw none, even on a log that identifies position (swaps), and the
    run says why with the log's figure."""
    from gbrank.tuning._spaces import kernel_variants, suggest_params

    X, y, g = make_ranking(n_queries=60, rows_per_query=16, n_features=5, seed=2)
    log = simulate_clicks(y, g, X[:, 0], top_n=8, n_sessions=4, sessions="keep", seed=1,
                          randomized=0.5, user="cascade")
    starts = np.r_[0, np.cumsum(log.group)[:-1]]
    assert np.add.reduceat(log.clicks, starts).max() == 1  # by hand: one click at most
    task, cands, lines = _candidates(X, log)
    ours = [c for c in cands if not c.is_native]
    assert ours and all(c.cascade_like and c.identifiable for c in ours)
    study = optuna.create_study(sampler=optuna.samplers.RandomSampler(seed=0))
    for cand in ours:
        for _ in range(10):
            op = suggest_params(study.ask(), cand, "lightgbm")[1]
            assert op.get("position_bias") is None
        assert all(v.get("position_bias") is None for v in kernel_variants(cand))
    (line,) = lines
    assert "cascade users" in line and "0.0% of its sessions with a click" in line
    # SUMMARY.md says it under the task, after how the sessions were split
    assert task.notes[-1] == line.split(": ", 1)[1] and "60 blocks" in task.notes[0]
    # the booster's own objective trains without positions there: LightGBM's lambdarank
    # with positions lost 0.013 NDCG@10 to the same without on a cascade user's log
    from gbrank.tuning._tasks import native_learns_positions

    (native,) = [c for c in cands if c.is_native]
    bp = suggest_params(study.ask(), native, "lightgbm")[0]
    assert not native_learns_positions(bp) and native.target == "ips_dcg@10"


def test_on_a_cascade_users_log_the_summarys_code_names_no_position_column(tmp_path):
    """End to end: no study trains on positions there (every correction refuses such a
    log; the booster's own objective trains without them), so the SUMMARY's "Train it"
    line, which names the columns the code reads, leaves the position column out."""
    import pandas as pd

    X, y, g = make_ranking(n_queries=60, rows_per_query=16, n_features=5, seed=2)
    log = simulate_clicks(y, g, X[:, 0], top_n=8, n_sessions=4, sessions="keep", seed=1,
                          randomized=0.5, user="cascade")
    df = pd.DataFrame(X[log.rows], columns=[f"f{i}" for i in range(5)])
    df["session"] = np.repeat(np.arange(log.group.size), log.group)
    df["shown_at"], df["clicked"] = log.position, log.clicks.astype(int)
    cut = int(np.searchsorted(df["session"], int(0.75 * log.group.size)))
    df.iloc[:cut].to_csv(tmp_path / "train.csv", index=False)
    df.iloc[cut:].to_csv(tmp_path / "test.csv", index=False)
    out = tmp_path / "out"
    assert cli.main(_args(tmp_path, "lightgbm", out, "--propensity", RHO,
                          "--objectives", "lambdarank:ndcg")) == 0
    summary = (out / "SUMMARY.md").read_text()
    assert "cascade users" in summary  # the run says why no correction was searched
    train = next(line for line in summary.splitlines() if line.startswith("Train it"))
    assert "'clicked' column" in train and "position = " not in train, train
    # X is named by what it leaves out: read as "every other column", the position
    # column became a feature (seventh probe)
    assert ("X = its 5 feature columns (every column but 'clicked', 'session', "
            "'shown_at')") in train, train
    assert "svmlight" not in train.lower()  # a CSV's columns are named instead
    assert "position=" not in summary.split(train, 1)[1].split("```", 2)[1]


def test_the_tuners_corrections_never_refuse_a_fold():
    """The tuner reads the whole log's sessions once; a trial's objective then trains on
    any fold's part of it (on_cascade='ignore'), so a fold near the threshold cannot
    fail a trial the whole log allowed."""
    from gbrank.tuning._spaces import build_objective, click_candidates

    (cand, *_) = click_candidates("lightgbm", [1.0, 0.5])
    obj = build_objective(cand, {"position_bias": "unbiased"})
    assert obj.get_params()["on_cascade"] == "ignore"
    assert build_objective(cand, {}).get_params()["on_cascade"] == "raise"
    # The refit trains on the rows the tuner read: its own check agrees, and keeps the
    # default the SUMMARY's code (and params.json) show.
    refit = build_objective(cand, {"position_bias": "unbiased"}, whole_log=True)
    assert refit.get_params()["on_cascade"] == "raise"


def test_xgboosts_plain_native_stays_on_a_cascade_like_log_in_any_row_order():
    """On a cascade-like log XGBoost's own objective trains without
    lambdarank_unbiased, which would read a row's place as its position: so a log whose
    rows are not in display order keeps it (it is left out only when it reads them)."""
    X, y, g = make_ranking(n_queries=60, rows_per_query=16, n_features=5, seed=2)
    log = simulate_clicks(y, g, X[:, 0], top_n=8, n_sessions=4, sessions="keep", seed=1,
                          user="cascade")
    rng = np.random.default_rng(0)
    starts = np.r_[0, np.cumsum(log.group)[:-1]]
    order = np.concatenate([s0 + rng.permutation(m) for s0, m in zip(starts, log.group,
                                                                      strict=True)])
    _, cands, _ = _candidates(X, log, "xgboost", order)
    (native,) = [c for c in cands if c.is_native]
    assert native.key == "native:rank:ndcg" and not native.native.fixed
