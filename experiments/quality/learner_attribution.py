"""Objective × learner on real ranking data: which knob matters more than the objective
(issue 35, its research part).

Four sets, each with units of (train, validation, test):

- ``mq2008``: LETOR 4.0 MQ2008, the readme's five folds (train on three parts, validate on
  the fourth, test on the fifth);
- ``mq2008_third``: the same folds with a third of the training queries and a third of
  the validation queries (drawn once per fold, seed 3000 + fold), tested on the whole test
  part: a smaller, noisier stand-in for the issue's unnamed second LETOR set, not that set;
- ``rank``: LightGBM's example data, five random 80/20 splits of ``rank.train``'s queries
  (seed = split) into training and validation, tested on ``rank.test`` (50 queries);
- ``mslr_sample``: a second LETOR set, 84 MSLR-WEB queries in five parts built by
  ``experiments/mslr_sample.py`` from PyPI, the readme's fold rotation as for MQ2008
  (measured apart: ``experiments/quality/second_letor.py``).

Every training: learning rate 0.05, at most 1,000 rounds, early stopping (patience 50) on
the validation part's NDCG@10 by :func:`gbrank.metrics.ndcg` (the same rule for every
booster; CatBoost watches it through a Python eval metric, which sees the validation set
whole and in order), test NDCG@10 at the best round, one thread. A configuration whose
learner or objective draws random numbers runs seeds 0-4 (LightGBM ``seed``, XGBoost
``seed``, CatBoost ``random_seed``); a deterministic one runs seed 0.

- LightGBM 31 leaves, min_data_in_leaf 20: ``lambdarank``, ``rank_xendcg``, gbrank
  ``LambdaRank()`` and ``RankNet()``, each plain and with ``extra_trees``,
  ``bagging_by_query`` (fraction 0.7, every round; 0.5 and 0.9 for lambdarank), row
  bagging (fraction 0.7, what the tuner searches today), ``path_smooth`` 1/10/100,
  ``num_leaves`` 3/7/127, ``min_data_in_leaf`` 5/100/200 and ``extra_trees`` with one
  other knob. gbrank objectives also with bagging by query done in the objective
  (``_QueryBagging``): LightGBM 4.7's ``bagging_by_query`` leaves out-of-bag rows'
  training scores behind and samples nothing for a custom objective (``--report``
  measures it).
- XGBoost ``hist``, depth 6: ``rank:ndcg``, ``rank:pairwise``, gbrank ``LambdaRank()``,
  plain and with ``subsample``, ``colsample_bynode``, loss-guided 31-leaf trees, depth 4/8,
  ``min_child_weight`` 10 (and ``LambdaRank()`` with query bagging in the objective).
- CatBoost ``YetiRank``, ``LambdaMart``, ``QueryRMSE`` at its defaults (depth-6 symmetric
  trees, MVS bootstrap 0.8, random_strength 1) and without its randomness
  (``grow_policy="Depthwise"``, ``random_strength=0``, ``bootstrap_type="No"``), with the
  three switched one at a time.

    pip install -e ".[catboost]"    # CatBoost is an extra; gbrank itself never imports it
    python experiments/quality/learner_attribution.py --shard 0/2   # and 1/2 beside it
    python experiments/quality/learner_attribution.py --report       # merge, write the report

Shards write ``experiments/results/learner_attribution_shard<i>of<n>.json`` (every
training: test NDCG@10 per query, rounds, seconds; not committed) and resume from them;
``--report`` writes ``learner_attribution.md`` (keeping the reading written by hand above
its marker), ``.json`` and ``.png`` (about 2.3 CPU-hours for all 6,135 trainings).
"""

from __future__ import annotations

import os

import numba

# numba's "omp" layer keeps spinning OpenMP threads that starve LightGBM's (see
# experiments/quality/ranking_quality.py); "workqueue" has none.
if "NUMBA_THREADING_LAYER" not in os.environ:
    numba.config.THREADING_LAYER = "workqueue"

import argparse
import json
import sys
import time
import warnings
from pathlib import Path

import numpy as np

from gbrank.metrics import ndcg, ndcg_per_query, paired_difference

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from _paths import RESULTS, shared_data_dir  # noqa: E402

LR, MAX_ROUNDS, PATIENCE, K = 0.05, 1000, 50, 10
SEEDS = (0, 1, 2, 3, 4)
SETS = ("mq2008", "mq2008_third", "rank")
UNITS = (1, 2, 3, 4, 5)
BASE = "lgb:lambdarank"

