"""Calibration metrics: log loss and expected calibration error of predicted
probabilities.

Both read probabilities ``p`` by default, as scikit-learn's metrics do, or raw margins
(log-odds) with ``margin=True``, judged through p = σ(s). Both are
pointwise (they ignore query structure) and lower is better. Labels are turned into
targets in [0, 1] as :class:`gbrank.objectives.CrossEntropy` does (clicks and rates as
they are; grades through a documented mapping).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from gbrank._kernels.cross_entropy import cross_entropy_loss
from gbrank._proba import predict_proba
from gbrank._targets import TARGET_MAPPINGS, relevance_targets
from gbrank._validation import (
    as_float_array,
    check_bool,
    check_choice,
    check_finite,
    check_integer,
    check_lengths,
    check_probabilities,
    check_row_weights,
    check_threshold,
)

__all__ = ["log_loss", "expected_calibration_error"]

_EMPTY = np.empty(0, dtype=np.float64)
_MARGIN_FIX = ("calibration metrics read probabilities by default, as scikit-learn does; "
               "pass margin=True for raw margins (log-odds), judged through their sigmoid")


def _targets(y: Any, s: Any, weight: Any, target: str, max_grade: Any, threshold: float,
             margin: Any) -> tuple[np.ndarray, np.ndarray, np.ndarray | None]:
    """Validated targets in [0, 1], scores and row weights; on probabilities
    (``margin=False``) every score must lie in [0, 1]."""
    target = check_choice(target, "target", TARGET_MAPPINGS)
    margin = check_bool(margin, "margin")
    y = as_float_array(y, "labels")
    s = as_float_array(s, "scores")
    check_lengths(y, s)
    check_finite(y, "labels")
    check_finite(s, "scores")
    if not margin:
        check_probabilities(s, "scores", _MARGIN_FIX)
    w = check_row_weights(weight, y.size)
    t = relevance_targets(y, target, max_grade, check_threshold(threshold))
    return t, s, w


def _clip_eps(s: Any) -> float:
    """Machine epsilon of the precision ``s`` came in (float32 and float16 keep theirs,
    everything else is read as float64): scikit-learn's ``log_loss`` clips
    probabilities to ``[eps, 1 - eps]`` of that dtype."""
    try:
        dtype = np.dtype(getattr(s, "dtype", None) or np.asarray(s).dtype)
    except TypeError:  # a pandas extension dtype
        dtype = np.dtype(np.float64)
    if dtype.kind != "f" or dtype.itemsize > 8:
        dtype = np.dtype(np.float64)
    return float(np.finfo(dtype).eps)


def log_loss(y: Any, s: Any, *, weight: Any = None, target: str = "auto",
             max_grade: float | None = None, threshold: float = 1,
             margin: bool = False) -> float:
    r"""Mean cross-entropy of predicted probabilities :math:`p` against targets
    :math:`t \in [0, 1]`:

    .. math:: \frac{\sum_i w_i \left[-t_i \log p_i - (1 - t_i) \log(1 - p_i)\right]}
                   {\sum_i w_i}

    On probabilities (the default) :math:`p_i` and :math:`1 - p_i` are clipped to
    :math:`[\epsilon, 1 - \epsilon]` (:math:`\epsilon` the machine epsilon of the
    scores' float dtype), so on 0/1 labels the value is scikit-learn's
    ``log_loss(y, p)``. With ``margin=True``, :math:`p = \sigma(s)` and the loss is
    computed from the margins in log space (finite for any finite score, no clipping).

    Parameters
    ----------
    y : array-like
        Labels: clicks or rates in [0, 1], or grades mapped by ``target``.
    s : array-like
        Probabilities in [0, 1] (``predict_proba(X)[:, 1]``), or with ``margin=True``
        raw margins.
    weight : array-like, optional
        One weight per row.
    target, max_grade, threshold
        The label-to-target mapping of :class:`gbrank.objectives.CrossEntropy`.
    margin : bool, default False
        ``s`` holds raw margins (log-odds), not probabilities.

    Returns
    -------
    float
        Lower is better.

    Raises
    ------
    ValueError
        With ``margin=False``, for scores outside [0, 1] (pass ``margin=True`` for
        margins).

    Examples
    --------
    >>> from gbrank.metrics import log_loss
    >>> round(log_loss([1, 0], [0.8, 0.4]), 6)  # (-log 0.8 - log 0.6) / 2
    0.366985
    >>> round(log_loss([1, 0], [0.0, 0.0], margin=True), 6)  # σ(0) = 1/2: log 2
    0.693147
    """
    eps = _clip_eps(s)
    t, s, w = _targets(y, s, weight, target, max_grade, threshold, margin)
    if margin:
        total = cross_entropy_loss(t, s, _EMPTY if w is None else w)
        return float(total / (t.size if w is None else np.sum(w)))
    # scikit-learn's order of operations: 1 - p before clipping, each clipped alone.
    loss = -((1.0 - t) * np.log(np.clip(1.0 - s, eps, 1.0 - eps))
             + t * np.log(np.clip(s, eps, 1.0 - eps)))
    return float(np.average(loss, weights=w))


def expected_calibration_error(y: Any, s: Any, n_bins: int = 10, *, weight: Any = None,
                               target: str = "auto", max_grade: float | None = None,
                               threshold: float = 1, margin: bool = False) -> float:
    r"""Expected calibration error of predicted probabilities :math:`p` over equal-mass
    bins (:math:`p = \sigma(s)` with ``margin=True``).

    Rows are ordered by p (ties by row order) and cut into ``n_bins`` bins of as equal a
    number of rows as possible (the first ``n mod n_bins`` bins one row larger); with
    :math:`W_b` a bin's weight, :math:`\bar p_b` and :math:`\bar t_b` its weighted mean
    prediction and target,

    .. math:: \mathrm{ECE} = \sum_b \frac{W_b}{W} \left|\bar t_b - \bar p_b\right|.

    Parameters
    ----------
    y, s
        As in :func:`log_loss`.
    n_bins : int, default 10
        Number of bins (at most the number of rows are used).
    weight, target, max_grade, threshold, margin
        As in :func:`log_loss`.

    Returns
    -------
    float
        In [0, 1]; lower is better.

    Raises
    ------
    ValueError
        With ``margin=False``, for scores outside [0, 1] (pass ``margin=True`` for
        margins).

    Examples
    --------
    Bins {0.2, 0.2} (mean target 1/2) and {0.8, 0.8} (mean target 1):
    :math:`\tfrac12 |0.5 - 0.2| + \tfrac12 |1 - 0.8|`.

    >>> import numpy as np
    >>> from gbrank.metrics import expected_calibration_error
    >>> y, p = [0, 1, 1, 1], np.array([0.2, 0.2, 0.8, 0.8])
    >>> round(expected_calibration_error(y, p, n_bins=2), 12)
    0.25
    >>> round(expected_calibration_error(y, np.log(p / (1 - p)), n_bins=2, margin=True), 12)
    0.25
    """
    n_bins = check_integer(n_bins, "n_bins", 1)
    t, s, w = _targets(y, s, weight, target, max_grade, threshold, margin)
    n = t.size
    if n == 0:
        raise ValueError("expected_calibration_error needs at least one row")
    p = predict_proba(s) if margin else s
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
