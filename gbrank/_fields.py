"""Duck-typed readers of a LightGBM ``Dataset`` and an XGBoost ``DMatrix``.

Objectives, metrics adapters and estimators read labels, weights and query sizes from
the boosters' data containers here, without importing either booster. This module also
holds the checks that only the container can answer: whether a LightGBM fold cuts its
parent's queries, which built-in metrics the booster evaluates beside gbrank's, and on
which scale the booster hands predictions to a custom metric (:data:`NATIVE_LINKS`).
"""

from __future__ import annotations

import weakref
from typing import Any

import numpy as np

from gbrank._warnings import warn_user

__all__ = ["is_lightgbm_dataset", "lightgbm_dataset_fields", "dmatrix_fields", "per_row_weights",
           "check_fold_keeps_queries", "lightgbm_builtin_metrics",
           "warn_lightgbm_builtin_metrics", "lightgbm_positions", "renumbered_like_lightgbm",
           "warn_ignored_lightgbm_positions", "warn_ignored_lightgbm_ranking_params",
           "warn_ignored_xgboost_ranking_params", "note_custom_round", "custom_rounds",
           "warn_ignored_class_weight_params", "refuse_lightgbm_bagging_by_query",
           "lightgbm_learning_rate", "learning_rate_in",
           "dmatrix_positions", "lightgbm_subset_rows", "NATIVE_LINKS", "LOGIT", "SOFTMAX",
           "LOG", "SOFTPLUS", "VALUE", "native_objective_name", "native_link", "lightgbm_objective",
           "margins_by_values"]


# -- the scale of what a booster hands a custom metric ---------------------------------
# A native objective hands a custom metric (lgb.train's feval, XGBoost's custom_metric)
# its transformed predictions: the link maps raw margins s to them. Probabilities of a
# logistic link (σ(s), per class for one-vs-rest) or a softmax; rates e^s; LightGBM's
# cross_entropy_lambda hands log(1 + e^s). Regression objectives hand estimates of the
# label (VALUE: raw scores, but no log-odds). Objectives not listed (ranking,
# binary:logitraw) and custom objectives hand raw margins. The one table of it.
LOGIT, SOFTMAX, LOG, SOFTPLUS, VALUE = "logit", "softmax", "log", "softplus", "value"
_LGB_REGRESSION = ("regression", "regression_l2", "l2", "mean_squared_error", "mse",
                   "l2_root", "root_mean_squared_error", "rmse", "regression_l1", "l1",
                   "mean_absolute_error", "mae", "huber", "fair", "quantile", "mape",
                   "mean_absolute_percentage_error")
NATIVE_LINKS = {
    "lightgbm": {"binary": LOGIT, "cross_entropy": LOGIT, "xentropy": LOGIT,
                 "multiclassova": LOGIT, "multiclass_ova": LOGIT, "ova": LOGIT, "ovr": LOGIT,
                 "multiclass": SOFTMAX, "softmax": SOFTMAX, "poisson": LOG, "gamma": LOG,
                 "tweedie": LOG, "cross_entropy_lambda": SOFTPLUS, "xentlambda": SOFTPLUS,
                 **dict.fromkeys(_LGB_REGRESSION, VALUE)},
    "xgboost": {"binary:logistic": LOGIT, "reg:logistic": LOGIT, "multi:softprob": SOFTMAX,
                "count:poisson": LOG, "reg:gamma": LOG, "reg:tweedie": LOG,
                **dict.fromkeys(("reg:squarederror", "reg:squaredlogerror",
                                 "reg:absoluteerror", "reg:pseudohubererror",
                                 "reg:quantileerror"), VALUE)},
}
_LGB_OBJECTIVE_KEYS = ("objective", "objective_type", "app", "application", "loss")

# LightGBM's own lambdarank refuses a query of more rows than this (its position table);
# rank_xendcg and gbrank's objectives have no such limit.
LIGHTGBM_MAX_QUERY = 10_000


def native_objective_name(booster: str, params: dict[str, Any]) -> str | None:
    """The booster objective a parameter dict names (LightGBM: under any alias), or
    ``None`` (none named, or a callable)."""
    keys = _LGB_OBJECTIVE_KEYS if booster == "lightgbm" else ("objective",)
    name = next((params[k] for k in keys if k in params), None)
    return name if isinstance(name, str) else None


