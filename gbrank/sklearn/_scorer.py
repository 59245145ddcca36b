"""make_scorer: gbrank metrics as scikit-learn scorers, reading query ids (and, on click
logs, logged positions) from X, and each estimator's predictions on the scale they are."""

from __future__ import annotations

from typing import Any

import numpy as np
from sklearn.metrics._scorer import _Scorer as _SklearnScorer

from gbrank._queries import check_declared_queries, id_like_names
from gbrank._validation import check_bool, check_propensity, probabilities_or_labels
from gbrank.metrics import get_metric
from gbrank.sklearn._base import _is_frame
from gbrank.sklearn._ranker import GBRanker
from gbrank.sklearn._ranker_input import _check_positions_have_queries

__all__ = ["make_scorer"]


class _MetricScore:
    """Score function for :func:`sklearn.metrics.make_scorer` (module-level: picklable,
    so scorers work with ``n_jobs``). ``margin`` binds the scale of ``y_score`` for the
    metrics that read it (``None``: the metric's own default, probabilities);
    ``targets`` a calibration metric's label-to-target mapping
    (:meth:`gbrank.metrics.Metric.with_targets`)."""

    def __init__(self, name: str) -> None:
        self.name = name
        self.__name__ = name  # scikit-learn's scorer repr reads it

    def __call__(self, y_true: Any, y_score: Any, qid: Any = None,
                 sample_weight: Any = None, margin: bool | None = None,
                 targets: dict[str, Any] | None = None) -> float:
        metric = get_metric(self.name).with_targets(targets)
        if margin is not None:
            metric = metric.with_margin(margin)
        return float(metric(y_true, y_score, weight=sample_weight, qid=qid))

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


def _final_step(estimator: Any) -> Any:
    """The estimator that predicts (the last step of a ``Pipeline``)."""
    if hasattr(estimator, "steps") and len(estimator.steps) > 0:
        return estimator.steps[-1][1]
    return estimator


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


def _id_like_column(X: Any) -> Any:
    """The first DataFrame column of ``X`` whose name looks like an id
    (:func:`gbrank._queries.id_like_names`, the estimators' rule), or ``None``."""
    if not _is_frame(X):
        return None
    names = id_like_names(X.columns)
    return names[0] if names else None


class _RankingScorer(_SklearnScorer):
    """scikit-learn scorer of a ranking (or click) metric that reads query ids (and
    logged positions) from ``X`` when none are routed to it, so grouped scoring needs
    no metadata routing; without any, it refuses unless ``groupless=True`` declared all
    rows one query."""

    _groupless = False

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
        self._check_queries(estimator, X, kwargs.get("qid"))
        warn_split = getattr(_final_step(estimator), "_warn_if_split_queries", None)
        if warn_split is not None and kwargs.get("qid") is not None:
            warn_split(kwargs["qid"])
        return super()._score(method_caller, estimator, X, y_true, **kwargs)

    def _check_queries(self, estimator: Any, X: Any, qid: Any) -> None:
        name = self._score_func.name
        # A ranker that itself declares its data one query (GBRanker(groupless=True)).
        declared = self._groupless or getattr(_final_step(estimator), "groupless",
                                              False) is True
        column = _id_like_column(X)
        seen = (f" (X has a column {column!r} that looks like one: "
                f"GBRanker(qid_col={column!r}))") if column is not None else ""
        check_declared_queries(
            None if qid is None else int(np.unique(np.asarray(qid).ravel()).size),
            declared, name, "the scored data",
            f"give the ranker the query-id column of X{seen}, GBRanker(qid_col=...), or "
            "enable metadata routing (sklearn.set_config(enable_metadata_routing=True) "
            "before make_scorer) and pass params={'qid': ids}",
            f"make_scorer({name!r}, groupless=True)")

    @property
    def _clicks(self) -> bool:
        return isinstance(self._score_func, _ClickScore)


