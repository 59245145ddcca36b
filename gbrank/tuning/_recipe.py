"""The code that trains a study's recommended configuration with ``gbrank.sklearn``: the
objective with its parameters, the booster's parameters by the estimator's names, and
the refit's rounds, so that the lines in ``SUMMARY.md`` train the model the tuner saved.
"""

from __future__ import annotations

from typing import Any

from gbrank.tuning._cut import decision_metric
from gbrank.tuning._results import StudyResult
from gbrank.tuning._tasks import native_learns_positions

__all__ = ["training_code"]

# Booster parameter -> the estimator's argument of the same meaning (the rest goes to
# booster_params, the fixed settings the estimator sets itself are left out).
_NAMED = {
    "lightgbm": {"learning_rate": "learning_rate", "num_leaves": "num_leaves",
                 "min_data_in_leaf": "min_child_samples", "bagging_fraction": "subsample",
                 "feature_fraction": "colsample_bytree", "lambda_l2": "reg_lambda",
                 "max_depth": "max_depth"},
    "xgboost": {"eta": "learning_rate", "max_depth": "max_depth", "subsample": "subsample",
                "colsample_bytree": "colsample_bytree", "reg_lambda": "reg_lambda"},
}
_SET_BY_ESTIMATOR = {
    "lightgbm": {"objective", "verbose", "verbosity", "metric", "bagging_freq",
                 "num_threads", "feature_pre_filter", "num_class", "class_weight"},
    "xgboost": {"objective", "verbosity", "disable_default_eval_metric", "nthread",
                "num_class", "class_weight"},
}


def _value(v: Any) -> str:
    if isinstance(v, str):
        return f'"{v}"'
    return repr(v)


def _objective_expr(res: StudyResult, booster: str) -> tuple[str, str | None]:
    """The estimator's ``objective`` argument and the import it needs."""
    if res.native:
        return f'"native:{res.key.split(":", 1)[1]}"', None
    from gbrank.objectives import REGISTRY

    entry = REGISTRY.get(res.key)
    if entry is None:  # a custom instance tuned under its own name
        raise ValueError(f"no registry name {res.key!r}: the code needs the objective's "
                         "class")
    cls = entry.cls
    defaults = cls().get_params()
    params = dict(entry.params)
    params.update(res.objective_params)
    shown = {k: v for k, v in params.items() if k not in defaults or defaults[k] != v}
    if "random_state" in shown:  # a seed for the objective's own randomness
        shown["random_state"] = params["random_state"]
    args = ", ".join(f"{k}={_value(v)}" for k, v in shown.items())
    return f"{cls.__name__}({args})", f"from gbrank.objectives import {cls.__name__}"


def _wrap(items: list[str], indent: str, width: int = 88) -> list[str]:
    """``items`` joined by commas into lines of at most ``width`` characters."""
    out, row = [], ""
    for item in items:
        if row and len(indent) + len(row) + len(item) + 2 > width:
            out.append(indent + row.rstrip())
            row = ""
        row += f"{item}, "
    if row:
        out.append(indent + row.rstrip())
    return out


