"""Paired comparisons of two models scored on the same units (folds, rotations, seeds):
the one rule for "better", "beyond noise" and "wins" that the tuner's verdict and the
experiments share."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from gbrank._validation import check_bool, check_finite, check_integer

__all__ = ["PairedDifference", "paired_difference"]


@dataclass(frozen=True)
class PairedDifference:
    r"""``a`` − ``b`` unit by unit, oriented so that positive means ``a`` is better.

    Attributes
    ----------
    diffs : ndarray
        The oriented differences, one per unit.
    se : float
        Standard error of their mean: :math:`s/\sqrt{n}` for independent units, or
        :math:`s\sqrt{1/n + 1/(k - 1)}` (the corrected resampled t-test) for units of
        repeated k-fold cross-validation, which share training rows.
    low, high : float
        The two-sided interval of the mean at ``level`` (Student's t).
    level : float
        The interval's coverage.

    Examples
    --------
    >>> from gbrank.metrics import paired_difference
    >>> d = paired_difference([0.71, 0.69, 0.72], [0.70, 0.70, 0.70])
    >>> d.wins, d.n, d.within_one_se_or_better()
    (2, 3, True)
    """

    diffs: np.ndarray
    se: float
    low: float
    high: float
    level: float = 0.95

    @property
    def n(self) -> int:
        return int(self.diffs.size)

    @property
    def mean(self) -> float:
        return float(np.mean(self.diffs)) if self.diffs.size else float("nan")

    @property
    def wins(self) -> int:
        """Units where ``a`` is strictly better."""
        return int(np.sum(self.diffs > 0))

    @property
    def beyond_noise(self) -> bool:
        """Whether the interval excludes 0."""
        return bool(self.low > 0 or self.high < 0)

    def within_one_se_or_better(self) -> bool:
        """``a`` is not worse than ``b`` by more than one standard error."""
        return bool(self.mean >= -self.se)

    def cell(self, digits: int = 4) -> str:
        """``+0.0123 ± 0.0045 (4/5)``: mean, standard error, units won of all."""
        return f"{self.mean:+.{digits}f} ± {self.se:.{digits}f} ({self.wins}/{self.n})"

    @property
    def level_percent(self) -> str:
        """The interval's coverage as a reader writes it: ``"95"``, ``"97.5"``,
        ``"98.33"`` (at most two decimals: a Bonferroni level 1 − 0.05/3 is not
        ``98.3333``)."""
        return f"{100 * self.level:.2f}".rstrip("0").rstrip(".")

    def describe(self, noise: str = "the noise") -> str:
        """``0.0150 ahead (paired over 6 units: 95 % interval +0.0012 to +0.0388, 6 of 6
        units won): beyond the noise``; ``noise`` names what the interval measures
        (the tuner's verdict: ``"the fold noise"``)."""
        word = "ahead" if self.mean >= 0 else "behind"
        where = "beyond" if self.beyond_noise else "within"
        return (f"{abs(self.mean):.4f} {word} (paired over {self.n} units: "
                f"{self.level_percent} % interval {self.low:+.4f} to {self.high:+.4f}, "
                f"{self.wins} of {self.n} units won): {where} {noise}")


def paired_difference(a: Any, b: Any, *, higher_is_better: bool = True,
                      n_folds: int | None = None, level: float = 0.95) -> PairedDifference:
    r"""Compare two models' scores on the same units.

    Parameters
    ----------
    a, b : array-like of shape (n_units,)
        Scores of the two models, unit by unit (a fold, a rotation, a seed).
    higher_is_better : bool, default True
        The metric's direction; the differences are oriented so that positive means
        ``a`` is better.
    n_folds : int, optional
        The units are the folds of repeated ``n_folds``-fold cross-validation (they share
        training rows): the variance of the mean is :math:`s^2 (1/n + 1/(k - 1))`
        (Nadeau and Bengio; Bouckaert and Frank). ``None``: independent units,
        :math:`s^2/n`.
    level : float, default 0.95
        The interval's coverage.

    Returns
    -------
    PairedDifference

    Examples
    --------
    >>> from gbrank.metrics import paired_difference
    >>> d = paired_difference([0.72, 0.70, 0.75, 0.71, 0.74], [0.70, 0.70, 0.72, 0.70, 0.71])
    >>> d.cell(), d.beyond_noise
    ('+0.0180 ± 0.0058 (4/5)', True)
    >>> loss = paired_difference([0.25, 0.5], [0.5, 0.25], higher_is_better=False)
    >>> loss.diffs.tolist()  # positive where a's loss is lower
    [0.25, -0.25]
    """
    from scipy import stats

    a = np.asarray(a, dtype=np.float64).ravel()
    b = np.asarray(b, dtype=np.float64).ravel()
    if a.size != b.size:
        raise ValueError(f"a has {a.size} units and b {b.size}; a paired comparison needs "
                         "the same units")
    check_finite(a, "a's scores")  # a failed unit is no score: drop it from both
    check_finite(b, "b's scores")
    higher_is_better = check_bool(higher_is_better, "higher_is_better")
    if n_folds is not None:
        n_folds = check_integer(n_folds, "n_folds", 2)
    if not (isinstance(level, (int, float, np.floating)) and 0.0 < float(level) < 1.0):
        raise ValueError(f"level must be a coverage in (0, 1), got {level!r}")
    level = float(level)
    d = a - b if higher_is_better else b - a
    if d.size < 2:
        return PairedDifference(d, float("inf"), -np.inf, np.inf, level)
    factor = 1.0 / d.size + (1.0 / (n_folds - 1) if n_folds is not None else 0.0)
    se = float(np.sqrt(np.var(d, ddof=1) * factor))
    half = float(stats.t.ppf(0.5 + level / 2, d.size - 1)) * se
    m = float(np.mean(d))
    return PairedDifference(d, se, m - half, m + half, level)
