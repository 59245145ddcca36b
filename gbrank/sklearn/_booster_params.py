"""The checks of the estimators' ``booster_params``: what the booster would ignore,
what would override or judge in the estimators' place, and what it cannot do."""

from __future__ import annotations

from typing import Any

__all__ = ["check_booster_params"]

# Other names of the settings the estimators pass to each booster under their main name
# (which the booster prefers to any alias, silently), and what to use instead. The main
# names themselves in booster_params override the estimators' values, as documented.
_SEED = 'the booster\'s seed is booster_params={"seed": ...} (random_state= seeds its draw)'
_SHADOWED = {
    "lightgbm": {"eta": "use learning_rate=", "shrinkage_rate": "use learning_rate=",
                 "random_state": _SEED, "random_seed": _SEED,
                 "n_jobs": "use n_jobs=", "nthread": "use n_jobs=",
                 "nthreads": "use n_jobs=", "num_thread": "use n_jobs=",
                 "subsample_freq": 'use booster_params={"bagging_freq": ...}'},
    "xgboost": {"random_state": _SEED, "n_jobs": "use n_jobs="},
}
# The boosters' own metrics: early stopping and evals_result_ follow scoring= alone.
_BOOSTER_METRICS = ("metric", "metrics", "metric_types", "eval_metric")

# LightGBM's names for the number of boosting rounds (XGBoost's params take none), which
# n_estimators sets.
_ROUND_ALIASES = frozenset({"num_iterations", "num_iteration", "n_iter", "num_tree",
                            "num_trees", "num_round", "num_rounds", "nrounds",
                            "num_boost_round", "n_estimators", "max_iter"})


def check_booster_params(bp: dict[str, Any], booster: str, estimator: str,
                         early_stopping: bool, scored: bool) -> None:
    """Refuse ``booster_params`` (of ``estimator``, training ``booster``) that the
    booster would ignore or that would override or judge in the estimator's place;
    ``scored``: the estimator judges with ``scoring=`` (else the objective's loss)."""
    if "objective" in bp:
        raise ValueError("booster_params must not set 'objective'; use the objective "
                         "parameter (a gbrank objective or 'native:<name>')")
    rounds = sorted(set(bp) & _ROUND_ALIASES)
    if rounds:
        why = ("it would override n_estimators, silently" if booster == "lightgbm"
               else "XGBoost's training does not read it")
        raise ValueError(f"booster_params must not set {rounds[0]!r}, a number of "
                         f"boosting rounds ({why}): use n_estimators")
    shadowed = [k for k in bp if k in _SHADOWED[booster]]
    if shadowed:
        k = shadowed[0]
        raise ValueError(
            f"booster_params {k!r} names a setting {estimator} already passes to {booster} "
            f"under its main name, which the booster prefers, so {k!r} would be ignored, "
            f"silently: {_SHADOWED[booster][k]}")
    metrics = [k for k in bp if k in _BOOSTER_METRICS]
    if metrics:
        judged = "scoring= (a gbrank metric name)" if scored else "the objective's loss"
        raise ValueError(
            f"booster_params {metrics[0]!r} adds the booster's own metric, which it "
            "evaluates before gbrank's: early stopping would follow it and evals_result_ "
            f"would hold it. {estimator} judges with {judged}")
    classes = sorted(set(bp) & {"num_class", "num_classes"})
    if classes:
        raise ValueError(f"booster_params must not set {classes[0]!r}: {estimator} sets "
                         "the booster's classes from the labels (K of them; two classes "
                         "take none)")
    kind = bp.get("booster")
    if booster == "xgboost" and kind in ("dart", "gblinear") and early_stopping:
        raise ValueError(
            "early stopping keeps the model's first best_iteration_ rounds, and XGBoost's "
            f"booster={kind!r} has no such model (dart reweights its earlier trees as it "
            "adds trees, gblinear's rounds are one linear model): set "
            "early_stopping_rounds=None and choose n_estimators, or use the default tree "
            "booster")
