"""Ranking metrics against slow references written from docs/contract.md, LightGBM,
XGBoost, trec_eval, sklearn."""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from reference.metrics import (
    ap_q,
    err_q,
    in_row_order,
    mean_over_queries,
    ndcg_q,
    precision_q,
    recall_q,
    rr_q,
)
from reference.metrics import (
    pair_accuracy as ref_pair_accuracy,
)

from gbrank import metrics
from gbrank._kernels._topk import top_k_order
from gbrank.metrics._ranking import (
    _ndcg_per_query,
    _pair_counts,
    _recall_per_query,
    _rr_per_query,
)

# ---------------------------------------------------------------- random cases


@st.composite
def ranking_cases(draw, max_queries=5, max_size=12, max_grade=4):
    """y, s and one of: group sizes, out-of-order qid, nothing; optional weights.

    Scores come partly from a tiny integer set so ties are common; queries of one
    row and all-zero queries occur.
    """
    sizes = draw(st.lists(st.integers(1, max_size), min_size=1, max_size=max_queries))
    n = sum(sizes)
    y = draw(st.lists(st.integers(0, max_grade), min_size=n, max_size=n))
    score = st.one_of(st.integers(-2, 2).map(float),
                      st.floats(-10, 10, allow_nan=False, allow_infinity=False))
    s = draw(st.lists(score, min_size=n, max_size=n))
    mode = draw(st.sampled_from(["group", "qid", "qid_runs", "none"]))
    group = qid = weight = None
    nq = len(sizes)
    if mode == "group" and nq > 1 and max(sizes) == 1:
        mode = "qid"  # group= of n ones is refused (the ids of one query, or nothing to rank)
    if mode == "group":
        group = sizes
    elif mode == "qid":  # rows of a query anywhere
        ids = np.repeat(np.arange(nq) * 7 + 3, sizes)
        qid = list(draw(st.permutations(list(ids))))
    elif mode == "qid_runs":  # each query one run, ids not ascending
        ids = draw(st.permutations(list(np.arange(nq) * 7 + 3)))
        qid = list(np.repeat(ids, sizes))
    else:
        nq = 1
    wmode = draw(st.sampled_from(["none", "query", "row"]))
    if wmode != "none":
        wq = draw(st.lists(st.floats(0.1, 3.0), min_size=nq, max_size=nq))
        if wmode == "query":
            weight = wq
        else:  # per row, constant within each query
            if qid is not None:
                ids_sorted = sorted(set(qid))
                weight = [wq[ids_sorted.index(q)] for q in qid]
            elif group is not None:
                weight = list(np.repeat(wq, sizes))
            else:
                weight = [wq[0]] * n
    return (np.array(y, dtype=float), np.array(s, dtype=float), group, qid, weight)


KS = st.sampled_from([None, 1, 2, 3, 5, 10])

# name -> (gbrank call(y, s, group, qid, weight, k), per-query reference(y, s, k))
CASES = {
    "ndcg": (lambda y, s, g, q, w, k: metrics.ndcg(y, s, g, k, qid=q, weight=w),
             lambda y, s, k: ndcg_q(y, s, k)),
    "ndcg_linear": (lambda y, s, g, q, w, k: metrics.ndcg(y, s, g, k, qid=q, weight=w,
                                                          gain="linear"),
                    lambda y, s, k: ndcg_q(y, s, k, gain=lambda l: l)),
    "ndcg_label_gain": (
        lambda y, s, g, q, w, k: metrics.ndcg(y, s, g, k, [0.0, 0.5, 4.0, 3.0, 10.0],
                                              qid=q, weight=w),
        lambda y, s, k: ndcg_q(y, s, k, gain=lambda l: [0.0, 0.5, 4.0, 3.0, 10.0][int(l)])),
    "map": (lambda y, s, g, q, w, k: metrics.mean_ap(y, s, g, k, qid=q, weight=w),
            lambda y, s, k: ap_q(y, s, k)),
    "map_t2": (lambda y, s, g, q, w, k: metrics.mean_ap(y, s, g, k, 2, qid=q, weight=w),
               lambda y, s, k: ap_q(y, s, k, 2)),
    "mrr": (lambda y, s, g, q, w, k: metrics.mrr(y, s, g, k, qid=q, weight=w),
            lambda y, s, k: rr_q(y, s, k)),
    "precision": (lambda y, s, g, q, w, k: metrics.precision_at_k(y, s, g, k, qid=q, weight=w),
                  lambda y, s, k: precision_q(y, s, k)),
    "recall": (lambda y, s, g, q, w, k: metrics.recall_at_k(y, s, g, k, 2, qid=q, weight=w),
               lambda y, s, k: recall_q(y, s, k, 2)),
}


