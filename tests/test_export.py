"""Native export (gbrank.lightgbm.to_native, gbrank.xgboost.to_native, the estimators'
save_model): a model trained with a gbrank objective, saved, is served by loaders that
know nothing of gbrank — plain LightGBM / XGBoost in a process where gbrank and numba
cannot be imported, ONNX Runtime through onnxmltools, Treelite — and each predicts what
gbrank predicts (GBClassifier.predict_proba, GBRanker.predict, predict_proba of the raw
scores plus the start).

The models are trained and their expected outputs computed here; one child process
loads the files and predicts; the tests compare. A control (the booster's own file,
not exported) shows the comparison can fail.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap

import numpy as np
import pytest

lgb = pytest.importorskip("lightgbm")
xgb = pytest.importorskip("xgboost")

import gbrank  # noqa: E402
from gbrank.lightgbm import to_native as lgb_native  # noqa: E402
from gbrank.objectives import FBetaSurrogate, FocalLoss, LambdaRank, RankNet  # noqa: E402
from gbrank.sklearn import GBClassifier, GBRanker  # noqa: E402
from gbrank.xgboost import objective as xgb_objective  # noqa: E402
from gbrank.xgboost import to_native as xgb_native  # noqa: E402

N, F = 400, 5
# Exact in float32 and far from every split threshold after a float32 cast (ONNX and
# Treelite read float32): two decimals.
X = np.round(np.random.default_rng(0).standard_normal((N, F)), 2)
X_NEW = np.round(np.random.default_rng(1).standard_normal((300, F)), 2)
RNG = np.random.default_rng(2)
Y_BIN = (X[:, 0] + 0.8 * RNG.standard_normal(N) > 1.0).astype(float)
Y_MULTI = np.digitize(X[:, 1] + 0.5 * RNG.standard_normal(N), [-0.5, 0.5]).astype(float)
Y_RANK = np.clip(np.round(X[:, 0] + X[:, 2] + RNG.standard_normal(N)), 0, 4)
QID = np.repeat(np.arange(20), N // 20)
SMALL = {"n_estimators": 12, "num_leaves": 7, "random_state": 0}

# Per booster: GBClassifier with FocalLoss and FBetaSurrogate, FocalLoss(num_class=3)
# directly and in a 3-class GBClassifier, GBRanker with three objectives, calibrated, and
# with a DataFrame.
EXPORTED = 18
CI = os.environ.get("CI", "").lower() in ("1", "true", "yes")


def _need(module: str) -> None:
    """A serving tool of the dev extra: skipped where absent, required in CI."""
    import importlib.util

    if importlib.util.find_spec(module) is None:
        if CI:
            pytest.fail(f"{module} is not installed (required in CI: pip install -e '.[dev]')")
        pytest.skip(f"{module} is not installed: pip install -e '.[dev]'")


def _multiclass(booster: str):
    """FocalLoss(num_class=3) trained directly with the booster, exported; expected
    probabilities from the raw scores plus the start."""
    obj = FocalLoss(gamma=1.0, num_class=3)
    start = obj.init_score(Y_MULTI)
    tiled = np.tile(start, (N, 1))
    if booster == "lightgbm":
        model = lgb.train({"objective": obj, "num_class": 3, "num_leaves": 7, "verbose": -1,
                           "seed": 0}, lgb.Dataset(X, Y_MULTI, init_score=tiled),
                          num_boost_round=12)
        raw = model.predict(X_NEW, raw_score=True)
        return lgb_native(model, obj, init_score=start), gbrank.predict_proba(raw + start)
    model = xgb.train({"num_class": 3, "max_depth": 3, "seed": 0},
                      xgb.DMatrix(X, Y_MULTI, base_margin=tiled), num_boost_round=12,
                      obj=xgb_objective(obj))
    margin = model.predict(xgb.DMatrix(X_NEW, base_margin=np.tile(start, (len(X_NEW), 1))),
                           output_margin=True)
    return xgb_native(model, obj, init_score=start), gbrank.predict_proba(margin)


def _cases(tmp) -> dict:
    """Every exported model, saved; its task; and what gbrank predicts on X_NEW."""
    cases = {}

    def add(name, booster, task, save, expected, features=None):
        path = tmp / f"{name}.{'txt' if booster == 'lightgbm' else 'json'}"
        save(str(path))
        np.save(tmp / f"{name}.npy", np.asarray(expected, dtype=np.float64))
        cases[name] = {"booster": booster, "task": task, "model": str(path),
                       "expected": str(tmp / f"{name}.npy"), "features": features}

    labels = np.where(Y_BIN > 0, "churn", "stay")  # the positive class is classes_[0]
    for booster in ("lightgbm", "xgboost"):
        extra = {} if booster == "lightgbm" else {"num_leaves": None, "max_depth": 3}
        for objective in ("focal", FBetaSurrogate(random_state=0)):
            clf = GBClassifier(objective, booster=booster, **{**SMALL, **extra})
            if objective == "focal":
                clf.set_params(pos_label="churn", early_stopping_rounds=3).fit(X, labels)
                assert clf.pos_label_ == clf.classes_[0]
            else:
                clf.fit(X, Y_BIN)
            column = list(clf.classes_).index(clf.pos_label_)
            name = f"{booster}-GBClassifier-{clf.objective_.__class__.__name__}"
            save = clf.save_model
            if column == 0:  # the file's probability is predict_proba's column 0: said

                def save(path, clf=clf):
                    with pytest.warns(UserWarning, match=r"probability of pos_label_ "
                                      r"'churn', which is predict_proba\(X\)\[:, 0\]"):
                        clf.save_model(path)
            add(name, booster, "binary", save, clf.predict_proba(X_NEW)[:, column])
            if objective == "focal":  # the control: the booster's own file
                add(f"{booster}-control-unexported", booster, "binary",
                    clf.booster_.save_model, clf.predict_proba(X_NEW)[:, column])
        model, expected = _multiclass(booster)
        add(f"{booster}-FocalLoss-multiclass", booster, "multiclass", model.save_model,
            expected)
        grades = np.array(["a", "b", "c"])[Y_MULTI.astype(int)]
        clf = GBClassifier(FocalLoss(gamma=2.0, alpha="balanced"), booster=booster,
                           **{**SMALL, **extra}).fit(X, grades)
        add(f"{booster}-GBClassifier-multiclass", booster, "multiclass", clf.save_model,
            clf.predict_proba(X_NEW))
        for label, objective in (("LambdaRank", LambdaRank()),
                                 ("LambdaRank(map,norm)", LambdaRank(metric="map", norm=True)),
                                 ("RankNet", RankNet())):
            rk = GBRanker(objective, booster=booster, **{**SMALL, **extra}).fit(X, Y_RANK,
                                                                               qid=QID)
            add(f"{booster}-GBRanker-{label}", booster, "ranking", rk.save_model,
                rk.predict(X_NEW))
        # A calibrated ranker is served as a binary model: its probabilities.
        rk = GBRanker(LambdaRank(calibration=0.3), booster=booster,
                      **{**SMALL, **extra}).fit(X, Y_RANK, qid=QID)
        add(f"{booster}-GBRanker-calibrated", booster, "binary", rk.save_model,
            rk.predict_proba(X_NEW)[:, 1])
    # Feature names from a DataFrame whose query-id column is no feature.
    pd = pytest.importorskip("pandas")
    names = [f"f{i}" for i in range(F)]
    df = pd.DataFrame(X, columns=names).assign(qid=QID)
    new = pd.DataFrame(X_NEW, columns=names).assign(qid=np.repeat(np.arange(15), 20))
    for booster in ("lightgbm", "xgboost"):
        extra = {} if booster == "lightgbm" else {"num_leaves": None, "max_depth": 3}
        rk = GBRanker("lambdarank", booster=booster, **{**SMALL, **extra}).fit(df, Y_RANK)
        add(f"{booster}-GBRanker-DataFrame", booster, "ranking", rk.save_model,
            rk.predict(new), features=names)
    return cases


# The child: gbrank and numba cannot be imported; every loader reads the files.
CHILD = textwrap.dedent('''
    import sys
    sys.modules["gbrank"] = None
    sys.modules["numba"] = None
    for name in ("gbrank", "numba"):
        try:
            __import__(name)
        except ImportError:
            pass
        else:
            raise SystemExit(name + " is importable")
    import importlib.util
    import json

    import numpy as np
    import lightgbm as lgb
    import xgboost as xgb

    cases = json.load(open(sys.argv[1]))
    X = np.load(sys.argv[2])
    has = {m: importlib.util.find_spec(m) is not None
           for m in ("onnxmltools", "onnxruntime", "treelite", "pandas")}
    out = {}

    def frame(features):
        if features is None:
            return X
        import pandas as pd
        return pd.DataFrame(X, columns=features)

    def onnx_predict(case, model):
        import onnxmltools
        import onnxruntime as ort
        from onnxmltools.convert.common.data_types import FloatTensorType

        types = [("input", FloatTensorType([None, X.shape[1]]))]
        if case["booster"] == "lightgbm":
            onx = onnxmltools.convert_lightgbm(model, initial_types=types, zipmap=False)
        else:
            # onnxmltools guesses the task of a bare xgboost.Booster from its node
            # statistics; the scikit-learn wrapper of the task says it.
            est = xgb.XGBRegressor() if case["task"] == "ranking" else xgb.XGBClassifier()
            est.load_model(case["model"])
            onx = onnxmltools.convert_xgboost(est, initial_types=types)
        sess = ort.InferenceSession(onx.SerializeToString(),
                                    providers=["CPUExecutionProvider"])
        got = np.asarray(sess.run(None, {"input": X.astype(np.float32)})[-1])
        return got[:, 1] if case["task"] == "binary" else got

    def treelite_predict(case):
        import treelite

        load = (treelite.frontend.load_lightgbm_model if case["booster"] == "lightgbm"
                else treelite.frontend.load_xgboost_model)
        got = treelite.gtil.predict(load(case["model"]), X)
        return got.reshape(len(X), -1)

    for name, case in cases.items():
        expected = np.load(case["expected"])
        if case["booster"] == "lightgbm":
            model = lgb.Booster(model_file=case["model"])
            plain = model.predict(frame(case["features"]))
        else:
            model = xgb.Booster(model_file=case["model"])
            names = {} if case["features"] is None else {"feature_names": case["features"]}
            plain = model.predict(xgb.DMatrix(X, **names))
        row = {"plain": plain}
        if has["onnxmltools"] and has["onnxruntime"] and not name.endswith("unexported"):
            row["onnx"] = onnx_predict(case, model)
        if has["treelite"] and not name.endswith("unexported"):
            row["treelite"] = treelite_predict(case)
        out[name] = {k: float(np.max(np.abs(np.asarray(v, np.float64).reshape(expected.shape)
                                             - expected)))
                     for k, v in row.items()}
    print(json.dumps(out))
''')


@pytest.fixture(scope="module")
def served(tmp_path_factory):
    """{case: {loader: max |difference| to gbrank's prediction}} from the child."""
    tmp = tmp_path_factory.mktemp("export")
    cases = _cases(tmp)
    (tmp / "cases.json").write_text(json.dumps(cases))
    np.save(tmp / "X.npy", X_NEW)
    (tmp / "child.py").write_text(CHILD)
    r = subprocess.run([sys.executable, str(tmp / "child.py"), str(tmp / "cases.json"),
                        str(tmp / "X.npy")], capture_output=True, text=True, timeout=600,
                       env={**os.environ, "PYTHONPATH": ""})
    assert r.returncode == 0, r.stderr[-3000:]
    result = json.loads(r.stdout.strip().splitlines()[-1])
    assert set(result) == set(cases)
    return result


def test_plain_boosters_without_gbrank_predict_what_gbrank_does(served):
    table = {name: row["plain"] for name, row in served.items()
             if not name.endswith("unexported")}
    assert len(table) == EXPORTED
    bad = {name: d for name, d in table.items() if not d <= 1e-6}
    assert bad == {}, table


def test_the_control_shows_an_unexported_model_predicts_otherwise(served):
    # The booster's own file of a custom-objective model has no link and no start.
    for booster in ("lightgbm", "xgboost"):
        assert served[f"{booster}-control-unexported"]["plain"] > 0.05


def test_onnx_runtime_predicts_what_gbrank_does(served):
    _need("onnxmltools")
    _need("onnxruntime")
    table = {name: row["onnx"] for name, row in served.items() if "onnx" in row}
    assert len(table) == EXPORTED
    bad = {name: d for name, d in table.items() if not d <= 1e-5}
    assert bad == {}, table


def test_treelite_predicts_what_gbrank_does(served):
    pytest.importorskip("treelite")
    table = {name: row["treelite"] for name, row in served.items() if "treelite" in row}
    assert len(table) == EXPORTED
    bad = {name: d for name, d in table.items() if not d <= 1e-6}
    assert bad == {}, table


# ---- what the exported model is --------------------------------------------------------


def test_lightgbm_model_records_the_link_and_keeps_the_start_in_the_first_trees():
    obj = FocalLoss()
    start = obj.init_score(Y_BIN)
    model = lgb.train({"objective": obj, "num_leaves": 5, "verbose": -1},
                      lgb.Dataset(X, Y_BIN, init_score=np.full(N, start)), num_boost_round=3)
    native = lgb_native(model, obj, init_score=start)
    header = native.model_to_string().split("Tree=0")[0]
    assert "objective=binary sigmoid:1" in header.splitlines()
    assert "[objective: binary]" in native.model_to_string().splitlines()  # its params
    for tree in range(3):
        before = [model.get_leaf_output(tree, j) for j in range(5)]
        after = [native.get_leaf_output(tree, j) for j in range(5)]
        shift = start if tree == 0 else 0.0
        np.testing.assert_allclose(after, np.add(before, shift), rtol=0, atol=1e-15)
    np.testing.assert_allclose(native.predict(X, raw_score=True),
                               model.predict(X, raw_score=True) + start, rtol=0, atol=1e-12)


def test_lightgbm_linear_trees_and_multiclass_header():
    obj = FocalLoss(num_class=3)
    start = obj.init_score(Y_MULTI)
    model = lgb.train({"objective": obj, "num_class": 3, "linear_tree": True, "verbose": -1,
                       "num_leaves": 4}, lgb.Dataset(X, Y_MULTI,
                                                     init_score=np.tile(start, (N, 1))),
                      num_boost_round=4)
    native = lgb_native(model, obj, init_score=start)
    assert "objective=multiclass num_class:3" in native.model_to_string().splitlines()
    np.testing.assert_allclose(native.predict(X),
                               gbrank.predict_proba(model.predict(X, raw_score=True) + start),
                               rtol=0, atol=1e-12)


def test_xgboost_model_takes_its_objective_from_xgboost_and_records_the_export():
    obj = FocalLoss()
    start = obj.init_score(Y_BIN)
    model = xgb.train({"max_depth": 2}, xgb.DMatrix(X, Y_BIN, base_margin=np.full(N, start)),
                      num_boost_round=4, obj=xgb_objective(obj))
    native = xgb_native(model, obj, init_score=start)
    config = json.loads(native.save_config())["learner"]
    probe = xgb.DMatrix(np.zeros((1, F)), label=[0.0])
    fresh = xgb.Booster({"objective": "binary:logistic"}, [probe])
    fresh.predict(probe)  # configures it
    assert config["objective"] == json.loads(fresh.save_config())["learner"]["objective"]
    assert json.loads(native.attr("gbrank_init_score")) == [start]
    margin = model.predict(xgb.DMatrix(X, base_margin=np.full(N, start)), output_margin=True)
    np.testing.assert_allclose(native.predict(xgb.DMatrix(X), output_margin=True), margin,
                               rtol=0, atol=1e-5)


def test_xgboost_start_is_the_base_margin_which_replaces_base_score():
    """XGBoost trains from base_margin instead of base_score: the export must not add
    base_score; without base_margin ('base_score') it keeps the model's own start."""
    obj = FocalLoss()
    dm = xgb.DMatrix(X, Y_BIN, base_margin=np.full(N, -1.0))
    model = xgb.train({"max_depth": 2, "base_score": 0.3}, dm, num_boost_round=3,
                      obj=xgb_objective(obj))
    served = xgb_native(model, obj, init_score=-1.0).predict(xgb.DMatrix(X))
    trained = model.predict(xgb.DMatrix(X, base_margin=np.full(N, -1.0)), output_margin=True)
    np.testing.assert_allclose(served, gbrank.predict_proba(trained), rtol=0, atol=1e-6)
    plain = xgb.train({"max_depth": 2, "base_score": 0.3}, xgb.DMatrix(X, Y_BIN),
                      num_boost_round=3, obj=xgb_objective(obj))
    served = xgb_native(plain, obj, init_score="base_score").predict(xgb.DMatrix(X))
    own = plain.predict(xgb.DMatrix(X), output_margin=True)
    np.testing.assert_allclose(served, gbrank.predict_proba(own), rtol=0, atol=1e-6)


def test_xgboost_classifier_file_carries_threshold_and_positive_label(tmp_path):
    clf = GBClassifier(booster="xgboost", n_estimators=5, max_depth=2, random_state=0)
    clf.fit(X, np.where(Y_BIN > 0, "yes", "no"))
    clf.save_model(tmp_path / "m.json")
    model = xgb.Booster(model_file=str(tmp_path / "m.json"))
    assert float(model.attr("gbrank_threshold")) == clf.threshold_
    assert json.loads(model.attr("gbrank_pos_label")) == clf.pos_label_
    p = model.predict(xgb.DMatrix(X))
    np.testing.assert_array_equal(np.where(p > clf.threshold_, clf.pos_label_, "no"),
                                  clf.predict(X))


def test_xgboost_multiclass_file_carries_the_class_offsets_and_classes(tmp_path):
    grades = np.array(["a", "b", "c"])[Y_MULTI.astype(int)]
    clf = GBClassifier(booster="xgboost", n_estimators=5, max_depth=2, random_state=0)
    clf.fit(X, grades)
    clf.save_model(tmp_path / "m.json")
    model = xgb.Booster(model_file=str(tmp_path / "m.json"))
    offsets = np.array(json.loads(model.attr("gbrank_class_offsets")))
    classes = np.array(json.loads(model.attr("gbrank_classes")))
    np.testing.assert_array_equal(offsets, clf.class_offsets_)
    assert classes.tolist() == clf.classes_.tolist()
    p = model.predict(xgb.DMatrix(X))  # (n, 3): the served rule is argmax(log p + b)
    np.testing.assert_array_equal(classes[np.argmax(np.log(p) + offsets, axis=1)],
                                  clf.predict(X))


def test_native_objectives_are_saved_as_the_booster_holds_them(tmp_path):
    clf = GBClassifier("native:binary", n_estimators=5, random_state=0).fit(X, Y_BIN)
    clf.save_model(tmp_path / "m.txt")
    np.testing.assert_allclose(lgb.Booster(model_file=str(tmp_path / "m.txt")).predict(X),
                               clf.predict_proba(X)[:, 1], rtol=0, atol=1e-12)
    for booster, native, name in (("lightgbm", "multiclass", "m3.txt"),
                                  ("xgboost", "multi:softprob", "m3.json")):
        clf = GBClassifier(f"native:{native}", booster=booster, n_estimators=5,
                           random_state=0).fit(X, Y_MULTI)
        clf.save_model(tmp_path / name)
        if booster == "lightgbm":
            own = lgb.Booster(model_file=str(tmp_path / name)).predict(X)
        else:
            own = xgb.Booster(model_file=str(tmp_path / name)).predict(xgb.DMatrix(X))
        np.testing.assert_allclose(own, clf.predict_proba(X), rtol=0, atol=1e-6)
    rk = GBRanker("native:rank:pairwise", booster="xgboost", n_estimators=5, max_depth=2,
                  random_state=0).fit(X, Y_RANK, qid=QID)
    rk.save_model(tmp_path / "r.json")
    np.testing.assert_allclose(
        xgb.Booster(model_file=str(tmp_path / "r.json")).predict(xgb.DMatrix(X)),
        rk.predict(X), rtol=0, atol=1e-6)


def test_estimators_keep_a_base_score_the_user_sets(tmp_path):
    """XGBoost: a start given as base_margin replaces base_score, one given by nothing
    (init_score_ 0, ranking) leaves it in; estimator and saved model agree either way."""
    params = {"booster_params": {"base_score": 0.3}, "num_leaves": None, "max_depth": 2,
              "n_estimators": 5, "random_state": 0}
    clf = GBClassifier(booster="xgboost", **params).fit(X, Y_BIN)
    assert clf.init_score_ != 0.0
    clf.save_model(tmp_path / "c.json")
    np.testing.assert_allclose(
        xgb.Booster(model_file=str(tmp_path / "c.json")).predict(xgb.DMatrix(X)),
        clf.predict_proba(X)[:, 1], rtol=0, atol=1e-6)
    margin = clf.booster_.predict(xgb.DMatrix(X, base_margin=np.full(N, clf.init_score_)),
                                  output_margin=True)
    np.testing.assert_allclose(clf.predict_proba(X)[:, 1], gbrank.predict_proba(margin),
                               rtol=0, atol=1e-6)
    rk = GBRanker(booster="xgboost", **params).fit(X, Y_RANK, qid=QID)
    rk.save_model(tmp_path / "r.json")
    own = rk.booster_.predict(xgb.DMatrix(X), output_margin=True)
    np.testing.assert_allclose(rk.predict(X), own, rtol=0, atol=1e-6)
    np.testing.assert_allclose(
        xgb.Booster(model_file=str(tmp_path / "r.json")).predict(xgb.DMatrix(X)), own,
        rtol=0, atol=1e-6)


# ---- refusals -------------------------------------------------------------------------------


def _focal_lgb(**params):
    return lgb.train({"objective": FocalLoss(), "verbose": -1, "num_leaves": 4, **params},
                     lgb.Dataset(X, Y_BIN), num_boost_round=2)


def test_export_needs_the_start_of_a_classification_objective():
    with pytest.raises(ValueError, match=r"init_score is required .* init_score=objective"
                                         r"\.init_score\(y_train\)"):
        lgb_native(_focal_lgb(), FocalLoss())
    model = xgb.train({"max_depth": 2}, xgb.DMatrix(X, Y_BIN), num_boost_round=2,
                      obj=xgb_objective(FocalLoss()))
    with pytest.raises(ValueError, match="init_score='base_score' if the DMatrix had none"):
        xgb_native(model, FocalLoss())
    with pytest.raises(ValueError, match=r"init_score must be one of \['base_score'\]"):
        xgb_native(model, FocalLoss(), init_score="zero")
    with pytest.raises(ValueError, match=r"init_score must be a number; got shape \(400,\)"):
        lgb_native(_focal_lgb(), FocalLoss(), init_score=np.zeros(N))


def test_export_refuses_what_it_cannot_write_truthfully():
    model = _focal_lgb()
    native = lgb_native(model, FocalLoss(), init_score=0.0)
    with pytest.raises(ValueError, match=r"holds LightGBM's own objective \(objective=binary "
                                         r"sigmoid:1\)"):
        lgb_native(native, FocalLoss(), init_score=0.0)  # the start would be added twice
    with pytest.raises(ValueError, match=r"one tree per round, but FocalLoss\(.*num_class=3"):
        lgb_native(model, FocalLoss(num_class=3), init_score=0.0)
    with pytest.raises(ValueError, match="A plain gradient function does not say"):
        lgb_native(model, lambda y, s: (s - y, np.ones_like(s)), init_score=0.0)
    with pytest.raises(ValueError, match="is the booster's own objective"):
        lgb_native(model, "native:binary", init_score=0.0)
    with pytest.raises(ValueError, match=r"num_iteration must be an integer in \[1, 2\]"):
        lgb_native(model, FocalLoss(), init_score=0.0, num_iteration=5)
    xmodel = xgb.train({"booster": "gblinear"}, xgb.DMatrix(X, Y_BIN), num_boost_round=2,
                       obj=xgb_objective(FocalLoss()))
    with pytest.raises(ValueError, match="tree models .* this model is 'gblinear'"):
        xgb_native(xmodel, FocalLoss(), init_score=0.0)
    xmodel = xgb.train({"max_depth": 2}, xgb.DMatrix(X, Y_BIN), num_boost_round=2,
                       obj=xgb_objective(FocalLoss()))
    exported = xgb_native(xmodel, FocalLoss(), init_score=0.0)
    with pytest.raises(ValueError, match="exported already"):
        xgb_native(exported, FocalLoss(), init_score=0.0)


def test_estimator_refuses_to_save_a_native_objective_with_another_link(tmp_path):
    # (GBClassifier refuses to train on an objective whose raw score is no log-odds.)
    clf = GBClassifier("native:binary:logitraw", booster="xgboost", n_estimators=3,
                       max_depth=2, validation_fraction=None, threshold=0.5).fit(X, Y_BIN)
    with pytest.raises(ValueError, match=r"predict with its objective 'binary:logitraw', "
                                         r"not the sigmoid of the raw score"):
        clf.save_model(tmp_path / "m.json")
    assert not (tmp_path / "m.json").exists()
    # XGBoost's multi:softmax predicts labels, not the probabilities predict_proba gives.
    clf = GBClassifier("native:multi:softmax", booster="xgboost", n_estimators=3,
                       max_depth=2, decision="argmax").fit(X, Y_MULTI)
    with pytest.raises(ValueError, match=r"predict with its objective 'multi:softmax', not "
                                         r"the softmax of the raw scores"):
        clf.save_model(tmp_path / "m.json")
