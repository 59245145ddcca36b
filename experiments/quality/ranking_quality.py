"""Does ``LambdaRank(metric=Z)`` win Z? Held-out ranking quality with LightGBM.

Four tasks, 5-fold cross-validation (folds over queries; over rows for the group-less
task) repeated with 3 seeds (a fresh shuffle, and fresh data for the synthetic tasks):
``letor`` (LightGBM's example ``rank.train`` + ``rank.test``, 251 queries), ``mslr``
(``make_ranking(300, 100, 50)``: half the rows relevant), ``few`` (~6 % of rows relevant,
1–5 per query of 60: where ERR and MRR saturate early), ``groupless``
(``make_ranking(1, 5000, 20)``: the training folds as ONE query, the held-out fold as
one). Every objective gets the same booster settings (100 rounds, 31 leaves, learning
rate 0.1, min_data_in_leaf 50, 1 thread); held-out NDCG@10, ERR@10, MAP@10 and MRR@10
come from ``gbrank.metrics``. The paired rule of this study: a mean paired difference
≥ 0 and ≥ 3 of 5 folds with a fold-mean difference ≥ 0.

Raw per-unit scores go to ``results/ranking_quality.json`` (``--report`` rewrites the
report from it; ``--quick``: 1 seed, 2 folds, small sets, printed only; ``--xgboost`` adds
XGBoost's pair methods, ``--diagnose`` the λ statistics); ``--select`` chooses the default
smoothing shares on other seeds (``ranking_quality_select.json``); ``--datasets`` /
``--objectives`` run a subset and merge it into the saved json.
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from pathlib import Path

import numpy as np
from numba import njit

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from _paths import RESULTS, shared_data_dir  # noqa: E402
from _report import load_json, paired, pyplot, save_json, table, workqueue_threads, write  # noqa: E402

from gbrank._kernels.delta import ERR, MAP, MRR, NDCG, discounts, pair_delta, prefix_arrays  # noqa: E402
from gbrank.datasets import load_letor_files, make_ranking  # noqa: E402
from gbrank.metrics import err, mean_ap, mrr, ndcg  # noqa: E402
from gbrank.objectives import LambdaRank, RankNet  # noqa: E402

workqueue_threads()
JSON, SELECT_JSON = "ranking_quality.json", "ranking_quality_select.json"
SEEDS, SELECT_SEEDS, FOLDS, ROUNDS = (0, 1, 2), (10, 11), 5, 100
# One LightGBM thread: OpenMP's spinning barriers on the shared 2-core machine; results
# do not depend on it (the same trees up to float summation order).
PARAMS = {"num_leaves": 31, "learning_rate": 0.1, "min_data_in_leaf": 50, "verbose": -1,
          "num_threads": 1}
METRICS = ("ndcg@10", "err@10", "map@10", "mrr@10")
TARGET = {"ndcg": "ndcg@10", "err": "err@10", "map": "map@10", "mrr": "mrr@10"}
DATASETS = {
    "letor": "rank.train + rank.test (251 queries)",
    "mslr": "make_ranking(300 queries × 100, 50 features)",
    "few": "few relevant (400 queries × 60, 1–5 relevant)",
    "groupless": "group-less, one query of 5,000 rows",
}
# --select: the smoothing shares tried for the per-metric defaults, on seeds the report
# never uses, against these two rivals.
GRID = (0.0, 0.25, 0.5, 0.75, 0.9)
RIVALS = ("native lambdarank", 'LambdaRank("ndcg")')
XGB_DATASETS = ("letor", "few")
XGB_PARAMS = {"tree_method": "hist", "eta": 0.1, "max_depth": 6, "nthread": 1,
              "verbosity": 0}
XGB_BASE = "rank:ndcg topk (default, k=32)"


# -- data ----------------------------------------------------------------------------
def load(name: str, seed: int, quick: bool):
    if name == "letor":
        d = shared_data_dir()
        return (load_letor_files([d / "rank.train", d / "rank.test"])
                if (d / "rank.train").exists() else None)
    if name == "mslr":
        return make_ranking(100 if quick else 300, 100, 50, seed=seed)
    if name == "groupless":
        X, y, _ = make_ranking(1, 1500 if quick else 5000, 20, seed=seed)
        return X, y, None
    # few: 60 rows per query, grades from within-query ranks of a noisy latent score, so
    # that each query has 1–5 relevant rows (grades 1–3, the best-scoring one highest).
    rng = np.random.default_rng(1000 + seed)
    nq, m, nf = (100 if quick else 400), 60, 30
    X = rng.standard_normal((nq * m, nf))
    coef = rng.standard_normal(nf) * (rng.random(nf) < 0.4)
    latent = X @ coef / np.sqrt(max(1.0, float(np.sum(coef**2))))
    latent += 1.0 * rng.standard_normal(latent.size)
    y = np.zeros(latent.size)
    for q in range(nq):
        sl = slice(q * m, (q + 1) * m)
        n_rel = rng.integers(1, 6)
        top = np.argsort(-latent[sl])[:n_rel]
        yq = np.zeros(m)
        yq[top] = np.sort(rng.integers(1, 4, n_rel))[::-1]
        y[sl] = yq
    return X, y, np.full(nq, m, dtype=np.int64)


def folds(n_units: int, seed: int, n_folds: int):
    """Test index sets of a shuffled k-fold split of ``n_units`` units."""
    return np.array_split(np.random.default_rng(seed).permutation(n_units), n_folds)


# -- objectives ----------------------------------------------------------------------
def objectives(select: bool = False) -> dict:
    """Name → objective: each name is the Python that builds it (``native x``: LightGBM's
    built-in ``x``), ``LambdaRank("z")`` alone the documented defaults. ``select``: the two
    rivals and the smoothing grid of ``--select``."""
    names = [*RIVALS, *(f'LambdaRank("{z}", smoothing={a:g})' for z in ("err", "map", "mrr")
                        for a in GRID)] if select else [
        *RIVALS, "native rank_xendcg", "RankNet()", 'LambdaRank("ndcg", norm=True)',
        'LambdaRank(weighting="ndcg_loss1")', 'LambdaRank(weighting="ndcg_loss2")',
        # allRank's default mu, and gbrank's (the mu=1 row is the default)
        'LambdaRank(weighting="ndcg_loss2pp", mu=10)', 'LambdaRank(weighting="ndcg_loss2pp", mu=1)',
        *(f'LambdaRank("{z}"{o})' for z in ("err", "map", "mrr") for o in ("", ", smoothing=0"))]
    return {n: n.removeprefix("native ") if n.startswith("native ") else
            (lambda n=n: eval(n, {"LambdaRank": LambdaRank, "RankNet": RankNet})) for n in names}


def xgb_objectives() -> dict:
    """Name → (XGBoost params, gbrank objective or None): XGBoost ≥ 2 builds LambdaMART
    pairs from each row's top-k neighbours ("topk", k = lambdarank_num_pair_per_sample,
    32 if unset) or by sampling that many partners per row ("mean")."""
    nd = {"objective": "rank:ndcg", "lambdarank_pair_method": "topk"}
    mean = dict(nd, lambdarank_pair_method="mean")
    return {
        XGB_BASE: (nd, None),
        "rank:ndcg topk, k=10": (dict(nd, lambdarank_num_pair_per_sample=10), None),
        "rank:ndcg mean, 1 pair/row": (dict(mean, lambdarank_num_pair_per_sample=1), None),
        "rank:ndcg mean, 8 pairs/row": (dict(mean, lambdarank_num_pair_per_sample=8), None),
        'gbrank LambdaRank("ndcg")': ({}, lambda: LambdaRank("ndcg")),
        'gbrank LambdaRank(weighting="ndcg_loss2pp")': (
            {}, lambda: LambdaRank(weighting="ndcg_loss2pp")),
    }


def default_smoothing(z: str) -> float:
    return LambdaRank(z)._params().smoothing


# -- one unit ------------------------------------------------------------------------
def run_unit(X, y, group, test_units, spec, seed: int, max_grade: int,
             xgb_params: dict | None = None) -> dict:
    """Train on all but ``test_units`` (queries, or rows of group-less data) with LightGBM
    (``xgb_params`` None) or XGBoost, and score the held-out units."""
    if group is None:  # group-less: folds over rows, each side one query
        test = np.zeros(y.size, dtype=bool)
        test[test_units] = True
        g_tr, g_te = [int((~test).sum())], [int(test.sum())]
    else:
        qtest = np.zeros(group.size, dtype=bool)
        qtest[test_units] = True
        test = np.repeat(qtest, group)
        g_tr, g_te = group[~qtest], group[qtest]
    obj = spec if isinstance(spec, str) or spec is None else spec()
    if xgb_params is None:
        import lightgbm as lgb

        booster = lgb.train(dict(PARAMS, objective=obj, seed=seed),
                            lgb.Dataset(X[~test], y[~test], group=g_tr), num_boost_round=ROUNDS)
        s = booster.predict(X[test])
    else:
        import xgboost as xgb

        import gbrank.xgboost

        p = dict(XGB_PARAMS, seed=seed, **xgb_params)
        if obj is not None:
            p["disable_default_eval_metric"] = 1
        booster = xgb.train(p, xgb.DMatrix(X[~test], y[~test], group=g_tr),
                            num_boost_round=ROUNDS,
                            obj=None if obj is None else gbrank.xgboost.objective(obj))
        s = booster.predict(xgb.DMatrix(X[test]))
    g = None if group is None else g_te
    return {"ndcg@10": ndcg(y[test], s, g, k=10),
            "err@10": err(y[test], s, g, k=10, max_grade=max_grade),
            "map@10": mean_ap(y[test], s, g, k=10), "mrr@10": mrr(y[test], s, g, k=10)}


def run(saved: dict, datasets, names, quick: bool, seeds, xgboost: bool = False,
        path: str | Path | None = None) -> dict:
    """Every (dataset, seed, fold, objective) unit into ``saved`` (``xgboost``: XGBoost's
    pair methods into ``saved["_xgboost"]``), saved to ``path`` after each data set."""
    objs = xgb_objectives() if xgboost else {
        n: (None, o) for n, o in {**objectives(), **objectives(True)}.items()}
    seeds, n_folds, t_start = seeds[:1] if quick else seeds, 2 if quick else FOLDS, time.time()
    for ds in datasets:
        block = (saved.setdefault("_xgboost", {}) if xgboost else saved).setdefault(ds, {})
        for seed in seeds:
            if (data := load(ds, seed, quick)) is None:
                print(f"[{ds}] reference data absent, skipped", flush=True)
                break
            X, y, group = data
            for f, test_units in enumerate(folds(y.size if group is None else group.size,
                                                 seed, n_folds)):
                for name in names:
                    xgb_params, spec = objs[name]
                    res = run_unit(X, y, group, test_units, spec, seed, int(y.max()), xgb_params)
                    for m, v in res.items():
                        block.setdefault(name, {}).setdefault(m, {})[f"{seed}/{f}"] = v
                    print(f"[{'xgb ' if xgboost else ''}{ds} seed {seed} fold {f}] {name:45s} "
                          + " ".join(f"{m} {v:.4f}" for m, v in res.items())
                          + f" ({(time.time() - t_start) / 60:.1f} min)", flush=True)
        if path is not None and not quick:
            save_json(path, saved, sort_keys=True)
    return saved


# -- the λ signal of each metric (--diagnose) -----------------------------------------
DIAG_ROUNDS = (0, 10, 50)


@njit
def _delta_matrix(code, lab, k, tab):
    """|ΔZ| of every pair a < b with a < k of labels ``lab`` in ranked order."""
    n = lab.size
    pre, sc, out = np.zeros((3, n + 1)), np.zeros(4), np.zeros((n, n))
    prefix_arrays(code, lab, k, tab, 1.0, False, discounts(n), pre, sc)
    for a in range(min(k, n)):
        for b in range(a + 1, n):
            out[a, b] = pair_delta(code, a, b, k, pre, sc)
    return out


def _diag_stats(z: str, y, s, group, max_grade: int, k: int = 30) -> dict:
    """Where LambdaRank(z)'s signal lives at scores ``s`` (all queries of one set)."""
    code = {"ndcg": NDCG, "err": ERR, "map": MAP, "mrr": MRR}[z]
    # smoothing=0: the signal of |ΔZ| alone (the defaults mix in |ΔNDCG|).
    obj = LambdaRank(z, smoothing=0.0, **({"max_grade": max_grade} if z == "err" else {}))
    g, _ = obj.grad_hess(y, s, group)
    gains = np.exp2(np.arange(max_grade + 1.0)) - 1.0
    tab = gains / 2.0**max_grade if z == "err" else gains
    eligible = nonzero = mass90 = rows_nz = rows = dead = 0
    top3 = total = 0.0
    cascade3 = []
    off = np.concatenate([[0], np.cumsum(group)])
    for q in range(group.size):
        yq, sq, gq = y[off[q]:off[q + 1]], s[off[q]:off[q + 1]], g[off[q]:off[q + 1]]
        order = np.argsort(-sq, kind="stable")
        lab = yq[order]
        dm = _delta_matrix(code, lab, k, tab)
        tri = np.triu(np.ones_like(dm, dtype=bool), 1)
        tri[min(k, lab.size):, :] = False
        el = tri & (lab[:, None] != lab[None, :])
        w = np.sort(dm[el])[::-1]
        eligible += int(el.sum())
        nonzero += int((w > 0).sum())
        if w.sum() > 0:
            mass90 += int(np.searchsorted(np.cumsum(w), 0.9 * w.sum()) + 1)
        a = np.abs(gq[order])
        top3 += a[:3].sum()
        total += a.sum()
        rows += yq.size
        rows_nz += int((np.abs(gq) > 0).sum())
        dead += int(a.sum() == 0)
        R = tab[lab.astype(int)] if z == "err" else (gains / 2.0**max_grade)[lab.astype(int)]
        cascade3.append(float(np.prod(1.0 - R[:3])))
    return {"pairs_nonzero": nonzero / max(eligible, 1),
            "pairs_90pct_mass": mass90 / max(eligible, 1),
            "rows_nonzero": rows_nz / rows, "top3_mass": top3 / max(total, 1e-300),
            "queries_no_signal": dead / group.size, "lambda_per_query": total / group.size,
            "cascade_after_3": float(np.mean(cascade3))}


