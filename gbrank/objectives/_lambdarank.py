"""LambdaRank (Burges 2010): RankNet pairs weighted by |ΔZ| of an IR metric."""

from __future__ import annotations

from types import SimpleNamespace
from typing import Any

import numpy as np

from gbrank._kernels import lambdarank as _k
from gbrank._kernels import position_bias as _pk
from gbrank._kernels.delta import ERR, MAP, MRR, NDCG
from gbrank._queries import prepare_ranking
from gbrank._targets import TARGET_MAPPINGS
from gbrank._validation import (
    MAX_EXACT_GRADE,
    as_float_array,
    check_bool,
    check_choice,
    check_integer,
    check_label_gain,
    check_max_step,
    check_number,
    check_sigma,
    check_threshold,
)
from gbrank.objectives._base import Objective
from gbrank.objectives._combination import CalibrationMixin
from gbrank.objectives._position_bias import (
    BIAS_NORM,
    MAX_WEIGHT,
    REGULARIZATION,
    PositionBiasMixin,
    with_position_bias_parameters,
)

__all__ = ["LambdaRank"]

_EMPTY = np.empty(0, dtype=np.float64)
_METRIC_CODES = {"ndcg": NDCG, "err": ERR, "map": MAP, "mrr": MRR}
_WEIGHTINGS = {"lambdarank": _k.LAMBDARANK, "ndcg_loss1": _k.LOSS1, "ndcg_loss2": _k.LOSS2,
               "ndcg_loss2pp": _k.LOSS2PP}
# smoothing=None: the share of |ΔNDCG| each metric gets by default (see the
# class docstring for the measurements behind these numbers).
_DEFAULT_SMOOTHING = {"ndcg": 0.0, "err": 0.9, "map": 0.75, "mrr": 0.75}


def _integer_grades(y: np.ndarray) -> bool:
    return bool(np.all(y == np.floor(y))) and (y.size == 0 or float(y.max()) <= MAX_EXACT_GRADE)