@pytest.mark.floors
@pytest.mark.parametrize("name", sorted(CASES))
@settings(max_examples=60, deadline=None)
@given(case=ranking_cases(), k=KS)
def test_against_slow_reference(name, case, k):
    y, s, group, qid, weight = case
    ours, ref = CASES[name]
    expected = mean_over_queries(lambda qy, qs: ref(qy, qs, k), y, s, group, qid, weight)
    assert ours(y, s, group, qid, weight, k) == pytest.approx(expected, rel=1e-12, abs=1e-14)


@pytest.mark.floors
@settings(max_examples=60, deadline=None)
@given(case=ranking_cases(), k=KS, g_max=st.sampled_from([None, 4, 6]))
def test_err_against_slow_reference(case, k, g_max):
    y, s, group, qid, weight = case
    top = max(y) if g_max is None else g_max
    expected = mean_over_queries(lambda qy, qs: err_q(qy, qs, k, top), y, s, group, qid,
                                 weight)
    got = metrics.err(y, s, group, k, g_max, qid=qid, weight=weight)
    assert got == pytest.approx(expected, rel=1e-12, abs=1e-14)


@pytest.mark.floors
@settings(max_examples=80, deadline=None)
@given(case=ranking_cases(max_size=20))
def test_pair_accuracy_against_brute_force(case):
    y, s, group, qid, weight = case
    expected = ref_pair_accuracy(y, s, group, qid, weight)
    assert metrics.pair_accuracy(y, s, group, qid=qid, weight=weight) == pytest.approx(
        expected, rel=1e-12)


# ---------------------------------------------------------------- per-partition statistics

def _weighted_mean(values, weights):
    """The metrics' own mean over queries (plain, or weighted by query)."""
    if weights is None:
        return float(np.mean(values))
    return float(np.dot(weights, values) / np.sum(weights))


@settings(max_examples=60, deadline=None)
@given(case=ranking_cases(), k=KS, gain=st.sampled_from(["exponential", "linear"]))
def test_ndcg_per_query_builds_ndcg(case, k, gain):
    y, s, group, qid, weight = case
    per_query = metrics.ndcg_per_query(y, s, group, k, qid=qid, weight=weight, gain=gain)
    values, queries = _ndcg_per_query(y, s, group, k, qid=qid, weight=weight, gain=gain)
    np.testing.assert_array_equal(per_query.values, values)
    assert (per_query.weights is None) == (queries.weights is None) == (weight is None)
    if weight is not None:
        np.testing.assert_array_equal(per_query.weights, queries.weights)
    assert per_query.values.size == queries.n_queries
    assert _weighted_mean(*per_query) == metrics.ndcg(y, s, group, k, qid=qid,
                                                      weight=weight, gain=gain)


def test_ndcg_per_query_label_gain_and_order():
    # Queries come in row order when contiguous; label_gain is passed through.
    y, s = [2, 0, 1, 0, 1], [0.3, 0.9, 0.1, 0.2, 0.8]
    lg = [0.0, 1.0, 5.0]
    per_query = metrics.ndcg_per_query(y, s, qid=[9, 9, 9, 4, 4], k=2, label_gain=lg)
    by_group = metrics.ndcg_per_query(y, s, group=[3, 2], k=2, label_gain=lg)
    np.testing.assert_array_equal(per_query.values, by_group.values)
    assert per_query.values[1] == 1.0 and per_query.weights is None
    assert float(np.mean(per_query.values)) == metrics.ndcg(y, s, [3, 2], 2, lg)