def diagnose(quick: bool = False) -> dict:
    """Statistics of each metric's λ's at the scores of LambdaRank("ndcg") after r
    rounds (r = 0: all scores 0, the first round), on the training data of seed 0."""
    import lightgbm as lgb

    out = {}
    for ds in ("letor", "mslr", "few"):
        data = load(ds, 0, quick)
        if data is None:
            continue
        X, y, group = data
        rel = np.add.reduceat((y >= 1).astype(float),
                              np.concatenate([[0], np.cumsum(group)[:-1]]))
        out[ds] = {"relevant_per_query": float(rel.mean()), "queries": int(group.size),
                   "rounds": {}}
        booster = lgb.train(dict(PARAMS, objective=LambdaRank("ndcg"), seed=0),
                            lgb.Dataset(X, y, group=group), num_boost_round=max(DIAG_ROUNDS))
        for r in DIAG_ROUNDS:
            s = booster.predict(X, num_iteration=r) if r else np.zeros(y.size)
            out[ds]["rounds"][str(r)] = {z: _diag_stats(z, y, s, group, int(y.max()))
                                         for z in TARGET}
            print(f"[diagnose {ds} round {r}] done", flush=True)
    return out


# -- the paired rule -----------------------------------------------------------------
def compare(block: dict, a: str, b: str, metric: str):
    """``a`` − ``b`` on the units both have, and by this study's rule: the paired
    difference, and the folds (units averaged over seeds) with a mean difference ≥ 0."""
    keys = sorted(set(block[a][metric]) & set(block[b][metric]))
    p = paired([block[a][metric][k] - block[b][metric][k] for k in keys])
    by_fold: dict = {}
    for k, v in zip(keys, p.diffs, strict=True):
        by_fold.setdefault(k.split("/")[1], []).append(v)
    fold_d = np.array([np.mean(v) for v in by_fold.values()])
    return p, int((fold_d >= 0).sum()), len(fold_d)


