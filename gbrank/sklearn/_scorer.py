"""make_scorer: gbrank metrics as scikit-learn scorers, reading query ids from X."""

from __future__ import annotations

from typing import Any

from sklearn.metrics._scorer import _Scorer as _SklearnScorer

from gbrank.metrics import get_metric
from gbrank.sklearn._base import _is_frame
from gbrank.sklearn._ranker import GBRanker

__all__ = ["make_scorer"]


class _MetricScore:
    """Score function for :func:`sklearn.metrics.make_scorer` (module-level: picklable,
    so scorers work with ``n_jobs``)."""

    def __init__(self, name: str) -> None:
        self.name = name
        self.__name__ = name  # scikit-learn's scorer repr reads it

    def __call__(self, y_true: Any, y_score: Any, qid: Any = None,
                 sample_weight: Any = None) -> float:
        return float(get_metric(self.name)(y_true, y_score, weight=sample_weight, qid=qid))

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