LGB_OBJECTIVES = ("lambdarank", "rank_xendcg", "LambdaRank()", "RankNet()")
# name -> LightGBM parameters added to the plain learner
LGB_KNOBS: dict[str, dict] = {
    "": {},
    "et": {"extra_trees": True},
    "bq0.7": {"bagging_by_query": True, "bagging_fraction": 0.7, "bagging_freq": 1},
    "bag0.7": {"bagging_fraction": 0.7, "bagging_freq": 1},
    "ps1": {"path_smooth": 1.0},
    "ps10": {"path_smooth": 10.0},
    "ps100": {"path_smooth": 100.0},
    "L7": {"num_leaves": 7},
    "L127": {"num_leaves": 127},
    "m5": {"min_data_in_leaf": 5},
    "m100": {"min_data_in_leaf": 100},
    "et+bq0.7": {"extra_trees": True, "bagging_by_query": True, "bagging_fraction": 0.7,
                 "bagging_freq": 1},
    "et+ps10": {"extra_trees": True, "path_smooth": 10.0},
    "et+m100": {"extra_trees": True, "min_data_in_leaf": 100},
    "et+L127": {"extra_trees": True, "num_leaves": 127},
    # below and above the tuner's ranges today (num_leaves 7-63, min_data_in_leaf 5-100)
    "L3": {"num_leaves": 3},
    "m200": {"min_data_in_leaf": 200},
    "et+L7": {"extra_trees": True, "num_leaves": 7},
}
# LightGBM 4.7's bagging_by_query leaves the training scores of out-of-bag rows behind
# (and, with a custom objective, samples nothing): see the report. Query bagging done in
# a gbrank objective (_QueryBagging) measures what bagging by query is worth.
GBRANK_KNOBS: dict[str, dict] = {
    "qb0.7": {"query_bagging": 0.7},
    "et+qb0.7": {"extra_trees": True, "query_bagging": 0.7},
}
# Knobs measured for lambdarank only: the bagging fraction's range.
LGB_BASE_ONLY: dict[str, dict] = {
    "bq0.5": {"bagging_by_query": True, "bagging_fraction": 0.5, "bagging_freq": 1},
    "bq0.9": {"bagging_by_query": True, "bagging_fraction": 0.9, "bagging_freq": 1},
}
XGB_OBJECTIVES = ("rank:ndcg", "rank:pairwise", "LambdaRank()")
XGB_KNOBS: dict[str, dict] = {
    "": {},
    "ss0.7": {"subsample": 0.7},
    "cbn0.7": {"colsample_bynode": 0.7},
    "ss0.7+cbn0.7": {"subsample": 0.7, "colsample_bynode": 0.7},
    "lg31": {"grow_policy": "lossguide", "max_leaves": 31, "max_depth": 0},
    "d4": {"max_depth": 4},
    "d8": {"max_depth": 8},
    "mcw10": {"min_child_weight": 10.0},
}
CB_OBJECTIVES = ("YetiRank", "LambdaMart", "QueryRMSE")
CB_KNOBS: dict[str, dict] = {
    "": {},
    "det": {"grow_policy": "Depthwise", "random_strength": 0.0, "bootstrap_type": "No"},
    "rs0": {"random_strength": 0.0},
    "noboot": {"bootstrap_type": "No"},
    "dw": {"grow_policy": "Depthwise"},
    "rs0+noboot": {"random_strength": 0.0, "bootstrap_type": "No"},
}


def configs() -> dict[str, dict]:
    """name -> {booster, objective, params, random}."""
    out: dict[str, dict] = {}
    for obj in LGB_OBJECTIVES:
        knobs = {**LGB_KNOBS, **(LGB_BASE_ONLY if obj == "lambdarank" else {}),
                 **(GBRANK_KNOBS if obj.endswith("()") else {})}
        for knob, p in knobs.items():
            rnd = bool(p.get("extra_trees") or p.get("bagging_fraction", 1.0) < 1.0
                       or "query_bagging" in p
                       or obj == "rank_xendcg")  # xendcg draws its own random gammas
            out[f"lgb:{obj}" + (f"+{knob}" if knob else "")] = dict(
                booster="lgb", objective=obj, params=p, random=rnd)
    for obj in XGB_OBJECTIVES:
        knobs = {**XGB_KNOBS, **({"qb0.7": GBRANK_KNOBS["qb0.7"]} if obj.endswith("()")
                                 else {})}
        for knob, p in knobs.items():
            # rank:pairwise samples its pairs ("mean" method), but with a seed of its own:
            # seeds 0 and 1 gave the same model (checked on rank split 1).
            rnd = bool(p.get("subsample", 1.0) < 1.0 or p.get("colsample_bynode", 1.0) < 1.0
                       or "query_bagging" in p)
            out[f"xgb:{obj}" + (f"+{knob}" if knob else "")] = dict(
                booster="xgb", objective=obj, params=p, random=rnd)
    for obj in CB_OBJECTIVES:
        for knob, p in CB_KNOBS.items():
            rnd = bool(p.get("random_strength", 1.0) > 0 or p.get("bootstrap_type") != "No"
                       or obj == "YetiRank")  # YetiRank samples permutations
            out[f"cb:{obj}" + (f"+{knob}" if knob else "")] = dict(
                booster="cb", objective=obj, params=p, random=rnd)
    return out


# ---------------------------------------------------------------------------------- data

_CACHE: dict = {}


def _rows(X, y, g, pick):
    starts = np.r_[0, np.cumsum(g)[:-1]]
    rows = np.concatenate([np.arange(starts[q], starts[q] + g[q]) for q in pick])
    return X[rows], y[rows], g[pick]


