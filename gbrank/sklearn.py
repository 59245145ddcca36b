"""scikit-learn estimators for gbrank objectives: :class:`GBRanker`, :class:`GBClassifier`
and :func:`make_scorer`.

Both estimators train LightGBM or XGBoost with a gbrank objective (or the booster's own
objective, ``"native:<name>"``) through the boosters' low-level APIs, so that grouped
and group-less ranking, initial scores, early stopping on a gbrank metric and
learning-rate decay work the same with either booster. They follow scikit-learn's
estimator contract (``clone``, ``GridSearchCV``, ``Pipeline``, pickling, metadata
routing of ``qid``). Boosters are imported inside the functions that use them: importing
this module imports neither LightGBM nor XGBoost.

Grouped cross-validation with metadata routing::

    import sklearn
    from sklearn.model_selection import GroupKFold, cross_val_score
    from gbrank.sklearn import GBRanker, make_scorer

    sklearn.set_config(enable_metadata_routing=True)
    scores = cross_val_score(GBRanker().set_fit_request(qid=True), X, y, groups=qid,
                             cv=GroupKFold(5), params={"qid": qid},
                             scoring=make_scorer("ndcg@10"))
"""

from __future__ import annotations

from typing import Any

import numpy as np
from sklearn.base import BaseEstimator, ClassifierMixin
from sklearn.metrics._scorer import _Scorer as _SklearnScorer
from sklearn.utils import _safe_indexing, check_random_state
from sklearn.utils.metaestimators import available_if
from sklearn.utils.multiclass import check_classification_targets
from sklearn.utils.validation import check_is_fitted, column_or_1d, validate_data

from gbrank._deps import require
from gbrank._fields import dmatrix_fields, lightgbm_dataset_fields, per_row_weights
from gbrank._proba import predict_proba as _sigmoid
from gbrank._validation import (
    as_float_array,
    check_choice,
    check_finite,
    check_grades,
    check_integer,
    check_number,
    check_row_weights,
    query_structure,
)
from gbrank.metrics import get_metric
from gbrank.objectives import Objective, get_objective
from gbrank.objectives._registry import OBJECTIVES

__all__ = ["GBRanker", "GBClassifier", "make_scorer"]

_BOOSTERS = ("lightgbm", "xgboost")
_NATIVE = "native:"


# --- parameters shared by both estimators ------------------------------------------------


def _is_frame(X: Any) -> bool:
    return hasattr(X, "columns") and hasattr(X, "dtypes") and hasattr(X, "iloc")


def _resolve_objective(objective: Any, task: str, estimator: str) -> Objective | str:
    """A fresh objective object (registry name or a clone of the instance given), or the
    booster's own objective name for ``"native:<name>"``; checks the task."""
    from sklearn.base import clone

    if isinstance(objective, str):
        if objective.startswith(_NATIVE) and len(objective) > len(_NATIVE):
            return objective[len(_NATIVE):]
        obj = get_objective(objective)
    elif isinstance(objective, Objective):
        obj = clone(objective)
        obj._params()  # validate now: a bad parameter fails at fit, named
    else:
        raise ValueError(
            f"objective must be a registry name ({', '.join(OBJECTIVES)}, "
            f"lambdarank:<metric>, or native:<booster objective>) or a gbrank objective "
            f"instance, got {objective!r}"
        )
    if obj.task != task:
        valid = ", ".join(n for n, c in OBJECTIVES.items() if c.task == task) \
            if task == "ranking" else "focal, fbeta_surrogate"
        raise ValueError(
            f"objective {objective!r} is a {obj.task} objective; {estimator} takes {task} "
            f"objectives ({valid}, or an instance of one)"
        )
    return obj


# Objectives of the boosters whose prediction is the estimator's: sigmoid of the raw
# score (GBClassifier.predict_proba) or the raw score itself (GBRanker.predict).
_NATIVE_LINKS = {
    ("lightgbm", "binary"): ("binary sigmoid:1", "cross_entropy"),
    ("lightgbm", "ranking"): ("lambdarank", "rank_xendcg", "regression", "regression_l1",
                              "huber", "fair", "quantile", "mape"),
    ("xgboost", "binary"): ("binary:logistic", "reg:logistic"),
    ("xgboost", "ranking"): ("rank:ndcg", "rank:map", "rank:pairwise", "reg:squarederror",
                             "reg:absoluteerror", "reg:pseudohubererror",
                             "reg:quantileerror", "binary:logitraw"),
}


def _check_native_link(booster: str, model: Any, name: str, task: str) -> None:
    """Refuse to save a model trained with the booster's own objective ``name`` when the
    booster's prediction is not what the estimator predicts."""
    if booster == "lightgbm":
        header = model.model_to_string(num_iteration=1).split("Tree=")[0]
        line = next((x for x in header.splitlines() if x.startswith("objective=")), "")
        recorded = line[len("objective="):]
    else:
        import json

        recorded = json.loads(model.save_config())["learner"]["objective"]["name"]
    valid = _NATIVE_LINKS[(booster, task)]
    if recorded not in valid:
        what = ("the sigmoid of the raw score (predict_proba)" if task == "binary"
                else "the raw score (predict)")
        raise ValueError(
            f"objective='native:{name}' makes {booster} predict with its objective "
            f"{recorded!r}, not {what}; a saved model would predict something else. "
            f"Objectives whose prediction is {what}: {', '.join(valid)}")


