"""make_scorer judges each metric on the prediction it is defined on, at its scale, and
equals scikit-learn's own scorers there; ranking scorers refuse data without query ids
unless groupless=True declares all rows one query."""

from __future__ import annotations

import numpy as np
import pytest
from reference.metrics import expected_calibration_error as ref_ece
from sklearn.metrics import f1_score, get_scorer
from sklearn.metrics import log_loss as sk_log_loss

from gbrank import metrics
from gbrank.objectives import FocalLoss
from gbrank.sklearn import GBClassifier, GBRanker, make_scorer

FAST = {"n_estimators": 15, "n_jobs": 1, "random_state": 0}


def _binary(n=400, seed=2):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, 5))
    z = 2.0 * X[:, 0] - X[:, 1] + rng.normal(size=n)
    return X, (z > np.quantile(z, 0.7)).astype(int)


def _same_as_sklearn(est, X, y):
    assert make_scorer("f1")(est, X, y) == pytest.approx(get_scorer("f1")(est, X, y),
                                                         rel=1e-12)
    assert make_scorer("logloss")(est, X, y) == pytest.approx(
        get_scorer("neg_log_loss")(est, X, y), rel=1e-12)
    p = est.predict_proba(X)[:, 1]
    assert make_scorer("ece")(est, X, y) == pytest.approx(-ref_ece(y, p, 10), rel=1e-12)


@pytest.mark.parametrize("booster", ["lightgbm", "xgboost"])
def test_gbclassifier_scores_equal_scikit_learn(booster):
    X, y = _binary()
    est = GBClassifier(booster=booster, **FAST).fit(X[:300], y[:300])
    _same_as_sklearn(est, X[300:], y[300:])
    # Binary metrics read decision_function (margins minus the chosen threshold): the
    # estimator's own decisions, as sklearn's f1 scorer reads predict.
    assert make_scorer("fbeta:2")(est, X, y) == pytest.approx(
        metrics.fbeta(y, est.predict(X), 2.0), rel=1e-12)


def test_lgbmclassifier_native_scores_equal_scikit_learn():
    lgb = pytest.importorskip("lightgbm")
    X, y = _binary()
    est = lgb.LGBMClassifier(n_estimators=15, verbose=-1, n_jobs=1).fit(X[:300], y[:300])
    _same_as_sklearn(est, X[300:], y[300:])


@pytest.mark.filterwarnings("ignore:Cannot compute class probabilities")
def test_lgbmclassifier_with_a_gbrank_objective_reads_its_raw_margins():
    # LightGBM returns raw margins from predict and predict_proba with a custom
    # objective: scikit-learn's f1 and neg_log_loss scorers cannot read them; gbrank's
    # judge them as margins.
    lgb = pytest.importorskip("lightgbm")
    X, y = _binary()
    est = lgb.LGBMClassifier(objective=FocalLoss(gamma=0.0), n_estimators=15, verbose=-1,
                             n_jobs=1).fit(X[:300], y[:300])
    Xt, yt = X[300:], y[300:]
    z = est.predict(Xt, raw_score=True)
    p = 1.0 / (1.0 + np.exp(-z))
    assert make_scorer("f1")(est, Xt, yt) == pytest.approx(f1_score(yt, z > 0), rel=1e-12)
    assert make_scorer("logloss")(est, Xt, yt) == pytest.approx(-sk_log_loss(yt, p),
                                                                rel=1e-9)


def test_multiclass_scores_equal_scikit_learn():
    rng = np.random.default_rng(3)
    X = rng.normal(size=(450, 5))
    z = X[:, 0] - 0.6 * X[:, 1] + 0.7 * rng.normal(size=450)
    y = np.digitize(z, np.quantile(z, [0.7, 0.9]))
    est = GBClassifier(**FAST).fit(X[:300], y[:300])
    Xt, yt = X[300:], y[300:]
    assert make_scorer("mlogloss")(est, Xt, yt) == pytest.approx(
        get_scorer("neg_log_loss")(est, Xt, yt), rel=1e-12)
    # macro F1 of the estimator's decisions (class offsets included), as sklearn's.
    assert make_scorer("macro_f1")(est, Xt, yt) == pytest.approx(
        get_scorer("f1_macro")(est, Xt, yt), rel=1e-12)


def test_predictions_neither_labels_nor_probabilities_are_refused():
    from sklearn.linear_model import LinearRegression

    X, y = _binary()
    reg = LinearRegression().fit(X, 4.0 * y - 2.0)  # predicts outside [0, 1]
    with pytest.raises(ValueError, match=r"LinearRegression\.predict\(X\).*not labels.*"
                                         r"make_scorer\(gbrank\.metrics\.fbeta, "
                                         r"response_method='predict', beta=2\.0, "
                                         r"margin=True\)"):
        make_scorer("fbeta:2")(reg, X, y)
    # Probabilities from predict are read at 0.5, labels as labels.
    reg01 = LinearRegression().fit(X, y)
    p = np.clip(reg01.predict(X), 0.0, 1.0)

    class Clipped:
        def predict(self, X):
            return np.clip(reg01.predict(X), 0.0, 1.0)

        def fit(self, X, y):
            return self

    assert make_scorer("f1")(Clipped(), X, y) == pytest.approx(f1_score(y, p > 0.5),
                                                               rel=1e-12)


