"""Search spaces: each objective's own parameters (the booster's: ``_booster_spaces``),
and the candidates (gbrank objectives and the boosters' native objectives) a study can
tune.

One table per family; a parameter is offered only if the objective has it
(``get_params()``), so options added to an objective later appear by adding a row here.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from gbrank.objectives import REGISTRY
from gbrank.tuning._booster_spaces import _SKIP, BOOSTER_FIXED, Param, booster_space

__all__ = ["Candidate", "OBJECTIVE_SPACES", "NATIVE", "TUNED_KEYS", "candidate",
           "candidates_for", "click_candidates", "family_of", "kinds_of", "known_keys"]


def _penalty(p: dict) -> float:
    l1 = float(p.get("lambda_l1", p.get("reg_alpha", 0.0)))
    l2 = float(p.get("lambda_l2", p.get("reg_lambda", 0.0)))
    return max(l1, l2)


# σ only rescales the scores when leaf values are plain Newton steps ("sigma
# alone changes nothing"); it matters once an L1/L2 penalty is not negligible (the
# penalty does not rescale with the gradients) or LambdaRank's norm=True rescales the
# λ's, or a calibration term (σ scales the ranking part, not the pointwise one) joins it.
# Search it only then.
def _sigma_matters(p: dict) -> bool:
    return _penalty(p) >= 1e-2 or bool(p.get("norm")) or _calibrated(p)


def _calibrated(p: dict) -> bool:
    return (p.get("_calibration") or 0.0) > 0.0


def _clicks(p: dict) -> bool:
    return bool(p.get("_clicks"))


def _corrects(p: dict) -> bool:
    """A study that searches a position-bias correction: on a click log, not calibrated,
    its users not cascade-like."""
    return _clicks(p) and not _calibrated(p) and not p.get("_cascade", False)


# The calibration weight α of a calibrated ranker (one given with calibration > 0) is
# searched on a log scale over (0, 1]; an uncalibrated one stays uncalibrated. Judged on
# one metric, α drifts towards an end of the trade-off (a ranking metric favours small α,
# log loss α = 1), so the metric chosen decides what "best" means.
_CALIBRATION = Param("calibration", "float", 0.01, 1.0, log=True, when=_calibrated)


# On a click log (a task with positions, and so with propensities: it is judged by
# ips_dcg@10), the position-bias correction and its parameters are searched: none, ipw
# with the task's propensities, Unbiased LambdaMART (its exponent r and the cost of its
# estimates) or LightGBM's additive offsets (their L2 penalty). Never on other tasks.
# A log that cannot identify position effects (no document of a query shown at two
# positions) searches none and ipw only: the learned corrections' estimates would follow
# the logger there (docs/evidence.md, "Click corrections"). A log of cascade-like users
# searches none: every correction refuses it by default (``on_cascade``).
_POSITION_BIAS = [
    Param("position_bias", "cat", choices=(None, "ipw", "unbiased", "additive"),
          when=lambda p: _corrects(p) and p.get("_identifiable", True)),
    Param("position_bias", "cat", choices=(None, "ipw"),
          when=lambda p: _corrects(p) and not p.get("_identifiable", True)),
    Param("bias_norm", "float", 0.0, 2.0, when=lambda p: p.get("position_bias") == "unbiased"),
    Param("bias_cost", "cat", choices=("paper", "xgboost"),
          when=lambda p: p.get("position_bias") == "unbiased"),
    Param("position_bias_regularization", "float", 1e-3, 10.0, log=True,
          when=lambda p: p.get("position_bias") == "additive"),
]

OBJECTIVE_SPACES: dict[str, list[Param]] = {
    "ranknet": [
        # On a click log ties stay "skip": ipw and unbiased weigh clicked-unclicked pairs
        # only, and pairs of equal labels (two unclicked rows) say nothing there.
        Param("ties", "cat", choices=("skip", "pull"), when=lambda p: not _clicks(p)),
        Param("sigma", "float", 0.25, 4.0, log=True, when=_sigma_matters),
        _CALIBRATION,
        *_POSITION_BIAS,
    ],
    "lambdarank": [
        Param("truncation", "int", 10, 60, log=True),
        Param("norm", "cat", choices=(False, True)),
        Param("sigma", "float", 0.25, 4.0, log=True, when=_sigma_matters),
        # LambdaLoss weightings (NDCG only) and the smoothing share. NDCG-Loss2 alone
        # lost on every data set of experiments/results/ranking_quality.md, so it is
        # not offered; mu's range spans the values compared there (docs/evidence.md).
        Param("weighting", "cat", choices=("lambdarank", "ndcg_loss1", "ndcg_loss2pp"),
              when=lambda p: p.get("_metric") == "ndcg"),
        Param("mu", "float", 0.3, 10.0, log=True,
              when=lambda p: p.get("weighting") == "ndcg_loss2pp"),
        # With metric "ndcg" the smoothing mixes |ΔNDCG| with itself: nothing to search.
        # The defaults (smoothing=None) are 0.9 (ERR), 0.75 (MAP, MRR), chosen on held-out
        # folds (ranking_quality.md); the whole [0, 1] stays open, 0 being pure |ΔZ|.
        Param("smoothing", "float", 0.0, 1.0, when=lambda p: p.get("_metric") != "ndcg"),
        _CALIBRATION,
        *_POSITION_BIAS,
    ],
    "focal": [
        Param("gamma", "float", 0.0, 5.0),
        Param("alpha", "cat", choices=(None, 0.25, 0.5, 0.75)),
        Param("hess_floor", "float", 1e-6, 1e-2, log=True),
    ],
    # Softmax focal loss (FocalLoss(num_class=K)): class weights none or scikit-learn's
    # "balanced" n / (K n_c); the bound on a leaf value (docs/max_step.md) around its
    # default 16.
    "focal_multiclass": [
        Param("gamma", "float", 0.0, 5.0),
        Param("alpha", "cat", choices=(None, "balanced")),
        Param("max_step", "float", 1.0, 64.0, log=True),
    ],
    "fbeta_surrogate": [
        Param("beta", "float", 0.5, 2.0, log=True),
        # The constant Hessian is the inverse step size (default 4 with random examples,
        # 1 with one example); random structured examples of about batch_size rows per
        # round (default 75; None: one example per query, the plain surrogate,
        # which separated the training set and stopped learning on imbalanced data).
        Param("hess", "float", 0.5, 16.0, log=True),
        Param("batch_size", "cat", choices=(None, 15, 30, 75, 150, 300)),
    ],
}

# The objective registry's names the tuner has a search space for; each is judged by the
# metric it exists for (REGISTRY[key].target).
TUNED_KEYS = ("ranknet", "lambdarank:ndcg", "lambdarank:err", "lambdarank:map",
              "lambdarank:mrr", "focal", "fbeta_surrogate")


@dataclass(frozen=True)
class NativeSpec:
    objective: str
    kind: str
    target: str
    space: tuple[Param, ...] = ()
    fixed: dict = field(default_factory=dict)


NATIVE: dict[str, dict[str, NativeSpec]] = {
    "lightgbm": {
        "lambdarank": NativeSpec("lambdarank", "ranking", "ndcg@10", (
            Param("lambdarank_truncation_level", "int", 10, 60, log=True),
            Param("lambdarank_norm", "cat", choices=(True, False)))),
        "rank_xendcg": NativeSpec("rank_xendcg", "ranking", "ndcg@10"),
        "binary": NativeSpec("binary", "binary", "ap", (
            Param("scale_pos_weight_on", "cat", choices=(False, True)),)),
        # Softmax; "balanced" class weights (n / (K n_c)) as row weights of the training
        # rows, or none.
        "multiclass": NativeSpec("multiclass", "multiclass", "macro_f1", (
            Param("class_weight_on", "cat", choices=(False, True)),)),
    },
    "xgboost": {
        # XGBoost's pair construction: neither method won on both data sets of
        # experiments/results/ranking_quality.md (docs/evidence.md), so it is searched,
        # not fixed.
        "rank:ndcg": NativeSpec("rank:ndcg", "ranking", "ndcg@10", (
            Param("lambdarank_pair_method", "cat", choices=("topk", "mean")),
            Param("lambdarank_num_pair_per_sample", "int", 1, 32, log=True))),
        "rank:pairwise": NativeSpec("rank:pairwise", "ranking", "pair_accuracy"),
        "binary:logistic": NativeSpec("binary:logistic", "binary", "ap", (
            Param("scale_pos_weight_on", "cat", choices=(False, True)),)),
        "multi:softprob": NativeSpec("multi:softprob", "multiclass", "macro_f1", (
            Param("class_weight_on", "cat", choices=(False, True)),)),
    },
}


# The boosters' own objectives that learn from a click log's positions: LightGBM's
# lambdarank with the training Dataset's positions (its additive position-bias model;
# rank_xendcg would ignore them) and XGBoost's Unbiased LambdaMART (rank:ndcg with
# lambdarank_unbiased, which reads a row's position as its place within its query;
# rank:pairwise would ignore them).
NATIVE_CLICKS: dict[str, dict[str, NativeSpec]] = {
    "lightgbm": {
        "lambdarank": NativeSpec("lambdarank", "ranking", "ips_dcg@10", (
            *NATIVE["lightgbm"]["lambdarank"].space,
            Param("lambdarank_position_bias_regularization", "float", 1e-3, 10.0,
                  log=True))),
    },
    "xgboost": {
        "rank:ndcg": NativeSpec("rank:ndcg", "ranking", "ips_dcg@10", (
            *NATIVE["xgboost"]["rank:ndcg"].space,
            Param("lambdarank_bias_norm", "float", 0.0, 2.0)),
            fixed={"lambdarank_unbiased": True}),
    },
}


@dataclass
class Candidate:
    """One study's subject: a gbrank objective (``base`` instance, tuned from its own
    parameters) or a native booster objective (``native``), judged on ``target`` (the
    metric it is tuned, early-stopped and compared on); ``own_target`` is the metric
    the objective exists for (``target`` unless a run asks for another); ``num_class``
    is K for a multiclass candidate (the booster trains K scores per row).
    ``propensity`` (a click log's, see :class:`~gbrank.tuning._tasks.Task`): a gbrank
    RankNet or LambdaRank study then also searches ``position_bias`` and its parameters,
    ``"ipw"`` with these propensities; ``identifiable=False`` (a log that cannot
    identify position effects) leaves the learned corrections out of that search;
    ``cascade_like=True`` (its users stop after a click) leaves every correction out.
    ``groupless``: the candidate of a group-less ranking task (one list), which keeps
    the previous booster space (see :func:`booster_space`)."""

    key: str
    kind: str
    target: str
    base: Any = None
    native: NativeSpec | None = None
    own_target: str = ""
    num_class: int | None = None
    propensity: Any = None
    groupless: bool = False
    identifiable: bool = True
    cascade_like: bool = False

    def __post_init__(self) -> None:
        self.own_target = self.own_target or self.target

    @property
    def is_native(self) -> bool:
        return self.native is not None

    @property
    def family(self) -> str:
        return "native" if self.is_native else family_of(self.base)


def family_of(obj: Any) -> str:
    """The search-space family of a gbrank objective instance (by class, so subclasses
    share their parent's space; a ``FocalLoss`` with ``num_class`` set is
    ``"focal_multiclass"``)."""
    from gbrank.objectives import FBetaSurrogate, FocalLoss, LambdaRank, RankNet

    if isinstance(obj, FocalLoss) and obj.num_class is not None:
        return "focal_multiclass"
    for cls, fam in ((LambdaRank, "lambdarank"), (RankNet, "ranknet"), (FocalLoss, "focal"),
                     (FBetaSurrogate, "fbeta_surrogate")):
        if isinstance(obj, cls):
            return fam
    raise ValueError(f"objective {obj!r} is not a gbrank objective; the tuner knows "
                     "RankNet, LambdaRank, FocalLoss and FBetaSurrogate (and subclasses)")


def known_keys(booster: str) -> list[str]:
    """Every key ``--objectives`` accepts for this booster."""
    return [*TUNED_KEYS, *(f"native:{k}" for k in NATIVE[booster])]


# The gbrank objectives that also train K classes (their multiclass form is built with
# the task's K), each judged on macro-F1 there.
MULTICLASS_KEYS = ("focal",)


def kinds_of(key: str, booster: str = "lightgbm") -> set[str]:
    """The task kinds candidate ``key`` can be tuned on."""
    kinds = {candidate(key, booster).kind}
    return kinds | {"multiclass"} if key in MULTICLASS_KEYS else kinds


def candidate(key: str, booster: str = "lightgbm", obj: Any = None, *,
              num_class: int | None = None) -> Candidate:
    """The candidate named ``key`` (``"lambdarank:err"``, ``"focal"``,
    ``"native:lambdarank"``), or a custom instance ``obj`` under the name ``key``;
    ``num_class=K`` (K > 2) makes the multiclass candidate (``"focal"``:
    ``FocalLoss(num_class=K)``; a native softmax objective)."""
    import gbrank

    if obj is not None:
        fam = family_of(obj)
        kind = obj.task
        default = {"ranking": "ndcg@10", "multiclass": "macro_f1"}.get(kind, "ap")
        name = fam if fam != "lambdarank" else f"lambdarank:{obj.metric}"
        target = (REGISTRY[name].target if name in TUNED_KEYS and kind != "multiclass"
                  else default)
        return Candidate(key, kind, target, base=obj,
                         num_class=getattr(obj, "num_class", None))
    if num_class is not None and key in MULTICLASS_KEYS:
        from gbrank.objectives import FocalLoss

        return Candidate(key, "multiclass", "macro_f1", base=FocalLoss(num_class=num_class),
                         num_class=num_class)
    if key.startswith("native:"):
        name = key.split(":", 1)[1]
        if name not in NATIVE[booster]:
            raise ValueError(f"unknown objective {key!r} for {booster}; valid: "
                             + ", ".join(known_keys(booster)))
        spec = NATIVE[booster][name]
        return Candidate(key, spec.kind, spec.target, native=spec,
                         num_class=num_class if spec.kind == "multiclass" else None)
    if key not in TUNED_KEYS:
        raise ValueError(f"unknown objective {key!r}; valid: " + ", ".join(known_keys(booster)))
    base = gbrank.get_objective(key)
    return Candidate(key, REGISTRY[key].task, REGISTRY[key].target, base=base)


DEFAULT_OBJECTIVES = {
    "ranking": ["ranknet", "lambdarank:ndcg", "lambdarank:err", "lambdarank:map",
                "lambdarank:mrr"],
    "demand_levels": ["ranknet", "lambdarank:ndcg"],
    "binary": ["focal", "fbeta_surrogate"],
    "multiclass": ["focal"],
}
QUICK_OBJECTIVES = {
    "ranking": ["ranknet", "lambdarank:ndcg"],
    "demand_levels": ["ranknet"],
    "binary": ["focal"],
    "multiclass": ["focal"],
}
DEFAULT_NATIVES = {
    "lightgbm": {"ranking": ["lambdarank", "rank_xendcg"], "binary": ["binary"],
                 "multiclass": ["multiclass"]},
    "xgboost": {"ranking": ["rank:ndcg", "rank:pairwise"], "binary": ["binary:logistic"],
                "multiclass": ["multi:softprob"]},
}


CLICK_OBJECTIVES = ["ranknet", "lambdarank:ndcg"]
QUICK_CLICK_OBJECTIVES = ["lambdarank:ndcg"]


def click_candidates(booster: str, propensity: Any, keys: list[str] | None = None,
                     custom: dict[str, Any] | None = None, quick: bool = False,
                     metric: str = "ips_dcg@10") -> list[Candidate]:
    """The candidates of a click log (a ranking task with positions and propensities),
    all judged on ``metric`` (a click metric): gbrank's RankNet and LambdaRank studies,
    which also search the position-bias correction, then the booster's own objectives
    that learn from positions (:data:`NATIVE_CLICKS`). An objective that would ignore
    the positions is refused (a ValueError naming the ones that do not).

    Examples
    --------
    >>> from gbrank.tuning._spaces import click_candidates
    >>> [(c.key, c.target) for c in click_candidates("lightgbm", [1.0, 0.5])]
    ... # doctest: +NORMALIZE_WHITESPACE
    [('ranknet', 'ips_dcg@10'), ('lambdarank:ndcg', 'ips_dcg@10'),
     ('native:lambdarank', 'ips_dcg@10')]
    """
    from dataclasses import replace

    if keys is None:
        keys = QUICK_CLICK_OBJECTIVES if quick else CLICK_OBJECTIVES
    natives = [k.split(":", 1)[1] for k in keys if k.startswith("native:")]
    bad = [f"native:{n}" for n in natives if n not in NATIVE_CLICKS[booster]]
    ours = [candidate(k, booster) for k in keys if not k.startswith("native:")]
    ours += [candidate(name, booster, obj) for name, obj in (custom or {}).items()]
    bad += [c.key for c in ours if c.kind == "ranking"
            and c.family not in ("ranknet", "lambdarank")]
    if bad:
        able = ["ranknet", "lambdarank:<metric>",
                *(f"native:{n}" for n in NATIVE_CLICKS[booster])]
        raise ValueError(f"{', '.join(bad)} would ignore the click log's positions; the "
                         f"objectives that learn from them on {booster}: {', '.join(able)}")
    out = [replace(c, target=metric, propensity=propensity) for c in ours
           if c.kind == "ranking"]
    natives = natives or list(NATIVE_CLICKS[booster])
    return out + [Candidate(f"native:{n}", "ranking", metric, native=NATIVE_CLICKS[booster][n])
                  for n in natives]


def candidates_for(task_name: str, kind: str, booster: str, keys: list[str] | None = None,
                   custom: dict[str, Any] | None = None, quick: bool = False,
                   metric: str | None = None, num_class: int | None = None, *,
                   groupless_headline: str | None = None) -> list[Candidate]:
    """The candidates of one task: the chosen gbrank objectives of the task's kind (all
    defaults when ``keys`` is None), custom instances, then the native baselines; each
    judged on ``metric`` when given, else on its own metric. A multiclass task passes
    its ``num_class`` K: its candidates train K scores per row (``"focal"`` is
    ``FocalLoss(num_class=K)``, the natives the booster's softmax objective). A
    group-less ranking task passes its headline metric (``groupless_headline``):
    without ``metric``, a candidate whose own metric is a cut-off one (``ndcg@10``,
    ``err@10``), which one list of every row saturates, is judged on the headline
    instead (RankNet keeps pair accuracy).

    Examples
    --------
    >>> from gbrank.tuning._spaces import candidates_for
    >>> [(c.key, c.target, c.num_class)
    ...  for c in candidates_for("m", "multiclass", "lightgbm", num_class=4)]
    [('focal', 'macro_f1', 4), ('native:multiclass', 'macro_f1', 4)]
    >>> [(c.key, c.target, c.own_target) for c in candidates_for(
    ...     "one_list", "ranking", "lightgbm", ["ranknet", "native:lambdarank"],
    ...     groupless_headline="ndcg")]
    [('ranknet', 'pair_accuracy', 'pair_accuracy'), ('native:lambdarank', 'ndcg', 'ndcg@10')]
    """
    if kind == "multiclass" and num_class is None:
        raise ValueError("a multiclass task's candidates need its num_class")
    k = num_class if kind == "multiclass" else None
    if keys is None:
        table = QUICK_OBJECTIVES if quick else DEFAULT_OBJECTIVES
        keys = table.get(task_name) or table[kind]
    out = [c for c in (candidate(key, booster, num_class=k) for key in keys
                       if not key.startswith("native:"))
           if c.kind == kind]
    for name, obj in (custom or {}).items():
        c = candidate(name, booster, obj)
        if c.kind == kind:
            out.append(c)
    natives = [k.split(":", 1)[1] for k in keys if k.startswith("native:")]
    natives = natives or DEFAULT_NATIVES[booster][kind]
    if quick and not any(k.startswith("native:") for k in keys):
        natives = natives[:1]
    out += [candidate(f"native:{n}", booster, num_class=k) for n in natives
            if NATIVE[booster][n].kind == kind]
    from dataclasses import replace

    if metric is not None:
        out = [replace(c, target=metric, own_target=c.own_target) for c in out]
    elif groupless_headline is not None:
        from gbrank.tuning._tasks import is_cutoff

        out = [replace(c, target=groupless_headline, own_target=c.own_target)
               if is_cutoff(c.target) else c for c in out]
    if groupless_headline is not None:
        out = [replace(c, groupless=True) for c in out]
    return out


def suggest_params(trial: Any, cand: Candidate, booster: str, y_train: Any = None
                   ) -> tuple[dict, dict]:
    """Booster parameters and objective parameters (``{}`` for natives) of one trial.

    Objective parameters are named ``obj_<name>`` in the trial (no clash with booster
    names like XGBoost's ``alpha``). A multiclass candidate's booster parameters hold
    ``num_class``; a native one's drawn ``class_weight_on`` becomes
    ``class_weight="balanced"`` (the tuner weights the training rows n / (K n_c); not a
    booster parameter, the tuner takes it out before training)."""
    bp: dict[str, Any] = dict(BOOSTER_FIXED[booster])
    for p in booster_space(booster, cand.kind, cand.groupless):
        v = p.suggest(trial, "", bp)
        if v is not _SKIP:
            bp[p.name] = v
    if cand.is_native:
        spec = cand.native
        for p in spec.space:
            v = p.suggest(trial, "", bp)
            if v is not _SKIP:
                bp[p.name] = v
        if bp.pop("scale_pos_weight_on", False) and y_train is not None:
            pos = float(sum(y_train == 1))
            bp["scale_pos_weight"] = (len(y_train) - pos) / max(pos, 1.0)
        if bp.pop("class_weight_on", False):
            bp["class_weight"] = "balanced"
        bp["objective"] = spec.objective
        bp.update(spec.fixed)
        if cand.num_class is not None:
            bp["num_class"] = cand.num_class
        return bp, {}
    have = cand.base.get_params()
    op: dict[str, Any] = {}
    ctx = dict(bp)
    ctx["_metric"] = have.get("metric")
    ctx["_calibration"] = have.get("calibration")
    ctx["_clicks"] = cand.propensity is not None
    ctx["_identifiable"] = cand.identifiable
    ctx["_cascade"] = cand.cascade_like
    for p in OBJECTIVE_SPACES[cand.family]:
        if p.name not in have:
            continue  # an option this objective does not have (yet)
        v = p.suggest(trial, "obj_", {**ctx, **op})
        if v is not _SKIP:
            op[p.name] = v
    if cand.num_class is not None:
        bp["num_class"] = cand.num_class
    return bp, op


def kernel_variants(cand: Candidate) -> list[dict[str, Any]]:
    """Every combination of the candidate's categorical objective parameters that its
    trials can draw (LambdaRank's ``norm`` × ``weighting``, RankNet's ``ties``, ...):
    each may run another compiled kernel, so the tuner compiles them all before a
    study's clock starts. Conditions on numeric parameters are not followed (a
    combination more is harmless)."""
    import itertools

    if cand.is_native:
        return []
    have = cand.base.get_params()
    ctx = {"_metric": have.get("metric"), "_clicks": cand.propensity is not None,
           "_identifiable": cand.identifiable, "_cascade": cand.cascade_like}
    cats = [p for p in OBJECTIVE_SPACES[cand.family]
            if p.kind == "cat" and p.name in have and (p.when is None or p.when(ctx))]
    return [dict(zip([p.name for p in cats], combo, strict=True))
            for combo in itertools.product(*(p.choices for p in cats))]


def build_objective(cand: Candidate, obj_params: dict, seed: int = 0, *,
                    whole_log: bool = False) -> Any:
    """A fresh objective: the candidate's base instance with ``obj_params`` set, and a
    ``random_state`` left at None (e.g. FBetaSurrogate's random mini-batches) set to
    ``seed`` so trials and refits are reproducible. ``whole_log``: it trains on the
    rows whose sessions the tuner read (the refit), so a correction keeps its own
    check of the users, as the user's code does."""
    from sklearn.base import clone

    obj = clone(cand.base)
    params = dict(obj_params)
    if "random_state" not in params and obj.get_params().get("random_state", 0) is None:
        params["random_state"] = seed
    if params.get("position_bias") == "ipw":  # a click log's propensities
        params["propensity"] = cand.propensity
    if params.get("position_bias") is not None and not whole_log:
        # The tuner read the whole log's sessions once (a cascade-like log draws no
        # correction): a fold's part of it must not decide otherwise.
        params["on_cascade"] = "ignore"
    if params:
        obj.set_params(**params)
    return obj