class _GBBase(BaseEstimator):
    """Training machinery shared by :class:`GBRanker` and :class:`GBClassifier`."""

    _task = "ranking"

    # -- validation of the estimator's own parameters (at fit) -----------------------
    def _check_params(self) -> dict[str, Any]:
        p = {
            "booster": check_choice(self.booster, "booster", _BOOSTERS),
            "n_estimators": check_integer(self.n_estimators, "n_estimators", 1),
            "learning_rate": check_number(self.learning_rate, "learning_rate", 0.0,
                                          low_open=True),
            "decay": None if self.learning_rate_decay is None else check_number(
                self.learning_rate_decay, "learning_rate_decay", 0.0, 1.0, low_open=True),
            "early_stopping_rounds": check_integer(
                self.early_stopping_rounds, "early_stopping_rounds", 1, allow_none=True),
            "validation_fraction": None if self.validation_fraction is None else check_number(
                self.validation_fraction, "validation_fraction", 0.0, 1.0, low_open=True,
                high_open=True),
        }
        if p["early_stopping_rounds"] is not None and p["validation_fraction"] is None:
            raise ValueError("early_stopping_rounds needs a validation split: set "
                             "validation_fraction to a number in (0, 1), not None")
        bp = self.booster_params
        if bp is not None and not isinstance(bp, dict):
            raise ValueError(f"booster_params must be a dict or None, got {bp!r}")
        if bp and "objective" in bp:
            raise ValueError("booster_params must not set 'objective'; use the objective "
                             "parameter (a gbrank objective or 'native:<name>')")
        return p

    def _tree_params(self, booster: str) -> dict[str, Any]:
        out: dict[str, Any] = {}
        leaves = check_integer(self.num_leaves, "num_leaves", 2, allow_none=True)
        depth = check_integer(self.max_depth, "max_depth", 1, allow_none=True)
        child = check_integer(self.min_child_samples, "min_child_samples", 0, allow_none=True)
        sub = None if self.subsample is None else check_number(
            self.subsample, "subsample", 0.0, 1.0, low_open=True)
        col = None if self.colsample_bytree is None else check_number(
            self.colsample_bytree, "colsample_bytree", 0.0, 1.0, low_open=True)
        l2 = None if self.reg_lambda is None else check_number(self.reg_lambda, "reg_lambda", 0.0)
        jobs = check_integer(self.n_jobs, "n_jobs", allow_none=True)
        if jobs is None:
            # scikit-learn's convention: None is one thread. (A booster's own default,
            # all cores, oversubscribes under cross_val_score(n_jobs=...) and on a busy
            # machine; OpenMP's spinning threads then make training many times slower.)
            jobs = 1
        if jobs < 0:
            import os

            jobs = max(1, (os.cpu_count() or 1) + 1 + jobs)  # joblib's convention
        if jobs == 0:
            raise ValueError("n_jobs must be a non-zero integer or None, got 0")
        if booster == "lightgbm":
            names = {"num_leaves": leaves, "max_depth": depth, "min_data_in_leaf": child,
                     "feature_fraction": col, "lambda_l2": l2, "num_threads": jobs}
            if sub is not None:
                names.update(bagging_fraction=sub, bagging_freq=1 if sub < 1.0 else 0)
        else:
            if child is not None:
                raise ValueError(
                    "min_child_samples has no XGBoost counterpart (XGBoost limits leaves by "
                    "Hessian sum): leave it None and pass booster_params="
                    "{'min_child_weight': ...}")
            names = {"max_leaves": leaves, "max_depth": depth, "subsample": sub,
                     "colsample_bytree": col, "reg_lambda": l2, "nthread": jobs}
        out.update({k: v for k, v in names.items() if v is not None})
        return out

    def set_params(self, **params: Any) -> Any:
        """Set parameters; ``objective__<name>`` sets a parameter of the objective
        instance (a name such as ``"focal"`` has none: pass an instance)."""
        nested = sorted(k for k in params if k.startswith("objective__"))
        obj = params.get("objective", self.objective)
        if nested and not isinstance(obj, Objective):
            raise ValueError(
                f"{nested[0]} sets a parameter of an objective instance, but objective is "
                f"{obj!r}; pass an instance, e.g. objective=gbrank.objectives.FocalLoss()")
        return super().set_params(**params)

    # -- data ---------------------------------------------------------------------------
    def _validate_X(self, X: Any, reset: bool) -> Any:
        if _is_frame(X):
            # Keep DataFrames: LightGBM and XGBoost read categorical columns from them.
            validate_data(self, X, reset=reset, skip_check_array=True)
            if X.shape[0] == 0:
                raise ValueError("X has 0 rows; at least 1 is required")
            return X
        return validate_data(self, X, reset=reset, accept_sparse=["csr", "csc"],
                             dtype=[np.float64, np.float32], ensure_all_finite="allow-nan")

    def _split(self, n_rows: int, offsets: np.ndarray, frac: float | None, holdout: bool,
               rng: np.random.RandomState) -> tuple[np.ndarray, np.ndarray | None]:
        """Row indices (in query order) of the training and validation parts: whole
        queries when grouped, rows when group-less (one query)."""
        if not holdout:
            return np.arange(n_rows), None
        nq = offsets.size - 1
        if nq == 1:
            n_val = int(round(frac * n_rows))
            if n_val < 1 or n_rows - n_val < 1:
                raise ValueError(
                    f"validation_fraction={self.validation_fraction!r} of {n_rows} rows "
                    "leaves an empty training or validation part")
            perm = rng.permutation(n_rows)
            return np.sort(perm[n_val:]), np.sort(perm[:n_val])
        n_val = int(round(frac * nq))
        if n_val < 1 or nq - n_val < 1:
            raise ValueError(
                f"validation_fraction={self.validation_fraction!r} of {nq} queries leaves "
                "an empty training or validation part (whole queries are held out)")
        held = np.zeros(nq, dtype=bool)
        held[rng.permutation(nq)[:n_val]] = True
        row_held = np.repeat(held, np.diff(offsets))
        return np.flatnonzero(~row_held), np.flatnonzero(row_held)

    # -- training -------------------------------------------------------------------------
    def _train(self, p: dict[str, Any], obj: Objective | str, X: Any, y: np.ndarray,
               sizes: np.ndarray | None, w: np.ndarray | None, init: float,
               Xv: Any, yv: Any, sizes_v: Any, wv: Any, metric: Any, seed: int) -> None:
        """Train ``self.booster_``; set ``evals_result_`` and ``best_iteration_``."""
        custom = not isinstance(obj, str)
        lr, decay = p["learning_rate"], p["decay"]
        n_rounds, stop = p["n_estimators"], p["early_stopping_rounds"]
        extra = dict(self.booster_params or {})
        evals_result: dict[str, Any] = {}
        if p["booster"] == "lightgbm":
            lgb = require("lightgbm")

            # feature_pre_filter=False: LightGBM otherwise drops every feature a leaf
            # of min_data_in_leaf rows cannot split (small data, or a grid search over
            # min_child_samples), and with a custom objective and no feature left it
            # aborts ("Check failed: num_features() > 0").
            params = {"objective": obj, "learning_rate": lr, "verbosity": -1, "seed": seed,
                      "metric": "None", "feature_pre_filter": False,
                      **self._tree_params("lightgbm"), **extra}
            init_tr = None if init == 0.0 else np.full(y.size, init)
            dtrain = lgb.Dataset(X, y, group=sizes, weight=w, init_score=init_tr,
                                 free_raw_data=True)
            valid_sets, callbacks = [], []
            if decay is not None:
                callbacks.append(lgb.reset_parameter(
                    learning_rate=lambda i: lr * decay ** i))
            if Xv is not None:
                init_v = None if init == 0.0 else np.full(len(yv), init)
                valid_sets = [lgb.Dataset(Xv, yv, group=sizes_v, weight=wv, init_score=init_v,
                                          reference=dtrain)]
                callbacks.append(lgb.record_evaluation(evals_result))
                if stop is not None:
                    callbacks.append(lgb.early_stopping(stop, first_metric_only=True,
                                                        verbose=False))
            booster = lgb.train(params, dtrain, num_boost_round=n_rounds,
                                valid_sets=valid_sets, valid_names=["valid"][:len(valid_sets)],
                                feval=metric.lightgbm if valid_sets else None,
                                callbacks=callbacks)
            best = booster.best_iteration if booster.best_iteration > 0 \
                else booster.current_iteration()
        else:
            xgb = require("xgboost")

            from gbrank.xgboost import objective as xgb_objective

            params = {"eta": lr, "seed": seed, "verbosity": 0,
                      "disable_default_eval_metric": 1, **self._tree_params("xgboost"),
                      **extra}
            if custom:
                params.setdefault("base_score", 0.0)  # the start is init_score_ (margin)
            else:
                params["objective"] = obj  # XGBoost picks its own base_score
            qw = w
            if w is not None and sizes is not None:  # XGBoost: one weight per query
                qw = query_structure(y.size, group=sizes, weight=w).weights

            def dmat(Xi: Any, yi: Any, gi: Any, wi: Any) -> Any:
                margin = None if init == 0.0 else np.full(len(yi), init)
                return xgb.DMatrix(Xi, yi, group=gi, weight=wi, base_margin=margin,
                                   enable_categorical=True, missing=np.nan,
                                   nthread=params.get("nthread"))

            evals, callbacks = [], []
            if decay is not None:
                callbacks.append(xgb.callback.LearningRateScheduler(
                    lambda i: lr * decay ** i))
            if Xv is not None:
                qwv = wv
                if wv is not None and sizes_v is not None:
                    qwv = query_structure(len(yv), group=sizes_v, weight=wv).weights
                evals = [(dmat(Xv, yv, sizes_v, qwv), "valid")]
            booster = xgb.train(params, dmat(X, y, sizes, qw), num_boost_round=n_rounds,
                                evals=evals, evals_result=evals_result,
                                obj=xgb_objective(obj) if custom else None,
                                custom_metric=metric.xgboost if evals else None,
                                maximize=metric.higher_is_better if evals else None,
                                early_stopping_rounds=stop if evals else None,
                                callbacks=callbacks or None, verbose_eval=False)
            if evals and stop is not None:
                best = int(booster.best_iteration) + 1
            else:
                best = int(booster.num_boosted_rounds())
        self.booster_ = booster
        self.evals_result_ = evals_result
        self.best_iteration_ = int(best)

    def _raw(self, X: Any) -> np.ndarray:
        """Raw margins of the first ``best_iteration_`` trees (without ``init_score_``)."""
        if self.booster == "lightgbm":
            return np.asarray(self.booster_.predict(X, raw_score=True,
                                                    num_iteration=self.best_iteration_),
                              dtype=np.float64)
        xgb = require("xgboost")

        names = {}
        if not _is_frame(X) and self.booster_.feature_names is not None:
            # Fitted on a DataFrame, given an array (scikit-learn has warned already).
            names = {"feature_names": self.booster_.feature_names,
                     "feature_types": self.booster_.feature_types}
        # As in training: a start given as base_margin replaces the model's base_score.
        margin = None if self.init_score_ == 0.0 else np.zeros(X.shape[0])
        dm = xgb.DMatrix(X, enable_categorical=True, missing=np.nan, base_margin=margin,
                         **names)
        return np.asarray(self.booster_.predict(dm, output_margin=True,
                                                iteration_range=(0, self.best_iteration_)),
                          dtype=np.float64)

    def _margins(self, X: Any) -> np.ndarray:
        check_is_fitted(self, "booster_")
        X = self._features(self._validate_X(X, reset=False))[0]
        return self._raw(X) + self.init_score_

    def _features(self, X: Any) -> tuple[Any, np.ndarray | None]:
        """The booster's features of ``X`` and the query ids it carries (none here)."""
        return X, None

    # -- export -------------------------------------------------------------------------
    def _native_booster(self) -> Any:
        """The fitted model as a booster that predicts on its own (see ``save_model``)."""
        check_is_fitted(self, "booster_")
        obj, best = self.objective_, self.best_iteration_
        if isinstance(obj, str):  # the booster's own objective: its start is inside
            _check_native_link(self.booster, self.booster_, obj, self._task)
            if self.booster == "lightgbm":
                lgb = require("lightgbm")
                return lgb.Booster(model_str=self.booster_.model_to_string(num_iteration=best))
            return self.booster_[:best]
        if self.booster == "lightgbm":
            from gbrank.lightgbm import to_native

            return to_native(self.booster_, obj, init_score=self.init_score_,
                             num_iteration=best)
        from gbrank.xgboost import to_native

        # Training had a base_margin exactly when the start is not 0 (see _train).
        start = "base_score" if self.init_score_ == 0.0 else self.init_score_
        return to_native(self.booster_, obj, init_score=start, num_iteration=best)

    def save_model(self, path: Any) -> None:
        """Write the fitted model in the booster's own format, for serving without gbrank.

        The file holds the trees of the ``best_iteration_`` rounds, the constant start
        ``init_score_`` inside them and the objective's link as the model's objective
        (:func:`gbrank.lightgbm.to_native`, :func:`gbrank.xgboost.to_native`), so that
        the booster alone — ``lightgbm.Booster(model_file=path).predict(X)`` or
        ``xgboost.Booster(model_file=path).predict(DMatrix(X))`` — and loaders of its
        files (ONNX converters, Treelite) predict what this estimator does (the class's
        Notes say what that is). A model trained with ``"native:<name>"`` is written as
        the booster holds it, when that objective's prediction is the estimator's
        (refused otherwise).

        Parameters
        ----------
        path : str or path-like
            LightGBM: a text model (``"model.txt"``). XGBoost: JSON when the name ends
            in ``.json`` (``"model.json"``), else the format XGBoost picks by suffix.

        Examples
        --------
        >>> import os, tempfile
        >>> import lightgbm as lgb
        >>> from gbrank.datasets import make_imbalanced
        >>> from gbrank.sklearn import GBClassifier
        >>> X, y = make_imbalanced(n_rows=1000, positive_rate=0.1, seed=0)
        >>> clf = GBClassifier(n_estimators=10, random_state=0).fit(X, y)
        >>> path = os.path.join(tempfile.mkdtemp(), "model.txt")
        >>> clf.save_model(path)
        >>> proba = lgb.Booster(model_file=path).predict(X)
        >>> bool(np.allclose(proba, clf.predict_proba(X)[:, 1], rtol=0, atol=1e-12))
        True
        """
        booster = self._native_booster()
        if self.booster == "xgboost":
            booster.set_attr(**self._export_attributes())
        booster.save_model(str(path))

    def _export_attributes(self) -> dict[str, str]:
        """What an XGBoost model file carries beyond the model, as its attributes."""
        return {}

    @property
    def feature_importances_(self) -> np.ndarray:
        """Total gain of the splits on each feature, normalised to sum 1 (0s if none)."""
        check_is_fitted(self, "booster_")
        n = self.n_features_in_
        qid_at = getattr(self, "_qid_at", None)
        n_booster = n - (qid_at is not None)
        if self.booster == "lightgbm":
            gain = np.asarray(self.booster_.feature_importance("gain"), dtype=np.float64)
        else:
            names = self.booster_.feature_names or [f"f{i}" for i in range(n_booster)]
            score = self.booster_.get_score(importance_type="total_gain")
            gain = np.array([score.get(name, 0.0) for name in names], dtype=np.float64)
        if qid_at is not None:  # the query-id column of X is no feature
            gain = np.insert(gain, qid_at, 0.0)
        total = gain.sum()
        return gain / total if total > 0 else gain

    def __sklearn_tags__(self) -> Any:
        tags = super().__sklearn_tags__()
        tags.input_tags.allow_nan = True
        tags.input_tags.sparse = True
        tags.input_tags.categorical = True
        tags.target_tags.required = True
        return tags