def _hands_raw_scores(estimator: Any) -> bool:
    """Whether ``estimator`` is one of LightGBM's scikit-learn models trained with a
    custom objective: its ``predict`` and ``predict_proba`` then return raw margins
    (LightGBM warns "Returning raw scores instead")."""
    final = _final_step(estimator)
    return (type(final).__module__.split(".")[0] == "lightgbm"
            and callable(getattr(final, "objective_", None)))


def _fitted_classes(estimator: Any) -> tuple[Any, list | None]:
    """The estimator's final step and its ``classes_`` as a list; ``None`` for classes
    when it is not a fitted classifier (a ranker's labels are grades or clicks)."""
    from sklearn.base import is_classifier

    final = _final_step(estimator)
    classes = getattr(final, "classes_", None)
    if classes is None or not is_classifier(estimator):
        return final, None
    return final, np.asarray(classes).tolist()


def _class_codes(estimator: Any, y_true: Any, metric: Any) -> Any:
    """A classifier's labels as its predictions index them: K classes as their column
    in ``classes_`` (0 … K−1), two as 1 for ``classes_[1]`` (the class a positive
    ``decision_function`` and ``predict_proba[:, 1]`` are about) and 0 for the other —
    so labels {1, 2, 3}, {1, 2} or strings are judged as scikit-learn's scorers judge
    them. Other estimators' labels (a ranker's grades and clicks) as given."""
    classes = _fitted_classes(estimator)[1]
    if classes is None:
        return y_true
    column = {c: i for i, c in enumerate(classes)}
    y = np.asarray(y_true.to_numpy() if hasattr(y_true, "to_numpy") else y_true).ravel()
    found = [column.get(v, -1) for v in y.tolist()]  # 1 and 1.0 are one key
    codes = np.asarray(found, dtype=np.intp)
    if np.any(codes < 0):
        bad = list(dict.fromkeys(v for v, c in zip(y.tolist(), found, strict=True) if c < 0))
        raise ValueError(f"{metric.name}: {int(np.sum(codes < 0))} scored labels are not "
                         f"classes of the fitted classifier (first: {bad[:5]}; classes_ "
                         f"{list(column)[:10]})")
    if metric.kind == "multiclass":
        return codes.astype(np.float64)
    if len(column) != 2:
        return y_true  # a binary metric of K classes: the metric's own error
    return (codes == 1).astype(np.float64)


def _about_the_positive_class(estimator: Any, y_true: Any, y_score: Any,
                              margin: bool | None, metric: Any) -> tuple[Any, Any]:
    """Labels (codes: 1 for ``classes_[1]``) and scores turned to be about the
    classifier's positive class, which F_β and AP are asymmetric in: ``GBClassifier``'s
    ``pos_label_`` (by default the rarer of two text labels, which may sort first), else
    ``classes_[1]`` when the labels say which (0/1, ±1, booleans); other labels ({1, 2},
    text) of another classifier are refused rather than guessed."""
    final, classes = _fitted_classes(estimator)
    if classes is None or len(classes) != 2:
        return y_true, y_score
    pos = getattr(final, "pos_label_", None)
    if pos is None:
        if set(classes) not in ({0, 1}, {-1, 1}):
            raise ValueError(
                f"{metric.name} is about a positive class, and {type(final).__name__}'s "
                f"classes {classes} do not say which: encode the "
                "labels as 0/1 (1 positive), or use gbrank.sklearn.GBClassifier, whose "
                "pos_label names it")
        return y_true, y_score
    if pos == classes[1]:
        return y_true, y_score
    s = np.asarray(y_score, dtype=np.float64)
    if margin:  # > 0 said classes_[1]; 0 itself said classes_[0], the positive class
        s = np.where(s == 0.0, np.finfo(np.float64).tiny, -s)
    else:  # probabilities or 0/1 decisions of classes_[1]
        s = 1.0 - s
    return 1.0 - np.asarray(y_true, dtype=np.float64), s