def native_link(booster: str, name: str) -> str | None:
    """The link of a native objective (:data:`NATIVE_LINKS`), ``None`` for one that
    hands raw margins. LightGBM's ``"binary sigmoid:2"`` form reads as ``"binary"``."""
    return NATIVE_LINKS[booster].get(name.split(" ")[0].strip().lower())


def lightgbm_objective(ds: Any) -> str | None:
    """The objective of the training whose parameters ``lgb.train`` / ``lgb.cv`` copied
    into a ``Dataset``: a native name, ``"none"`` for a custom (callable) objective, or
    ``"regression"`` (LightGBM's default) when the training named none. ``None`` when
    the Dataset carries no training's parameters (built and evaluated outside
    ``lgb.train``): then the objective is unknown."""
    params = getattr(ds, "params", None) or {}
    if "objective" not in params:  # lgb.train always writes it ("none" for a callable)
        return None
    name = native_objective_name("lightgbm", params)
    return "regression" if name is None else name


# Rounds of a gbrank objective trained on each LightGBM training Dataset (keyed by the
# root of its reference chain, which its validation Datasets and lgb.cv's folds share):
# a Dataset reused by another lgb.train keeps the objective its first training copied
# into its parameters, and a count that stops moving tells feval that the current
# training no longer calls a gbrank objective.
_CUSTOM_ROUNDS: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()


def _reference_root(ds: Any) -> Any:
    for _ in range(64):  # a reference chain is short; never loop on a cycle
        parent = getattr(ds, "reference", None)
        if parent is None:
            break
        ds = parent
    return ds


def note_custom_round(ds: Any) -> None:
    """Count one round of a gbrank objective trained on the LightGBM Dataset ``ds``."""
    try:
        root = _reference_root(ds)
        _CUSTOM_ROUNDS[root] = _CUSTOM_ROUNDS.get(root, 0) + 1
    except TypeError:  # not weakly referenceable: no count
        pass


def custom_rounds(ds: Any) -> int | None:
    """Rounds of gbrank objectives trained so far on the training data of the LightGBM
    Dataset ``ds`` (itself, or the Dataset it references); ``None``: none ever."""
    try:
        return _CUSTOM_ROUNDS.get(_reference_root(ds))
    except TypeError:
        return None


def _first_look(ds: Any, seen: weakref.WeakSet) -> bool:
    """Whether the check keeping ``seen`` looks at the Dataset ``ds`` for the first time,
    marking it seen; one that cannot be weakly referenced is looked at every time."""
    try:
        if ds in seen:
            return False
        seen.add(ds)
    except TypeError:
        pass
    return True


def margins_by_values(preds: Any) -> bool | None:
    """``True`` when some prediction lies outside [0, 1], where no probability lies (so
    they are raw margins); ``None`` when all lie inside, where probabilities and
    margins that happen to be small cannot be told apart."""
    a = np.asarray(preds, dtype=np.float64)
    if a.size and (np.nanmin(a) < 0.0 or np.nanmax(a) > 1.0):
        return True
    return None


def is_lightgbm_dataset(x: Any) -> bool:
    """Whether ``x`` looks like a constructed ``lightgbm.Dataset`` (duck typing)."""
    return hasattr(x, "get_label") and hasattr(x, "get_group") and hasattr(x, "get_weight")


def lightgbm_dataset_fields(ds: Any) -> tuple[np.ndarray, Any, Any]:
    """Labels, weights and query sizes of a constructed ``lightgbm.Dataset`` (empty → None)."""
    y = ds.get_label()
    w = ds.get_weight()
    g = ds.get_group()
    if w is not None and np.size(w) == 0:
        w = None
    if g is not None and np.size(g) == 0:
        g = None
    return y, w, g


def lightgbm_positions(ds: Any) -> np.ndarray | None:
    """The positions a LightGBM ``Dataset`` holds as LightGBM sees them, or ``None``.

    A Dataset not yet constructed holds the values given (its public ``position``); a
    constructed one only LightGBM's renumbering of them (0, 1, 2, … in order of first
    appearance: LightGBM treats positions as categories), which is what this returns
    then. Code that needs the values themselves takes them from the user
    (:func:`gbrank.lightgbm.objective`, ``feval(..., position=...)``).
    """
    getter = getattr(ds, "get_position", None)
    raw = None if getter is None else getter()
    if raw is None or np.size(raw) == 0:
        return None
    return np.asarray(raw)


