"""Validation and the group helper: every user error is a ValueError naming the problem,
raised before any kernel runs (through the public metrics and directly)."""

from __future__ import annotations

import numpy as np
import pytest

from gbrank import metrics
from gbrank._queries import prepare_ranking, query_structure
from gbrank._validation import (
    check_bool,
    check_choice,
    check_integer,
    check_number,
    check_row_weights,
    check_threshold,
)
from gbrank.objectives import LambdaRank

RANKING = [metrics.ndcg, metrics.err, metrics.mean_ap, metrics.mrr, metrics.precision_at_k,
           metrics.recall_at_k, metrics.pair_accuracy]
NEEDS_INTEGERS = [metrics.ndcg, metrics.err]


@pytest.mark.parametrize("fn", RANKING)
def test_nan_inf_scores_count_and_first_index(fn):
    s = [0.1, 0.2, np.nan, 0.3, np.inf, np.nan]
    with pytest.raises(ValueError, match=r"scores contain 3 NaN/inf value\(s\) \(first at "
                                         r"index 2: nan\)"):
        fn([0, 1, 2, 0, 1, 0], s)


@pytest.mark.parametrize("fn", RANKING)
def test_group_sum_mismatch_shows_both_numbers(fn):
    with pytest.raises(ValueError, match="group sizes sum to 5 but there are 6 rows"):
        fn([0, 1, 2, 0, 1, 0], np.arange(6.0), [2, 3])


@pytest.mark.parametrize("fn", RANKING)
def test_negative_grades(fn):
    with pytest.raises(ValueError, match=r"non-negative grades; 2 negative \(first at index 1"):
        fn([0, -1, 2, -3], np.arange(4.0))


@pytest.mark.parametrize("fn", NEEDS_INTEGERS)
def test_non_integer_grades_where_gain_needs_integers(fn):
    with pytest.raises(ValueError, match=r"integer grades for gain 2\*\*l - 1; 1 non-integer "
                                         r"\(first at index 2: 1\.5\)"):
        fn([0, 1, 1.5], np.arange(3.0))


def test_non_integer_grades_fine_where_no_gain():
    y, s = [0, 1.5, 0.5], [0.3, 0.2, 0.1]
    assert metrics.ndcg(y, s, gain="linear") < 1.0
    assert metrics.pair_accuracy(y, s) == pytest.approx(1 / 3)
    assert metrics.mean_ap(y, s, threshold=0.5) == pytest.approx((1 / 2 + 2 / 3) / 2)


@pytest.mark.parametrize("fn", NEEDS_INTEGERS)
def test_grades_too_large(fn):
    with pytest.raises(ValueError, match=r"grade 60\.0 at index 1 is too large; 2\*\*l - 1 is "
                                         r"exact in float64 only up to l = 53"):
        fn([0, 60, 1], np.arange(3.0))


def test_label_gain_and_max_grade_ranges():
    # Metric and objective share the rule and the message (one check in _validation).
    msg = r"grade 5\.0 at index 1 is too large; label_gain has only 3 entries \(grades 0\.\.2\)"
    with pytest.raises(ValueError, match=msg):
        metrics.ndcg([0, 5, 1], [0.1, 0.2, 0.3], label_gain=[0, 1, 3])
    with pytest.raises(ValueError, match=msg):
        LambdaRank(label_gain=[0, 1, 3]).grad_hess([0, 5, 1], [0.1, 0.2, 0.3])
    msg = r"grade 3\.0 at index 1 is too large; it exceeds max_grade=2"
    with pytest.raises(ValueError, match=msg):
        metrics.err([0, 3, 1], [0.1, 0.2, 0.3], max_grade=2)
    with pytest.raises(ValueError, match=msg):
        LambdaRank(metric="err", max_grade=2).grad_hess([0, 3, 1], [0.1, 0.2, 0.3])
    with pytest.raises(ValueError, match="pass either label_gain or gain='linear'"):
        metrics.ndcg([0, 1], [0.1, 0.2], label_gain=[0, 1], gain="linear")
    with pytest.raises(ValueError, match=r"gain must be one of \['exponential', 'linear'\], "
                                         r"got 'log'"):
        metrics.ndcg([0, 1], [0.1, 0.2], gain="log")


@pytest.mark.parametrize("fn", RANKING)
def test_empty_input(fn):
    with pytest.raises(ValueError, match="labels is empty"):
        fn([], [])


@pytest.mark.parametrize("fn", RANKING)
def test_mismatched_lengths(fn):
    with pytest.raises(ValueError, match="labels have 3 rows but scores have 2"):
        fn([0, 1, 2], [0.1, 0.2])


@pytest.mark.parametrize("fn", [metrics.ndcg, metrics.err, metrics.mean_ap, metrics.mrr,
                                metrics.precision_at_k, metrics.recall_at_k])
@pytest.mark.parametrize("k", [0, -1, 2.5, True])
def test_bad_k(fn, k):
    with pytest.raises(ValueError, match=r"k must be an integer in \[1, inf\] or None, got "):
        fn([0, 1], [0.1, 0.2], k=k)


