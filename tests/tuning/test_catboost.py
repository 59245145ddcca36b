"""Issue 35, item 2: ``--baselines catboost``: CatBoost's ranking objectives tuned on the
tuner's folds, rescored on its units and named in the verdict with the paired interval
(even when CatBoost wins); without CatBoost installed, one clear line naming the extra."""

from __future__ import annotations

import sys

import numpy as np
import pytest

optuna = pytest.importorskip("optuna")

from gbrank.tuning import StudyResult, TuneConfig, task_from_arrays, tune_task  # noqa: E402
from gbrank.tuning._verdict import recommend, verdict_lines  # noqa: E402


def _ranking_task(nq=60, rows=12, seed=0):
    from gbrank.datasets import make_ranking

    X, y, g = make_ranking(n_queries=nq, rows_per_query=rows, n_features=6, seed=seed)
    return task_from_arrays("tiny_ranking", X, y, g, kind="ranking", seed=seed)


def test_without_catboost_the_flag_fails_naming_the_extra(monkeypatch, tmp_path, capsys):
    monkeypatch.setitem(sys.modules, "catboost", None)  # import catboost fails
    with pytest.raises(ImportError, match=r"pip install 'gbrank\[catboost\]'"):
        TuneConfig(baselines=["catboost"])
    from gbrank.tuning._cli import _config, parse_args

    args = parse_args(["--data", str(tmp_path / "d.txt"), "--baselines", "catboost"])
    with pytest.raises(SystemExit) as exc:
        _config(args, None)
    assert exc.value.code == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and err.startswith("gbrank tune: error: --baselines: ")
    assert "pip install 'gbrank[catboost]'" in err
    # Without the flag nothing needs CatBoost.
    assert TuneConfig().baselines is None


def test_an_unknown_baseline_is_refused():
    with pytest.raises(ValueError, match="baselines must be one of"):
        TuneConfig(baselines=["ranklib"])


def _units(mean, n=6, seed=0):
    rng = np.random.default_rng(seed)
    return (mean + 0.002 * rng.standard_normal(n)).tolist()


def _row(key, mean, native=True, seed=0, **kw):
    return StudyResult("t", key, "ndcg@10", native, "done", values=[0.1, 0.2],
                       units={"ndcg@10": _units(mean, seed=seed)},
                       test={"ndcg@10": mean + 0.01}, **kw)


def test_the_verdict_says_use_catboost_when_it_leads_beyond_noise():
    nat = _row("native:lambdarank", 0.70, seed=1)
    cb = _row("catboost:YetiRank", 0.75, seed=2, rounds=40,
              booster_params={"loss_function": "YetiRank", "depth": 6, "iterations": 40,
                              "random_seed": 0, "thread_count": 1})
    rec = recommend([nat, cb], "ndcg@10", 3)
    assert rec.use is nat and rec.catboost is cb and rec.catboost_wins
    text = "\n".join(verdict_lines("t", [nat, cb], "ndcg@10", 3, kind="ranking",
                                   booster="lightgbm", metric_chosen=True))
    assert "**Use CatBoost `YetiRank`**" in text
    assert rec.versus_catboost.describe() in text  # the paired interval, CatBoost ahead
    assert "ahead" in rec.versus_catboost.describe()
    assert "cannot run inside CatBoost" in text
    assert '"loss_function": "YetiRank",' in text and "thread_count" not in text
    # the table names CatBoost as the recommendation, the booster's pick as its best
    assert "| recommended: `catboost:YetiRank` | " in text
    assert "| best LightGBM: `native:lambdarank` | " in text
    assert "| recommended: `native:lambdarank`" not in text


def test_the_catboost_code_of_the_verdict_runs_on_svmlight_data(tmp_path, monkeypatch):
    """The printed code, run as written on what load_svmlight_file returns (CSR with
    64-bit indices, which CatBoost refuses unless converted), writes no catboost_info/."""
    pytest.importorskip("catboost")
    import scipy.sparse as sp

    nat = _row("native:lambdarank", 0.70, seed=1)
    cb = _row("catboost:YetiRank", 0.75, seed=2, rounds=5,
              booster_params={"loss_function": "YetiRank", "depth": 4, "iterations": 5,
                              "random_seed": 0, "thread_count": 1})
    text = "\n".join(verdict_lines("t", [nat, cb], "ndcg@10", 3, kind="ranking",
                                   booster="lightgbm", metric_chosen=True))
    code = text.split("```python\n", 1)[1].split("```", 1)[0]
    rng = np.random.default_rng(0)
    X = sp.random(120, 8, density=0.5, format="csr", random_state=0)
    X.indices, X.indptr = X.indices.astype(np.int64), X.indptr.astype(np.int64)
    y = rng.integers(0, 3, 120).astype(float)
    qid = np.repeat(np.arange(12), 10)
    monkeypatch.chdir(tmp_path)
    space = {"X": X, "y": y, "qid": qid, "X_new": X}
    exec(code, space)
    assert space["scores"].shape == (120,) and np.isfinite(space["scores"]).all()
    assert not (tmp_path / "catboost_info").exists()


