"""What GBRanker and GBClassifier share: parameters, data checks, the validation metric
and the training of the booster."""

from __future__ import annotations

from typing import Any

import numpy as np
from sklearn.base import BaseEstimator
from sklearn.utils.validation import check_is_fitted, validate_data

from gbrank._deps import require
from gbrank._fields import (
    dmatrix_fields,
    is_lightgbm_dataset,
    lightgbm_dataset_fields,
    per_row_weights,
)
from gbrank._queries import query_structure
from gbrank._train import Validation, start_rows, train
from gbrank._validation import check_choice, check_integer, check_number
from gbrank.metrics import get_metric
from gbrank.objectives import Objective, get_objective, objective_names
from gbrank.sklearn._booster_params import check_booster_params

_BOOSTERS = ("lightgbm", "xgboost")
_NATIVE_PREFIX = "native:"


# --- parameters shared by both estimators ------------------------------------------------


def _is_frame(X: Any) -> bool:
    return hasattr(X, "columns") and hasattr(X, "dtypes") and hasattr(X, "iloc")


def _resolve_objective(objective: Any, task: str, estimator: str) -> Objective | str:
    """A fresh objective object (registry name or a clone of the instance given), or the
    booster's own objective name for ``"native:<name>"``; checks the task."""
    from sklearn.base import clone

    if isinstance(objective, str):
        if objective.startswith(_NATIVE_PREFIX) and len(objective) > len(_NATIVE_PREFIX):
            return objective[len(_NATIVE_PREFIX):]
        try:
            obj = get_objective(objective)
        except ValueError as exc:
            raise ValueError(f"{exc}; the boosters' own objectives are named "
                             f"'native:<name>' ({estimator}('native:{objective}'))") from None
    elif isinstance(objective, Objective):
        obj = clone(objective)
        obj._params()  # validate now: a bad parameter fails at fit, named
    else:
        raise ValueError(
            f"objective must be a registry name ({', '.join(objective_names())}, "
            f"or native:<booster objective>) or a gbrank objective "
            f"instance, got {objective!r}"
        )
    if obj.task != task:
        raise ValueError(
            f"objective {objective!r} is a {obj.task} objective; {estimator} takes {task} "
            f"objectives ({', '.join(objective_names(task))}, or an instance of one)"
        )
    return obj


# Objectives of the boosters whose prediction is the estimator's: sigmoid of the raw
# score or the softmax of the K raw scores (GBClassifier.predict_proba), or the raw score
# itself (GBRanker.predict). LightGBM records a multiclass objective with its number of
# classes ("multiclass num_class:3"); the name is its first word.
_NATIVE_AS_ESTIMATOR = {
    ("lightgbm", "binary"): ("binary sigmoid:1", "cross_entropy"),
    ("lightgbm", "multiclass"): ("multiclass",),
    ("xgboost", "multiclass"): ("multi:softprob",),
    ("lightgbm", "ranking"): ("lambdarank", "rank_xendcg", "regression", "regression_l1",
                              "huber", "fair", "quantile", "mape"),
    ("xgboost", "binary"): ("binary:logistic", "reg:logistic"),
    ("xgboost", "ranking"): ("rank:ndcg", "rank:map", "rank:pairwise", "reg:squarederror",
                             "reg:absoluteerror", "reg:pseudohubererror",
                             "reg:quantileerror", "binary:logitraw"),
}


