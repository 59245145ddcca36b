"""Click corrections at candidate defaults under unlike protocols (issue 33).

Every method trains on a simulated click log of MQ2008's training parts and is judged by
NDCG@10 on the test part's true grades, paired with naive training (``LambdaRank()`` on
the clicks) over units = LETOR rotations × click seeds. The protocols differ in what
makes debiasing easy or hard:

- ``weak_s10``: a weak logger (3 rounds of a 4-leaf lambdarank on 2 % of the queries'
  grades), position-based user (η = 1), 10 sessions per query;
- ``good_s5`` / ``good_s40``: a good logger (20 rounds of lambdarank on 25 training
  queries' grades, the issue's), 5 or 40 sessions;
- ``cascade_s10``: the good logger and a cascade user (stops after a click);
- ``swap_s10`` / ``swap_s40`` / ``swap_weak_s10``: the good (weak) logger with 25 % of
  the sessions shown in a random order (a randomisation intervention: the same document
  at several positions), 10 or 40 sessions;
- ``rank_weak_s40`` / ``rank_good_s10``: LightGBM's example data (``rank.train``, judged
  on ``rank.test``), a weak or good logger (its 25 queries), 40 or 10 sessions; units
  are logger seeds × click seeds.

``ipw_est`` is inverse propensity weighting with propensities estimated from the
training log itself (:func:`gbrank.datasets.estimate_propensity`, from the documents it
shows at several positions); a log that cannot identify them makes it refuse (the
cell says so).

Every gbrank method is ``LambdaRank`` with its options; the natives are LightGBM's
``lambdarank`` with ``Dataset(position=...)`` and XGBoost's ``rank:ndcg`` with
``lambdarank_unbiased``. 100 rounds, learning rate 0.1, 31 leaves.

``--early-stopping`` trains every method (gbrank's and the natives) up to 500 rounds at
the same learning rate and keeps the round count with the best IPS-DCG@10 (the
simulator's true propensities) on a click log of held-out queries drawn the same way
(MQ2008: the fold's validation part; rank.train: every fifth query held out), checked
every 5 rounds, patience 50: one stopping rule for all, so no method wins by the size of
its steps at a fixed budget (``xgboost_click_lead.md``). Its report is
``click_protocols_es.md``. Methods named on purpose (``--methods``, the randomised logs):
``xgb_native_nonorm`` / ``_nosn`` (XGBoost with ``lambdarank_normalization`` /
``lambdarank_score_normalization`` off), ``xgb:<method>_h2`` (gbrank on XGBoost with the
Hessian doubled, as XGBoost's own takes it), ``<method>@lr`` (at learning rates 0.05 and
0.1, the one with the better held-out IPS-DCG@10 kept):

    python experiments/quality/click_protocols.py --early-stopping \
        --protocols swap_s40,swap_s10,swap_weak_s10 --click-seeds 0,1,2,3 --shard 0/2 \
        --methods xgb_native_nonorm,xgb_native_nosn,xgb:naive_nat_h2,naive@lr,...

    python experiments/quality/click_protocols.py --shard 0/2   # and 1/2 beside it
    python experiments/quality/click_protocols.py --report       # merge, write the report
    python experiments/quality/click_protocols.py --early-stopping --shard 0/2  # and --report
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

import lightgbm as lgb
import numpy as np
import xgboost as xgb

import gbrank.lightgbm
import gbrank.xgboost
from gbrank.datasets import (
    estimate_propensity,
    letor_fold,
    load_letor_folds,
    position_identifiability,
    simulate_clicks,
)
from gbrank.metrics import ips_dcg, ndcg, paired_difference
from gbrank.objectives import LambdaRank

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from _paths import RESULTS, shared_data_dir  # noqa: E402
from _report import pyplot  # noqa: E402

ROUNDS, TOP_N = 100, 10
ES_ROUNDS, ES_EVERY, ES_PATIENCE = 500, 5, 50  # --early-stopping
# The defaults made to train on a cascade user's log (below, "_ign").
IGNORE = ("ipw_clip2", "unbiased_r2", "additive_l1")
ES_METHODS = ("naive", "ipw_clip2", "ipw_est_clip2", "unbiased_r2", "additive_l1",
              "unbiased_r3", "lgb_native", "lgb_naive", "xgb_native", "xgb_naive",
              "xgb:naive", "xgb:ipw_clip2", "xgb:ipw_est_clip2", "xgb:unbiased_r2",
              "xgb:additive_l1", "xgb:unbiased_r3",
              *(f"{b}{k}" for b in ("", "xgb:") for k in (*(f"{m}_ign" for m in IGNORE),
                                                          "skip_above")))
STEM = "click_protocols"  # the report's file names; "click_protocols_es" with --early-stopping
ROTATIONS, CLICK_SEEDS = range(1, 6), (0, 1)  # rank.train: logger seeds 1..5
LGB = {"learning_rate": 0.1, "num_leaves": 31, "min_data_in_leaf": 20, "verbose": -1,
       "num_threads": 1, "metric": "None", "deterministic": True, "force_row_wise": True}
XGB = {"eta": 0.1, "max_leaves": 31, "max_depth": 0, "grow_policy": "lossguide",
       "tree_method": "hist", "nthread": 1, "verbosity": 0, "base_score": 0.0}
PROTOCOLS = {
    "weak_s10": dict(logger="weak", user="position", sessions=10, randomized=0.0),
    "good_s5": dict(logger="good", user="position", sessions=5, randomized=0.0),
    "good_s40": dict(logger="good", user="position", sessions=40, randomized=0.0),
    "cascade_s10": dict(logger="good", user="cascade", sessions=10, randomized=0.0),
    "swap_s10": dict(logger="good", user="position", sessions=10, randomized=0.25),
    "swap_s40": dict(logger="good", user="position", sessions=40, randomized=0.25),
    "swap_weak_s10": dict(logger="weak", user="position", sessions=10, randomized=0.25),
    "rank_weak_s40": dict(logger="weak", user="position", sessions=40, randomized=0.0,
                          data="rank"),
    "rank_good_s10": dict(logger="good", user="position", sessions=10, randomized=0.0,
                          data="rank"),
}
# name -> LambdaRank options (rho: the simulator's true propensities, filled in per unit)
GBRANK = {
    "naive": {},
    "ipw": {"position_bias": "ipw"},
    "ipw_clip3": {"position_bias": "ipw", "max_weight": 3.0},
    "ipw_clip5": {"position_bias": "ipw", "max_weight": 5.0},
    "ipw_clip2": {"position_bias": "ipw", "max_weight": 2.0},
    "ipw_clip15": {"position_bias": "ipw", "max_weight": 1.5},
    # the simulator's propensities, unclipped: a correction that knows the bias exactly
    "ipw_noclip": {"position_bias": "ipw", "max_weight": None},
    "ipw_est": {"position_bias": "ipw", "propensity": "estimated"},
    "ipw_est_clip3": {"position_bias": "ipw", "propensity": "estimated", "max_weight": 3.0},
    "ipw_est_clip2": {"position_bias": "ipw", "propensity": "estimated", "max_weight": 2.0},
    "unbiased_r0": {"position_bias": "unbiased", "bias_norm": 0.0},
    "unbiased_r1": {"position_bias": "unbiased", "bias_norm": 1.0},
    "unbiased_r2": {"position_bias": "unbiased", "bias_norm": 2.0},
    "unbiased_r3": {"position_bias": "unbiased", "bias_norm": 3.0},
    "unbiased_xgb": {"position_bias": "unbiased", "bias_norm": 1.0, "bias_cost": "xgboost"},
    "additive_l0": {"position_bias": "additive", "position_bias_regularization": 0.0},
    "additive_l03": {"position_bias": "additive", "position_bias_regularization": 0.3},
    "additive_l1": {"position_bias": "additive", "position_bias_regularization": 1.0},
    "additive_l3": {"position_bias": "additive", "position_bias_regularization": 3.0},
    "additive_l10": {"position_bias": "additive", "position_bias_regularization": 10.0},
}
# With the natives' own settings: LightGBM's lambdarank_norm / XGBoost's normalisations
# (norm=True) and no bound on the Newton step.
NAT = {"norm": True, "max_step": None}
GBRANK.update({f"{k}_nat": {**GBRANK[k], **NAT}
               for k in ("naive", "ipw_clip2", "ipw_est_clip2", "unbiased_r2", "additive_l1",
                         "ipw_noclip", "unbiased_xgb")})
# The defaults made to train on a cascade user's log, which each refuses by default
# (on_cascade="raise"): what the refusal keeps a user from (cascade_s10 only).
GBRANK.update({f"{k}_ign": {**GBRANK[k], "on_cascade": "ignore"} for k in IGNORE})
# A cascade-aware alternative: naive training on each session's rows at or above its last
# click (the rows a cascade user examined; the "click > skip above" preference).
GBRANK["skip_above"] = {}
NATIVES = ("ceiling", "lgb_native", "lgb_naive", "xgb_native", "xgb_naive")
# XGBoost's rank:ndcg with one of its normalisations off (suffix of xgb_native / xgb_naive):
# where its lead on the logs that identify position comes from.
XGB_SWITCHES = {"": {}, "_nonorm": {"lambdarank_normalization": False},
                "_nosn": {"lambdarank_score_normalization": False}}
XGB_ROWS = ("xgb:naive", "xgb:ipw_clip3", "xgb:ipw_clip2", "xgb:ipw_est_clip2",
            "xgb:ipw_est_clip3", "xgb:unbiased_r1", "xgb:unbiased_r2", "xgb:unbiased_r3",
            "xgb:additive_l1", "xgb:additive_l10")
METHODS = (*GBRANK, *NATIVES, *XGB_ROWS)

_FOLDS: dict = {}


def mq2008(rotation: int):
    d = shared_data_dir() / "MQ2008"
    if not (d / "S1.txt").exists():
        return None
    if "mq" not in _FOLDS:
        _FOLDS["mq"] = load_letor_folds(d)
    (X, y, g), (Xv, yv, gv), (Xt, yt, gt) = letor_fold(_FOLDS["mq"], rotation)
    return X.toarray(), y, g, Xt.toarray(), yt, gt, (Xv.toarray(), yv, gv)


def rank_data():
    from gbrank.datasets import load_letor

    d = shared_data_dir()
    if not (d / "rank.train").exists():
        return None
    if "rank" not in _FOLDS:
        X, y, g = load_letor(d / "rank.train")
        Xt, yt, gt = load_letor(d / "rank.test", n_features=X.shape[1])
        X = X.toarray()
        # --early-stopping holds every fifth query out (the fixed budget trains on all)
        held = np.arange(g.size) % 5 == 4
        _FOLDS["rank"] = (X, y, g, Xt.toarray(), yt, gt,
                          _queries(X, y, g, np.flatnonzero(held)),
                          _queries(X, y, g, np.flatnonzero(~held)))
    return _FOLDS["rank"]


def _queries(X, y, g, pick):
    starts = np.r_[0, np.cumsum(g)[:-1]]
    rows = np.concatenate([np.arange(starts[q], starts[q] + g[q]) for q in pick])
    return X[rows], y[rows], g[pick]


def logger(kind: str, X, y, g, rotation: int) -> lgb.Booster:
    rng = np.random.default_rng(1000 + rotation)
    if kind == "weak":
        pick = np.sort(rng.choice(g.size, size=max(3, g.size // 50), replace=False))
        params, rounds = {**LGB, "objective": "lambdarank", "min_data_in_leaf": 5,
                          "num_leaves": 4}, 3
    else:
        pick = np.sort(rng.choice(g.size, size=25, replace=False))
        params, rounds = {**LGB, "objective": "lambdarank", "min_data_in_leaf": 5}, 20
    Xq, yq, gq = _queries(X, y, g, pick)
    return lgb.train(params, lgb.Dataset(Xq, yq, group=gq), rounds)


def click_log(X, y, g, scores, p: dict, seed: int):
    """Kept sessions with a click: X, clicks, sessions, positions, true ρ, documents."""
    log = simulate_clicks(y, g, scores, top_n=TOP_N, user=p["user"], eta=1.0,
                          epsilon_minus=0.1, n_sessions=p["sessions"], sessions="keep",
                          randomized=p["randomized"], seed=seed)
    starts = np.r_[0, np.cumsum(log.group)[:-1]]
    clicked = np.add.reduceat(log.clicks, starts) > 0
    keep = np.repeat(clicked, log.group)
    return (X[log.rows[keep]], log.clicks[keep], log.group[clicked], log.position[keep],
            log.examination, log.qid[keep], log.rows[keep])


class _BestRound:
    """The round count with the best held-out score, checked every ``ES_EVERY`` rounds;
    training stops ``ES_PATIENCE`` rounds after it. The score: IPS-DCG@10 on the
    held-out click log ``valid``, or ``score(predict)`` when given (the ceilings' NDCG@10
    on true grades)."""

    def __init__(self, valid, score=None) -> None:
        self.valid, self.score, self.best, self.round = valid, score, -np.inf, 0

    def check(self, rounds: int, predict) -> bool:
        """Record round ``rounds``; True: stop."""
        if rounds % ES_EVERY:
            return False
        if self.score is not None:
            v = self.score(predict)
        else:
            Xv, cv, gv, pv, rho = self.valid[:5]
            v = ips_dcg(cv, predict(Xv), pv, rho, gv, 10)
        if v > self.best + 1e-12:
            self.best, self.round = v, rounds
        return rounds - self.round >= ES_PATIENCE


# The last early-stopped training's record (its best held-out IPS-DCG@10): "@lr" reads it.
_LAST: list = [None]
# "<method>@lr": the method at each of these learning rates, early-stopped, and the rate
# with the better held-out IPS-DCG@10 kept (so no implementation is held to one step
# size: XGBoost's rank:ndcg takes twice gbrank's and LightGBM's Hessian per pair).
RATES = (0.05, 0.1)


def _at_chosen_rate(method: str, data, log, Xt, valid) -> tuple[np.ndarray, int]:
    best = None
    for rate in RATES:
        saved = LGB["learning_rate"], XGB["eta"]
        LGB["learning_rate"] = XGB["eta"] = rate
        try:
            pred, k = fit_predict(method, data, log, Xt, valid)
        finally:
            LGB["learning_rate"], XGB["eta"] = saved
        if best is None or _LAST[0].best > best[0]:
            best = (_LAST[0].best, pred, k)
    return best[1], best[2]


def _lgb_train(params, dataset, valid) -> tuple[lgb.Booster, int]:
    if valid is None:
        return lgb.train(params, dataset, ROUNDS), ROUNDS
    best = _LAST[0] = _BestRound(valid)

    def callback(env) -> None:
        if best.check(env.iteration + 1, lambda Xv: env.model.predict(Xv, raw_score=True)):
            raise lgb.callback.EarlyStopException(best.round - 1, [])

    m = lgb.train(params, dataset, ES_ROUNDS, callbacks=[callback])
    return m, best.round


def _xgb_train(params, dtrain, valid, obj=None) -> tuple[xgb.Booster, int]:
    if valid is None:
        return xgb.train(params, dtrain, ROUNDS, obj=obj), ROUNDS
    best = _LAST[0] = _BestRound(valid)

    class Stop(xgb.callback.TrainingCallback):
        def after_iteration(self, model, epoch, evals_log) -> bool:
            return best.check(epoch + 1, lambda Xv: model.predict(
                xgb.DMatrix(Xv), output_margin=True, iteration_range=(0, epoch + 1)))

    m = xgb.train(params, dtrain, ES_ROUNDS, obj=obj, callbacks=[Stop()])
    return m, best.round


def _ceiling(on_xgb: bool, X, y, g, Xt, Xv, yv, gv) -> tuple[np.ndarray, int]:
    """The booster's own objective on the training queries' true grades, its round count
    the best NDCG@10 on the validation queries' true grades (:class:`_BestRound`): what
    the clicks could teach at most, under the same stopping rule."""
    if on_xgb:
        dtrain, dv = xgb.DMatrix(X, y, group=g), xgb.DMatrix(Xv)
        m = xgb.Booster({**XGB, "objective": "rank:ndcg"}, [dtrain])
        best = _BestRound(None, lambda predict: ndcg(yv, predict(dv), gv, 10))

        def predict(data):
            return m.predict(data, output_margin=True)
    else:
        m = lgb.Booster({**LGB, "objective": "lambdarank"}, lgb.Dataset(X, y, group=g))
        best = _BestRound(None, lambda predict: ndcg(yv, predict(Xv), gv, 10))

        def predict(data):
            return m.predict(data, raw_score=True)
    for r in range(1, ES_ROUNDS + 1):
        if on_xgb:
            m.update(dtrain, r - 1)
        else:
            m.update()
        if best.check(r, predict):
            break
    if on_xgb:
        return m.predict(xgb.DMatrix(Xt), output_margin=True,
                         iteration_range=(0, best.round)), best.round
    return m.predict(Xt, num_iteration=best.round), best.round


def _hessian_doubled(f):
    def obj(preds, dtrain):
        grad, hess = f(preds, dtrain)
        return grad, 2.0 * hess

    return obj


def _cascade_only(method: str) -> bool:
    return method.endswith("_ign") or method.endswith("skip_above")


def _skip_above(log) -> tuple:
    """The log cut to each session's rows at or above its last click."""
    Xc, c, gc, pos = log[:4]
    session = np.repeat(np.arange(gc.size), gc)
    last = np.zeros(gc.size)
    np.maximum.at(last, session, np.where(c > 0, pos, 0))
    keep = pos <= last[session]
    sizes = np.bincount(session[keep], minlength=gc.size)
    return (Xc[keep], c[keep], sizes[sizes > 0], pos[keep], *log[4:5],
            *(a[keep] for a in log[5:]))