# name -> (per-query statistic, its mean metric, per-query reference); k and the
# relevance threshold (or g_max) passed alike to all three.
PER_QUERY = {
    "err": (metrics.err_per_query, metrics.err, lambda y, s, k, top: err_q(y, s, k, top)),
    "map": (metrics.mean_ap_per_query, metrics.mean_ap,
            lambda y, s, k, threshold: ap_q(y, s, k, threshold)),
    "mrr": (metrics.mrr_per_query, metrics.mrr,
            lambda y, s, k, threshold: rr_q(y, s, k, threshold)),
}


@pytest.mark.floors
@pytest.mark.parametrize("name", sorted(PER_QUERY))
@settings(max_examples=60, deadline=None)
@given(case=ranking_cases(), k=KS, extra=st.sampled_from([None, 1, 2, 6]))
def test_err_map_mrr_per_query_against_reference_and_their_mean(name, case, k, extra):
    y, s, group, qid, weight = case
    per_query_of, mean_of, ref = PER_QUERY[name]
    if name == "err":  # extra is max_grade (None: the largest label of the call)
        if extra is not None and extra < max(y):
            extra = int(max(y))
        top = max(y) if extra is None else extra
        expected = in_row_order(lambda qy, qs: ref(qy, qs, k, top), y, s, group, qid)
    else:  # extra is the relevance threshold
        extra = 1 if extra is None else extra
        expected = in_row_order(lambda qy, qs: ref(qy, qs, k, extra), y, s, group, qid)
    per_query = per_query_of(y, s, group, k, extra, qid=qid, weight=weight)
    np.testing.assert_allclose(per_query.values, expected, rtol=1e-12, atol=1e-14)
    assert (per_query.weights is None) == (weight is None)
    assert _weighted_mean(*per_query) == pytest.approx(
        mean_of(y, s, group, k, extra, qid=qid, weight=weight), rel=1e-12, abs=1e-15)


def test_err_map_mrr_per_query_hand_worked():
    y, s = [0, 1, 0, 2, 0], [0.9, 0.8, 0.1, 0.2, 0.5]
    # Query 1: relevant row at rank 2; query 2: the grade-2 row at rank 2.
    assert metrics.mrr_per_query(y, s, group=[3, 2]).values.tolist() == [0.5, 0.5]
    assert metrics.mean_ap_per_query(y, s, group=[3, 2]).values.tolist() == [0.5, 0.5]
    # g_max = 2: R(1) = 1/4, R(2) = 3/4, each found at rank 2 behind a grade-0 row.
    values = metrics.err_per_query(y, s, group=[3, 2]).values.tolist()
    assert values == [0.125, 0.375]
    weighted = metrics.err_per_query(y, s, qid=[5, 5, 5, 1, 1], weight=[1.0, 1.0, 1.0,
                                                                         3.0, 3.0])
    assert weighted.values.tolist() == [0.125, 0.375]  # contiguous: row order
    assert weighted.weights.tolist() == [1.0, 3.0]
    with pytest.raises(ValueError, match="k must be an integer"):
        metrics.mrr_per_query(y, s, k=0)
    with pytest.raises(ValueError, match="threshold must be a finite number"):
        metrics.mean_ap_per_query(y, s, threshold=np.nan)


