"""LightGBM adapter: translate LightGBM's calling conventions to gbrank objects.

Objectives need nothing from here (an objective instance is a valid
``params["objective"]`` and reads the ``Dataset`` itself, by duck typing); this module
holds :func:`feval`, the metric adapter, :func:`cv`, ``lgb.cv`` with query-wise folds,
:func:`refit`, LightGBM's refit for models trained with a custom objective, and
:func:`to_native`, a model that LightGBM (or any loader of its files) predicts with
alone. LightGBM is imported only inside the functions that need it.
"""

from __future__ import annotations

import copy
from typing import Any

import numpy as np

from gbrank._deps import require
from gbrank._fields import (
    calling_lightgbm_dataset,
    check_fold_keeps_queries,
    is_lightgbm_dataset,
    lightgbm_dataset_fields,
    warn_lightgbm_builtin_metrics,
)
from gbrank._validation import (
    as_float_array,
    check_number,
    check_start_score,
    query_structure,
)
from gbrank.objectives._base import Objective, call_function_objective

__all__ = ["cv", "feval", "metric_key", "refit", "to_native"]

#: Prefix of every gbrank metric name a booster logs: LightGBM and XGBoost have metrics of
#: the same names (``ndcg@10``, ``map@5``), whose values would otherwise share one key.
METRIC_PREFIX = "gbrank_"


def metric_key(name: str) -> str:
    """The name under which a booster logs the gbrank metric ``name`` (in
    ``evals_result``, ``lgb.cv``'s result and early-stopping messages):
    ``"gbrank_" + canonical name``, e.g. ``metric_key("NDCG@10") == "gbrank_ndcg@10"``."""
    from gbrank.metrics import get_metric

    return METRIC_PREFIX + get_metric(name).name


class _FEval:
    """LightGBM metric callable for ``lgb.train(feval=...)`` and the sklearn API.

    ``lgb.train`` calls ``f(preds, eval_data)``; ``LGBMRanker.fit(eval_metric=f)`` counts
    the parameters of ``f`` and, seeing exactly four, calls ``f(y_true, y_pred, weight,
    group)``. Both return a list of ``(name, value, True)``.
    """

    def __init__(self, metrics: tuple[Any, ...]) -> None:
        self.metrics = metrics

    def __call__(self, a: Any, b: Any, weight: Any = None, group: Any = None,
                 ) -> list[tuple[str, float, bool]]:
        if is_lightgbm_dataset(b):
            preds, ds = a, b
            y, weight, group = lightgbm_dataset_fields(b)
        else:
            y, preds = a, b
            ds = calling_lightgbm_dataset()
        if ds is not None:
            if any(m.kind == "ranking" for m in self.metrics):
                check_fold_keeps_queries(ds)
            warn_lightgbm_builtin_metrics(ds, METRIC_PREFIX + self.metrics[0].name)
        return [
            (METRIC_PREFIX + m.name, m(y, preds, group if m.kind == "ranking" else None,
                                       weight),
             m.higher_is_better)
            for m in self.metrics
        ]

    def __repr__(self) -> str:
        return f"feval({', '.join(repr(m.name) for m in self.metrics)})"


