"""LightGBM adapter: translate LightGBM's calling conventions to gbrank objects.

Objectives need nothing from here (an objective instance is a valid
``params["objective"]`` and reads the ``Dataset`` itself, by duck typing); this module
holds :func:`feval`, the metric adapter. LightGBM itself is never imported here.
"""

from __future__ import annotations

from typing import Any

from gbrank.objectives._base import is_lightgbm_dataset, lightgbm_dataset_fields

__all__ = ["feval"]


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
            preds = a
            y, weight, group = lightgbm_dataset_fields(b)
        else:
            y, preds = a, b
        return [
            (m.name, m(y, preds, group if m.kind == "ranking" else None, weight),
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
        It returns one ``(name, value, True)`` per name; early stopping maximises them.
        Ranking metrics use the query structure (none: all rows are one query, any
        size); binary metrics ignore it.

    Notes
    -----
    Predictions reaching ``feval`` are transformed by LightGBM's built-in objectives
    (irrelevant for ranking metrics, which only order scores) and raw margins with a
    custom objective. A name equal to one of LightGBM's own metrics (``"ndcg@10"``,
    ``"map@5"``) shares its key in ``evals_result``; do not request both.
    """
    from gbrank.metrics import get_metric

    if not names:
        raise ValueError("feval needs at least one metric name, e.g. feval('ndcg@10')")
    metrics = tuple(get_metric(n) for n in names)
    if threshold is not None:
        metrics = tuple(m.with_threshold(threshold) for m in metrics)
    return _FEval(metrics)
