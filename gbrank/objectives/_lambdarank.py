"""LambdaRank (Burges 2010; seed 003): RankNet pairs weighted by |ΔZ| of an IR metric."""

from __future__ import annotations

from types import SimpleNamespace
from typing import Any

import numpy as np

from gbrank._kernels import lambdarank as _k
from gbrank._kernels.delta import ERR, MAP, MRR, NDCG
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
    prepare_ranking,
)
from gbrank.objectives._base import Objective
from gbrank.objectives._combination import CalibrationMixin
from gbrank.objectives._cross_entropy import CALIBRATION_TARGETS

__all__ = ["LambdaRank"]

_EMPTY = np.empty(0, dtype=np.float64)
_METRICS = {"ndcg": NDCG, "err": ERR, "map": MAP, "mrr": MRR}
_WEIGHTINGS = {"lambdarank": _k.LAMBDARANK, "ndcg_loss1": _k.LOSS1, "ndcg_loss2": _k.LOSS2,
               "ndcg_loss2pp": _k.LOSS2PP}
# smoothing=None: the share of |ΔNDCG| each metric gets by default (issue 10; see the
# class docstring for the measurements behind these numbers).
_DEFAULT_SMOOTHING = {"ndcg": 0.0, "err": 0.9, "map": 0.75, "mrr": 0.75}


def _integer_grades(y: np.ndarray) -> bool:
    return bool(np.all(y == np.floor(y))) and (y.size == 0 or float(y.max()) <= MAX_EXACT_GRADE)


