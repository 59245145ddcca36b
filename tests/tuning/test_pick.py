"""gbrank.tuning._pick: finalists rescored on fresh folds with their refit's rounds, the
pick and its stored values; the study's direction for a metric to minimise."""

from __future__ import annotations

import numpy as np
import pytest

optuna = pytest.importorskip("optuna")

from gbrank.tuning import TuneConfig, task_from_arrays, tune_task  # noqa: E402
from gbrank.tuning._cv import FoldData, run_fixed  # noqa: E402
from gbrank.tuning._folds import make_folds  # noqa: E402
from gbrank.tuning._pick import configuration  # noqa: E402
from gbrank.tuning._spaces import candidate  # noqa: E402
from gbrank.tuning._storage import open_storage  # noqa: E402


def _ranking_task(nq=40, rows=12, seed=0):
    from gbrank.datasets import make_ranking

    X, y, g = make_ranking(n_queries=nq, rows_per_query=rows, n_features=6, seed=seed)
    return task_from_arrays("tiny_ranking", X, y, g, kind="ranking", seed=seed)


def _binary_task(n=1200, seed=0):
    from gbrank.datasets import make_imbalanced

    X, y = make_imbalanced(n_rows=n, n_features=6, n_informative=4, positive_rate=0.1,
                           seed=seed)
    return task_from_arrays("tiny_binary", X, y, kind="binary", seed=seed)


def _cfg(tmp_path, **kw):
    base = dict(trials=4, max_rounds=12, patience=4, n_folds=2, finalists=3, repeats=2,
                out_dir=tmp_path, save_models=False, plots=False, progress=False)
    return TuneConfig(**{**base, **kw})


def test_configuration_rounds_floats_and_sets_the_seed():
    cand = candidate("lambdarank:ndcg")
    params = {"learning_rate": 0.0712345678, "num_leaves": 21, "min_data_in_leaf": 12,
              "extra_trees": True,
              "feature_fraction": 0.83123456, "bagging_fraction": 0.9, "lambda_l1": 1.23456e-7,
              "lambda_l2": 1e-8, "obj_truncation": 23, "obj_norm": True,
              "obj_weighting": "lambdarank", "obj_sigma": 1.2345678}
    bp, op = configuration(params, cand, "lightgbm", None, seed=7)
    assert bp["learning_rate"] == 0.07123 and bp["feature_fraction"] == 0.8312
    assert bp["lambda_l1"] == 1.235e-07 and bp["num_leaves"] == 21 and bp["seed"] == 7
    assert bp["extra_trees"] is True
    assert op == {"truncation": 23, "norm": True, "weighting": "lambdarank",
                  "sigma": 1.235}


def test_run_fixed_trains_exactly_the_rounds_given():
    """No early stopping on the scored rows: the fold's score is that of a booster of
    exactly ``rounds`` rounds, as the refit is."""
    import lightgbm as lgb

    from gbrank.metrics import ndcg

    task = _ranking_task()
    data = FoldData(task, make_folds(task, 2, seed=5), "lightgbm", n_jobs=1)
    bp = {"objective": "lambdarank", "learning_rate": 0.1, "num_leaves": 7,
          "verbose": -1, "metric": "None", "seed": 0}
    got = run_fixed(data, bp, None, 9, ("ndcg@10",))["ndcg@10"]
    Xt, yt, gt, Xv, yv, gv = data.fold_arrays(1)
    model = lgb.train(dict(bp, num_threads=1, max_bin=255, min_data_in_bin=3,
                           feature_pre_filter=False),
                      lgb.Dataset(Xt, yt, group=gt), num_boost_round=9)
    assert model.current_iteration() == 9
    assert got[1] == pytest.approx(ndcg(yv, model.predict(Xv), gv, k=10), abs=1e-12)