def verdict(block: dict, name: str, rival: str, metric: str):
    """(passes the paired rule, mean difference, folds ≥ 0, folds)."""
    p, fw, nf = compare(block, name, rival, metric)
    return p.mean >= 0 and 5 * fw >= 3 * nf, p.mean, fw, nf


def analyse(block: dict) -> dict:
    """Per metric: each objective's mean over the common units, its paired difference
    against the best *other* objective and the units it won."""
    names = [n for n in {**objectives(), **objectives(True)} if n in block]
    out = {"names": names}
    for m in METRICS:
        keys = sorted(set.intersection(*(set(block[n][m]) for n in names)))
        a = np.array([[block[n][m][k] for k in keys] for n in names])
        means = a.mean(axis=1)
        ps = [paired(a[i] - a[max([j for j in range(len(names)) if j != i] or [i],
                                   key=lambda j: means[j])]) for i in range(len(names))]
        out[m] = {"mean": means.tolist(), "diff": [p.mean for p in ps],
                  "wins": [p.wins for p in ps], "units": len(keys)}
    return out


# -- report --------------------------------------------------------------------------
def report(saved: dict, quick: bool = False) -> str:
    lines = [
        "# Does LambdaRank(metric=Z) win Z?", "",
        "Written by `experiments/quality/ranking_quality.py`"
        + (" --quick (smoke run)" if quick else "")
        + ". LightGBM, 100 rounds, 31 leaves, learning rate 0.1, min_data_in_leaf 50, "
        "1 thread; 5-fold CV × 3 seeds = 15 paired units per cell (folds over queries; "
        "over rows for the group-less task, where each side is ONE query). Held-out "
        "metrics from `gbrank.metrics`, all @10. Default LambdaRank options unless "
        "shown: truncation 30, σ = 1, no norm.", "",
        "`LambdaRank(\"z\")` with its documented defaults is the row marked ◀ default "
        "(default smoothing share: "
        + ", ".join(f"{z} {default_smoothing(z):g}" for z in TARGET) + ").", "",
        "Each cell: mean over units; below it, the paired difference against the best "
        "*other* objective of that column (mean, and units won out of 15). **Bold**: "
        "best mean of the column.", ""]
    lines += _summary(saved) + [
        "A reading of these tables, written by hand (the script writes tables only): "
        "`ranking_quality_reading.md`, which names the run it read.", ""]
    for ds, title in DATASETS.items():
        if ds not in saved:
            continue
        res, rows = analyse(saved[ds]), []
        for i, n in enumerate(res["names"]):
            cells = [(f"**{r['mean'][i]:.4f}**" if int(np.argmax(r["mean"])) == i
                      else f"{r['mean'][i]:.4f}")
                     + f" ({r['diff'][i]:+.4f}, {r['wins'][i]}/{r['units']})"
                     for r in (res[m] for m in METRICS)]
            default = n in {f'LambdaRank("{z}")' for z in TARGET} and n != 'LambdaRank("ndcg")'
            rows.append([n + (" ◀ default" if default else ""), *cells])
        lines += [f"## {title}", "", *table(["objective", *METRICS], rows), "",
                  *_verdicts(saved[ds])]
    if "_xgboost" in saved:
        lines += _xgb_report(saved["_xgboost"])
    select = load_json(SELECT_JSON)
    if select is not None and not quick:
        lines += ["## How the default smoothing shares were chosen", "",
                  f"`--select`: LightGBM as above on seeds {SELECT_SEEDS} (10 units per "
                  "data set, never reported above), α ∈ "
                  f"{{{', '.join(f'{a:g}' for a in GRID)}}}; per cell the paired mean "
                  "difference on Z@10 against native `lambdarank` / `LambdaRank(\"ndcg\")` "
                  "and the folds (of 5) with a fold-mean difference ≥ 0; ✗: fails the "
                  "paired rule.", "", *selection(select)[1]]
    if "_diagnosis" in saved:
        lines += _diag_report(saved["_diagnosis"])
    return "\n".join(lines)


