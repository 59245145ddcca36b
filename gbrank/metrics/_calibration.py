"""Calibration metrics on raw scores: log loss and expected calibration error of σ(s).

Both are pointwise (they ignore query structure) and lower is better. Labels are
turned into targets in [0, 1] as :class:`gbrank.objectives.CrossEntropy` does (clicks
and rates as they are; grades through a documented mapping).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from gbrank._kernels.cross_entropy import cross_entropy_loss
from gbrank._targets import TARGETS, relevance_targets
from gbrank._validation import (
    as_float_array,
    check_choice,
    check_finite,
    check_integer,
    check_lengths,
    check_row_weights,
    check_threshold,
)

__all__ = ["log_loss", "expected_calibration_error"]

_EMPTY = np.empty(0, dtype=np.float64)


def _targets(y: Any, s: Any, weight: Any, target: str, max_grade: Any,
             threshold: float) -> tuple[np.ndarray, np.ndarray, np.ndarray | None]:
    target = check_choice(target, "target", TARGETS)
    y = as_float_array(y, "labels")
    s = as_float_array(s, "scores")
    check_lengths(y, s)
    check_finite(y, "labels")
    check_finite(s, "scores")
    w = check_row_weights(weight, y.size)
    t = relevance_targets(y, target, max_grade, check_threshold(threshold))
    return t, s, w


def log_loss(y: Any, s: Any, *, weight: Any = None, target: str = "auto",
             max_grade: float | None = None, threshold: float = 1) -> float:
    r"""Mean cross-entropy of :math:`p = \sigma(s)` against targets :math:`t \in [0, 1]`:

    .. math:: \frac{\sum_i w_i \left[-t_i \log p_i - (1 - t_i) \log(1 - p_i)\right]}
                   {\sum_i w_i}

    computed from the margins (finite for any finite score; scikit-learn's
    ``log_loss`` on probabilities clips them instead).

    Parameters
    ----------
    y : array-like
        Labels: clicks or rates in [0, 1], or grades mapped by ``target``.
    s : array-like
        Raw scores (margins).
    weight : array-like, optional
        One weight per row.
    target, max_grade, threshold
        The label-to-target mapping of :class:`gbrank.objectives.CrossEntropy`.

    Returns
    -------
    float
        Lower is better.

    Examples
    --------
    >>> import numpy as np
    >>> from gbrank.metrics import log_loss
    >>> round(log_loss(np.array([1.0, 0.0]), np.array([0.0, 0.0])), 6)  # log 2
    0.693147
    """
    t, s, w = _targets(y, s, weight, target, max_grade, threshold)
    total = cross_entropy_loss(t, s, _EMPTY if w is None else w)
    return float(total / (t.size if w is None else np.sum(w)))


def expected_calibration_error(y: Any, s: Any, n_bins: int = 10, *, weight: Any = None,
                               target: str = "auto", max_grade: float | None = None,
                               threshold: float = 1) -> float:
    r"""Expected calibration error of :math:`p = \sigma(s)` over equal-mass bins.

    Rows are ordered by p (ties by row order) and cut into ``n_bins`` bins of as equal a
    number of rows as possible (the first ``n mod n_bins`` bins one row larger); with
    :math:`W_b` a bin's weight, :math:`\bar p_b` and :math:`\bar t_b` its weighted mean
    prediction and target,

    .. math:: \mathrm{ECE} = \sum_b \frac{W_b}{W} \left|\bar t_b - \bar p_b\right|.

    Parameters
    ----------
    y, s, weight, target, max_grade, threshold
        As in :func:`log_loss`.
    n_bins : int, default 10
        Number of bins (at most the number of rows are used).

    Returns
    -------
    float
        In [0, 1]; lower is better.

    Examples
    --------
    >>> import numpy as np
    >>> from gbrank.metrics import expected_calibration_error
    >>> s = np.log(np.array([0.2, 0.2, 0.8, 0.8]) / np.array([0.8, 0.8, 0.2, 0.2]))
    >>> round(expected_calibration_error(np.array([0.0, 1.0, 1.0, 1.0]), s, n_bins=2), 12)
    0.25
    """
    n_bins = check_integer(n_bins, "n_bins", 1)
    t, s, w = _targets(y, s, weight, target, max_grade, threshold)
    n = t.size
    if n == 0:
        raise ValueError("expected_calibration_error needs at least one row")
    p = np.empty_like(s)
    pos = s >= 0
    p[pos] = 1.0 / (1.0 + np.exp(-s[pos]))
    e = np.exp(s[~pos])
    p[~pos] = e / (1.0 + e)
    order = np.argsort(p, kind="stable")
    bins = min(n_bins, n)
    starts = np.array([len(part) for part in np.array_split(np.arange(n), bins)])
    starts = np.concatenate(([0], np.cumsum(starts)[:-1]))
    ww = np.ones(n) if w is None else w[order]
    wb = np.add.reduceat(ww, starts)
    pb = np.add.reduceat(ww * p[order], starts)
    tb = np.add.reduceat(ww * t[order], starts)
    keep = wb > 0
    return float(np.sum(np.abs(tb[keep] - pb[keep])) / np.sum(wb))