def fit_predict(method: str, data, log, Xt, valid=None) -> tuple[np.ndarray, int]:
    """Test scores of ``method`` trained on ``log`` and its round count; ``valid``: the
    held-out click log that picks the round count (``None``: ``ROUNDS``)."""
    if method.endswith("@lr"):
        if valid is None:
            raise ValueError("@lr chooses the rate on the held-out log: --early-stopping")
        return _at_chosen_rate(method[:-3], data, log, Xt, valid)
    X, y, g = data
    Xc, c, gc, pos, rho = log[:5]
    if method == "ceiling":
        m = lgb.train({**LGB, "objective": "lambdarank"}, lgb.Dataset(X, y, group=g), ROUNDS)
        return m.predict(Xt), ROUNDS
    if method in ("ceiling_es", "xgb_ceiling_es"):  # true grades, early-stopped on them
        if valid is None:
            raise ValueError("a ceiling early-stopped on true grades: --early-stopping")
        return _ceiling(method.startswith("xgb"), X, y, g, Xt, *valid[5])
    if method in ("lgb_native", "lgb_naive"):
        extra = {"position": pos} if method == "lgb_native" else {}
        m, k = _lgb_train({**LGB, "objective": "lambdarank"},
                          lgb.Dataset(Xc, c, group=gc, **extra), valid)
        return m.predict(Xt, num_iteration=k), k
    if method.startswith(("xgb_native", "xgb_naive")):
        unbiased = method.startswith("xgb_native")
        switch = XGB_SWITCHES[method[len("xgb_native" if unbiased else "xgb_naive"):]]
        m, k = _xgb_train({**XGB, "objective": "rank:ndcg", **switch,
                           "lambdarank_unbiased": unbiased},
                          xgb.DMatrix(Xc, c, group=gc), valid)
        return m.predict(xgb.DMatrix(Xt), output_margin=True, iteration_range=(0, k)), k
    booster, _, name = method.rpartition(":")
    if name == "skip_above":
        log = _skip_above(log)
        Xc, c, gc, pos, rho = log[:5]
    # "_h2": the Hessian doubled, as XGBoost's rank:ndcg has it for the same pair
    # (2·σ(1−σ)·|ΔZ| against gbrank's and LightGBM's σ(1−σ)·|ΔZ|); XGBoost only.
    doubled = name.endswith("_h2")
    kw = dict(GBRANK[name.removesuffix("_h2")])
    if kw.get("propensity") == "estimated":  # from the log's own swaps (or refused)
        kw["propensity"] = list(estimate_propensity(c, pos, log[5], log[6]))
    elif kw.get("position_bias") == "ipw":
        kw["propensity"] = list(rho)
    obj = LambdaRank(**kw)
    if booster == "xgb":
        f = gbrank.xgboost.objective(obj, position=pos if obj.position_bias else None,
                                     learning_rate=XGB["eta"])
        if doubled:
            f = _hessian_doubled(f)
        m, k = _xgb_train(XGB, xgb.DMatrix(Xc, c, group=gc), valid, obj=f)
        return m.predict(xgb.DMatrix(Xt), output_margin=True, iteration_range=(0, k)), k
    f = gbrank.lightgbm.objective(obj, position=pos) if obj.position_bias else obj
    m, k = _lgb_train({**LGB, "objective": f}, lgb.Dataset(Xc, c, group=gc), valid)
    return m.predict(Xt, raw_score=True, num_iteration=k), k


