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

from gbrank.sklearn._classifier import GBClassifier
from gbrank.sklearn._ranker import GBRanker
from gbrank.sklearn._scorer import make_scorer

__all__ = ["GBRanker", "GBClassifier", "make_scorer"]

# Pickles and reprs name the public path.
for _cls in (GBRanker, GBClassifier):
    _cls.__module__ = __name__
del _cls


def __getattr__(name: str):
    # XGBoost's scikit-learn ranker accepting gbrank objectives lives in gbrank.xgboost
    # (XGBoost is imported when it is asked for).
    if name == "XGBRanker":
        from gbrank.xgboost import XGBRanker

        return XGBRanker
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
