"""The metric registry: names -> bound metrics, clear errors for unknown names."""

from __future__ import annotations

import numpy as np
import pytest

from gbrank import metrics
from gbrank._registry import OBJECTIVES, get_metric

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


@pytest.mark.parametrize(("name", "expected"), [
    ("f1", lambda: metrics.f1(YB, S)),
    ("fbeta:2", lambda: metrics.fbeta(YB, S, 2.0)),
    ("fbeta:0.5", lambda: metrics.fbeta(YB, S, 0.5)),
    ("balanced", lambda: metrics.balanced_measure(YB, S)),
])
def test_binary_names(name, expected):
    m = get_metric(name)
    assert (m.name, m.kind, m.higher_is_better) == (name, "binary", True)
    assert m(YB, S, G) == expected()  # group ignored


def test_case_weights_and_threshold():
    assert get_metric(" NDCG@10 ").name == "ndcg@10"
    w = [2.0, 0.5]
    assert get_metric("ndcg@3")(Y, S, G, weight=w) == metrics.ndcg(Y, S, G, 3, weight=w)
    f = get_metric("f1").with_threshold(0.15)
    assert f(YB, S) == metrics.f1(YB, S, threshold=0.15) != metrics.f1(YB, S)
    assert get_metric("ndcg@3").with_threshold(0.5) == get_metric("ndcg@3")
    assert get_metric(get_metric("mrr")).name == "mrr"


@pytest.mark.parametrize("bad", ["ndgc@10", "ndcg@0", "ndcg@x", "pair_accuracy@5", "f1@3",
                                 "fbeta:", "fbeta:-1", "fbeta:abc", "auc", ""])
def test_unknown_names_list_valid_forms(bad):
    with pytest.raises(ValueError, match=r"valid forms: ndcg, ndcg@<k>, .*fbeta:<beta>"):
        get_metric(bad)


def test_non_string_name():
    with pytest.raises(ValueError, match="metric name must be a string"):
        get_metric(10)


def test_objectives_part_lists_every_objective():
    assert set(OBJECTIVES) == {"ranknet", "lambdarank", "focal", "fbeta_surrogate"}


# --- objective part of the registry -------------------------------------------------

def test_get_objective_by_name_and_shorthand():
    from gbrank._registry import get_objective
    from gbrank.objectives import FBetaSurrogate, FocalLoss, LambdaRank, RankNet

    assert isinstance(get_objective("ranknet"), RankNet)
    assert isinstance(get_objective("focal", gamma=1.0), FocalLoss)
    assert isinstance(get_objective("fbeta_surrogate", beta=2.0), FBetaSurrogate)
    obj = get_objective("LambdaRank:err", truncation=5)
    assert isinstance(obj, LambdaRank)
    assert (obj.metric, obj.truncation) == ("err", 5)


def test_get_objective_errors():
    from gbrank._registry import get_objective

    with pytest.raises(ValueError, match="unknown objective 'foo'; valid: ranknet"):
        get_objective("foo")
    with pytest.raises(ValueError, match="unknown objective 'ranknet:err'"):
        get_objective("ranknet:err")
    with pytest.raises(ValueError, match="already names the metric"):
        get_objective("lambdarank:err", metric="ndcg")
    with pytest.raises(ValueError, match="metric must be one of"):
        get_objective("lambdarank:auc")
