"""to_native: a model LightGBM (or any loader of its files) predicts with alone."""

from __future__ import annotations

from typing import Any

import numpy as np

from gbrank._deps import require
from gbrank.lightgbm._refit import _K_ZERO_THRESHOLD

# The objective line LightGBM writes for its own objective of each link.
_LINK_OBJECTIVE = {"binary": "binary sigmoid:1", "ranking": "lambdarank"}
# The parameters block's entry for it.
_LINK_PARAM = {"binary": "binary", "multiclass": "multiclass", "ranking": "lambdarank"}


def _add_to_leaves(line: str, value: float) -> str:
    """``key=v1 v2 ...`` with ``value`` added to every number (as LightGBM's
    ``Tree::AddBias``, which rounds results within kZeroThreshold of 0 to 0)."""
    key, _, numbers = line.partition("=")
    out = []
    for token in numbers.split():
        v = float(token) + value
        out.append(repr(0.0 if abs(v) <= _K_ZERO_THRESHOLD else v))
    return f"{key}={' '.join(out)}"


def to_native(booster: Any, objective: Any, *, init_score: Any = None,
              num_iteration: int | None = None) -> Any:
    r"""A LightGBM model that predicts, with LightGBM alone, what gbrank predicts.

    A model trained with a custom objective records no objective (LightGBM cannot
    apply a link) and not the raw score training started from (a ``Dataset``'s
    ``init_score`` is not saved). This returns a copy in which

    - the start :math:`c_k` is part of the trees: added to every leaf of the first tree
      of each class :math:`k`, as LightGBM's own ``boost_from_average`` stores its
      start, so the raw score is
      :math:`z_k(x) = c_k + \sum_t f_{t,k}(x)`;
    - the link is the model's objective, which ``Booster.predict`` applies and other
      loaders read: ``binary sigmoid:1`` (:math:`\sigma(z)`) for binary objectives
      (``FocalLoss``, ``FBetaSurrogate``), ``multiclass num_class:K`` (softmax over
      the K scores) for ``FocalLoss(num_class=K)``, ``lambdarank`` (the raw score) for
      ranking objectives (``RankNet``, ``LambdaRank`` with any metric and options).

    Feature names, categorical splits and linear trees are kept. Every link of a gbrank
    objective is one LightGBM has, so any gbrank objective exports exactly; a model
    already holding one of LightGBM's objectives (trained natively, or exported
    before) is refused, since its start is inside already.

    Parameters
    ----------
    booster : lightgbm.Booster
        Trained with ``objective`` (not modified).
    objective : gbrank objective or str
        The objective it was trained with (an instance, or a registry name such as
        ``"focal"``); its task gives the link. A calibrated ranking objective
        (``calibration > 0``) must be the instance: its name says nothing of the
        calibration, and the raw scores would be exported.
    init_score : float or array-like of shape (K,), optional
        The raw score training started from — what training used, not what it should
        have used (another value shifts every exported prediction): the constant of the
        training ``Dataset``'s ``init_score``, e.g. ``FocalLoss.init_score(y_train)``
        (:class:`gbrank.sklearn.GBClassifier` keeps it in ``init_score_``); one per
        class for multiclass. Required for binary and multiclass objectives (0 if the
        Dataset had no ``init_score``); ranking objectives default to 0. A per-row
        start cannot be part of a model and is refused.
    num_iteration : int, optional
        Rounds to keep; ``None`` keeps what ``booster.predict`` uses (the best
        iteration after early stopping, else all).

    Returns
    -------
    lightgbm.Booster
        Its ``predict(X)`` is the probability (binary: of the positive label; shape
        (n, K) for multiclass) or the ranking score; ``predict(X, raw_score=True)`` is
        the raw score including the start. ``save_model(path)`` writes it.

    Examples
    --------
    >>> import lightgbm as lgb
    >>> import numpy as np
    >>> from gbrank import predict_proba
    >>> from gbrank.datasets import make_imbalanced
    >>> from gbrank.lightgbm import to_native
    >>> from gbrank.objectives import FocalLoss
    >>> X, y = make_imbalanced(n_rows=1000, positive_rate=0.1, seed=0)
    >>> obj = FocalLoss(gamma=2.0)
    >>> start = obj.init_score(y)
    >>> booster = lgb.train({"objective": obj, "verbose": -1},
    ...                     lgb.Dataset(X, y, init_score=np.full(y.size, start)),
    ...                     num_boost_round=10)
    >>> native = to_native(booster, obj, init_score=start)
    >>> expected = predict_proba(booster.predict(X, raw_score=True) + start)
    >>> bool(np.allclose(native.predict(X), expected, rtol=0, atol=1e-12))
    True
    """
    lgb = require("lightgbm")
    from gbrank._export import native_prediction
    from gbrank._validation import check_integer

    if not isinstance(booster, lgb.Booster):
        raise ValueError(f"booster must be a lightgbm.Booster, got {type(booster).__name__}")
    prediction = native_prediction(objective, init_score, hint=(
        "pass init_score=objective.init_score(y_train), the constant of the Dataset's "
        "init_score (GBClassifier keeps it in init_score_), or init_score=0.0 if the "
        "Dataset had none"))
    k = booster.num_model_per_iteration()
    start = np.zeros(k) if prediction.start is None else prediction.start
    if k != prediction.num_class:
        has = f"{k} trees per round (num_class={k})" if k > 1 else "one tree per round"
        wants = (f"num_class={prediction.num_class}" if prediction.num_class > 1
                 else f"a {prediction.task} objective, one tree per round")
        raise ValueError(f"the model has {has}, but {prediction.objective!r} is {wants}")
    rounds = booster.current_iteration()
    if num_iteration is not None:
        num_iteration = check_integer(num_iteration, "num_iteration", 1, rounds)
    lines = booster.model_to_string(num_iteration=num_iteration).split("\n")
    first = next((i for i, line in enumerate(lines) if line.startswith("Tree=")), None)
    if first is None:
        raise ValueError("the model has no trees; there is nothing to export")
    header = lines[:first]
    if any(line.startswith("objective=") for line in header):
        own = next(line for line in header if line.startswith("objective="))
        raise ValueError(
            f"the model holds LightGBM's own objective ({own}): it was trained natively or "
            "exported already, so it predicts on its own; save it as it is")
    link = _LINK_OBJECTIVE.get(prediction.task) or f"multiclass num_class:{k}"
    out = []
    for line in header:
        if line.startswith("tree_sizes="):
            continue  # LightGBM recomputes it; the edited trees have other sizes
        out.append(line)
        if line.startswith("max_feature_idx="):
            out.append(f"objective={link}")
    tree = -1
    for line in lines[first:]:
        if line.startswith("Tree="):
            tree = int(line[len("Tree="):])
        elif line == "end of trees":
            tree = -1
        edit = 0 <= tree < k  # the first tree of each class
        value = float(start[tree]) if edit else 0.0
        if edit and line.startswith(("leaf_value=", "internal_value=", "leaf_const=")):
            line = _add_to_leaves(line, value) if line.partition("=")[2] else line
        elif edit and line.startswith("shrinkage="):
            line = "shrinkage=1"  # as Tree::AddBias: the tree is no longer a shrunk fit
        elif line.startswith("[objective: "):
            line = f"[objective: {_LINK_PARAM[prediction.task]}]"
        elif line.startswith("[num_class: "):
            line = f"[num_class: {k}]"
        elif line.startswith("[sigmoid: ") and prediction.task == "binary":
            line = "[sigmoid: 1]"
        out.append(line)
    return lgb.Booster(model_str="\n".join(out))