# --- query structure -------------------------------------------------------------------


def _ranking_frame(id_column="session_id"):
    import pandas as pd

    rng = np.random.default_rng(0)
    X = rng.normal(size=(200, 4))
    y = np.clip(np.round(X[:, 0] + rng.normal(size=200)), 0, 3)
    df = pd.DataFrame(X, columns=[f"f{i}" for i in range(4)])
    df[id_column] = np.repeat(np.arange(20), 10)
    return df, y


def test_ranking_scorer_without_ids_names_the_fixes_and_the_id_like_column():
    from sklearn.linear_model import Ridge

    df, y = _ranking_frame()
    est = Ridge().fit(df, y)  # any scorer of rows; the ids column is a feature here
    with pytest.raises(ValueError, match=r"ndcg@10 judges rankings per query, and the scored "
                                         r"data has no query structure: give the ranker the "
                                         r"query-id column of X \(X has a column 'session_id' "
                                         r"that looks like one: GBRanker\(qid_col="
                                         r"'session_id'\)\).*enable_metadata_routing.*"
                                         r"make_scorer\('ndcg@10', groupless=True\)"):
        make_scorer("ndcg@10")(est, df, y)
    X = df.to_numpy()
    with pytest.raises(ValueError, match=r"has no query structure: give the ranker the "
                                         r"query-id column of X, GBRanker"):
        make_scorer("pair_accuracy")(Ridge().fit(X, y), X, y)


def test_groupless_declares_one_query_and_refuses_several():
    from sklearn.linear_model import Ridge

    df, y = _ranking_frame()
    X = df.drop(columns="session_id").to_numpy()
    est = Ridge().fit(X, y)
    assert make_scorer("ndcg@10", groupless=True)(est, X, y) == metrics.ndcg(
        y, est.predict(X), k=10)  # all rows one list
    # a ranker declared group-less is scored as one list by a plain scorer too
    own = GBRanker(**FAST, groupless=True).fit(X, y)
    assert make_scorer("ndcg@10")(own, X, y) == metrics.ndcg(y, own.predict(X), k=10)
    ranked = GBRanker(qid_col="session_id", **FAST).fit(df, y)
    qid = df["session_id"].to_numpy()
    assert make_scorer("ndcg@10")(ranked, df, y) == metrics.ndcg(y, ranked.predict(df),
                                                                 qid=qid, k=10)
    with pytest.raises(ValueError, match=r"groupless=True\) declares all rows one query, "
                                         r"but the scored data has 20 queries"):
        make_scorer("ndcg@10", groupless=True)(ranked, df, y)
    with pytest.raises(ValueError, match="groupless= is for ranking and click metrics"):
        make_scorer("f1", groupless=True)
    with pytest.raises(ValueError, match="groupless must be True or False"):
        make_scorer("ndcg@10", groupless=1)


def _low_grade_queries():
    """Graded data (0-4) and the rows of its queries whose grades are all 0 or 1."""
    from gbrank.datasets import make_ranking

    X, y, g = make_ranking(n_queries=60, rows_per_query=10, n_features=4, seed=0)
    q = np.repeat(np.arange(g.size), g)
    low = np.isin(q, [u for u in np.unique(q) if y[q == u].max() <= 1])
    assert y.max() == 4 and 20 <= low.sum() < y.size  # the case exists in these data
    return X, y, q, low


def _hand_log_loss(y, p, top):
    """Cross-entropy against ERR's targets (2^l - 1) / (2^top - 1), written out."""
    t = (2.0 ** y - 1) / (2.0 ** top - 1)
    return float(np.mean(-t * np.log(p) - (1 - t) * np.log(1 - p)))


@pytest.mark.parametrize("calibration", [0.5, 1.0])
def test_a_calibrated_rankers_logloss_maps_other_rows_as_its_training_did(calibration):
    """Grades 0 and 1 of a 0-4 scale are not clicks: make_scorer("logloss"), score and
    early stopping judge them against the targets the model learned (the newcomer's
    probe: -0.557 scored where the training's targets give -0.175)."""
    from gbrank.objectives import RankNet

    X, y, q, low = _low_grade_queries()
    est = GBRanker(RankNet(calibration=calibration), scoring="logloss", **FAST).fit(
        X, y, qid=q)
    assert est.calibration_targets_ == {"target": "auto", "max_grade": 4.0,
                                        "threshold": 1.0}
    p = est.predict_proba(X[low])[:, 1]
    expected = _hand_log_loss(y[low], p, 4)
    assert make_scorer("logloss")(est, X[low], y[low]) == pytest.approx(-expected,
                                                                        rel=1e-9)
    assert est.score(X[low], y[low], qid=q[low]) == pytest.approx(expected, rel=1e-9)
    assert metrics.log_loss(y[low], p) != pytest.approx(expected, rel=1e-3)  # the trap
    # An uncalibrated ranker has no mapping (and no predict_proba).
    assert not hasattr(GBRanker(RankNet(), **FAST).fit(X, y, qid=q), "calibration_targets_")


