"""refit: LightGBM's refit rule for models trained with a custom objective."""

from __future__ import annotations

import copy
from typing import Any

import numpy as np

from gbrank._deps import require
from gbrank._queries import query_structure
from gbrank._validation import (
    as_float_array,
    call_function_objective,
    check_number,
    check_start_score,
)
from gbrank.objectives import Objective

# LightGBM's constants (include/LightGBM/meta.h), float32 literals: every leaf's Hessian
# sum starts at kEpsilon, and a leaf value within kZeroThreshold of 0 is stored as 0.
_K_EPSILON = float(np.float32(1e-15))
_K_ZERO_THRESHOLD = float(np.float32(1e-35))
# The parameters that enter a refitted leaf value (SerialTreeLearner::FitByExistingTree),
# with the range each may take.
_LEAF_PARAMS = {"lambda_l1": 0.0, "lambda_l2": 0.0, "max_delta_step": -np.inf,
                "path_smooth": 0.0}


def _leaf_rule(model_params: dict[str, Any], params: Any) -> dict[str, float]:
    """The model's parameters that enter a leaf value, overridden by ``params``;
    refuses what LightGBM's refit does not define."""
    if model_params.get("boosting", "gbdt") == "rf":
        raise ValueError(
            "refit supports gradient-boosted models (boosting 'gbdt', 'dart', 'goss'); "
            "this model is a random forest (boosting='rf'), whose trees LightGBM fits to "
            "the gradients at the starting score, not to the running score")
    if str(model_params.get("linear_tree", False)).lower() in ("true", "1"):
        raise ValueError("refit does not support linear trees (linear_tree=True): their "
                         "leaves hold linear models, not one value")
    rule = {key: float(model_params.get(key, 0.0) or 0.0) for key in _LEAF_PARAMS}
    if params is not None:
        if not isinstance(params, dict):
            raise ValueError(f"params must be a dict, got {type(params).__name__}")
        unknown = sorted(set(params) - set(_LEAF_PARAMS))
        if unknown:
            raise ValueError(f"params may set {sorted(_LEAF_PARAMS)} (what enters a "
                             f"refitted leaf value), got {unknown}")
        for key, value in params.items():
            rule[key] = check_number(value, f"params[{key!r}]", _LEAF_PARAMS[key])
    if rule["path_smooth"] > _K_EPSILON:
        raise ValueError(
            f"the model was trained with path_smooth={rule['path_smooth']:g}; LightGBM's "
            "refit has no usable rule for it (FitByExistingTree smooths each leaf towards "
            "the index of its parent node instead of the parent's output). Refit without "
            "smoothing: params={'path_smooth': 0}")
    return rule


def _gradients(objective: Any, y: np.ndarray, group: Any, weight: Any, k: int) -> Any:
    """``f(scores) -> (grad, hess)`` for the objective, checked against the model."""
    if isinstance(objective, Objective):
        # A fresh copy: refitting must not advance the caller's per-training state
        # (FBetaSurrogate's round count), as a new lgb.train would not.
        obj = copy.deepcopy(objective).set_params()
        classes = getattr(obj, "num_class", None) if obj.task == "multiclass" else None
        if (k > 1) != (classes is not None) or (classes is not None and classes != k):
            has = (f"{k} trees per round (multiclass, num_class={k})" if k > 1
                   else "one tree per round")
            raise ValueError(f"the model has {has}, but the objective {obj!r} is "
                             f"{obj.task if classes is None else f'num_class={classes}'}")
        return lambda s, start_fix=None: obj.booster_grad_hess(y, s, group, weight,
                                                               start_fix=start_fix)
    if callable(objective):
        if weight is not None:
            raise ValueError("weight= is for gbrank objectives; a plain function applies "
                             "its own weights (bind them in the function, e.g. a closure)")
        sizes = None if group is None else query_structure(y.size, group=group).sizes
        return lambda s, start_fix=None: call_function_objective(objective, y, s, sizes)
    raise ValueError(f"objective must be a gbrank objective or a function "
                     f"fn(y, s) -> (grad, hess), got {objective!r}")


def _by_query_id(objective: Any, y: np.ndarray, qid: Any, weight: Any, k: int) -> Any:
    """:func:`_gradients` for rows whose queries are given by per-row ids in any order:
    computed on the rows gathered by query (:func:`query_structure`, the one gathering
    rule), handed back in the rows' order."""
    q = np.asarray(qid).ravel()
    if q.size != y.size:
        raise ValueError(f"qid has {q.size} entries but y has {y.size}")
    queries = query_structure(y.size, qid=q, weight=weight)
    gathered = _gradients(objective, queries.apply(y), queries.sizes, queries.weights, k)

    def fn(s: np.ndarray, start_fix: str | None = None) -> tuple[np.ndarray, np.ndarray]:
        g, h = gathered(queries.apply(s), start_fix)
        return queries.restore(np.asarray(g)), queries.restore(np.asarray(h))
    return fn


