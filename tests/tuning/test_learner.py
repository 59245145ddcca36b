"""Issue 35, item 1: the learner's capacity and randomness in every ranking study's
search space, the finalists rescored with another booster seed on each repeat, and
studies stored by the previous search space left alone by a rerun."""

from __future__ import annotations

import numpy as np
import pytest

optuna = pytest.importorskip("optuna")

from gbrank.tuning import (  # noqa: E402
    TuneConfig,
    _booster_spaces,  # noqa: E402
    task_from_arrays,
    tune_task,
)
from gbrank.tuning._booster_spaces import booster_space  # noqa: E402
from gbrank.tuning._spaces import candidate, suggest_params  # noqa: E402
from gbrank.tuning._storage import open_storage  # noqa: E402


def _ranking_task(nq=40, rows=12, seed=0):
    from gbrank.datasets import make_ranking

    X, y, g = make_ranking(n_queries=nq, rows_per_query=rows, n_features=6, seed=seed)
    return task_from_arrays("tiny_ranking", X, y, g, kind="ranking", seed=seed)


def _space(booster, kind="ranking"):
    return {p.name: p for p in booster_space(booster, kind)}


def test_ranking_spaces_offer_the_learner_knobs():
    lgb = _space("lightgbm")
    assert lgb["extra_trees"].kind == "cat" and lgb["extra_trees"].choices == (False, True)
    assert (lgb["num_leaves"].low, lgb["num_leaves"].high, lgb["num_leaves"].log) == (
        3, 63, True)
    assert (lgb["min_data_in_leaf"].low, lgb["min_data_in_leaf"].high,
            lgb["min_data_in_leaf"].log) == (5, 200, True)
    # Measured and left out (experiments/results/learner_attribution.md).
    assert not {"path_smooth", "bagging_by_query"} & set(lgb)
    xgb = _space("xgboost")
    assert (xgb["colsample_bynode"].low, xgb["colsample_bynode"].high) == (0.5, 1.0)
    assert (xgb["max_depth"].low, xgb["max_depth"].high) == (3, 6)
    assert "extra_trees" not in xgb  # no such XGBoost parameter
    # Binary and multiclass tasks keep their space.
    assert "extra_trees" not in _space("lightgbm", "binary")
    assert "colsample_bynode" not in _space("xgboost", "multiclass")


@pytest.mark.parametrize("booster,key,knob", [
    ("lightgbm", "lambdarank:ndcg", "extra_trees"),
    ("lightgbm", "native:lambdarank", "extra_trees"),
    ("lightgbm", "native:rank_xendcg", "extra_trees"),
    ("xgboost", "ranknet", "colsample_bynode"),
    ("xgboost", "native:rank:ndcg", "colsample_bynode"),
])
def test_every_ranking_study_draws_the_knobs(booster, key, knob):
    """gbrank's objectives and the natives alike: the drawn value reaches the booster's
    parameters under the booster's own name."""
    study = optuna.create_study(sampler=optuna.samplers.RandomSampler(seed=0))
    trial = study.ask()
    bp, _ = suggest_params(trial, candidate(key, booster), booster)
    assert knob in bp and bp[knob] == trial.params[knob]


def test_extra_trees_makes_the_seed_matter():
    """With extra_trees LightGBM's ``seed`` changes the model (so rescoring over seeds
    means something); without it and without bagging it does not."""
    import lightgbm as lgb

    from gbrank.datasets import make_ranking

    X, y, g = make_ranking(n_queries=60, rows_per_query=15, n_features=8, seed=3)

    def predict(seed, extra):
        params = {"objective": "lambdarank", "verbose": -1, "num_threads": 1,
                  "num_leaves": 7, "seed": seed, "extra_trees": extra}
        return lgb.train(params, lgb.Dataset(X, y, group=g), num_boost_round=20).predict(X)

    assert not np.allclose(predict(0, True), predict(1, True))
    np.testing.assert_array_equal(predict(0, False), predict(1, False))


def test_rescoring_trains_each_repeat_with_another_booster_seed(monkeypatch):
    import gbrank.tuning._pick as pick

    task = _ranking_task()
    repeats = pick.RepeatFolds(task, 2, 3, 5, "lightgbm", 1)
    seen = []

    def record(data, params, obj, rounds, metrics, oof=None):
        seen.append((id(data), params["seed"]))
        return {m: [0.5] * len(data.folds) for m in metrics}

    monkeypatch.setattr(pick, "run_fixed", record)
    units = pick.rescore_params(repeats, {"seed": 5}, None, 3, ("ndcg@10",))
    assert [s for _, s in seen] == [5, 6, 7]
    assert [d for d, _ in seen] == [id(d) for d in repeats.data]
    assert len(units["ndcg@10"]) == 6