@settings(max_examples=80, deadline=None)
@given(case=ranking_cases(max_size=20))
def test_pair_counts_build_pair_accuracy(case):
    y, s, group, qid, weight = case
    counts = metrics.pair_counts(y, s, group, qid=qid, weight=weight)
    good, pairs, queries = _pair_counts(y, s, group, qid=qid, weight=weight)
    np.testing.assert_array_equal(counts.good, good)
    np.testing.assert_array_equal(counts.pairs, pairs)
    assert (counts.weights is None) == (weight is None)
    w = np.ones(good.size) if counts.weights is None else counts.weights
    np.testing.assert_array_equal(w, np.ones(good.size) if queries.weights is None
                                  else queries.weights)
    den = float(np.sum(counts.pairs * w))
    expected = 1.0 if den == 0.0 else float(np.sum(counts.good * w)) / den
    assert expected == metrics.pair_accuracy(y, s, group, qid=qid, weight=weight)


def test_statistics_validate_like_their_metrics():
    with pytest.raises(ValueError, match="labels have 2 rows but scores have 3"):
        metrics.pair_counts([0, 1], [0.1, 0.2, 0.3])
    with pytest.raises(ValueError, match="k must be an integer"):
        metrics.ndcg_per_query([0, 1], [0.1, 0.2], k=0)


@settings(max_examples=80, deadline=None)
@given(s=st.lists(st.integers(-3, 3).map(float), min_size=1, max_size=90),
       k=st.integers(1, 80))
def test_top_k_order_is_head_of_stable_sort(s, k):
    s = np.array(s)
    expected = sorted(range(s.size), key=lambda i: (-s[i], i))[:k]
    assert top_k_order(s, k).tolist() == expected


