"""Cross-entropy against targets in [0, 1]: the pointwise logistic loss."""

from __future__ import annotations

from types import SimpleNamespace
from typing import Any

import numpy as np

from gbrank._kernels import cross_entropy as _k
from gbrank._proba import logit
from gbrank._targets import TARGET_MAPPINGS, relevance_targets
from gbrank._validation import (
    as_float_array,
    check_choice,
    check_finite,
    check_lengths,
    check_number,
    check_row_weights,
    check_threshold,
)
from gbrank.objectives._base import Objective

__all__ = ["CrossEntropy"]

_EMPTY = np.empty(0, dtype=np.float64)
class CrossEntropy(Objective):
    r"""Cross-entropy of :math:`\sigma(s)` against targets :math:`t \in [0, 1]`.

    .. math:: \ell(t, s) = -t \log \sigma(s) - (1 - t) \log(1 - \sigma(s)),\quad
              \partial\ell/\partial s = \sigma(s) - t,\quad
              \partial^2\ell/\partial s^2 = \sigma(s)(1 - \sigma(s)).

    The loss of a data set is :math:`\sum_i w_i \ell(t_i, s_i)`. With labels in
    {0, 1} it is the logistic loss (LightGBM's ``binary``, ``FocalLoss(gamma=0)``);
    with targets in [0, 1] it is LightGBM's ``cross_entropy``. Its scores are
    calibrated margins: :math:`\sigma(s)` estimates the probability of the target.

    Targets from labels (``target``):

    - ``"identity"``: the labels are the targets (clicks 0/1, click-through rates);
    - ``"exponential"``: grades as probabilities of relevance,
      :math:`t = (2^l - 1) / (2^{g_{max}} - 1)` (ERR's relevance model, normalised
      so the top grade is 1);
    - ``"linear"``: :math:`t = l / g_{max}`;
    - ``"binary"``: :math:`t = 1` for :math:`l \ge` ``threshold``, else 0;
    - ``"auto"`` (default): ``"identity"`` when every label lies in [0, 1] and no
      ``max_grade`` is given, else ``"exponential"`` (a ``max_grade`` says the labels
      are grades, so a part of the data whose grades are all 0 or 1 maps as the whole).

    :math:`g_{max}` is ``max_grade``, or the largest label of the data given (so the
    mapping of one call depends on all its labels; :meth:`bind_data_defaults` fixes it
    for checks on parts of the data).

    Parameters
    ----------
    target : {"auto", "identity", "exponential", "linear", "binary"}, default "auto"
    max_grade : float, optional
        :math:`g_{max}` of the grade mappings (≥ every label).
    threshold : float, default 1
        Relevance threshold of ``target="binary"``.

    Notes
    -----
    Ranking objectives take it as their calibration term (``RankNet(calibration=α)``,
    ``LambdaRank(calibration=α)``, :class:`gbrank.objectives.Combination`), which pins
    the scale and offset that a ranking loss leaves free.

    Examples
    --------
    >>> import numpy as np
    >>> from gbrank.objectives import CrossEntropy
    >>> grad, hess = CrossEntropy().grad_hess(np.array([1.0, 0.0]), np.array([0.0, 0.0]))
    >>> grad.tolist(), hess.tolist()
    ([-0.5, 0.5], [0.25, 0.25])
    """

    task = "binary"
    loss_blocks = "row"
    #: σ(score) estimates the probability of the target.
    probability = True

    def __init__(self, target: str = "auto", max_grade: float | None = None,
                 threshold: float = 1) -> None:
        self.target = target
        self.max_grade = max_grade
        self.threshold = threshold

    def _validate_params(self) -> SimpleNamespace:
        return SimpleNamespace(
            target=check_choice(self.target, "target", TARGET_MAPPINGS),
            max_grade=None if self.max_grade is None else check_number(
                self.max_grade, "max_grade", 0.0),
            threshold=check_threshold(self.threshold),
        )

    def _inputs(self, y: Any, s: Any, weight: Any) -> tuple[np.ndarray, ...]:
        p = self._params()
        y = as_float_array(y, "labels")
        s = as_float_array(s, "scores")
        check_lengths(y, s)
        check_finite(y, "labels")
        check_finite(s, "scores")
        w = check_row_weights(weight, y.size)
        t = relevance_targets(y, p.target, p.max_grade, p.threshold)
        return t, s, _EMPTY if w is None else w

    def grad_hess(self, y: Any, s: Any, group: Any = None, *, qid: Any = None,
                  weight: Any = None) -> tuple[np.ndarray, np.ndarray]:
        """Gradient :math:`w(\\sigma(s) - t)` and Hessian :math:`w\\sigma(1 - \\sigma)`;
        ``group``/``qid`` are ignored (the loss is a sum over rows)."""
        t, s, w = self._inputs(y, s, weight)
        grad = np.empty_like(s)
        hess = np.empty_like(s)
        _k.cross_entropy_grad_hess(t, s, w, grad, hess)
        return grad, hess

    def loss(self, y: Any, s: Any, group: Any = None, *, qid: Any = None, weight: Any = None,
             at: Any = None) -> float:
        """:math:`\\sum_i w_i \\ell(t_i, s_i)` (a sum over rows)."""
        t, s, w = self._inputs(y, s, weight)
        return float(_k.cross_entropy_loss(t, s, w))

    def target_mapping(self, y: Any) -> dict[str, Any]:
        p = self.bind_data_defaults(y)._params()
        return {"target": p.target, "max_grade": p.max_grade, "threshold": p.threshold}

    def bind_data_defaults(self, y: Any) -> CrossEntropy:
        p = self._params()
        if p.max_grade is not None or p.target in ("identity", "binary"):
            return self
        y = as_float_array(y, "labels")
        if p.target == "auto" and (y.size == 0 or (y.min() >= 0.0 and y.max() <= 1.0)):
            return self
        top = float(y.max()) if y.size else 0.0
        return type(self)(**{**self.get_params(), "max_grade": top})

    def init_score(self, y: Any, weight: Any = None) -> float:
        """The loss-optimal constant: the logit of the (weighted) mean target, clipped to
        [1e-12, 1 − 1e-12] so it is finite."""
        t, _, w = self._inputs(y, np.zeros(np.size(y)), weight)
        mean = float(np.average(t, weights=None if w.size == 0 else w))
        mean = min(max(mean, 1e-12), 1.0 - 1e-12)
        return logit(mean)
