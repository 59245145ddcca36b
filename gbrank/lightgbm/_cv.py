"""cv: ``lightgbm.cv`` with folds of whole queries."""

from __future__ import annotations

from typing import Any

import numpy as np

from gbrank._deps import require


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

    Click logs: give the objective the positions of ``train_set``'s rows,
    ``params["objective"] = gbrank.lightgbm.objective(obj, position=positions)``; each
    fold takes its rows' positions and starts fresh estimates.

    Parameters
    ----------
    params, train_set, num_boost_round, folds, nfold, stratified, shuffle, metrics, \
feval, init_model, fpreproc, seed, callbacks, eval_train_metric, return_cvbooster
        As in ``lightgbm.cv``.
    **kwargs
        Further keyword arguments of ``lightgbm.cv``, passed to it unchanged.

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
            from sklearn.utils.multiclass import type_of_target

            kind = type_of_target(np.asarray(y))
            if kind not in ("binary", "multiclass"):
                raise ValueError(
                    f"stratified=True folds keep each label's share, and these labels are "
                    f"{kind} (a rate or score, not classes): pass stratified=False")
            return StratifiedKFold(n_splits=self.n_splits, shuffle=self.shuffle,
                                   random_state=self.seed if self.shuffle else None,
                                   ).split(X, y)
        rows = np.random.RandomState(self.seed).permutation(n) if self.shuffle \
            else np.arange(n)
        test = np.array_split(rows, self.n_splits)
        return ((np.concatenate([t for j, t in enumerate(test) if j != i]), test[i])
                for i in range(self.n_splits))