def test_nan_labels():
    with pytest.raises(ValueError, match=r"labels contain 1 NaN/inf value\(s\) \(first at "
                                         r"index 0"):
        metrics.pair_accuracy([np.nan, 1], [0.1, 0.2])


# ------------------------------------------------------------ the group helper


def test_group_helper_errors():
    with pytest.raises(ValueError, match="either group .* or qid"):
        query_structure(3, group=[3], qid=[0, 0, 0])
    with pytest.raises(ValueError, match=r"group sizes must be positive; 1 are not \(first at "
                                         r"query 1: 0\)"):
        query_structure(3, group=[3, 0])
    with pytest.raises(ValueError, match="group sizes must be integers"):
        query_structure(3, group=[1.5, 1.5])
    with pytest.raises(ValueError, match="qid has 2 entries but there are 3 rows"):
        query_structure(3, qid=[0, 1])
    with pytest.raises(ValueError, match=r"weight has 2 entries; expected one per query \(1\) "
                                         r"or per row \(3\)"):
        query_structure(3, weight=[1.0, 2.0])
    with pytest.raises(ValueError, match="weights must be non-negative"):
        query_structure(3, group=[1, 2], weight=[1.0, -1.0])
    with pytest.raises(ValueError, match="weights are all zero"):
        query_structure(3, group=[1, 2], weight=[0.0, 0.0])
    with pytest.raises(ValueError, match="rows of query 1 have different weights"):
        query_structure(4, group=[2, 2], weight=[1.0, 1.0, 2.0, 3.0])


def test_group_helper_structure_and_restore():
    q = query_structure(6, qid=[5, 2, 5, 2, 9, 2], weight=[1.0, 2.0, 1.0, 2.0, 3.0, 2.0])
    assert q.offsets.tolist() == [0, 3, 5, 6]
    assert q.order.tolist() == [1, 3, 5, 0, 2, 4]  # stable: rows keep their order
    assert q.weights.tolist() == [2.0, 1.0, 3.0]
    a = np.arange(6.0)
    assert np.array_equal(q.restore(q.apply(a)), a)
    y, s, qq = prepare_ranking([0, 1, 2, 3, 4, 0], np.arange(6.0), qid=[1, 0, 1, 0, 1, 0])
    assert y.tolist() == [1, 3, 0, 0, 2, 4] and qq.sizes.tolist() == [3, 3]
    assert query_structure(4).offsets.tolist() == [0, 4]  # group-less: one query


def test_contiguous_qid_in_any_order_is_not_permuted():
    """Each query one run of rows, ids not ascending: no permutation (no copies of the
    inputs); one weight per query still goes by ascending id."""
    q = query_structure(6, qid=[9, 9, 2, 2, 2, 5], weight=[1.0, 2.0, 3.0])
    assert q.order is None
    assert q.offsets.tolist() == [0, 2, 5, 6]
    assert q.weights.tolist() == [3.0, 1.0, 2.0]  # queries 9, 2, 5 get ids' weights
    y = np.array([0.0, 1.0, 2.0, 0.0, 1.0, 3.0])
    got, _, qq = prepare_ranking(y, np.arange(6.0), qid=["b", "b", "a", "a", "a", "c"])
    assert got is y and qq.order is None and qq.sizes.tolist() == [2, 3, 1]
    # A query split over two runs is permuted (stable, int32).
    split = query_structure(5, qid=[4, 1, 1, 4, 7])
    assert split.order.dtype == np.int32 and split.order.tolist() == [1, 2, 0, 3, 4]
    assert split.offsets.tolist() == [0, 2, 4, 5]


# ------------------------------------------------------------ scalar parameter rules


def test_integer_rule_accepts_what_users_pass():
    y = np.array([0.0, 2.0, 1.0, 4.0, 0.0, 3.0])
    s = np.array([0.1, 0.4, 0.3, 0.2, 0.0, 0.5])
    g = [3, 3]
    ref = metrics.err(y, s, g, max_grade=4)
    assert metrics.err(y, s, g, max_grade=y.max()) == ref  # np.float64(4.0)
    assert metrics.err(y, s, g, max_grade=np.int32(4)) == ref
    assert metrics.ndcg(y, s, g, k=np.float64(2.0)) == metrics.ndcg(y, s, g, k=2)
    assert check_integer(np.uint8(7), "n") == 7 and type(check_integer(7.0, "n")) is int
    assert check_integer(None, "n", allow_none=True) is None
    for bad in (True, 2.5, np.nan, "3", None, [3]):
        with pytest.raises(ValueError, match=r"n must be an integer in \[1, 9\], got "):
            check_integer(bad, "n", 1, 9)
    with pytest.raises(ValueError, match=r"n must be an integer in \[1, 9\], got 10"):
        check_integer(10, "n", 1, 9)