def test_pair_accuracy_brute_force_random_with_ties():
    rng = np.random.default_rng(3)
    for _ in range(5):
        n = int(rng.integers(200, 400))
        y = rng.integers(0, 5, n).astype(float)
        s = rng.integers(0, 30, n).astype(float)  # many ties
        g = [n // 3, n // 3, n - 2 * (n // 3)]
        assert metrics.pair_accuracy(y, s, g) == pytest.approx(
            ref_pair_accuracy(y, s, g), rel=1e-13)


def test_pair_accuracy_non_integer_labels_and_known_values():
    assert metrics.pair_accuracy([0.5, 1.5, 2.25], [1.0, 2.0, 3.0]) == 1.0
    assert metrics.pair_accuracy([0.5, 1.5, 2.25], [3.0, 2.0, 1.0]) == 0.0
    assert metrics.pair_accuracy([0, 1], [1.0, 1.0]) == 0.5
    assert metrics.pair_accuracy([1, 1, 1], [1.0, 2.0, 3.0]) == 1.0  # no pair to order
    # Pooled, not averaged per query: 1 of 1 pair right, 0 of 3 right -> 1/4.
    assert metrics.pair_accuracy([0, 1, 0, 0, 0, 1], [0, 1, 1, 1, 1, 0], [2, 4]) == 0.25


def test_large_k_beyond_buffer_path():
    rng = np.random.default_rng(5)
    y = rng.integers(0, 5, 300).astype(float)
    s = rng.integers(0, 40, 300).astype(float)
    g = [150, 100, 50]
    for k in (65, 70, 100, 120):
        for fn, ref in ((metrics.ndcg, ndcg_q), (metrics.mean_ap, ap_q),
                        (metrics.precision_at_k, precision_q), (metrics.err, err_q)):
            expected = mean_over_queries(lambda qy, qs, ref=ref, k=k: ref(qy, qs, k), y, s, g)
            assert fn(y, s, g, k) == pytest.approx(expected, rel=1e-12)



def test_full_sorts_of_short_and_long_queries_in_one_call():
    # Cut-offs beyond the selection buffer sort whole queries: by counting ranks up to
    # 512 rows, by the stable sort above; both in one call, with ties, linear gain too.
    rng = np.random.default_rng(6)
    g = [600, 30, 1, 130, 700, 64]
    n = sum(g)
    y = rng.integers(0, 5, n).astype(float)
    s = rng.integers(0, 60, n).astype(float)
    for k in (None, 65, 100):
        for fn, ref in ((metrics.ndcg, ndcg_q), (metrics.mean_ap, ap_q),
                        (metrics.precision_at_k, precision_q), (metrics.err, err_q)):
            expected = mean_over_queries(lambda qy, qs, ref=ref, k=k: ref(qy, qs, k), y, s, g)
            assert fn(y, s, g, k) == pytest.approx(expected, rel=1e-12)
        expected = mean_over_queries(
            lambda qy, qs, k=k: ndcg_q(qy, qs, k, gain=lambda l: l), y, s, g)
        assert metrics.ndcg(y, s, g, k, gain="linear") == pytest.approx(expected, rel=1e-12)


# ---------------------------------------------------------------- hand-worked


def test_err_hand_worked():
    # Ranking by score: grades 3, 2, 0, 1; g_max = 3 so R = 7/8, 3/8, 0, 1/8.
    y, s = [1, 0, 2, 3], [0.1, 0.2, 0.5, 0.9]
    # 7/8 + (1/2)(3/8)(1/8) + 0 + (1/4)(1/8)(1/8)(5/8) = 0.90087890625
    assert metrics.err(y, s, k=None) == 0.90087890625
    assert metrics.err(y, s, k=2) == 0.875 + 3 / 128
    # A fixed g_max = 4 halves every R: 7/16 + (1/2)(3/16)(9/16) = 0.490234375
    assert metrics.err(y, s, k=2, max_grade=4) == 0.490234375
    assert metrics.err([0, 0], [1.0, 2.0]) == 0.0


def test_ndcg_hand_worked_and_rules():
    # ranking: grades 0, 2, 1 -> DCG = 3/log2(3) + 1/2; IDCG = 3 + 1/log2(3)
    y, s = [2, 1, 0], [0.5, 0.1, 0.9]
    expected = (3 / math.log2(3) + 0.5) / (3 + 1 / math.log2(3))
    assert metrics.ndcg(y, s, k=None) == pytest.approx(expected, rel=1e-15)
    assert metrics.ndcg([0, 0, 0], [1.0, 2.0, 3.0]) == 1.0  # IDCG 0 scores 1
    # Tie: the earlier row ranks first (stable), so [1, 0] tied -> perfect, [0, 1] not.
    assert metrics.ndcg([1, 0], [5.0, 5.0], k=1) == 1.0
    assert metrics.ndcg([0, 1], [5.0, 5.0], k=1) == 0.0


def test_mrr_map_precision_recall_hand_worked():
    y, s = [0, 1, 0, 2], [4.0, 3.0, 2.0, 1.0]
    assert metrics.mrr(y, s) == 0.5
    assert metrics.mrr(y, s, k=1) == 0.0
    assert metrics.mean_ap(y, s) == pytest.approx((1 / 2 + 2 / 4) / 2)
    assert metrics.mean_ap(y, s, k=2) == pytest.approx((1 / 2) / 2)
    assert metrics.precision_at_k(y, s, k=2) == 0.5
    assert metrics.recall_at_k(y, s, k=2) == 0.5
    assert metrics.precision_at_k(y, s, k=10) == 0.5  # divides by min(k, n) = 4
    assert metrics.recall_at_k([0, 0], [1.0, 2.0], k=1) == 1.0  # nothing to find
    assert metrics.mean_ap([0, 0], [1.0, 2.0]) == 1.0


def test_weights_per_query_and_per_row_agree():
    rng = np.random.default_rng(0)
    g = np.array([4, 6, 5])
    y = rng.integers(0, 4, g.sum()).astype(float)
    s = rng.normal(size=g.sum())
    wq = np.array([1.0, 3.0, 0.5])
    per_q = metrics.ndcg(y, s, g, 3, weight=wq)
    assert per_q == metrics.ndcg(y, s, g, 3, weight=np.repeat(wq, g))
    vals = [metrics.ndcg(y[a:b], s[a:b], k=3) for a, b in ((0, 4), (4, 10), (10, 15))]
    assert per_q == pytest.approx(np.average(vals, weights=wq), rel=1e-14)


# ---------------------------------------------------------------- peers


@pytest.fixture(scope="module")
def lgb_model(rank_data):
    lgb = pytest.importorskip("lightgbm")
    d = rank_data
    params = {"objective": "lambdarank", "metric": ["ndcg", "map"], "eval_at": [1, 3, 5, 10],
              "verbose": -1, "num_leaves": 31, "min_data_in_leaf": 50, "learning_rate": 0.1,
              "num_threads": 1}
    dtr = lgb.Dataset(d["X_train"], d["y_train"], group=d["g_train"])
    dte = lgb.Dataset(d["X_test"], d["y_test"], group=d["g_test"], reference=dtr)
    booster = lgb.train(params, dtr, 30, valid_sets=[dte], keep_training_booster=True)
    return booster


def _ties_and_zero_queries(y, p, g):
    off = np.concatenate(([0], np.cumsum(g)))
    ties = sum(np.unique(p[a:b]).size < b - a for a, b in zip(off[:-1], off[1:], strict=True))
    zero = sum(y[a:b].max() == 0 for a, b in zip(off[:-1], off[1:], strict=True))
    return ties, zero


@pytest.mark.floors
@pytest.mark.parametrize("part", ["train", "test"])
def test_ndcg_and_map_equal_lightgbm(lgb_model, rank_data, part):
    X, y, g = rank_data[f"X_{part}"], rank_data[f"y_{part}"], rank_data[f"g_{part}"]
    pred = lgb_model.predict(X)
    ties, zero = _ties_and_zero_queries(y, pred, g)
    assert ties > 0  # the tie rule is exercised
    if part == "train":
        assert zero > 0  # and the IDCG = 0 rule
    # eval_train / eval_valid return LightGBM's own doubles.
    results = lgb_model.eval_train() if part == "train" else lgb_model.eval_valid()
    seen = set()
    for _, name, value, _ in results:
        family, k = name.split("@")
        fn = metrics.ndcg if family == "ndcg" else metrics.mean_ap
        assert fn(y, pred, g, int(k)) == pytest.approx(value, abs=1e-12), name
        seen.add(name)
    assert seen == {f"{m}@{k}" for m in ("ndcg", "map") for k in (1, 3, 5, 10)}


@pytest.mark.floors
def test_label_gain_equals_lightgbm(rank_data):
    lgb = pytest.importorskip("lightgbm")
    d = rank_data
    gains = [0.0, 1.0, 2.0, 3.0, 4.0]
    params = {"objective": "lambdarank", "metric": "ndcg", "eval_at": [3, 10],
              "label_gain": gains, "verbose": -1, "num_threads": 1}
    wq = np.linspace(0.5, 2.0, len(d["g_test"]))
    dtr = lgb.Dataset(d["X_train"], d["y_train"], group=d["g_train"])
    dte = lgb.Dataset(d["X_test"], d["y_test"], group=d["g_test"],
                      weight=np.repeat(wq, d["g_test"]), reference=dtr)
    booster = lgb.train(params, dtr, 10, valid_sets=[dte])
    pred = booster.predict(d["X_test"])
    for _, name, value, _ in booster.eval_valid():
        k = int(name.split("@")[1])
        ours = metrics.ndcg(d["y_test"], pred, d["g_test"], k, gains, weight=wq)
        assert ours == pytest.approx(value, abs=1e-12)
        # label_gain = grade is the linear gain
        assert metrics.ndcg(d["y_test"], pred, d["g_test"], k, gain="linear",
                            weight=wq) == pytest.approx(value, abs=1e-12)


@pytest.mark.floors
def test_linear_ndcg_recall_rr_equal_trec_eval(rank_data):
    pytrec_eval = pytest.importorskip("pytrec_eval")
    y, g = rank_data["y_test"], rank_data["g_test"]
    rng = np.random.default_rng(0)
    s = rng.permutation(y.size) / y.size  # tie-free: trec_eval breaks ties by doc id
    off = np.concatenate(([0], np.cumsum(g)))
    qrels, run = {}, {}
    for q, (a, b) in enumerate(zip(off[:-1], off[1:], strict=True)):
        qrels[f"q{q}"] = {f"d{i}": int(y[i]) for i in range(a, b)}
        run[f"q{q}"] = {f"d{i}": float(s[i]) for i in range(a, b)}
    cuts = (1, 3, 5, 10)
    measures = {f"ndcg_cut.{','.join(map(str, cuts))}", "recall.5", "recip_rank"}
    trec = pytrec_eval.RelevanceEvaluator(qrels, measures).evaluate(run)
    has_rel = np.array([y[a:b].max() > 0 for a, b in zip(off[:-1], off[1:], strict=True)])
    assert has_rel.sum() >= 40
    for k in cuts:
        ours, _ = _ndcg_per_query(y, s, g, k, gain="linear")
        theirs = np.array([trec[f"q{q}"][f"ndcg_cut_{k}"] for q in range(len(g))])
        np.testing.assert_allclose(ours[has_rel], theirs[has_rel], rtol=1e-12, atol=1e-15)
    rec, _ = _recall_per_query(y, s, g, 5)
    np.testing.assert_allclose(rec[has_rel], [trec[f"q{q}"]["recall_5"]
                                              for q in np.flatnonzero(has_rel)], rtol=1e-12)
    rr, _ = _rr_per_query(y, s, g)
    np.testing.assert_allclose(rr[has_rel], [trec[f"q{q}"]["recip_rank"]
                                             for q in np.flatnonzero(has_rel)], rtol=1e-12)


@pytest.mark.floors
@pytest.mark.parametrize("k", [1, 5, 10, None])
def test_linear_ndcg_equals_sklearn(k):
    from sklearn.metrics import ndcg_score

    rng = np.random.default_rng(1)
    Y = rng.integers(0, 5, (30, 20)).astype(float)
    Y[:, 0] = 1.0  # no all-zero query (sklearn scores those 0, LightGBM 1)
    Y[::3] += rng.random((10, 20))  # linear gain takes non-integer relevance
    S = rng.normal(size=(30, 20))
    ours = metrics.ndcg(Y.ravel(), S.ravel(), [20] * 30, k, gain="linear")
    assert ours == pytest.approx(ndcg_score(Y, S, k=k), rel=1e-12)


@pytest.mark.floors
def test_precision_equals_xgboost_pre(rank_data):
    xgb = pytest.importorskip("xgboost")
    d = rank_data
    yb_tr, yb_te = (d["y_train"] >= 1).astype(float), (d["y_test"] >= 1).astype(float)
    dtr = xgb.DMatrix(d["X_train"], yb_tr, group=d["g_train"])
    dte = xgb.DMatrix(d["X_test"], yb_te, group=d["g_test"])
    booster = xgb.train({"objective": "rank:pairwise", "eval_metric": ["pre@5", "pre@20"],
                         "nthread": 1}, dtr, 10)
    pred = booster.predict(dte)
    text = booster.eval(dte)
    values = dict(item.split(":") for item in text.split("\t")[1:])
    assert max(d["g_test"]) > 20 > min(d["g_test"])  # min(k, n) is exercised
    for k in (5, 20):
        assert metrics.precision_at_k(yb_te, pred, d["g_test"], k) == pytest.approx(
            float(values[f"eval-pre@{k}"]), abs=1e-12)


# ---------------------------------------------------------------- scale


def test_group_less_million_rows_every_metric():
    n = 1_000_000
    rng = np.random.default_rng(7)
    y = rng.integers(0, 5, n).astype(float)
    s = np.round(y * 0.3 + rng.normal(size=n), 2)  # ties
    # NDCG@10: top ten by stable descending order, ideal = ten highest grades.
    top = np.lexsort((np.arange(n), -s))[:10]
    disc = 1.0 / np.log2(np.arange(2, 12))
    ideal = np.sort(y)[::-1][:10]
    expected = np.sum((2.0 ** y[top] - 1) * disc) / np.sum((2.0**ideal - 1) * disc)
    assert metrics.ndcg(y, s) == pytest.approx(expected, rel=1e-12)
    # Pair accuracy by an independent count: per grade, lower-grade scores below/equal.
    good = 0.0
    for lab in range(1, 5):
        lower = np.sort(s[y < lab])
        mine = s[y == lab]
        lt = np.searchsorted(lower, mine, "left")
        le = np.searchsorted(lower, mine, "right")
        good += lt.sum() + 0.5 * (le - lt).sum()
    counts = np.bincount(y.astype(int))
    pairs = n * (n - 1) / 2 - np.sum(counts * (counts - 1) / 2)
    assert metrics.pair_accuracy(y, s) == pytest.approx(good / pairs, rel=1e-12)
    # ERR@10, MRR, precision/recall@10 by hand from the same top ten (threshold 1).
    r = (2.0 ** y[top] - 1) / 2.0 ** y.max()
    reach = np.concatenate(([1.0], np.cumprod(1 - r)[:-1]))
    assert metrics.err(y, s) == pytest.approx(np.sum(r * reach / np.arange(1, 11)), rel=1e-12)
    first = int(np.argmax(y[np.lexsort((np.arange(n), -s))] >= 1))
    assert metrics.mrr(y, s) == 1.0 / (first + 1)
    hits = np.sum(y[top] >= 1)
    assert metrics.precision_at_k(y, s) == hits / 10
    assert metrics.recall_at_k(y, s) == pytest.approx(hits / np.sum(y >= 1), rel=1e-15)
    assert metrics.mean_ap(y, s, k=None) == pytest.approx(
        ap_q(list(y), list(s), None), rel=1e-9)


def test_weighted_ndcg_with_queries_without_relevant_rows_against_lightgbms_rule():
    """The difference docs/contract.md §3 names: gbrank weights a query without a
    relevant row (NDCG 1) like every query; LightGBM's weighted ndcg@k adds its 1
    unweighted and divides by the sum of all weights (ninth probe: 0.808 against 0.846).
    Both rules computed by hand from per-query values; if LightGBM changes its rule, the
    contract's sentence is stale and this test says so."""
    lgb = pytest.importorskip("lightgbm")
    rng = np.random.default_rng(3)
    sizes = rng.integers(2, 40, 60)
    off = np.concatenate(([0], np.cumsum(sizes)))
    X = rng.standard_normal((int(sizes.sum()), 3))
    y = rng.integers(0, 5, int(sizes.sum())).astype(float)
    for q in range(5, 10):
        y[off[q]:off[q + 1]] = 0.0
    w = rng.random(60) + 0.2
    ev: dict = {}
    ds = lgb.Dataset(X, y, group=sizes, weight=np.repeat(w, sizes))
    booster = lgb.train({"objective": "lambdarank", "metric": "ndcg", "eval_at": [10],
                         "verbose": -1, "num_threads": 1}, ds, 3, valid_sets=[ds],
                        valid_names=["t"], callbacks=[lgb.record_evaluation(ev)])
    p = booster.predict(X)
    per_query = np.array([metrics.ndcg(y[off[q]:off[q + 1]], p[off[q]:off[q + 1]], k=10)
                          for q in range(60)])
    empty = np.array([y[off[q]:off[q + 1]].max() == 0 for q in range(60)])
    assert metrics.ndcg(y, p, sizes, k=10, weight=w) == pytest.approx(
        np.dot(per_query, w) / w.sum(), abs=1e-12)
    lightgbm_rule = (np.dot(per_query[~empty], w[~empty]) + empty.sum()) / w.sum()
    assert ev["t"]["ndcg@10"][-1] == pytest.approx(lightgbm_rule, abs=1e-6)
    assert abs(lightgbm_rule - np.dot(per_query, w) / w.sum()) > 0.01