def _summary(saved: dict) -> list:
    """Z@10 at a glance: the metric's own objective (defaults and pure |ΔZ|) against
    LambdaRank("ndcg"), native lambdarank and the best objective of the column."""
    rows = []
    for z, m in ((z, m) for z, m in TARGET.items() if z != "ndcg"):
        own = f'LambdaRank("{z}")'
        for ds, block in ((ds, saved[ds]) for ds in DATASETS if saved.get(ds)):
            res = analyse(block)
            if any(n not in res["names"] for n in (*RIVALS, own)):
                continue
            mean = dict(zip(res["names"], res[m]["mean"], strict=True))
            best = max(mean, key=mean.get)

            def cell(n, m=m, block=block, mean=mean):
                return "—" if n not in block else \
                    f"{mean[n]:.4f} ({compare(block, n, RIVALS[1], m)[0].mean:+.4f})"

            verdicts = [f"{'win/tie' if ok else 'loses'} ({d:+.4f}, {fw}/{nf})"
                        for ok, d, fw, nf in (verdict(block, own, r, m) for r in RIVALS)]
            rows.append([m, ds, f"{cell(own)} α={default_smoothing(z):g}",
                         cell(f'LambdaRank("{z}", smoothing=0)'), f"{mean[RIVALS[1]]:.4f}",
                         f"{mean[RIVALS[0]]:.4f}", " / ".join(verdicts),
                         f"{best} {mean[best]:.4f}"])
    return ["## At a glance: does the metric's own objective win its metric?", "",
            "Mean Z@10 over the 15 units; in brackets the paired mean difference against "
            '`LambdaRank("ndcg")`; *verdict*: the paired rule (mean paired '
            "difference ≥ 0 and ≥ 3 of 5 folds with a fold-mean difference ≥ 0) against "
            'native `lambdarank` / against `LambdaRank("ndcg")`.', "",
            *table(["Z@10", "data", 'LambdaRank("z") (default, α)',
                    'LambdaRank("z", smoothing=0)', 'LambdaRank("ndcg")', "native lambdarank",
                    'verdict vs native / vs "ndcg"', "best objective on Z"], rows, "llrrrrll"),
            ""]


