"""Probabilities from raw margins (what custom objectives leave in the booster)."""

from __future__ import annotations

from typing import Any

import numpy as np

from gbrank._validation import as_float_array, check_finite

__all__ = ["logit", "predict_proba"]


def logit(p: Any) -> Any:
    """The margin of probability ``p``, ``log(p) − log(1 − p)`` (the inverse of the
    sigmoid; ±inf at 1 and 0): one formula wherever a probability becomes a margin, so
    a threshold printed as a probability decides where its margin does."""
    with np.errstate(divide="ignore"):
        out = np.log(p) - np.log1p(-np.asarray(p, dtype=np.float64))
    return float(out) if np.ndim(out) == 0 else out


def predict_proba(margins: Any) -> np.ndarray:
    r"""Probabilities from raw scores: sigmoid for 1-D, softmax over columns for 2-D.

    A booster trained with a custom objective (``FocalLoss``, ``FBetaSurrogate``)
    predicts raw margins; ``predict_proba(booster.predict(X, raw_score=True) + init)``
    turns them into probabilities.

    1-D: :math:`\sigma(z) = 1 / (1 + e^{-z})`, evaluated as :math:`e^{z} / (1 + e^{z})`
    for negative z so that no ``exp`` overflows (exact 0/1 only where float64
    underflows). 2-D (n, K): :math:`\mathrm{softmax}(z)_k = e^{z_k - m} / \sum_j
    e^{z_j - m}` with m the row maximum. Focal loss with γ > 0 is not a proper
    scoring rule, so these are scores in [0, 1] rather than calibrated probabilities.

    Parameters
    ----------
    margins : array-like, shape (n,) or (n, K)

    Returns
    -------
    ndarray of float64, same shape

    Examples
    --------
    >>> import numpy as np
    >>> from gbrank import predict_proba
    >>> predict_proba([0.0, np.log(3.0)]).round(4).tolist()  # σ(log 3) = 3/4
    [0.5, 0.75]
    >>> predict_proba([-800.0, 800.0]).tolist()  # no overflow
    [0.0, 1.0]
    >>> predict_proba([[0.0, 0.0, np.log(2.0)]]).round(4).tolist()  # softmax per row
    [[0.25, 0.25, 0.5]]
    """
    z = as_float_array(margins, "margins", allow_2d=True)
    check_finite(z, "margins")
    if z.ndim == 2:
        e = np.exp(z - z.max(axis=1, keepdims=True))
        return e / e.sum(axis=1, keepdims=True)
    e = np.exp(-np.abs(z))
    return np.where(z >= 0, 1.0 / (1.0 + e), e / (1.0 + e))


def log_softmax(z: np.ndarray) -> np.ndarray:
    r"""Row-wise :math:`\log \mathrm{softmax}(z)_k = z_k - \log \sum_j e^{z_j}` of (n, K)
    raw scores, in log space (finite for any finite scores)."""
    top = z.max(axis=1, keepdims=True)
    return z - (top + np.log(np.exp(z - top).sum(axis=1, keepdims=True)))