def run(protocols, methods, shard: tuple[int, int], out: Path,
        click_seeds=CLICK_SEEDS, early_stopping: bool = False) -> None:
    units = [(pr, r, s) for pr in protocols for r in ROTATIONS for s in click_seeds]
    units = units[shard[0]::shard[1]]
    done = json.loads(out.read_text()) if out.exists() else {}
    elsewhere: dict = {}  # what other shards (of another split) have measured
    for p in RESULTS.glob(f"{STEM}_shard*.json"):
        if p != out:
            for k, v in json.loads(p.read_text()).items():
                elsewhere.setdefault(k, set()).update(v["ndcg@10"])
    for pr, r, s in units:
        key = f"{pr}|{r}|{s}"
        row = done.get(key, {})
        todo = [m for m in methods if m not in row.get("ndcg@10", {})
                and m not in elsewhere.get(key, ())
                and (PROTOCOLS[pr]["user"] == "cascade" or not _cascade_only(m))]
        if not todo:
            continue
        task = rank_data() if PROTOCOLS[pr].get("data") == "rank" else mq2008(r)
        if task is None:
            raise SystemExit("MQ2008 / rank.train not found in ../shared/data")
        X, y, g, Xt, yt, gt, (Xv, yv, gv) = task[:7]
        if len(task) == 8 and early_stopping:  # rank.train: train on the other queries
            X, y, g = task[7]
        model = logger(PROTOCOLS[pr]["logger"], X, y, g, r)
        scores = model.predict(X)
        log = click_log(X, y, g, scores, PROTOCOLS[pr], seed=100 * s + r)
        valid = None
        if early_stopping:  # the held-out queries' clicks, from the same logger and user
            vlog = click_log(Xv, yv, gv, model.predict(Xv), PROTOCOLS[pr],
                             seed=100 * s + r + 50)
            valid = (*vlog[:5], (Xv, yv, gv))  # and the true grades, for the ceilings
        ident = position_identifiability(log[3], log[5], log[6])
        row.setdefault("ndcg@10", {})
        row["meta"] = {"logger_ndcg@10": ndcg(y, scores, g, 10), "rows": int(log[1].size),
                       "sessions_with_clicks": int(log[2].size),
                       "identifiable_share": ident.share}
        for m in todo:
            t0 = time.perf_counter()
            try:
                pred, rounds = fit_predict(m, (X, y, g), log, Xt, valid)
                row["ndcg@10"][m] = ndcg(yt, pred, gt, 10)
                row.setdefault("rounds", {})[m] = rounds
            except ValueError as exc:  # a method that refuses this log
                row.setdefault("refused", {})[m] = str(exc)
                row["ndcg@10"][m] = None
                print(f"{key} {m} refused: {str(exc)[:120]}", flush=True)
                continue
            print(f"{key} {m} {row['ndcg@10'][m]:.4f} ({time.perf_counter() - t0:.1f} s)",
                  flush=True)
        done[key] = row
        out.write_text(json.dumps(done, indent=1))