def test_catboost_within_noise_is_named_but_not_recommended():
    nat = _row("native:lambdarank", 0.70, seed=1)
    cb = _row("catboost:LambdaMart", 0.70, seed=2)
    rec = recommend([nat, cb], "ndcg@10", 3)
    assert not rec.catboost_wins and rec.use is nat
    text = "\n".join(verdict_lines("t", [nat, cb], "ndcg@10", 3, kind="ranking",
                                   booster="lightgbm", metric_chosen=True))
    assert "**Use `native:lambdarank`**" in text and "Use CatBoost" not in text
    assert f"`catboost:LambdaMart` (`--baselines catboost`), is " \
           f"{rec.versus_catboost.describe()}" in text
    # CatBoost is never the booster's native baseline a gbrank objective must beat.
    assert rec.best_native is nat


def test_catboost_studies_run_on_the_tuners_units(tmp_path):
    pytest.importorskip("catboost")
    from gbrank.tuning._report import write_summary

    task = _ranking_task()
    cfg = TuneConfig(trials=3, max_rounds=20, patience=5, n_folds=2, finalists=2, repeats=2,
                     objectives=["native:lambdarank"], baselines=["catboost"],
                     out_dir=tmp_path, plots=False, save_models=False, progress=False)
    results = tune_task(task, cfg)
    by_key = {r.key: r for r in results}
    cbs = [by_key[f"catboost:{loss}"] for loss in ("YetiRank", "LambdaMart", "QueryRMSE")]
    nat = by_key["native:lambdarank"]
    for r in cbs:
        assert r.status == "done" and r.n_complete == 3
        assert len(r.units["ndcg@10"]) == len(nat.units["ndcg@10"]) == 4
        assert 0.0 < r.test["ndcg@10"] <= 1.0
        assert r.booster_params["thread_count"] == 1
    rec = recommend(results, "ndcg@10", 2)
    best_cb = max(cbs, key=lambda r: np.mean(r.units["ndcg@10"]))
    assert rec.catboost is best_cb
    path = write_summary(tmp_path / "SUMMARY.md", [task], results, config_line="test",
                         metric="ndcg@10")
    text = path.read_text()
    verdict = text[text.index("## Verdict"):text.index("## How to read")]
    assert f"`{best_cb.key}`" in verdict and rec.versus_catboost.describe() in verdict
    assert f"{np.mean(best_cb.units['ndcg@10']):.4f}" in verdict  # its figures
    assert f"{best_cb.test['ndcg@10']:.4f}" in verdict
    # Each study's first trial is CatBoost's own defaults for its loss.
    for r in cbs:
        first = optuna.load_study(study_name=r.study,
                                  storage=f"sqlite:///{tmp_path / 'studies.db'}").trials[0]
        assert first.params == cbmod_defaults()[r.key.split(":")[1]]
    # A rerun resumes the stored CatBoost studies: no new trial, and the rescored
    # values come from the study (nothing trained but the refit).
    import gbrank.tuning._catboost as cbmod

    def no_rescoring(*args, **kwargs):
        raise AssertionError("the stored rescored values were not used")

    with pytest.MonkeyPatch.context() as m:
        m.setattr(cbmod, "_rescore", no_rescoring)
        again = {r.key: r for r in tune_task(task, cfg)}
    assert all(again[r.key].n_here == 0 and again[r.key].n_complete == 3 for r in cbs)
    assert all(again[r.key].units == r.units and again[r.key].test == r.test for r in cbs)


def cbmod_defaults():
    from gbrank.tuning._catboost import DEFAULTS

    return DEFAULTS