def feval(*names: str, threshold: float | None = None) -> _FEval:
    """A LightGBM evaluation function computing gbrank metrics by name.

    Parameters
    ----------
    *names : str
        Registry names (:func:`gbrank.metrics.get_metric`): ``"ndcg@10"``, ``"err@10"``,
        ``"map@5"``, ``"mrr"``, ``"pair_accuracy"``, ``"f1"``, ``"fbeta:2"``, ...
    threshold : float, optional
        Threshold for binary metrics (prediction ``s > threshold``). Default 0, right
        for raw margins (custom objectives); with LightGBM's built-in ``binary``
        objective ``feval`` receives probabilities, so pass 0.5.

    Returns
    -------
    callable
        Use as ``lgb.train(..., feval=f)`` (query sizes from ``Dataset.get_group()``,
        weights from ``get_weight()``) or ``LGBMRanker().fit(..., eval_metric=f)``.
        It returns one ``("gbrank_<name>", value, True)`` per name; early stopping
        maximises them.
        Ranking metrics use the query structure (none: all rows are one query, any
        size); binary metrics ignore it.

    Notes
    -----
    Each value is logged as ``"gbrank_<name>"`` (:func:`metric_key`), never under the
    name of one of LightGBM's own metrics (``ndcg@10``, ``map@5``), so both can be
    recorded side by side. LightGBM lists its built-in metrics first: when any is
    configured (``params["metric"]``, or the defaults of ``LGBMRanker`` and
    ``LGBMClassifier``) this function warns once, because
    ``early_stopping(first_metric_only=True)`` would stop on the built-in metric; set
    ``metric="None"`` to evaluate only gbrank's. Ranking metrics refuse a
    cross-validation fold that cuts queries (see :func:`cv`).

    Predictions reaching ``feval`` are transformed by LightGBM's built-in objectives
    (irrelevant for ranking metrics, which only order scores) and raw margins with a
    custom objective.

    Examples
    --------
    >>> import lightgbm as lgb
    >>> from gbrank.datasets import make_ranking
    >>> from gbrank.lightgbm import feval
    >>> from gbrank.objectives import LambdaRank
    >>> X, y, group = make_ranking(n_queries=40, rows_per_query=20, n_features=5)
    >>> train = lgb.Dataset(X[:600], y[:600], group=group[:30])
    >>> valid = lgb.Dataset(X[600:], y[600:], group=group[30:], reference=train)
    >>> log = {}
    >>> booster = lgb.train({"objective": LambdaRank(), "metric": "None", "verbosity": -1},
    ...                     train, num_boost_round=5, valid_sets=[valid],
    ...                     feval=feval("ndcg@10", "err@10"),
    ...                     callbacks=[lgb.record_evaluation(log)])
    >>> sorted(log["valid_0"])
    ['gbrank_err@10', 'gbrank_ndcg@10']
    """
    from gbrank.metrics import get_metric

    if not names:
        raise ValueError("feval needs at least one metric name, e.g. feval('ndcg@10')")
    metrics = tuple(get_metric(n) for n in names)
    if threshold is not None:
        metrics = tuple(m.with_threshold(threshold) for m in metrics)
    return _FEval(metrics)


