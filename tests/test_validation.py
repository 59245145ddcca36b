"""Validation and the group helper: every user error is a ValueError naming the problem,
raised before any kernel runs (through the public metrics and directly)."""

from __future__ import annotations

import numpy as np
import pytest

from gbrank import metrics
from gbrank._validation import prepare_ranking, query_structure

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
    with pytest.raises(ValueError, match=r"grade 5 has no entry in label_gain \(length 3"):
        metrics.ndcg([0, 5, 1], [0.1, 0.2, 0.3], label_gain=[0, 1, 3])
    with pytest.raises(ValueError, match="grade 3 exceeds max_grade=2"):
        metrics.err([0, 3, 1], [0.1, 0.2, 0.3], max_grade=2)
    with pytest.raises(ValueError, match="pass either label_gain or gain='linear'"):
        metrics.ndcg([0, 1], [0.1, 0.2], label_gain=[0, 1], gain="linear")
    with pytest.raises(ValueError, match="gain must be 'exponential' or 'linear'"):
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
    with pytest.raises(ValueError, match="k must be a positive integer or None"):
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