def test_a_calibrated_rankers_early_stopping_logloss_uses_the_training_targets():
    from gbrank.objectives import RankNet

    X, y, q, low = _low_grade_queries()
    fit_rows = ~low
    est = GBRanker(RankNet(calibration=0.5), scoring="logloss", early_stopping_rounds=3,
                   n_estimators=40, n_jobs=1, random_state=0).fit(
        X[fit_rows], y[fit_rows], qid=q[fit_rows], eval_set=[(X[low], y[low])],
        eval_qid=[q[low]])
    curve = est.evals_result_["valid"]["logloss"]
    p = est.predict_proba(X[low])[:, 1]  # at best_iteration_
    assert curve[est.best_iteration_ - 1] == pytest.approx(_hand_log_loss(y[low], p, 4),
                                                           rel=1e-9)


def test_scaled_scorers_read_a_classifiers_labels_as_its_classes():
    """GBClassifier takes any labels; its scorer's metrics read them as the classifier's
    columns: {1, 2, 3} scored on a part without the rare class gave macro-F1 0.0014
    against scikit-learn's 0.6349 (the labels read as column indices), {1, 2} a log
    loss of 0.78 against 0.2124 (read as grades); strings were refused. Now each equals
    scikit-learn's scorer; a label that is no class is refused."""
    from sklearn.datasets import make_classification
    from sklearn.metrics import get_scorer

    from gbrank.datasets import make_imbalanced
    from gbrank.sklearn import GBClassifier, make_scorer

    X, y0 = make_classification(900, 8, n_informative=5, n_classes=3, n_clusters_per_class=1,
                                weights=[0.8, 0.15, 0.05], random_state=0)
    y = y0 + 1  # classes 1, 2, 3
    clf = GBClassifier("focal", n_estimators=15, n_jobs=1, random_state=0).fit(X[:600], y[:600])
    Xt, yt = X[600:], y[600:]
    keep = yt != 3  # the rare class absent from the scored part
    for name, sk in (("macro_f1", "f1_macro"), ("balanced_accuracy", "balanced_accuracy")):
        assert make_scorer(name)(clf, Xt[keep], yt[keep]) == pytest.approx(
            get_scorer(sk)(clf, Xt[keep], yt[keep]), abs=1e-12)
    from sklearn.metrics import log_loss as sk_log_loss

    assert make_scorer("mlogloss")(clf, Xt, yt) == pytest.approx(
        -sk_log_loss(yt, clf.predict_proba(Xt), labels=clf.classes_), abs=1e-9)
    with pytest.raises(ValueError, match=r"macro_f1: 1 scored labels are not classes of the "
                       r"fitted classifier \(first: \[7\]"):
        make_scorer("macro_f1")(clf, Xt[:5], np.r_[yt[:4], 7])
    from sklearn.metrics import average_precision_score, f1_score

    Xb, yb = make_imbalanced(n_rows=1500, positive_rate=0.1, seed=0)
    for labels in ((1, 2), ("ok", "fraud")):
        yl = np.where(yb == 1, labels[1], labels[0])  # "fraud" sorts first
        b = GBClassifier(n_estimators=15, n_jobs=1, random_state=0).fit(Xb[:1000], yl[:1000])
        assert b.pos_label_ == labels[1]  # the larger number; the rarer text label
        assert make_scorer("logloss")(b, Xb[1000:], yl[1000:]) == pytest.approx(
            get_scorer("neg_log_loss")(b, Xb[1000:], yl[1000:]), abs=1e-9)
        # F_β and AP are about the classifier's positive class, whichever sorts first
        pred = b.predict(Xb[1000:])
        assert make_scorer("f1")(b, Xb[1000:], yl[1000:]) == pytest.approx(
            f1_score(yl[1000:], pred, pos_label=b.pos_label_), abs=1e-12)
        column = list(b.classes_).index(b.pos_label_)
        assert make_scorer("ap")(b, Xb[1000:], yl[1000:]) == pytest.approx(
            average_precision_score(yl[1000:] == b.pos_label_,
                                    b.predict_proba(Xb[1000:])[:, column]), abs=1e-12)
    # Another classifier's labels that do not say which class is positive: refused.
    from sklearn.ensemble import RandomForestClassifier

    forest = RandomForestClassifier(n_estimators=5, random_state=0).fit(
        Xb[:1000], np.where(yb[:1000] == 1, "fraud", "ok"))
    with pytest.raises(ValueError, match="do not say which: encode the labels as 0/1"):
        make_scorer("f1")(forest, Xb[1000:], np.where(yb[1000:] == 1, "fraud", "ok"))
