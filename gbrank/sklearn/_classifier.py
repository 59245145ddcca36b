"""GBClassifier: imbalanced classification, two classes or K, with a gbrank objective as
a scikit-learn classifier."""

from __future__ import annotations

import warnings
from typing import Any

import numpy as np
from sklearn.base import ClassifierMixin
from sklearn.utils import _safe_indexing, check_random_state
from sklearn.utils.multiclass import check_classification_targets
from sklearn.utils.validation import column_or_1d

from gbrank._proba import log_softmax, logit
from gbrank._proba import predict_proba as _link
from gbrank._validation import (
    check_beta,
    check_choice,
    check_finite,
    check_integer,
    check_number,
    check_row_weights,
)
from gbrank.objectives import Objective
from gbrank.sklearn._base import (
    _GBBase,
    _refuse_booster_data,
    _ValidMetric,
)
from gbrank.sklearn._classes import (
    _classifier_objective,
    _given_offsets,
    _json_label,
    _LogLoss,
    _refuse_missing_labels,
    _refuse_offsets_without_classes,
    _refuse_threshold_without_both,
    _warn_if_class_balancing,
)

__all__ = ["GBClassifier"]


class GBClassifier(ClassifierMixin, _GBBase):
    r"""Imbalanced classification with a gbrank objective (focal loss, the F_β
    surrogate), two classes or K, as a scikit-learn classifier.

    The booster starts from the objective's loss-optimal constant (``init_score_ =
    objective.init_score(y)``), added back at prediction, so ``predict_proba`` is
    :math:`\sigma(z)` of the full margin :math:`z` (two classes) or the softmax of the K
    margins :math:`z_k` (K classes), calibrated as far as the loss allows (focal loss with
    γ > 0 is no proper scoring rule; ``"fbeta_surrogate"``'s is no probability at all).

    Two classes: ``predict`` thresholds the probability of ``pos_label_``:
    ``threshold="auto"`` picks the F_β-best cut (threshold moving); a number is a
    probability threshold.

    K classes (three or more labels in ``y``, or a multiclass objective): ``predict``
    is :math:`\arg\max_k (\log p_k + b_k)` with per-class offsets :math:`b_k`
    (``class_offsets_``), additive corrections of each class's log-odds. With
    ``decision="auto"`` they maximise macro-F_β (``beta``) of out-of-fold predictions
    (:func:`gbrank.metrics.best_class_offsets`: coordinate ascent with an exact sweep
    per class, from no offsets and from rescaling by the class shares, never worse than
    the argmax there) — threshold moving for K classes; ``decision="argmax"`` sets them
    to 0, the most probable class. The objective follows the data: ``"focal"`` or a
    ``FocalLoss`` without ``num_class`` becomes ``FocalLoss(num_class=K)`` with its
    other parameters (``alpha="balanced"`` weights the classes by inverse frequency).

    How the offsets are chosen (K classes, ``decision="auto"``): with ``decision_cv=c``
    (default 4) every row is scored by a model trained on the other folds of a
    stratified c-fold split (drawn from ``random_state``; same parameters, seed and
    number of rounds as the final model), and the offsets maximising macro-F_β of those
    out-of-fold log-probabilities (weighted by ``sample_weight``) are taken; the final
    model is trained on every row, so no row is lost to the choice. That is c + 1
    trainings. Without early stopping no validation split is made (``evals_result_``
    stays empty). With early stopping the validation split (``validation_fraction``)
    chooses the number of rounds as usual and the final model is the one trained
    without the split; the fold models are trained on the folds of all rows for that
    number of rounds, without early stopping. A class with fewer rows than folds is
    warned about; ``decision_cv=None`` chooses the offsets as the threshold is chosen
    for two classes (below), on one held-out split.

    How the threshold (two classes, ``threshold="auto"``) or, with ``decision_cv=None``,
    the offsets are chosen: a model is trained on the rows outside a stratified
    validation split (``validation_fraction`` of each class's rows), and the threshold
    (offsets) maximising F_β (macro-F_β) of its predictions on the split is taken.
    Without early stopping, the final model is then trained again on every row (same
    rounds and seed) and keeps that threshold (those offsets), so no row is lost to the
    choice; with early stopping the split also chooses the number of rounds and the
    final model is the one trained without it. With ``validation_fraction=None`` the
    choice is made on the training predictions.

    ``sample_weight`` weights the rows of that F_β (macro-F_β) too, so weights that
    re-balance the classes make the threshold (offsets) maximise the re-balanced F_β,
    not the data's (a ``UserWarning`` says so when ``sample_weight`` is one value per
    class). To re-weight the classes in training only, give the objective class weights:
    ``FocalLoss(alpha="balanced")`` for K classes (with ``gamma=0``, the softmax
    cross-entropy with scikit-learn's balanced class weights), ``FocalLoss(alpha=a)``
    (the positive class's weight) for two.

    Parameters
    ----------
    objective : str or gbrank objective, default "focal"
        Two classes: ``"focal"``, ``"fbeta_surrogate"``, a binary gbrank objective
        instance, or ``"native:<name>"`` (``"native:binary"`` for LightGBM,
        ``"native:binary:logistic"`` for XGBoost; margins are then the booster's raw
        scores). K classes: ``"focal"``, a ``FocalLoss`` (``num_class`` None or K), or
        the booster's softmax objective, ``"native:multiclass"`` (LightGBM) or
        ``"native:multi:softprob"`` (XGBoost).
    booster, n_estimators, learning_rate, learning_rate_decay, early_stopping_rounds, \
validation_fraction
        As in :class:`GBRanker`; early stopping watches the objective's loss (the log
        loss for the boosters' own objectives) on the validation split. The split
        (``validation_fraction`` of each class's rows, drawn from ``random_state``) is
        made when early stopping is on or the threshold (offsets with
        ``decision_cv=None``) is chosen.
    threshold : "auto" or float in (0, 1), default "auto"
        Two classes: probability above which ``predict`` says the positive class.
        ``"auto"``: the threshold maximising F_β (``beta``) on held-out predictions
        (see above). K classes: only ``"auto"`` (the rule is ``decision``).
    decision : {"auto", "argmax"} or array-like of K floats, default "auto"
        ``"argmax"``: the most probable class (K classes: offsets 0; two: threshold
        0.5, refused beside a numeric ``threshold``). ``"auto"``: K classes, the
        macro-F_β offsets (above); two, as ``threshold`` says. K numbers: the offsets
        :math:`b_k` of K classes (as ``classes_``; e.g. printed by ``gbrank tune``).
    decision_cv : int >= 2 or None, default 4
        K classes with ``decision="auto"``: the number of stratified folds whose
        out-of-fold predictions choose the offsets (see above); ``None``: one held-out
        split of ``validation_fraction`` (the training predictions when that is
        ``None``). Two classes: not used.
    beta : float, default 1.0
        β of the F_β that ``threshold="auto"`` (two classes) or the macro-F_β that
        ``decision="auto"`` (K classes) maximises.
    pos_label : label, optional
        Two classes only. The positive class: the one the objective's ``alpha``, F_β and
        the threshold are about, and ``predict_proba``'s column for it is
        :math:`\sigma(z)`. ``None``: for numeric or boolean labels the larger (1 of
        {0, 1}, +1 of {−1, +1}, True), as scikit-learn's metrics assume, and so for
        numbers written as text ("0"/"1" of a CSV read as strings); for other
        labels (strings) the rarer class in ``y`` (by summed ``sample_weight``;
        ``classes_[1]`` on a tie), the one an imbalanced classifier looks for. Pass it to
        be explicit.
    random_state, num_leaves, max_depth, min_child_samples, subsample, \
colsample_bytree, reg_lambda, n_jobs, booster_params
        As in :class:`GBRanker`.

    Attributes
    ----------
    classes_ : ndarray of shape (n_classes,)
        The labels (any type), sorted; ``predict_proba``'s columns follow it.
    pos_label_ : label
        Two classes: the positive class (``pos_label`` or its default).
    threshold_ : float
        Two classes: probability threshold ``predict`` uses.
    class_offsets_ : ndarray of shape (K,)
        K classes: the offsets :math:`b_k` added to the log-probabilities (columns as
        ``classes_``).
    init_score_ : float or ndarray of shape (K,)
        The objective's constant start, added to the booster's raw margins (one per
        class for K classes; 0 for the boosters' own objectives, whose start is in the
        model).
    booster_, objective_, evals_result_, best_iteration_, n_features_in_, \
feature_names_in_, feature_importances_
        As in :class:`GBRanker`.

    Notes
    -----
    ``save_model(path)`` writes a model whose own prediction is ``predict_proba``'s:
    two classes, the probability of ``pos_label_`` (:math:`\sigma(z)`, the start
    ``init_score_`` included; objective ``binary sigmoid:1`` for LightGBM,
    ``binary:logistic`` for XGBoost), whichever column of ``classes_`` that is; K
    classes, the K probabilities (``multiclass`` / ``multi:softprob``), columns as
    ``classes_``. The decision ``predict`` makes — ``pos_label_`` where that
    probability exceeds ``threshold_``; :math:`\arg\max_k (\log p_k + b_k)` — is not
    part of a booster's model: apply ``threshold_`` or ``class_offsets_`` where the model
    is served. LightGBM's file has no place for them; XGBoost's carries them as the
    attributes ``gbrank_threshold`` and ``gbrank_pos_label``, or ``gbrank_class_offsets``
    and ``gbrank_classes`` (JSON text), read with ``Booster.attr``.

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

    K classes: the decision adds per-class offsets to the log-probabilities, chosen on
    out-of-fold predictions (``decision_cv=4`` folds).

    >>> import numpy as np
    >>> from sklearn.datasets import make_classification
    >>> X, y = make_classification(3000, 10, n_informative=6, n_classes=3,
    ...                            weights=[0.85, 0.1, 0.05], random_state=0)
    >>> clf = GBClassifier(n_estimators=30, random_state=0,
    ...                    n_jobs=1).fit(X, y)
    >>> clf.classes_.tolist(), clf.objective_.num_class, clf.class_offsets_.shape
    ([0, 1, 2], 3, (3,))
    >>> rule = np.argmax(np.log(clf.predict_proba(X)) + clf.class_offsets_, axis=1)
    >>> bool(np.array_equal(clf.classes_[rule], clf.predict(X)))
    True
    """

    _task = "binary"

    def __init__(self, objective: Any = "focal", booster: str = "lightgbm",
                 n_estimators: int = 100, learning_rate: float = 0.1,
                 learning_rate_decay: float | None = None,
                 early_stopping_rounds: int | None = None,
                 validation_fraction: float | None = 0.1, threshold: Any = "auto",
                 decision: str = "auto", decision_cv: int | None = 4,
                 beta: float = 1.0, pos_label: Any = None,
                 random_state: Any = None, num_leaves: int | None = None,
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
        self.decision = decision
        self.decision_cv = decision_cv
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

    def fit(self, X: Any, y: Any, *, sample_weight: Any = None,
            eval_set: Any = None) -> GBClassifier:
        """Fit on features ``X`` and labels ``y`` (two classes or more, any values).

        Parameters
        ----------
        X : array-like, sparse matrix or DataFrame of shape (n, n_features)
        y : array-like of shape (n,)
        sample_weight : array-like of shape (n,), optional
        eval_set : list of one (X_val, y_val) pair, optional
            Your own validation rows instead of the split of ``validation_fraction``:
            early stopping (with ``early_stopping_rounds``) watches them, and the
            threshold (two classes, ``threshold="auto"``) or the offsets (K classes with
            ``decision_cv=None``) are chosen on them; the model is trained on every row
            of ``X`` once. Without early stopping every round is kept and
            ``evals_result_`` records the curve.

        Returns
        -------
        self
        """
        _refuse_booster_data(X, "GBClassifier")
        if y is None:
            raise ValueError("GBClassifier requires y to be passed, but the target y is None")
        p = self._check_params()
        fixed = self._check_threshold_param()
        given = _given_offsets(self.decision)
        decision = "given" if given is not None else check_choice(
            self.decision, "decision", ("auto", "argmax"))
        cv = check_integer(self.decision_cv, "decision_cv", 2, allow_none=True)
        beta = check_beta(self.beta)
        X = self._validate_X(X, reset=True)
        n = X.shape[0]
        y = column_or_1d(y.to_numpy() if hasattr(y, "to_numpy") else y, warn=True)
        if y.size != n:
            raise ValueError(f"y has {y.size} entries but X has {n} rows")
        if y.dtype.kind == "f":
            check_finite(y, "y")
        _refuse_missing_labels(y)
        check_classification_targets(y)
        w = check_row_weights(sample_weight, n, "sample_weight")
        classes = np.unique(y if w is None else y[w > 0])
        if classes.size < 2:
            raise ValueError(
                f"GBClassifier needs at least two classes in y"
                f"{' (with positive weight)' if w is not None else ''}; got "
                f"{classes.size} class{'es' if classes.size != 1 else ''}: "
                f"{classes[:5].tolist()}")
        obj, multiclass = _classifier_objective(self.objective, classes.size, p["booster"])
        if multiclass:
            if self.pos_label is not None:
                raise ValueError(f"pos_label={self.pos_label!r} names the positive class of "
                                 "two; with K classes there is none (leave it None)")
            if fixed is not None:
                raise ValueError(f"threshold={self.threshold!r} is a probability cut for two "
                                 "classes; K classes are decided by decision='auto' "
                                 "(macro-F_β offsets) or 'argmax'")
            if given is not None and given.size != classes.size:
                raise ValueError(f"decision holds {given.size} class offsets; y has "
                                 f"{classes.size} classes {classes[:10].tolist()} (one offset "
                                 "per class, in the order of classes_)")
        elif given is not None:
            raise ValueError("decision given as class offsets decides K classes; two classes "
                             "are decided by threshold= (a probability)")
        elif decision == "argmax":
            if fixed is not None:
                raise ValueError(f"decision='argmax' is threshold 0.5 for two classes; pass "
                                 f"threshold={self.threshold!r} or decision='argmax', not both")
            fixed = 0.5
        self.classes_ = classes
        if w is not None and (fixed is None if not multiclass else decision == "auto"):
            _warn_if_class_balancing(y, w, multiclass)
        rng = check_random_state(self.random_state)
        seed = int(rng.randint(np.iinfo(np.int32).max))
        own = None if eval_set is None else self._eval_pair(eval_set)
        if multiclass:
            self._fit_multiclass(p, obj, X, y, w, decision == "auto", cv, beta, rng, seed,
                                 own)
            if given is not None:
                self.class_offsets_ = given.copy()
        else:
            self._fit_binary(p, obj, X, y, w, fixed, beta, rng, seed, own)
        return self

    def _eval_pair(self, eval_set: Any) -> tuple[Any, np.ndarray]:
        """The one validation set of ``eval_set``: features checked against ``fit``'s,
        labels that are classes of ``y``."""
        pairs = list(eval_set) if isinstance(eval_set, (list, tuple)) else None
        if pairs and len(pairs) == 2 and not isinstance(pairs[0], (list, tuple)):
            pairs = [tuple(pairs)]  # a bare (X_val, y_val)
        if not pairs or len(pairs) != 1 or len(pairs[0]) != 2:
            raise ValueError("eval_set must be [(X_val, y_val)], one validation set "
                             "(GBClassifier early-stops on one)")
        Xv, yv = pairs[0]
        _refuse_booster_data(Xv, "GBClassifier's eval_set")
        Xv = self._validate_X(Xv, reset=False)
        yv = column_or_1d(yv.to_numpy() if hasattr(yv, "to_numpy") else yv)
        if yv.size != Xv.shape[0]:
            raise ValueError(f"eval_set's y has {yv.size} entries but its X has "
                             f"{Xv.shape[0]} rows")
        unknown = ~np.isin(yv, self.classes_)
        if unknown.any():
            raise ValueError(f"eval_set's y holds {yv[unknown][:3].tolist()}, not classes "
                             f"of y ({self.classes_.tolist()})")
        return Xv, yv

    def _split(self, codes: np.ndarray, k: int, frac: float,
               rng: np.random.RandomState) -> tuple[np.ndarray, np.ndarray]:
        """Stratified training and validation rows: ``frac`` of each class's rows, at
        least one of each class of two or more rows (a threshold or offsets chosen on a
        split without a class would be chosen blind), at least one row left to train
        on per class."""
        n = codes.size
        held = []
        by_class = [rng.permutation(np.flatnonzero(codes == c)) for c in range(k)]
        for idx in by_class:
            m = min(max(int(round(frac * idx.size)), 1), idx.size - 1)
            held.append(idx[:max(m, 0)])
        va = np.sort(np.concatenate(held))
        big = max(by_class, key=len)
        if va.size == 0 and big.size >= 2:  # tiny data: one row of the largest class
            va = big[:1]
        if va.size == 0:
            raise ValueError(
                f"validation_fraction={self.validation_fraction!r} of {n} rows leaves an "
                "empty validation part; use more rows or validation_fraction=None")
        return np.setdiff1d(np.arange(n), va), va

    def _fit_binary(self, p: dict[str, Any], obj: Objective | str, X: Any, y: np.ndarray,
                    w: np.ndarray | None, fixed: float | None, beta: float,
                    rng: np.random.RandomState, seed: int, own: Any = None) -> None:
        n = y.size
        self.pos_label_ = self._positive_class(y, self.classes_, w)
        y01 = (y == self.pos_label_).astype(np.float64)
        early = p["early_stopping_rounds"] is not None
        holdout = own is None and p["validation_fraction"] is not None and (
            early or fixed is None)
        tr, va = np.arange(n), None
        if holdout:
            tr, va = self._split(y01, 2, p["validation_fraction"], rng)
        init = 0.0
        if not isinstance(obj, str):
            wt = None if w is None else w[tr]
            init = float(obj.init_score(y01[tr], wt))
        Xt, yt, wt = _safe_indexing(X, tr), y01[tr], None if w is None else w[tr]
        Xv = yv = wv = None
        if va is not None:
            Xv, yv, wv = _safe_indexing(X, va), y01[va], None if w is None else w[va]
        elif own is not None:
            Xv, yv = own[0], (own[1] == self.pos_label_).astype(np.float64)
        metric = _ValidMetric(None, obj if not isinstance(obj, str) else _LogLoss())
        self.objective_ = obj
        self.init_score_ = init
        self._train(p, obj, Xt, yt, None, wt, init, Xv, yv, None, wv, metric, seed)
        if fixed is not None:
            self._margin_threshold = logit(fixed)
        else:
            from gbrank.metrics import best_threshold

            Xs, ys, ws = (Xv, yv, wv) if Xv is not None else (Xt, yt, wt)
            _refuse_threshold_without_both(ys, self.pos_label_, "the validation split"
                                           if va is not None else "eval_set"
                                           if own is not None else "the training rows")
            z = self._raw(Xs) + init
            self._margin_threshold = best_threshold(ys, z, beta, weight=ws, margin=True)[0]
        if holdout and not early:
            # The split served only to choose the threshold: the final model learns from
            # every row, with the same rounds and seed (the threshold, a probability,
            # carries over). Its validation curve is the one recorded above.
            curve = self.evals_result_
            self.init_score_ = 0.0 if isinstance(obj, str) else float(obj.init_score(y01, w))
            self._train(p, obj, X, y01, None, w, self.init_score_, None, None, None, None,
                        metric, seed)
            self.evals_result_ = curve
        self.threshold_ = float(_link(np.array([self._margin_threshold]))[0])

    def _fit_multiclass(self, p: dict[str, Any], obj: Objective | str, X: Any,
                        y: np.ndarray, w: np.ndarray | None, choose: bool, cv: int | None,
                        beta: float, rng: np.random.RandomState, seed: int,
                        own: Any = None) -> None:
        from gbrank.metrics import best_class_offsets

        k = self.classes_.size
        codes = np.searchsorted(self.classes_, y)
        known = self.classes_[np.minimum(codes, k - 1)] == y
        if not known.all():  # rows of weight 0 whose label is no class: they weigh nothing
            keep = np.flatnonzero(known)
            X, codes, w = _safe_indexing(X, keep), codes[keep], w[keep]
        codes = codes.astype(np.float64)
        early = p["early_stopping_rounds"] is not None
        oof = choose and cv is not None  # offsets from out-of-fold scores
        holdout = own is None and p["validation_fraction"] is not None and (
            early or (choose and not oof))
        tr, va = np.arange(codes.size), None
        if holdout:
            tr, va = self._split(codes, k, p["validation_fraction"], rng)
        native = isinstance(obj, str)
        Xt, yt, wt = _safe_indexing(X, tr), codes[tr], None if w is None else w[tr]
        Xv = yv = wv = None
        if va is not None:
            Xv, yv, wv = _safe_indexing(X, va), codes[va], None if w is None else w[va]
        elif own is not None:
            Xv, yv = own[0], np.searchsorted(self.classes_, own[1]).astype(np.float64)
        init = np.zeros(k) if native else np.asarray(obj.init_score(yt, wt), dtype=np.float64)
        metric = _ValidMetric(None, _LogLoss() if native else obj)
        self.objective_ = obj
        self.init_score_ = init
        self._train(p, obj, Xt, yt, None, wt, init, Xv, yv, None, wv, metric, seed,
                    num_class=k)
        offsets = np.zeros(k)
        if choose and not oof:
            Xs, ys, ws = (Xv, yv, wv) if Xv is not None else (Xt, yt, wt)
            if own is not None:
                _refuse_offsets_without_classes(ys, self.classes_)
            offsets = best_class_offsets(ys, log_softmax(self._raw(Xs) + init), beta,
                                         weight=ws, margin=True)[0]
        if holdout and not early:
            # As for two classes: the final model learns from every row and keeps the
            # offsets (corrections of log-probabilities) chosen on the split.
            curve = self.evals_result_
            if not native:
                self.init_score_ = np.asarray(obj.init_score(codes, w), dtype=np.float64)
            self._train(p, obj, X, codes, None, w, self.init_score_, None, None, None, None,
                        metric, seed, num_class=k)
            self.evals_result_ = curve
        if oof:
            rounds = self.best_iteration_ if early else p["n_estimators"]
            s = self._out_of_fold(p, obj, X, codes, w, k, cv, rounds, rng, seed)
            offsets = best_class_offsets(codes, s, beta, weight=w, margin=True)[0]
        self.class_offsets_ = offsets

    def _out_of_fold(self, p: dict[str, Any], obj: Objective | str, X: Any,
                     codes: np.ndarray, w: np.ndarray | None, k: int, cv: int, rounds: int,
                     rng: np.random.RandomState, seed: int) -> np.ndarray:
        """Log-probabilities of every row by the model trained on the other folds of a
        stratified ``cv``-fold split (``rounds`` rounds, no early stopping, ``seed``); the
        fitted state (the final model) is left as it was."""
        from sklearn.model_selection import StratifiedKFold

        counts = np.bincount(codes.astype(np.intp), minlength=k)
        if counts.max() < cv:
            raise ValueError(
                f"decision_cv={self.decision_cv!r} folds need at least {cv} rows of some "
                f"class, but the largest class has {counts.max()}; use fewer folds, "
                "decision_cv=None or decision='argmax'")
        if counts.min() < cv:  # every class has a row (see fit)
            warnings.warn(
                f"decision_cv={self.decision_cv!r}: the rarest class has {counts.min()} "
                f"row{'s' if counts.min() != 1 else ''}, fewer than the folds: some folds "
                "hold none of its rows, and its offset rests on that few predictions; use "
                "fewer folds, decision_cv=None or decision='argmax'", UserWarning,
                stacklevel=4)
        with warnings.catch_warnings():  # scikit-learn's own warning says the same
            warnings.filterwarnings("ignore", "The least populated class", UserWarning)
            folds = list(StratifiedKFold(cv, shuffle=True, random_state=rng)
                         .split(np.zeros((codes.size, 1)), codes))
        final = (self.booster_, self.evals_result_, self.best_iteration_, self.init_score_)
        q = {**p, "n_estimators": rounds, "early_stopping_rounds": None}
        out = np.empty((codes.size, k))
        for tr, va in folds:
            wt = None if w is None else w[tr]
            init = (np.zeros(k) if isinstance(obj, str)
                    else np.asarray(obj.init_score(codes[tr], wt), dtype=np.float64))
            self._train(q, obj, _safe_indexing(X, tr), codes[tr], None, wt, init, None, None,
                        None, None, None, seed, num_class=k)
            self.init_score_ = init  # _raw reads it (XGBoost's start)
            out[va] = log_softmax(self._raw(_safe_indexing(X, va)) + init)
        self.booster_, self.evals_result_, self.best_iteration_, self.init_score_ = final
        return out

    def _positive_class(self, y: np.ndarray, classes: np.ndarray, w: Any) -> Any:
        """``pos_label``, checked; by default the larger of numeric or boolean labels (or
        of labels that are numbers written as text: a CSV's "0"/"1" read as strings),
        the rarer (by summed weight) of other labels."""
        if self.pos_label is not None:
            for c in classes:
                if c == self.pos_label:
                    return c
            raise ValueError(f"pos_label={self.pos_label!r} is not one of the classes in y: "
                             f"{classes.tolist()}")
        if classes.dtype.kind in "biuf":
            return classes[1]
        try:
            values = [float(str(c)) for c in classes]
        except ValueError:
            values = None
        if values is not None and len(set(values)) == 2:
            return classes[int(np.argmax(values))]
        mass = [float(np.sum(y == c)) if w is None else float(np.sum(w[y == c]))
                for c in classes]
        return classes[0] if mass[0] < mass[1] else classes[1]

    def _fitted_task(self) -> str:
        return "multiclass" if np.ndim(self.init_score_) == 1 else "binary"

    def _warn_about_export(self) -> None:
        if self._fitted_task() == "binary" and self.pos_label_ != self.classes_[1]:
            pos = _json_label(self.pos_label_)
            warnings.warn(
                f"the saved model predicts the probability of pos_label_ {pos!r}, which is "
                f"predict_proba(X)[:, 0] here (classes_ "
                f"{[_json_label(c) for c in self.classes_]}), and a booster's classifier "
                f"reading the file says class 1 for {pos!r}", UserWarning, stacklevel=3)

    def _export_attributes(self) -> dict[str, str]:
        import json

        if self._fitted_task() == "multiclass":
            return {"gbrank_class_offsets": json.dumps(self.class_offsets_.tolist()),
                    "gbrank_classes": json.dumps([_json_label(c) for c in self.classes_])}
        return {"gbrank_threshold": repr(float(self.threshold_)),
                "gbrank_pos_label": json.dumps(_json_label(self.pos_label_))}

    def decision_function(self, X: Any) -> np.ndarray:
        """Two classes: the positive class's margin minus the threshold's margin, signed
        as scikit-learn expects (positive exactly where ``predict`` says ``classes_[1]``).
        K classes: the offset log-probabilities :math:`\\log p_k + b_k`, shape (n, K),
        whose argmax ``predict`` takes."""
        z = self._margins(X)
        if z.ndim == 2:
            return log_softmax(z) + self.class_offsets_
        d = z - self._margin_threshold
        return d if self.pos_label_ == self.classes_[1] else -d

    def predict_proba(self, X: Any) -> np.ndarray:
        """Probabilities of ``classes_`` per row. Two classes: :math:`p = \\sigma(z)` for
        ``pos_label_`` (margin including ``init_score_``), :math:`1 - p` for the other.
        K classes: the softmax of the K margins."""
        z = self._margins(X)
        if z.ndim == 2:
            return _link(z)
        p = _link(z)
        if self.pos_label_ == self.classes_[1]:
            return np.column_stack([1.0 - p, p])
        return np.column_stack([p, 1.0 - p])

    def predict(self, X: Any) -> np.ndarray:
        """Two classes: ``pos_label_`` where the margin exceeds the threshold, else the
        other class. K classes: the class of the largest offset log-probability."""
        d = self.decision_function(X)  # raises NotFittedError first
        if d.ndim == 2:
            return self.classes_[np.argmax(d, axis=1)]
        return self.classes_[(d > 0).astype(np.intp)]

