"""to_native: a model XGBoost (or any loader of its JSON) predicts with alone."""

from __future__ import annotations

import copy
import json
from typing import Any

import numpy as np

from gbrank._deps import require

# XGBoost's own objective for each non-identity link, and the base_score at which it
# adds nothing.
_LINK_OBJECTIVE = {"binary": ("binary:logistic", 0.5), "multiclass": ("multi:softprob", 0.0)}


def _ranking_objective(obj: Any) -> str:
    from gbrank.objectives import LambdaRank, RankNet

    if isinstance(obj, RankNet):
        return "rank:pairwise"
    if isinstance(obj, LambdaRank) and obj._params().metric == "map":
        return "rank:map"
    return "rank:ndcg"


def _trees(learner: dict[str, Any]) -> tuple[list[dict[str, Any]], list[int], list[float]]:
    """The trees of a JSON model, each tree's class, and each tree's weight (DART)."""
    gb = learner["gradient_booster"]
    if gb["name"] == "gbtree":
        model, weights = gb["model"], None
    elif gb["name"] == "dart":
        model, weights = gb["gbtree"]["model"], gb["weight_drop"]
    else:
        raise ValueError(f"to_native exports tree models (booster 'gbtree' or 'dart'); this "
                         f"model is {gb['name']!r}")
    trees = model["trees"]
    weights = [1.0] * len(trees) if weights is None else [float(w) for w in weights]
    return trees, [int(c) for c in model["tree_info"]], weights


def _leaves(tree: dict[str, Any]) -> list[int]:
    if int(tree["tree_param"].get("size_leaf_vector", 1)) > 1:
        raise ValueError("to_native exports trees with one value per leaf; this model has "
                         "vector leaves (multi_strategy='multi_output_tree')")
    return [j for j, left in enumerate(tree["left_children"]) if left == -1]


def _load(xgb: Any, model: dict[str, Any]) -> Any:
    return xgb.Booster(model_file=bytearray(json.dumps(model).encode()))


def _intercept(xgb: Any, model: dict[str, Any], k: int) -> np.ndarray:
    """The raw score the model adds to its trees (its ``base_score``, through its
    objective's link), read from XGBoost itself: the margin of a copy whose leaves are
    all 0."""
    zero = copy.deepcopy(model)
    for tree in _trees(zero["learner"])[0]:
        for j in _leaves(tree):
            tree["split_conditions"][j] = 0.0
            tree["base_weights"][j] = 0.0
    n_features = int(zero["learner"]["learner_model_param"]["num_feature"])
    margin = _load(xgb, zero).predict(xgb.DMatrix(np.zeros((1, n_features))),
                                      output_margin=True, validate_features=False)
    return np.asarray(margin, dtype=np.float64).reshape(k)


def _native_learner(xgb: Any, name: str, base_score: float, margin: float, k: int,
                    n_features: int) -> dict[str, Any]:
    """The ``objective`` section and ``learner_model_param`` of a booster freshly
    configured with XGBoost's objective ``name`` and ``base_score`` (valid for the
    installed version), checked to start every class at raw score ``margin``."""
    params: dict[str, Any] = {"objective": name, "base_score": base_score}
    if k > 1:
        params["num_class"] = k
    probe = xgb.DMatrix(np.zeros((1, n_features)), label=[0.0])
    fresh = xgb.Booster(params, [probe])
    got = np.asarray(fresh.predict(probe, output_margin=True), dtype=np.float64)
    if np.any(got != margin):  # pragma: no cover - XGBoost's base_score convention
        raise RuntimeError(f"XGBoost {xgb.__version__} starts {name!r} with base_score="
                           f"{base_score!r} at raw score {got.ravel().tolist()}, not {margin!r}")
    return json.loads(fresh.save_config())["learner"]