@with_position_bias_parameters
class LambdaRank(PositionBiasMixin, CalibrationMixin, Objective):
    r"""LambdaRank: pairwise logistic loss weighted by the change of an IR metric.

    For rows i, j of one query with :math:`l_i > l_j` and min(rank_i, rank_j) ≤ k
    (``truncation``; ranks from the current scores, descending, ties by row order),
    :math:`\rho = 1 / (1 + e^{\sigma (s_i - s_j)})` and
    :math:`w_{ij} = |\Delta Z_{ij}|`, the change of Z@k when i and j swap places:

    .. math:: \lambda_i \mathrel{-}= \sigma w_{ij} \rho,\quad
              \lambda_j \mathrel{+}= \sigma w_{ij} \rho,\quad
              h_i, h_j \mathrel{+}= \sigma^2 w_{ij} \rho (1 - \rho).

    (:meth:`grad_hess` gives the booster :math:`\max(h_i, \sigma|\lambda_i|/c)`,
    c = ``max_step``, see below.) λ and h are the exact gradient and diagonal Hessian
    of the *local loss*
    :math:`L(s) = \sum_q w_q \sum_{ij} w_{ij} \log(1 + e^{-\sigma (s_i - s_j)})` with
    the ranking and the :math:`w_{ij}` frozen (``loss(..., at=s0)``).

    Metrics Z (``docs/contract.md``, all @k with k = ``truncation``):

    - ``"ndcg"``: gain :math:`2^l - 1` or ``label_gain[l]``, discount
      :math:`1/\log_2(1 + r)` for r ≤ k and 0 beyond,
      :math:`|\Delta| = |g_i - g_j|\,|D(r_i) - D(r_j)| / \mathrm{IDCG@k}`.
    - ``"err"``: :math:`R(l) = (2^l - 1)/2^{g_{max}}`, ``g_max = max_grade`` or the
      largest label given; |ΔERR| in O(1) per pair from prefix products of (1 − R)
      and prefix sums of :math:`R_r \prod_{i<r}(1 - R_i)/r`.
    - ``"map"``: relevant ⇔ label ≥ ``threshold``; |ΔAP@k| in O(1) from prefix hit
      counts and prefix sums of 1/r over relevant ranks.
    - ``"mrr"``: |ΔRR@k| from the first and second relevant ranks.

    Cost per query: O(n·k) pairs, exact at any size; a query of more than 512 rows is
    not sorted when the weights read no position below k (an O(n) selection of the top
    k instead). Memory and speed figures: ``docs/performance.md``.

    When to use: ``LambdaRank()`` for NDCG@k on graded data; ``metric=`` for MAP or MRR
    (their default smoothing keeps a share of NDCG's signal); for ERR@k prefer
    ``LambdaRank()``; ``calibration=α`` when the scores must also be probabilities. The
    measurements behind the defaults are in ``docs/evidence.md``; the contract (every
    formula and tie rule) in ``docs/contract.md``.

    Parameters
    ----------
    metric : {"ndcg", "err", "map", "mrr"}, default "ndcg"
    truncation : int, default 30
        k: only pairs whose better-ranked row is in the top k enter (LightGBM's
        ``lambdarank_truncation_level``), and Z is Z@k.
    sigma : float, default 1.0
        Steepness σ of the pair sigmoid (LightGBM's ``sigmoid``).
    label_gain : sequence of float, optional
        NDCG gain per integer grade (LightGBM's ``label_gain``); default
        :math:`2^l - 1`.
    max_grade : int, optional
        ERR's :math:`g_{max}`; default the largest label in the data of the call.
    threshold : float, default 1
        Relevance threshold for ``"map"`` and ``"mrr"``.
    norm : bool, default False
        Reproduce LightGBM's ``lambdarank`` gradient (``lambdarank_norm=true``, its
        default): (1) for ``"ndcg"``, ΔNDCG uses LightGBM's discount — positions
        beyond k keep :math:`1/\log_2(1 + r)` — with IDCG@k; (2) when a query's scores
        are not all equal, each :math:`w_{ij}` is divided by :math:`0.01 + |s_i - s_j|`;
        (3) a query's λ's and Hessians are scaled by :math:`\log_2(1 + S)/S`,
        :math:`S = \sum 2\sigma w_{ij}\rho`. These rescalings are heuristics, not a
        gradient of a fixed loss; ``loss(at=...)`` freezes them with the weights, so
        the gradient check still holds locally. LightGBM's float32 accumulation and
        sigmoid lookup table are not reproduced (one round's leaf values differ by up
        to about 1e-4 relative, more where a leaf's gradients nearly cancel).
    weighting : {"lambdarank", "ndcg_loss1", "ndcg_loss2", "ndcg_loss2pp"}, default "lambdarank"
        The pair weight :math:`w_{ij}` (Wang et al., CIKM 2018, "The LambdaLoss
        Framework"). With ranks r from the current scores,
        :math:`D(r) = \log_2(1 + r)`, :math:`G_i = (2^{l_i} - 1)/\mathrm{IDCG@k}`
        (or ``label_gain``), for pairs :math:`l_i > l_j`: ``"lambdarank"``
        :math:`|\Delta Z_{ij}|`; ``"ndcg_loss1"`` :math:`G_i / D(r_i)`;
        ``"ndcg_loss2"`` :math:`|G_i - G_j|\,\delta_{ij}` with
        :math:`\delta_{ij} = 1/D(|r_i - r_j|) - 1/D(|r_i - r_j| + 1)`;
        ``"ndcg_loss2pp"`` :math:`\mu` · (NDCG-Loss2 weight) + :math:`|\Delta
        \mathrm{NDCG}_{ij}|`. The LambdaLoss weights are NDCG's: they need
        ``metric="ndcg"``. Same pairs (better-ranked row in the top k), same local
        loss and gradient check as |ΔZ|.
    mu : float, default 1.0
        μ ≥ 0 of ``"ndcg_loss2pp"``; unused otherwise (allRank's default is 10; why 1:
        ``docs/evidence.md``).
    smoothing : float in [0, 1], optional
        Share α of NDCG's signal mixed into Z's:
        :math:`w_{ij} = (1 - \alpha)|\Delta Z_{ij}| + \alpha |\Delta
        \mathrm{NDCG}_{ij}|` (NDCG gain :math:`2^l - 1`, so it needs integer grades).
        It keeps a dense signal on every pair where |ΔZ| is sparse or saturated
        (MRR, ERR with many relevant rows). ``None`` (default): the metric's share,
        0 for NDCG, 0.9 for ERR, 0.75 for MAP and MRR (evidence: ``docs/evidence.md``);
        for MAP and MRR with labels that are not integer grades (which they accept)
        ``None`` means 0. 0 is pure |ΔZ|; 1 is ``LambdaRank("ndcg")``. Under
        ``metric="ndcg"`` the mixture is |ΔZ| itself (Z's own gain and discount), so
        any share leaves the gradients as they are.
    max_step : float > 0 or None, default 16.0
        Bound on the Newton step, in units of 1/σ. The booster (:meth:`grad_hess`)
        receives the Hessian :math:`\max(h_i, \sigma |\lambda_i| / c)`, c =
        ``max_step``, so every leaf value :math:`-\sum \lambda / \sum h` (before the
        learning rate, and any L2 penalty only shrinks it) is at most c/σ in size. The
        gradient is unchanged and :meth:`exact_grad_hess` returns the true :math:`h_i`.
        ``None`` passes the true Hessian (LightGBM's native ``lambdarank`` has no such
        bound). Why 16: ``docs/evidence.md``.
    calibration : float in [0, 1], default 0
        Weight α of a pointwise term that makes :math:`\sigma(s)` a probability of
        relevance: the objective becomes :math:`(1 - \alpha) L_{rank} + \alpha
        \sum_i \ell(t_i, \sigma(s_i))`, ℓ the cross-entropy of
        :class:`~gbrank.objectives.CrossEntropy` (a ranking loss alone leaves the
        scores' offset and scale free). 0: the ranking loss alone.
    calibration_target : {"auto", "identity", "exponential", "linear", "binary"}
        How labels become targets in [0, 1] for that term (``CrossEntropy``'s
        ``target``): clicks and rates as they are, grades mapped (``max_grade`` is
        its :math:`g_{max}`).
    groupless : bool, default False
        Declare group-less ranking: all rows of the training data are one query (the
        whole data set ranked as one list, of any size). A booster's training data
        without query structure is refused unless this is set, so that query ids left
        out are never silently read as one query; set, data with several queries are
        refused. Plain calls (:meth:`grad_hess`, :meth:`loss` without ``group``/``qid``)
        are one list either way.

    Notes
    -----
    Query weights (one per query, or per row constant within each query) multiply a
    query's λ's and Hessians. LightGBM's native objective multiplies each row's own
    weight, which is the same thing for such weights; weights varying within a query
    are refused (``ValueError``).

    ERR's default :math:`g_{max}` is the largest label of the whole call, so the loss
    of one query depends on the others' labels; pass ``max_grade`` to fix it.
    :meth:`bind_data_defaults` does so from given labels (the gradient check uses it,
    since it evaluates one query at a time).

    σ changes nothing without ``norm``, L1/L2 penalties, ``max_delta_step`` or a
    binding ``max_step``: λ scales by σ and h by σ², so a Newton tree is the same tree
    on scores σ times smaller.

    Examples
    --------
    >>> import lightgbm as lgb
    >>> from gbrank.datasets import make_ranking
    >>> from gbrank.objectives import LambdaRank
    >>> X, y, group = make_ranking(n_queries=30, rows_per_query=20, n_features=5)
    >>> grad, hess = LambdaRank(metric="ndcg", truncation=10).grad_hess(y, X[:, 0], group)
    >>> grad.shape, bool((hess >= 0).all())
    ((600,), True)
    >>> booster = lgb.train({"objective": LambdaRank(), "verbose": -1},
    ...                     lgb.Dataset(X, y, group=group), num_boost_round=5)
    """

    task = "ranking"
    loss_blocks = "query"

    def __init__(self, metric: str = "ndcg", truncation: int = 30, sigma: float = 1.0,
                 label_gain: Any = None, max_grade: int | None = None, threshold: float = 1,
                 norm: bool = False, weighting: str = "lambdarank", mu: float = 1.0,
                 smoothing: float | None = None, max_step: float | None = 16.0,
                 calibration: float = 0.0, calibration_target: str = "auto",
                 position_bias: str | None = None, propensity: Any = None,
                 max_weight: float | None = MAX_WEIGHT, bias_norm: float = BIAS_NORM,
                 bias_cost: str = "paper", position_bias_regularization: float = REGULARIZATION,
                 position_bias_learning_rate: float | None = None, on_cascade: str = "raise",
                 groupless: bool = False) -> None:
        self.metric = metric
        self.truncation = truncation
        self.sigma = sigma
        self.label_gain = label_gain
        self.max_grade = max_grade
        self.threshold = threshold
        self.norm = norm
        self.weighting = weighting
        self.mu = mu
        self.smoothing = smoothing
        self.max_step = max_step
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

    # -- validation ---------------------------------------------------------------
    def _validate_params(self) -> SimpleNamespace:
        if isinstance(self.metric, str) and "@" in self.metric:
            name, _, cut = self.metric.partition("@")
            if name.strip().lower() in _METRIC_CODES and cut.strip().isdigit():
                raise ValueError(
                    f"metric={self.metric!r}: the cut-off k is the truncation parameter; "
                    f"use LambdaRank(metric={name.strip().lower()!r}, truncation="
                    f"{int(cut)})")
        gain = None if self.label_gain is None else check_label_gain(self.label_gain)
        p = SimpleNamespace(
            metric=check_choice(self.metric, "metric", tuple(_METRIC_CODES)),
            truncation=check_integer(self.truncation, "truncation", 1),
            sigma=check_sigma(self.sigma),
            label_gain=gain,
            max_grade=check_integer(self.max_grade, "max_grade", 0, MAX_EXACT_GRADE,
                                    allow_none=True),
            threshold=check_threshold(self.threshold),
            norm=check_bool(self.norm, "norm"),
            weighting=check_choice(self.weighting, "weighting", tuple(_WEIGHTINGS)),
            mu=check_number(self.mu, "mu", 0.0),
            smoothing=(_DEFAULT_SMOOTHING if self.smoothing is None
                       else check_number(self.smoothing, "smoothing", 0.0, 1.0)),
            max_step=check_max_step(self.max_step) or 0.0,
            calibration=check_number(self.calibration, "calibration", 0.0, 1.0),
            calibration_target=check_choice(self.calibration_target, "calibration_target",
                                            TARGET_MAPPINGS),
        )
        if p.weighting != "lambdarank" and p.metric != "ndcg":
            raise ValueError(f"weighting={p.weighting!r} is an NDCG weighting (LambdaLoss); "
                             f"it needs metric='ndcg', got metric={p.metric!r}")
        if isinstance(p.smoothing, dict):
            p.smoothing = p.smoothing[p.metric]
        self._shared_params(p)
        return p

    def _smoothing(self, p: SimpleNamespace, y: np.ndarray) -> float:
        """The share in effect for the (validated) labels ``y``: under NDCG none, the
        mixture (1 − α)|ΔNDCG| + α|ΔNDCG| being |ΔNDCG| itself; the default share of
        MAP and MRR needs NDCG's integer grades; with other labels (which MAP and MRR
        accept) ``smoothing=None`` means pure |ΔZ|, as documented."""
        if p.metric == "ndcg":
            return 0.0
        if self.smoothing is None and p.smoothing > 0.0 and not _integer_grades(y):
            return 0.0
        return p.smoothing

    def _prepare(self, y: Any, s: Any, group: Any, qid: Any, weight: Any):
        p = self._params()
        # An explicit smoothing share is NDCG's |Δ| with gain 2^l − 1: integer grades
        # (the default share falls back to 0 without them, see _smoothing).
        integer = p.metric in ("ndcg", "err") or (p.smoothing > 0.0
                                                  and self.smoothing is not None)
        reason = None
        if p.metric == "ndcg" and p.label_gain is not None:
            max_grade = p.label_gain.size - 1
            reason = (f"label_gain has only {p.label_gain.size} entries "
                      f"(grades 0..{max_grade})")
        elif p.metric == "err" and p.max_grade is not None:
            max_grade = p.max_grade
            reason = f"it exceeds max_grade={max_grade}"
        elif integer:
            max_grade = MAX_EXACT_GRADE
        else:
            max_grade = None
        return prepare_ranking(y, s, group, qid, weight, integer_grades=integer,
                               max_grade=max_grade, max_grade_reason=reason)

    def _gain_table(self, p: SimpleNamespace, y: np.ndarray) -> np.ndarray:
        top = int(y.max())
        if p.metric == "ndcg":
            if p.label_gain is not None:
                return p.label_gain
            return np.exp2(np.arange(top + 1, dtype=np.float64)) - 1.0
        if p.metric == "err":
            gmax = top if p.max_grade is None else p.max_grade
            return (np.exp2(np.arange(top + 1, dtype=np.float64)) - 1.0) / 2.0**gmax
        return _EMPTY

    def _args(self, y: np.ndarray) -> tuple:
        p = self._params()
        return (_METRIC_CODES[p.metric], p.truncation, p.sigma, self._gain_table(p, y),
                p.threshold, p.norm, p.norm and p.metric == "ndcg",
                _WEIGHTINGS[p.weighting], p.mu, self._smoothing(p, y))

    # -- protocol -------------------------------------------------------------------
    def _pair_options(self, p: SimpleNamespace, y: np.ndarray) -> tuple:
        """The pair weight arguments of :func:`gbrank._kernels.position_bias.pair_grad_hess`
        (position-bias options)."""
        (metric, k, sigma, gain, threshold, norm, lgb_discount, scheme, mu,
         smooth) = self._args(y)
        if scheme != _k.LAMBDARANK:
            mix = _pk.LAMBDALOSS
        elif smooth > 0.0:
            mix = _pk.MIXED
        else:
            mix = _pk.PLAIN
        ngain = _EMPTY
        if mix == _pk.MIXED and metric != NDCG:
            ngain = np.exp2(np.arange(int(y.max()) + 1, dtype=np.float64)) - 1.0
        return (metric, mix, k, sigma, gain, ngain, threshold, norm, lgb_discount, scheme,
                mu, smooth)

    def _plain_grad_hess(self, y: Any, s: Any, group: Any, qid: Any, weight: Any,
                         max_step: float) -> tuple[np.ndarray, np.ndarray]:
        y, s, queries = self._prepare(y, s, group, qid, weight)
        qw = _EMPTY if queries.weights is None else queries.weights
        grad, hess = _k.lambdarank_grad_hess(y, s, queries.offsets, qw, *self._args(y),
                                             max_step, out=self._output_buffers(y.size))
        # With rows permuted into query order, y and s are dead copies: reuse them.
        return queries.restore(grad, into=s), queries.restore(hess, into=y)

    def grad_hess(self, y: Any, s: Any, group: Any = None, *, qid: Any = None,
                  weight: Any = None, position: Any = None, estimates: Any = None,
                  ) -> tuple[np.ndarray, np.ndarray]:
        r"""λ-gradients and the booster's diagonal Hessians at ``s``:
        :math:`\max(h_i, \sigma |\lambda_i| / c)`, c = ``max_step`` (the true
        :math:`h_i` when ``max_step=None``; see the class docstring). With
        ``position_bias``, ``position`` gives every row's display position and
        ``estimates`` (a :class:`PositionBias`, e.g. a training's ``position_bias_``)
        are used as they stand, the start values without them (never updated here)."""
        mix = self._calibrated()
        if mix is not None:
            return mix.grad_hess(y, s, group, qid=qid, weight=weight)
        p = self._params()
        if p.pb.method is not None:
            return self._factored(p, y, s, group, qid, weight, position, p.max_step,
                                  estimates)
        return self._plain_grad_hess(y, s, group, qid, weight, p.max_step)

    def exact_grad_hess(self, y: Any, s: Any, group: Any = None, *, qid: Any = None,
                        weight: Any = None, position: Any = None,
                        estimates: Any = None) -> tuple[np.ndarray, np.ndarray]:
        """λ-gradients and the true diagonal Hessians of the local loss (no
        ``max_step`` bound): what the gradient check compares."""
        mix = self._calibrated()
        if mix is not None:
            return mix.exact_grad_hess(y, s, group, qid=qid, weight=weight)
        p = self._params()
        if p.pb.method is not None:
            return self._factored(p, y, s, group, qid, weight, position, 0.0, estimates)
        return self._plain_grad_hess(y, s, group, qid, weight, 0.0)

    def loss(self, y: Any, s: Any, group: Any = None, *, qid: Any = None, weight: Any = None,
             at: Any = None, position: Any = None, estimates: Any = None) -> float:
        """Local loss: ranking, |ΔZ| (and norm's rescalings) frozen at ``at`` (default
        ``s``), pair terms log(1 + exp(−σ(s_i − s_j))) at ``s``; with
        ``position_bias``, each pair's term times its factor (or the scores shifted by
        the offsets), the estimates frozen."""
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
        y2, s2, queries = self._prepare(y, s, group, qid, weight)
        if at is None:
            at2 = s2
        else:
            _, at2, _ = self._prepare(y, at, group, qid, None)
        qw = _EMPTY if queries.weights is None else queries.weights
        return float(_k.lambdarank_loss(y2, s2, at2, queries.offsets, qw, *self._args(y2)))

    def bind_data_defaults(self, y: Any) -> LambdaRank:
        """A copy with ERR's ``g_max`` fixed at the largest label of ``y`` (``self`` for
        other metrics or when ``max_grade`` is set); calibrated, the
        :class:`~gbrank.objectives.Combination` it stands for, bound."""
        mix = self._calibrated()
        if mix is not None:
            return mix.bind_data_defaults(y)
        p = self._params()
        if p.metric != "err" or p.max_grade is not None:
            return self
        top = float(np.max(as_float_array(y, "labels")))
        if not np.isfinite(top):
            return self  # validation of the call itself names the problem
        return type(self)(**{**self.get_params(deep=False), "max_grade": int(top)})
