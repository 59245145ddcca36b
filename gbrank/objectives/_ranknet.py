"""RankNet (Burges et al. 2005): the pairwise logistic loss over all pairs."""

from __future__ import annotations

from types import SimpleNamespace
from typing import Any

import numpy as np

from gbrank._kernels import position_bias as _pk
from gbrank._kernels import ranknet as _k
from gbrank._kernels import ranknet_grid as _grid
from gbrank._queries import prepare_ranking
from gbrank._targets import TARGET_MAPPINGS
from gbrank._validation import check_choice, check_integer, check_number, check_sigma
from gbrank.objectives._base import Objective
from gbrank.objectives._combination import CalibrationMixin
from gbrank.objectives._position_bias import (
    BIAS_NORM,
    MAX_WEIGHT,
    REGULARIZATION,
    PositionBiasMixin,
    with_position_bias_parameters,
)

__all__ = ["RankNet"]

_EMPTY = np.empty(0, dtype=np.float64)
_NO_SKIP = np.empty(0, dtype=np.bool_)
_TIES = ("skip", "pull")
_METHODS = ("auto", "exact", "fast")


@with_position_bias_parameters
class RankNet(PositionBiasMixin, CalibrationMixin, Objective):
    r"""RankNet: logistic loss on every differently-labelled pair of a query.

    For rows i, j of one query with :math:`l_i > l_j`, :math:`\Delta s = s_i - s_j` and
    :math:`\rho = 1 / (1 + e^{\sigma \Delta s})`,

    .. math:: C_{ij} = \log(1 + e^{-\sigma \Delta s}), \quad
              \partial C/\partial s_i = -\sigma\rho = -\partial C/\partial s_j, \quad
              \partial^2 C/\partial s_i^2 = \sigma^2 \rho (1 - \rho).

    The loss is :math:`\sum_q w_q \sum_{pairs\ of\ q} C_{ij}`; gradients and (diagonal)
    Hessians of a row sum over its pairs. The Hessian is the true one, so
    :meth:`exact_grad_hess` equals :meth:`grad_hess`.

    Parameters
    ----------
    sigma : float, default 1.0
        Steepness σ of the pair sigmoid (> 0).
    ties : {"skip", "pull"}, default "skip"
        ``"skip"``: equal-label pairs do not enter (LightGBM, XGBoost). ``"pull"``: they
        enter with target probability ½, :math:`C = \tfrac12 \sigma\Delta s +
        \log(1 + e^{-\sigma\Delta s})`, pulling their scores together — the form of
        a common hand-written RankNet objective (``ranknet_loss_v2``, σ = 1).
    method : {"auto", "exact", "fast"}, default "auto"
        How a query's O(n²) pair sums are computed.

        - ``"exact"``: all pairs, O(n²) per query.
        - ``"fast"``: for group-less data of any size, no O(n²). When few rows lie
          within 40/σ of each other in score (fewer than 2,500 per row on average),
          those near pairs are summed exactly and farther pairs counted (their
          sigmoid is 0 or 1 to ~4e-18): exact, O(n log n + near pairs). Otherwise the
          per-grade sums are convolutions on a uniform score grid
          (cubic-interpolation deposit, FFT, read-back with the same weights,
          σ·spacing ≤ 1/32, at most 2^19 nodes): O(n + M log M), within 1e-7 of the
          exact sums relative to their largest value (the contract's bound,
          ``docs/contract.md``).
          Real-valued labels (up to one distinct value per row) keep that cost: a
          grade of at most 256 rows has its own-grade sums taken pair by pair, a bigger
          one a grid convolution. Scores spread over more than ~5·10^4/σ (beyond what
          the grid resolves) are summed exactly by the near-pair window, whose cost
          grows with the number of near pairs. Peak memory is a few n-row arrays.
          Measured errors, timings and memory: ``docs/evidence.md`` ("Figures moved
          from docstrings").
        - ``"auto"``: exact for queries of at most ``exact_max_rows`` rows, fast above.
    exact_max_rows : int, default 10_000
        Largest query ``"auto"`` sums exactly (LightGBM's own per-query limit).
    calibration : float in [0, 1], default 0
        Weight α of a pointwise term that makes :math:`\sigma(s)` a probability of
        relevance: the objective becomes :math:`(1 - \alpha) L_{rank} + \alpha
        \sum_i \ell(t_i, \sigma(s_i))`, ℓ the cross-entropy of
        :class:`~gbrank.objectives.CrossEntropy` (a ranking loss alone leaves the
        scores' offset and scale free). 0: the ranking loss alone.
    calibration_target : {"auto", "identity", "exponential", "linear", "binary"}
        How labels become targets in [0, 1] for that term (``CrossEntropy``'s
        ``target``): clicks and rates as they are, grades mapped.
    groupless : bool, default False
        Declare group-less ranking: all rows of the training data are one query (the
        whole data set ranked as one list, of any size). A booster's training data
        without query structure is refused unless this is set, so that query ids left
        out are never silently read as one query; set, data with several queries are
        refused. Plain calls (:meth:`grad_hess`, :meth:`loss` without ``group``/``qid``)
        are one list either way.

    Notes
    -----
    Query weights (one per query, or per row constant within each query) multiply
    that query's gradients and Hessians. Labels are only
    compared, so any finite non-negative grades are accepted.

    Examples
    --------
    >>> import numpy as np
    >>> from gbrank.objectives import RankNet
    >>> y, s = np.array([2.0, 0.0, 1.0]), np.zeros(3)
    >>> grad, hess = RankNet().grad_hess(y, s)  # one query; each pair has ρ = 1/2
    >>> grad.tolist(), hess.tolist()
    ([-1.0, 1.0, 0.0], [0.5, 0.5, 0.5])
    """

    task = "ranking"
    loss_blocks = "query"

    #: Per big query, which fast method the last call used ("window" or "grid").
    last_fast_methods_: tuple[str, ...] | list[str] = ()

    def __init__(self, sigma: float = 1.0, ties: str = "skip", method: str = "auto",
                 exact_max_rows: int = 10_000, calibration: float = 0.0,
                 calibration_target: str = "auto", position_bias: str | None = None,
                 propensity: Any = None, max_weight: float | None = MAX_WEIGHT,
                 bias_norm: float = BIAS_NORM, bias_cost: str = "paper",
                 position_bias_regularization: float = REGULARIZATION,
                 position_bias_learning_rate: float | None = None, on_cascade: str = "raise",
                 groupless: bool = False) -> None:
        self.sigma = sigma
        self.ties = ties
        self.method = method
        self.exact_max_rows = exact_max_rows
        self.calibration = calibration
        self.calibration_target = calibration_target
        self.position_bias = position_bias
        self.propensity = propensity
        self.max_weight = max_weight
        self.bias_norm = bias_norm
        self.bias_cost = bias_cost
        self.position_bias_regularization = position_bias_regularization
        self.position_bias_learning_rate = position_bias_learning_rate
        self.on_cascade = on_cascade
        self.groupless = groupless

    def _validate_params(self) -> SimpleNamespace:
        p = SimpleNamespace(
            sigma=check_sigma(self.sigma),
            pull=check_choice(self.ties, "ties", _TIES) == "pull",
            method=check_choice(self.method, "method", _METHODS),
            exact_max_rows=check_integer(self.exact_max_rows, "exact_max_rows", 1),
            calibration=check_number(self.calibration, "calibration", 0.0, 1.0),
            calibration_target=check_choice(self.calibration_target, "calibration_target",
                                            TARGET_MAPPINGS),
            max_step=0.0,  # RankNet passes its true Hessian
        )
        self._shared_params(p)
        method = p.pb.method
        if method in ("ipw", "unbiased"):
            if p.pull:
                raise ValueError(f"position_bias={method!r} corrects pairs of a clicked and "
                                 "an unclicked row; ties='pull' adds pairs of equal labels, "
                                 "which it cannot weigh: use ties='skip'")
            if p.method == "fast":
                raise ValueError(f"position_bias={method!r} sums its pairs exactly "
                                 "(per-row factors), which method='fast' cannot: use "
                                 "method='exact' or 'auto', or position_bias='additive' "
                                 "(any method)")
        return p

    def _pair_options(self, p: SimpleNamespace, y: np.ndarray) -> tuple:
        """The pair kernel's arguments for RankNet (weight 1, every pair)."""
        return (_pk.RANKNET, _pk.PLAIN, 0, p.sigma, _EMPTY, _EMPTY, 1.0, False, False, 0,
                0.0, 0.0)

    def _check_query_sizes(self, queries: Any) -> None:
        """Queries above ``exact_max_rows`` take the fast method without position bias;
        with factors per row they are refused (O(n²) pairs each)."""
        p = self._params()
        big = np.flatnonzero(queries.sizes > p.exact_max_rows)
        if big.size:
            q = int(big[0])
            raise ValueError(
                f"position_bias={p.pb.method!r} sums RankNet's pairs exactly, O(n²) per "
                f"query, and query {q} has {int(queries.sizes[q])} rows (exact_max_rows="
                f"{p.exact_max_rows}): click logs hold the displayed rows of a query (or "
                "session) — pass their query ids, raise exact_max_rows, or use "
                "LambdaRank(position_bias=...) (O(n·k)) or position_bias='additive'")

    def _prepare(self, y: Any, s: Any, group: Any, qid: Any, weight: Any):
        return prepare_ranking(y, s, group, qid, weight, integer_grades=False, max_grade=None)

    def grad_hess(self, y: Any, s: Any, group: Any = None, *, qid: Any = None,
                  weight: Any = None, position: Any = None, estimates: Any = None,
                  ) -> tuple[np.ndarray, np.ndarray]:
        """Gradient and diagonal Hessian of the RankNet loss w.r.t. ``s``. With
        ``position_bias``, ``position`` gives every row's display position and
        ``estimates`` (a :class:`PositionBias`, e.g. a training's ``position_bias_``)
        are used as they stand, the start values without them (never updated here)."""
        mix = self._calibrated()
        if mix is not None:
            return mix.grad_hess(y, s, group, qid=qid, weight=weight)
        p = self._params()
        if p.pb.method is not None:
            return self._factored(p, y, s, group, qid, weight, position, 0.0, estimates)
        return self._plain_grad_hess(y, s, group, qid, weight, 0.0)

    def exact_grad_hess(self, y: Any, s: Any, group: Any = None, *, qid: Any = None,
                        weight: Any = None, position: Any = None,
                        estimates: Any = None) -> tuple[np.ndarray, np.ndarray]:
        """Same as :meth:`grad_hess` (RankNet's Hessian is the true one)."""
        return self.grad_hess(y, s, group, qid=qid, weight=weight, position=position,
                              estimates=estimates)

    def _plain_grad_hess(self, y: Any, s: Any, group: Any, qid: Any, weight: Any,
                         max_step: float) -> tuple[np.ndarray, np.ndarray]:
        p = self._params()
        y, s, queries = self._prepare(y, s, group, qid, weight)
        pull = p.pull
        qw = _EMPTY if queries.weights is None else queries.weights
        sizes = queries.sizes
        if p.method == "exact":
            big = np.zeros(sizes.size, dtype=np.bool_)
        elif p.method == "fast":
            big = sizes > 1
        else:
            big = sizes > p.exact_max_rows
        self.last_fast_methods_ = []
        if big.all() and sizes.size == 1:
            # One fast-mode query (group-less data): its arrays are the answer, no copy
            # (peak memory is what the fast mode itself needs).
            grad, hess, used = _grid.ranknet_fast_grad_hess(y, s, p.sigma, pull)
            self.last_fast_methods_.append(used)
            if queries.weights is not None:
                grad *= queries.weights[0]
                hess *= queries.weights[0]
            return queries.restore(grad, into=s), queries.restore(hess, into=y)
        if big.all():
            grad, hess = np.empty(s.size), np.empty(s.size)
        else:
            grad, hess = _k.ranknet_grad_hess(y, s, queries.offsets, qw, p.sigma, pull,
                                              big if big.any() else _NO_SKIP,
                                              out=self._output_buffers(y.size))
        for q in np.flatnonzero(big):
            lo, hi = int(queries.offsets[q]), int(queries.offsets[q + 1])
            g, h, used = _grid.ranknet_fast_grad_hess(y[lo:hi], s[lo:hi], p.sigma, pull)
            self.last_fast_methods_.append(used)
            if queries.weights is not None:
                g *= queries.weights[q]
                h *= queries.weights[q]
            grad[lo:hi] = g
            hess[lo:hi] = h
        # With rows permuted into query order, y and s are dead copies: reuse them.
        return queries.restore(grad, into=s), queries.restore(hess, into=y)

    def loss(self, y: Any, s: Any, group: Any = None, *, qid: Any = None, weight: Any = None,
             at: Any = None, position: Any = None, estimates: Any = None) -> float:
        """Σ_q w_q Σ_pairs C_ij (O(n²) per query; ``at`` is ignored: no frozen weights);
        with ``position_bias``, each pair's term times its factor (or the scores shifted
        by the offsets), the estimates frozen."""
        mix = self._calibrated()
        if mix is not None:
            return mix.loss(y, s, group, qid=qid, weight=weight, at=at)
        p = self._params()
        if p.pb.method is not None:
            return self._factored_loss(p, y, s, group, qid, weight, position, at,
                                       estimates)
        return self._plain_loss(y, s, group, qid, weight, at)

    def _plain_loss(self, y: Any, s: Any, group: Any, qid: Any, weight: Any,
                    at: Any) -> float:
        p = self._params()
        y, s, queries = self._prepare(y, s, group, qid, weight)
        qw = _EMPTY if queries.weights is None else queries.weights
        return float(_k.ranknet_loss(y, s, queries.offsets, qw, p.sigma, p.pull))