def cv(params: dict[str, Any], train_set: Any, num_boost_round: int = 100, folds: Any = None,
       nfold: int = 5, stratified: bool = True, shuffle: bool = True, metrics: Any = None,
       feval: Any = None, init_model: Any = None, fpreproc: Any = None, seed: int = 0,
       callbacks: Any = None, eval_train_metric: bool = False,
       return_cvbooster: bool = False, **kwargs: Any) -> dict[str, Any]:
    """``lightgbm.cv`` with query-wise folds for gbrank objectives and metrics.

    LightGBM builds folds of whole queries only when ``params["objective"]`` is one of its
    own ranking objective names; with a callable objective it splits rows, so every fold
    trains and scores pieces of queries. This function takes ``lgb.cv``'s arguments and,
    when ``train_set`` has query structure (``group``) and ``folds`` is not given, passes
    ``folds=GroupKFold(nfold)`` over the queries — the folds LightGBM makes for its own
    ``lambdarank`` — so ``stratified`` and ``shuffle`` do not apply. Group-less data (no
    ``group``: one query of all rows, or binary data) and explicit ``folds`` go to
    ``lgb.cv`` unchanged; gbrank ranking objectives and metrics refuse any fold that cuts a
    query, whichever way it was made.

    Parameters
    ----------
    params, train_set, num_boost_round, folds, nfold, stratified, shuffle, metrics, \
feval, init_model, fpreproc, seed, callbacks, eval_train_metric, return_cvbooster
        As in ``lightgbm.cv``; further keyword arguments are passed to it unchanged.

    Returns
    -------
    dict
        ``lightgbm.cv``'s result: ``"valid gbrank_<name>-mean"`` / ``"-stdv"`` lists per
        round for each :func:`feval` metric (and the CVBooster with
        ``return_cvbooster=True``).

    Examples
    --------
    >>> import lightgbm as lgb
    >>> from gbrank.datasets import make_ranking
    >>> from gbrank.lightgbm import cv, feval
    >>> from gbrank.objectives import LambdaRank
    >>> X, y, group = make_ranking(n_queries=50, rows_per_query=20, n_features=5)
    >>> result = cv({"objective": LambdaRank(), "metric": "None", "verbosity": -1},
    ...             lgb.Dataset(X, y, group=group), num_boost_round=5, nfold=5,
    ...             feval=feval("ndcg@10"))
    >>> len(result["valid gbrank_ndcg@10-mean"])
    5
    """
    lgb = require("lightgbm")

    from gbrank._validation import check_integer

    if folds is None:
        folds = _QueryFolds(check_integer(nfold, "nfold", 2), stratified, shuffle, seed)
    return lgb.cv(params, train_set, num_boost_round=num_boost_round, folds=folds,
                  nfold=nfold, stratified=stratified, shuffle=shuffle, metrics=metrics,
                  feval=feval, init_model=init_model, fpreproc=fpreproc, seed=seed,
                  callbacks=callbacks, eval_train_metric=eval_train_metric,
                  return_cvbooster=return_cvbooster, **kwargs)


class _QueryFolds:
    """The folds of :func:`cv`, as a splitter ``lgb.cv`` calls with the constructed
    Dataset's query index per row (``groups``; all 0 without query structure).

    Several queries: ``GroupKFold(n_splits)`` over them, the folds ``lgb.cv`` makes for
    LightGBM's own ranking objectives. One query or none: the row folds ``lgb.cv`` makes
    for any other objective (stratified by label, or a seeded permutation cut into
    ``n_splits`` near-equal parts).
    """

    def __init__(self, n_splits: int, stratified: bool, shuffle: bool, seed: int) -> None:
        self.n_splits, self.stratified, self.shuffle, self.seed = (
            n_splits, stratified, shuffle, seed)

    def split(self, X: Any, y: Any = None, groups: Any = None) -> Any:
        from sklearn.model_selection import GroupKFold, StratifiedKFold

        n = len(X)
        groups = np.zeros(n, dtype=np.int64) if groups is None else np.asarray(groups)
        n_queries = np.unique(groups).size
        if n_queries > 1:
            if self.n_splits > n_queries:
                raise ValueError(f"nfold={self.n_splits} is more than the {n_queries} queries "
                                 "of train_set; each fold needs at least one whole query")
            return GroupKFold(n_splits=self.n_splits).split(X, groups=groups)
        if self.stratified:
            return StratifiedKFold(n_splits=self.n_splits, shuffle=self.shuffle,
                                   random_state=self.seed if self.shuffle else None,
                                   ).split(X, y)
        rows = np.random.RandomState(self.seed).permutation(n) if self.shuffle \
            else np.arange(n)
        test = np.array_split(rows, self.n_splits)
        return ((np.concatenate([t for j, t in enumerate(test) if j != i]), test[i])
                for i in range(self.n_splits))


