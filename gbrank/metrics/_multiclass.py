"""Multiclass metrics: F_β averaged over classes, balanced accuracy and the log loss.

Scores are ``(n, K)`` (a flat ``n·K`` vector is refused: its layout, class- or row-major,
cannot be told from it). The prediction
of a row is the class of its largest score (the lowest class on a tie), as ``argmax``
gives it, so F_β and balanced accuracy read probabilities, log-probabilities and raw
margins alike. The log loss reads probabilities by default, as scikit-learn does, and
raw margins with ``margin=True`` (through their softmax). Labels are integers
``0 … K−1``.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from gbrank._validation import (
    as_float_array,
    check_beta,
    check_bool,
    check_choice,
    check_finite,
    check_probabilities,
    refuse_flat_multiclass,
)
from gbrank.metrics._binary import _fbeta_from_counts
from gbrank.metrics._calibration import _clip_eps

__all__ = ["fbeta_multiclass", "balanced_accuracy", "multiclass_log_loss", "best_class_offsets"]


def _inputs(y: Any, s: Any, weight: Any) -> tuple[np.ndarray, np.ndarray, np.ndarray | None]:
    from gbrank._validation import check_row_weights

    y = as_float_array(y, "labels")
    s = as_float_array(s, "scores", allow_2d=True)
    n = y.size
    if s.ndim == 1:
        refuse_flat_multiclass(s.size, f"(n, K) = ({n}, K), K ≥ 2", n)
    if s.shape[0] != n or s.shape[1] < 2:
        raise ValueError(f"multiclass scores must have shape ({n}, K) with K ≥ 2, got "
                         f"{s.shape}")
    check_finite(y, "labels")
    check_finite(s, "scores")
    k = s.shape[1]
    bad = np.flatnonzero((y != np.floor(y)) | (y < 0) | (y >= k))
    if bad.size:
        raise ValueError(f"multiclass labels must be integers in [0, {k}) (one score column "
                         f"per class); {bad.size} are not (first at index {bad[0]}: "
                         f"{float(y[bad[0]])!r})")
    return y.astype(np.int64), s, check_row_weights(weight, n)


_MARGIN_FIX = ("{name} reads probabilities (n, K) by default, as scikit-learn does; pass "
               "margin=True for raw margins (or log-probabilities)")


def _probabilities(s: np.ndarray, name: str, eps: float | None = None) -> None:
    r"""Refuse (n, K) probabilities outside [0, 1], or (given ``eps``, the machine epsilon
    of their dtype) whose rows do not add up to 1 within scikit-learn's tolerance
    :math:`\sqrt{\epsilon}` (a softmax; one-vs-rest probabilities need normalising
    first)."""
    fix = _MARGIN_FIX.format(name=name)
    check_probabilities(s, "scores", fix)
    if eps is not None:
        total = s.sum(axis=1)
        bad = np.flatnonzero(~np.isclose(total, 1.0, rtol=np.sqrt(eps), atol=0.0))
        if bad.size:
            raise ValueError(
                f"{bad.size} rows of scores do not add up to 1 (first: row {bad[0]}, "
                f"{float(total[bad[0]])!r}), so they are not class probabilities; {fix}. "
                "One-vs-rest probabilities: divide each row by its sum first")


def _confusion_matrix(y: np.ndarray, pred: np.ndarray, k: int, w: np.ndarray | None) -> np.ndarray:
    """``m[true, predicted]`` summed weights."""
    m = np.bincount(y * k + pred, weights=w, minlength=k * k)
    return m.reshape(k, k).astype(np.float64)


def fbeta_multiclass(y: Any, s: Any, beta: float = 1.0, average: str = "macro", *,
                     weight: Any = None) -> float:
    r"""F_β of the argmax predictions, averaged over classes.

    Per class c, with a true positives, b false positives and c false negatives
    (summed weights), :math:`F_\beta = (1+\beta^2)a / ((1+\beta^2)a + b + \beta^2 c)`.
    ``average``: ``"macro"`` the plain mean over the classes present in the labels or
    the predictions (scikit-learn's ``f1_score(average="macro")``; a present class with
    a = 0 scores 0); ``"weighted"`` the mean weighted by each class's weight in the
    labels; ``"micro"`` F_β of the counts pooled over classes (the accuracy, for
    single-label data).

    Parameters
    ----------
    y : array-like
        Integer classes ``0 … K−1``.
    s : array-like, shape (n, K)
        Probabilities, log-probabilities or raw margins: only each row's argmax is read,
        which a softmax, a per-class sigmoid or a logarithm leaves unchanged.
    beta : float, default 1.0
    average : {"macro", "weighted", "micro"}, default "macro"
    weight : array-like, optional
        One weight per row.

    Returns
    -------
    float

    Examples
    --------
    >>> import numpy as np
    >>> from gbrank.metrics import fbeta_multiclass
    >>> y = np.array([0, 1, 2, 2])
    >>> s = np.eye(3)[[0, 2, 2, 2]]  # predictions 0, 2, 2, 2
    >>> round(fbeta_multiclass(y, s), 6)  # F1 per class: 1, 0, 0.8
    0.6
    """
    b2 = check_beta(beta) ** 2
    average = check_choice(average, "average", ("macro", "weighted", "micro"))
    y, s, w = _inputs(y, s, weight)
    k = s.shape[1]
    pred = np.argmax(s, axis=1)
    m = _confusion_matrix(y, pred, k, w)
    tp = np.diag(m)
    fp = m.sum(axis=0) - tp
    fn = m.sum(axis=1) - tp
    if average == "micro":
        return float(_fbeta_from_counts(tp.sum(), fp.sum(), fn.sum(), b2))
    f = _fbeta_per_class(m, b2)
    if average == "weighted":
        support = m.sum(axis=1)
        return float(np.dot(f, support) / support.sum())
    return _macro(f, y, pred)


def _fbeta_per_class(m: np.ndarray, b2: float) -> np.ndarray:
    """F_β of each class from the confusion matrix ``m[true, predicted]``."""
    tp = np.diag(m)
    fp = m.sum(axis=0) - tp
    fn = m.sum(axis=1) - tp
    den = (1 + b2) * tp + fp + b2 * fn
    return np.divide((1 + b2) * tp, den, out=np.zeros(m.shape[0]), where=den > 0)


def _macro(f: np.ndarray, y: np.ndarray, pred: np.ndarray) -> float:
    """The mean of per-class values over the classes in the labels or the predictions,
    on any row, whatever its weight (scikit-learn's ``unique_labels``: a class seen only
    on rows of weight 0 is present, with F_β 0)."""
    k = f.size
    present = (np.bincount(y, minlength=k) + np.bincount(pred, minlength=k)) > 0
    return float(np.mean(f[present]))


def balanced_accuracy(y: Any, s: Any, *, weight: Any = None) -> float:
    r"""Mean over the classes present in the labels of each class's recall
    :math:`a / (a + c)` of the argmax predictions (scikit-learn's
    ``balanced_accuracy_score``).

    Parameters
    ----------
    y : array-like
        Integer classes ``0 … K−1``.
    s : array-like, shape (n, K)
        Probabilities, log-probabilities or raw margins (only the argmax is read, as in
        :func:`fbeta_multiclass`).
    weight : array-like, optional
        One weight per row.

    Returns
    -------
    float

    Examples
    --------
    >>> import numpy as np
    >>> from gbrank.metrics import balanced_accuracy
    >>> balanced_accuracy(np.array([0, 0, 1, 1]), np.eye(2)[[0, 0, 0, 1]])
    0.75
    """
    y, s, w = _inputs(y, s, weight)
    m = _confusion_matrix(y, np.argmax(s, axis=1), s.shape[1], w)
    support = m.sum(axis=1)
    present = support > 0
    return float(np.mean(np.diag(m)[present] / support[present]))


def multiclass_log_loss(y: Any, s: Any, *, weight: Any = None, margin: bool = False) -> float:
    r"""Mean cross-entropy of predicted class probabilities :math:`P`,
    :math:`-\sum_i w_i \log P_{i, y_i} / \sum_i w_i`. Lower is better.

    On probabilities (the default) each :math:`P_{i, y_i}` is clipped to
    :math:`[\epsilon, 1 - \epsilon]` (:math:`\epsilon` the machine epsilon of the scores'
    float dtype): scikit-learn's ``log_loss(y, P, labels=range(K))``. With
    ``margin=True``, :math:`P = \mathrm{softmax}(s)`, computed in log space (finite for
    any finite scores, no clipping).

    Parameters
    ----------
    y : array-like
        Integer classes ``0 … K−1``.
    s : array-like, shape (n, K)
        Class probabilities (``predict_proba(X)``; every row adds up to 1), or with
        ``margin=True`` raw margins or log-probabilities.
    weight : array-like, optional
        One weight per row.
    margin : bool, default False
        ``s`` holds raw margins, not probabilities.

    Returns
    -------
    float

    Raises
    ------
    ValueError
        With ``margin=False``, for scores outside [0, 1] or rows that do not add up to 1
        (pass ``margin=True`` for margins).

    Examples
    --------
    >>> import numpy as np
    >>> from gbrank.metrics import multiclass_log_loss
    >>> P = np.array([[0.5, 0.25, 0.25], [0.2, 0.6, 0.2]])
    >>> round(multiclass_log_loss([0, 1], P), 6)  # (-log 0.5 - log 0.6) / 2
    0.601986
    >>> round(multiclass_log_loss([0, 1], np.zeros((2, 4)), margin=True), 6)  # log 4
    1.386294
    """
    eps = _clip_eps(s)
    margin = check_bool(margin, "margin")
    y, s, w = _inputs(y, s, weight)
    if not margin:
        _probabilities(s, "multiclass_log_loss", eps)
        p = np.clip(s[np.arange(y.size), y], eps, 1.0 - eps)
        return float(np.average(-np.log(p), weights=w))
    top = s.max(axis=1, keepdims=True)
    log_norm = top[:, 0] + np.log(np.exp(s - top).sum(axis=1))
    loss = log_norm - s[np.arange(y.size), y]
    return float(np.average(loss, weights=w))


def _macro_fbeta_of(y: np.ndarray, pred: np.ndarray, k: int, w: np.ndarray | None,
                    b2: float) -> float:
    """Macro F_β of given predictions (as :func:`fbeta_multiclass` computes it)."""
    m = _confusion_matrix(y, pred, k, w)
    return _macro(_fbeta_per_class(m, b2), y, pred)


def _best_offset_of_class(y: np.ndarray, t: np.ndarray, s_k: np.ndarray, k: int,
                          w: np.ndarray, b2: float, current: float) -> tuple[float, float]:
    """The offset of class ``k`` maximising macro F_β with the other offsets fixed
    (``t``: scores plus offsets, column ``k`` ignored), by one sweep over every cut;
    among equally good cuts the one nearest ``current``. Returns (offset, value)."""
    n, kk = t.shape
    other = t.copy()
    other[:, k] = -np.inf
    o = np.argmax(other, axis=1)
    thr = other[np.arange(n), o] - s_k  # the row predicts k iff offset > thr
    order = np.argsort(thr, kind="stable")
    thr, o, ys, ws = thr[order], o[order], y[order], w[order]
    onehot_y = np.zeros((n, kk))
    onehot_y[np.arange(n), ys] = ws
    onehot_o = np.zeros((n, kk))
    onehot_o[np.arange(n), o] = ws
    support = onehot_y.sum(axis=0)
    # Counts when the first j sorted rows predict k (j = 0 … n), as (n + 1, K) arrays.
    pred = np.empty((n + 1, kk))
    pred[0] = onehot_o.sum(axis=0)
    pred[1:] = pred[0] - np.cumsum(onehot_o, axis=0)
    pred[:, k] = np.concatenate(([0.0], np.cumsum(ws)))
    hit = onehot_o * (o == ys)[:, None]  # rows predicted right before they switch
    tp = np.empty((n + 1, kk))
    tp[0] = hit.sum(axis=0)
    tp[1:] = tp[0] - np.cumsum(hit, axis=0)
    tp[:, k] = np.concatenate(([0.0], np.cumsum(onehot_y[:, k])))
    den = b2 * support + pred
    f = np.divide((1 + b2) * tp, den, out=np.zeros_like(den), where=den > 0)
    # Present classes as _macro counts them: on any row, whatever its weight.
    shown = np.zeros((n + 1, kk), dtype=np.int64)
    shown[0] = np.bincount(o, minlength=kk)
    onehot_count = np.zeros((n, kk), dtype=np.int64)
    onehot_count[np.arange(n), o] = 1
    shown[1:] = shown[0] - np.cumsum(onehot_count, axis=0)
    shown[:, k] = np.arange(n + 1)
    present = (np.bincount(ys, minlength=kk) > 0) | (shown > 0)
    macro = (f * present).sum(axis=1) / np.maximum(present.sum(axis=1), 1)
    # Only cuts between distinct thresholds can be realised (equal ones switch together).
    valid = np.ones(n + 1, dtype=bool)
    valid[1:n] = thr[1:] > thr[:-1]
    best = macro[valid].max()
    cuts = np.flatnonzero(valid & (macro >= best - 1e-12 * max(1.0, abs(best))))
    # The offset realising cut j: rows 0 … j−1 above it, rows j … below.
    lo = np.where(cuts > 0, thr[np.maximum(cuts - 1, 0)], -np.inf)
    hi = np.where(cuts < n, thr[np.minimum(cuts, n - 1)], np.inf)
    inside = (lo < current) & (current < hi)
    if inside.any():
        return current, float(best)
    points = np.array([_between_cuts(a, b) for a, b in zip(lo, hi, strict=True)])
    return float(points[np.argmin(np.abs(points - current))]), float(best)


def _between_cuts(lo: float, hi: float) -> float:
    """A number strictly between ``lo`` and ``hi`` (either may be infinite): the
    midpoint, or one unit beyond the finite end."""
    if np.isinf(lo) and np.isinf(hi):
        return 0.0
    if np.isinf(lo):
        return hi - 1.0 if hi - 1.0 < hi else float(np.nextafter(hi, -np.inf))
    if np.isinf(hi):
        return lo + 1.0 if lo + 1.0 > lo else float(np.nextafter(lo, np.inf))
    mid = lo / 2.0 + hi / 2.0
    return mid if lo < mid < hi else float(np.nextafter(lo, np.inf))


def best_class_offsets(y: Any, s: Any, beta: float = 1.0, *, weight: Any = None,
                       max_sweeps: int = 100, margin: bool = False) -> tuple[np.ndarray, float]:
    r"""Per-class offsets :math:`b` for which ``argmax_k (s_k + b_k)`` maximises macro
    :math:`F_\beta`, and that value: threshold moving for K classes.

    The offsets act on the log scale. ``s`` holds class probabilities :math:`P` by
    default, read as :math:`s = \log P` (a probability of 0 as the smallest positive
    double), so the decision is :math:`\arg\max_k P_k e^{b_k}`: each class's
    probability reweighted. With ``margin=True`` ``s`` holds raw scores or
    log-probabilities (they differ by a per-row constant, which leaves every argmax
    unchanged). Either way :math:`b_k` is an additive log-odds correction of class k.
    The search is coordinate ascent from :math:`b = 0` (the plain argmax):
    for each class in turn, with the other offsets fixed, every row's prediction
    switches to k at one value of :math:`b_k`; sorting those values and sweeping them
    gives the exact best :math:`b_k` (O(n log n + nK)). Sweeps over the classes repeat
    until none improves (at most ``max_sweeps``). Each step strictly increases macro
    F_β. The ascent runs from two starts, :math:`b = 0` (the argmax) and
    :math:`b_k = -\log \pi_k` (rescaling: each probability divided by its class's share
    :math:`\pi_k` of ``y``), and the better end is kept; so the result is never worse
    than the argmax and is optimal in every single offset (a coordinate-wise optimum,
    not necessarily the best over all K offsets jointly). Deterministic: among equally
    good values of :math:`b_k` the current one is kept, else the nearest is taken (the
    midpoint between the two switching values, or one unit beyond the last). Classes
    without rows (of positive weight) in ``y`` are not searched and keep offset 0.

    Parameters
    ----------
    y : array-like
        Integer classes ``0 … K−1``.
    s : array-like, shape (n, K)
        Class probabilities (``predict_proba(X)``), or with ``margin=True`` raw scores
        or log-probabilities.
    beta : float, default 1.0
    weight : array-like, optional
        One weight per row.
    max_sweeps : int, default 100
    margin : bool, default False
        ``s`` holds raw scores or log-probabilities, not probabilities.

    Returns
    -------
    (offsets, value) : ndarray of shape (K,), float
        ``fbeta_multiclass(y, np.log(P) + offsets, beta, weight=weight)`` is ``value``
        (every probability positive); on margins,
        ``fbeta_multiclass(y, s + offsets, beta, weight=weight)``.

    Raises
    ------
    ValueError
        With ``margin=False``, for scores outside [0, 1] (pass ``margin=True`` for
        margins).

    Examples
    --------
    >>> import numpy as np
    >>> from gbrank.metrics import best_class_offsets, fbeta_multiclass
    >>> y = np.array([0, 0, 0, 0, 1, 1, 2])
    >>> P = np.array([[.6, .3, .1], [.5, .3, .2], [.7, .2, .1], [.6, .2, .2],
    ...               [.5, .4, .1], [.45, .35, .2], [.5, .2, .3]])
    >>> round(fbeta_multiclass(y, P), 3)  # argmax predicts class 0 everywhere
    0.242
    >>> b, value = best_class_offsets(y, P)
    >>> value, bool(value == fbeta_multiclass(y, np.log(P) + b))
    (1.0, True)
    >>> best_class_offsets(y, np.log(P), margin=True)[1]  # log-probabilities
    1.0
    """
    from gbrank._validation import check_integer

    b2 = check_beta(beta) ** 2
    sweeps = check_integer(max_sweeps, "max_sweeps", 1)
    margin = check_bool(margin, "margin")
    y, s, w = _inputs(y, s, weight)
    if not margin:
        _probabilities(s, "best_class_offsets")
        s = np.log(np.maximum(s, np.finfo(np.float64).tiny))
    n, k = s.shape
    w_rows = np.ones(n) if w is None else w
    mass = np.bincount(y, weights=w_rows, minlength=k)
    has_rows = mass > 0
    best = _ascend(y, s, w, w_rows, b2, has_rows, np.zeros(k), sweeps)
    # Rescaling: divide each probability by its class's share of y.
    prior = -np.log(np.where(has_rows, mass, mass.sum()) / mass.sum())
    rescaled = _ascend(y, s, w, w_rows, b2, has_rows, prior, sweeps)
    return rescaled if rescaled[1] > best[1] else best


def _ascend(y: np.ndarray, s: np.ndarray, w: np.ndarray | None, w_rows: np.ndarray,
            b2: float, has_rows: np.ndarray, b: np.ndarray,
            sweeps: int) -> tuple[np.ndarray, float]:
    """Coordinate ascent of macro F_β from offsets ``b`` (see :func:`best_class_offsets`)."""
    k = s.shape[1]
    value = _macro_fbeta_of(y, np.argmax(s + b, axis=1), k, w, b2)
    for _ in range(sweeps):
        improved = False
        for c in np.flatnonzero(has_rows):
            offset, _ = _best_offset_of_class(y, s + b, s[:, c], int(c), w_rows, b2,
                                              float(b[c]))
            if offset == b[c]:
                continue
            trial = b.copy()
            trial[c] = offset
            # Judge the argmax itself (a cut within rounding of a switching value is
            # read as the argmax reads it).
            got = _macro_fbeta_of(y, np.argmax(s + trial, axis=1), k, w, b2)
            if got > value:
                b, value, improved = trial, got, True
        if not improved:
            break
    return b, value
