"""LightGBM adapter: translate LightGBM's calling conventions to gbrank objects.

Objectives need nothing from here (an objective instance is a valid
``params["objective"]`` and reads the ``Dataset`` itself, by duck typing); this module
holds :func:`feval`, the metric adapter, and :func:`cv`, ``lgb.cv`` with query-wise
folds. LightGBM is imported only inside the functions that need it.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from gbrank._fields import (
    calling_lightgbm_dataset,
    check_fold_keeps_queries,
    is_lightgbm_dataset,
    lightgbm_dataset_fields,
    warn_lightgbm_builtin_metrics,
)

__all__ = ["cv", "feval", "metric_key"]

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
    import lightgbm as lgb

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
