"""feval: gbrank metrics as LightGBM evaluation functions, under names of their own."""

from __future__ import annotations

from typing import Any

import numpy as np

from gbrank._fields import (
    calling_lightgbm_dataset,
    check_fold_keeps_queries,
    is_lightgbm_dataset,
    lightgbm_dataset_fields,
    lightgbm_positions,
    lightgbm_subset_rows,
    renumbered_like_lightgbm,
    warn_lightgbm_builtin_metrics,
)


def metric_key(name: str) -> str:
    """The name under which a booster logs the gbrank metric ``name`` (in
    ``evals_result``, ``lgb.cv``'s result and early-stopping messages):
    ``"gbrank_" + canonical name``, never the name of one of LightGBM's own metrics.

    Parameters
    ----------
    name : str
        A metric name (:func:`gbrank.metrics.get_metric`).

    Returns
    -------
    str

    Examples
    --------
    >>> from gbrank.lightgbm import metric_key
    >>> metric_key("NDCG@10"), metric_key("fbeta:2")
    ('gbrank_ndcg@10', 'gbrank_fbeta:2')

    ``lgb.cv`` logs it with a ``"valid "`` prefix and ``"-mean"`` / ``"-stdv"`` suffixes:
    ``result["valid " + metric_key("ndcg@10") + "-mean"]``.
    """
    from gbrank.metrics import get_metric

    return get_metric(name).key


class _FEval:
    """LightGBM metric callable for ``lgb.train(feval=...)`` and the sklearn API.

    ``lgb.train`` calls ``f(preds, eval_data)``; ``LGBMRanker.fit(eval_metric=f)`` counts
    the parameters of ``f`` and, seeing exactly four, calls ``f(y_true, y_pred, weight,
    group)``. Both return a list of ``(name, value, True)``.
    """

    def __init__(self, metrics: tuple[Any, ...], position: Any = None) -> None:
        self.metrics = metrics
        self.position = position

    def __call__(self, a: Any, b: Any, weight: Any = None, group: Any = None,
                 ) -> list[tuple[str, float, bool]]:
        if is_lightgbm_dataset(b):
            preds, ds = a, b
            y, weight, group = lightgbm_dataset_fields(b)
        else:
            y, preds = a, b
            ds = calling_lightgbm_dataset()
        if ds is not None:
            if any(m.kind in ("ranking", "clicks") for m in self.metrics):
                check_fold_keeps_queries(ds)
            warn_lightgbm_builtin_metrics(ds, self.metrics[0].key)
        out = []
        for m in self.metrics:
            if m.kind == "clicks":
                value = m(y, preds, group, weight,
                          position=self._positions(m.name, ds, np.size(y)))
            else:
                value = m(y, preds, group if m.kind == "ranking" else None, weight)
            out.append((m.key, value, m.higher_is_better))
        return out

    def _positions(self, name: str, ds: Any, n: int) -> np.ndarray:
        """The logged positions of the ``n`` rows evaluated (from ``ds``): those given to
        :func:`feval`, for this data set or the fold of it ``lgb.cv`` made; checked
        against the positions the Dataset was built with, when it has any."""
        pos = self.position
        if pos is None:
            raise ValueError(
                f"{name} needs the logged display position of every evaluated row, given "
                f"as they are: feval({name!r}, propensity=..., position=positions) (a "
                "constructed LightGBM Dataset holds only LightGBM's renumbering of its "
                "positions, 0, 1, … by first appearance)")
        rows = None if ds is None else lightgbm_subset_rows(ds)
        if pos.size != n and rows is not None and rows.size == n and rows.max() < pos.size:
            pos = pos[rows]
        if pos.size != n:
            raise ValueError(f"feval's position= holds {pos.size} positions and the data "
                             f"evaluated has {n} rows: evaluate the data set they belong to")
        held = None if ds is None else lightgbm_positions(ds)
        if held is not None and not np.array_equal(renumbered_like_lightgbm(pos),
                                                    np.asarray(held, dtype=np.int64)):
            raise ValueError("feval's position= disagrees with the positions this LightGBM "
                             "Dataset was built with (compared through LightGBM's "
                             "renumbering): pass the evaluated data set's own positions, in "
                             "its row order")
        return pos

    def __repr__(self) -> str:
        return f"feval({', '.join(repr(m.name) for m in self.metrics)})"


def feval(*names: str, threshold: float | None = None, propensity: Any = None,
          position: Any = None) -> _FEval:
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
    propensity : sequence or dict, optional
        Examination propensities for click metrics (``"ips_dcg@10"``): ρ(1), ρ(2), …
        or ``{position: ρ}``. Their labels are clicks: early stopping on a held-out part
        of the click log.
    position : array-like of int, optional
        For click metrics (required there): the logged display position of every row of
        the evaluated Dataset, in its row order (a constructed Dataset holds only
        LightGBM's renumbering of its own). Evaluated by ``lgb.cv``, the positions of
        the whole training set (each fold takes its rows'). When the Dataset was also
        built with ``position=``, the two must agree.

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
    if propensity is not None or position is not None:
        if not any(m.kind == "clicks" for m in metrics):
            raise ValueError("propensity= and position= are for click metrics such as "
                             f"'ips_dcg@10'; none of {[m.name for m in metrics]} is one")
    if propensity is not None:
        metrics = tuple(m.with_propensity(propensity) for m in metrics)
    if position is not None:
        from gbrank._validation import check_positions

        position = check_positions(position, np.size(position))
    return _FEval(metrics, position)