def selection(sel: dict) -> tuple[dict, list]:
    """Per metric, the smoothing share of GRID that passes the paired rule in the most
    (data set, rival) cells of the selection seeds; ties broken by the larger smallest
    mean difference. Returns ({metric: α}, report lines)."""
    present = [ds for ds in DATASETS if ds in sel]
    chosen, rows = {}, []
    for z in ("err", "map", "mrr"):
        best = None
        for a in GRID:
            n = f'LambdaRank("{z}", smoothing={a:g})'
            cells, passed, diffs = [], 0, []
            for ds in present:
                if n not in sel[ds] or any(r not in sel[ds] for r in RIVALS):
                    continue
                parts = []
                for r in RIVALS:
                    ok, d, fw, nf = verdict(sel[ds], n, r, TARGET[z])
                    passed += ok
                    diffs.append(d)
                    parts.append(f"{d:+.4f} {fw}/{nf}{'' if ok else ' ✗'}")
                cells.append(" / ".join(parts))
            if not diffs:
                continue
            if best is None or (passed, min(diffs)) > best[0]:
                best = ((passed, min(diffs)), a)
            rows.append([z, f"{a:g}", f"{passed}/{len(diffs)}", f"{min(diffs):+.4f}", *cells])
        if best is not None:
            chosen[z] = best[1]
    lines = table(["Z", "α", "cells passed", "smallest mean diff",
                   *(f"{ds}: vs native / vs ndcg" for ds in present)], rows,
                  "lrrr" + "l" * len(present))
    return chosen, lines + ["", "Chosen (most cells passed, then the largest smallest "
                            "difference): " + ", ".join(f"{z} α = {a:g}"
                                                        for z, a in chosen.items()) + ".", ""]


