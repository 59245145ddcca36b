"""Binary metrics at a threshold on scores: F_beta, F1, balanced measure, the
F_beta-optimal threshold; and average precision, which reads only the order of the scores.

Predicted positive means ``s > threshold``. ``s`` holds probabilities of the positive
class by default, as scikit-learn's metrics read them (cut at 0.5), or raw margins
(log-odds) with ``margin=True`` (cut at 0, the same rows). Labels are {0, 1} or
{-1, +1}; ``weight`` is per row, and a = TP, b = FP, c = FN, d = TN are weighted counts.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from gbrank._kernels.binary import best_fbeta_cut, confusion
from gbrank._validation import (
    check_beta,
    check_bool,
    check_probabilities,
    check_threshold,
    prepare_binary,
    probabilities_or_labels,
)

__all__ = ["average_precision", "fbeta", "f1", "balanced_measure", "best_threshold"]

_NO_WEIGHT = np.empty(0, dtype=np.float64)


_MARGIN_FIX = ("binary metrics read probabilities of the positive class by default, as "
               "scikit-learn does; pass margin=True for raw margins (log-odds: "
               "decision_function, predict(raw_score=True), a custom objective's scores)")


def _cut(s: np.ndarray, threshold: Any, margin: Any) -> float:
    """The threshold on the scale of ``s`` (``None``: 0.5 on probabilities, 0 on
    margins). On probabilities, scores outside [0, 1] are refused unless they are
    predicted labels (:func:`probabilities_or_labels`): a margin read as a probability
    is a plausible wrong number."""
    if check_bool(margin, "margin"):
        return 0.0 if threshold is None else check_threshold(threshold)
    t = 0.5 if threshold is None else check_threshold(threshold)
    if not probabilities_or_labels(s):
        check_probabilities(s, "scores", _MARGIN_FIX)
    return t


def _prepare(y: Any, s: Any, threshold: Any, weight: Any, margin: Any,
             ) -> tuple[np.ndarray, np.ndarray, np.ndarray, float]:
    """Validated ``(y01, s, w, t)``: labels as {0, 1}, row weights (empty: none) and
    the threshold on the scale of ``s``."""
    y01, s, w = prepare_binary(y, s, weight)
    return y01, s, _NO_WEIGHT if w is None else w, _cut(s, threshold, margin)


def _counts(y: Any, s: Any, threshold: Any, weight: Any,
            margin: Any) -> tuple[float, float, float, float]:
    y01, s, w, t = _prepare(y, s, threshold, weight, margin)
    return confusion(y01, s, w, t)


def _fbeta_from_counts(tp: float, fp: float, fn: float, beta2: float) -> float:
    num = (1.0 + beta2) * tp
    den = num + fp + beta2 * fn
    return 1.0 if den == 0.0 else num / den


def fbeta(y: Any, s: Any, beta: float = 1.0, threshold: float | None = None, *,
          weight: Any = None, margin: bool = False) -> float:
    r"""F-beta score of the prediction ``s > threshold``.

    .. math::

        F_\beta = \frac{(1+\beta^2)\,a}{(1+\beta^2)\,a + b + \beta^2 c}

    and :math:`F_\beta = 1` when :math:`a + b + c = 0` (nothing to find, nothing
    wrongly found). On probabilities it equals scikit-learn's
    ``fbeta_score(y, s > threshold, beta=beta)``, and on predicted labels
    ``fbeta_score(y, s, beta=beta)``, except in that empty case (scikit-learn: 0 with a
    warning, or ``zero_division``).

    Parameters
    ----------
    y : array-like of shape (n,)
        Labels in {0, 1} or {-1, +1}.
    s : array-like of shape (n,)
        Probabilities of the positive class (``predict_proba(X)[:, 1]``), predicted
        labels {0, 1} or {-1, +1}, or with ``margin=True`` raw margins.
    beta : float, default 1.0
        Weight of recall relative to precision.
    threshold : float, optional
        The cut, on the scale of ``s``: any finite number (gbrank's one rule for
        thresholds). Default: 0.5 on probabilities, 0 on margins (the same rows, as
        :math:`\sigma(0) = 0.5`).
    weight : array-like of shape (n,), optional
        Row weights (counts become weighted sums).
    margin : bool, default False
        ``s`` holds raw margins (log-odds: ``decision_function``,
        ``predict(raw_score=True)``, a custom objective's scores), not probabilities.

    Returns
    -------
    float

    Raises
    ------
    ValueError
        With ``margin=False``, for scores outside [0, 1] that are not predicted labels:
        they are not probabilities (pass ``margin=True`` for margins).

    Examples
    --------
    One of three positives found, no false alarm (a = 1, b = 0, c = 2):
    :math:`F_1 = 2/4`, :math:`F_2 = 5/13` (recall counts more).

    >>> from gbrank.metrics import fbeta
    >>> y, p = [1, 1, 1, 0], [0.9, 0.4, 0.3, 0.45]
    >>> fbeta(y, p)
    0.5
    >>> round(fbeta(y, p, beta=2), 4)
    0.3846
    >>> round(fbeta(y, p, threshold=0.35), 4)  # a = 2, b = 1, c = 1
    0.6667

    The same predictions as raw margins:

    >>> fbeta(y, [2.2, -0.4, -0.8, -0.2], margin=True)
    0.5
    """
    b = check_beta(beta)
    tp, fp, fn, _ = _counts(y, s, threshold, weight, margin)
    return _fbeta_from_counts(tp, fp, fn, b * b)


def f1(y: Any, s: Any, threshold: float | None = None, *, weight: Any = None,
       margin: bool = False) -> float:
    r""":func:`fbeta` with :math:`\beta = 1`: :math:`F_1 = 2a / (2a + b + c)`, 1 when
    :math:`a + b + c = 0`.

    On probabilities (the default) it equals scikit-learn's ``f1_score(y, s > 0.5)``;
    on predicted labels, ``f1_score(y, s)``.

    Parameters
    ----------
    y, s, threshold, weight, margin
        As in :func:`fbeta`.

    Returns
    -------
    float

    Examples
    --------
    >>> from gbrank.metrics import f1
    >>> y = [1, 0, 1, 1, 0]
    >>> f1(y, [0.9, 0.2, 0.6, 0.7, 0.1])  # probabilities, cut at 0.5: all right
    1.0
    >>> f1(y, [1, 0, 0, 1, 1])  # predicted labels: a = 2, b = 1, c = 1
    0.6666666666666666
    >>> f1(y, [0.8, 0.3, -0.2, 1.5, -1.0], margin=True)  # margins, cut at 0
    0.6666666666666666

    Margins passed as probabilities are refused, not misread:

    >>> f1(y, [0.8, 0.3, -0.2, 1.5, -1.0])
    Traceback (most recent call last):
    ...
    ValueError: scores hold 3 value(s) outside [0, 1] ... pass margin=True ...
    """
    return fbeta(y, s, 1.0, threshold, weight=weight, margin=margin)


def balanced_measure(y: Any, s: Any, threshold: float | None = None, *, weight: Any = None,
                     margin: bool = False) -> float:
    r"""Balanced measure (recall + specificity) / 2 of the prediction ``s > threshold``.

    .. math::

        \frac{1}{2}\left(\frac{a}{a + c} + \frac{d}{d + b}\right)

    A term whose class is absent (:math:`a + c = 0` or :math:`d + b = 0`) counts 1.
    Equals scikit-learn's ``balanced_accuracy_score(y, s > threshold)`` when both
    classes are present.

    Parameters
    ----------
    y, s, threshold, weight, margin
        As in :func:`fbeta` (probabilities by default, cut at 0.5).

    Returns
    -------
    float

    Examples
    --------
    Recall 1/3 (one of three positives found), specificity 1:

    >>> from gbrank.metrics import balanced_measure
    >>> round(balanced_measure([1, 1, 1, 0], [0.9, 0.4, 0.3, 0.45]), 4)
    0.6667
    >>> round(balanced_measure([1, 1, 1, 0], [2.2, -0.4, -0.8, -0.2], margin=True), 4)
    0.6667
    """
    tp, fp, fn, tn = _counts(y, s, threshold, weight, margin)
    recall = 1.0 if tp + fn == 0.0 else tp / (tp + fn)
    specificity = 1.0 if tn + fp == 0.0 else tn / (tn + fp)
    return 0.5 * (recall + specificity)


def _between(hi: float, lo: float) -> float:
    # Halves first: (hi + lo) / 2 can overflow. For adjacent floats the midpoint may
    # round onto hi; lo itself then separates the two (prediction is s > t).
    t = hi / 2.0 + lo / 2.0
    return t if lo <= t < hi else lo


def best_threshold(y: Any, s: Any, beta: float = 1.0, *, weight: Any = None,
                   margin: bool = False) -> tuple[float, float]:
    r"""The threshold that maximises :math:`F_\beta` of ``s > threshold``, and that maximum.

    Sorts once (O(n log n)) and sweeps every cut between consecutive distinct scores.
    The returned threshold is on the scale of ``s`` (a probability by default, a margin
    with ``margin=True``): the midpoint between the lowest score predicted positive
    and the highest predicted negative (for adjacent floating-point values, the lower
    one), so ``fbeta(y, s, beta, threshold=t, weight=weight, margin=margin)``
    reproduces the returned value exactly. If predicting nothing positive is best,
    ``t = max(s)``; if predicting everything positive is best, ``t`` is below
    ``min(s)`` (``min(s) - 1``, or the next float down when that rounds). Among equally
    good cuts the highest threshold wins.

    Parameters
    ----------
    y, s
        As in :func:`fbeta`.
    beta : float, default 1.0
        Weight of recall relative to precision, as in :func:`fbeta`.
    weight, margin
        As in :func:`fbeta`.

    Returns
    -------
    (threshold, fbeta_value) : tuple of float

    Examples
    --------
    Cutting between 0.35 and 0.1 finds both positives with one false alarm
    (:math:`F_1 = 4/5`), better than any other cut:

    >>> from gbrank.metrics import best_threshold, fbeta
    >>> y, p = [0, 0, 1, 1], [0.1, 0.4, 0.35, 0.8]
    >>> t, best = best_threshold(y, p)
    >>> round(t, 3), best
    (0.225, 0.8)
    >>> fbeta(y, p, threshold=t) == best
    True
    """
    b = check_beta(beta)
    y01, s, w, _ = _prepare(y, s, None, weight, margin)
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


def average_precision(y: Any, s: Any, *, weight: Any = None) -> float:
    r"""Average precision of the rows ranked by ``s``: precision at each positive, averaged
    (scikit-learn's ``average_precision_score``, whose value this is).

    .. math::

        \mathrm{AP} = \sum_n (R_n - R_{n-1})\, P_n

    over the distinct scores from the highest down, :math:`P_n` and :math:`R_n` the
    precision and recall of the rows scored at least the n-th of them. Only the order
    of ``s`` counts: probabilities, margins and any increasing map of them give the same
    value. Higher is better; with no positive row it is 0 (scikit-learn warns).

    Parameters
    ----------
    y : array-like of shape (n,)
        Labels in {0, 1} or {-1, +1}.
    s : array-like of shape (n,)
        Scores, higher meaning more likely positive.
    weight : array-like of shape (n,), optional
        Row weights.

    Returns
    -------
    float

    Examples
    --------
    The positives rank first and third: precision 1 at the first, 2/3 at the second:

    >>> from gbrank.metrics import average_precision
    >>> y, s = [1, 0, 1, 0], [0.9, 0.8, 0.7, 0.1]
    >>> round(average_precision(y, s), 4)
    0.8333
    >>> average_precision(y, [2.2, 1.4, 0.8, -2.0]) == average_precision(y, s)  # margins
    True
    """
    from sklearn.metrics import average_precision_score

    y01, s, w = prepare_binary(y, s, weight)
    return float(average_precision_score(y01, s, sample_weight=w))