def renumbered_like_lightgbm(position: np.ndarray) -> np.ndarray:
    """Positions numbered 0, 1, 2, … in order of first appearance, as LightGBM stores a
    constructed Dataset's positions (to compare given positions with a Dataset's)."""
    values, first, inverse = np.unique(position, return_index=True, return_inverse=True)
    rank = np.empty(values.size, dtype=np.int64)
    rank[np.argsort(first, kind="stable")] = np.arange(values.size)
    return rank[inverse.ravel()]


def warn_ignored_lightgbm_positions(ds: Any, objective: str) -> None:
    """Warn once per Dataset when it has display positions that the objective ignores:
    LightGBM's own ``lambdarank`` would learn a position bias from them."""
    if not _first_look(ds, _POSITIONS_WARNED):
        return
    if lightgbm_positions(ds) is None:
        return
    warn_user(
        f"this LightGBM Dataset has display positions, which {objective} without "
        "position_bias ignores (LightGBM's own lambdarank would learn a position bias from "
        f"them): to learn from clicks, use {objective}(position_bias=...) through "
        "gbrank.lightgbm.objective(obj, position=positions); or build the Dataset without "
        "position= to silence this")


# LightGBM's own ranking objectives' parameters, which configure nothing beside a custom
# objective, and what a gbrank ranking objective calls them.
_LGB_RANKING_PARAMS = {"lambdarank_truncation_level": "truncation", "label_gain": "label_gain",
                       "sigmoid": "sigma", "lambdarank_norm": "norm"}
_RANKING_PARAMS_WARNED: weakref.WeakSet = weakref.WeakSet()


def refuse_lightgbm_bagging_by_query(params: dict[str, Any] | None, objective: str) -> None:
    """Refuse LightGBM's ``bagging_by_query`` beside a custom objective on the LightGBM
    releases where it breaks (4.6, 4.7: that path never bags the queries as the native
    one does, and the out-of-bag rows' scores are never updated; measured in
    ``experiments/results/learner_attribution.md``)."""
    import sys

    params = params or {}
    if str(params.get("bagging_by_query", False)).lower() not in ("true", "1"):
        return
    version = getattr(sys.modules.get("lightgbm"), "__version__", "0")
    major_minor = tuple(int(p) for p in version.split(".")[:2] if p.isdigit())
    if major_minor > (4, 7):
        return  # not known to be broken there
    raise ValueError(
        f"LightGBM {version}'s bagging_by_query=True beside a custom objective ({objective}) "
        "trains a useless model (its out-of-bag rows' scores are never updated: "
        "validation NDCG@10 0.314 against 0.742 with row bagging). Bag rows instead "
        "(bagging_fraction=, bagging_freq=; GBRanker(subsample=...)), or drop it")


def warn_ignored_lightgbm_ranking_params(ds: Any, objective: str) -> None:
    """Warn once per Dataset when the training's parameters set LightGBM's own ranking
    objective's knobs (``lambdarank_truncation_level=3``, ``label_gain``, ``sigmoid``,
    ``lambdarank_norm``): beside a custom objective LightGBM ignores them, and the model
    is the default one's."""
    if not _first_look(ds, _RANKING_PARAMS_WARNED):
        return
    params = getattr(ds, "params", None) or {}
    found = [k for k in _LGB_RANKING_PARAMS if k in params]
    if not found:
        return
    given = ", ".join(f"{k}={params[k]!r}" for k in found)
    ours = ", ".join(f"{_LGB_RANKING_PARAMS[k]}=..." for k in found)
    warn_user(
        f"LightGBM's parameter(s) {given} configure its own lambdarank, which a custom "
        f"objective replaces: LightGBM ignores them and {objective} trains with its own "
        f"settings. Give them "
        f"to the objective ({objective}({ours}); see its parameters)")


# XGBoost's own ranking objectives' parameters (rank:ndcg, rank:map, rank:pairwise),
# which configure nothing beside a custom objective, and the gbrank parameter closest to
# each (None: none; lambdarank_normalization is one half of LightGBM's norm).
_XGB_RANKING_PARAMS = {"lambdarank_pair_method": "truncation",
                       "lambdarank_num_pair_per_sample": "truncation",
                       "ndcg_exp_gain": "label_gain",
                       "lambdarank_normalization": "norm",
                       "lambdarank_score_normalization": "norm",
                       "lambdarank_unbiased": "position_bias",
                       "lambdarank_bias_norm": "bias_norm"}