def test_a_study_of_the_previous_space_does_not_break_a_rerun(tmp_path, monkeypatch):
    """A study stored by the version-1 space (no extra_trees, other ranges) is not
    resumed: its trials lack the new parameters, so their rescoring would fail, and
    Optuna refuses a parameter whose distribution changed. The rerun starts a study of
    its own beside it."""
    task = _ranking_task()
    cfg = dict(trials=3, max_rounds=10, patience=3, n_folds=2, finalists=2, repeats=1,
               objectives=["native:lambdarank"], out_dir=tmp_path, save_models=False,
               plots=False, progress=False)
    old = [p for p in _booster_spaces.BOOSTER_SPACES["lightgbm"]]
    with monkeypatch.context() as m:
        m.setattr(_booster_spaces, "SPACE_VERSION", 1)
        m.setitem(_booster_spaces.RANKING_BOOSTER_SPACES, "lightgbm", old)
        (first,) = tune_task(task, TuneConfig(**cfg))
    (again,) = tune_task(task, TuneConfig(**cfg))
    assert first.status == again.status == "done" and first.study != again.study
    storage = open_storage(f"sqlite:///{tmp_path / 'studies.db'}")
    params = [t.params for t in optuna.load_study(study_name=again.study,
                                                  storage=storage).trials]
    assert params and all("extra_trees" in p for p in params)
    assert "extra_trees" in again.booster_params
    stored = optuna.load_study(study_name=first.study, storage=storage).trials
    assert len(stored) == 3 and not any("extra_trees" in t.params for t in stored)


def test_a_groupless_task_keeps_the_previous_space():
    """One list of every row: the evidence for the ranking space is on data with
    queries, so a group-less task's candidates search the previous space."""
    from gbrank.tuning._spaces import candidates_for

    for metric in (None, "map@10"):
        cands = candidates_for("one_list", "ranking", "lightgbm",
                               ["ranknet", "native:lambdarank"], metric=metric,
                               groupless_headline="ndcg")
        assert cands and all(c.groupless for c in cands)
        study = optuna.create_study(sampler=optuna.samplers.RandomSampler(seed=0))
        bp, _ = suggest_params(study.ask(), cands[1], "lightgbm")
        assert "extra_trees" not in bp
    grouped = candidates_for("r", "ranking", "lightgbm", ["native:lambdarank"])
    assert not any(c.groupless for c in grouped)


@pytest.mark.parametrize("booster", ["lightgbm", "xgboost"])
def test_the_starting_points_lie_in_the_ranking_space(booster):
    """Every starting point names each searched booster parameter once, inside its
    range (Optuna would otherwise run it outside the space the sampler models); the
    first is the booster's own default."""
    from gbrank.tuning._booster_spaces import starting_points

    space = _space(booster)
    points = starting_points(booster, "ranking")
    assert len(points) == 2
    for point in points:
        assert set(point) == set(space)
        for name, v in point.items():
            p = space[name]
            assert v in p.choices if p.kind == "cat" else p.low <= v <= p.high, name
    defaults = {"lightgbm": {"learning_rate": 0.1, "num_leaves": 31, "min_data_in_leaf": 20,
                             "extra_trees": False},
                "xgboost": {"eta": 0.3, "max_depth": 6, "min_child_weight": 1.0}}[booster]
    assert {k: points[0][k] for k in defaults} == defaults
    assert starting_points(booster, "binary") == []
    assert starting_points(booster, "ranking", groupless=True) == []


def test_a_ranking_study_tries_the_starting_points_first(tmp_path):
    from gbrank.tuning._booster_spaces import starting_points

    task = _ranking_task()
    cfg = TuneConfig(trials=3, max_rounds=10, patience=3, n_folds=2, finalists=2, repeats=1,
                     objectives=["native:lambdarank"], out_dir=tmp_path, save_models=False,
                     plots=False, progress=False)
    (res,) = tune_task(task, cfg)
    storage = open_storage(f"sqlite:///{tmp_path / 'studies.db'}")
    trials = optuna.load_study(study_name=res.study, storage=storage).trials
    first = [{k: t.params[k] for k in p} for t, p in
             zip(trials, starting_points("lightgbm", "ranking"), strict=False)]
    assert first == starting_points("lightgbm", "ranking")
    assert len(trials) == 3  # the budget counts them


def test_a_resumed_study_does_not_queue_the_starting_points_again(tmp_path):
    from gbrank.tuning._booster_spaces import starting_points

    task = _ranking_task()
    cfg = dict(max_rounds=10, patience=3, n_folds=2, finalists=2, repeats=1,
               objectives=["native:lambdarank"], out_dir=tmp_path, save_models=False,
               plots=False, progress=False)
    tune_task(task, TuneConfig(trials=3, **cfg))
    (res,) = tune_task(task, TuneConfig(trials=6, **cfg))
    storage = open_storage(f"sqlite:///{tmp_path / 'studies.db'}")
    trials = optuna.load_study(study_name=res.study, storage=storage).trials
    assert len(trials) == 6
    for point in starting_points("lightgbm", "ranking"):
        assert sum({k: t.params[k] for k in point} == point for t in trials) == 1