class _ValidMetric:
    """Validation metric for both boosters (module-level: picklable).

    ``lightgbm``/``xgboost`` are the callables each booster takes. Ranking: a gbrank
    metric by name (groups from the Dataset/DMatrix). Classification: the objective's
    own loss (lower is better)."""

    def __init__(self, scoring: str | None, objective: Any) -> None:
        self.objective = objective
        if scoring is None:
            self.name, self.higher_is_better, self.metric = "loss", False, None
        else:
            self.metric = get_metric(scoring)
            self.name, self.higher_is_better = self.metric.name, self.metric.higher_is_better

    def _value(self, y: Any, s: Any, group: Any, weight: Any) -> float:
        if self.metric is not None and self.metric.kind == "ranking":
            return self.metric(y, s, group, weight)
        weight = per_row_weights(weight, group, np.size(y))
        if self.metric is not None:
            return self.metric(y, s, None, weight)
        return float(self.objective.loss(y, s, weight=weight))

    def lightgbm(self, preds: Any, data: Any) -> tuple[str, float, bool]:
        y, w, g = lightgbm_dataset_fields(data)
        return self.name, self._value(y, preds, g, w), self.higher_is_better

    def xgboost(self, preds: Any, dmat: Any) -> tuple[str, float]:
        y, w, g = dmatrix_fields(dmat)
        return self.name, self._value(y, preds, g, w)