def warn_ignored_xgboost_ranking_params(params: dict[str, Any], objective: str) -> None:
    """Warn when the parameters of an XGBoost training with a gbrank objective set
    XGBoost's own ranking objectives' knobs (``lambdarank_pair_method="mean"``,
    ``ndcg_exp_gain=False``, ``lambdarank_unbiased=True``, ...): the custom objective's
    gradients replace those objectives', so they change nothing."""
    found = [k for k in _XGB_RANKING_PARAMS if params.get(k) is not None]
    if not found:
        return
    given = ", ".join(f"{k}={params[k]!r}" for k in found)
    ours = ", ".join(dict.fromkeys(f"{_XGB_RANKING_PARAMS[k]}=..." for k in found))
    warn_user(
        f"XGBoost's parameter(s) {given} configure its own rank:* objectives, which a "
        f"custom objective replaces: XGBoost ignores them and {objective} trains with its "
        f"own settings. Give the objective its counterparts ({objective}({ours}); see its "
        "parameters)")


# The boosters' class weighting, applied only inside their own binary objective: beside a
# custom objective it weights nothing.
_CLASS_WEIGHT_PARAMS = {"lightgbm": ("scale_pos_weight", "is_unbalance", "unbalance",
                                     "unbalanced_sets"),
                        "xgboost": ("scale_pos_weight",)}
_CLASS_WEIGHTS_WARNED: weakref.WeakSet = weakref.WeakSet()


def warn_ignored_class_weight_params(params: dict[str, Any] | None, objective: str,
                                     booster: str, ds: Any = None) -> None:
    """Warn when a training with a gbrank objective sets the booster's class weighting
    (``scale_pos_weight``, LightGBM's ``is_unbalance``): the boosters apply it in their
    own binary objective only, so beside a custom one the model is unweighted. ``ds``: a
    LightGBM Dataset holding the training's parameters, warned about once."""
    if ds is not None and not _first_look(ds, _CLASS_WEIGHTS_WARNED):
        return
    params = params or {}
    found = [k for k in _CLASS_WEIGHT_PARAMS[booster]
             if params.get(k) not in (None, False, 1, 1.0, "false")]
    if not found:
        return
    given = ", ".join(f"{k}={params[k]!r}" for k in found)
    warn_user(
        f"{'LightGBM' if booster == 'lightgbm' else 'XGBoost'}'s parameter(s) {given} "
        "weight the classes inside its own binary objective only: beside "
        f"{objective}, a custom objective, they change nothing "
        "and the model is unweighted. Weight the rows instead — sample_weight= (fit), "
        "lgb.Dataset(weight=) / DMatrix(weight=) — or use the objective's own weighting "
        "(FocalLoss(alpha=...))")


def lightgbm_subset_rows(ds: Any) -> np.ndarray | None:
    """The rows of its parent that a LightGBM ``Dataset`` subset holds (``lgb.cv``'s
    folds: ``Dataset.subset`` records them as ``used_indices``), or ``None`` when it is
    not a subset."""
    used = getattr(ds, "used_indices", None)
    if used is None or getattr(ds, "reference", None) is None:
        return None
    return np.asarray(used, dtype=np.int64)


_LEARNING_RATE_ALIASES = ("learning_rate", "shrinkage_rate", "eta")


def lightgbm_learning_rate(ds: Any) -> float | None:
    """The learning rate of the training a LightGBM ``Dataset`` serves: ``lgb.train``
    copies the booster's parameters into a Dataset it constructs (LightGBM's default
    0.1 when they name none). ``None`` when the Dataset was constructed before
    ``lgb.train``: it then keeps its own parameters, and the training's are unknown."""
    params = getattr(ds, "params", None) or {}
    rate = learning_rate_in(params)
    if rate is not None:
        return rate
    # lgb.train always writes "objective" into the parameters it copies in ("none" for a
    # callable objective): without it, nothing was copied.
    return 0.1 if "objective" in params else None