# The chosen defaults (LambdaRank's own, so ``"ipw"`` is ``ipw_clip2``) and the former
# ones, for the report's first table.
DEFAULTS = {"ipw (max_weight=2)": "ipw_clip2",
            "ipw, estimated propensities (max_weight=2)": "ipw_est_clip2",
            "unbiased (bias_norm=2)": "unbiased_r2",
            "additive (regularization=1)": "additive_l1",
            "XGBoost: ipw": "xgb:ipw_clip2",
            "XGBoost: ipw, estimated": "xgb:ipw_est_clip2",
            "XGBoost: unbiased": "xgb:unbiased_r2",
            "XGBoost: additive": "xgb:additive_l1",
            "former: ipw (no clipping)": "ipw",
            "former: unbiased (bias_norm=0, the paper's)": "unbiased_r0",
            "former: additive (regularization=0)": "additive_l0"}
SWAPS = ("swap_s10", "swap_s40", "swap_weak_s10")


def _pair(merged: dict, pr: str, a: str, b: str):
    """``a`` − ``b`` over the units of protocol ``pr`` both were measured on (``None``:
    none; ``"refuses: ..."`` and why: ``a`` refused the log)."""
    keys = sorted(k for k in merged if k.startswith(pr + "|")
                  and a in merged[k]["ndcg@10"] and b in merged[k]["ndcg@10"])
    if not keys:
        return None
    why = [merged[k].get("refused", {}).get(a) for k in keys
           if merged[k]["ndcg@10"][a] is None]
    if why:
        return ("refuses: cascade-like" if any("cascade" in (w or "") for w in why)
                else "refuses: not identifiable")
    return paired_difference([merged[k]["ndcg@10"][a] for k in keys],
                             [merged[k]["ndcg@10"][b] for k in keys])