# --- GBRanker --------------------------------------------------------------------------


class GBRanker(_GBBase):
    r"""Learning to rank with a gbrank objective, as a scikit-learn estimator.

    Query ids travel with ``X``: a column named ``"qid"`` of a DataFrame (XGBoost's
    ``XGBRanker`` convention), or the column ``qid_col`` names (a column index for
    arrays), holds each row's query id and is never a feature. Rows of a query need not
    be adjacent. Every scikit-learn tool then splits, fits and scores whole queries
    without metadata routing: ``cross_val_score(GBRanker(), X, y, groups=X["qid"],
    cv=GroupKFold(5), scoring=make_scorer("ndcg@10"))``. Without such a column,
    ``fit(X, y, qid=qid)`` takes the ids as an argument (with
    ``sklearn.set_config(enable_metadata_routing=True)``, ``set_fit_request(qid=True)``
    and :func:`make_scorer` route them through cross-validation), and ``fit(X, y)`` is
    group-less: all rows are one query, of any size.

    ``predict`` returns scores (higher = ranked higher) in the caller's row order;
    ``score`` returns the ``scoring`` metric (pair accuracy by default). Works in
    ``cross_val_score``, ``learning_curve``, ``GridSearchCV`` (over estimator and
    ``objective__*`` parameters) and ``Pipeline`` (the query-id column must reach the
    ranker: keep DataFrame output, ``set_output(transform="pandas")``, or name it by
    index).

    Parameters
    ----------
    objective : str or gbrank objective, default "ranknet"
        A registry name (``"ranknet"``, ``"lambdarank"``, ``"lambdarank:err"``, …), a
        gbrank ranking objective instance (cloned at fit), or ``"native:<name>"`` for
        the booster's own objective (``"native:lambdarank"`` for LightGBM,
        ``"native:rank:pairwise"`` for XGBoost).
    booster : {"lightgbm", "xgboost"}, default "lightgbm"
    n_estimators : int, default 100
        Boosting rounds (the most; early stopping may use fewer).
    learning_rate : float, default 0.1
        Shrinkage η of round 0.
    learning_rate_decay : float in (0, 1], optional
        Round ``i`` uses :math:`\eta \cdot \text{decay}^i` (the article's
        ``0.2 * 0.99 ** i``); ``None`` keeps η constant.
    early_stopping_rounds : int, optional
        Stop when the ``scoring`` metric on the validation split has not improved for
        this many rounds; ``predict`` then uses the best round. ``None``: no early
        stopping and no validation split.
    validation_fraction : float in (0, 1), default 0.1
        Share held out for early stopping: of the rows when group-less, of the whole
        queries when grouped; drawn from ``random_state``.
    scoring : str, default "pair_accuracy"
        gbrank metric name (``"ndcg@10"``, ``"err@5"``, ``"map"``, …) used by ``score``
        and early stopping.
    qid_col : str, int or None, default "qid"
        The column of ``X`` holding query ids: a DataFrame column name, or a column
        index (arrays and DataFrames). The default ``"qid"`` is used when ``X`` is a
        DataFrame with that column and ignored otherwise; any other value must name a
        column of ``X``. ``None``: ``X`` has no query-id column.
    random_state : int, RandomState or None
        Seeds the validation split and the booster.
    num_leaves, max_depth : int, optional
        Tree size (LightGBM ``num_leaves``/``max_depth``; XGBoost ``max_leaves``/
        ``max_depth``). ``None``: the booster's default.
    min_child_samples : int, optional
        LightGBM's ``min_data_in_leaf`` (no XGBoost counterpart: an error there).
    subsample, colsample_bytree : float in (0, 1], optional
        Row subsampling per round and feature subsampling per tree.
    reg_lambda : float, optional
        L2 regularisation of leaf values.
    n_jobs : int, optional
        Booster threads. ``None`` means 1 (scikit-learn's convention, not the
        boosters' all-cores default); ``-1`` all cores, ``-2`` all but one, ….
    booster_params : dict, optional
        Anything else, passed to the booster as is (``monotone_constraints``,
        ``max_bin``, ``max_cat_to_onehot``, …).

    Attributes
    ----------
    booster_ : lightgbm.Booster or xgboost.Booster
    objective_ : gbrank objective or str
        The objective trained with (a clone of ``objective``).
    evals_result_ : dict
        Validation curve per round, ``{"valid": {metric: [...]}}`` (empty without a
        validation split).
    best_iteration_ : int
        Rounds ``predict`` uses.
    init_score_ : float
        Constant added to the booster's raw scores: 0 for a ranking loss, the
        objective's constant start for a calibrated one.
    n_features_in_, feature_names_in_ : as in scikit-learn.
    feature_importances_ : ndarray
        Normalised total gain per column of ``X`` (0 for the query-id column).

    Notes
    -----
    Sample weights are query weights: per row, constant within each query (for
    group-less data: all equal), as gbrank's ranking objectives define them.

    ``save_model(path)`` writes a model whose own prediction is ``predict``'s score
    (objective ``lambdarank`` for LightGBM; ``rank:ndcg``, ``rank:map`` or
    ``rank:pairwise`` for XGBoost). Its features are the columns of ``X`` without the
    query-id column (``qid_col``), in the same order.

    Examples
    --------
    >>> import pandas as pd
    >>> from sklearn.model_selection import GroupKFold, cross_val_score
    >>> from gbrank.datasets import make_ranking
    >>> from gbrank.sklearn import GBRanker, make_scorer
    >>> X, y, group = make_ranking(n_queries=60, rows_per_query=20, n_features=5)
    >>> df = pd.DataFrame(X, columns=[f"f{i}" for i in range(5)])
    >>> df["qid"] = np.repeat(np.arange(60), 20)
    >>> scores = cross_val_score(GBRanker("lambdarank", n_estimators=20), df, y,
    ...                          groups=df["qid"], cv=GroupKFold(3),
    ...                          scoring=make_scorer("ndcg@10"))
    >>> scores.shape
    (3,)
    """

    _task = "ranking"

    def __init__(self, objective: Any = "ranknet", booster: str = "lightgbm",
                 n_estimators: int = 100, learning_rate: float = 0.1,
                 learning_rate_decay: float | None = None,
                 early_stopping_rounds: int | None = None,
                 validation_fraction: float | None = 0.1, scoring: str = "pair_accuracy",
                 qid_col: str | int | None = "qid",
                 random_state: Any = None, num_leaves: int | None = None,
                 max_depth: int | None = None, min_child_samples: int | None = None,
                 subsample: float | None = None, colsample_bytree: float | None = None,
                 reg_lambda: float | None = None, n_jobs: int | None = None,
                 booster_params: dict[str, Any] | None = None) -> None:
        self.objective = objective
        self.booster = booster
        self.n_estimators = n_estimators
        self.learning_rate = learning_rate
        self.learning_rate_decay = learning_rate_decay
        self.early_stopping_rounds = early_stopping_rounds
        self.validation_fraction = validation_fraction
        self.scoring = scoring
        self.qid_col = qid_col
        self.random_state = random_state
        self.num_leaves = num_leaves
        self.max_depth = max_depth
        self.min_child_samples = min_child_samples
        self.subsample = subsample
        self.colsample_bytree = colsample_bytree
        self.reg_lambda = reg_lambda
        self.n_jobs = n_jobs
        self.booster_params = booster_params

    def _qid_column(self, X: Any) -> int | None:
        """Position of the query-id column in ``X``, or ``None`` (see ``qid_col``)."""
        col = self.qid_col
        if col is None:
            return None
        if isinstance(col, (int, np.integer)) and not isinstance(col, bool):
            width = X.shape[1]
            if not -width <= col < width:
                raise ValueError(f"qid_col={col!r} is not a column index of X, which has "
                                 f"{width} columns")
            return int(col) % width
        if not isinstance(col, str):
            raise ValueError(f"qid_col must be a column name (str), a column index (int) or "
                             f"None, got {col!r}")
        if _is_frame(X):
            names = [str(c) for c in X.columns]
            if col in names:
                return names.index(col)
        if col != "qid":
            where = (f"columns: {', '.join(map(str, X.columns[:12]))}" if _is_frame(X)
                     else "X is not a DataFrame; name the column by its index")
            raise ValueError(f"qid_col={col!r} is not a column of X ({where})")
        return None

    def _features(self, X: Any) -> tuple[Any, np.ndarray | None]:
        """``X`` without its query-id column, and that column (``None`` if it has none)."""
        at = self._qid_column(X)
        if at is None:
            return X, None
        if _is_frame(X):
            return X.drop(columns=X.columns[at]), X.iloc[:, at].to_numpy()
        keep = np.delete(np.arange(X.shape[1]), at)
        ids = X[:, [at]]
        ids = np.asarray(ids.todense() if hasattr(ids, "todense") else ids).ravel()
        return X[:, keep], ids

    def _query_ids(self, X: Any, qid: Any) -> tuple[Any, Any]:
        """Features and query ids from ``X``'s column or the ``qid`` argument (not both,
        unless they agree)."""
        X, in_X = self._features(X)
        if in_X is None:
            return X, qid
        if qid is not None and not np.array_equal(np.asarray(qid).ravel(), in_X):
            raise ValueError(
                f"query ids given twice, as the qid argument and as column {self.qid_col!r} "
                "of X, and they differ; pass one of them (qid_col=None ignores the column)")
        return X, in_X

    def fit(self, X: Any, y: Any, *, qid: Any = None, sample_weight: Any = None) -> GBRanker:
        """Fit on features ``X`` and grades ``y`` (non-negative; integers for NDCG/ERR
        gains), grouped by the query-id column of ``X`` (``qid_col``) or by per-row
        ``qid`` (any order), or group-less when there is neither.

        Returns
        -------
        self
        """
        if y is None:
            raise ValueError("GBRanker requires y to be passed, but the target y is None")
        p = self._check_params()
        metric = _ValidMetric(self.scoring, None)  # validates the name before training
        obj = _resolve_objective(self.objective, "ranking", "GBRanker")
        X = self._validate_X(X, reset=True)
        self._qid_at = self._qid_column(X)
        X, qid = self._query_ids(X, qid)
        n = X.shape[0]
        y = as_float_array(y, "y")
        if y.size != n:
            raise ValueError(f"y has {y.size} entries but X has {n} rows")
        check_finite(y, "y")
        check_grades(y, integer=False, max_grade=None, name="y")
        w = check_row_weights(sample_weight, n, "sample_weight")
        # qid in any order (ids of any sortable type): grouped by the one query rule.
        queries = query_structure(n, qid=qid, weight=w)
        order = np.arange(n) if queries.order is None else queries.order
        rng = check_random_state(self.random_state)
        seed = int(rng.randint(np.iinfo(np.int32).max))
        tr, va = self._split(n, queries.offsets, p["validation_fraction"],
                             p["early_stopping_rounds"] is not None, rng)
        sizes = np.diff(queries.offsets)

        def part(idx: np.ndarray) -> tuple[Any, np.ndarray, np.ndarray, Any]:
            rows = order[idx]
            # Queries stay contiguous: idx is increasing within the query order.
            qs = np.repeat(np.arange(sizes.size), sizes)[idx]
            part_sizes = np.bincount(qs, minlength=sizes.size)
            return (_safe_indexing(X, rows), y[rows], part_sizes[part_sizes > 0],
                    None if w is None else w[rows])

        Xt, yt, gt, wt = part(tr)
        Xv = yv = gv = wv = None
        if va is not None:
            Xv, yv, gv, wv = part(va)
        self.objective_ = obj
        # A ranking loss ignores a constant; a calibrated one starts from the logit of
        # the mean target, as a binary objective does.
        self.init_score_ = 0.0 if isinstance(obj, str) else float(obj.init_score(yt, wt))
        self._train(p, obj, Xt, yt, gt, wt, self.init_score_, Xv, yv, gv, wv, metric, seed)
        return self

    def predict(self, X: Any) -> np.ndarray:
        """Ranking scores (raw booster output plus ``init_score_``; higher = ranked
        higher), one per row."""
        return self._margins(X)

    def _has_probabilities(self) -> bool:
        """``predict_proba`` exists only for a calibrated objective (see there)."""
        obj = self.objective
        try:
            calibrated = not isinstance(obj, str) and bool(getattr(obj, "probability", False))
        except ValueError:  # a bad parameter: fit names it
            calibrated = False
        if not calibrated:
            raise AttributeError(
                f"predict_proba needs a calibrated ranking objective; {obj!r} orders rows "
                "within a query but leaves the scale of its scores free. Use e.g. "
                "GBRanker(objective=LambdaRank(calibration=0.1))")
        return True

    @available_if(_has_probabilities)
    def predict_proba(self, X: Any) -> np.ndarray:
        r"""Probability of relevance per row, :math:`\sigma(\text{score})`, for a calibrated
        objective (``RankNet(calibration=α)``, ``LambdaRank(calibration=α)`` with α > 0,
        or a :class:`~gbrank.objectives.Combination` with a calibration term); a ranking
        loss alone leaves the scores' offset and scale free, so the method does not
        exist there (``AttributeError`` naming the fix).

        Returns
        -------
        ndarray of shape (n_samples,)
            The probability that each row is relevant (clicked, or its target as
            ``calibration_target`` maps grades), comparable across queries.
        """
        return _sigmoid(self._margins(X))

    def score(self, X: Any, y: Any, *, qid: Any = None) -> float:
        """The ``scoring`` metric of ``predict(X)`` against grades ``y``, per query of
        ``X``'s query-id column or of ``qid`` (group-less without either)."""
        s = self.predict(X)
        qid = self._query_ids(self._validate_X(X, reset=False), qid)[1]
        m = get_metric(self.scoring)
        if m.kind == "ranking":
            return float(m.func(y, s, qid=qid, **m.params))
        return float(m(y, s))