def learning_rate_in(params: dict) -> float | None:
    """The learning rate a LightGBM parameter dict names (any alias), or ``None``."""
    for alias in _LEARNING_RATE_ALIASES:
        if alias in params:
            return float(params[alias])
    return None


def dmatrix_positions(dmat: Any, field: str) -> np.ndarray | None:
    """Positions carried in the per-row float field ``field`` of a ``DMatrix`` (e.g.
    ``"label_lower_bound"``), or ``None`` when it is empty."""
    values = dmat.get_float_info(field)
    return None if values.size == 0 else np.asarray(values, dtype=np.float64)


def dmatrix_fields(dmat: Any) -> tuple[np.ndarray, Any, Any]:
    """Labels, weights (per query for ranking data) and query sizes of a ``DMatrix``."""
    y = dmat.get_label()
    w = dmat.get_weight()
    w = None if w.size == 0 else w
    ptr = dmat.get_uint_info("group_ptr")
    group = np.diff(ptr.astype(np.int64)) if ptr.size >= 2 else None
    return y, w, group


def per_row_weights(w: Any, group: Any, n: int) -> Any:
    """Weights of every row: a ranking ``DMatrix`` holds one weight per query, which
    per-row metrics take on each row of the query."""
    if w is None or group is None or np.size(w) == n:
        return w
    return np.repeat(np.asarray(w, dtype=np.float64), np.asarray(group, dtype=np.int64))


def start_kind(start: Any, n_rows: int) -> str | None:
    """``None`` for no start (an empty or absent ``init_score`` / ``base_margin``),
    ``"constant"`` for one value per class repeated on every row, else ``"per row"``."""
    if start is None or np.size(start) == 0:
        return None
    rows = np.asarray(start, dtype=np.float64).reshape(max(n_rows, 1), -1)
    return "constant" if bool(np.all(rows == rows[:1])) else "per row"


def missing_start_error(kind: str, metrics: Any, missing: str, adds: str,
                        fix: str) -> str | None:
    """The message refusing evaluation data that lacks the start (of kind ``kind``)
    its training's data has, or ``None`` when no metric of ``metrics`` depends on it:
    a constant start matters to the metrics that read the scale only (ranking metrics
    ignore a shift), a per-row one (an earlier model's scores) to every metric.
    ``missing`` says which data lacks it, ``adds`` how the booster applies a start,
    ``fix`` the call that gives the data one."""
    judged = [m.name for m in metrics if m.reads_scale or kind != "constant"]
    if not judged:
        return None
    what = ("np.full(len(y_valid), obj.init_score(y_train)) (an (n, K) array for K "
            "classes)" if kind == "constant" else
            "the earlier model's raw predictions on those rows")
    return (f"{missing} ({kind}): {adds} to the model's raw scores, so {judged[0]} would "
            "judge other scores than the model gives on the rows without it. Give them "
            f"the same start: {fix} with {what}")


# Datasets already inspected (a check runs once per Dataset, not once per round).
_FOLDS_CHECKED: weakref.WeakSet = weakref.WeakSet()
# The objective's look and a feval's warn of different things: one token each.
_METRICS_WARNED: weakref.WeakSet = weakref.WeakSet()
_METRICS_WARNED_FEVAL: weakref.WeakSet = weakref.WeakSet()
_POSITIONS_WARNED: weakref.WeakSet = weakref.WeakSet()