def _rotations_won(merged: dict, pr: str, a: str, b: str) -> str:
    """``a`` − ``b`` averaged over the click seeds of each rotation (logger seed), the
    rotations where it is > 0: the issue's units (``"3/5"``)."""
    per: dict = {}
    for k, v in merged.items():
        p, r, _ = k.split("|")
        if p == pr and v["ndcg@10"].get(a) is not None and v["ndcg@10"].get(b) is not None:
            per.setdefault(r, []).append(v["ndcg@10"][a] - v["ndcg@10"][b])
    won = sum(np.mean(d) > 0 for d in per.values())
    return f"{won}/{len(per)}"


def _base(m: str) -> str:
    return "xgb:naive" if m.startswith("xgb:") else "naive"


def _default_cell(d) -> str:
    if d is None:
        return ""
    if isinstance(d, str):
        return d
    ok = d.within_one_se_or_better()
    return d.cell() + ("" if ok else f" **✗ {-d.mean / d.se:.1f} SE**")


def _pair_rows(merged: dict, swaps: list[str], pairs: list[tuple[str, str]]) -> list[str]:
    """A table of ``a − b`` on each log (rotations won in brackets), its header first;
    only the pairs measured somewhere, and no table when none was."""
    rows = []
    for a, b in pairs:
        cells = [_pair(merged, pr, a, b) for pr in swaps]
        if any(d is not None and not isinstance(d, str) for d in cells):
            rows.append(f"| `{a}` − `{b}` | " + " | ".join(
                "" if d is None or isinstance(d, str)
                else f"{d.cell()} [{_rotations_won(merged, pr, a, b)}]"
                for pr, d in zip(swaps, cells, strict=True)) + " |")
    if not rows:
        return []
    return ["| | " + " | ".join(swaps) + " |", "|---|" + "---:|" * len(swaps), *rows]