# --- GBClassifier ----------------------------------------------------------------------


class GBClassifier(ClassifierMixin, _GBBase):
    r"""Imbalanced binary classification with a gbrank objective (focal loss, the F_β
    surrogate), as a scikit-learn classifier.

    The booster starts from the objective's loss-optimal constant
    (``init_score_ = objective.init_score(y)``), which is added back at prediction,
    so ``predict_proba`` is :math:`\sigma(z)` of the full margin :math:`z` — calibrated
    as far as the loss allows (focal loss with γ > 0 is not a proper scoring rule).
    ``predict`` thresholds it: ``threshold="auto"`` picks the F_β-best cut (threshold
    moving); a number is a probability threshold.

    How ``threshold="auto"`` is chosen: a model is trained on the rows outside a
    stratified validation split (``validation_fraction`` of each class's rows), and the
    threshold maximising F_β of its predictions on the split is taken. Without early
    stopping, the final model is then trained again on every row (same rounds and seed)
    and keeps that threshold, so no row is lost to the choice; with early stopping the
    split also chooses the number of rounds and the final model is the one trained
    without it. With ``validation_fraction=None`` the threshold is chosen on the
    training predictions.

    Parameters
    ----------
    objective : str or gbrank objective, default "focal"
        ``"focal"``, ``"fbeta_surrogate"``, a binary gbrank objective instance, or
        ``"native:<name>"`` (``"native:binary"`` for LightGBM, ``"native:binary:logistic"``
        for XGBoost; margins are then the booster's raw scores).
    threshold : "auto" or float in (0, 1), default "auto"
        Probability above which ``predict`` says the positive class. ``"auto"``: the
        threshold maximising F_β (``beta``) on held-out predictions (see above).
    beta : float, default 1.0
        β of the F_β that ``threshold="auto"`` maximises.
    pos_label : label, optional
        The positive class: the one the objective's ``alpha``, F_β and the threshold
        are about, and ``predict_proba``'s column for it is :math:`\sigma(z)`.
        ``None``: for numeric or boolean labels the larger (1 of {0, 1}, +1 of
        {−1, +1}, True), as scikit-learn's metrics assume; for other labels (strings)
        the rarer class in ``y`` (by summed ``sample_weight``; ``classes_[1]`` on a
        tie), the one an imbalanced classifier looks for. Pass it to be explicit.
    booster, n_estimators, learning_rate, learning_rate_decay, early_stopping_rounds, \
validation_fraction, random_state, num_leaves, max_depth, min_child_samples, subsample, \
colsample_bytree, reg_lambda, n_jobs, booster_params
        As in :class:`GBRanker`; early stopping watches the objective's loss on the
        validation split. The split (``validation_fraction`` of each class's rows,
        drawn from ``random_state``) is made when early stopping is on or
        ``threshold="auto"``.

    Attributes
    ----------
    classes_ : ndarray of shape (2,)
        The two labels (any type), sorted; ``predict_proba``'s columns follow it.
    pos_label_ : label
        The positive class (``pos_label`` or its default).
    threshold_ : float
        Probability threshold ``predict`` uses.
    init_score_ : float
        The objective's constant start, added to the booster's raw margins.
    booster_, objective_, evals_result_, best_iteration_, n_features_in_, \
feature_names_in_, feature_importances_
        As in :class:`GBRanker`.

    Notes
    -----
    ``save_model(path)`` writes a model whose own prediction is ``predict_proba``'s
    probability of ``pos_label_`` (:math:`\sigma(z)`, the start ``init_score_``
    included; objective ``binary sigmoid:1`` for LightGBM, ``binary:logistic`` for
    XGBoost), whichever column of ``classes_`` that is. The decision
    ``predict`` makes — ``pos_label_`` where that probability exceeds
    ``threshold_`` — is not part of a booster's model: apply ``threshold_`` where the
    model is served. LightGBM's file has no place for it; XGBoost's carries it as the
    attributes ``gbrank_threshold`` and ``gbrank_pos_label`` (JSON text), read with
    ``Booster.attr``.
    """

    _task = "binary"

    def __init__(self, objective: Any = "focal", booster: str = "lightgbm",
                 n_estimators: int = 100, learning_rate: float = 0.1,
                 learning_rate_decay: float | None = None,
                 early_stopping_rounds: int | None = None,
                 validation_fraction: float | None = 0.1, threshold: Any = "auto",
                 beta: float = 1.0, pos_label: Any = None, random_state: Any = None,
                 num_leaves: int | None = None,
                 max_depth: int | None = None, min_child_samples: int | None = None,
                 subsample: float | None = None, colsample_bytree: float | None = None,
                 reg_lambda: float | None = None, n_jobs: int | None = None,
                 booster_params: dict[str, Any] | None = None) -> None:
        self.objective = objective
        self.booster = booster
        self.n_estimators = n_estimators
        self.learning_rate = learning_rate
        self.learning_rate_decay = learning_rate_decay
        self.early_stopping_rounds = early_stopping_rounds
        self.validation_fraction = validation_fraction
        self.threshold = threshold
        self.beta = beta
        self.pos_label = pos_label
        self.random_state = random_state
        self.num_leaves = num_leaves
        self.max_depth = max_depth
        self.min_child_samples = min_child_samples
        self.subsample = subsample
        self.colsample_bytree = colsample_bytree
        self.reg_lambda = reg_lambda
        self.n_jobs = n_jobs
        self.booster_params = booster_params

    def _check_threshold_param(self) -> float | None:
        if isinstance(self.threshold, str):
            check_choice(self.threshold, "threshold", ("auto",))
            return None
        try:
            return check_number(self.threshold, "threshold", 0.0, 1.0, low_open=True,
                                high_open=True)
        except ValueError:
            raise ValueError(f"threshold must be 'auto' or a probability in (0, 1), got "
                             f"{self.threshold!r}") from None

    def fit(self, X: Any, y: Any, *, sample_weight: Any = None) -> GBClassifier:
        """Fit on features ``X`` and two-class labels ``y`` (any two values).

        Returns
        -------
        self
        """
        if y is None:
            raise ValueError("GBClassifier requires y to be passed, but the target y is None")
        p = self._check_params()
        fixed = self._check_threshold_param()
        beta = check_number(self.beta, "beta", 0.0, low_open=True)
        obj = _resolve_objective(self.objective, "binary", "GBClassifier")
        X = self._validate_X(X, reset=True)
        n = X.shape[0]
        y = column_or_1d(y.to_numpy() if hasattr(y, "to_numpy") else y, warn=True)
        if y.size != n:
            raise ValueError(f"y has {y.size} entries but X has {n} rows")
        if y.dtype.kind == "f":
            check_finite(y, "y")
        check_classification_targets(y)
        w = check_row_weights(sample_weight, n, "sample_weight")
        classes = np.unique(y if w is None else y[w > 0])
        if classes.size != 2:
            raise ValueError(
                f"Only binary classification is supported: GBClassifier needs exactly two "
                f"classes in y{' (with positive weight)' if w is not None else ''}; got "
                f"{classes.size} class{'es' if classes.size != 1 else ''}: "
                f"{classes[:5].tolist()}")
        self.classes_ = classes
        self.pos_label_ = self._positive_class(y, classes, w)
        y01 = (y == self.pos_label_).astype(np.float64)
        rng = check_random_state(self.random_state)
        seed = int(rng.randint(np.iinfo(np.int32).max))
        early = p["early_stopping_rounds"] is not None
        holdout = p["validation_fraction"] is not None and (early or fixed is None)
        tr, va = np.arange(n), None
        if holdout:  # stratified: each class contributes its share of rows
            held = []
            by_class = [rng.permutation(np.flatnonzero(y01 == c)) for c in (0.0, 1.0)]
            for idx in by_class:
                k = min(int(round(p["validation_fraction"] * idx.size)), idx.size - 1)
                held.append(idx[:max(k, 0)])
            va = np.sort(np.concatenate(held))
            big = max(by_class, key=len)
            if va.size == 0 and big.size >= 2:  # tiny data: one row of the larger class
                va = big[:1]
            if va.size == 0:
                raise ValueError(
                    f"validation_fraction={self.validation_fraction!r} of {n} rows leaves an "
                    "empty validation part; use more rows or validation_fraction=None")
            tr = np.setdiff1d(np.arange(n), va)
        init = 0.0
        if not isinstance(obj, str):
            wt = None if w is None else w[tr]
            init = float(obj.init_score(y01[tr], wt))
        Xt, yt, wt = _safe_indexing(X, tr), y01[tr], None if w is None else w[tr]
        Xv = yv = wv = None
        if va is not None:
            Xv, yv, wv = _safe_indexing(X, va), y01[va], None if w is None else w[va]
        metric = _ValidMetric(None, obj if not isinstance(obj, str) else _LogLoss())
        self.objective_ = obj
        self.init_score_ = init
        self._train(p, obj, Xt, yt, None, wt, init, Xv, yv, None, wv, metric, seed)
        if fixed is not None:
            self._margin_threshold = float(np.log(fixed) - np.log1p(-fixed))
        else:
            from gbrank.metrics import best_threshold

            Xs, ys, ws = (Xv, yv, wv) if va is not None else (Xt, yt, wt)
            z = self._raw(Xs) + init
            self._margin_threshold = best_threshold(ys, z, beta, weight=ws)[0]
        if holdout and not early:
            # The split served only to choose the threshold: the final model learns from
            # every row, with the same rounds and seed (the threshold, a probability,
            # carries over). Its validation curve is the one recorded above.
            curve = self.evals_result_
            self.init_score_ = 0.0 if isinstance(obj, str) else float(obj.init_score(y01, w))
            self._train(p, obj, X, y01, None, w, self.init_score_, None, None, None, None,
                        metric, seed)
            self.evals_result_ = curve
        self.threshold_ = float(_sigmoid(np.array([self._margin_threshold]))[0])
        return self

    def _positive_class(self, y: np.ndarray, classes: np.ndarray, w: Any) -> Any:
        """``pos_label``, checked; by default the larger of numeric or boolean labels, the
        rarer (by summed weight) of other labels."""
        if self.pos_label is not None:
            for c in classes:
                if c == self.pos_label:
                    return c
            raise ValueError(f"pos_label={self.pos_label!r} is not one of the classes in y: "
                             f"{classes.tolist()}")
        if classes.dtype.kind in "biuf":
            return classes[1]
        mass = [float(np.sum(y == c)) if w is None else float(np.sum(w[y == c]))
                for c in classes]
        return classes[0] if mass[0] < mass[1] else classes[1]

    def _export_attributes(self) -> dict[str, str]:
        import json

        label = self.pos_label_.item() if isinstance(self.pos_label_, np.generic) \
            else self.pos_label_
        try:
            label = json.dumps(label)
        except TypeError:
            label = json.dumps(str(label))
        return {"gbrank_threshold": repr(float(self.threshold_)), "gbrank_pos_label": label}

    def decision_function(self, X: Any) -> np.ndarray:
        """The positive class's margin minus the threshold's margin, signed as
        scikit-learn expects: positive exactly where ``predict`` says ``classes_[1]``."""
        d = self._margins(X) - self._margin_threshold
        return d if self.pos_label_ == self.classes_[1] else -d

    def predict_proba(self, X: Any) -> np.ndarray:
        """Probabilities of ``classes_`` per row: :math:`p = \\sigma(z)` for
        ``pos_label_`` (margin including ``init_score_``), :math:`1 - p` for the other."""
        p = _sigmoid(self._margins(X))
        if self.pos_label_ == self.classes_[1]:
            return np.column_stack([1.0 - p, p])
        return np.column_stack([p, 1.0 - p])

    def predict(self, X: Any) -> np.ndarray:
        """``pos_label_`` where the margin exceeds the threshold, else the other class."""
        d = self.decision_function(X)  # raises NotFittedError first
        return self.classes_[(d > 0).astype(np.intp)]

    def __sklearn_tags__(self) -> Any:
        tags = super().__sklearn_tags__()
        tags.classifier_tags.multi_class = False
        return tags