def _verdicts(block: dict) -> list:
    """The paired rule: LambdaRank(Z) vs native lambdarank and vs LambdaRank("ndcg")."""
    cands = [(f'LambdaRank("{z}"{o})', m) for o in ("", ", smoothing=0") for z, m in TARGET.items()
             if f'LambdaRank("{z}"{o})' in block]
    cands += [(n, "ndcg@10") for n in block if n.startswith("LambdaRank(weighting=")]
    rows = []
    for n, m, r in ((n, m, r) for n, m in cands for r in RIVALS if r != n and r in block):
        p, fw, nf = compare(block, n, r, m)
        ok = "wins/ties" if p.mean >= 0 and 5 * fw >= 3 * nf else "loses"
        rows.append([n, m, r, f"{p.mean:+.4f}", f"{p.wins}/{p.n}", f"{fw}/{nf}", ok])
    return ["Verdicts of the paired rule (paired over 15 units; fold criterion: folds with "
            "mean difference ≥ 0, of 5):", "",
            *table(["objective", "on", "vs", "mean diff", "units won", "folds ≥ 0",
                    "verdict"], rows, "lllrrrl"), ""]


def _xgb_report(xg: dict) -> list:
    lines = ["## XGBoost's pair construction", "",
             "XGBoost 3 `rank:ndcg` with `lambdarank_pair_method` \"topk\" (pairs of each "
             "row with the top k, k = `lambdarank_num_pair_per_sample`, 32 by default) and "
             "\"mean\" (that many sampled partners per row), against gbrank's `LambdaRank` "
             "through `gbrank.xgboost.objective`. Same folds and seeds as above (15 units); "
             "XGBoost hist trees of depth 6, 100 rounds, eta 0.1, 1 thread. Each cell: mean; "
             "in brackets the paired difference against the default `topk` and the units "
             "won of 15.", ""]
    for ds in XGB_DATASETS:
        block = xg.get(ds, {})
        if XGB_BASE not in block:
            continue
        rows = []
        for name in [n for n in xgb_objectives() if n in block]:
            cells = [f"{np.mean(list(block[name][m].values())):.4f}" for m in METRICS]
            if name != XGB_BASE:
                cells = [f"{v} ({p.mean:+.4f}, {p.wins}/{p.n})" for v, p in zip(
                    cells, (compare(block, name, XGB_BASE, m)[0] for m in METRICS), strict=True)]
            rows.append([name, *cells])
        lines += [f"**{DATASETS[ds]}**", "", *table(["objective", *METRICS], rows), ""]
    return lines