def _check_native_prediction(booster: str, model: Any, name: str, task: str) -> None:
    """Refuse to save a model trained with the booster's own objective ``name`` when the
    booster's prediction is not what the estimator predicts."""
    if booster == "lightgbm":
        header = model.model_to_string(num_iteration=1).split("Tree=")[0]
        line = next((x for x in header.splitlines() if x.startswith("objective=")), "")
        recorded = line[len("objective="):]
        if task == "multiclass":
            recorded = recorded.split(" ")[0]
    else:
        import json

        recorded = json.loads(model.save_config())["learner"]["objective"]["name"]
    valid = _NATIVE_AS_ESTIMATOR[(booster, task)]
    if recorded not in valid:
        what = {"binary": "the sigmoid of the raw score (predict_proba)",
                "multiclass": "the softmax of the raw scores (predict_proba)",
                "ranking": "the raw score (predict)"}[task]
        raise ValueError(
            f"objective='native:{name}' makes {booster} predict with its objective "
            f"{recorded!r}, not {what}; a saved model would predict something else. "
            f"Objectives whose prediction is {what}: {', '.join(valid)}")


def _has_start(init: Any) -> bool:
    """Whether training carries a start (``init_score`` / ``base_margin``): a constant
    start of 0 (a number, or 0 for every class) is left out."""
    return bool(np.any(np.asarray(init) != 0.0))


def _refuse_booster_data(X: Any, who: str) -> None:
    """A booster's data container (a LightGBM ``Dataset``, an XGBoost ``DMatrix``) is not
    ``X``: name what the estimator takes instead."""
    module = type(X).__module__.split(".")[0]
    if module in ("lightgbm", "xgboost"):
        raise ValueError(
            f"{who} takes X as an array, a sparse matrix or a DataFrame, with y (and "
            f"query ids for a ranker) as arguments, not a {module}.{type(X).__name__}: "
            "pass the data it was built from, or train it with the booster directly "
            "(lgb.train({'objective': obj}, dataset), xgb.train(..., "
            "obj=gbrank.xgboost.objective(obj)))")




def _is_sparse(X: Any) -> bool:
    return hasattr(X, "tocsr") and hasattr(X, "nnz")  # scipy.sparse, without importing it


