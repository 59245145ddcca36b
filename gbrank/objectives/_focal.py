"""Focal loss (Lin et al. 2017): binary, and softmax multiclass."""

from __future__ import annotations

from types import SimpleNamespace
from typing import Any

import numpy as np

from gbrank._kernels import focal as _k
from gbrank._kernels._step import inverse_step
from gbrank._proba import logit
from gbrank._validation import (
    as_float_array,
    check_choice,
    check_finite,
    check_integer,
    check_lengths,
    check_max_step,
    check_number,
    check_row_weights,
    prepare_binary,
    refuse_flat_multiclass,
)
from gbrank.objectives._base import Objective

__all__ = ["FocalLoss"]

_EMPTY = np.empty(0, dtype=np.float64)


def _as_rows(x: Any, name: str, float32_ok: bool = False) -> np.ndarray:
    """Cheap path for the per-round call: float64 ndarrays (and float32 labels, which is
    what LightGBM passes) reach the kernel without a copy."""
    if isinstance(x, np.ndarray) and x.ndim == 1 and x.flags.c_contiguous and x.size and (
            x.dtype == np.float64 or (float32_ok and x.dtype == np.float32)):
        return x
    return as_float_array(x, name)


def _check_weight(weight: Any, n: int) -> np.ndarray:
    w = check_row_weights(weight, n)
    return _EMPTY if w is None else w


