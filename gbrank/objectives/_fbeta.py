"""The F_β structured surrogate (the structured-SVM construction of SVM-perf)."""

from __future__ import annotations

from types import SimpleNamespace
from typing import Any

import numpy as np

from gbrank._kernels import fbeta_surrogate as _k
from gbrank._kernels._step import inverse_step
from gbrank._queries import Queries, query_structure
from gbrank._validation import (
    check_beta,
    check_choice,
    check_integer,
    check_max_step,
    check_number,
    prepare_binary,
)
from gbrank.objectives._base import Objective

__all__ = ["FBetaSurrogate"]

_MEASURES = {"fbeta": _k.FBETA, "balanced": _k.BALANCED}
# The defaults of hess=None and batch_size="auto" (chosen on seeds the report
# does not use, see the class docstring): random examples of 75 rows with a constant
# Hessian of 4 for F_β, one example per query with a Hessian of 1 otherwise.
_AUTO_BATCH = 75
_AUTO_HESS = {True: 4.0, False: 1.0}  # keyed by "random examples in effect"


class FBetaSurrogate(Objective):
    r"""Convex structured surrogate of 1 − F_β (or of 1 − balanced measure).

    For one structured example — a query when ``group``/``qid`` is given, the whole
    data set when group-less — with labels :math:`y \in \{\pm 1\}^r`:

    .. math:: L(s) = \max_{v \in \{\pm 1\}^r} \Big[\Delta(v, y) + \sum_i (v_i - y_i) s_i\Big]
              \;\ge\; \Delta(\mathrm{sign}(s), y),

    with, for v's true/false positives and false negatives a, b, c,
    ``measure="fbeta"``: :math:`\Delta = 1 - F_\beta = 1 - (1+\beta^2)a / ((1+\beta^2)a
    + b + \beta^2 c)` (F = 1 when a + b + c = 0), ``measure="balanced"``:
    :math:`\Delta = 1 - (a/(a+c) + d/(d+b))/2`. The data-set loss is
    :math:`\sum_q w_q L_q`.

    The gradient is :math:`v^*_i - y_i` in ±1 units, i.e. −2 for a positive that
    the maximiser :math:`v^*` leaves out, +2 for a negative it takes in, 0
    otherwise (the exact gradient of ``loss`` wherever the argmax is unique; a
    subgradient at kinks). The Hessian is 0 almost everywhere:
    :meth:`exact_grad_hess` returns 0, :meth:`grad_hess` returns the constant
    ``hess`` (times the query weight) for the booster, which then takes Newton
    steps of size ``learning_rate · Σg / Σhess`` per leaf.

    The argmax goes by cells (a, b) = (#TP, #FP): the best v in a cell takes the
    top-a positives and top-b negatives by score; for F_β the value is concave in
    b for fixed a (bisection), for the balanced measure it splits per row. O(r log r)
    per query. Ties: the smallest a, then b, among maximisers; equal scores in
    row order.

    Class rules: ``"fbeta"`` needs no positive (a query without positives has
    F = 1 when nothing is predicted positive, 0 otherwise, so its surrogate pushes
    every score below 0). ``"balanced"`` needs both classes in every query (recall
    and specificity are undefined otherwise): a query missing one raises
    ``ValueError`` naming it.

    Parameters
    ----------
    beta : float, default 1.0
        β > 0 (used by ``"fbeta"``; β = 1 is F1).
    measure : {"fbeta", "balanced"}
    hess : float, optional
        Constant Hessian passed to the booster (> 0): the inverse of the step size.
        ``None`` (default): 4 when training on random examples (``batch_size`` in
        effect), 1 with one example per query.
    batch_size : int, "auto" or None, default "auto"
        Cut each structured example (query, or the whole data set) into random
        examples of about ``batch_size`` rows (⌈n/batch_size⌉ near-equal parts), drawn
        afresh at every boosting round (each call of :meth:`booster_grad_hess`); the
        loss is the sum of their surrogates. ``None``: one example per query (the
        plain surrogate). Needs ``measure="fbeta"``. ``"auto"``: 75 for
        ``measure="fbeta"``, ``None`` for ``"balanced"`` (which needs both classes in
        every example). Why: ``docs/evidence.md``.
    random_state : int, optional
        Seed of those random examples (``None``: drawn once per instance). The
        examples of a query depend on (seed, round, query size) only, so
        :meth:`grad_hess`, :meth:`loss` and the gradient check agree within a round.
    max_step : float > 0 or None, default None
        Bound on the Newton step, the rule of ``FocalLoss(max_step=...)``: a row's
        booster Hessian is raised to :math:`|g| / c`, c = ``max_step``, where that is
        larger, so every leaf value is at most c in size. The gradient is 0 or ±2
        (times the query weight), so the step is already at most 2 / ``hess``: a
        bound c ≥ 2 / ``hess`` changes nothing, and ``None`` (default) adds none. A
        smaller c raises only the rows that have a gradient, a reweighting rather than
        a safeguard (``docs/max_step.md``).

    Notes
    -----
    Weights: one per query (length n_queries), or per row constant within each
    query (a query's rows share its structured loss); per-row weights that vary
    inside a query raise ``ValueError``.

    Use with LightGBM as ``lgb.train({"objective": FBetaSurrogate()}, ds)`` (the
    Dataset's ``group``, if any, defines the structured examples; none: the whole
    training set is one) or ``LGBMClassifier(objective=...)``; with XGBoost through
    :func:`gbrank.xgboost.objective`. Predict positive where the raw margin is > 0.
    :meth:`init_score` is close to 0; starting from 0 is fine.

    When to use: on large imbalanced data for F_β at margin 0 without a threshold
    search; on small data (a few dozen positives) or when the ranking of the rows
    (average precision) matters, prefer ``FocalLoss`` or LightGBM's ``binary`` with a
    tuned threshold. The measurements behind the defaults and this advice:
    ``docs/evidence.md``. ``batch_size=None`` is the plain surrogate, one structured
    example per query, e.g. to evaluate its subgradient on given margins. Set
    ``random_state`` for reproducible models.

    Examples
    --------
    >>> import numpy as np
    >>> from gbrank.objectives import FBetaSurrogate
    >>> y = np.array([1.0, 0.0, 0.0, 1.0])
    >>> s = np.array([2.0, 1.0, -1.0, -2.0])
    >>> grad, hess = FBetaSurrogate(batch_size=None).grad_hess(y, s)
    >>> grad.tolist()  # the positive at -2 is left out (-2), the negative at 1 taken in (+2)
    [0.0, 2.0, 0.0, -2.0]
    """

    task = "binary"
    loss_blocks = "query"
    _training_state = ("_round", "_seed")  # batch_size: the round count and drawn seed

    def __init__(self, beta: float = 1.0, measure: str = "fbeta", hess: float | None = None,
                 batch_size: int | str | None = "auto", random_state: int | None = None,
                 max_step: float | None = None) -> None:
        self.beta = beta
        self.measure = measure
        self.hess = hess
        self.batch_size = batch_size
        self.random_state = random_state
        self.max_step = max_step

    def _validate_params(self) -> SimpleNamespace:
        measure = check_choice(self.measure, "measure", tuple(_MEASURES))
        if isinstance(self.batch_size, str):
            if self.batch_size != "auto":
                raise ValueError(f"batch_size must be 'auto', None or an integer >= 1, "
                                 f"got {self.batch_size!r}")
            batch = _AUTO_BATCH if measure == "fbeta" else None
        else:
            batch = check_integer(self.batch_size, "batch_size", 1, allow_none=True)
        max_step = check_max_step(self.max_step)
        return SimpleNamespace(
            beta=check_beta(self.beta),
            measure=measure,
            hess=(_AUTO_HESS[batch is not None] if self.hess is None
                  else check_number(self.hess, "hess", 0.0, low_open=True)),
            batch_size=batch,
            random_state=check_integer(self.random_state, "random_state", 0,
                                       allow_none=True),
            max_step=max_step,
            inv_step=inverse_step(max_step),
        )

    # -- validation -----------------------------------------------------------------------

    def _prepare(self, y: Any, s: Any, group: Any, qid: Any, weight: Any,
                 ) -> tuple[np.ndarray, np.ndarray, Queries, np.ndarray]:
        y, s, _ = prepare_binary(y, s)
        # Weights: per query, or per row constant within each query (the one rule).
        queries = query_structure(y.size, group=group, qid=qid, weight=weight)
        y, s = queries.apply(y), queries.apply(s)
        offsets = queries.offsets
        nq = offsets.size - 1
        qw = np.ones(nq) if queries.weights is None else queries.weights
        if self._params().measure == "balanced":
            n_pos = np.add.reduceat(y, offsets[:-1])
            sizes = np.diff(offsets)
            for what, bad in (("positive", n_pos == 0), ("negative", n_pos == sizes)):
                idx = np.flatnonzero(bad)
                if idx.size:
                    q = int(idx[0])
                    name = "the data set (group-less)" if nq == 1 else f"query {q}"
                    if qid is not None:
                        first = queries.apply(np.asarray(qid))[offsets[q]]
                        name += f" (qid {first})"
                    raise ValueError(
                        f'measure="balanced" needs a {what} row in every query (recall '
                        f"and specificity are undefined otherwise); {name} has none "
                        f"({idx.size} such queries)"
                    )
        return y, s, queries, qw

    def _oracle(self, y, s, group, qid, weight):
        p = self._params()
        y, s, queries, qw = self._prepare(y, s, group, qid, weight)
        grad = np.empty_like(s)
        if p.batch_size is None:
            values = _k.oracle(y, s, queries.offsets, _MEASURES[p.measure], p.beta ** 2,
                               grad)
            return grad, values, queries, qw, qw
        if p.measure != "fbeta":
            raise ValueError(f"batch_size needs measure='fbeta' (the balanced measure needs "
                             f"both classes in every example), got measure={p.measure!r}")
        perm, offsets, parent = self._batches(queries.offsets, p)
        values = _k.oracle_examples(y, s, perm, offsets, p.beta ** 2, grad)
        return grad, values, queries, qw, qw[parent]

    # -- random structured examples (batch_size) -------------------------------------------

    def _batches(self, offsets: np.ndarray, p: SimpleNamespace):
        """Rows of each query shuffled and cut into ⌈n_q / batch_size⌉ near-equal
        examples: (permutation, example offsets, the query of each example).

        The shuffle of a query depends only on (seed, round, query size), so
        :meth:`grad_hess`, :meth:`loss` and a per-query gradient check see the same
        examples within a round; :meth:`booster_grad_hess` advances the round.
        """
        if p.random_state is None:
            if getattr(self, "_seed", None) is None:
                self._seed = int(np.random.SeedSequence().entropy % (2**32))
            seed = self._seed
        else:
            seed = p.random_state
        rnd = getattr(self, "_round", 0)
        perm = np.empty(int(offsets[-1]), dtype=np.int64)
        starts = [0]
        parent = []
        for q in range(offsets.size - 1):
            lo, hi = int(offsets[q]), int(offsets[q + 1])
            n = hi - lo
            rng = np.random.default_rng([seed, rnd, n])
            perm[lo:hi] = lo + rng.permutation(n)
            parts = max(1, -(-n // p.batch_size))
            cuts = lo + np.linspace(0, n, parts + 1).astype(np.int64)[1:]
            starts.extend(cuts.tolist())
            parent.extend([q] * parts)
        return perm, np.asarray(starts, dtype=np.int64), np.asarray(parent, dtype=np.int64)

    def booster_grad_hess(self, y: Any, preds: Any, group: Any = None,
                          weight: Any = None, *,
                          start_fix: str | None = None) -> tuple[np.ndarray, np.ndarray]:
        """:meth:`grad_hess` for a booster; with ``batch_size``, each call (one boosting
        round) draws new random examples."""
        if self._params().batch_size is not None:
            self._round = getattr(self, "_round", 0) + 1
        return super().booster_grad_hess(y, preds, group, weight, start_fix=start_fix)

    # -- protocol --------------------------------------------------------------------------

    def grad_hess(self, y: Any, s: Any, group: Any = None, *, qid: Any = None,
                  weight: Any = None) -> tuple[np.ndarray, np.ndarray]:
        """v* − y (±1 units) and the constant ``hess``, both times the query weight;
        with ``max_step``, the Hessian of a row is raised to at least |g| / max_step."""
        grad, _, queries, qw, _ = self._oracle(y, s, group, qid, weight)
        hess = np.empty_like(grad)
        p = self._params()
        _k.scale_by_query(grad, queries.offsets, qw, float(p.hess), p.inv_step, hess)
        return queries.restore(grad), queries.restore(hess)

    def exact_grad_hess(self, y: Any, s: Any, group: Any = None, *, qid: Any = None,
                        weight: Any = None) -> tuple[np.ndarray, np.ndarray]:
        """v* − y (times the query weight) and the true Hessian, 0."""
        grad, _, queries, qw, _ = self._oracle(y, s, group, qid, weight)
        grad *= np.repeat(qw, queries.sizes)
        return queries.restore(grad), np.zeros_like(grad)

    def argmax(self, y: Any, s: Any, group: Any = None, *, qid: Any = None) -> np.ndarray:
        """The maximiser v* ∈ {−1, +1} per row (in the caller's row order)."""
        y01, _, _ = prepare_binary(y, s)
        grad, _, queries, _, _ = self._oracle(y, s, group, qid, None)
        return queries.restore(grad) + (2.0 * y01 - 1.0)

    def loss(self, y: Any, s: Any, group: Any = None, *, qid: Any = None, weight: Any = None,
             at: Any = None) -> float:
        """:math:`\\sum_q w_q L_q(s)`."""
        _, values, _, _, vw = self._oracle(y, s, group, qid, weight)
        return float(np.dot(values, vw))

    def init_score(self, y: Any, weight: Any = None, group: Any = None) -> float:
        """A constant raw score c minimising the surrogate on constant scores.

        L(c·1) is convex and piecewise linear in c with all kinks in [−½, ½] (slopes
        are even integers, intercepts Δ ∈ [0, 1]), so a golden-section search there
        finds a minimiser. For F_β this is typically a flat region containing 0;
        for the balanced measure it is −1/(4N) (N negatives) when N > P. Either way
        the value is close to 0, the threshold the surrogate's Δ is defined at.
        """
        y01, _, _ = prepare_binary(y, np.zeros(np.size(y)))
        _, _, queries, qw = self._prepare(y01, np.zeros(y01.size), group, None, weight)
        sizes = queries.sizes
        n_pos = np.add.reduceat(y01, queries.offsets[:-1]).astype(np.int64)
        n_neg = (sizes - n_pos).astype(np.int64)
        p = self._params()
        code = _MEASURES[p.measure]
        b2 = p.beta ** 2

        def f(c: float) -> float:
            return _k.constant_score_loss(c, n_pos, n_neg, qw, code, b2)

        lo, hi = -0.5, 0.5
        ratio = (np.sqrt(5.0) - 1.0) / 2.0
        x1, x2 = hi - ratio * (hi - lo), lo + ratio * (hi - lo)
        f1, f2 = f(x1), f(x2)
        for _ in range(80):
            if f1 <= f2:
                hi, x2, f2 = x2, x1, f1
                x1 = hi - ratio * (hi - lo)
                f1 = f(x1)
            else:
                lo, x1, f1 = x1, x2, f2
                x2 = lo + ratio * (hi - lo)
                f2 = f(x2)
        return float((lo + hi) / 2.0)