def _third(part, seed: int):
    X, y, g = part
    rng = np.random.default_rng(seed)
    return _rows(X, y, g, np.sort(rng.choice(g.size, size=g.size // 3, replace=False)))


def load(name: str, unit: int):
    """((X, y, g) of training, validation, test), dense."""
    key = (name, unit)
    if key in _CACHE:
        return _CACHE[key]
    from gbrank.datasets import letor_fold, load_letor, load_letor_folds

    d = shared_data_dir()
    if name == "mslr_sample":
        from mslr_sample import mslr_sample_dir

        if "mslr" not in _CACHE:
            _CACHE["mslr"] = load_letor_folds(mslr_sample_dir())
        parts = [(X.toarray(), y, g) for X, y, g in letor_fold(_CACHE["mslr"], unit)]
    elif name.startswith("mq2008"):
        if "mq" not in _CACHE:
            if not (d / "MQ2008" / "S1.txt").exists():
                raise SystemExit(f"MQ2008 not found in {d}")
            _CACHE["mq"] = load_letor_folds(d / "MQ2008")
        parts = [(X.toarray(), y, g) for X, y, g in letor_fold(_CACHE["mq"], unit)]
        if name == "mq2008_third":
            parts = [_third(parts[0], 3000 + unit), _third(parts[1], 3100 + unit), parts[2]]
    else:
        if not (d / "rank.train").exists():
            raise SystemExit(f"rank.train not found in {d}")
        X, y, g = load_letor(d / "rank.train")
        Xt, yt, gt = load_letor(d / "rank.test", n_features=X.shape[1])
        X, Xt = X.toarray(), Xt.toarray()
        rng = np.random.default_rng(unit)
        order = rng.permutation(g.size)
        n_valid = round(0.2 * g.size)
        parts = [_rows(X, y, g, np.sort(order[n_valid:])),
                 _rows(X, y, g, np.sort(order[:n_valid])), (Xt, yt, gt)]
    _CACHE[key] = tuple(parts)
    return _CACHE[key]


# ----------------------------------------------------------------------------- training


class _QueryBagging:
    """Bagging by query inside a custom objective: every round, the rows of a random
    ``1 - fraction`` of the training queries get zero gradient and hessian (they still
    count towards min_data_in_leaf), and every row's score stays the model's own."""

    def __init__(self, objective, group: np.ndarray, fraction: float, seed: int) -> None:
        self.objective, self.group, self.fraction = objective, group, fraction
        self.rng = np.random.default_rng(10_000 + seed)

    def __call__(self, preds, data):
        grad, hess = self.objective(preds, data)
        keep = np.zeros(self.group.size, dtype=bool)
        keep[self.rng.choice(self.group.size, round(self.fraction * self.group.size),
                             replace=False)] = True
        mask = np.repeat(keep, self.group)
        return np.where(mask, grad, 0.0), np.where(mask, hess, 0.0)


def learner_params(booster: str, seed: int) -> dict:
    """Every training's learner settings on ``booster`` (the protocol's one home; the
    objective, the knobs and the stopping rule are added by the caller)."""
    if booster == "lgb":
        return {"learning_rate": LR, "num_leaves": 31, "min_data_in_leaf": 20,
                "num_threads": 1, "seed": seed, "deterministic": True, "verbose": -1}
    if booster == "xgb":
        return {"eta": LR, "max_depth": 6, "tree_method": "hist", "nthread": 1,
                "verbosity": 0, "seed": seed}
    return {"learning_rate": LR, "thread_count": 1, "random_seed": seed, "verbose": 0,
            "allow_writing_files": False}


def _lgb(cfg: dict, seed: int, train, valid, Xt):
    import lightgbm as lgb

    from gbrank.lightgbm import feval
    from gbrank.objectives import LambdaRank, RankNet

    obj = {"LambdaRank()": LambdaRank, "RankNet()": RankNet}.get(cfg["objective"])
    knobs = dict(cfg["params"])
    objective = obj() if obj else cfg["objective"]
    if "query_bagging" in knobs:
        objective = _QueryBagging(objective, train[2], knobs.pop("query_bagging"), seed)
    params = {"objective": objective, **learner_params("lgb", seed), "metric": "None",
              **knobs}
    dt = lgb.Dataset(train[0], train[1], group=train[2])
    dv = lgb.Dataset(valid[0], valid[1], group=valid[2], reference=dt)
    m = lgb.train(params, dt, MAX_ROUNDS, valid_sets=[dv], feval=feval(f"ndcg@{K}"),
                  callbacks=[lgb.early_stopping(PATIENCE, verbose=False)])
    s = m.predict(Xt, num_iteration=m.best_iteration, raw_score=True)
    return s, int(m.best_iteration), float(m.best_score["valid_0"][f"gbrank_ndcg@{K}"])


def _xgb(cfg: dict, seed: int, train, valid, Xt):
    import xgboost as xgb

    import gbrank.xgboost
    from gbrank.objectives import LambdaRank

    knobs = dict(cfg["params"])
    fraction = knobs.pop("query_bagging", None)
    params = {**learner_params("xgb", seed), "disable_default_eval_metric": 1, **knobs}
    obj = None
    if cfg["objective"] == "LambdaRank()":
        obj, params["base_score"] = gbrank.xgboost.objective(LambdaRank()), 0.0
        if fraction is not None:
            obj = _QueryBagging(obj, train[2], fraction, seed)
    else:
        params["objective"] = cfg["objective"]
    dt = xgb.DMatrix(train[0], train[1], group=train[2])
    dv = xgb.DMatrix(valid[0], valid[1], group=valid[2])
    m = xgb.train(params, dt, MAX_ROUNDS, evals=[(dv, "valid")], obj=obj,
                  custom_metric=gbrank.xgboost.metric(f"ndcg@{K}"),
                  early_stopping_rounds=PATIENCE, verbose_eval=False)
    s = m.predict(xgb.DMatrix(Xt), iteration_range=(0, m.best_iteration + 1),
                  output_margin=True)
    return s, int(m.best_iteration) + 1, float(m.best_score)


class _CatBoostNDCG:
    """gbrank's NDCG@K of the validation set as a CatBoost eval metric. CatBoost hands an
    eval metric whole data sets in row order (the learning set too, every round: that one
    is not watched and scores 0)."""

    def __init__(self, y: np.ndarray, group: np.ndarray) -> None:
        self.y, self.group, self.checked = y, group, False

    def is_max_optimal(self) -> bool:
        return True

    def evaluate(self, approxes, target, weight):
        if len(target) != self.y.size:
            return 0.0, 1.0
        if not self.checked:  # the rows arrive in the order given
            if not np.array_equal(np.asarray(target, dtype=np.float64), self.y):
                raise RuntimeError("CatBoost reordered the validation rows")
            self.checked = True
        return ndcg(self.y, np.asarray(approxes[0]), self.group, K), 1.0

    def get_final_error(self, error, weight):
        return error


def _cb(cfg: dict, seed: int, train, valid, Xt):
    from catboost import CatBoost, Pool

    def pool(X, y, g):
        return Pool(X, y, group_id=np.repeat(np.arange(g.size), g))

    if train[0].shape[0] == valid[0].shape[0]:
        raise RuntimeError("the eval metric tells the sets apart by their sizes")
    params = {"loss_function": cfg["objective"], **learner_params("cb", seed),
              "iterations": MAX_ROUNDS, "eval_metric": _CatBoostNDCG(valid[1], valid[2]),
              "od_type": "Iter", "od_wait": PATIENCE, "use_best_model": True,
              **cfg["params"]}
    m = CatBoost(params)
    with warnings.catch_warnings():  # CatBoost tries (and fails) to numba-compile it
        warnings.simplefilter("ignore")
        m.fit(pool(*train), eval_set=pool(*valid))
    s = m.predict(Xt, prediction_type="RawFormulaVal")
    best = m.get_best_iteration()
    return s, int(best) + 1, float(m.get_best_score()["validation"]["_CatBoostNDCG"])


def train_once(cfg: dict, seed: int, data) -> dict:
    train, valid, (Xt, yt, gt) = data
    t0 = time.perf_counter()
    s, rounds, valid_score = {"lgb": _lgb, "xgb": _xgb, "cb": _cb}[cfg["booster"]](
        cfg, seed, train, valid, Xt)
    seconds = time.perf_counter() - t0
    per_query = ndcg_per_query(yt, s, gt, K).values
    return {"ndcg": float(np.mean(per_query)), "valid": valid_score, "rounds": rounds,
            "seconds": seconds, "per_query": [round(float(v), 6) for v in per_query]}


def jobs(sets, names) -> list[tuple[str, int, str, int]]:
    cfgs = configs()
    return [(st, u, n, s) for st in sets for u in UNITS for n in names
            for s in (SEEDS if cfgs[n]["random"] else SEEDS[:1])]


def shard_files() -> list[Path]:
    return sorted(RESULTS.glob("learner_attribution_shard*.json"))


def run(sets, names, shard: tuple[int, int], out: Path) -> None:
    cfgs = configs()
    done = json.loads(out.read_text()) if out.exists() else {}
    elsewhere = set()
    for p in shard_files():
        if p != out:
            elsewhere.update(json.loads(p.read_text()))
    todo = [j for j in jobs(sets, names)[shard[0]::shard[1]]
            if "|".join(map(str, j)) not in done and "|".join(map(str, j)) not in elsewhere]
    print(f"{len(todo)} trainings to run", flush=True)
    last_save = time.perf_counter()
    for i, (st, u, n, s) in enumerate(todo):
        key = f"{st}|{u}|{n}|{s}"
        done[key] = train_once(cfgs[n], s, load(st, u))
        r = done[key]
        print(f"[{i + 1}/{len(todo)}] {key} {r['ndcg']:.4f} ({r['rounds']} rounds, "
              f"{r['seconds']:.1f} s)", flush=True)
        if time.perf_counter() - last_save > 30 or i == len(todo) - 1:
            out.write_text(json.dumps(done))
            last_save = time.perf_counter()


# ------------------------------------------------------------------------------- report


def merge() -> dict:
    runs: dict = {}
    for p in shard_files():
        runs.update(json.loads(p.read_text()))
    return runs


def summarise(runs: dict) -> dict:
    """Per set and configuration: unit means (over seeds), seed SD, query means, times."""
    cfgs = configs()
    out: dict = {}
    for st in SETS:
        for n, cfg in cfgs.items():
            seeds = SEEDS if cfg["random"] else SEEDS[:1]
            keys = [[f"{st}|{u}|{n}|{s}" for s in seeds] for u in UNITS]
            if not all(k in runs for ks in keys for k in ks):
                continue
            vals = np.array([[runs[k]["ndcg"] for k in ks] for ks in keys])
            valid = np.array([[runs[k]["valid"] for k in ks] for ks in keys])
            # per test query, mean over seeds (rank: and over the splits, one test set)
            pq = [np.mean([runs[k]["per_query"] for k in ks], axis=0) for ks in keys]
            per_query = (np.mean(pq, axis=0) if st == "rank" else np.concatenate(pq))
            out.setdefault(st, {})[n] = {
                "units": vals.mean(axis=1).tolist(),
                "by_seed": vals.tolist(),
                "valid": valid.mean(axis=1).tolist(),
                # the SD over seeds within a unit, pooled over units
                "seed_sd": (float(np.sqrt(np.mean(np.var(vals, axis=1, ddof=1))))
                            if len(seeds) > 1 else None),
                "rounds": float(np.mean([runs[k]["rounds"] for ks in keys for k in ks])),
                "seconds": float(np.mean([runs[k]["seconds"] for ks in keys for k in ks])),
                "per_query": per_query.tolist(),
                "seeds": len(seeds),
            }
    return out


def _fmt_mean(v) -> str:
    v = np.asarray(v)
    return f"{v.mean():.4f} ± {v.std(ddof=1) / np.sqrt(v.size):.4f}"


def _delta(s: dict, n: str, base: str = BASE) -> str:
    if n == base:
        return "—"
    return paired_difference(s[n]["units"], s[base]["units"]).cell()


def _delta_q(s: dict, n: str, base: str = BASE) -> str:
    if n == base:
        return "—"
    d = paired_difference(s[n]["per_query"], s[base]["per_query"])
    return f"{d.mean:+.4f} ± {d.se:.4f}"


def _table(summary: dict, names: list[str], sets: list[str]) -> list[str]:
    head = "| configuration | " + " | ".join(
        f"{st}: NDCG@10 | {st}: Δ vs `{BASE}` (wins)" for st in sets) + " |"
    lines = [head, "|---|" + "---:|---:|" * len(sets)]
    for n in names:
        if not any(n in summary.get(st, {}) for st in sets):
            continue
        cells = []
        for st in sets:
            s = summary.get(st, {})
            if n not in s or BASE not in s:
                cells += ["", ""]
                continue
            cells += [_fmt_mean(s[n]["units"]), _delta(s, n)]
        lines.append(f"| `{n}` | " + " | ".join(cells) + " |")
    return lines


def _best(s: dict, prefix: str, by: str) -> str | None:
    names = [n for n in s if n.startswith(prefix)]
    if not names:
        return None
    return max(names, key=lambda n: np.mean(s[n][by]))


MARKER = "<!-- Everything below is generated by learner_attribution.py --report. -->"


def _knob_tables(summary: dict, sets: list[str]) -> list[str]:
    """Each knob against the same objective without it, per set and booster."""
    lines = []
    for title, prefix, objs, knobs in (
            ("LightGBM", "lgb", LGB_OBJECTIVES, {**LGB_KNOBS, **LGB_BASE_ONLY,
                                                 **GBRANK_KNOBS}),
            ("XGBoost", "xgb", XGB_OBJECTIVES, {**XGB_KNOBS, "qb0.7": {}}),
            ("CatBoost", "cb", CB_OBJECTIVES, CB_KNOBS)):
        for st in sets:
            s = summary[st]
            lines += ["", f"### {title}, {st}", "",
                      "| knob | " + " | ".join(f"`{o}`" for o in objs) + " |",
                      "|---|" + "---:|" * len(objs)]
            for kn in knobs:
                if not kn:
                    continue
                cells = []
                for o in objs:
                    a, b = f"{prefix}:{o}+{kn}", f"{prefix}:{o}"
                    cells.append(paired_difference(s[a]["units"], s[b]["units"]).cell()
                                 if a in s and b in s else "")
                if any(cells):
                    lines.append(f"| {kn} | " + " | ".join(cells) + " |")
    return lines


def _for_json(summary: dict) -> dict:
    """The summary without per-query values (they stay in the shards): the paired
    difference over test queries against the base instead."""
    out: dict = {}
    for st, by_name in summary.items():
        for n, v in by_name.items():
            row = {k: x for k, x in v.items() if k != "per_query"}
            if BASE in by_name:
                d = paired_difference(v["per_query"], by_name[BASE]["per_query"])
                row["delta_queries"] = {"mean": d.mean, "se": d.se, "n": d.n}
            out.setdefault(st, {})[n] = row
    return out


def probe_bagging_by_query() -> list[str]:
    """What LightGBM's bagging_by_query does to the training scores (MQ2008 fold 2)."""
    import lightgbm as lgb

    from gbrank.objectives import LambdaRank

    (X, y, g), _, _ = load("mq2008", 2)
    bag = {"bagging_by_query": True, "bagging_fraction": 0.7, "bagging_freq": 1}
    out = []
    for label, obj, extra, rounds in (
            ("native lambdarank, bagging_by_query, 1 round", "lambdarank", bag, 1),
            ("native lambdarank, bagging_by_query, 10 rounds", "lambdarank", bag, 10),
            ("native lambdarank, row bagging 0.7, 10 rounds", "lambdarank",
             {"bagging_fraction": 0.7, "bagging_freq": 1}, 10),
            ("gbrank LambdaRank(), bagging_by_query, 10 rounds", LambdaRank(), bag, 10)):
        seen: dict = {}

        def keep(preds, data, seen=seen):  # the training scores LightGBM holds
            seen["score"] = np.array(preds, dtype=np.float64)
            return "score", 0.0, True

        dt = lgb.Dataset(X, y, group=g)
        m = lgb.train({"objective": obj, "learning_rate": LR, "num_threads": 1, "seed": 0,
                       "deterministic": True, "verbose": -1, "metric": "None", **extra},
                      dt, rounds, valid_sets=[dt], feval=keep)
        off = np.abs(seen["score"] - m.predict(X, raw_score=True)) > 1e-9
        in_bag = [t["tree_structure"]["internal_count"] for t in m.dump_model()["tree_info"]]
        zero = int(np.sum(seen["score"][off] == 0.0))
        out.append(f"| {label} | {min(in_bag)}–{max(in_bag)} of {X.shape[0]} | {off.sum()} "
                   f"| {zero} | {seen['score'][0]:+.2f} (model: "
                   f"{m.predict(X[:1], raw_score=True)[0]:+.2f}) |")
    return [f"LightGBM {lgb.__version__}, MQ2008 fold 2 training part, learning rate {LR}. "
            "*Rows in a tree*: the root's count per tree (the bag). *Off*: rows whose "
            "training score (what the objective and the training metric see) differs "
            "from the model's own prediction of the row.", "",
            "| training | rows in a tree | rows off | of them at 0 | row 0: training score |",
            "|---|---|---:|---:|---|", *out]


def probe_catboost_objective() -> list[str]:
    """What a Python custom objective receives from CatBoost on data with group ids."""
    import catboost
    from catboost import CatBoost, Pool

    (X, y, g), _, _ = load("mq2008", 1)
    calls: list = []

    class Record:
        def calc_ders_range(self, *args):
            calls.append((len(args), len(args[0])))
            return [(float(t) - float(a), -1.0) for a, t in zip(args[0], args[1],
                                                                  strict=True)]

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        CatBoost({"loss_function": Record(), "eval_metric": "RMSE", "iterations": 1,
                  "thread_count": 1,
                  "verbose": 0, "allow_writing_files": False}).fit(
            Pool(X, y, group_id=np.repeat(np.arange(g.size), g)))
    sizes = sorted({n for _, n in calls})
    bounds, pos, ends, cut = set(np.cumsum(g).tolist()), 0, 0, 0
    for _, n in calls:  # consecutive blocks cover the rows in order, pass after pass
        pos += n
        if pos >= X.shape[0]:
            pos = 0
            continue
        ends, cut = ends + 1, cut + (pos not in bounds)
    return [f"CatBoost {catboost.__version__}: a custom objective (an object with "
            "`calc_ders_range`, the only kind `CatBoost(loss_function=...)` takes besides "
            "`calc_ders_multi`) on a `Pool` with `group_id` (MQ2008 fold 1, "
            f"{X.shape[0]} rows, {g.size} queries) is accepted and called {len(calls)} "
            f"times in one round with {sorted({a for a, _ in calls})} arguments "
            "(approxes, targets, weights: no group ids, no offset) on blocks of "
            f"{', '.join(map(str, sizes))} rows; {cut} of the {ends} block ends inside the "
            "data fall inside a query, so a listwise objective would see cut queries."]


def _main_effects(summary: dict, sets: list[str]) -> list[str]:
    """Objective against knob over the complete LightGBM grid (every knob measured for
    all four objectives, bagging_by_query left out): the spread of the objectives'
    means over knobs, and of the knobs' means over objectives."""
    knobs = [k for k in LGB_KNOBS if "bq" not in k]
    lines = ["| set | objectives: mean over knobs (relative to lambdarank) | spread "
             "| knobs: mean over objectives (relative to plain), lowest → highest | spread |",
             "|---|---|---:|---|---:|"]
    for st in sets:
        s = summary[st]
        if not all(f"lgb:{o}" + (f"+{k}" if k else "") in s
                   for o in LGB_OBJECTIVES for k in knobs):
            continue
        grid = np.array([[np.mean(s[f"lgb:{o}" + (f"+{k}" if k else "")]["units"])
                          for o in LGB_OBJECTIVES] for k in knobs])
        obj = grid.mean(axis=0) - grid.mean(axis=0)[0]
        kn = grid.mean(axis=1) - grid.mean(axis=1)[0]
        order = np.argsort(kn)
        lines.append(
            f"| {st} | " + ", ".join(f"`{o}` {v:+.4f}" for o, v in zip(LGB_OBJECTIVES, obj,
                                                                          strict=True))
            + f" | {np.ptp(obj):.4f} | "
            + ", ".join(f"{knobs[i] or 'plain'} {kn[i]:+.4f}" for i in order)
            + f" | {np.ptp(kn):.4f} |")
    return lines


def _catboost_vs_best(summary: dict, sets: list[str]) -> list[str]:
    lines = ["| set | CatBoost (defaults) | against | Δ (wins) | Δ over test queries ± SE |",
             "|---|---|---|---:|---:|"]
    for st in sets:
        s = summary[st]
        rivals = [(f"best LightGBM by test: `{_best(s, 'lgb:', 'units')}`",
                   _best(s, "lgb:", "units")),
                  (f"best LightGBM by validation: `{_best(s, 'lgb:', 'valid')}`",
                   _best(s, "lgb:", "valid")),
                  (f"best XGBoost by test: `{_best(s, 'xgb:', 'units')}`",
                   _best(s, "xgb:", "units")),
                  ("`lgb:lambdarank+et`", "lgb:lambdarank+et")]
        for cb in ("cb:YetiRank", "cb:LambdaMart"):
            for label, r in rivals:
                if cb in s and r in s:
                    d = paired_difference(s[cb]["units"], s[r]["units"])
                    q = paired_difference(s[cb]["per_query"], s[r]["per_query"])
                    lines.append(f"| {st} | `{cb}` | {label} | {d.cell()} "
                                 f"| {q.mean:+.4f} ± {q.se:.4f} |")
    return lines


def report(runs: dict) -> str:
    summary = summarise(runs)
    cfgs = configs()
    sets = [st for st in SETS if st in summary]
    (RESULTS / "learner_attribution.json").write_text(json.dumps(
        {"protocol": {"learning_rate": LR, "max_rounds": MAX_ROUNDS, "patience": PATIENCE,
                      "k": K, "seeds": list(SEEDS), "units": list(UNITS)},
         "configs": cfgs, "summary": _for_json(summary)}, indent=1))
    lines = [
        MARKER, "",
        "## Tables", "",
        f"{len(runs)} trainings. Test NDCG@10; each configuration's value on a unit "
        "(fold or split) is the mean over its seeds (5 where the learner or the objective "
        "draws random numbers, else 1). *NDCG@10*: mean ± standard error over the 5 "
        f"units; *Δ*: `gbrank.metrics.paired_difference` against `{BASE}` (plain "
        "LightGBM lambdarank, 31 leaves) over the 5 units, mean ± SE (units won). *Δ over "
        "test queries*: the same pairing over test queries (MQ2008: the 784 queries of the "
        "five test parts, each once; rank: rank.test's 50 queries, each averaged over the "
        "5 splits), which on `rank` shows how few queries judge it.", "",
        "Names: `lgb:<objective>+<knob>`; knobs `et` extra_trees, `bq0.7` bagging_by_query "
        "with bagging_fraction 0.7 (every round), `bag0.7` row bagging 0.7, `ps<v>` "
        "path_smooth, `L<v>` num_leaves, `m<v>` min_data_in_leaf; XGBoost `ss0.7` "
        "subsample, `cbn0.7` colsample_bynode, `lg31` loss-guided 31-leaf trees, `d<v>` "
        "max_depth, `mcw10` min_child_weight 10; CatBoost `det` = Depthwise + "
        "random_strength 0 + no bootstrap, `rs0`, `noboot`, `dw` each alone.", ""]
    lines += ["### Per set: the headline configurations", ""]
    lines += _headline(summary, sets)
    lines += ["### Objective or knob: main effects over the LightGBM grid", "",
              "Over the configurations measured for all four LightGBM objectives "
              "(bagging_by_query left out): each objective's mean over the knobs, and "
              "each knob's mean over the objectives, as differences of test NDCG@10.", "",
              *_main_effects(summary, sets), "",
              "### CatBoost's defaults against the best LightGBM and XGBoost found", "",
              "Paired over the 5 units. *by test* picks the configuration with the best "
              "test mean among about a hundred (optimistic: the winner's curse); *by "
              "validation* picks by the early-stopping score on the validation parts, "
              "which a user could have done.", "", *_catboost_vs_best(summary, sets), ""]
    lines += ["### LightGBM's bagging_by_query (measured at report time)", "",
              *probe_bagging_by_query(), "",
              "### gbrank's objectives inside CatBoost (measured at report time)", "",
              *probe_catboost_objective(), ""]
    lines += ["## Each knob against the same objective without it", "",
              "Paired over the 5 units: mean ± SE (units won).", *_knob_tables(summary, sets)]
    for title, prefix in (("LightGBM", "lgb:"), ("XGBoost", "xgb:"), ("CatBoost", "cb:")):
        names = [n for n in cfgs if n.startswith(prefix)]
        lines += ["", f"## All configurations: {title}", ""] + _table(summary, names, sets)
    lines += ["", "## Seeds, rounds and run times", "",
              "Seed SD: the standard deviation of test NDCG@10 over the 5 seeds within a "
              "unit, pooled over units (— for a deterministic configuration). Rounds: the "
              "best round, mean over trainings. Seconds: one training (early stopping "
              "included), one thread, on a machine shared with other jobs.", "",
              "| configuration | " + " | ".join(
                  f"{st}: seed SD | {st}: rounds | {st}: s" for st in sets) + " |",
              "|---|" + "---:|---:|---:|" * len(sets)]
    for n in cfgs:
        cells = []
        for st in sets:
            s = summary[st].get(n)
            if s is None:
                cells += ["", "", ""]
                continue
            sd = "—" if s["seed_sd"] is None else f"{s['seed_sd']:.4f}"
            cells += [sd, f"{s['rounds']:.0f}", f"{s['seconds']:.1f}"]
        if any(cells):
            lines.append(f"| `{n}` | " + " | ".join(cells) + " |")
    path = RESULTS / "learner_attribution.md"
    # The reading above the marker is written by hand; it survives a new report.
    head = (path.read_text().split(MARKER)[0] if path.exists() and MARKER in
            path.read_text() else "# Objective × learner (issue 35)\n\n")
    text = head + "\n".join(lines) + "\n"
    path.write_text(text)
    figure(summary, sets)
    return text


def _headline(summary: dict, sets: list[str]) -> list[str]:
    rows = []
    for st in sets:
        s = summary[st]
        picks = [("LightGBM lambdarank (base)", BASE)]
        for label, prefix in (("best LightGBM by validation", "lgb:"),
                              ("best XGBoost by validation", "xgb:"),
                              ("best CatBoost by validation", "cb:"),
                              ("best LightGBM by test (optimistic)", "lgb:"),
                              ("best XGBoost by test (optimistic)", "xgb:")):
            by = "valid" if "validation" in label else "units"
            b = _best(s, prefix, by)
            if b:
                picks.append((label, b))
        for n in ("cb:YetiRank", "cb:YetiRank+det", "cb:LambdaMart", "cb:LambdaMart+det",
                  "lgb:LambdaRank()", "lgb:RankNet()", "lgb:LambdaRank()+et",
                  "lgb:RankNet()+et", "xgb:LambdaRank()"):
            if n in s:
                picks.append((n, n))
        rows += [f"#### {st}", "", "| what | configuration | NDCG@10 | Δ vs base (wins) | "
                 "Δ over test queries ± SE | seed SD |", "|---|---|---:|---:|---:|---:|"]
        for label, n in picks:
            sd = s[n]["seed_sd"]
            rows.append(f"| {label} | `{n}` | {_fmt_mean(s[n]['units'])} | {_delta(s, n)} "
                        f"| {_delta_q(s, n)} | {'—' if sd is None else f'{sd:.4f}'} |")
        rows.append("")
    return rows


# The figure's row order: plain, randomness, smoothing, tree size, combinations.
FIGURE_LGB_ROWS = ("", "et", "bag0.7", "bq0.7", "bq0.5", "bq0.9", "qb0.7", "ps1", "ps10",
                   "ps100", "L3", "L7", "L127", "m5", "m100", "m200", "et+L7", "et+m100",
                   "et+ps10", "et+L127", "et+bq0.7", "et+qb0.7")


def figure(summary: dict, sets: list[str]) -> None:
    """One heat map per booster and set: knob (rows) × objective (columns), coloured by
    the mean paired difference against plain LightGBM lambdarank."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    blocks = (("LightGBM", "lgb", LGB_OBJECTIVES, list(FIGURE_LGB_ROWS)),
              ("XGBoost", "xgb", XGB_OBJECTIVES, [*XGB_KNOBS, "qb0.7"]),
              ("CatBoost", "cb", CB_OBJECTIVES, list(CB_KNOBS)))
    fig, axes = plt.subplots(
        len(blocks), len(sets), figsize=(3.3 * len(sets) + 2.6, 17), layout="constrained",
        gridspec_kw={"height_ratios": [len(b[3]) for b in blocks]}, squeeze=False)
    lim = 0.04
    for r, (title, prefix, objs, knobs) in enumerate(blocks):
        for c, st in enumerate(sets):
            ax, s = axes[r, c], summary[st]
            grid = np.full((len(knobs), len(objs)), np.nan)
            for i, kn in enumerate(knobs):
                for j, obj in enumerate(objs):
                    n = f"{prefix}:{obj}" + (f"+{kn}" if kn else "")
                    broken = prefix == "lgb" and "bq" in kn and obj.endswith("()")
                    if broken and n in s:
                        ax.text(j, i, "no bagging", ha="center", va="center", fontsize=6.5,
                                color="0.4")
                    elif n in s and BASE in s:
                        grid[i, j] = np.mean(s[n]["units"]) - np.mean(s[BASE]["units"])
            im = ax.imshow(grid, cmap="RdBu", vmin=-lim, vmax=lim, aspect="auto")
            for i, j in zip(*np.nonzero(np.isfinite(grid)), strict=True):
                ax.text(j, i, f"{grid[i, j]:+.3f}".replace("-", "\u2212"), ha="center",
                        va="center", fontsize=7.5,
                        color="white" if abs(grid[i, j]) > 0.6 * lim else "black")
            ax.set_xticks(range(len(objs)), objs, rotation=20, ha="right", fontsize=8)
            labels = [("default" if prefix == "cb" else "plain") if not k
                      else k + (" *" if k.startswith("bq") or k.endswith("bq0.7") else "")
                      for k in knobs]
            ax.set_yticks(range(len(knobs)), labels if c == 0 else [], fontsize=8)
            ax.set_title(f"{title}, {st}", fontsize=10)
    fig.colorbar(im, ax=axes, shrink=0.4, label="test NDCG@10 − plain LightGBM lambdarank "
                 "(mean over 5 units)")
    fig.suptitle("Objective (columns) × learner knob (rows): test NDCG@10 relative to "
                 "plain LightGBM lambdarank", fontsize=11)
    fig.text(0.01, -0.012, "* bagging_by_query: LightGBM 4.7 never updates the training "
             "scores of out-of-bag rows (native objectives), and with a custom objective "
             "samples nothing (\"no bagging\").\n   qb0.7: bagging by query done in the "
             "gbrank objective (out-of-bag queries get zero gradient and hessian).\n"
             "Values: means over the 5 units (seeds averaged); their paired standard "
             "errors (0.001-0.015) are in learner_attribution.md.",
             fontsize=8, va="top")
    fig.savefig(RESULTS / "learner_attribution.png", dpi=110, bbox_inches="tight")
    plt.close(fig)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--sets", default=",".join(SETS))
    ap.add_argument("--configs", default="all",
                    help="comma-separated names, or prefixes ending in '*'")
    ap.add_argument("--shard", default="0/1")
    ap.add_argument("--report", action="store_true")
    args = ap.parse_args()
    if args.report:
        if not shard_files():  # the merged json keeps no per-query values to pair
            sys.exit(f"no learner_attribution_shard*.json in {RESULTS}: the report needs "
                     "the shards' raw runs; run the shards first (it would otherwise "
                     "overwrite the stored report with empty tables)")
        print(report(merge()))
        return
    names = list(configs())
    if args.configs != "all":
        want = args.configs.split(",")
        names = [n for n in names if n in want
                 or any(w.endswith("*") and n.startswith(w[:-1]) for w in want)]
    i, n = (int(v) for v in args.shard.split("/"))
    run(args.sets.split(","), names, (i, n), RESULTS / f"learner_attribution_shard{i}of{n}.json")


if __name__ == "__main__":
    main()
