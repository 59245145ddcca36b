"""Every RankNet / LambdaRank variant against central differences of its (local) loss,
on hypothesis-generated queries: ties in scores, single-row queries, all-equal
labels, |s| up to 50."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from gbrank.gradcheck import check
from gbrank.objectives import LambdaRank, RankNet

OBJECTIVES = [
    RankNet(),
    RankNet(ties="pull"),
    RankNet(sigma=2.5),
    RankNet(sigma=0.3, ties="pull"),
    # ERR's g_max defaults to the largest label in the data of a call; the check
    # evaluates the loss one query at a time, so it is fixed here.
    *[LambdaRank(metric=m, truncation=k, norm=norm, sigma=sig,
                 **({"max_grade": 3} if m == "err" else {}))
      for m in ("ndcg", "err", "map", "mrr")
      for k, norm, sig in ((30, False, 1.0), (2, False, 1.7), (30, True, 1.0),
                           (3, True, 0.5))],
    LambdaRank(label_gain=[0.0, 1.0, 5.0, 6.0]),
    LambdaRank(metric="map", threshold=2),
]


@st.composite
def ranking_inputs(draw):
    sizes = draw(st.lists(st.integers(1, 9), min_size=1, max_size=4))
    n = sum(sizes)
    all_equal = draw(st.booleans())
    if all_equal:
        y = [float(draw(st.integers(0, 3)))] * n
    else:
        y = draw(st.lists(st.integers(0, 3).map(float), min_size=n, max_size=n))
    # A small pool of values makes ties likely; the scale reaches |s| = 50.
    pool = draw(st.lists(st.floats(-50, 50, allow_nan=False), min_size=1, max_size=6))
    s = draw(st.lists(st.sampled_from(pool), min_size=n, max_size=n))
    weighted = draw(st.booleans())
    w = draw(st.lists(st.floats(0.1, 3.0), min_size=len(sizes), max_size=len(sizes))) \
        if weighted else None
    return np.array(y), np.array(s), np.array(sizes), w


@pytest.mark.parametrize("obj", OBJECTIVES, ids=repr)
@settings(max_examples=40, deadline=None)
@given(data=ranking_inputs())
def test_gradcheck(obj, data):
    y, s, sizes, w = data
    report = check(obj, y, s, sizes, weight=w)
    assert report.ok, str(report)


@pytest.mark.parametrize("obj", [RankNet(), LambdaRank(metric="err", max_grade=4)], ids=repr)
def test_gradcheck_group_less(obj):
    rng = np.random.default_rng(0)
    y = rng.integers(0, 5, 60).astype(float)
    s = np.round(rng.normal(size=60) * 5, 1)
    report = check(obj, y, s)
    assert report.ok, str(report)


def test_gradcheck_detects_a_wrong_gradient():
    class Broken(LambdaRank):
        def exact_grad_hess(self, y, s, group=None, *, qid=None, weight=None):
            g, h = super().exact_grad_hess(y, s, group, qid=qid, weight=weight)
            return g * 1.001, h

    y = np.array([3.0, 0.0, 1.0, 2.0])
    s = np.array([0.1, 0.5, -0.2, 0.0])
    assert not check(Broken(), y, s).ok


def test_err_default_gmax_is_fixed_from_the_whole_data():
    # Queries with different top grades: per-query evaluation must not change g_max.
    rng = np.random.default_rng(3)
    y = np.concatenate([rng.integers(0, 2, 12), rng.integers(0, 5, 12)]).astype(float)
    s = rng.standard_normal(24) * 3
    obj = LambdaRank(metric="err")
    assert obj.bind_data_defaults(y).max_grade == int(y.max())
    assert obj.bind_data_defaults(y) is not obj and obj.max_grade is None
    report = check(obj, y, s, group=[12, 12])
    assert report.ok, str(report)
    # and the default objective's gradient is the one of the bound objective
    np.testing.assert_array_equal(obj.grad_hess(y, s, [12, 12])[0],
                                  obj.bind_data_defaults(y).grad_hess(y, s, [12, 12])[0])


def test_bad_steps_and_tolerances_are_named():
    from gbrank.objectives import RankNet

    y, s = [1.0, 0.0], [0.2, 0.1]
    with pytest.raises(ValueError, match=r"eps must be a finite number in \(0, inf\), got 0"):
        check(RankNet(), y, s, eps=0)
    with pytest.raises(ValueError, match="hess_tol must be a finite number"):
        check(RankNet(), y, s, hess_tol=-1.0)
    with pytest.raises(ValueError, match="hessian must be True or False"):
        check(RankNet(), y, s, hessian="yes")
