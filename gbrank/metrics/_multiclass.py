"""Multiclass metrics on raw scores: F_β averaged over classes, balanced accuracy and
the log loss of the softmax.

Scores are ``(n, K)`` margins (or LightGBM's class-major flat vector of ``n·K``); the
prediction of a row is the class of its largest score (the lowest class on a tie), as
``argmax`` gives it. Labels are integers ``0 … K−1``.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from gbrank._validation import as_float_array, check_beta, check_choice, check_finite

__all__ = ["fbeta_multiclass", "balanced_accuracy", "multiclass_log_loss"]


def _inputs(y: Any, s: Any, weight: Any) -> tuple[np.ndarray, np.ndarray, np.ndarray | None]:
    from gbrank._validation import check_row_weights

    y = as_float_array(y, "labels")
    s = as_float_array(s, "scores", allow_2d=True)
    n = y.size
    if s.ndim == 1:
        if n == 0 or s.size % n or s.size // n < 2:
            raise ValueError(f"multiclass scores must have shape (n, K) with K ≥ 2, or be "
                             f"LightGBM's flat n·K vector; got {s.size} scores for {n} labels")
        s = np.ascontiguousarray(s.reshape(s.size // n, n).T)
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


def _confusion(y: np.ndarray, pred: np.ndarray, k: int, w: np.ndarray | None) -> np.ndarray:
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
        Raw scores (or probabilities: only their argmax is read).
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
    m = _confusion(y, np.argmax(s, axis=1), k, w)
    tp = np.diag(m)
    fp = m.sum(axis=0) - tp
    fn = m.sum(axis=1) - tp
    if average == "micro":
        a, b, c = tp.sum(), fp.sum(), fn.sum()
        den = (1 + b2) * a + b + b2 * c
        return float((1 + b2) * a / den) if den > 0 else 1.0
    den = (1 + b2) * tp + fp + b2 * fn
    f = np.divide((1 + b2) * tp, den, out=np.zeros(k), where=den > 0)
    if average == "weighted":
        support = m.sum(axis=1)
        return float(np.dot(f, support) / support.sum())
    present = (m.sum(axis=1) + m.sum(axis=0)) > 0
    return float(np.mean(f[present]))


def balanced_accuracy(y: Any, s: Any, *, weight: Any = None) -> float:
    r"""Mean over the classes present in the labels of each class's recall
    :math:`a / (a + c)` of the argmax predictions (scikit-learn's
    ``balanced_accuracy_score``).

    Examples
    --------
    >>> import numpy as np
    >>> from gbrank.metrics import balanced_accuracy
    >>> balanced_accuracy(np.array([0, 0, 1, 1]), np.eye(2)[[0, 0, 0, 1]])
    0.75
    """
    y, s, w = _inputs(y, s, weight)
    m = _confusion(y, np.argmax(s, axis=1), s.shape[1], w)
    support = m.sum(axis=1)
    present = support > 0
    return float(np.mean(np.diag(m)[present] / support[present]))


def multiclass_log_loss(y: Any, s: Any, *, weight: Any = None) -> float:
    r"""Mean cross-entropy of the softmax of the raw scores,
    :math:`-\sum_i w_i \log \mathrm{softmax}(s_i)_{y_i} / \sum_i w_i`, computed in log
    space (finite for any finite scores; scikit-learn's ``log_loss`` on probabilities
    clips them instead). Lower is better.

    Examples
    --------
    >>> import numpy as np
    >>> from gbrank.metrics import multiclass_log_loss
    >>> round(multiclass_log_loss(np.array([0, 1]), np.zeros((2, 4))), 6)  # log 4
    1.386294
    """
    y, s, w = _inputs(y, s, weight)
    top = s.max(axis=1, keepdims=True)
    log_norm = top[:, 0] + np.log(np.exp(s - top).sum(axis=1))
    loss = log_norm - s[np.arange(y.size), y]
    return float(np.average(loss, weights=w))
