"""XGBRanker: XGBoost's scikit-learn ranker, accepting gbrank objectives."""

from __future__ import annotations

from typing import Any

from gbrank._deps import require
from gbrank._fields import warn_ignored_xgboost_ranking_params

_XGB_RANKER: Any = None


def _qid_column(X: Any, qid: Any, where: str, group: Any = None) -> tuple[Any, Any]:
    """XGBoost's convention: a DataFrame's column ``"qid"`` holds the query ids (its
    ``predict`` drops it); taken out of the features, refused beside ``qid=`` or
    ``group=``."""
    columns = getattr(X, "columns", None)
    if columns is None or "qid" not in list(columns):
        return X, qid
    if qid is not None or group is not None:
        raise ValueError(f"{where} has a column 'qid' and its queries are passed too "
                         f"({'qid' if qid is not None else 'group'}=): give one of them "
                         "(XGBoost reads the column as the query ids)")
    return X.drop(columns="qid"), X["qid"].to_numpy()


def _check_sorted(qid: Any, name: str) -> None:
    import numpy as np

    if qid is None:
        return
    q = np.asarray(qid).ravel()
    if q.size > 1 and np.any(q[1:] < q[:-1]):
        raise ValueError(f"{name} is not sorted: XGBoost reads a query as a run of rows "
                         "with ascending ids. Sort the rows by id (order = "
                         "np.argsort(qid, kind='stable'), applied to X, y and qid), or use "
                         "gbrank.sklearn.GBRanker(booster='xgboost'), which sorts them")


def xgb_ranker_class() -> type:
    """``xgboost.XGBRanker`` subclass accepting gbrank objectives, built on first use (it
    subclasses XGBoost's class, so defining it imports XGBoost)."""
    global _XGB_RANKER
    if _XGB_RANKER is not None:
        return _XGB_RANKER
    _xgb = require("xgboost")

    from gbrank.xgboost._objective import objective as _xgb_objective

    class XGBRanker(_xgb.XGBRanker):
        """``xgboost.XGBRanker`` that also accepts a gbrank objective.

        XGBoost's own ``XGBRanker`` refuses callable objectives ("custom objective
        function not supported by XGBRanker"). This subclass takes a gbrank objective
        (``XGBRanker(objective=LambdaRank(metric="err"), n_estimators=100)``) and trains
        it with ``xgb.train(params, dtrain, obj=gbrank.xgboost.objective(obj))``; string
        objectives (``"rank:ndcg"``, ...) go to XGBoost's ``fit`` unchanged.

        With a gbrank objective, ``fit`` builds the ``DMatrix`` from ``X, y`` and
        ``group`` (query sizes) or ``qid`` (per-row ids, sorted, as XGBoost requires;
        or, XGBoost's other convention, a DataFrame column ``"qid"`` of ``X``, taken out
        of the features here as ``predict`` takes it out), ``sample_weight`` (one weight
        per query, as in XGBoost), and the same for ``eval_set`` / ``eval_group`` /
        ``eval_qid`` / ``sample_weight_eval_set``. ``eval_metric`` may be an XGBoost
        metric name, a list of them, or :func:`gbrank.xgboost.metric` (called as
        ``f(preds, dmatrix)``).
        ``base_score`` defaults to 0 (gbrank ranking objectives start at 0, as LightGBM
        does). The booster's ``objective`` parameter is set to ``"rank:pairwise"`` only
        so that XGBoost treats the model as a ranker (raw-margin predictions); the
        gradients come from the gbrank objective. ``predict`` returns raw margins.
        For group-less data, grouping in any row order and scikit-learn's model
        selection, prefer :class:`~gbrank.sklearn.GBRanker` with ``booster="xgboost"``.

        Parameters
        ----------
        objective : gbrank objective or str, default "rank:ndcg"
            A gbrank objective instance (an object with ``grad_hess``, such as
            ``LambdaRank(metric="err")``), trained through
            :func:`gbrank.xgboost.objective`; or an XGBoost objective string
            (``"rank:ndcg"``, ``"rank:pairwise"``, ``"rank:map"``) passed to XGBoost
            unchanged. Kept as given in the ``objective`` attribute (``get_params``
            returns it).
        **kwargs
            The other keyword arguments of ``xgboost.XGBRanker`` (``n_estimators``,
            ``learning_rate``, ``max_depth``, ``n_jobs``, ``eval_metric``, ...), passed
            to it unchanged.

        Examples
        --------
        >>> from gbrank.datasets import make_ranking
        >>> from gbrank.objectives import LambdaRank
        >>> from gbrank.xgboost import XGBRanker
        >>> X, y, group = make_ranking(n_queries=20, rows_per_query=10, n_features=5)
        >>> ranker = XGBRanker(objective=LambdaRank(metric="err"), n_estimators=3, n_jobs=1)
        >>> ranker.fit(X, y, group=group).predict(X).shape
        (200,)
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
            X, qid = _qid_column(X, qid, "X", group)
            if group is None and qid is None:
                raise ValueError("XGBRanker needs the rows' queries: qid= (per-row ids), "
                                 "group= (query sizes) or a DataFrame column 'qid' of X")
            _check_sorted(qid, "qid")

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
                Xe, qe = _qid_column(Xe, qe, f"eval_set[{i}]", ge)
                _check_sorted(qe, f"eval_qid[{i}]")
                if ge is None and qe is None:  # as XGBoost's own XGBRanker refuses it
                    raise ValueError(
                        f"eval_set[{i}] has no query ids: every row would be one query "
                        "to its metrics and early stopping. Pass eval_qid=[ids, ...] or "
                        "eval_group=[sizes, ...], one per validation set")
                we = None if sample_weight_eval_set is None else sample_weight_eval_set[i]
                evals.append((dmat(Xe, ye, ge, qe, we), f"validation_{i}"))
            params = self.get_xgb_params()
            warn_ignored_xgboost_ranking_params(params, type(obj).__name__)
            params["objective"] = "rank:pairwise"
            if params.get("base_score") is None:
                params["base_score"] = 0.0
            custom_metric = None
            # XGBoost's get_xgb_params leaves a callable eval_metric out: read the
            # attribute, or a gbrank metric would be dropped without a word.
            params.pop("eval_metric", None)
            em = self.eval_metric
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

    XGBRanker.__module__ = "gbrank.xgboost"
    XGBRanker.__qualname__ = "XGBRanker"
    _XGB_RANKER = XGBRanker
    return XGBRanker