def to_native(booster: Any, objective: Any, *, init_score: Any = None,
              num_iteration: int | None = None) -> Any:
    r"""An XGBoost model that predicts, with XGBoost alone, what gbrank predicts.

    A model trained with ``obj=gbrank.xgboost.objective(...)`` records XGBoost's
    default objective (``reg:squarederror``, or ``multi:softmax`` with ``num_class``)
    and its ``base_score``, but not the ``base_margin`` training started from, which
    replaced that ``base_score`` in training. This returns a copy in which

    - the start :math:`c_k` — ``init_score`` (the ``base_margin``), or the margin the
      model's ``base_score`` gives when training had no ``base_margin`` — is part of
      the model, so its raw score is :math:`z_k(x) = c_k + \sum_t f_{t,k}(x)` with no
      ``base_margin``;
    - the link is the model's objective, taken from a booster freshly configured with
      it: ``binary:logistic`` (:math:`\sigma(z)`) for binary objectives
      (``FocalLoss``, ``FBetaSurrogate``) and ``multi:softprob`` (softmax) for
      ``FocalLoss(num_class=K)``, with the start added to every leaf of the first tree
      of each class (divided by that tree's weight, for DART) and a ``base_score``
      that adds nothing (0.5; 0); for ranking objectives ``rank:pairwise``
      (``RankNet``), ``rank:map`` (``LambdaRank(metric="map")``) or ``rank:ndcg``
      (other ``LambdaRank``), whose prediction is the raw score, with the start as
      ``base_score``.

    Feature names and types, categorical splits and other attributes are kept; the
    attributes ``gbrank_objective`` and ``gbrank_init_score`` record the export, and a
    model carrying them is refused (its start is inside already). XGBoost holds leaf
    values and sums trees in float32, so the start is stored rounded to float32: the
    exported raw scores agree with the booster's margins on data carrying the training
    ``base_margin`` to float32 precision (about 1e-7 relative). Linear models
    (``booster='gblinear'``) and vector leaves (``multi_strategy='multi_output_tree'``)
    are refused.

    Parameters
    ----------
    booster : xgboost.Booster
        Trained with ``objective`` (not modified).
    objective : gbrank objective, str or callable
        The objective it was trained with (an instance, a registry name such as
        ``"focal"``, or the :func:`objective` wrapper); its task gives the link. A
        calibrated ranking objective (``calibration > 0``) must be the instance: its
        name says nothing of the calibration, and the raw scores would be exported.
    init_score : float, array-like of shape (K,) or "base_score", optional
        The constant ``base_margin`` the training ``DMatrix`` had — what training
        used, not what it should have used: e.g. ``FocalLoss.init_score(y_train)`` when
        it was passed (:class:`gbrank.sklearn.GBClassifier` keeps it in
        ``init_score_``); one per class for multiclass. ``"base_score"``: the DMatrix
        had no ``base_margin``, so training started from the model's ``base_score``
        (another value would shift every exported prediction). Required for binary and
        multiclass objectives; ranking objectives default to ``"base_score"``. A
        per-row start cannot be part of a model and is refused.
    num_iteration : int, optional
        Rounds to keep (``booster[:num_iteration]``); ``None`` keeps every round, as
        ``Booster.predict`` uses them (after early stopping, pass
        ``booster.best_iteration + 1``).

    Returns
    -------
    xgboost.Booster
        Its ``predict(DMatrix(X))`` is the probability (binary: of the positive label;
        shape (n, K) for multiclass) or the ranking score; ``save_model("m.json")``
        writes it.

    Examples
    --------
    >>> import numpy as np
    >>> import xgboost as xgb
    >>> from gbrank import predict_proba
    >>> from gbrank.datasets import make_imbalanced
    >>> from gbrank.objectives import FocalLoss
    >>> from gbrank.xgboost import objective, to_native
    >>> X, y = make_imbalanced(n_rows=1000, positive_rate=0.1, seed=0)
    >>> obj = FocalLoss(gamma=2.0)
    >>> start = obj.init_score(y)
    >>> dtrain = xgb.DMatrix(X, y, base_margin=np.full(y.size, start))
    >>> booster = xgb.train({"max_depth": 3}, dtrain, num_boost_round=10,
    ...                     obj=objective(obj))
    >>> native = to_native(booster, obj, init_score=start)
    >>> margin = booster.predict(xgb.DMatrix(X, base_margin=np.full(y.size, start)),
    ...                          output_margin=True)
    >>> bool(np.allclose(native.predict(xgb.DMatrix(X)), predict_proba(margin), atol=1e-6))
    True
    """
    xgb = require("xgboost")
    from gbrank._export import native_prediction
    from gbrank._validation import check_choice, check_integer

    if not isinstance(booster, xgb.Booster):
        raise ValueError(f"booster must be an xgboost.Booster, got {type(booster).__name__}")
    own = isinstance(init_score, str)
    if own:
        check_choice(init_score, "init_score", ("base_score",))
    prediction = native_prediction(objective, None if own else init_score, hint=None if own else (
        "pass init_score=objective.init_score(y_train), the constant of the DMatrix's "
        "base_margin (GBClassifier keeps it in init_score_), or init_score='base_score' if "
        "the DMatrix had none (training then started from the model's base_score)"))
    if booster.attr("gbrank_init_score") is not None:
        raise ValueError("the model was exported already (it has the attribute "
                         "gbrank_init_score): it predicts on its own; save it as it is")
    rounds = booster.num_boosted_rounds()
    if rounds == 0:
        raise ValueError("the model has no trees; there is nothing to export")
    n = rounds if num_iteration is None else check_integer(
        num_iteration, "num_iteration", 1, rounds)
    model = json.loads((booster if n == rounds else booster[:n]).save_raw("json"))
    learner = model["learner"]
    _trees(learner)  # a tree model
    for key in ("best_iteration", "best_score"):  # of the model, not of the export
        learner.get("attributes", {}).pop(key, None)
    param = learner["learner_model_param"]
    if int(param.get("num_target", 1)) > 1:
        raise ValueError(f"the model has {param['num_target']} targets; to_native exports "
                         "models of one target")
    k = max(1, int(param.get("num_class", 0)))
    if k != prediction.num_class:
        has = f"{k} classes (num_class={k})" if k > 1 else "one output"
        wants = (f"num_class={prediction.num_class}" if prediction.num_class > 1
                 else f"a {prediction.task} objective with one output")
        raise ValueError(f"the model has {has}, but {prediction.objective!r} is {wants}")
    # A base_margin replaces base_score, in training as in prediction.
    start = _intercept(xgb, model, k) if prediction.start is None else prediction.start
    n_features = int(param["num_feature"])
    if prediction.task == "ranking":
        # The prediction is the raw score: base_score is the start, exactly (in float32).
        base = float(np.float32(start[0]))
        fresh = _native_learner(xgb, _ranking_objective(prediction.objective), base, base, 1,
                                n_features)
    else:
        trees, classes, weights = _trees(learner)
        for c in range(k):
            # The first tree of class c that counts (DART may weigh a tree 0).
            t = next((t for t, tc in enumerate(classes) if tc == c and weights[t] != 0),
                     None)
            if t is None:
                raise ValueError(f"the model has no tree of class {c} to hold its start")
            value = float(start[c]) / weights[t]
            for j in _leaves(trees[t]):
                trees[t]["split_conditions"][j] = float(trees[t]["split_conditions"][j]) + value
                trees[t]["base_weights"][j] = float(trees[t]["base_weights"][j]) + value
        name, base_score = _LINK_OBJECTIVE[prediction.task]
        fresh = _native_learner(xgb, name, base_score, 0.0, k, n_features)
    learner["objective"] = fresh["objective"]
    for key in ("base_score", "boost_from_average"):
        if key in fresh["learner_model_param"]:
            param[key] = fresh["learner_model_param"][key]
    attributes = learner.setdefault("attributes", {})
    attributes["gbrank_objective"] = repr(prediction.objective)
    attributes["gbrank_init_score"] = json.dumps(
        "base_score" if prediction.start is None else prediction.start.tolist())
    return _load(xgb, model)