def check_fold_keeps_queries(ds: Any) -> None:
    """Raise ``ValueError`` if ``ds`` is a subset of rows that cuts its parent's queries.

    ``lgb.cv`` builds query-wise folds only for LightGBM's own ranking objective names;
    with a callable objective (every gbrank objective) it splits rows, and the subset's
    query sizes become the pieces of each query that fell into the fold. A ranking loss
    or metric computed on such pieces is a plausible wrong number, so it is refused.
    A subset of a group-less parent (one query of all rows) is a smaller group-less set,
    which is what group-less ranking means, and passes.
    """
    used = getattr(ds, "used_indices", None)
    parent = getattr(ds, "reference", None)
    if used is None or parent is None:
        return
    try:
        if ds in _FOLDS_CHECKED:
            return
    except TypeError:  # not weak-referenceable: check every time
        pass
    sizes = parent.get_group()
    if sizes is not None and np.size(sizes) > 1:
        sizes = np.asarray(sizes, dtype=np.int64)
        offsets = np.concatenate(([0], np.cumsum(sizes)))
        rows = np.asarray(used, dtype=np.int64)
        query = np.searchsorted(offsets, rows, side="right") - 1
        taken = np.bincount(query, minlength=sizes.size)
        cut = np.flatnonzero((taken > 0) & (taken < sizes))
        if cut.size:
            q = int(cut[0])
            raise ValueError(
                f"this LightGBM Dataset is a subset of rows (a cross-validation fold) that "
                f"cuts {cut.size} of its parent's {sizes.size} queries (first: query {q}, "
                f"{int(taken[q])} of its {int(sizes[q])} rows), so a ranking loss or metric "
                "would see pieces of queries. lgb.cv makes query-wise folds only for "
                "LightGBM's own ranking objectives; with a gbrank objective use "
                "gbrank.lightgbm.cv (lgb.cv's signature, query-wise folds) or pass "
                "folds=sklearn.model_selection.GroupKFold(n_splits=...) to lgb.cv")
    try:
        _FOLDS_CHECKED.add(ds)
    except TypeError:
        pass


# LightGBM's names for "no metric" (config.cpp: "na", "null", "custom", "none", "").
_NO_METRIC = {"", "none", "null", "na", "custom"}
_METRIC_ALIASES = ("metric", "metrics", "metric_types")
# Metrics LightGBM computes on probabilities: with a custom objective it applies no link,
# so they read raw margins as probabilities.
_PROBABILITY_METRICS = {
    "binary_logloss", "binary", "binary_error", "multi_logloss", "multiclass", "softmax",
    "multiclassova", "multiclass_ova", "ova", "ovr", "multi_error", "cross_entropy",
    "xentropy", "cross_entropy_lambda", "xentlambda", "kullback_leibler", "kldiv",
}


def lightgbm_builtin_metrics(ds: Any) -> list[str]:
    """LightGBM built-in metric names configured in the parameters a Dataset was trained
    or validated with (``lgb.train`` copies the booster's parameters into each Dataset)."""
    params = getattr(ds, "params", None) or {}
    out: list[str] = []
    for alias in _METRIC_ALIASES:
        value = params.get(alias)
        if value is None:
            continue
        values = value.split(",") if isinstance(value, str) else list(value)
        out.extend(str(v).strip() for v in values if str(v).strip().lower() not in _NO_METRIC)
    return out


def warn_lightgbm_builtin_metrics(ds: Any, gbrank_metric: str | None = None) -> None:
    """Warn once per Dataset when LightGBM also evaluates built-in metrics.

    ``gbrank_metric``: the name of the gbrank metric being evaluated (a ``feval``), or
    ``None`` when called from a gbrank objective. Built-in metrics are listed before a
    ``feval``'s, so ``early_stopping(first_metric_only=True)`` stops on the built-in one
    (LGBMRanker evaluates ``ndcg@1..5`` and LGBMClassifier ``binary_logloss`` unless
    ``metric`` is set); with a custom objective LightGBM computes probability metrics on
    raw margins, which makes their values meaningless.
    """
    if ds is None:
        return
    if not _first_look(ds, _METRICS_WARNED if gbrank_metric is None else _METRICS_WARNED_FEVAL):
        return
    builtin = lightgbm_builtin_metrics(ds)
    if not builtin:
        return
    names = ", ".join(builtin)
    if gbrank_metric is not None:
        warn_user(
            f"LightGBM also evaluates its built-in metric(s) {names} on this data and lists "
            f"them before {gbrank_metric}: early stopping with first_metric_only=True stops "
            f"on {builtin[0]}, not on {gbrank_metric} (without it, on whichever metric "
            "stalls first). Set metric='None' in the parameters (or the estimator, e.g. "
            "LGBMRanker(metric='None')) to evaluate only gbrank's metrics.")
    prob = [m for m in builtin if m.lower() in _PROBABILITY_METRICS]
    if gbrank_metric is None and prob:
        warn_user(
            f"LightGBM computes {', '.join(prob)} on raw margins when the objective is a "
            "custom one (it applies no sigmoid or softmax), so those values are not the "
            "metric. Set metric='None' and evaluate with gbrank.lightgbm.feval(...), or "
            "use gbrank.sklearn.GBClassifier.")