# What the objective's warning about a first round far from its best start names as
# the fix: here refit's own init_score, not the boosters' Dataset(init_score=).
_REFIT_START_FIX = ("pass refit(..., init_score=...) with the start the model was trained "
                    "from (e.g. obj.init_score(y_train)), or leave it out if training had "
                    "none")


def _start_scores(init_score: Any, n: int, k: int) -> np.ndarray:
    shape = (n,) if k == 1 else (n, k)
    if init_score is None:
        return np.zeros(shape)
    start = check_start_score(init_score, k, n_rows=n)
    return np.broadcast_to(start, shape).copy()


def _refit_tree(model: Any, tree: int, info: dict[str, Any], leaf: np.ndarray,
                grad: np.ndarray, hess: np.ndarray, rule: dict[str, float],
                decay_rate: float) -> np.ndarray:
    """New values of one tree's leaves (set in ``model``), as FitByExistingTree computes
    them."""
    m = int(info["num_leaves"])
    sum_g = np.bincount(leaf, weights=grad, minlength=m)
    # LightGBM adds a leaf's rows to kEpsilon in row order; bincount adds in input order,
    # so kEpsilon goes first.
    sum_h = np.bincount(np.concatenate((np.arange(m), leaf)),
                        weights=np.concatenate((np.full(m, _K_EPSILON), hess)), minlength=m)
    shrunk_g = np.sign(sum_g) * np.maximum(0.0, np.abs(sum_g) - rule["lambda_l1"])
    out = -shrunk_g / (sum_h + rule["lambda_l2"])
    step = rule["max_delta_step"]
    if step > 0:
        out = np.where(np.abs(out) > step, np.sign(out) * step, out)
    old = np.array([model.get_leaf_output(tree, j) for j in range(m)])
    new = decay_rate * old + (1.0 - decay_rate) * (out * float(info["shrinkage"]))
    new[np.abs(new) <= _K_ZERO_THRESHOLD] = 0.0
    for j in range(m):
        model.set_leaf_output(tree, j, float(new[j]))
    return new