def _refuse_infinite_columns(X: Any) -> None:
    """A DataFrame's numeric columns must be finite (NaN is missing), as an array's
    values are (scikit-learn's check, which DataFrames skip here to keep their types):
    XGBoost refuses infinity with a C++ error, LightGBM trains on it."""
    numeric = X.select_dtypes("number")
    if numeric.shape[1] == 0:
        return
    values = numeric.to_numpy(dtype=np.float64, na_value=np.nan)
    bad = np.isinf(values)
    if bad.any():
        col = numeric.columns[int(np.flatnonzero(bad.any(axis=0))[0])]
        raise ValueError(f"X contains infinity ({int(bad.sum())} values; first in column "
                         f"{col!r}): replace it by a finite value or NaN (missing)")

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
        check_booster_params(bp or {}, p["booster"], type(self).__name__,
                             p["early_stopping_rounds"] is not None,
                             hasattr(self, "scoring"))
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
            _refuse_infinite_columns(X)
        else:
            X = validate_data(self, X, reset=reset, accept_sparse=["csr", "csc"],
                              dtype=[np.float64, np.float32], ensure_all_finite="allow-nan")
        if reset:
            self._sparse_input_ = _is_sparse(X)
        elif self.booster == "xgboost":  # eval_set's X, or the X predicted
            self._check_xgboost_sparsity(X)
        return X

    def _check_xgboost_sparsity(self, X: Any) -> None:
        """XGBoost reads the entries a sparse matrix does not store as missing, not 0:
        refuse a sparse X for a model fitted on a dense one (or the other way round)
        when that changes what the booster reads."""
        fitted_sparse = getattr(self, "_sparse_input_", None)
        if fitted_sparse is None or _is_sparse(X) == fitted_sparse:
            return
        if fitted_sparse:
            values = (X.select_dtypes("number").to_numpy(dtype=np.float64, na_value=np.nan)
                      if _is_frame(X) else np.asarray(X, dtype=np.float64))
            zeros = int(np.count_nonzero(values == 0.0))
            if zeros:
                raise ValueError(
                    f"fit's X is a sparse matrix, whose unstored entries XGBoost reads as "
                    f"missing, and this X (eval_set's or predict's) is dense with {zeros} "
                    "zeros, which it reads as 0: the model would be judged or used on "
                    "another reading of the same values. Pass the kind of matrix fit was "
                    "given (scipy.sparse.csr_matrix(X))")
            return
        unstored = X.shape[0] * X.shape[1] - X.nnz
        if unstored:
            raise ValueError(
                f"fit's X is dense, and this X (eval_set's or predict's) is a sparse "
                f"matrix with {unstored} unstored entries, which XGBoost reads as "
                "missing, not 0 (LightGBM reads them as 0): the model would be judged or "
                "used on another reading of the same values. Pass X.toarray(), the kind "
                "of matrix fit was given")

    def _split(self, n_rows: int, offsets: np.ndarray, frac: float | None, holdout: bool,
               rng: np.random.RandomState, blocks: np.ndarray | None = None,
               ) -> tuple[np.ndarray, np.ndarray | None]:
        """Row indices (in query order) of the training and validation parts: whole
        queries when grouped (whole ``blocks`` of queries when given: a click log's
        sessions showing the same documents), rows when group-less (one query)."""
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
        if blocks is not None:
            from gbrank._sessions import held_out_blocks

            largest = int(np.bincount(blocks).max())
            if largest > nq // 2:
                raise ValueError(
                    f"{largest} of the {nq} sessions share documents (identical feature "
                    "rows), so no validation split keeps them apart from the training "
                    "part; pass eval_set= (with eval_qid) of other queries, or "
                    "early_stopping_rounds=None")
            held = held_out_blocks(blocks, frac, rng)
        else:
            held = np.zeros(nq, dtype=bool)
            held[rng.permutation(nq)[:n_val]] = True
        row_held = np.repeat(held, np.diff(offsets))
        return np.flatnonzero(~row_held), np.flatnonzero(row_held)

    # -- training -------------------------------------------------------------------------
    def _train(self, p: dict[str, Any], obj: Objective | str, X: Any, y: np.ndarray,
               sizes: np.ndarray | None, w: np.ndarray | None, init: Any,
               Xv: Any, yv: Any, sizes_v: Any, wv: Any, metric: Any, seed: int,
               num_class: int | None = None, position: np.ndarray | None = None) -> None:
        """Train ``self.booster_`` through the one training loop (:mod:`gbrank._train`);
        set ``evals_result_`` and ``best_iteration_``. ``init``: the constant start, a
        number or one per class (``num_class`` trees per round). ``position``: the
        training rows' display positions (an objective with ``position_bias``)."""
        lr, decay = p["learning_rate"], p["decay"]
        extra = dict(self.booster_params or {})
        if num_class is not None:
            extra["num_class"] = num_class
        started = _has_start(init)
        if p["booster"] == "lightgbm":
            lgb = require("lightgbm")
            forest = [k for k in ("boosting", "boosting_type", "boost")
                      if str(extra.get(k, "")).lower() in ("rf", "random_forest")]
            if forest and started:
                raise ValueError(
                    f"booster_params {forest[0]}='rf': LightGBM's random forest takes no "
                    f"start score (init_score), and {type(self).__name__} starts this "
                    "objective from its loss-optimal constant. Use boosting 'gbdt' (with "
                    "subsample= and colsample_bytree= for randomness), or XGBoost's "
                    "forests: booster='xgboost', booster_params={'num_parallel_tree': ...}")

            # feature_pre_filter=False: LightGBM otherwise drops every feature a leaf
            # of min_data_in_leaf rows cannot split (small data, or a grid search over
            # min_child_samples), and with a custom objective and no feature left it
            # aborts ("Check failed: num_features() > 0").
            params = {"learning_rate": lr, "verbosity": -1, "seed": seed,
                      "metric": "None", "feature_pre_filter": False,
                      **self._tree_params("lightgbm"), **extra}
            init_tr = start_rows(init, y.size) if started else None
            # LightGBM's own lambdarank reads the Dataset's positions; a gbrank objective
            # gets them as given through the training loop.
            with_position = ({"position": position}
                             if position is not None and isinstance(obj, str) else {})
            dtrain = lgb.Dataset(X, y, group=sizes, weight=w, init_score=init_tr,
                                 free_raw_data=True, **with_position)
            dvalid = None
            if Xv is not None:
                init_v = start_rows(init, len(yv)) if started else None
                dvalid = lgb.Dataset(Xv, yv, group=sizes_v, weight=wv, init_score=init_v,
                                     reference=dtrain)
        else:
            xgb = require("xgboost")

            params = {"eta": lr, "seed": seed, "verbosity": 0,
                      "disable_default_eval_metric": 1, **self._tree_params("xgboost"),
                      **extra}

            def dmat(Xi: Any, yi: Any, gi: Any, wi: Any) -> Any:
                if wi is not None and gi is not None:  # XGBoost: one weight per query
                    wi = query_structure(len(yi), group=gi, weight=wi).weights
                margin = start_rows(init, len(yi)) if started else None
                return xgb.DMatrix(Xi, yi, group=gi, weight=wi, base_margin=margin,
                                   enable_categorical=True, missing=np.nan,
                                   nthread=params.get("nthread"))

            dtrain = dmat(X, y, sizes, w)
            dvalid = None if Xv is None else dmat(Xv, yv, sizes_v, wv)
        trained = train(
            p["booster"], params, obj, dtrain, dvalid, rounds=p["n_estimators"],
            validation=None if dvalid is None else metric.validation(),
            early_stopping=p["early_stopping_rounds"] if dvalid is not None else None,
            learning_rates=None if decay is None else (lambda i: lr * decay ** i),
            position=position)
        self.booster_ = trained.model
        self.evals_result_ = trained.evals_result
        self.best_iteration_ = trained.best_iteration
        if trained.position_bias is not None:
            self.position_bias_ = trained.position_bias
        else:
            self.__dict__.pop("position_bias_", None)

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
        margin = (start_rows(np.zeros_like(self.init_score_), X.shape[0])
                  if _has_start(self.init_score_) else None)
        dm = xgb.DMatrix(X, enable_categorical=True, missing=np.nan, base_margin=margin,
                         **names)
        return np.asarray(self.booster_.predict(dm, output_margin=True,
                                                iteration_range=(0, self.best_iteration_)),
                          dtype=np.float64)

    def _margins(self, X: Any) -> np.ndarray:
        check_is_fitted(self, "booster_")
        return self._raw(self._booster_features(X)) + self.init_score_

    def _booster_features(self, X: Any) -> Any:
        """The booster's features of ``X``, checked against ``fit``'s."""
        return self._features(self._validate_X(X, reset=False))[0]

    def _features(self, X: Any) -> tuple[Any, np.ndarray | None]:
        """The booster's features of ``X`` and the query ids it carries (none here)."""
        return X, None

    # -- export -------------------------------------------------------------------------
    def _fitted_task(self) -> str:
        """The task of the fitted model ("ranking", "binary" or "multiclass")."""
        return self._task

    def _native_booster(self) -> Any:
        """The fitted model as a booster that predicts on its own (see ``save_model``)."""
        check_is_fitted(self, "booster_")
        obj, best = self.objective_, self.best_iteration_
        if isinstance(obj, str):  # the booster's own objective: its start is inside
            _check_native_prediction(self.booster, self.booster_, obj, self._fitted_task())
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
        start = self.init_score_ if _has_start(self.init_score_) else "base_score"
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
        >>> import tempfile
        >>> from pathlib import Path
        >>> import lightgbm as lgb
        >>> import numpy as np
        >>> from gbrank.datasets import make_imbalanced
        >>> from gbrank.sklearn import GBClassifier
        >>> X, y = make_imbalanced(n_rows=1000, positive_rate=0.1, seed=0)
        >>> clf = GBClassifier(n_estimators=10, random_state=0).fit(X, y)
        >>> with tempfile.TemporaryDirectory() as tmp:
        ...     path = str(Path(tmp) / "model.txt")
        ...     clf.save_model(path)
        ...     proba = lgb.Booster(model_file=path).predict(X)
        >>> bool(np.allclose(proba, clf.predict_proba(X)[:, 1], rtol=0, atol=1e-12))
        True
        """
        booster = self._native_booster()
        self._warn_about_export()
        if self.booster == "xgboost":
            booster.set_attr(**self._export_attributes())
        booster.save_model(str(path))

    def _warn_about_export(self) -> None:
        """Say what a reader of the saved file could take for something else."""

    def _export_attributes(self) -> dict[str, str]:
        """What an XGBoost model file carries beyond the model, as its attributes."""
        return {}

    @property
    def feature_importances_(self) -> np.ndarray:
        """Total gain of the splits on each feature, normalised to sum 1 (0s if none)."""
        check_is_fitted(self, "booster_")
        n = self.n_features_in_
        qid_at = getattr(self, "_qid_at", None)
        dropped = getattr(self, "_dropped_at", None)
        if dropped is None:
            dropped = () if qid_at is None else (qid_at,)
        n_booster = n - len(dropped)
        if self.booster == "lightgbm":
            gain = np.asarray(self.booster_.feature_importance("gain"), dtype=np.float64)
        else:
            names = self.booster_.feature_names or [f"f{i}" for i in range(n_booster)]
            score = self.booster_.get_score(importance_type="total_gain")
            gain = np.array([score.get(name, 0.0) for name in names], dtype=np.float64)
        for at in sorted(dropped):  # the query-id and position columns are no features
            gain = np.insert(gain, at, 0.0)
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
    metric by name (groups from the Dataset/DMatrix); binary, calibration and
    multiclass metrics read raw margins (the training loop maps a native objective's
    probabilities back to them). Click metrics (``ips_dcg@k``):
    also ``propensity``, bound here, and ``position``, the validation rows' logged
    positions in the order the validation data hold them (a DMatrix has no position
    field, so both boosters read them from here). Classification: the objective's own
    loss (lower is better)."""

    def __init__(self, scoring: str | None, objective: Any, *, propensity: Any = None,
                 position: np.ndarray | None = None, targets: Any = None) -> None:
        self.objective = objective
        self.position = position
        if scoring is None:
            self.name, self.higher_is_better, self.metric = "loss", False, None
        else:
            # targets: a calibrated objective's mapping of its training labels, so a
            # validation part whose grades happen to be 0/1 is judged as it learned.
            self.metric = get_metric(scoring).with_margin(True).with_targets(targets)
            if propensity is not None:
                self.metric = self.metric.with_propensity(propensity)
            self.name, self.higher_is_better = self.metric.name, self.metric.higher_is_better

    def _value(self, y: Any, s: Any, group: Any, weight: Any) -> float:
        if self.metric is not None and self.metric.kind == "ranking":
            return self.metric(y, s, group, weight)
        if self.metric is not None and self.metric.kind == "clicks":
            return self.metric(y, s, group, weight, position=self.position)
        weight = per_row_weights(weight, group, np.size(y))
        if self.metric is not None:
            return self.metric(y, s, None, weight)
        return float(self.objective.loss(y, s, weight=weight))

    def value(self, preds: Any, data: Any) -> float:
        """The metric of ``preds`` on a LightGBM ``Dataset`` or XGBoost ``DMatrix``."""
        y, w, g = (lightgbm_dataset_fields(data) if is_lightgbm_dataset(data)
                   else dmatrix_fields(data))
        return self._value(y, preds, g, w)

    def validation(self) -> Validation:
        """This metric as the training loop's :class:`~gbrank._train.Validation`."""
        return Validation(self.name, self.value, self.higher_is_better)