class FocalLoss(Objective):
    r"""Focal loss on raw margins, binary or softmax multiclass.

    Binary, with :math:`p = \sigma(z)`, :math:`p_t = p` for a positive row and
    :math:`1 - p` for a negative one, :math:`\alpha_t = \alpha` / :math:`1 - \alpha`
    (1 when ``alpha=None``):

    .. math:: FL(z) = -\alpha_t (1 - p_t)^\gamma \log p_t .

    ``gamma=0, alpha=None`` is exactly the logistic loss; with ``max_step=None`` it
    trains exactly like LightGBM's ``binary`` (see ``max_step``).
    The loss of a data set is :math:`\sum_i w_i FL(z_i)`; per-row weights multiply
    the gradient and the Hessian. Everything is computed in log space
    (:math:`\log p_t = \log\sigma(\pm z)`), finite for any finite margin.

    Derivatives (``u = z`` for positives, ``-z`` for negatives, :math:`q = 1 - p_t`,
    :math:`\ell = \log p_t`): :math:`\partial FL/\partial z = \pm \alpha_t q^\gamma
    (\gamma p_t \ell - q)` and :math:`\partial^2 FL/\partial z^2 = \alpha_t p_t q^\gamma
    [q (1 + 2\gamma + \gamma \ell) - \gamma^2 p_t \ell]` (derivation in
    ``gbrank/_kernels/focal.py``). For γ > 0 the true second derivative is negative
    in places (min ≈ −0.047 at γ = 2), so :meth:`grad_hess` — what a booster gets —
    returns ``w · max(h, hess_floor)``, raised where needed to bound the Newton step
    (``max_step``), while :meth:`exact_grad_hess` returns the true ``h`` (for
    gradient checks).

    Multiclass (``num_class=K``): scores are (n, K) raw scores, labels integers in
    ``[0, K)``, :math:`p_t` the softmax probability of the true class and
    :math:`\alpha_t` = ``alpha[c]`` (a length-K sequence of positive class weights,
    ``"balanced"``, or ``None``). Gradients and Hessians are (n, K), the diagonal of
    the Hessian. Class weights multiply a row's loss exactly as a sample weight does:
    ``alpha`` and per-row weights ``w`` give :math:`\sum_i w_i \alpha_{c_i} FL_i`.

    ``alpha="balanced"`` is scikit-learn's rule, :math:`\alpha_c = n / (K n_c)` with
    :math:`n_c` the number of rows of class c in the labels of the call (sample weights
    do not enter, as in ``compute_class_weight``). A booster passes every training
    label on every round, so training uses the weights of the training labels;
    :meth:`bind_data_defaults` fixes them for evaluating parts of the data (the
    gradient check) and :meth:`init_score` uses them too.

    With γ = 0 (softmax cross-entropy), ``hess_floor=0`` and ``max_step=None`` the
    gradient and Hessian are :math:`w_i \alpha_{c_i} (p_k - [k = c_i])` and
    :math:`w_i \alpha_{c_i} p_k (1 - p_k)`, the weighted softmax derivatives. The
    boosters' own objectives use the same gradient but a scaled Hessian: LightGBM's
    ``multiclass`` :math:`\tfrac{K}{K-1} p_k(1-p_k)`, XGBoost's ``multi:softprob``
    :math:`2 p_k(1-p_k)`. Without an L2 penalty a constant Hessian factor leaves the
    trees' splits unchanged and divides every leaf value by it, so native training at
    learning rate η is this objective at η·(K−1)/K (LightGBM) or η/2 (XGBoost); with
    an L2 penalty or a minimum leaf Hessian they differ further.

    Parameters
    ----------
    gamma : float, default 2.0
        Focusing parameter, ≥ 0.
    alpha : float, sequence of float or "balanced", optional
        Binary: weight of the positive class, in (0, 1). Multiclass: per-class
        weights (> 0), one per class, or ``"balanced"`` (inverse class frequency, see
        above; multiclass only).
    hess_floor : float, default 1e-6
        Lower bound on the Hessian a booster receives (≥ 0). Small enough that
        γ = 0 training matches LightGBM's ``binary`` (logistic Hessians p(1 − p)
        stay far above it on realistic margins), large enough that a leaf of
        well-classified rows (Hessian ~ e^{−(1+γ)|z|}) cannot produce an
        unbounded step; LightGBM's ``min_sum_hessian_in_leaf`` (1e-3) and
        XGBoost's ``min_child_weight`` (1) further refuse leaves made only of
        floored rows.
    num_class : int, optional
        ``None`` (binary) or K ≥ 2 for the softmax multiclass loss.
    max_step : float > 0 or None, default 16.0
        Bound on the Newton step. The booster (:meth:`grad_hess`) receives the
        Hessian :math:`\max(w\,h_f, |w g| / c)`, c = ``max_step``,
        :math:`h_f = \max(h, \mathrm{hess\_floor})`, elementwise (each of the K entries
        of a multiclass row), so every leaf value :math:`-\sum g / \sum h` (before the
        learning rate; an L2 penalty only shrinks it) is at most c in size. Why: a
        badly misclassified row has a gradient of order 1 but a vanishing or negative
        true Hessian (floored to ``hess_floor``), so without a bound leaves of such
        rows take unbounded steps: multiclass focal training diverges, and so does
        logistic loss at 1,000:1. The gradient is unchanged and :meth:`exact_grad_hess`
        returns the true h. ``None``: no bound, ``w · max(h, hess_floor)``; with
        γ = 0 and ``alpha=None`` that is exactly LightGBM's ``binary`` (whose step is
        not bounded either, unless ``max_delta_step`` is set). The default, and the
        measurements it was chosen on: ``docs/max_step.md``.

    Notes
    -----
    Use with LightGBM as ``lgb.train({"objective": FocalLoss(...)}, ds)`` (add
    ``"num_class": K`` for multiclass) or ``LGBMClassifier(objective=FocalLoss(...))``;
    with XGBoost as ``xgb.train(params, dtrain, obj=gbrank.xgboost.objective(obj))``.
    Custom objectives start from raw score 0: set ``init_score=obj.init_score(y)``
    (repeated per row; multiclass: ``np.tile(c, (n, 1))``, an (n, K) array: LightGBM
    reads a flat one as class-major, so ``np.tile(c, n)`` would scramble it) on the
    ``lgb.Dataset`` /
    ``base_margin`` on the ``DMatrix``,
    and add the same constant to ``predict(..., raw_score=True)`` output, since
    LightGBM does not store a Dataset's init score in the model.

    Examples
    --------
    >>> import numpy as np
    >>> from gbrank.objectives import FocalLoss
    >>> y, z = np.array([1.0, 0.0]), np.array([0.0, 0.0])
    >>> grad, _ = FocalLoss(gamma=0.0).grad_hess(y, z)  # logistic loss: σ(z) − y
    >>> grad.tolist()
    [-0.5, 0.5]
    >>> round(FocalLoss(gamma=2.0).init_score(np.r_[np.ones(10), np.zeros(90)]), 3)
    -0.82

    Balanced class weights: each class weighs as much in total (``n / (K n_c)``).

    >>> y3 = np.r_[np.zeros(6), np.ones(3), 2 * np.ones(1)]
    >>> FocalLoss(num_class=3, alpha="balanced").bind_data_defaults(y3).alpha
    [0.5555555555555556, 1.1111111111111112, 3.3333333333333335]
    """

    loss_blocks = "row"

    def __init__(self, gamma: float = 2.0, alpha: Any = None, hess_floor: float = 1e-6,
                 num_class: int | None = None, max_step: float | None = 16.0,
                 ) -> None:
        self.gamma = gamma
        self.alpha = alpha
        self.hess_floor = hess_floor
        self.num_class = num_class
        self.max_step = max_step

    @property
    def task(self) -> str:  # type: ignore[override]
        """``"binary"``, or ``"multiclass"`` when ``num_class`` is set."""
        return "binary" if self.num_class is None else "multiclass"

    def _validate_params(self) -> SimpleNamespace:
        gamma = check_number(self.gamma, "gamma", 0.0)
        hess_floor = check_number(self.hess_floor, "hess_floor", 0.0)
        k = check_integer(self.num_class, "num_class", 2, allow_none=True)
        balanced = isinstance(self.alpha, str)
        if balanced:
            check_choice(self.alpha, "alpha", ("balanced",))
            if k is None:
                raise ValueError(
                    "alpha='balanced' weights the K classes of the multiclass loss: set "
                    "num_class; binary focal loss takes alpha in (0, 1), the positive "
                    "class's weight (the share of negatives, 1 - mean(y), gives the "
                    "balanced ratio)")
        if k is None:
            alpha = -1.0 if self.alpha is None else check_number(
                self.alpha, "alpha", 0.0, 1.0, low_open=True, high_open=True)
        elif self.alpha is None or balanced:
            alpha = _EMPTY
        else:
            try:
                a = np.asarray(self.alpha, dtype=np.float64).ravel()
            except (TypeError, ValueError):
                a = np.empty(0)
            if a.size != k or not np.all(np.isfinite(a)) or np.any(a <= 0):
                raise ValueError(
                    f"alpha must be None, 'balanced' or {k} finite class weights > 0 (one "
                    f"per class, num_class={k}), got {self.alpha!r}"
                )
            alpha = np.ascontiguousarray(a)
        max_step = check_max_step(self.max_step)
        return SimpleNamespace(gamma=gamma, hess_floor=hess_floor, num_class=k, alpha=alpha,
                               balanced=balanced, max_step=max_step,
                               inv_step=inverse_step(max_step))

    def _class_weights(self, y: np.ndarray) -> np.ndarray:
        """The per-class weights for validated multiclass labels ``y``: ``alpha`` as
        given, or the balanced weights of these labels (:func:`balanced_class_weights`)."""
        p = self._params()
        return balanced_class_weights(y, p.num_class) if p.balanced else p.alpha

    # -- validation -----------------------------------------------------------------------

    def _binary_inputs(self, y: Any, s: Any, weight: Any):
        y = _as_rows(y, "labels", float32_ok=True)
        s_arr = s
        if isinstance(s, np.ndarray) and s.ndim == 2 and s.shape[1] == 1:
            s_arr = s[:, 0]
        s_arr = _as_rows(s_arr, "scores")
        check_lengths(y, s_arr)
        return y, s_arr, _check_weight(weight, y.size)

    def _multiclass_inputs(self, y: Any, s: Any, weight: Any):
        k = self._params().num_class
        y = as_float_array(y, "labels")
        s = as_float_array(s, "scores", allow_2d=True)
        n = y.size
        if s.ndim == 1 and s.size == n * k:
            refuse_flat_multiclass(s.size, f"(n, num_class) = ({n}, {k})")
        if s.ndim != 2 or s.shape != (n, k):
            raise ValueError(
                f"multiclass scores must have shape (n, num_class) = ({n}, {k}), "
                f"got {s.shape}"
            )
        check_finite(y, "labels")
        check_finite(s, "scores")
        bad = np.flatnonzero((y != np.floor(y)) | (y < 0) | (y >= k))
        if bad.size:
            raise ValueError(
                f"multiclass labels must be integers in [0, {k}); {bad.size} are not "
                f"(first at index {bad[0]}: {y[bad[0]]!r})"
            )
        return y, s, _check_weight(weight, n)

    # -- protocol --------------------------------------------------------------------------

    def _grad_hess(self, y: Any, s: Any, weight: Any, exact: bool):
        p = self._params()
        # exact: the true Hessian (no floor: -1, no step bound: 0)
        floor, inv_step = (-1.0, 0.0) if exact else (p.hess_floor, p.inv_step)
        if p.num_class is not None:
            y, s, w = self._multiclass_inputs(y, s, weight)
            grad = np.empty_like(s)
            hess = np.empty_like(s)
            _k.multiclass_grad_hess(y, s, w, p.gamma, self._class_weights(y), floor,
                                    inv_step, grad, hess)
            return grad, hess
        y, s, w = self._binary_inputs(y, s, weight)
        grad = np.empty_like(s)
        hess = np.empty_like(s)
        n_bad, n_zero, n_minus = _k.binary_grad_hess(
            y, s, w, p.gamma, p.alpha, floor, inv_step, grad, hess)
        if n_bad or (n_zero and n_minus):
            prepare_binary(y.astype(np.float64), s, weight)  # raises the precise message
            raise ValueError("invalid binary labels or scores")  # pragma: no cover
        return grad, hess

    def grad_hess(self, y: Any, s: Any, group: Any = None, *, qid: Any = None,
                  weight: Any = None) -> tuple[np.ndarray, np.ndarray]:
        """Gradient and the booster's Hessian w.r.t. the margins: ``w · max(h,
        hess_floor)``, raised to ``|w g| / max_step`` where that is larger.

        ``group``/``qid`` are ignored (the loss is a sum over rows).
        """
        return self._grad_hess(y, s, weight, exact=False)

    def exact_grad_hess(self, y: Any, s: Any, group: Any = None, *, qid: Any = None,
                        weight: Any = None) -> tuple[np.ndarray, np.ndarray]:
        """Gradient and the true second derivative (may be negative for γ > 0)."""
        return self._grad_hess(y, s, weight, exact=True)

    def loss(self, y: Any, s: Any, group: Any = None, *, qid: Any = None, weight: Any = None,
             at: Any = None) -> float:
        """:math:`\\sum_i w_i FL(z_i)` (a sum over rows, not a mean)."""
        p = self._params()
        if p.num_class is not None:
            y, s, w = self._multiclass_inputs(y, s, weight)
            return float(_k.multiclass_loss(y, s, w, p.gamma, self._class_weights(y)))
        y, s, w = prepare_binary(y, s, weight)
        w = _EMPTY if w is None else w
        return float(_k.binary_loss(y, s, w, p.gamma, p.alpha))

    def bind_data_defaults(self, y: Any) -> FocalLoss:
        """With ``alpha="balanced"``, a copy whose ``alpha`` is the K weights of labels
        ``y`` (what every boosting round uses: the booster passes all training labels),
        so that the loss of a part of the data — one row in the gradient check — is
        weighted as in training; otherwise ``self``."""
        p = self._params()
        if not p.balanced:
            return self
        y, _, _ = self._multiclass_inputs(y, np.zeros((np.size(y), p.num_class)), None)
        weights = balanced_class_weights(y, p.num_class)
        return type(self)(**{**self.get_params(deep=False), "alpha": weights.tolist()})

    def init_score(self, y: Any, weight: Any = None) -> float | np.ndarray:
        """Loss-optimal constant raw score.

        Binary: the c minimising :math:`\\sum_i w_i FL(c)`; for γ = 0 and no α this
        is the logit of the weighted base rate, otherwise it is found by root
        finding on the (1-D) derivative. When one class is absent the optimum is
        at ±∞; the base rate is clipped to [1e-12, 1 − 1e-12] first, so the result
        is finite (±27.6 for γ = 0).

        Multiclass: the length-K vector c minimising :math:`\\sum_i w_i FL(c)`
        (for γ = 0, the log class frequencies, centred), found numerically;
        absent classes are clipped the same way.
        """
        p = self._params()
        if p.num_class is not None:
            return self._init_multiclass(y, weight)
        y01, _, w = prepare_binary(y, np.zeros(np.size(y)), weight)
        w = np.ones_like(y01) if w is None else w
        w1 = float(np.sum(w * y01))
        w0 = float(np.sum(w)) - w1
        eps = 1e-12
        rate = min(max(w1 / (w1 + w0), eps), 1 - eps)
        if p.gamma == 0 and p.alpha < 0:
            return logit(rate)
        if p.alpha >= 0:
            w1, w0 = w1 * p.alpha, w0 * (1 - p.alpha)
        # Clip as above so that a one-class sample still has a finite optimum.
        tot = w1 + w0
        w1, w0 = max(w1 / tot, eps), max(w0 / tot, eps)
        return _binary_constant(w1, w0, p.gamma)

    def _init_multiclass(self, y: Any, weight: Any) -> np.ndarray:
        from scipy.optimize import minimize

        p = self._params()
        k = p.num_class
        y, _, w = self._multiclass_inputs(y, np.zeros((np.size(y), k)), weight)
        alpha = self._class_weights(y)
        w = np.ones_like(y) if w.size == 0 else w
        counts = np.bincount(y.astype(np.int64), weights=w, minlength=k)
        if p.gamma == 0 and alpha.size:
            # Softmax cross-entropy: the optimum is the softmax of the class-weighted
            # frequencies, with or without class weights.
            counts = counts * alpha
        freq = np.maximum(counts / counts.sum(), 1e-12)
        start = np.log(freq) - np.log(freq).mean()
        if p.gamma == 0:
            return start
        labels = np.arange(k, dtype=np.float64)

        def f(c: np.ndarray) -> tuple[float, np.ndarray]:
            s = np.ascontiguousarray(np.broadcast_to(c, (k, k)))
            g = np.empty_like(s)
            h = np.empty_like(s)
            _k.multiclass_grad_hess(labels, s, freq, p.gamma, alpha, -1.0, 0.0, g, h)
            val = _k.multiclass_loss(labels, s, freq, p.gamma, alpha)
            return float(val), g.sum(axis=0)

        res = minimize(f, start, jac=True, method="L-BFGS-B",
                       options={"gtol": 1e-12, "ftol": 1e-15, "maxiter": 500})
        return res.x - res.x.mean()