def _lead_lines(merged: dict, swaps: list[str]) -> list[str]:
    """Where XGBoost's rank:ndcg lead comes from on the logs that identify position:
    each of its normalisations switched off, and gbrank's best default with the natives'
    normalisation (``_nat``), against Unbiased LambdaMART (when measured)."""
    pairs = [("xgb_native", "xgb_native_nonorm"), ("xgb_native", "xgb_native_nosn"),
             ("xgb_naive", "xgb_naive_nonorm"), ("xgb:naive_nat", "xgb:naive"),
             ("xgb:naive_nat", "xgb_naive"), ("xgb:ipw_est_clip2_nat", "xgb_native"),
             ("ipw_est_clip2_nat", "xgb_native"), ("xgb:naive_nat_h2", "xgb_naive"),
             ("xgb:ipw_est_clip2_nat_h2", "xgb_native"),
             ("xgb:unbiased_r2_nat_h2", "xgb_native")]
    rows = _pair_rows(merged, swaps, pairs)
    if not rows:
        return []
    return ["", "## Where XGBoost's lead comes from", "",
            "`_nonorm`: XGBoost's `lambdarank_normalization=False` (its per-query scaling "
            "of gradient and Hessian by log2(1 + Σλ)/Σλ, one half of LightGBM's "
            "`lambdarank_norm`); `_nosn`: `lambdarank_score_normalization=False` (its division of "
            "each pair's |ΔNDCG| by the score gap + 0.01); `_nat`: gbrank's `LambdaRank` "
            "with `norm=True` (LightGBM's `lambdarank_norm`: that per-query scaling and the "
            "score-gap division) and no step bound; `_h2`: on "
            "XGBoost with the Hessian doubled (XGBoost's rank:ndcg takes 2·σ(1−σ)·|ΔZ| "
            "per pair where gbrank and LightGBM take σ(1−σ)·|ΔZ|). In "
            "brackets: rotations won of 5.", "",
            *rows]


def _headroom_lines(merged: dict, swaps: list[str]) -> list[str]:
    """How much the logs that identify position leave to win: the ceilings (each booster's
    own objective on the true grades, early-stopped on the validation queries' true
    grades) against the natives and gbrank's best defaults, and a looser clip of the
    estimated propensities (when measured)."""
    pairs = [("ceiling_es", "xgb_native"), ("xgb_ceiling_es", "xgb_native"),
             ("ceiling_es", "lgb_native"), ("ceiling_es", "ipw_est_clip2"),
             ("xgb_ceiling_es", "xgb:ipw_clip2"), ("ipw_est_clip3", "ipw_est_clip2"),
             ("ipw_est_clip3", "xgb_native"), ("ipw_est_clip3", "lgb_native"),
             ("xgb:ipw_est_clip3", "xgb_native"), ("xgb:unbiased_xgb_nat_h2", "xgb_native"),
             ("xgb:ipw_noclip_nat_h2", "xgb_native"), ("ipw_noclip", "xgb_native")]
    rows = _pair_rows(merged, swaps, pairs)
    if not rows:
        return []
    return ["", "## How much is left to win", "",
            "`ceiling_es` / `xgb_ceiling_es`: LightGBM's `lambdarank` / XGBoost's "
            "`rank:ndcg` trained on the training queries' true grades instead of clicks, "
            "each stopped at its best NDCG@10 on the validation queries' true grades "
            "(checked as the click models are): what the clicks could teach at most under "
            "the same stopping rule. `ipw_est_clip3`: the estimated propensities clipped at "
            "3 instead of the default 2. `xgb:unbiased_xgb_nat_h2`: gbrank's "
            "`LambdaRank(position_bias='unbiased', bias_norm=1, bias_cost='xgboost', "
            "norm=True, max_step=None)` on XGBoost with the Hessian doubled, XGBoost's "
            "Unbiased LambdaMART in gbrank's code; `ipw_noclip`: inverse propensity "
            "weights from the simulator's own propensities, unclipped (the bias known "
            "exactly), `_nat_h2` in XGBoost's form. In brackets: rotations won of 5.",
            "", *rows]