def training_code(res: StudyResult, kind: str, booster: str, *,
                  groupless: bool = False) -> list[str]:
    """Python lines that train ``res``'s recommended configuration on ``X, y`` (and
    ``qid``, each row's query id, for ranking with queries) with
    :class:`gbrank.sklearn.GBRanker`
    or :class:`~gbrank.sklearn.GBClassifier`: the same objective, booster parameters,
    seed and rounds as the tuner's refit (on the same rows, LightGBM trains the same
    model). A multiclass configuration trains ``GBClassifier(..., decision=[...])``
    with the class offsets its test split was judged at (``res.cuts`` of a macro-F_β
    target), else ``decision="argmax"`` (``num_class`` follows ``y``); a binary one
    ``GBClassifier(threshold=p, ...)``, ``p`` the probability
    threshold its test split was judged at (``res.cuts`` of ``res.target``, or of the
    first threshold metric recorded; none recorded: the estimator's default); with
    balanced class weights
    (``class_weight="balanced"``) it is fit with
    ``sample_weight=compute_sample_weight("balanced", y)``.

    Parameters
    ----------
    res : StudyResult
        A study with a pick (``booster_params``, ``objective_params``, ``rounds``).
    kind : {"ranking", "binary", "multiclass"}
    booster : {"lightgbm", "xgboost"}
    groupless : bool, default False
        Group-less ranking (:attr:`Task.groupless <gbrank.tuning.Task>`): the ranker
        is declared ``groupless=True`` and fit with ``fit(X, y)``; else a ranking
        configuration is fit with the queries, ``fit(X, y, qid=qid)``.

    Returns
    -------
    list of str

    Examples
    --------
    >>> from gbrank.tuning import StudyResult
    >>> from gbrank.tuning._recipe import training_code
    >>> res = StudyResult("t", "lambdarank:err", "err@10", False, "done", rounds=40,
    ...                   objective_params={"truncation": 20},
    ...                   booster_params={"learning_rate": 0.05, "lambda_l1": 0.001,
    ...                                   "verbose": -1, "seed": 0})
    >>> print("\\n".join(training_code(res, "ranking", "lightgbm")))
    from gbrank.objectives import LambdaRank
    from gbrank.sklearn import GBRanker
    model = GBRanker(
        LambdaRank(metric="err", truncation=20),
        n_estimators=40, learning_rate=0.05,
        booster_params={"lambda_l1": 0.001, "seed": 0},
    ).fit(X, y, qid=qid)
    """
    ranking = kind == "ranking"
    if groupless and not ranking:
        raise ValueError(f"groupless=True declares group-less ranking; a {kind} "
                         "configuration has no queries")
    grouped = ranking and not groupless  # fit with each row's query id
    estimator = "GBRanker" if ranking else "GBClassifier"
    obj, imp = _objective_expr(res, booster)
    named: dict[str, Any] = {"n_estimators": res.rounds}
    rest: dict[str, Any] = {}
    for k, v in res.booster_params.items():
        if k in _SET_BY_ESTIMATOR[booster]:
            continue
        if k in _NAMED[booster]:
            named[_NAMED[booster][k]] = v
        else:
            rest[k] = v
    args = [f"{k}={_value(v)}" for k, v in named.items()]
    if booster != "lightgbm":
        args.insert(0, 'booster="xgboost"')
    if kind == "multiclass":
        offsets = res.cuts.get(res.target)  # the offsets the test split was judged at
        args.insert(0, 'decision="argmax"' if offsets is None else f"decision={offsets!r}")
    decides = decision_metric(tuple(res.cuts), res.target) if kind == "binary" else None
    if decides is not None:  # the cut the test split was judged at
        args.insert(0, f"threshold={res.cuts[decides]!r}")
    if groupless:  # group-less ranking is declared, not inferred
        args.append("groupless=True")
    balanced = res.booster_params.get("class_weight") == "balanced"
    lines = [imp] if imp else []
    if balanced:
        lines.append("from sklearn.utils.class_weight import compute_sample_weight")
    lines.append(f"from gbrank.sklearn import {estimator}")
    lines += [f"model = {estimator}(", f"    {obj},", *_wrap(args, "    ")]
    if rest:
        items = [f'"{k}": {_value(v)}' for k, v in rest.items()]
        one = "    booster_params={" + ", ".join(items) + "},"
        if len(one) <= 88:
            lines.append(one)
        else:
            lines += ["    booster_params={", *_wrap(items, "        "), "    },"]
    if balanced:
        lines.append(').fit(X, y, sample_weight=compute_sample_weight("balanced", y))')
    elif _learns_positions(res, booster):  # a click log's display positions
        lines.append(").fit(X, y, qid=qid, position=position)" if grouped
                     else ").fit(X, y, position=position)")
    else:
        lines.append(").fit(X, y, qid=qid)" if grouped else ").fit(X, y)")
    if decides is not None:
        lines.append(f"# threshold: the {decides}-best cut of the tuner's out-of-fold "
                     "predictions on these rows; on other rows,")
        lines.append('# threshold="auto" (with beta) chooses one on a held-out split')
    if res.booster_params.get("lambdarank_unbiased"):
        lines.append("# lambdarank_unbiased: each query's rows in display order")
    return lines


def _learns_positions(res: StudyResult, booster: str) -> bool:
    """Whether the configuration trains on a click log's positions: a gbrank objective
    with ``position_bias``, or LightGBM's lambdarank with its position-bias penalty (the
    tuner gave it the positions)."""
    if res.native:
        return booster == "lightgbm" and native_learns_positions(res.booster_params)
    return res.objective_params.get("position_bias") is not None