def balanced_class_weights(y: np.ndarray, k: int) -> np.ndarray:
    """scikit-learn's balanced class weights ``n / (K · n_c)`` of integer labels
    ``0 … K−1`` (``n_c`` rows of class c; sample weights do not enter, as in
    ``sklearn.utils.class_weight.compute_class_weight``). A class without rows gets the
    weight of a class of one row: it weights nothing in these labels, and stays finite
    and positive for labels it does occur in (a bound copy used on other rows)."""
    counts = np.bincount(y.astype(np.int64), minlength=k).astype(np.float64)
    return y.size / (k * np.maximum(counts, 1.0))


def _binary_constant(w1: float, w0: float, gamma: float) -> float:
    """argmin_c w1 FL(c | y=1) + w0 FL(c | y=0), via the root of its derivative."""
    from scipy.optimize import brentq

    y = np.array([1.0, 0.0])
    w = np.array([w1, w0])
    g = np.empty(2)
    h = np.empty(2)

    def deriv(c: float) -> float:
        s = np.array([c, c])
        _k.binary_grad_hess(y, s, w, gamma, -1.0, -1.0, 0.0, g, h)
        return float(g.sum())

    # The derivative tends to -w1 at -inf and +w0 at +inf; widen until it changes sign.
    lo, hi = -1.0, 1.0
    while deriv(lo) > 0:
        lo *= 2
    while deriv(hi) < 0:
        hi *= 2
    return float(brentq(deriv, lo, hi, xtol=1e-14, rtol=1e-14, maxiter=500))