def test_number_rule_names_parameter_value_and_interval():
    assert check_number(np.float32(0.5), "x", 0, 1) == 0.5
    assert check_number(3, "x") == 3.0 and type(check_number(3, "x")) is float
    cases = [
        (0.0, dict(low=0.0, low_open=True), r"x must be a finite number in \(0, inf\), got 0\.0"),
        (1.0, dict(low=0.0, high=1.0, high_open=True), r"in \[0, 1\), got 1\.0"),
        (-1, dict(low=0.0), r"in \[0, inf\), got -1"),
        (np.inf, {}, r"in \(-inf, inf\), got inf"),
        (np.nan, {}, "got nan"), (True, {}, "got True"), ("1", {}, "got '1'"),
    ]
    for value, kw, match in cases:
        with pytest.raises(ValueError, match=match):
            check_number(value, "x", **kw)


def test_choice_and_bool_rules():
    assert check_choice("a", "mode", ("a", "b")) == "a"
    with pytest.raises(ValueError, match=r"mode must be one of \['a', 'b'\], got 'A'"):
        check_choice("A", "mode", ("a", "b"))
    with pytest.raises(ValueError, match=r"mode must be one of .* got \['a'\]"):
        check_choice(["a"], "mode", ("a", "b"))
    assert check_bool(np.bool_(True), "flag") is True
    with pytest.raises(ValueError, match="flag must be True or False, got 1"):
        check_bool(1, "flag")


@pytest.mark.parametrize("bad", [np.inf, -np.inf, np.nan])
def test_one_threshold_rule_everywhere(bad):
    # One rule: a threshold is a finite number, in ranking and binary metrics alike.
    from gbrank.lightgbm import feval

    match = r"threshold must be a finite number in \(-inf, inf\)"
    y, s = [0, 1, 2], [0.1, 0.3, 0.2]
    calls = [
        lambda: check_threshold(bad),
        lambda: metrics.mean_ap(y, s, threshold=bad),
        lambda: metrics.mrr(y, s, threshold=bad),
        lambda: metrics.precision_at_k(y, s, threshold=bad),
        lambda: metrics.fbeta([0, 1, 1], s, threshold=bad),
        lambda: metrics.balanced_measure([0, 1, 1], s, threshold=bad),
        lambda: metrics.get_metric("f1").with_threshold(bad),
        lambda: feval("f1", threshold=bad),
        lambda: LambdaRank(metric="map", threshold=bad).grad_hess(y, s),
    ]
    for call in calls:
        with pytest.raises(ValueError, match=match):
            call()


def test_row_weight_rule():
    np.testing.assert_array_equal(check_row_weights([1, 2], 2), [1.0, 2.0])
    assert check_row_weights(None, 3) is None
    with pytest.raises(ValueError, match="weight has 1 entries but there are 2 rows"):
        check_row_weights([1.0], 2)
    with pytest.raises(ValueError, match=r"weights must be non-negative; 1 negative \(first at "
                                         r"index 1: -1\.0\)"):
        check_row_weights([1.0, -1.0], 2)
    with pytest.raises(ValueError, match="weights are all zero"):
        check_row_weights([0.0, 0.0], 2)
    with pytest.raises(ValueError, match="weights contain 1 NaN/inf"):
        check_row_weights([0.0, np.nan], 2)
    # The binary metrics and the per-row objective use the same rule.
    from gbrank.objectives import FocalLoss

    for call in (lambda: metrics.f1([0, 1], [0.1, 0.2], weight=[0.0, 0.0]),
                 lambda: FocalLoss().grad_hess([0, 1], [0.1, 0.2], weight=[0.0, 0.0])):
        with pytest.raises(ValueError, match="weights are all zero"):
            call()


@pytest.mark.parametrize("bad", [np.nan, np.inf])
def test_non_finite_qid_is_refused(bad):
    # NaN != NaN: without the check each NaN row would become a query of its own.
    qid = np.array([1.0, 1.0, bad, 2.0])
    with pytest.raises(ValueError, match="qid must be finite: 1 NaN/inf ids, first at row 2"):
        query_structure(4, qid=qid)


@pytest.mark.parametrize("sigma", [0.0, -1.0, 1e200, float("nan"), True])
def test_sigma_rule(sigma):
    # One rule for the pair sigmoid's steepness (σ = 1e200 once gave NaN gradients).
    from gbrank.objectives import LambdaRank, RankNet

    for cls in (RankNet, LambdaRank):
        with pytest.raises(ValueError,
                           match=r"sigma must be a finite number in \(0, 1e\+06\]"):
            cls(sigma=sigma).grad_hess([0.0, 1.0], [0.0, 1.0])


def test_repeated_position_finds_merged_sessions():
    from gbrank._validation import repeated_position

    pos = np.array([1, 2, 3, 1, 2, 1, 2, 1])
    assert repeated_position(pos, np.array([3, 2, 3])) == (2, 1, 2)  # list 2: 1, 2, 1
    assert repeated_position(pos, np.array([3, 2, 2, 1])) is None
    assert repeated_position(pos, None) is None


def test_missing_positions_name_the_fix():
    from gbrank._validation import check_positions

    with pytest.raises(ValueError, match=r"position is missing \(NaN/inf\) on 2 rows \(first "
                       r"at index 1\).*leave out rows that were not displayed"):
        check_positions([1, np.nan, 3, np.inf], 4, low=1)