class _LogLoss:
    """Validation loss for native binary objectives (raw margins): the logistic loss."""

    def loss(self, y: Any, s: Any, weight: Any = None) -> float:
        from gbrank.objectives import FocalLoss

        return FocalLoss(gamma=0.0).loss(y, s, weight=weight)


# --- scorers ----------------------------------------------------------------------------


class _MetricScore:
    """Score function for :func:`sklearn.metrics.make_scorer` (module-level: picklable,
    so scorers work with ``n_jobs``)."""

    def __init__(self, name: str) -> None:
        self.name = name
        self.__name__ = name  # scikit-learn's scorer repr reads it

    def __call__(self, y_true: Any, y_score: Any, qid: Any = None,
                 sample_weight: Any = None) -> float:
        m = get_metric(self.name)
        if m.kind == "ranking":
            return float(m.func(y_true, y_score, qid=qid, weight=sample_weight, **m.params))
        return float(m(y_true, y_score, None, sample_weight))

    def __repr__(self) -> str:
        return f"gbrank:{self.name}"


def _qid_from_X(estimator: Any, X: Any) -> Any:
    """Query ids carried by ``X`` for the ranker that scores it: the column a
    :class:`GBRanker` names by ``qid_col`` (for a ``Pipeline``, in the data its last
    step receives), or a DataFrame column ``"qid"`` (XGBoost's convention); ``None`` if
    there is none."""
    if hasattr(estimator, "steps") and len(estimator.steps) > 1:
        final = estimator.steps[-1][1]
        if isinstance(final, GBRanker):
            X = estimator[:-1].transform(X)
        estimator = final
    if isinstance(estimator, GBRanker):
        return estimator._features(X)[1]
    if _is_frame(X) and "qid" in X.columns:
        return X["qid"].to_numpy()
    return None


