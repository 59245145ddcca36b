"""gbrank.metrics.paired_difference against scipy's paired t-test and hand-worked
values."""

from __future__ import annotations

import numpy as np
import pytest
from scipy import stats

from gbrank.metrics import paired_difference


def test_independent_units_are_scipys_paired_t_interval():
    rng = np.random.default_rng(0)
    a = rng.normal(0.75, 0.02, size=10)
    b = a - rng.normal(0.004, 0.01, size=10)
    d = paired_difference(a, b)
    ref = stats.ttest_rel(a, b).confidence_interval(0.95)
    assert d.low == pytest.approx(ref.low, rel=1e-12)
    assert d.high == pytest.approx(ref.high, rel=1e-12)
    assert d.se == pytest.approx(stats.sem(a - b), rel=1e-12)
    assert d.wins == int(np.sum(a > b)) and d.n == 10


def test_repeated_folds_widen_by_the_corrected_factor():
    d = np.array([0.02, 0.01, 0.03, 0.02, 0.01, 0.03])
    plain = paired_difference(d, np.zeros(6))
    corrected = paired_difference(d, np.zeros(6), n_folds=3)
    # variance factor 1/n + 1/(k - 1) = 1/6 + 1/2 against 1/6: the SE grows by sqrt(4)
    assert corrected.se == pytest.approx(plain.se * 2.0, rel=1e-12)
    assert (corrected.low, corrected.high) == pytest.approx((0.0012, 0.0388), abs=1e-4)


def test_direction_wins_and_the_one_se_rule():
    loss = paired_difference([0.2, 0.3, 0.1], [0.3, 0.3, 0.2], higher_is_better=False)
    assert loss.diffs.tolist() == pytest.approx([0.1, 0.0, 0.1])
    assert loss.wins == 2 and loss.mean > 0
    worse = paired_difference([0.70, 0.71, 0.69], [0.70, 0.70, 0.70])
    assert worse.mean == pytest.approx(0.0) and worse.within_one_se_or_better()
    assert not paired_difference([0.6, 0.61, 0.62], [0.7, 0.7, 0.71]).within_one_se_or_better()
    with pytest.raises(ValueError, match="same units"):
        paired_difference([1.0, 2.0], [1.0])


@pytest.mark.parametrize("kwargs,match", [
    ({"n_folds": 1}, "n_folds must be"),
    ({"n_folds": 0}, "n_folds must be"),
    ({"level": 95}, "level must be a coverage in \\(0, 1\\), got 95"),
    ({"level": 0.0}, "level must be a coverage in \\(0, 1\\)"),
    ({"higher_is_better": "yes"}, "higher_is_better must be True or False"),
])
def test_arguments_outside_their_range_are_refused(kwargs, match):
    """n_folds=1 used to read as 2 folds (a silently narrower interval), level=95 gave a
    nan interval."""
    with pytest.raises(ValueError, match=match):
        paired_difference([0.7, 0.71, 0.72], [0.70, 0.70, 0.70], **kwargs)


def test_a_failed_unit_is_refused_not_averaged_into_nan():
    with pytest.raises(ValueError, match="a's scores"):
        paired_difference([0.7, np.nan, 0.72], [0.70, 0.70, 0.70])
    with pytest.raises(ValueError, match="b's scores"):
        paired_difference([0.7, 0.71, 0.72], [0.70, np.inf, 0.70])


@pytest.mark.parametrize("level, shown", [(0.95, "95"), (1 - 0.05 / 2, "97.5"),
                                          (1 - 0.05 / 3, "98.33"), (1 - 0.05 / 4, "98.75"),
                                          (1 - 0.05 / 5, "99"), (1 - 0.05 / 6, "99.17")])
def test_the_level_reads_as_a_person_writes_it(level, shown):
    """A Bonferroni level 1 − 0.05/3 reads 98.33 %, not 98.3333 %."""
    d = paired_difference([0.5, 0.6, 0.7, 0.8], [0.4, 0.6, 0.6, 0.7], level=level)
    assert d.level_percent == shown
    assert f"{shown} % interval" in d.describe()