class _ScaledScorer(_SklearnScorer):
    """scikit-learn scorer of a metric that reads the scale of the predictions (binary,
    calibration, multiclass): it asks the estimator for the prediction that metric
    judges and tells the metric the scale it comes in."""

    def _score(self, method_caller: Any, estimator: Any, X: Any, y_true: Any,
               **kwargs: Any) -> float:
        y_score, margin = self._predictions(estimator, X)
        metric = get_metric(self._score_func.name)
        y_true = _class_codes(estimator, y_true, metric)
        if metric.kind == "binary":
            y_true, y_score = _about_the_positive_class(estimator, y_true, y_score, margin,
                                                        metric)
        # A calibrated GBRanker's targets are those its training labels mapped to (not
        # the judged rows' own: 0/1 grades of a 0-4 scale are not clicks); a mapping
        # given to make_scorer wins.
        targets = getattr(_final_step(estimator), "calibration_targets_", None)
        return self._sign * self._score_func(y_true, y_score, margin=margin,
                                             **{"targets": targets, **self._kwargs,
                                                **kwargs})

    def _predictions(self, estimator: Any, X: Any) -> tuple[Any, bool | None]:
        """The predictions and their scale (``None``: probabilities or labels, as the
        metric reads them by default)."""
        metric = get_metric(self._score_func.name)
        raw = _hands_raw_scores(estimator)
        if metric.kind == "binary":
            if getattr(estimator, "decision_function", None) is not None:
                return estimator.decision_function(X), True
            s = np.asarray(estimator.predict(X))
            if raw:
                return s, True
            s = np.asarray(_class_codes(estimator, s, metric))  # a classifier's classes
            _check_probabilities_or_labels(s, type(estimator).__name__, metric)
            return s, None
        if metric.kind == "multiclass" and not metric.reads_scale:
            # The argmax the estimator decides by (GBClassifier: with its class offsets).
            if getattr(estimator, "decision_function", None) is not None:
                return estimator.decision_function(X), True
            return estimator.predict_proba(X), raw
        p = np.asarray(estimator.predict_proba(X))
        if metric.kind == "pointwise" and p.ndim == 2 and not raw:
            if p.shape[1] != 2:
                raise ValueError(
                    f"{metric.name} judges the probability of the positive class, and "
                    f"predict_proba returned {p.shape[1]} columns: it needs a classifier of "
                    "two classes")
            p = p[:, 1]
        return p, raw


def _check_probabilities_or_labels(s: np.ndarray, estimator: str, metric: Any) -> None:
    """Refuse ``predict`` output that is neither labels {0, 1} / {-1, +1} nor
    probabilities, naming how to score raw margins."""
    if s.ndim != 1 or s.size == 0 or s.dtype.kind not in "biuf" or not np.all(np.isfinite(s)):
        return  # the metric's own validation names the problem
    if probabilities_or_labels(s):
        return
    bound = ", ".join(f"{k}={v!r}" for k, v in metric.params.items())
    raise ValueError(
        f"make_scorer({metric.name!r}) scores {estimator}.predict(X) when there is no "
        "decision_function, and it returned values outside [0, 1] that are not labels "
        "{0, 1} or {-1, +1}, so it cannot tell how to read them. If they are raw margins "
        f"(log-odds), score them with sklearn.metrics.make_scorer(gbrank.metrics."
        f"{metric.func.__name__}, response_method='predict', "
        f"{bound + ', ' if bound else ''}margin=True)")


