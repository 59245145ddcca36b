"""Binary metrics at a threshold on scores: F_beta, F1, balanced measure,
and the F_beta-optimal threshold.

Predicted positive means ``s > threshold``. Labels are {0, 1} or {-1, +1}; ``weight``
is per row, and a = TP, b = FP, c = FN, d = TN are weighted counts.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from gbrank._kernels.binary import best_fbeta_cut, confusion
from gbrank._validation import check_beta, check_threshold, prepare_binary

__all__ = ["fbeta", "f1", "balanced_measure", "best_threshold"]

_NO_WEIGHT = np.empty(0, dtype=np.float64)


def _check_beta(beta: Any) -> float:
    return check_beta(beta)


def _counts(y: Any, s: Any, threshold: Any, weight: Any) -> tuple[float, float, float, float]:
    t = check_threshold(threshold)
    y01, s, w = prepare_binary(y, s, weight)
    return confusion(y01, s, _NO_WEIGHT if w is None else w, t)


def _fbeta_from_counts(tp: float, fp: float, fn: float, beta2: float) -> float:
    num = (1.0 + beta2) * tp
    den = num + fp + beta2 * fn
    return 1.0 if den == 0.0 else num / den


def fbeta(y: Any, s: Any, beta: float = 1.0, threshold: float = 0.0, *,
          weight: Any = None) -> float:
    r"""F-beta score of the prediction ``s > threshold``.

    .. math::

        F_\beta = \frac{(1+\beta^2)\,a}{(1+\beta^2)\,a + b + \beta^2 c}

    and :math:`F_\beta = 1` when :math:`a + b + c = 0` (nothing to find, nothing
    wrongly found). Equals scikit-learn's ``fbeta_score(y, s > threshold, beta=beta)``
    except in that empty case (scikit-learn: 0 with a warning, or ``zero_division``).

    Parameters
    ----------
    y : array-like of shape (n,)
        Labels in {0, 1} or {-1, +1}.
    s : array-like of shape (n,)
        Scores (margins by default: ``threshold=0``; use 0.5 on probabilities).
    beta : float, default 1.0
        Weight of recall relative to precision.
    threshold : float, default 0.0
        Any finite number (gbrank's one rule for thresholds).
    weight : array-like of shape (n,), optional
        Row weights (counts become weighted sums).

    Returns
    -------
    float

    Examples
    --------
    One of three positives found, no false alarm (a = 1, b = 0, c = 2):
    :math:`F_1 = 2/4`, :math:`F_2 = 5/13` (recall counts more).

    >>> from gbrank.metrics import fbeta
    >>> y, s = [1, 1, 1, 0], [0.8, -0.3, -0.5, -0.2]
    >>> fbeta(y, s)
    0.5
    >>> round(fbeta(y, s, beta=2), 4)
    0.3846
    >>> round(fbeta(y, s, threshold=-0.4), 4)  # a = 2, b = 1, c = 1
    0.6667
    """
    b = _check_beta(beta)
    tp, fp, fn, _ = _counts(y, s, threshold, weight)
    return _fbeta_from_counts(tp, fp, fn, b * b)


def f1(y: Any, s: Any, threshold: float = 0.0, *, weight: Any = None) -> float:
    r""":func:`fbeta` with :math:`\beta = 1`: :math:`F_1 = 2a / (2a + b + c)`, 1 when
    :math:`a + b + c = 0`.

    Parameters
    ----------
    y, s, threshold, weight
        As in :func:`fbeta`.

    Returns
    -------
    float

    Examples
    --------
    >>> from gbrank.metrics import f1
    >>> y = [1, 0, 1, 1, 0]
    >>> f1(y, [0.8, 0.3, -0.2, 1.5, -1.0])  # margins: a = 2, b = 1, c = 1
    0.6666666666666666
    >>> f1(y, [0.9, 0.2, 0.6, 0.7, 0.1], threshold=0.5)  # probabilities: all right
    1.0
    """
    return fbeta(y, s, 1.0, threshold, weight=weight)


def balanced_measure(y: Any, s: Any, threshold: float = 0.0, *, weight: Any = None) -> float:
    r"""Balanced measure (recall + specificity) / 2 of the prediction ``s > threshold``.

    .. math::

        \frac{1}{2}\left(\frac{a}{a + c} + \frac{d}{d + b}\right)

    A term whose class is absent (:math:`a + c = 0` or :math:`d + b = 0`) counts 1.
    Equals scikit-learn's ``balanced_accuracy_score`` when both classes are present.

    Parameters
    ----------
    y, s, threshold, weight
        As in :func:`fbeta`.

    Returns
    -------
    float

    Examples
    --------
    Recall 1/3 (one of three positives found), specificity 1:

    >>> from gbrank.metrics import balanced_measure
    >>> round(balanced_measure([1, 1, 1, 0], [0.8, -0.3, -0.5, -0.2]), 4)
    0.6667
    """
    tp, fp, fn, tn = _counts(y, s, threshold, weight)
    recall = 1.0 if tp + fn == 0.0 else tp / (tp + fn)
    specificity = 1.0 if tn + fp == 0.0 else tn / (tn + fp)
    return 0.5 * (recall + specificity)


def _between(hi: float, lo: float) -> float:
    # Halves first: (hi + lo) / 2 can overflow. For adjacent floats the midpoint may
    # round onto hi; lo itself then separates the two (prediction is s > t).
    t = hi / 2.0 + lo / 2.0
    return t if lo <= t < hi else lo


def best_threshold(y: Any, s: Any, beta: float = 1.0, *,
                   weight: Any = None) -> tuple[float, float]:
    r"""The threshold that maximises :math:`F_\beta` of ``s > threshold``, and that maximum.

    Sorts once (O(n log n)) and sweeps every cut between consecutive distinct scores.
    The returned threshold is the midpoint between the lowest score predicted positive
    and the highest predicted negative (for adjacent floating-point values, the lower
    one), so ``fbeta(y, s, beta, threshold=t, weight=weight)`` reproduces the returned
    value exactly. If predicting nothing positive is best, ``t = max(s)``; if predicting
    everything positive is best, ``t`` is below ``min(s)`` (``min(s) - 1``, or the next
    float down when that rounds). Among equally good cuts the highest threshold wins.

    Parameters
    ----------
    y, s, weight
        As in :func:`fbeta`.
    beta : float, default 1.0

    Returns
    -------
    (threshold, fbeta_value) : tuple of float

    Examples
    --------
    Cutting between 0.35 and 0.1 finds both positives with one false alarm
    (:math:`F_1 = 4/5`), better than any other cut:

    >>> from gbrank.metrics import best_threshold, fbeta
    >>> y, s = [0, 0, 1, 1], [0.1, 0.4, 0.35, 0.8]
    >>> t, best = best_threshold(y, s)
    >>> round(t, 3), best
    (0.225, 0.8)
    >>> fbeta(y, s, threshold=t) == best
    True
    """
    b = _check_beta(beta)
    y01, s, w = prepare_binary(y, s, weight)
    w = _NO_WEIGHT if w is None else w
    cut, lowest, highest = best_fbeta_cut(y01, s, w, b * b)
    if cut == 0:
        t = float(highest)  # the top score: nothing above it
    elif np.isnan(highest):
        lo = float(lowest)  # every row positive: just below the lowest score
        t = lo - 1.0
        if not t < lo:
            t = float(np.nextafter(lo, -np.inf))
    else:
        t = _between(float(lowest), float(highest))
    tp, fp, fn, _ = confusion(y01, s, w, t)
    return t, _fbeta_from_counts(tp, fp, fn, b * b)