def test_the_catboost_studies_start_at_catboosts_own_defaults():
    """The first trial of each CatBoost study is what CatBoost does untouched, read from
    a model fitted with the loss alone: depth, learning rate, random strength, MVS's
    subsample, and the L2 penalty (none for YetiRank and LambdaMart, which the space's
    lowest value stands for)."""
    cb = pytest.importorskip("catboost")
    from gbrank.tuning._catboost import FIXED, SPACE

    # 200 rows: below 100 CatBoost bootstraps every row (subsample 1)
    X = np.random.default_rng(0).normal(size=(200, 3))
    y, qid = np.arange(200) % 3, np.repeat(np.arange(20), 10)
    space = {p.name: p for p in SPACE}
    for loss, start in cbmod_defaults().items():
        model = cb.CatBoost({"loss_function": loss, "iterations": 2, "verbose": 0,
                             "allow_writing_files": False})
        model.fit(cb.Pool(X, y, group_id=qid))
        own = model.get_all_params()
        assert own["bootstrap_type"] == FIXED["bootstrap_type"]
        assert set(start) == set(space)
        for name, value in start.items():
            p = space[name]
            assert p.low <= value <= p.high
            if name == "l2_leaf_reg" and own[name] < p.low:
                assert value == p.low  # no penalty: the space's lowest
            else:
                assert value == pytest.approx(own[name], rel=1e-6), (loss, name)


def test_catboost_takes_a_letor_files_sparse_rows(tmp_path):
    """A LETOR/SVMlight file loads as a SciPy CSR matrix with 64-bit indices, which
    CatBoost refuses unless they are 32-bit."""
    pytest.importorskip("catboost")
    import scipy.sparse as sp

    from gbrank.datasets import make_ranking
    from gbrank.tuning import Task

    def csr64(X):
        Xs = sp.csr_matrix(X)
        Xs.indices, Xs.indptr = Xs.indices.astype(np.int64), Xs.indptr.astype(np.int64)
        return Xs

    X, y, g = make_ranking(n_queries=50, rows_per_query=10, n_features=5, seed=1)
    # As the command line builds a task from --data and --test-data (no row selection,
    # which would give SciPy the chance to narrow the indices).
    task = Task("sparse", "ranking", csr64(X[:400]), y[:400], g[:40], csr64(X[400:]),
                y[400:], g[40:])
    cfg = TuneConfig(trials=2, max_rounds=10, patience=3, n_folds=2, finalists=1, repeats=1,
                     objectives=["native:lambdarank"], baselines=["catboost"],
                     out_dir=tmp_path, plots=False, save_models=False, progress=False)
    cbs = [r for r in tune_task(task, cfg) if r.key.startswith("catboost:")]
    assert len(cbs) == 3 and all(r.status == "done" and r.test for r in cbs)


def test_the_command_line_with_baselines_catboost_quick(tmp_path, capsys):
    """`gbrank tune --data FILE --baselines catboost --quick`: the SUMMARY's verdict
    names CatBoost's best study with its figures."""
    pytest.importorskip("catboost")
    from sklearn.datasets import dump_svmlight_file

    from gbrank.datasets import make_ranking
    from gbrank.tuning._cli import main

    X, y, g = make_ranking(n_queries=60, rows_per_query=10, n_features=5, seed=4)
    data = tmp_path / "train.txt"
    dump_svmlight_file(X, y, str(data), query_id=np.repeat(np.arange(g.size), g))
    out = tmp_path / "out"
    code = main(["--data", str(data), "--baselines", "catboost", "--quick", "--metric",
                 "ndcg@10", "--objectives", "native:lambdarank", "--quiet", "--out",
                 str(out)])
    assert code == 0
    text = (out / "SUMMARY.md").read_text()
    verdict = text[text.index("## Verdict"):text.index("## How to read")]
    assert "CatBoost's best: `catboost:" in verdict
    assert "cannot run inside CatBoost" in verdict
    for loss in ("YetiRank", "LambdaMart", "QueryRMSE"):
        assert f"| catboost:{loss} | ndcg@10 |" in text


def test_a_task_catboost_cannot_serve_says_so_in_the_summary(tmp_path):
    """--baselines catboost on a binary task: not dropped silently, SUMMARY.md says why."""
    from gbrank.tuning._report import write_summary

    rng = np.random.default_rng(0)
    X, y = rng.standard_normal((200, 4)), (rng.random(200) < 0.3).astype(float)
    task = task_from_arrays("tiny_binary", X, y, kind="binary", seed=0)
    rows = [StudyResult("tiny_binary", "native:binary", "ap", True, "done", values=[0.5],
                        units={"ap": _units(0.5)})]
    for baselines, said in ((["catboost"], True), (None, False)):
        path = write_summary(tmp_path / "SUMMARY.md", [task], rows, config_line="test.",
                             baselines=baselines)
        text = path.read_text()
        assert ("CatBoost baseline (`--baselines catboost`): not run: CatBoost's ranking "
                "losses need a ranking task with query ids" in text) is said