class _RankingScorer(_SklearnScorer):
    """scikit-learn scorer of a ranking metric that reads query ids from ``X`` when none
    are routed to it, so grouped scoring needs no metadata routing."""

    def _score(self, method_caller: Any, estimator: Any, X: Any, y_true: Any,
               **kwargs: Any) -> float:
        if kwargs.get("qid") is None:
            qid = _qid_from_X(estimator, X)
            if qid is not None:
                kwargs["qid"] = qid
        return super()._score(method_caller, estimator, X, y_true, **kwargs)


def make_scorer(name: str) -> Any:
    """A scikit-learn scorer computing a gbrank metric by registry name.

    Ranking metrics (``"ndcg@10"``, ``"err@5"``, ``"pair_accuracy"``, …) score
    ``estimator.predict(X)`` per query. The query ids come from ``X`` itself — the
    column a :class:`GBRanker` names by ``qid_col`` (at the end of a ``Pipeline``: in
    the data that step receives), or a DataFrame column ``"qid"`` for other rankers,
    as XGBoost's ``XGBRanker`` reads it — so ``cross_val_score`` and ``GridSearchCV``
    score whole queries without metadata routing. With routing enabled
    (``sklearn.set_config(enable_metadata_routing=True)`` before calling this) the
    scorer also requests ``qid``, and routed ids take precedence. With neither, all
    rows are one query.

    Binary metrics (``"f1"``, ``"fbeta:2"``, ``"balanced"``) judge
    ``decision_function(X) > 0`` when the estimator has one (:class:`GBClassifier`:
    exactly its ``predict``), else ``predict(X) > 0`` (raw margins, e.g. LightGBM's
    ``LGBMClassifier`` with a custom objective); labels must be {0, 1} or {−1, +1}.

    Parameters
    ----------
    name : str
        A gbrank metric name (:func:`gbrank.get_metric`).

    Returns
    -------
    scorer
        For ``cross_val_score(scoring=...)``, ``GridSearchCV(scoring=...)``, …

    Examples
    --------
    >>> from gbrank.sklearn import make_scorer
    >>> make_scorer("ndcg@10")
    make_scorer(ndcg@10, response_method='predict')
    """
    import sklearn
    from sklearn.metrics import make_scorer as _make_scorer

    metric = get_metric(name)
    response = "predict" if metric.kind != "binary" else ("decision_function", "predict")
    scorer = _make_scorer(_MetricScore(metric.name), response_method=response,
                          greater_is_better=metric.higher_is_better)
    if metric.kind == "ranking":
        ranking = _RankingScorer.__new__(_RankingScorer)
        ranking.__dict__.update(scorer.__dict__)
        scorer = ranking
        if sklearn.get_config().get("enable_metadata_routing"):
            scorer = scorer.set_score_request(qid=True)
    return scorer