def _rate_lines(merged: dict, swaps: list[str]) -> list[str]:
    """The logs that identify position again, every method at the learning rate its
    held-out clicks chose (``@lr``): each correction − naive on its booster, and against
    both natives (when measured)."""
    rows = []
    for label, m in list(DEFAULTS.items())[:8]:
        cells = []
        for pr in swaps:
            for b in (_base(m), "lgb_native", "xgb_native"):
                a, b = m + "@lr", b + "@lr"
                d = _pair(merged, pr, a, b)
                cells.append("" if d is None else "refuses" if isinstance(d, str)
                             else f"{d.cell()} [{_rotations_won(merged, pr, a, b)}]")
        if any(cells):
            rows.append(f"| {label} | " + " | ".join(cells) + " |")
    if not rows:
        return []
    picked = {m: [merged[k]["rounds"][m] for k in merged if m in merged[k].get("rounds", {})]
              for m in ("naive@lr", "xgb_native@lr")}
    return ["", "## The same, each method at the learning rate its held-out clicks chose",
            "", f"Every method trained at learning rates {' and '.join(map(str, RATES))}, "
            "each early-stopped as above, and the rate with the better held-out IPS-DCG@10 "
            "kept (`@lr`): the natives too. Under one rate the implementations do not "
            "take the same steps (XGBoost's Hessian per pair is twice gbrank's and "
            "LightGBM's; table above). In brackets: rotations won of 5.", "",
            "| | " + " | ".join(f"{pr}: − {b}" for pr in swaps
                                for b in ("naive", "lgb_native", "xgb_native")) + " |",
            "|---|" + "---:|" * (3 * len(swaps)), *rows, "",
            "Round counts kept (median): " + "; ".join(
                f"`{m}` {np.median(r):.0f}" for m, r in picked.items() if r) + "."]


def report(paths: list[Path]) -> str:
    merged: dict = {}
    for p in paths:
        for k, v in json.loads(p.read_text()).items():
            row = merged.setdefault(k, {"ndcg@10": {}, "meta": v["meta"]})
            row["ndcg@10"].update(v["ndcg@10"])
            for key in ("rounds", "refused"):
                if key in v:
                    row.setdefault(key, {}).update(v[key])
    (RESULTS / f"{STEM}.json").write_text(json.dumps(merged, indent=1))
    protocols = [p for p in PROTOCOLS if any(k.startswith(p + "|") for k in merged)]
    head = "| | " + " | ".join(protocols) + " |"
    rule = "|---|" + "---:|" * len(protocols)
    es = STEM.endswith("_es")
    budget = (f"Every method early-stopped on held-out IPS-DCG@10 (≤ {ES_ROUNDS} rounds, "
              f"learning rate 0.1, checked every {ES_EVERY}, patience {ES_PATIENCE}; "
              "`--early-stopping`). " if es else
              f"Every method {ROUNDS} rounds at learning rate 0.1 (`click_protocols_es.md`: "
              "early-stopped). ")
    lines = ["# Click corrections under unlike protocols"
             + (", early-stopped" if es else ""), "",
             "Generated by `experiments/quality/click_protocols.py` (protocols in its "
             "docstring). " + budget + "NDCG@10 on the test parts' true grades; a cell "
             "is the paired difference with naive training on the clicks "
             "(`LambdaRank()` on the row's booster) ± its standard error (units won of "
             "all: 5 LETOR rotations of MQ2008, or 5 logger seeds of rank.train, × 2 or 4 "
             "click seeds). **✗** marks a "
             "deficit larger than one standard error.", "",
             "## The defaults, by protocol", "", head, rule]
    defaults = {label: m for label, m in DEFAULTS.items() if not es or m in ES_METHODS}
    for label, m in defaults.items():
        lines.append(f"| {label} | " + " | ".join(
            _default_cell(_pair(merged, pr, m, _base(m))) for pr in protocols) + " |")
    casc = [pr for pr in protocols if PROTOCOLS[pr]["user"] == "cascade"]
    ign = [m for m in ES_METHODS if _cascade_only(m)] if es else []
    for pr in casc:
        cells = [(m, _pair(merged, pr, m, _base(m))) for m in ign]
        cells = [f"`{m}` {d.cell()}" for m, d in cells if d is not None and not isinstance(d, str)]
        if cells:
            lines += ["", f"On `{pr}` every correction refuses the log by default "
                      "(`on_cascade='raise'`: no session has two clicks). Trained anyway "
                      "(`on_cascade='ignore'`, `*_ign`), and naive training on each "
                      "session's rows at or above its last click (`skip_above`, the rows a "
                      "cascade user examined), − naive on the same booster: "
                      + "; ".join(cells) + "."]
    lines += ["", "## Logs that identify position: every default against the natives", "",
              "In brackets: the rotations (logger seeds) won of 5, each the mean over its "
              "click seeds.", "",
              "| | " + " | ".join(f"{pr}: − {b}" for pr in SWAPS if pr in protocols
                                  for b in ("naive", "lgb_native", "xgb_native")) + " |",
              "|---|" + "---:|" * (3 * sum(pr in protocols for pr in SWAPS))]
    for label, m in list(defaults.items())[:8]:
        cells = []
        for pr in SWAPS:
            if pr not in protocols:
                continue
            for b in (_base(m), "lgb_native", "xgb_native"):
                d = _pair(merged, pr, m, b)
                cells.append("" if d is None else "refuses" if isinstance(d, str)
                             else f"{d.cell()} [{_rotations_won(merged, pr, m, b)}]")
        lines.append(f"| {label} | " + " | ".join(cells) + " |")
    lines += _lead_lines(merged, [pr for pr in SWAPS if pr in protocols])
    lines += _headroom_lines(merged, [pr for pr in SWAPS if pr in protocols])
    lines += _rate_lines(merged, [pr for pr in SWAPS if pr in protocols])
    lines += ["", "## Every method", "", "| method | " + " | ".join(protocols) + " |", rule]
    for m in (ES_METHODS if es else METHODS):
        cells = []
        for pr in protocols:
            if m == _base(m):
                keys = [k for k in merged if k.startswith(pr + "|")
                        and m in merged[k]["ndcg@10"]]
                cells.append(f"{np.mean([merged[k]['ndcg@10'][m] for k in keys]):.4f}"
                             if keys else "")
            else:
                d = _pair(merged, pr, m, _base(m))
                cells.append("" if d is None else d if isinstance(d, str) else d.cell())
        lines.append(f"| `{m}` | " + " | ".join(cells) + " |")

    def meta(pr: str, key: str) -> float:
        return float(np.mean([merged[k]["meta"][key] for k in merged
                              if k.startswith(pr + "|")]))

    lines += ["", "Logs: " + "; ".join(
        f"{pr}: logger NDCG@10 {meta(pr, 'logger_ndcg@10'):.3f}, query–document pairs "
        f"shown at two positions {meta(pr, 'identifiable_share'):.1%}"
        for pr in protocols) + ".", "",
        f"![each default − naive, by protocol]({STEM}.png)", ""]
    if es:
        lines[-2:-2] = ["Round counts picked (median over units; range): " + "; ".join(
            f"`{m}` {np.median(r):.0f} ({min(r)}–{max(r)})" for m in ES_METHODS
            if (r := [merged[k]["rounds"][m] for k in merged
                      if m in merged[k].get("rounds", {})])) + ".", ""]
    _plot(merged, protocols)
    text = "\n".join(lines)
    (RESULTS / f"{STEM}.md").write_text(text)
    return text


