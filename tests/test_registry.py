"""The metric registry: names -> bound metrics, clear errors for unknown names."""

from __future__ import annotations

import numpy as np
import pytest

from gbrank import metrics
from gbrank.metrics import get_metric
from gbrank.objectives._registry import OBJECTIVES

Y = np.array([2, 0, 1, 0, 3, 1, 0, 1, 0, 0], dtype=float)
S = np.array([0.3, 0.1, 0.2, 0.2, 0.9, -0.4, 0.0, 0.5, 0.1, -1.0])
G = [4, 6]
YB = (Y > 0).astype(float)


@pytest.mark.parametrize(("name", "expected"), [
    ("ndcg@10", lambda: metrics.ndcg(Y, S, G, 10)),
    ("ndcg@3", lambda: metrics.ndcg(Y, S, G, 3)),
    ("ndcg", lambda: metrics.ndcg(Y, S, G, None)),
    ("err@5", lambda: metrics.err(Y, S, G, 5)),
    ("err", lambda: metrics.err(Y, S, G, None)),
    ("map@10", lambda: metrics.mean_ap(Y, S, G, 10)),
    ("map", lambda: metrics.mean_ap(Y, S, G, None)),
    ("mrr", lambda: metrics.mrr(Y, S, G)),
    ("mrr@1", lambda: metrics.mrr(Y, S, G, 1)),
    ("precision@5", lambda: metrics.precision_at_k(Y, S, G, 5)),
    ("recall@5", lambda: metrics.recall_at_k(Y, S, G, 5)),
    ("pair_accuracy", lambda: metrics.pair_accuracy(Y, S, G)),
])
def test_ranking_names(name, expected):
    m = get_metric(name)
    assert (m.name, m.kind, m.higher_is_better) == (name, "ranking", True)
    assert m(Y, S, G) == expected()


@pytest.mark.parametrize("family", ["precision", "recall", "PRECISION"])
def test_precision_and_recall_need_a_cut_off(family):
    """Over every row of a query both are the same for any scores (the share of
    relevant rows; recall 1): as an early-stopping metric, a scorer or a study's, they
    would judge nothing."""
    values = set()  # what the refusal guards against: three scorings, two values
    for s in (S, -S, np.zeros_like(S)):
        values |= {metrics.precision_at_k(Y, s, G, None), metrics.recall_at_k(Y, s, G, None)}
    assert len(values) == 2 and 1.0 in values
    with pytest.raises(ValueError, match=(
            f"metric '{family}' without a cut-off judges every row of a query, and .* is "
            f"then the same whatever the scores: name one, {family.lower()}@10")):
        get_metric(family)


P = 1.0 / (1.0 + np.exp(-3.0 * S))  # probabilities, on the same side of 0.5 as S of 0


@pytest.mark.parametrize(("name", "expected"), [
    ("f1", metrics.f1),
    ("fbeta:2", lambda y, s, **kw: metrics.fbeta(y, s, 2.0, **kw)),
    ("fbeta:0.5", lambda y, s, **kw: metrics.fbeta(y, s, 0.5, **kw)),
    ("balanced", metrics.balanced_measure),
])
def test_binary_names(name, expected):
    m = get_metric(name)
    assert (m.name, m.kind, m.higher_is_better, m.reads_scale) == (name, "binary", True, True)
    assert m(YB, P, G) == expected(YB, P)  # group ignored; probabilities by default
    assert m.with_margin(True)(YB, S, G) == expected(YB, S, margin=True)
    assert m.with_margin(True).params["margin"] is True
    with pytest.raises(ValueError, match="margin=True"):
        m(YB, S)


def test_case_weights_and_threshold():
    assert get_metric(" NDCG@10 ").name == "ndcg@10"
    w = [2.0, 0.5]
    assert get_metric("ndcg@3")(Y, S, G, weight=w) == metrics.ndcg(Y, S, G, 3, weight=w)
    f = get_metric("f1").with_margin(True).with_threshold(0.15)
    assert f(YB, S) == metrics.f1(YB, S, threshold=0.15, margin=True) != metrics.f1(
        YB, S, margin=True)
    assert get_metric("ndcg@3").with_threshold(0.5) == get_metric("ndcg@3")
    assert get_metric(get_metric("mrr")).name == "mrr"


@pytest.mark.parametrize(("name", "reads"), [
    ("ndcg@10", False), ("pair_accuracy", False), ("ips_dcg@5", False), ("f1", True),
    ("fbeta:2", True), ("balanced", True), ("logloss", True), ("ece:5", True),
    ("mlogloss", True), ("macro_f1", False), ("balanced_accuracy", False),
])
def test_with_margin_binds_the_scale_where_it_matters(name, reads):
    m = get_metric(name)
    assert m.reads_scale is reads
    for margin in (True, False):
        bound = m.with_margin(margin)
        assert bound == m if not reads else bound.params == {**m.params, "margin": margin}
    with pytest.raises(ValueError, match="margin must be True or False"):
        m.with_margin(None)


@pytest.mark.parametrize("bad", ["ndgc@10", "ndcg@0", "ndcg@x", "pair_accuracy@5", "f1@3",
                                 "fbeta:", "fbeta:-1", "fbeta:abc", "auc", ""])