def test_the_decision_cut_is_the_best_on_every_units_out_of_fold_rows():
    """The refit's cut: F1-best on the validation rows of every rescoring unit pooled,
    each row scored by a booster that did not train on it (fold boosters refit here by
    hand)."""
    import lightgbm as lgb
    from sklearn.metrics import f1_score

    from gbrank.tuning._pick import RepeatFolds, rescore_params

    task = _binary_task()
    repeats = RepeatFolds(task, 2, 2, 0, "lightgbm", 1)
    bp = {"objective": "binary", "learning_rate": 0.1, "num_leaves": 7, "verbose": -1,
          "metric": "None", "seed": 3}
    cuts: dict = {}
    units = rescore_params(repeats, bp, None, 8, ("f1", "ap"), cuts)
    assert set(cuts) == {"f1"} and len(units["f1"]) == 4
    ys, ss = [], []
    for r, data in enumerate(repeats.data):
        for f in range(2):
            Xt, yt, _, Xv, yv, _ = data.fold_arrays(f)
            model = lgb.train(dict(bp, seed=3 + r, num_threads=1, max_bin=255,
                                   min_data_in_bin=3, feature_pre_filter=False),
                              lgb.Dataset(Xt, yt), num_boost_round=8)
            ys.append(yv)
            ss.append(model.predict(Xv, raw_score=True))
    y, s = np.concatenate(ys), np.concatenate(ss)
    best = max(f1_score(y, s > t, zero_division=1.0) for t in np.unique(s) - 1e-9)
    assert f1_score(y, s > cuts["f1"]) == pytest.approx(best, abs=1e-12)


def test_pick_is_the_best_rescored_finalist_and_is_stored(tmp_path, monkeypatch):
    task = _ranking_task()
    cfg = _cfg(tmp_path, objectives=["native:lambdarank"])
    (res,) = tune_task(task, cfg)
    assert len(res.finalists) == 3
    # Finalists: the best CV trials; the pick: the best of them rescored (2 × 2 units).
    cvs = sorted((f["cv"] for f in res.finalists), reverse=True)
    study = optuna.load_study(study_name=res.study,
                              storage=open_storage(f"sqlite:///{tmp_path / 'studies.db'}"))
    done = sorted((t.value for t in study.trials if t.state.name == "COMPLETE"), reverse=True)
    assert cvs == done[:3]
    assert res.pick_trial == res.finalists[0]["trial"]
    assert res.estimate == max(f["rescored"] for f in res.finalists)
    assert all(len(v) == 4 for v in res.units.values()) and set(task.metrics) <= set(res.units)
    assert res.best_trial == study.best_trial.number and res.best_value == study.best_value
    # A report from the stored study trains no finalist again (rescored values stored).
    import gbrank.tuning._pick as pick

    def no_training(*args, **kwargs):
        raise AssertionError("the stored rescored values were not used")

    monkeypatch.setattr(pick, "run_fixed", no_training)
    (again,) = tune_task(task, _cfg(tmp_path, objectives=["native:lambdarank"],
                                    run_trials=False))
    assert again.units == res.units and again.pick_trial == res.pick_trial
    assert again.test == res.test


def test_a_loss_is_minimised_and_gets_its_own_study(tmp_path):
    from gbrank.tuning._cv import _fold_validation

    assert _fold_validation("logloss", np.zeros(2), None).higher_is_better is False
    assert _fold_validation("ap", np.zeros(2), None).higher_is_better is True
    task = _binary_task()
    (res,) = tune_task(task, _cfg(tmp_path, objectives=["native:binary"], metric="logloss"))
    assert res.target == "logloss" and res.own_target == "ap" and not res.higher_is_better
    assert res.study.endswith("-native:binary-on-logloss")
    study = optuna.load_study(study_name=res.study,
                              storage=open_storage(f"sqlite:///{tmp_path / 'studies.db'}"))
    assert study.direction == optuna.study.StudyDirection.MINIMIZE
    values = [t.value for t in study.trials if t.state.name == "COMPLETE"]
    assert res.best_value == min(values)
    assert [f["cv"] for f in res.finalists] != [] and res.estimate == min(
        f["rescored"] for f in res.finalists)
    assert task.metrics[0] == "logloss"  # the task is judged first by the run's metric
    # Without --metric the objective's own study (a different name) is untouched.
    (own,) = tune_task(_binary_task(), _cfg(tmp_path, objectives=["native:binary"]))
    assert own.study == res.study[: -len("-on-logloss")] and own.higher_is_better