def _diag_report(diag: dict) -> list:
    rows = [[ds, r, z, *(f"{st[k]:.3f}" for k in ("pairs_nonzero", "pairs_90pct_mass",
                                                   "rows_nonzero", "top3_mass",
                                                   "queries_no_signal")),
             f"{st['lambda_per_query']:.3g}"]
            for ds, d in diag.items() for r, by_z in d["rounds"].items()
            for z, st in by_z.items()]
    cascade = [[ds, d["queries"], f"{d['relevant_per_query']:.1f}",
                " / ".join(f"{d['rounds'][r]['err']['cascade_after_3']:.3f}"
                           for r in d["rounds"])] for ds, d in diag.items()]
    return ["## Why ERR and MRR lose", "",
            "Where each metric's λ-signal lives, on the training data (seed 0), at the scores "
            "of `LambdaRank(\"ndcg\")` after r rounds (r = 0: all scores 0, the first "
            "round). Pairs: differently-labelled pairs with the better-ranked row in the top "
            "30 (the pairs LambdaRank uses). *pairs ≠ 0*: share of them with |ΔZ| > 0; "
            "*pairs 90%*: share of them that carry 90% of Σ|ΔZ|; *rows ≠ 0*: share of rows "
            "with a non-zero λ; *top-3 mass*: share of Σ|λ| on the rows ranked 1–3; "
            "*silent queries*: share of queries whose λ's are all 0; *Σ|λ|/query*: mean "
            "total gradient per query (scale).", "",
            *table(["data", "r", "Z", "pairs ≠ 0", "pairs 90%", "rows ≠ 0", "top-3 mass",
                    "silent queries", "Σ\\|λ\\|/query"], rows, "lrlrrrrrr"), "",
            *table(["data", "queries", "relevant rows per query",
                    "ERR cascade Π(1 − R) over the top 3 at r = 0 / 10 / 50"], cascade,
                   "lrrl"), ""]


