"""Held-out quality of imbalanced binary objectives with LightGBM.

    python experiments/quality/binary_quality.py            # → results/binary_quality.md
    python experiments/quality/binary_quality.py --report   # the report from its json
    python experiments/quality/binary_quality.py --select   # re-choose FBetaSurrogate's defaults

Three imbalanced tasks, ten seeds each (a fresh subsample and a stratified
train/validation/test split per seed, 50/25/25):

(a) LightGBM's ``binary.train`` + ``binary.test`` pooled and subsampled to 2% positives,
(b) scikit-learn's breast-cancer data with malignant as the positive class, subsampled to
    5% malignant,
(c) a synthetic ``make_classification`` set with 1% positives.

Objectives, all with the same booster settings and number of rounds: LightGBM's native
``binary``, ``binary`` with ``scale_pos_weight = N/P``, ``FocalLoss`` (γ = 0.5, 2, 5;
α = None; started from its ``init_score``) and ``FBetaSurrogate`` (β = 1: the whole
training set as one structured example, ``batch_size=None``; and, as the remedy for its
stalled training, random structured examples drawn afresh every round: the default, 75 rows with
a constant Hessian of 4, chosen with ``--select`` on seeds 100–109, and the earlier
recommendation, 30 rows with a Hessian of 2). Reported on the test split, as mean ± sd over
seeds: F1 at the default threshold (margin 0, i.e. p = 0.5), F1 at the threshold that
maximises F1 on the validation split (``gbrank.metrics.best_threshold``), and average
precision (scikit-learn).
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

import lightgbm as lgb
import numpy as np
from sklearn.datasets import load_breast_cancer, make_classification
from sklearn.metrics import average_precision_score
from sklearn.model_selection import train_test_split

from gbrank.metrics import best_threshold, f1
from gbrank.objectives import FBetaSurrogate, FocalLoss

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from _paths import shared_data_dir  # noqa: E402
from _report import load_json, paired, save_json, table, write  # noqa: E402

SEEDS = range(10)
PARAMS = {"learning_rate": 0.05, "num_leaves": 15, "min_data_in_leaf": 10,
          "feature_fraction": 0.9, "verbose": -1, "num_threads": 1}
ROUNDS = 200
# The FBetaSurrogate defaults (hess, batch_size) were chosen with ``--select`` on task (c)
# with seeds the report never uses, so the reported seeds are not the ones they were
# picked on.
SELECT_SEEDS = range(100, 110)
SELECT_GRID = [(h, b) for b in (15, 30, 75) for h in (1.0, 2.0, 4.0)]
JSON, SELECT_JSON = "binary_quality.json", "binary_quality_select.json"


def _subsample(X, y, rate, rng):
    """Keep every negative and enough random positives for a positive share of ``rate``."""
    pos = np.flatnonzero(y == 1)
    neg = np.flatnonzero(y == 0)
    k = max(4, int(round(rate * neg.size / (1 - rate))))
    keep = np.concatenate([neg, rng.choice(pos, size=min(k, pos.size), replace=False)])
    keep.sort()
    return X[keep], y[keep]


def task_binary_example(seed):
    d = shared_data_dir()
    if not (d / "binary.train").exists():
        return None
    a = np.vstack([np.loadtxt(d / f"binary.{p}", delimiter="\t") for p in ("train", "test")])
    return _subsample(a[:, 1:], a[:, 0], 0.02, np.random.default_rng(seed))


def task_breast_cancer(seed):
    X, y = load_breast_cancer(return_X_y=True)
    y = (y == 0).astype(np.float64)  # malignant = positive
    return _subsample(X, y, 0.05, np.random.default_rng(seed))


def task_synthetic(seed):
    X, y = make_classification(n_samples=30_000, n_features=20, n_informative=8,
                               n_redundant=4, weights=[0.99, 0.01], flip_y=0.005,
                               class_sep=0.8, random_state=100 + seed)
    return X, y.astype(np.float64)


TASKS = {
    "(a) binary.train+test, 2% positives": task_binary_example,
    "(b) breast cancer, 5% malignant": task_breast_cancer,
    "(c) synthetic, 1% positives": task_synthetic,
}


def _models(y_train):
    n_pos = float(y_train.sum())
    spw = (y_train.size - n_pos) / n_pos
    return {
        "LightGBM `binary`": ("binary", {}),
        f"`binary` + scale_pos_weight (N/P ≈ {spw:.0f})": ("binary", {"scale_pos_weight": spw}),
        "FocalLoss(γ=0.5)": (FocalLoss(gamma=0.5), {}),
        "FocalLoss(γ=2)": (FocalLoss(gamma=2.0), {}),
        "FocalLoss(γ=5)": (FocalLoss(gamma=5.0), {}),
        "FBetaSurrogate(β=1, batch_size=None): one example": (
            FBetaSurrogate(beta=1.0, batch_size=None), {}),
        "FBetaSurrogate(β=1, hess=2, batch_size=30)": (
            FBetaSurrogate(beta=1.0, hess=2.0, batch_size=30, random_state=0), {}),
        "FBetaSurrogate(β=1) ◀ default (hess=4, batch_size=75)": (
            FBetaSurrogate(beta=1.0, random_state=0), {}),
    }


def _fit_margins(objective, extra, Xtr, ytr, parts):
    """Train and return raw margins (init score included) on each of ``parts``."""
    if isinstance(objective, str):
        booster = lgb.train({**PARAMS, **extra, "objective": objective},
                            lgb.Dataset(Xtr, ytr), ROUNDS)
        return [booster.predict(X, raw_score=True) for X in parts]
    init = float(objective.init_score(ytr))
    ds = lgb.Dataset(Xtr, ytr, init_score=np.full(ytr.size, init))
    booster = lgb.train({**PARAMS, **extra, "objective": objective}, ds, ROUNDS)
    return [booster.predict(X, raw_score=True) + init for X in parts]


def evaluate(task, seed):
    data = task(seed)
    if data is None:
        return None
    X, y = data
    X_tr, X_rest, y_tr, y_rest = train_test_split(X, y, test_size=0.5, stratify=y,
                                                  random_state=seed)
    X_va, X_te, y_va, y_te = train_test_split(X_rest, y_rest, test_size=0.5, stratify=y_rest,
                                              random_state=seed)
    out = {}
    for name, (objective, extra) in _models(y_tr).items():
        s_va, s_te = _fit_margins(objective, extra, X_tr, y_tr, [X_va, X_te])
        t, _ = best_threshold(y_va, s_va, margin=True)
        out[name] = (f1(y_te, s_te, margin=True), f1(y_te, s_te, threshold=t, margin=True),
                     average_precision_score(y_te, s_te))
    stats = (int(y_tr.sum()), int(y_va.sum()), int(y_te.sum()), y.size)
    return out, stats


def select() -> dict:
    """F1 at the validation threshold on task (c), seeds SELECT_SEEDS: LightGBM
    ``binary`` and FBetaSurrogate over SELECT_GRID. Raw values to SELECT_JSON."""
    out = {}
    for seed in SELECT_SEEDS:
        X, y = task_synthetic(seed)
        X_tr, X_rest, y_tr, y_rest = train_test_split(X, y, test_size=0.5, stratify=y,
                                                      random_state=seed)
        X_va, X_te, y_va, y_te = train_test_split(X_rest, y_rest, test_size=0.5,
                                                  stratify=y_rest, random_state=seed)
        cands = {"LightGBM `binary`": "binary"}
        for h, b in SELECT_GRID:
            cands[f"hess={h:g}, batch_size={b}"] = FBetaSurrogate(
                beta=1.0, hess=h, batch_size=b, random_state=0)
        for name, obj in cands.items():
            s_va, s_te = _fit_margins(obj, {}, X_tr, y_tr, [X_va, X_te])
            t, _ = best_threshold(y_va, s_va, margin=True)
            out.setdefault(name, {})[str(seed)] = (f1(y_te, s_te, margin=True),
                                                   f1(y_te, s_te, threshold=t, margin=True))
            print(f"[select seed {seed}] {name:28s} F1@0 {out[name][str(seed)][0]:.3f} "
                  f"F1@val {out[name][str(seed)][1]:.3f}", flush=True)
    save_json(SELECT_JSON, out)
    return out


def selection_lines(sel: dict) -> list:
    base = np.array([v[1] for v in sel["LightGBM `binary`"].values()])
    rows, best = [["(LightGBM `binary`)", "—", f"{base.mean():.3f}", "—"]], None
    for name, vals in sel.items():
        if name == "LightGBM `binary`":
            continue
        a = np.array(list(vals.values()))
        p = paired(a[:, 1] - base)
        if best is None or p.mean > best[0]:
            best = (p.mean, name)
        rows.append([name, f"{a[:, 0].mean():.3f}", f"{a[:, 1].mean():.3f}",
                     f"{p.mean:+.3f} ({p.wins}/{p.n})"])
    return ["## How the FBetaSurrogate defaults were chosen", "",
            f"Task (c) on seeds {SELECT_SEEDS.start}–{SELECT_SEEDS.stop - 1} (never "
            "reported above), same booster settings: F1 of `FBetaSurrogate(β=1, hess, "
            "batch_size)` at margin 0 and at the validation threshold, and the paired "
            "difference of the latter against LightGBM `binary` at its validation "
            "threshold (mean, seeds better). Chosen: the largest mean paired difference.",
            "", *table(["FBetaSurrogate", "F1 @ 0", "F1 @ validation threshold",
                        "− `binary`, paired (seeds better)"], rows),
            "", f"Best: {best[1]} ({best[0]:+.3f}).", ""]


DIAG_ROUNDS = (0, 1, 2, 5, 10, 20, 50, 100, 199)

FINDINGS = [
    "What the diagnosis shows. With the whole training set as ONE structured example, "
    "the surrogate is a structured hinge: its gradient is non-zero only on the rows the "
    "maximiser v* flips (at most the ~180 positives, 1% of the rows, except for one "
    "round where v* takes every negative in), each ±2 against a constant Hessian of 1 "
    "per row, so a leaf's Newton step is learning_rate · Σg / (rows in the leaf): the "
    "trees chase a handful of rows. Within ~60 rounds the training positives are all "
    "above margin 0 and the negatives below (training F1 = 1) with margins of about "
    "0.02: the loss reaches its floor, the gradient is 0 everywhere and the remaining "
    "rounds add single-leaf trees. The model memorises the training positives at a tiny "
    "margin; on held-out data that ranks poorly (average precision far below `binary`'s).",
    "",
    "Remedy with a reason: many small random structured examples per round "
    "(`batch_size`). An example of 30–75 rows holds 0, 1 or 2 positives. One without a "
    "positive has Δ = 0 only if nothing is predicted positive, and taking one negative "
    "in raises Δ to 1, so the argmax takes in every negative scoring above −½: a "
    "margin of ½ per negative. One with a positive asks that positive to stand above "
    "its few negatives with a margin. The loss becomes a sum of many small margins, "
    "like a hinge loss per row, instead of one margin for the whole data set: "
    "more rows get a gradient every round, training is not separated after 200 "
    "rounds (second table above), and the random redraw each round acts like bagging. "
    "Also measured on task (c) in scratch runs (not in the table; F1 at the validation "
    "threshold; the scratch objective took steps half as long as `hess=1`): a 10× "
    "larger constant Hessian (0.408 against `binary`'s 0.499 on 5 seeds), a 50/50 "
    "mixture with logloss with the surrogate on margins/20 (0.465 against 0.457 on 10 "
    "seeds; with 20 random examples per round 0.476). "
    "The mini-batch version is the simplest that works; its defaults (75 rows, constant "
    "Hessian 4) were chosen on task (c) with seeds 100–109 (last section), and on the "
    "reported seeds 0–9 they beat `binary` + its validation-tuned threshold on F1 "
    "(+0.025 paired, 9 of 10 seeds; F1 at margin 0, no tuning, 0.472 against 0.457).",
    "",
]


def diagnose_fbeta(seed: int = 0) -> list[dict]:
    """What FBetaSurrogate's gradient looks like round after round on task (c): one record
    per objective (rows of the DIAG_ROUNDS, leaves of each round's tree)."""
    X, y = task_synthetic(seed)
    X_tr, _, y_tr, _ = train_test_split(X, y, test_size=0.5, stratify=y, random_state=seed)
    out = []
    for title, obj in (("FBetaSurrogate(β=1, batch_size=None), the training set as one "
                        "example", FBetaSurrogate(beta=1.0, batch_size=None)),
                       ("FBetaSurrogate(β=1), the default (hess=4, batch_size=75): random "
                        "examples of 75 rows, new ones every round",
                        FBetaSurrogate(beta=1.0, random_state=0))):
        rows = []

        def spy(preds, ds, obj=obj, rows=rows):
            g, h = obj.booster_grad_hess(y_tr, preds)
            nz = g != 0
            rows.append((int(nz.sum()), int((nz & (y_tr == 1)).sum()),
                         int((nz & (y_tr == 0)).sum()), float(np.abs(g).sum() / h.sum()),
                         f1(y_tr, preds, margin=True), float(np.std(preds))))
            return g, h

        trees = lgb.train({**PARAMS, "objective": spy}, lgb.Dataset(X_tr, y_tr),
                          ROUNDS).trees_to_dataframe()
        leaves = trees[trees.left_child.isna()].groupby("tree_index").size()
        out.append({"title": title, "rows": rows, "n": int(y_tr.size),
                    "positives": int(y_tr.sum()),
                    "leaves": {str(r): int(leaves.get(r, 1)) for r in DIAG_ROUNDS}})
    return out


def diagnosis_lines(diag: list[dict]) -> list:
    lines = ["## Why FBetaSurrogate loses: its gradient round after round", "",
             f"Task (c), seed 0, training split ({diag[0]['n']:,} rows, "
             f"{diag[0]['positives']} positives), "
             "the booster settings above. Per round: rows with a non-zero gradient "
             "v* − y (positives the maximiser v* leaves out; negatives it takes in), the mean "
             "|g| over the Hessian (a constant per row: 1, and 4 for the mini-batch default), "
             "training F1 at margin 0, the spread "
             "(sd) of the training margins, and leaves of that round's tree.", ""]
    for d in diag:
        rows = [[r, f"{nz:,}", npos, f"{nneg:,}", f"{ratio:.4f}", f"{f:.3f}", f"{sd:.4f}",
                 d["leaves"][str(r)]]
                for r in DIAG_ROUNDS if r < len(d["rows"])
                for nz, npos, nneg, ratio, f, sd in [d["rows"][r]]]
        lines += [f"**{d['title']}**", "",
                  *table(["round", "rows g ≠ 0", "positives left out", "negatives taken",
                          "Σ\\|g\\| / Σh", "train F1 @ 0", "sd of margins", "leaves"], rows,
                         "r" * 8), ""]
    return lines


def _generic_name(name: str) -> str:
    return name.split(" (N/P")[0]


def run() -> dict:
    """Every task, seed and objective (and the diagnosis): the raw figures of the report."""
    t0 = time.perf_counter()
    tasks = {}
    for title, task in TASKS.items():
        values, sizes = {}, []
        for seed in SEEDS:
            r = evaluate(task, seed)
            if r is None:
                break
            sizes.append(r[1])
            for name, vals in r[0].items():
                values.setdefault(_generic_name(name), []).append(vals)
        tasks[title] = {"sizes": sizes, "values": values}
    return {"tasks": tasks, "diagnosis": diagnose_fbeta(),
            "seconds": time.perf_counter() - t0}


def report(saved: dict) -> str:
    lines = [
        "# Imbalanced binary objectives: held-out quality", "",
        __doc__.split("\n\n", 2)[2].strip(), "",
        f"Booster: LightGBM, {ROUNDS} rounds, " + ", ".join(
            f"{k}={v}" for k, v in PARAMS.items() if k not in ("verbose", "num_threads"))
        + ". No objective-specific tuning: the same rounds and learning rate for all.", ""]
    for title, res in saved["tasks"].items():
        if not res["values"]:
            lines += [f"## {title}", "", "Data not available (../shared/data missing).", ""]
            continue
        p_tr, p_va, p_te, n = res["sizes"][0]
        base = np.array(res["values"]["LightGBM `binary`"])
        means, rows = {}, []
        for name, vals in res["values"].items():
            a = np.array(vals)
            m, sd = a.mean(axis=0), a.std(axis=0, ddof=1)
            means[name] = m
            diffs = [paired(a[:, j] - base[:, j]) for j in (1, 2)]
            rows.append([name, *(f"{m[j]:.3f} ± {sd[j]:.3f}" for j in range(3)), *(
                "—" if name == "LightGBM `binary`" else
                f"{p.mean:+.3f} ± {np.std(p.diffs, ddof=1):.3f} ({p.wins}/{p.n})"
                for p in diffs)])
        best = [max(means, key=lambda k, j=j: means[k][j]) for j in range(3)]
        lines += [f"## {title}", "",
                  f"{n:,} rows per seed; positives in train/validation/test: "
                  f"{p_tr}/{p_va}/{p_te} (seed 0). Mean ± sd over {len(res['sizes'])} seeds.",
                  "", *table(["objective", "F1 @ margin 0", "F1 @ threshold from validation",
                              "average precision", "F1 @ validation threshold − `binary`'s, "
                              "paired (seeds better)", "AP − `binary`, paired (seeds better)"],
                             rows, "llllll"),
                  "", f"Best mean: F1 @ 0 — {best[0]}; F1 @ validation threshold — "
                  f"{best[1]}; average precision — {best[2]}.", ""]
    select = load_json(SELECT_JSON)
    return "\n".join([
        *lines,
        "Notes: (a) and (b) have very few test positives (see the counts above), so their "
        "standard deviations are large and differences between objectives there are mostly "
        "within noise. F1 @ margin 0 depends on where an objective puts its decision "
        "boundary: focal loss with γ > 0 and the F_β surrogate are not calibrated, so the "
        "validation-threshold column is the fairer comparison of the scores themselves, "
        "and average precision the threshold-free one. LightGBM runs on one thread here "
        "(small data).", "",
        *diagnosis_lines(saved["diagnosis"]), *FINDINGS,
        *(selection_lines(select) if select is not None else []),
        f"Runtime: {saved['seconds']:.0f} s."])


if __name__ == "__main__":
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--select", action="store_true",
                    help="choose FBetaSurrogate's hess and batch_size on other seeds")
    ap.add_argument("--report", action="store_true", help="only the report, from the json")
    args = ap.parse_args()
    if args.select:
        print("\n".join(selection_lines(select())))
        raise SystemExit(0)
    saved = load_json(JSON) if args.report else run()
    if not args.report:
        save_json(JSON, saved)
    write("binary_quality.md", report(saved) + "\n")