class LambdaRank(CalibrationMixin, Objective):
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

    Metrics Z (SPEC definitions, all @k with k = ``truncation``):

    - ``"ndcg"``: gain :math:`2^l - 1` or ``label_gain[l]``, discount
      :math:`1/\log_2(1 + r)` for r ≤ k and 0 beyond,
      :math:`|\Delta| = |g_i - g_j|\,|D(r_i) - D(r_j)| / \mathrm{IDCG@k}`.
    - ``"err"``: :math:`R(l) = (2^l - 1)/2^{g_{max}}`, ``g_max = max_grade`` or the
      largest label given; |ΔERR| in O(1) per pair from prefix products of (1 − R)
      and prefix sums of :math:`R_r \prod_{i<r}(1 - R_i)/r`.
    - ``"map"``: relevant ⇔ label ≥ ``threshold``; |ΔAP@k| in O(1) from prefix hit
      counts and prefix sums of 1/r over relevant ranks.
    - ``"mrr"``: |ΔRR@k| from the first and second relevant ranks.

    Cost per query: O(n·k) pairs, no approximation at any size. Queries of up to 512
    rows are sorted; a longer one is not: below rank k each formula reads only the
    row's own label (its discount is 0, the ERR/MAP prefix terms are those of the first
    k ranks), so an O(n) selection of the top k suffices, and the extra memory is the
    two outputs (10^7 rows in one query: 2.2 n-row arrays at peak, 0.2 s on 2 cores).
    ``norm=True`` with NDCG (LightGBM's untruncated discount), the LambdaLoss
    weightings and a ``truncation`` above 64 read every row's rank: a long NDCG query
    is then ordered by an int32 radix sort and its pairs taken in blocks of positions
    (10^7 rows: 2.5 n-row arrays at peak, 2.5 s on 2 cores, most of it the sort). ERR,
    MAP and MRR with a ``truncation`` above 64 keep NumPy's full sort (about 8 n-row
    arrays for a long query).

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
        sigmoid lookup table are not reproduced (differences ~1e-6 relative).
    weighting : {"lambdarank", "ndcg_loss1", "ndcg_loss2", "ndcg_loss2pp"}, default "lambdarank"
        The pair weight :math:`w_{ij}` (Wang et al., CIKM 2018, "The LambdaLoss
        Framework"; SPEC). With ranks r from the current scores,
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
        μ ≥ 0 of ``"ndcg_loss2pp"``; unused otherwise. allRank's default is 10; held
        out, μ = 10 lost to LightGBM's native ``lambdarank`` on NDCG@10 on three of
        four data sets and μ = 1 beat it on all four (see Notes).
    smoothing : float in [0, 1], optional
        Share α of NDCG's signal mixed into Z's:
        :math:`w_{ij} = (1 - \alpha)|\Delta Z_{ij}| + \alpha |\Delta
        \mathrm{NDCG}_{ij}|` (NDCG gain :math:`2^l - 1`, so it needs integer grades).
        It keeps a dense signal on every pair where |ΔZ| is sparse or saturated
        (MRR, ERR with many relevant rows). ``None`` (default): the metric's share,
        0 for NDCG, 0.9 for ERR, 0.75 for MAP and MRR (held-out evidence in Notes);
        for MAP and MRR with labels that are not integer grades (which they accept)
        ``None`` means 0. 0 is pure |ΔZ| (the SPEC objective); 1 is
        ``LambdaRank("ndcg")``.
    max_step : float > 0 or None, default 16.0
        Bound on the Newton step, in units of 1/σ. The booster (:meth:`grad_hess`)
        receives the Hessian :math:`\max(h_i, \sigma |\lambda_i| / c)`, c =
        ``max_step``, so every leaf value :math:`-\sum \lambda / \sum h` (before the
        learning rate, and any L2 penalty only shrinks it) is at most c/σ in size. The
        gradient is unchanged and :meth:`exact_grad_hess` returns the true :math:`h_i`.
        ``None`` passes the true Hessian (the SPEC objective as it stands; LightGBM's
        native ``lambdarank`` has no such bound). See Notes, "Why max_step".

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

    **Why max_step** (measured in ``tests/test_lambdarank_stability.py`` and
    ``experiments/results/demand_levels.md``). A pair (hi, lo) has
    :math:`|\lambda| / h = 1/(\sigma(1 - \rho))`: 1/σ to 2/σ while it is ordered, but
    :math:`\approx e^{\sigma (s_{lo} - s_{hi})}/\sigma` once inverted, where the pair
    loss is linear and its curvature vanishes. With truncation k a row ranked below k
    only pairs with the top k. Group-less (one query of 4,000 rows, five grades of 800,
    k = 30) the top 30 are all grade 4 after a few rounds, so the other 770 grade-4 rows
    have no pair at all (λ = h = 0). When one grade-3 row climbs into the top 30 they
    all become the higher side of an inverted pair some 4.7 below it:
    λ = −0.012, h = 1e-4 each, a Newton step of 110 per row; LightGBM groups ~20 of
    them in a leaf whose Hessian sum (0.005) passes ``min_sum_hessian_in_leaf``
    (1e-3): a Newton value of 41, 7.0 after the learning rate 0.17. The next round those rows are
    inverted against the whole top by tens, h falls to 1e-9, leaf values reach 500, and
    the training scores spread 4.8 → 2,971 → 35,624 (rounds 10/20/30; held-out pair
    accuracy 0.429 instead of ~0.79). With the bound (c = 16) the same fit keeps a
    spread of 21 and reaches 0.817 (LightGBM's native ``lambdarank``: 0.796). On the
    49 fits of that task that do not diverge (two data seeds × 5 folds × 5 training
    sizes) the mean pair accuracy per size moved by at most 0.002, and NDCG@10 on
    LightGBM's ``rank.train`` → ``rank.test`` was identical (0.7404 / 0.7350 at
    learning rates 0.1 / 0.3). Smaller c (2–8) alters healthy fits, either way, by up
    to 0.024 NDCG@10. ``norm=True`` (and LightGBM's native objective, which it
    reproduces) did not diverge on those fits either, even with
    ``min_sum_hessian_in_leaf=1e-6``: the largest per-row |λ|/h it produced was 26
    (exact λ's: above 10^7 in the diverging fit). A likely reason, not a guarantee:
    its 1/(0.01 + |Δs|) weighting favours near-tied pairs, whose ratio is about 2/σ,
    and :math:`\log_2(1 + S)/S` shrinks the steps; nothing bounds them.
    ``min_sum_hessian_in_leaf=1`` also rescued the diverging fit (0.807), but a
    Hessian-sum threshold depends on the scale of |ΔZ| and of the data; the bound does
    not.

    **Why a sparse metric loses on itself** (measured in
    ``experiments/results/ranking_quality.md``, "Why ERR and MRR lose"). The λ's
    follow |ΔZ|, and for MRR and ERR |ΔZ| is concentrated on very few pairs:

    - MRR: only pairs that move the first relevant row change RR, 2.5% of the top-30
      pairs on the MSLR-like set after 50 rounds (5% on LightGBM's example data; NDCG:
      every pair), and a query's Σ|λ| falls 34-fold in 50 rounds (38 → 1.1) once a
      relevant row is on top. Later trees are fitted to about one row per query; the
      rest of the ranking drifts, and held-out MRR itself ends below NDCG's.
    - ERR: the cascade saturates when a query has many relevant rows. On the
      MSLR-like set (50 relevant rows of 100) :math:`\prod (1 - R)` over the top 3 is
      0.06 after 50 rounds, 90% of Σ|ΔERR| sits on 5.5% of the pairs (NDCG: 50%) and
      half of the λ mass on the three top rows.
    - MAP at threshold 1: a query whose rows are all relevant has AP = 1 whatever the
      order and gives no signal: 27% of the queries of LightGBM's example data.

    **Defaults, and what to use instead** (held out: LightGBM, 5-fold CV × 3 seeds
    on LightGBM's example data, an MSLR-like set, a set with 1–5 relevant rows per
    query and a group-less task; the shares were chosen on two other seeds). Pure
    |ΔZ| (``smoothing=0``) had a lower mean Z@10 than ``LambdaRank("ndcg")`` in 11 of
    those 12 (metric, data) cells (MRR by up to 0.08, ERR by up to 0.23 on the
    group-less task). With the default shares, judged by "mean paired difference
    ≥ 0 and ≥ 3 of 5 folds", ``LambdaRank(z)`` wins or ties LightGBM's native
    ``lambdarank`` in 10 of 12 cells and ``LambdaRank("ndcg")`` in 6:

    - MAP@10: ``LambdaRank("map")`` wins or ties both on three sets; on the
      few-relevant set it is 0.0006 below ``"ndcg"`` (within noise).
    - MRR@10: ``LambdaRank("mrr")`` wins or ties both on the few-relevant and
      group-less sets and ``"ndcg"`` on LightGBM's example data (native: +0.0007 in
      the mean, 2 of 5 folds). On the MSLR-like set every objective but pure |ΔMRR|
      scores 0.989–0.996: MRR is saturated there, nothing separates them.
    - ERR@10: **not won against** ``LambdaRank("ndcg")`` on any set (−0.0003 to
      −0.031; native is beaten on three). |ΔERR| concentrates on the first relevant
      rows of the cascade, so any share of it replaces part of NDCG's denser signal
      by one that generalises worse. For ERR@10 use ``LambdaRank("ndcg")``, or
      ``RankNet()`` when queries have many relevant rows (best ERR@10 on the
      MSLR-like and group-less sets).
    - With many relevant rows per query (MSLR-like, group-less) ``RankNet()`` was the
      best objective on NDCG@10 and ERR@10 of both.

    Of the LambdaLoss weightings, ``"ndcg_loss2"`` alone loses to plain ``"ndcg"`` and
    to native ``lambdarank`` on every set (its weight ignores where a pair sits);
    ``"ndcg_loss2pp"`` with allRank's μ = 10 loses to native ``lambdarank`` on NDCG@10
    on three of the four sets; with the default μ = 1 it beats it on all four
    (+0.0013 to +0.027 NDCG@10, 4 of 5 folds each) and ``"ndcg"`` on two:
    ``LambdaRank(weighting="ndcg_loss2pp")`` is the NDCG objective to try first on
    grouped data. ``norm=True`` gives no consistent gain for ERR, MAP or MRR. σ
    changes nothing without ``norm``, L1/L2 penalties, ``max_delta_step`` or a binding
    ``max_step``: λ scales by σ and h by σ², so a Newton tree is the same tree on
    scores σ times smaller.
    """

    task = "ranking"
    loss_blocks = "query"

    def __init__(self, metric: str = "ndcg", truncation: int = 30, sigma: float = 1.0,
                 label_gain: Any = None, max_grade: int | None = None, threshold: float = 1,
                 norm: bool = False, weighting: str = "lambdarank", mu: float = 1.0,
                 smoothing: float | None = None, max_step: float | None = 16.0,
                 calibration: float = 0.0, calibration_target: str = "auto") -> None:
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

    # -- validation ---------------------------------------------------------------
    def _validate_params(self) -> SimpleNamespace:
        gain = None if self.label_gain is None else check_label_gain(self.label_gain)
        p = SimpleNamespace(
            metric=check_choice(self.metric, "metric", tuple(_METRICS)),
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
                                            CALIBRATION_TARGETS),
        )
        if p.weighting != "lambdarank" and p.metric != "ndcg":
            raise ValueError(f"weighting={p.weighting!r} is an NDCG weighting (LambdaLoss); "
                             f"it needs metric='ndcg', got metric={p.metric!r}")
        if isinstance(p.smoothing, dict):
            p.smoothing = p.smoothing[p.metric]
        return p

    def _smoothing(self, p: SimpleNamespace, y: np.ndarray) -> float:
        """The share in effect for the (validated) labels ``y``: the default share of
        MAP and MRR needs NDCG's integer grades; with other labels (which MAP and MRR
        accept) ``smoothing=None`` means pure |ΔZ|, as documented."""
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
        return (_METRICS[p.metric], p.truncation, p.sigma, self._gain_table(p, y),
                p.threshold, p.norm, p.norm and p.metric == "ndcg",
                _WEIGHTINGS[p.weighting], p.mu, self._smoothing(p, y))

    # -- protocol -------------------------------------------------------------------
    def _grad_hess(self, y: Any, s: Any, group: Any, qid: Any, weight: Any,
                   max_step: float) -> tuple[np.ndarray, np.ndarray]:
        y, s, queries = self._prepare(y, s, group, qid, weight)
        qw = _EMPTY if queries.weights is None else queries.weights
        grad, hess = _k.lambdarank_grad_hess(y, s, queries.offsets, qw, *self._args(y),
                                             max_step, out=self._output_buffers(y.size))
        # With rows permuted into query order, y and s are dead copies: reuse them.
        return queries.restore(grad, into=s), queries.restore(hess, into=y)

    def grad_hess(self, y: Any, s: Any, group: Any = None, *, qid: Any = None,
                  weight: Any = None) -> tuple[np.ndarray, np.ndarray]:
        r"""λ-gradients and the booster's diagonal Hessians at ``s``:
        :math:`\max(h_i, \sigma |\lambda_i| / c)`, c = ``max_step`` (the true
        :math:`h_i` when ``max_step=None``; see the class docstring)."""
        mix = self._calibrated()
        if mix is not None:
            return mix.grad_hess(y, s, group, qid=qid, weight=weight)
        return self._grad_hess(y, s, group, qid, weight, self._params().max_step)

    def exact_grad_hess(self, y: Any, s: Any, group: Any = None, *, qid: Any = None,
                        weight: Any = None) -> tuple[np.ndarray, np.ndarray]:
        """λ-gradients and the true diagonal Hessians of the local loss (no
        ``max_step`` bound): what the gradient check compares."""
        mix = self._calibrated()
        if mix is not None:
            return mix.exact_grad_hess(y, s, group, qid=qid, weight=weight)
        return self._grad_hess(y, s, group, qid, weight, 0.0)

    def loss(self, y: Any, s: Any, group: Any = None, *, qid: Any = None, weight: Any = None,
             at: Any = None) -> float:
        """Local loss: ranking, |ΔZ| (and norm's rescalings) frozen at ``at`` (default
        ``s``), pair terms log(1 + exp(−σ(s_i − s_j))) at ``s``."""
        mix = self._calibrated()
        if mix is not None:
            return mix.loss(y, s, group, qid=qid, weight=weight, at=at)
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