def plot(saved: dict, path: Path) -> None:
    plt = pyplot()
    present = [d for d in DATASETS if d in saved]
    fig, axes = plt.subplots(1, len(present), figsize=(4.2 * len(present) + 3.5, 7.5),
                             squeeze=False)
    vmax = 0.03
    for col, ds in enumerate(present):
        ax = axes[0, col]
        res = analyse(saved[ds])
        names = res["names"]
        base = names.index("native lambdarank") if "native lambdarank" in names else 0
        d = np.array([[res[m]["mean"][i] - res[m]["mean"][base] for m in METRICS]
                      for i in range(len(names))])
        im = ax.imshow(d, cmap="RdBu", vmin=-vmax, vmax=vmax, aspect="auto")
        for i, n in enumerate(names):
            for j, m in enumerate(METRICS):
                best = int(np.argmax(res[m]["mean"])) == i
                ax.text(j, i, f"{d[i, j] * 100:+.1f}", ha="center", va="center",
                        fontsize=7.5, fontweight="bold" if best else "normal",
                        color="black" if abs(d[i, j]) < 0.6 * vmax else "white")
            for z, m in TARGET.items():  # outline the cell LambdaRank(z, ...) should win
                if n.startswith(f'LambdaRank("{z}"') and z != "ndcg":
                    ax.add_patch(plt.Rectangle((METRICS.index(m) - 0.5, i - 0.5), 1, 1,
                                               fill=False, edgecolor="black", linewidth=1.5))
        ax.set_xticks(range(len(METRICS)), [m.upper() for m in METRICS], fontsize=8)
        ax.set_title(DATASETS[ds], fontsize=9)
        ax.set_yticks(range(len(names)), names if col == 0 else [""] * len(names),
                      fontsize=8)
    cb = fig.colorbar(im, ax=axes[0, :].tolist(), shrink=0.6, pad=0.01)
    cb.set_label("held-out metric − native lambdarank's (mean of 15 units)")
    fig.suptitle("Held-out ranking quality relative to LightGBM's native lambdarank "
                 "(cell text: difference × 100; bold = best of the column; "
                 "outlined: the metric the objective targets)", fontsize=10)
    fig.savefig(path, dpi=110, bbox_inches="tight")
    plt.close(fig)


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    for flag in ("--quick", "--report", "--select", "--diagnose", "--xgboost"):
        ap.add_argument(flag, action="store_true")
    ap.add_argument("--datasets", default=",".join(DATASETS))
    ap.add_argument("--objectives", default=None, help="';'-separated names (default all)")
    args = ap.parse_args(argv)
    path, known = SELECT_JSON if args.select else JSON, objectives(args.select)
    names = list(known) if args.objectives is None else args.objectives.split(";")
    if unknown := [n for n in names if n not in known]:
        sys.exit(f"unknown objectives: {unknown}")
    saved = {} if args.quick else load_json(path, {})
    if not args.report:
        run(saved, args.datasets.split(","), names, args.quick,
            SELECT_SEEDS if args.select else SEEDS, path=path)
    if args.select:
        save_json(path, saved, sort_keys=True)
        print("\n".join(selection(saved)[1]))
        return
    if args.xgboost:
        run(saved, XGB_DATASETS, list(xgb_objectives()), args.quick, SEEDS, True, path)
    if args.quick or args.diagnose or "_diagnosis" not in saved:
        saved["_diagnosis"] = diagnose(args.quick)
    text = report(saved, args.quick)
    if args.quick:  # a smoke run must not overwrite the saved results
        plot(saved, Path(os.environ.get("TMPDIR", "/tmp")) / "ranking_quality_quick.png")
        print(text)
        return
    save_json(path, saved, sort_keys=True)
    write("ranking_quality.md", text + "\n")
    plot(saved, RESULTS / "ranking_quality.png")


if __name__ == "__main__":
    main()