def test_unknown_names_list_valid_forms(bad):
    with pytest.raises(ValueError, match=r"valid forms: ndcg, ndcg@<k>, .*fbeta:<beta>"):
        get_metric(bad)


def test_non_string_name():
    with pytest.raises(ValueError, match="metric name must be a string"):
        get_metric(10)


def test_objectives_part_lists_every_objective():
    assert set(OBJECTIVES) == {"ranknet", "lambdarank", "focal", "fbeta_surrogate",
                               "cross_entropy"}


# --- objective part of the registry -------------------------------------------------

def test_get_objective_by_name_and_shorthand():
    from gbrank.objectives import FBetaSurrogate, FocalLoss, LambdaRank, RankNet, get_objective

    assert isinstance(get_objective("ranknet"), RankNet)
    assert isinstance(get_objective("focal", gamma=1.0), FocalLoss)
    assert isinstance(get_objective("fbeta_surrogate", beta=2.0), FBetaSurrogate)
    obj = get_objective("LambdaRank:err", truncation=5)
    assert isinstance(obj, LambdaRank)
    assert (obj.metric, obj.truncation) == ("err", 5)


def test_get_objective_errors():
    from gbrank.objectives import get_objective

    with pytest.raises(ValueError, match="unknown objective 'foo'; valid: ranknet"):
        get_objective("foo")
    with pytest.raises(ValueError, match="unknown objective 'ranknet:err'"):
        get_objective("ranknet:err")
    with pytest.raises(ValueError, match="already names the metric"):
        get_objective("lambdarank:err", metric="ndcg")
    with pytest.raises(ValueError, match="metric must be one of"):
        get_objective("lambdarank:auc")


# --- scikit-learn's parameter contract, for every registered objective ----------------
_NON_DEFAULT = {
    "ranknet": {"sigma": 2, "ties": "pull", "method": "exact", "exact_max_rows": 50,
                "calibration": 0.25, "calibration_target": "linear"},
    "lambdarank": {"metric": "err", "truncation": 5, "sigma": 0.5, "label_gain": [0, 1, 3],
                   "max_grade": 4, "threshold": 2, "norm": True, "calibration": 0.5,
                   "calibration_target": "binary"},
    "focal": {"gamma": 1, "alpha": 0.25, "hess_floor": 0, "num_class": None, "max_step": 4},
    "fbeta_surrogate": {"beta": 2, "measure": "balanced", "hess": 3, "max_step": 0.5},
    "cross_entropy": {"target": "exponential", "max_grade": 3, "threshold": 2},
}


@pytest.mark.parametrize("name", sorted(OBJECTIVES))
def test_objective_parameter_contract(name):
    import pickle

    from sklearn.base import clone

    cls = OBJECTIVES[name]
    kwargs = _NON_DEFAULT[name]
    assert set(kwargs) <= set(cls().get_params(deep=True))
    obj = cls(**kwargs)
    # Stored exactly as given (same objects), deep and shallow alike.
    assert all(obj.get_params(deep=True)[k] is v for k, v in kwargs.items())
    assert obj.get_params(deep=False).keys() == obj.get_params(deep=True).keys()
    copy = clone(obj)
    assert type(copy) is cls and copy is not obj
    assert copy.get_params() == obj.get_params()
    assert repr(copy) == repr(obj) and repr(obj).startswith(f"{cls.__name__}(")
    back = pickle.loads(pickle.dumps(obj))
    assert back.get_params() == obj.get_params()
    # set_params returns self, refuses unknown names and re-validates at the next use.
    fresh = cls()
    assert fresh.set_params(**kwargs) is fresh
    assert fresh.get_params() == obj.get_params()
    with pytest.raises(ValueError, match=r"invalid parameter 'nope' for .*valid parameters"):
        fresh.set_params(nope=1)


def test_clone_lambdarank_with_label_gain_list():
    from sklearn.base import clone

    from gbrank.objectives import LambdaRank

    gain = [0, 1, 3, 7, 15]
    copy = clone(LambdaRank(label_gain=gain))
    assert copy.label_gain == gain


@pytest.mark.parametrize("name, bad, good", [
    ("ranknet", {"sigma": -1.0}, {"sigma": 2.0}),
    ("lambdarank", {"truncation": 0}, {"truncation": 2}),
    ("focal", {"gamma": -1.0}, {"gamma": 0.5}),
    ("fbeta_surrogate", {"beta": 0.0}, {"beta": 2.0}),
])
def test_set_params_invalidates_the_validated_view(name, bad, good):
    cls = OBJECTIVES[name]
    y = np.array([1.0, 0.0, 1.0, 0.0, 1.0])
    s = np.array([0.2, 0.4, -0.1, 0.3, 0.0])
    obj = cls()
    obj.grad_hess(y, s)  # validated and cached with the defaults
    obj.set_params(**bad)
    with pytest.raises(ValueError, match=next(iter(bad))):
        obj.grad_hess(y, s)
    obj.set_params(**good)
    np.testing.assert_array_equal(obj.grad_hess(y, s)[0], cls(**good).grad_hess(y, s)[0])
    # Plain attribute assignment is seen too (the cache is keyed on the stored values).
    key, value = next(iter(bad.items()))
    setattr(obj, key, value)
    with pytest.raises(ValueError, match=key):
        obj.grad_hess(y, s)