# -- refit ---------------------------------------------------------------------------------

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
        return lambda s: obj.booster_grad_hess(y, s, group, weight)
    if callable(objective):
        if weight is not None:
            raise ValueError("weight= is for gbrank objectives; a plain function applies "
                             "its own weights (bind them in the function, e.g. a closure)")
        sizes = None if group is None else query_structure(y.size, group=group).sizes
        return lambda s: call_function_objective(objective, y, s, sizes)
    raise ValueError(f"objective must be a gbrank objective or a function "
                     f"fn(y, s) -> (grad, hess), got {objective!r}")


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
          weight: Any = None, init_score: Any = None, decay_rate: float = 0.9,
          params: dict[str, float] | None = None) -> Any:
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
        Query sizes of the new data for ranking objectives (``None``: group-less).
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
    >>> booster = lgb.train({"objective": obj, "verbose": -1}, lgb.Dataset(X[:1000], y[:1000]),
    ...                     num_boost_round=20)
    >>> new = refit(booster, X[1000:], y[1000:], obj, decay_rate=0.5)
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
        grad, hess = gradients(scores)
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


# -- native export -------------------------------------------------------------------------

# The objective line LightGBM writes for its own objective of each link.
_LINK_OBJECTIVE = {"binary": "binary sigmoid:1", "ranking": "lambdarank"}
# The parameters block's entry for it.
_LINK_PARAM = {"binary": "binary", "multiclass": "multiclass", "ranking": "lambdarank"}


def _add_to_leaves(line: str, value: float) -> str:
    """``key=v1 v2 ...`` with ``value`` added to every number (as LightGBM's
    ``Tree::AddBias``, which rounds results within kZeroThreshold of 0 to 0)."""
    key, _, numbers = line.partition("=")
    out = []
    for token in numbers.split():
        v = float(token) + value
        out.append(repr(0.0 if abs(v) <= _K_ZERO_THRESHOLD else v))
    return f"{key}={' '.join(out)}"