def _plot(merged: dict, protocols: list[str]) -> None:
    plt = pyplot()
    rows = list(DEFAULTS.items())[:8]  # the defaults on both boosters
    fig, ax = plt.subplots(figsize=(11, 4.8))
    width = 0.8 / len(rows)
    for i, (label, m) in enumerate(rows):
        for j, pr in enumerate(protocols):
            d = _pair(merged, pr, m, _base(m))
            if d is None or isinstance(d, str):
                continue
            x = j + (i - (len(rows) - 1) / 2) * width
            ax.bar(x, d.mean, width, color=f"C{i}", label=label,
                   hatch="//" if label.startswith("XGBoost") else None)
            ax.errorbar(x, d.mean, yerr=d.se, color="k", lw=0.8)
    for j, pr in enumerate(protocols):  # a protocol every default refuses: say so
        cells = [_pair(merged, pr, m, _base(m)) for _, m in rows]
        if all(isinstance(d, str) for d in cells if d is not None) and any(cells):
            why = next(d for d in cells if d is not None).replace("refuses: ", "")
            ax.text(j, 0.0005, f"every correction\nrefuses this log\n({why})",
                    ha="center", va="bottom", fontsize=7)
    ax.axhline(0, color="k", lw=0.8)
    ax.set_xticks(range(len(protocols)), protocols, rotation=20)
    ax.set_ylabel("NDCG@10 − naive (± SE)")
    ax.set_title("Each correction at its default, minus naive training on the same booster "
                 "(± one standard error)" + ("\nevery model early-stopped on held-out "
                                             "IPS-DCG@10" if STEM.endswith("_es") else ""),
                 fontsize=10)
    handles, labels = ax.get_legend_handles_labels()
    seen = dict(zip(labels, handles, strict=True))
    ax.legend(seen.values(), seen.keys(), fontsize=7, ncol=2, loc="lower left")
    fig.text(0.01, 0.01, "No bar: the correction refuses the log ('ipw, estimated' on a log "
             "that cannot identify position; every correction on a cascade user's log).",
             fontsize=7, ha="left", va="bottom")
    fig.tight_layout(rect=(0, 0.03, 1, 1))
    fig.savefig(RESULTS / f"{STEM}.png", dpi=130)
    plt.close(fig)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--protocols", default=",".join(PROTOCOLS))
    ap.add_argument("--methods", default=",".join(METHODS))
    ap.add_argument("--shard", default="0/1")
    ap.add_argument("--click-seeds", default=",".join(map(str, CLICK_SEEDS)))
    ap.add_argument("--report", action="store_true")
    ap.add_argument("--early-stopping", action="store_true",
                    help="every method early-stopped on held-out IPS-DCG@10")
    args = ap.parse_args()
    global STEM
    if args.early_stopping:
        STEM = "click_protocols_es"
    if args.report:
        # the merged file of earlier runs, then the shards of this one (theirs win)
        merged = RESULTS / f"{STEM}.json"
        shards = sorted(RESULTS.glob(f"{STEM}_shard*.json"))
        print(report(([merged] if merged.exists() else []) + shards))
        return
    i, n = (int(v) for v in args.shard.split("/"))
    methods = args.methods.split(",")
    if args.early_stopping and args.methods == ap.get_default("methods"):
        methods = list(ES_METHODS)
    run(args.protocols.split(","), methods, (i, n), RESULTS / f"{STEM}_shard{i}of{n}.json",
        tuple(int(v) for v in args.click_seeds.split(",")), args.early_stopping)


if __name__ == "__main__":
    main()
