"""make_scorer: gbrank metrics as scikit-learn scorers, reading query ids (and, on click
logs, logged positions) from X."""

from __future__ import annotations

from typing import Any

from sklearn.metrics._scorer import _Scorer as _SklearnScorer

from gbrank._validation import check_propensity
from gbrank.metrics import get_metric
from gbrank.sklearn._base import _is_frame
from gbrank.sklearn._ranker import GBRanker, _check_positions_have_queries

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


class _ClickScore:
    """Score function of a click metric with its propensities bound (module-level:
    picklable)."""

    def __init__(self, name: str, propensity: Any) -> None:
        self.name = name
        self.propensity = propensity
        self.__name__ = name

    def __call__(self, y_true: Any, y_score: Any, qid: Any = None, position: Any = None,
                 sample_weight: Any = None) -> float:
        if position is None:
            raise ValueError(
                f"{self.name} weighs every click by the position it was logged at, and the "
                "scorer found no positions: use GBRanker(position_col=...) with the "
                "positions as a column of X, or enable metadata routing and pass "
                "params={'position': ...}")
        _check_positions_have_queries(position, qid)
        metric = get_metric(self.name).with_propensity(self.propensity)
        return float(metric(y_true, y_score, weight=sample_weight, qid=qid,
                            position=position))

    def __repr__(self) -> str:
        return f"gbrank:{self.name}"


def _columns_from_X(estimator: Any, X: Any) -> tuple[Any, Any]:
    """Query ids and logged positions carried by ``X`` for the ranker that scores it:
    the columns a :class:`GBRanker` names by ``qid_col`` and ``position_col`` (for a
    ``Pipeline``, in the data its last step receives), or a DataFrame column ``"qid"``
    (XGBoost's convention; no positions then); ``None`` where there is none."""
    if hasattr(estimator, "steps") and len(estimator.steps) > 1:
        final = estimator.steps[-1][1]
        if isinstance(final, GBRanker):
            X = estimator[:-1].transform(X)
        estimator = final
    if isinstance(estimator, GBRanker):
        _, qid, position = estimator._split_columns(X)
        return qid, position
    if _is_frame(X) and "qid" in X.columns:
        return X["qid"].to_numpy(), None
    return None, None


class _RankingScorer(_SklearnScorer):
    """scikit-learn scorer of a ranking (or click) metric that reads query ids (and
    logged positions) from ``X`` when none are routed to it, so grouped scoring needs
    no metadata routing."""

    def _score(self, method_caller: Any, estimator: Any, X: Any, y_true: Any,
               **kwargs: Any) -> float:
        need_qid = kwargs.get("qid") is None
        need_position = self._clicks and kwargs.get("position") is None
        if need_qid or need_position:  # (a Pipeline transforms X to find them)
            qid, position = _columns_from_X(estimator, X)
            if need_qid and qid is not None:
                kwargs["qid"] = qid
            if need_position and position is not None:
                kwargs["position"] = position
        return super()._score(method_caller, estimator, X, y_true, **kwargs)

    @property
    def _clicks(self) -> bool:
        return isinstance(self._score_func, _ClickScore)


def make_scorer(name: str, *, propensity: Any = None) -> Any:
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

    Click metrics (``"ips_dcg@10"``) judge a click log: ``y`` holds the clicks, each
    divided by the examination propensity ``propensity`` of the position its row was
    logged at, read from the ``position_col`` column of ``X`` of a :class:`GBRanker`
    (or routed as ``position``), per session of the query-id column. The propensities
    are fixed here, once for every candidate, so that ``GridSearchCV`` compares them
    on one scale.

    Parameters
    ----------
    name : str
        A gbrank metric name (:func:`gbrank.get_metric`).
    propensity : sequence or dict, optional
        For click metrics only, and required there: ρ(p) = P(examined | position p) in
        (0, 1], a sequence for p = 1, 2, … or a mapping ``{position: ρ}``.

    Returns
    -------
    scorer
        For ``cross_val_score(scoring=...)``, ``GridSearchCV(scoring=...)``, …

    Examples
    --------
    >>> from gbrank.sklearn import make_scorer
    >>> make_scorer("ndcg@10")
    make_scorer(ndcg@10, response_method='predict')
    >>> make_scorer("ips_dcg@10", propensity=[1.0, 0.5, 0.33])
    make_scorer(ips_dcg@10, response_method='predict')
    """
    import sklearn
    from sklearn.metrics import make_scorer as _make_scorer

    metric = get_metric(name)
    if metric.kind == "clicks":
        if propensity is None:
            raise ValueError(
                f"{metric.name} weighs every click by the examination propensity of its "
                "logged position, and none was given: make_scorer("
                f"{metric.name!r}, propensity=[rho_1, rho_2, ...]) (or {{position: rho}})")
        check_propensity(propensity)
        func: Any = _ClickScore(metric.name, propensity)
    elif propensity is not None:
        raise ValueError(f"propensity= is for click metrics (ips_dcg@k); {metric.name!r} "
                         "judges labels and takes none")
    else:
        func = _MetricScore(metric.name)
    response = "predict" if metric.kind != "binary" else ("decision_function", "predict")
    scorer = _make_scorer(func, response_method=response,
                          greater_is_better=metric.higher_is_better)
    if metric.kind in ("ranking", "clicks"):
        ranking = _RankingScorer.__new__(_RankingScorer)
        ranking.__dict__.update(scorer.__dict__)
        scorer = ranking
        if sklearn.get_config().get("enable_metadata_routing"):
            scorer = scorer.set_score_request(
                qid=True, **({"position": True} if metric.kind == "clicks" else {}))
    return scorer