def to_native(booster: Any, objective: Any, *, init_score: Any = None,
              num_iteration: int | None = None) -> Any:
    r"""A LightGBM model that predicts, with LightGBM alone, what gbrank predicts.

    A model trained with a custom objective records no objective (LightGBM cannot
    apply a link) and not the raw score training started from (a ``Dataset``'s
    ``init_score`` is not saved). This returns a copy in which

    - the start :math:`c_k` is part of the trees: added to every leaf of the first tree
      of each class :math:`k`, as LightGBM's own ``boost_from_average`` stores its
      start, so the raw score is
      :math:`z_k(x) = c_k + \sum_t f_{t,k}(x)`;
    - the link is the model's objective, which ``Booster.predict`` applies and other
      loaders read: ``binary sigmoid:1`` (:math:`\sigma(z)`) for binary objectives
      (``FocalLoss``, ``FBetaSurrogate``), ``multiclass num_class:K`` (softmax over
      the K scores) for ``FocalLoss(num_class=K)``, ``lambdarank`` (the raw score) for
      ranking objectives (``RankNet``, ``LambdaRank`` with any metric and options).

    Feature names, categorical splits and linear trees are kept. Every link of a gbrank
    objective is one LightGBM has, so any gbrank objective exports exactly; a model
    already holding one of LightGBM's objectives (trained natively, or exported
    before) is refused, since its start is inside already.

    Parameters
    ----------
    booster : lightgbm.Booster
        Trained with ``objective`` (not modified).
    objective : gbrank objective or str
        The objective it was trained with (an instance, or a registry name such as
        ``"focal"``); its task gives the link.
    init_score : float or array-like of shape (K,), optional
        The raw score training started from: the constant of the training
        ``Dataset``'s ``init_score``, e.g. ``FocalLoss.init_score(y_train)``
        (:class:`gbrank.sklearn.GBClassifier` keeps it in ``init_score_``); one per
        class for multiclass. Required for binary and multiclass objectives (0 if the
        Dataset had no ``init_score``); ranking objectives default to 0. A per-row
        start cannot be part of a model and is refused.
    num_iteration : int, optional
        Rounds to keep; ``None`` keeps what ``booster.predict`` uses (the best
        iteration after early stopping, else all).

    Returns
    -------
    lightgbm.Booster
        Its ``predict(X)`` is the probability (binary: of the positive label; shape
        (n, K) for multiclass) or the ranking score; ``predict(X, raw_score=True)`` is
        the raw score including the start. ``save_model(path)`` writes it.

    Examples
    --------
    >>> import lightgbm as lgb
    >>> import numpy as np
    >>> from gbrank import predict_proba
    >>> from gbrank.datasets import make_imbalanced
    >>> from gbrank.lightgbm import to_native
    >>> from gbrank.objectives import FocalLoss
    >>> X, y = make_imbalanced(n_rows=1000, positive_rate=0.1, seed=0)
    >>> obj = FocalLoss(gamma=2.0)
    >>> start = obj.init_score(y)
    >>> booster = lgb.train({"objective": obj, "verbose": -1},
    ...                     lgb.Dataset(X, y, init_score=np.full(y.size, start)),
    ...                     num_boost_round=10)
    >>> native = to_native(booster, obj, init_score=start)
    >>> expected = predict_proba(booster.predict(X, raw_score=True) + start)
    >>> bool(np.allclose(native.predict(X), expected, rtol=0, atol=1e-12))
    True
    """
    lgb = require("lightgbm")
    from gbrank._export import native_target
    from gbrank._validation import check_integer

    if not isinstance(booster, lgb.Booster):
        raise ValueError(f"booster must be a lightgbm.Booster, got {type(booster).__name__}")
    target = native_target(objective, init_score, hint=(
        "pass init_score=objective.init_score(y_train), the constant of the Dataset's "
        "init_score (GBClassifier keeps it in init_score_), or init_score=0.0 if the "
        "Dataset had none"))
    k = booster.num_model_per_iteration()
    start = np.zeros(k) if target.start is None else target.start
    if k != target.num_class:
        has = f"{k} trees per round (num_class={k})" if k > 1 else "one tree per round"
        wants = (f"num_class={target.num_class}" if target.num_class > 1
                 else f"a {target.task} objective, one tree per round")
        raise ValueError(f"the model has {has}, but {target.objective!r} is {wants}")
    rounds = booster.current_iteration()
    if num_iteration is not None:
        num_iteration = check_integer(num_iteration, "num_iteration", 1, rounds)
    lines = booster.model_to_string(num_iteration=num_iteration).split("\n")
    first = next((i for i, line in enumerate(lines) if line.startswith("Tree=")), None)
    if first is None:
        raise ValueError("the model has no trees; there is nothing to export")
    header = lines[:first]
    if any(line.startswith("objective=") for line in header):
        own = next(line for line in header if line.startswith("objective="))
        raise ValueError(
            f"the model holds LightGBM's own objective ({own}): it was trained natively or "
            "exported already, so it predicts on its own; save it as it is")
    link = _LINK_OBJECTIVE.get(target.task) or f"multiclass num_class:{k}"
    out = []
    for line in header:
        if line.startswith("tree_sizes="):
            continue  # LightGBM recomputes it; the edited trees have other sizes
        out.append(line)
        if line.startswith("max_feature_idx="):
            out.append(f"objective={link}")
    tree = -1
    for line in lines[first:]:
        if line.startswith("Tree="):
            tree = int(line[len("Tree="):])
        elif line == "end of trees":
            tree = -1
        edit = 0 <= tree < k  # the first tree of each class
        value = float(start[tree]) if edit else 0.0
        if edit and line.startswith(("leaf_value=", "internal_value=", "leaf_const=")):
            line = _add_to_leaves(line, value) if line.partition("=")[2] else line
        elif edit and line.startswith("shrinkage="):
            line = "shrinkage=1"  # as Tree::AddBias: the tree is no longer a shrunk fit
        elif line.startswith("[objective: "):
            line = f"[objective: {_LINK_PARAM[target.task]}]"
        elif line.startswith("[num_class: "):
            line = f"[num_class: {k}]"
        elif line.startswith("[sigmoid: ") and target.task == "binary":
            line = "[sigmoid: 1]"
        out.append(line)
    return lgb.Booster(model_str="\n".join(out))
