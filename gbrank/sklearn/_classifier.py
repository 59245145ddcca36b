"""GBClassifier: imbalanced binary classification with a gbrank objective as a
scikit-learn classifier."""

from __future__ import annotations

from typing import Any

import numpy as np
from sklearn.base import ClassifierMixin
from sklearn.utils import _safe_indexing, check_random_state
from sklearn.utils.multiclass import check_classification_targets
from sklearn.utils.validation import column_or_1d

from gbrank._proba import predict_proba as _sigmoid
from gbrank._validation import (
    check_beta,
    check_choice,
    check_finite,
    check_number,
    check_row_weights,
)
from gbrank.sklearn._base import _GBBase, _resolve_objective, _ValidMetric

__all__ = ["GBClassifier"]


class GBClassifier(ClassifierMixin, _GBBase):
    r"""Imbalanced binary classification with a gbrank objective (focal loss, the F_β
    surrogate), as a scikit-learn classifier.

    The booster starts from the objective's loss-optimal constant
    (``init_score_ = objective.init_score(y)``), which is added back at prediction,
    so ``predict_proba`` is :math:`\sigma(z)` of the full margin :math:`z` — calibrated
    as far as the loss allows (focal loss with γ > 0 is not a proper scoring rule).
    ``predict`` thresholds it: ``threshold="auto"`` picks the F_β-best cut (threshold
    moving); a number is a probability threshold.

    How ``threshold="auto"`` is chosen: a model is trained on the rows outside a
    stratified validation split (``validation_fraction`` of each class's rows), and the
    threshold maximising F_β of its predictions on the split is taken. Without early
    stopping, the final model is then trained again on every row (same rounds and seed)
    and keeps that threshold, so no row is lost to the choice; with early stopping the
    split also chooses the number of rounds and the final model is the one trained
    without it. With ``validation_fraction=None`` the threshold is chosen on the
    training predictions.

    Parameters
    ----------
    objective : str or gbrank objective, default "focal"
        ``"focal"``, ``"fbeta_surrogate"``, a binary gbrank objective instance, or
        ``"native:<name>"`` (``"native:binary"`` for LightGBM, ``"native:binary:logistic"``
        for XGBoost; margins are then the booster's raw scores).
    threshold : "auto" or float in (0, 1), default "auto"
        Probability above which ``predict`` says the positive class. ``"auto"``: the
        threshold maximising F_β (``beta``) on held-out predictions (see above).
    beta : float, default 1.0
        β of the F_β that ``threshold="auto"`` maximises.
    pos_label : label, optional
        The positive class: the one the objective's ``alpha``, F_β and the threshold
        are about, and ``predict_proba``'s column for it is :math:`\sigma(z)`.
        ``None``: for numeric or boolean labels the larger (1 of {0, 1}, +1 of
        {−1, +1}, True), as scikit-learn's metrics assume; for other labels (strings)
        the rarer class in ``y`` (by summed ``sample_weight``; ``classes_[1]`` on a
        tie), the one an imbalanced classifier looks for. Pass it to be explicit.
    booster, n_estimators, learning_rate, learning_rate_decay, early_stopping_rounds, \
validation_fraction, random_state, num_leaves, max_depth, min_child_samples, subsample, \
colsample_bytree, reg_lambda, n_jobs, booster_params
        As in :class:`GBRanker`; early stopping watches the objective's loss on the
        validation split. The split (``validation_fraction`` of each class's rows,
        drawn from ``random_state``) is made when early stopping is on or
        ``threshold="auto"``.

    Attributes
    ----------
    classes_ : ndarray of shape (2,)
        The two labels (any type), sorted; ``predict_proba``'s columns follow it.
    pos_label_ : label
        The positive class (``pos_label`` or its default).
    threshold_ : float
        Probability threshold ``predict`` uses.
    init_score_ : float
        The objective's constant start, added to the booster's raw margins.
    booster_, objective_, evals_result_, best_iteration_, n_features_in_, \
feature_names_in_, feature_importances_
        As in :class:`GBRanker`.

    Notes
    -----
    ``save_model(path)`` writes a model whose own prediction is ``predict_proba``'s
    probability of ``pos_label_`` (:math:`\sigma(z)`, the start ``init_score_``
    included; objective ``binary sigmoid:1`` for LightGBM, ``binary:logistic`` for
    XGBoost), whichever column of ``classes_`` that is. The decision
    ``predict`` makes — ``pos_label_`` where that probability exceeds
    ``threshold_`` — is not part of a booster's model: apply ``threshold_`` where the
    model is served. LightGBM's file has no place for it; XGBoost's carries it as the
    attributes ``gbrank_threshold`` and ``gbrank_pos_label`` (JSON text), read with
    ``Booster.attr``.

    Examples
    --------
    >>> from gbrank.datasets import make_imbalanced
    >>> from gbrank.sklearn import GBClassifier
    >>> X, y = make_imbalanced(n_rows=400, positive_rate=0.1)
    >>> clf = GBClassifier("focal", n_estimators=10, random_state=0, n_jobs=1).fit(X, y)
    >>> clf.classes_.tolist(), clf.predict_proba(X).shape
    ([0.0, 1.0], (400, 2))
    >>> 0.0 < clf.threshold_ < 1.0  # the F1-best probability threshold
    True
    >>> clf.predict(X[:3]).tolist()
    [0.0, 0.0, 0.0]
    """

    _task = "binary"

    def __init__(self, objective: Any = "focal", booster: str = "lightgbm",
                 n_estimators: int = 100, learning_rate: float = 0.1,
                 learning_rate_decay: float | None = None,
                 early_stopping_rounds: int | None = None,
                 validation_fraction: float | None = 0.1, threshold: Any = "auto",
                 beta: float = 1.0, pos_label: Any = None, random_state: Any = None,
                 num_leaves: int | None = None,
                 max_depth: int | None = None, min_child_samples: int | None = None,
                 subsample: float | None = None, colsample_bytree: float | None = None,
                 reg_lambda: float | None = None, n_jobs: int | None = None,
                 booster_params: dict[str, Any] | None = None) -> None:
        self.objective = objective
        self.booster = booster
        self.n_estimators = n_estimators
        self.learning_rate = learning_rate
        self.learning_rate_decay = learning_rate_decay
        self.early_stopping_rounds = early_stopping_rounds
        self.validation_fraction = validation_fraction
        self.threshold = threshold
        self.beta = beta
        self.pos_label = pos_label
        self.random_state = random_state
        self.num_leaves = num_leaves
        self.max_depth = max_depth
        self.min_child_samples = min_child_samples
        self.subsample = subsample
        self.colsample_bytree = colsample_bytree
        self.reg_lambda = reg_lambda
        self.n_jobs = n_jobs
        self.booster_params = booster_params

    def _check_threshold_param(self) -> float | None:
        if isinstance(self.threshold, str):
            check_choice(self.threshold, "threshold", ("auto",))
            return None
        try:
            return check_number(self.threshold, "threshold", 0.0, 1.0, low_open=True,
                                high_open=True)
        except ValueError:
            raise ValueError(f"threshold must be 'auto' or a probability in (0, 1), got "
                             f"{self.threshold!r}") from None

    def fit(self, X: Any, y: Any, *, sample_weight: Any = None) -> GBClassifier:
        """Fit on features ``X`` and two-class labels ``y`` (any two values).

        Returns
        -------
        self
        """
        if y is None:
            raise ValueError("GBClassifier requires y to be passed, but the target y is None")
        p = self._check_params()
        fixed = self._check_threshold_param()
        beta = check_beta(self.beta)
        obj = _resolve_objective(self.objective, "binary", "GBClassifier")
        X = self._validate_X(X, reset=True)
        n = X.shape[0]
        y = column_or_1d(y.to_numpy() if hasattr(y, "to_numpy") else y, warn=True)
        if y.size != n:
            raise ValueError(f"y has {y.size} entries but X has {n} rows")
        if y.dtype.kind == "f":
            check_finite(y, "y")
        check_classification_targets(y)
        w = check_row_weights(sample_weight, n, "sample_weight")
        classes = np.unique(y if w is None else y[w > 0])
        if classes.size != 2:
            raise ValueError(
                f"Only binary classification is supported: GBClassifier needs exactly two "
                f"classes in y{' (with positive weight)' if w is not None else ''}; got "
                f"{classes.size} class{'es' if classes.size != 1 else ''}: "
                f"{classes[:5].tolist()}")
        self.classes_ = classes
        self.pos_label_ = self._positive_class(y, classes, w)
        y01 = (y == self.pos_label_).astype(np.float64)
        rng = check_random_state(self.random_state)
        seed = int(rng.randint(np.iinfo(np.int32).max))
        early = p["early_stopping_rounds"] is not None
        holdout = p["validation_fraction"] is not None and (early or fixed is None)
        tr, va = np.arange(n), None
        if holdout:  # stratified: each class contributes its share of rows
            held = []
            by_class = [rng.permutation(np.flatnonzero(y01 == c)) for c in (0.0, 1.0)]
            for idx in by_class:
                k = min(int(round(p["validation_fraction"] * idx.size)), idx.size - 1)
                held.append(idx[:max(k, 0)])
            va = np.sort(np.concatenate(held))
            big = max(by_class, key=len)
            if va.size == 0 and big.size >= 2:  # tiny data: one row of the larger class
                va = big[:1]
            if va.size == 0:
                raise ValueError(
                    f"validation_fraction={self.validation_fraction!r} of {n} rows leaves an "
                    "empty validation part; use more rows or validation_fraction=None")
            tr = np.setdiff1d(np.arange(n), va)
        init = 0.0
        if not isinstance(obj, str):
            wt = None if w is None else w[tr]
            init = float(obj.init_score(y01[tr], wt))
        Xt, yt, wt = _safe_indexing(X, tr), y01[tr], None if w is None else w[tr]
        Xv = yv = wv = None
        if va is not None:
            Xv, yv, wv = _safe_indexing(X, va), y01[va], None if w is None else w[va]
        metric = _ValidMetric(None, obj if not isinstance(obj, str) else _LogLoss())
        self.objective_ = obj
        self.init_score_ = init
        self._train(p, obj, Xt, yt, None, wt, init, Xv, yv, None, wv, metric, seed)
        if fixed is not None:
            self._margin_threshold = float(np.log(fixed) - np.log1p(-fixed))
        else:
            from gbrank.metrics import best_threshold

            Xs, ys, ws = (Xv, yv, wv) if va is not None else (Xt, yt, wt)
            z = self._raw(Xs) + init
            self._margin_threshold = best_threshold(ys, z, beta, weight=ws)[0]
        if holdout and not early:
            # The split served only to choose the threshold: the final model learns from
            # every row, with the same rounds and seed (the threshold, a probability,
            # carries over). Its validation curve is the one recorded above.
            curve = self.evals_result_
            self.init_score_ = 0.0 if isinstance(obj, str) else float(obj.init_score(y01, w))
            self._train(p, obj, X, y01, None, w, self.init_score_, None, None, None, None,
                        metric, seed)
            self.evals_result_ = curve
        self.threshold_ = float(_sigmoid(np.array([self._margin_threshold]))[0])
        return self

    def _positive_class(self, y: np.ndarray, classes: np.ndarray, w: Any) -> Any:
        """``pos_label``, checked; by default the larger of numeric or boolean labels, the
        rarer (by summed weight) of other labels."""
        if self.pos_label is not None:
            for c in classes:
                if c == self.pos_label:
                    return c
            raise ValueError(f"pos_label={self.pos_label!r} is not one of the classes in y: "
                             f"{classes.tolist()}")
        if classes.dtype.kind in "biuf":
            return classes[1]
        mass = [float(np.sum(y == c)) if w is None else float(np.sum(w[y == c]))
                for c in classes]
        return classes[0] if mass[0] < mass[1] else classes[1]

    def _export_attributes(self) -> dict[str, str]:
        import json

        label = self.pos_label_.item() if isinstance(self.pos_label_, np.generic) \
            else self.pos_label_
        try:
            label = json.dumps(label)
        except TypeError:
            label = json.dumps(str(label))
        return {"gbrank_threshold": repr(float(self.threshold_)), "gbrank_pos_label": label}

    def decision_function(self, X: Any) -> np.ndarray:
        """The positive class's margin minus the threshold's margin, signed as
        scikit-learn expects: positive exactly where ``predict`` says ``classes_[1]``."""
        d = self._margins(X) - self._margin_threshold
        return d if self.pos_label_ == self.classes_[1] else -d

    def predict_proba(self, X: Any) -> np.ndarray:
        """Probabilities of ``classes_`` per row: :math:`p = \\sigma(z)` for
        ``pos_label_`` (margin including ``init_score_``), :math:`1 - p` for the other."""
        p = _sigmoid(self._margins(X))
        if self.pos_label_ == self.classes_[1]:
            return np.column_stack([1.0 - p, p])
        return np.column_stack([p, 1.0 - p])

    def predict(self, X: Any) -> np.ndarray:
        """``pos_label_`` where the margin exceeds the threshold, else the other class."""
        d = self.decision_function(X)  # raises NotFittedError first
        return self.classes_[(d > 0).astype(np.intp)]

    def __sklearn_tags__(self) -> Any:
        tags = super().__sklearn_tags__()
        tags.classifier_tags.multi_class = False
        return tags


class _LogLoss:
    """Validation loss for native binary objectives (raw margins): the logistic loss."""

    def loss(self, y: Any, s: Any, weight: Any = None) -> float:
        from gbrank.objectives import FocalLoss

        return FocalLoss(gamma=0.0).loss(y, s, weight=weight)