def refit(booster: Any, X: Any, y: Any, objective: Any, *, group: Any = None,
          qid: Any = None, weight: Any = None, init_score: Any = None,
          decay_rate: float = 0.9, params: dict[str, float] | None = None) -> Any:
    r"""Refit a LightGBM model's leaf values to new data with a custom objective.

    LightGBM's ``Booster.refit`` refuses models trained with a custom objective. This
    is its rule with any gbrank objective or gradient function: the trees keep their
    structure; round by round, at the scores of the new data so far (the start
    ``init_score`` plus the trees already refitted), the objective's gradients
    :math:`g` and Hessians :math:`h` give each leaf :math:`\ell` of the round's tree

    .. math::
        v_\ell = -\frac{\operatorname{sign}(G_\ell)\max(0, |G_\ell| - \lambda_1)}
                       {H_\ell + \lambda_2}, \quad
        G_\ell = \sum_{i \in \ell} g_i, \; H_\ell = \sum_{i \in \ell} h_i,

    clipped to :math:`\pm` ``max_delta_step`` when that is positive, and the new leaf
    value ``decay_rate * old + (1 - decay_rate) * shrinkage * v``, ``shrinkage`` being
    the tree's learning rate. A leaf no new row reaches has :math:`v = 0`. As in
    LightGBM, gradients are rounded to float32 and monotone constraints are not
    applied. With K trees per round (multiclass) all K use the gradients at the start
    of the round.

    Parameters
    ----------
    booster : lightgbm.Booster
        The model; it is not modified. All its trees are refitted (its
        ``best_iteration`` is kept).
    X : array-like or sparse matrix
        Features of the new data, as ``booster.predict`` takes them.
    y : array-like
        Labels of the new data.
    objective : gbrank objective or callable
        The objective the model was trained with: a gbrank objective (its gradients
        as the booster gets them; a copy is used), or a function
        ``fn(y, s) -> (grad, hess)`` on raw scores (``fn(y, s, group)`` when ``group``
        is given; shape (n, K) for multiclass models).
    group : array-like, optional
        Query sizes of the new data for ranking objectives; a ranking objective
        without ``group`` or ``qid`` is refused unless it declares ``groupless=True``.
    qid : array-like, optional
        Or each row's query id (any order), instead of ``group``.
    weight : array-like, optional
        Weights, as the gbrank objective takes them (not with a plain function, which
        applies its own).
    init_score : float or array-like, optional
        The raw score the model starts from, as in training (e.g.
        ``FocalLoss.init_score(y_train)``): a number, one per class (K,), or one per
        row. Default 0, where LightGBM starts a custom objective.
    decay_rate : float, default 0.9
        Weight of the old leaf values, in [0, 1]: 1 keeps the model, 0 takes the new
        values alone.
    params : dict, optional
        ``lambda_l1``, ``lambda_l2``, ``max_delta_step``, ``path_smooth`` overriding
        the model's. ``path_smooth > 0`` is refused: LightGBM's refit smooths towards
        the parent node's index, not its output, and there is no rule to follow.

    Returns
    -------
    lightgbm.Booster
        A new booster with the same trees and refitted leaf values; ``predict(...,
        raw_score=True)`` plus ``init_score`` is its raw score.

    Notes
    -----
    Use it to adapt a model to newer data without growing new trees, e.g. when the
    data drift but the splits stay informative, or to re-estimate the leaves of a
    model chosen on one sample from a larger one. Random forests (``boosting='rf'``)
    and linear trees are refused. A model trained with a native objective and
    ``boost_from_average`` holds its start inside the first tree's leaves, which are
    refitted like any other (as LightGBM's refit does); pass ``init_score`` for a
    start outside the trees.

    Examples
    --------
    >>> import lightgbm as lgb
    >>> import numpy as np
    >>> from gbrank.datasets import make_imbalanced
    >>> from gbrank.lightgbm import refit
    >>> from gbrank.objectives import FocalLoss
    >>> X, y = make_imbalanced(n_rows=2000, positive_rate=0.1, seed=0)
    >>> obj = FocalLoss(gamma=2.0)
    >>> start = obj.init_score(y[:1000])  # the constant a custom objective starts from
    >>> train = lgb.Dataset(X[:1000], y[:1000], init_score=np.full(1000, start))
    >>> booster = lgb.train({"objective": obj, "verbose": -1}, train, num_boost_round=20)
    >>> new = refit(booster, X[1000:], y[1000:], obj, init_score=start, decay_rate=0.5)
    >>> new.num_trees() == booster.num_trees()
    True
    """
    lgb = require("lightgbm")

    if not isinstance(booster, lgb.Booster):
        raise ValueError(f"booster must be a lightgbm.Booster, got {type(booster).__name__}")
    decay_rate = check_number(decay_rate, "decay_rate", 0.0, 1.0)
    y = as_float_array(y, "labels")
    model = lgb.Booster(model_str=booster.model_to_string(num_iteration=-1))
    rule = _leaf_rule(model.params, params)
    k = model.num_model_per_iteration()
    if (isinstance(objective, Objective) and objective.task == "ranking" and group is None
            and qid is None and not getattr(objective, "groupless", False)):
        name = type(objective).__name__
        raise ValueError(f"{name} ranks within queries, and refit got none: pass the new "
                         "data's queries, refit(..., group=sizes) or refit(..., qid=ids); "
                         f"if all rows are one list, {name}(groupless=True)")
    if qid is not None:
        if group is not None:
            raise ValueError("pass the queries once: group= (sizes) or qid= (per-row ids)")
        gradients = _by_query_id(objective, y, qid, weight, k)
    else:
        gradients = _gradients(objective, y, group, weight, k)
    scores = _start_scores(init_score, y.size, k)
    trees = model.dump_model(num_iteration=-1)["tree_info"]
    if not trees:
        model.best_iteration = booster.best_iteration
        return model
    leaves = np.asarray(model.predict(X, pred_leaf=True, num_iteration=-1))
    leaves = leaves.reshape(leaves.shape[0], -1).astype(np.intp)
    if leaves.shape[0] != y.size:
        raise ValueError(f"X has {leaves.shape[0]} rows but y has {y.size}")
    if leaves.shape[1] != len(trees):  # pragma: no cover - LightGBM's own invariant
        raise ValueError(f"pred_leaf gave {leaves.shape[1]} trees, the model has {len(trees)}")
    for start in range(0, len(trees), k):
        grad, hess = gradients(scores, _REFIT_START_FIX)
        # LightGBM keeps gradients as float32 (score_t) and sums them in float64.
        grad = np.asarray(grad, dtype=np.float64).reshape(scores.shape)
        hess = np.asarray(hess, dtype=np.float64).reshape(scores.shape)
        grad = grad.astype(np.float32).astype(np.float64)
        hess = hess.astype(np.float32).astype(np.float64)
        for c in range(k):
            t = start + c
            column = (slice(None),) if k == 1 else (slice(None), c)
            values = _refit_tree(model, t, trees[t], leaves[:, t], grad[column], hess[column],
                                 rule, decay_rate)
            scores[column] += values[leaves[:, t]]
    model.best_iteration = booster.best_iteration
    return model