def make_scorer(name: str, *, propensity: Any = None, groupless: bool = False) -> Any:
    """A scikit-learn scorer computing a gbrank metric by registry name.

    Ranking metrics (``"ndcg@10"``, ``"err@5"``, ``"pair_accuracy"``, …) score
    ``estimator.predict(X)`` per query. The query ids come from ``X`` itself — the
    column a :class:`GBRanker` names by ``qid_col`` (at the end of a ``Pipeline``: in
    the data that step receives), or a DataFrame column ``"qid"`` for other rankers,
    as XGBoost's ``XGBRanker`` reads it — so ``cross_val_score`` and ``GridSearchCV``
    score whole queries without metadata routing. With routing enabled
    (``sklearn.set_config(enable_metadata_routing=True)`` before calling this) the
    scorer also requests ``qid``, and routed ids take precedence. With neither, the
    scorer refuses, naming an id-like column of ``X`` if it has one, unless
    ``groupless=True`` declares all rows one query.

    Every other metric is judged on the prediction it is defined on, and told its
    scale:

    - binary metrics (``"f1"``, ``"fbeta:2"``, ``"balanced"``): ``decision_function(X)``
      (raw margins, cut at 0) when the estimator has one (:class:`GBClassifier`:
      exactly its ``predict``), else ``predict(X)``: labels {0, 1} or {−1, +1} as
      labels, probabilities cut at 0.5; other values are refused. Labels ``y`` must be
      {0, 1} or {−1, +1};
    - calibration metrics (``"logloss"``, ``"ece"``): ``predict_proba(X)``, the
      positive class's column of an (n, 2) result or a 1-D result as it is (a
      calibrated :class:`GBRanker`), as scikit-learn's ``neg_log_loss`` does;
    - multiclass metrics: ``predict_proba(X)`` for ``"mlogloss"``; the others read the
      argmax of ``decision_function(X)`` when there is one (:class:`GBClassifier`: its
      decisions, class offsets included), else of ``predict_proba(X)``. Labels ``y``
      must be the class indices 0 … K−1.

    LightGBM's ``LGBMClassifier`` trained with a custom objective (a gbrank one) returns
    raw margins from ``predict`` and ``predict_proba``; they are read as margins.

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
    groupless : bool, default False
        For ranking and click metrics: declare that all rows scored are one query, for
        data without query ids (otherwise refused); ids of several queries are then
        refused.

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
    >>> make_scorer("logloss")
    make_scorer(logloss, greater_is_better=False, response_method='predict_proba')

    On a classifier, the scorer equals scikit-learn's own:

    >>> from sklearn.datasets import make_classification
    >>> from sklearn.linear_model import LogisticRegression
    >>> from sklearn.metrics import get_scorer
    >>> X, y = make_classification(n_samples=200, random_state=0)
    >>> clf = LogisticRegression().fit(X, y)
    >>> bool(make_scorer("f1")(clf, X, y) == get_scorer("f1")(clf, X, y))
    True
    >>> abs(make_scorer("logloss")(clf, X, y) - get_scorer("neg_log_loss")(clf, X, y)) < 1e-12
    True
    """
    import sklearn
    from sklearn.metrics import make_scorer as _make_scorer

    metric = get_metric(name)
    groupless = check_bool(groupless, "groupless")
    ranking = metric.kind in ("ranking", "clicks")
    if groupless and not ranking:
        raise ValueError(f"groupless= is for ranking and click metrics; {metric.name!r} "
                         "judges rows one by one and takes none")
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
    response: Any = {"binary": ("decision_function", "predict"),
                     "pointwise": "predict_proba",
                     "multiclass": ("decision_function", "predict_proba")}.get(metric.kind,
                                                                            "predict")
    if metric.kind == "multiclass" and metric.reads_scale:
        response = "predict_proba"
    scorer = _make_scorer(func, response_method=response,
                          greater_is_better=metric.higher_is_better)
    kind = _RankingScorer if ranking else _ScaledScorer
    typed = kind.__new__(kind)
    typed.__dict__.update(scorer.__dict__)
    if ranking:
        typed._groupless = groupless
        if sklearn.get_config().get("enable_metadata_routing"):
            typed = typed.set_score_request(
                qid=True, **({"position": True} if metric.kind == "clicks" else {}))
    return typed