# --- XGBoost's ranker accepting gbrank objectives (moved from gbrank.xgboost) -----------


_XGB_RANKER: Any = None


def _xgb_ranker_class() -> type:
    """``xgboost.XGBRanker`` subclass accepting gbrank objectives, built on first use (it
    subclasses XGBoost's class, so defining it imports XGBoost)."""
    global _XGB_RANKER
    if _XGB_RANKER is not None:
        return _XGB_RANKER
    _xgb = require("xgboost")

    from gbrank.xgboost import objective as _xgb_objective

    class XGBRanker(_xgb.XGBRanker):
        """``xgboost.XGBRanker`` that also accepts a gbrank objective.

        XGBoost's own ``XGBRanker`` refuses callable objectives ("custom objective
        function not supported by XGBRanker"). This subclass takes a gbrank objective
        (``XGBRanker(objective=LambdaRank(metric="err"), n_estimators=100)``) and trains
        it with ``xgb.train(params, dtrain, obj=gbrank.xgboost.objective(obj))``; string
        objectives (``"rank:ndcg"``, ...) go to XGBoost's ``fit`` unchanged.

        With a gbrank objective, ``fit`` builds the ``DMatrix`` from ``X, y`` and
        ``group`` (query sizes) or ``qid`` (per-row ids; rows of a query must be
        contiguous, as XGBoost requires), ``sample_weight`` (one weight per query, as in
        XGBoost), and the same for ``eval_set`` / ``eval_group`` / ``eval_qid`` /
        ``sample_weight_eval_set``. ``eval_metric`` may be an XGBoost metric name, a list
        of them, or :func:`gbrank.xgboost.metric` (called as ``f(preds, dmatrix)``).
        ``base_score`` defaults to 0 (gbrank ranking objectives start at 0, as LightGBM
        does). The booster's ``objective`` parameter is set to ``"rank:pairwise"`` only
        so that XGBoost treats the model as a ranker (raw-margin predictions); the
        gradients come from the gbrank objective. ``predict`` returns raw margins.
        For group-less data, grouping in any row order and scikit-learn's model
        selection, prefer :class:`GBRanker` with ``booster="xgboost"``.
        """

        def __init__(self, *, objective: Any = "rank:ndcg", **kwargs: Any) -> None:
            custom = hasattr(objective, "grad_hess")
            super().__init__(objective="rank:pairwise" if custom else objective, **kwargs)
            self.objective = objective

        def get_xgb_params(self) -> dict[str, Any]:
            # scikit-learn's deep get_params expands the objective's own parameters
            # ("objective__sigma", ...); they are not booster parameters.
            params = super().get_xgb_params()
            return {k: v for k, v in params.items() if not k.startswith("objective__")}

        def fit(self, X: Any, y: Any, *, group: Any = None, qid: Any = None,
                sample_weight: Any = None, eval_set: Any = None, eval_group: Any = None,
                eval_qid: Any = None, sample_weight_eval_set: Any = None,
                verbose: Any = False, xgb_model: Any = None, **kwargs: Any) -> Any:
            """Fit; see the class docstring (other XGBoost ``fit`` arguments with a
            string objective only)."""
            obj = self.objective
            if not hasattr(obj, "grad_hess"):
                return super().fit(X, y, group=group, qid=qid, sample_weight=sample_weight,
                                   eval_set=eval_set, eval_group=eval_group,
                                   eval_qid=eval_qid,
                                   sample_weight_eval_set=sample_weight_eval_set,
                                   verbose=verbose, xgb_model=xgb_model, **kwargs)
            if kwargs:
                raise ValueError(f"XGBRanker.fit with a gbrank objective does not take "
                                 f"{sorted(kwargs)}")
            if group is None and qid is None:
                raise ValueError("Either `group` or `qid` is required for ranking task")

            def dmat(Xi: Any, yi: Any, gi: Any, qi: Any, wi: Any) -> Any:
                return _xgb.DMatrix(Xi, yi, group=gi, qid=qi, weight=wi,
                                    missing=self.missing,
                                    enable_categorical=self.enable_categorical,
                                    nthread=self.n_jobs, feature_types=self.feature_types)

            dtrain = dmat(X, y, group, qid, sample_weight)
            evals = []
            for i, (Xe, ye) in enumerate(eval_set or []):
                ge = None if eval_group is None else eval_group[i]
                qe = None if eval_qid is None else eval_qid[i]
                we = None if sample_weight_eval_set is None else sample_weight_eval_set[i]
                evals.append((dmat(Xe, ye, ge, qe, we), f"validation_{i}"))
            params = self.get_xgb_params()
            params["objective"] = "rank:pairwise"
            if params.get("base_score") is None:
                params["base_score"] = 0.0
            custom_metric = None
            em = params.pop("eval_metric", None)
            if callable(em):
                custom_metric = em
                params["disable_default_eval_metric"] = 1
            elif em is not None:
                params["eval_metric"] = em
            evals_result: dict = {}
            self._Booster = _xgb.train(
                params, dtrain, num_boost_round=self.get_num_boosting_rounds(),
                evals=evals, evals_result=evals_result, obj=_xgb_objective(obj),
                custom_metric=custom_metric, verbose_eval=verbose, xgb_model=xgb_model,
                early_stopping_rounds=self.early_stopping_rounds, callbacks=self.callbacks,
            )
            self._set_evaluation_result(evals_result)
            return self

    XGBRanker.__module__ = __name__
    XGBRanker.__qualname__ = "XGBRanker"
    _XGB_RANKER = XGBRanker
    return XGBRanker


def __getattr__(name: str) -> Any:
    if name == "XGBRanker":
        return _xgb_ranker_class()
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
