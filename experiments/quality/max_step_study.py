"""The Newton-step bound ``max_step`` of FocalLoss and FBetaSurrogate: held-out quality
per bound, and where training diverges without one.

    python experiments/quality/max_step_study.py   # → experiments/results/max_step_study.md
    python experiments/quality/max_step_study.py --jobs 2   # 2 processes, 1 thread each
    python experiments/quality/max_step_study.py --report   # the report from its json
    python experiments/quality/max_step_study.py --tasks 5class-g2 --seeds 5 6 7 8 9 \
        --grid None 8 16                                 # a subset, printed only

The booster's Hessian of a row is raised to max(h, |g| / max_step), so every leaf value
(before the learning rate) is at most ``max_step`` in size (docs/max_step.md). Tasks,
seeds 0–4 each, a stratified 70/30 train/test split per seed:

* 5 classes: ``make_classification(20000, 20, n_informative=10, n_classes=5,
  n_clusters_per_class=1, weights=[0.90, 0.06, 0.02, 0.015, 0.005], flip_y=0.01)``,
  ``FocalLoss(num_class=5)`` with γ = 2, 1, 0: held-out macro-F1 (argmax) and log loss;
* 3 % positives: ``make_imbalanced(20000, positive_rate=0.03)`` (1 % label noise),
  binary ``FocalLoss`` with γ = 2 and 0: average precision and log loss;
* 1,000:1: ``make_imbalanced(50000, positive_rate=0.001, flip=0)`` (35 training and 15
  test positives per seed), the same objectives and metrics;
* ``FBetaSurrogate()`` (its defaults: random examples of 75 rows, Hessian 4) on the 3 %
  data: F1 at margin 0 and average precision. Its gradient is 0 or ±2 (times the query
  weight), so its step is already at most 2 / hess = 0.5: a bound ≥ 0.5 changes nothing,
  and only smaller ones are fitted.

Every fit starts from the objective's ``init_score`` and runs LightGBM for ``ROUNDS``
rounds with the same parameters. "diverged" counts the seeds whose largest training
|raw score| exceeds ``DIVERGED`` (a well-behaved fit here stays below 25). Paired
differences are taken against ``max_step=None`` on the same seed: mean, and the number
of seeds better / worse (|Δ| < 5e-4 counts as a tie).
"""

from __future__ import annotations

import argparse
import platform
import sys
import time
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path

import lightgbm as lgb
import numpy as np
from sklearn.datasets import make_classification
from sklearn.metrics import average_precision_score, f1_score
from sklearn.model_selection import train_test_split

from gbrank.datasets import make_imbalanced
from gbrank.objectives import FBetaSurrogate, FocalLoss

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from _report import load_json, paired, run_header, save_json, table, write  # noqa: E402

SEEDS = range(5)
ROUNDS = 200
PARAMS = {"learning_rate": 0.1, "num_leaves": 31, "verbose": -1, "num_threads": 1,
          "seed": 0, "deterministic": True, "force_row_wise": True}
GRID = (None, 1.0, 2.0, 4.0, 8.0, 16.0, 32.0)
FBETA_GRID = (None, 0.125, 0.25)
DIVERGED = 100.0
TIE = 5e-4


def data_5class(seed: int):
    X, y = make_classification(20000, 20, n_informative=10, n_classes=5,
                               n_clusters_per_class=1,
                               weights=[0.90, 0.06, 0.02, 0.015, 0.005], flip_y=0.01,
                               random_state=seed)
    return train_test_split(X, y.astype(np.float64), test_size=0.3, stratify=y,
                            random_state=seed)


def data_3pct(seed: int):
    X, y = make_imbalanced(20000, positive_rate=0.03, seed=seed)
    return train_test_split(X, y, test_size=0.3, stratify=y, random_state=seed)


def data_1000to1(seed: int):
    X, y = make_imbalanced(50000, positive_rate=0.001, flip=0.0, seed=seed)
    return train_test_split(X, y, test_size=0.3, stratify=y, random_state=seed)


# key: (title, data, objective(max_step), metric names, grid)
TASKS = {
    "5class-g2": ("5 classes, FocalLoss(γ=2)", data_5class,
                  lambda ms: FocalLoss(2.0, num_class=5, max_step=ms), ("macro-F1", "log loss"),
                  GRID),
    "5class-g1": ("5 classes, FocalLoss(γ=1)", data_5class,
                  lambda ms: FocalLoss(1.0, num_class=5, max_step=ms), ("macro-F1", "log loss"),
                  GRID),
    "5class-g0": ("5 classes, FocalLoss(γ=0) (softmax cross-entropy)", data_5class,
                  lambda ms: FocalLoss(0.0, num_class=5, max_step=ms), ("macro-F1", "log loss"),
                  GRID),
    "3pct-g2": ("3 % positives, FocalLoss(γ=2)", data_3pct,
                lambda ms: FocalLoss(2.0, max_step=ms), ("AP", "log loss"), GRID),
    "3pct-g0": ("3 % positives, FocalLoss(γ=0) (logistic; None = LightGBM `binary`)",
                data_3pct, lambda ms: FocalLoss(0.0, max_step=ms), ("AP", "log loss"), GRID),
    "1000-g2": ("1,000:1, FocalLoss(γ=2)", data_1000to1,
                lambda ms: FocalLoss(2.0, max_step=ms), ("AP", "log loss"), GRID),
    "1000-g0": ("1,000:1, FocalLoss(γ=0) (logistic; None = LightGBM `binary`)",
                data_1000to1, lambda ms: FocalLoss(0.0, max_step=ms), ("AP", "log loss"),
                GRID),
    "3pct-fbeta": ("3 % positives, FBetaSurrogate() (hess 4, random examples of 75)",
                   data_3pct, lambda ms: FBetaSurrogate(random_state=0, max_step=ms),
                   ("F1 @ 0", "AP"), FBETA_GRID),
}
HIGHER_IS_BETTER = {"macro-F1": True, "AP": True, "F1 @ 0": True, "log loss": False}


def _log_loss(y: np.ndarray, raw: np.ndarray) -> float:
    """Mean −log p(true class) from raw margins, in log space (finite for any margin)."""
    if raw.ndim == 1:
        u = np.where(y > 0.5, raw, -raw)
        return float(np.mean(np.logaddexp(0.0, -u)))
    lse = np.logaddexp.reduce(raw, axis=1)
    return float(np.mean(lse - raw[np.arange(y.size), y.astype(np.int64)]))


def fit_one(key: str, seed: int, grid_override: tuple | None = None) -> list[dict]:
    """Every max_step of task ``key`` on one seed: metrics, largest |raw score|."""
    _, data, make, metrics, grid = TASKS[key]
    grid = grid_override or grid
    Xtr, Xte, ytr, yte = data(seed)
    out = []
    for ms in grid:
        obj = make(ms)
        init = obj.init_score(ytr)
        multiclass = np.ndim(init) == 1
        start = np.tile(init, (ytr.size, 1)) if multiclass else np.full(ytr.size, init)
        params = {**PARAMS, "objective": obj}
        if multiclass:
            params["num_class"] = init.size
        t = time.perf_counter()
        model = lgb.train(params, lgb.Dataset(Xtr, ytr, init_score=start), ROUNDS)
        seconds = time.perf_counter() - t
        raw_tr = model.predict(Xtr, raw_score=True) + init
        raw = model.predict(Xte, raw_score=True) + init
        vals = {}
        for m in metrics:
            if m == "macro-F1":
                vals[m] = f1_score(yte, raw.argmax(axis=1), average="macro")
            elif m == "F1 @ 0":
                vals[m] = f1_score(yte, raw > 0)
            elif m == "AP":
                vals[m] = average_precision_score(yte, raw)
            else:
                vals[m] = _log_loss(yte, raw)
        out.append({"key": key, "seed": seed, "max_step": ms, "max_abs": float(
            np.abs(raw_tr).max()), "seconds": seconds, **vals})
    return out


def _fmt_ms(ms) -> str:
    return "None" if ms is None else f"{ms:g}"


def _paired(d: np.ndarray, higher: bool) -> str:
    """Mean difference, and the seeds better / worse (|Δ| ≤ TIE: a tie)."""
    p = paired(np.where(np.abs(d) > TIE, d, 0.0), higher_is_better=higher)
    return f"{d.mean():+.4f} ({p.wins}/{int(np.sum(p.diffs < 0))})"


def task_lines(key: str, records: list[dict], grid_override: tuple | None = None) -> list[str]:
    title, _, _, metrics, grid = TASKS[key]
    grid = grid_override or grid
    rec = {(r["seed"], r["max_step"]): r for r in records if r["key"] == key}
    seeds = sorted({s for s, _ in rec})
    base = {s: rec[(s, None)] for s in seeds}
    healthy = [s for s in seeds if base[s]["max_abs"] <= DIVERGED]
    rows = []
    for ms in grid:
        runs = [rec[(s, ms)] for s in seeds]
        cells = [_fmt_ms(ms), str(sum(r["max_abs"] > DIVERGED for r in runs)),
                 f"{max(r['max_abs'] for r in runs):.3g}"]
        for m in metrics:
            v = np.array([r[m] for r in runs])
            d = v - np.array([base[s][m] for s in seeds])
            dh = np.array([rec[(s, ms)][m] - base[s][m] for s in healthy])
            hb = HIGHER_IS_BETTER[m]
            cells += [f"{v.mean():.4f}", "—" if ms is None else _paired(d, hb),
                      "—" if ms is None or not healthy else _paired(dh, hb)]
        rows.append(cells)
    return [f"### {title}", "",
            f"max_step=None diverged on {len(seeds) - len(healthy)} of {len(seeds)} seeds "
            f"(largest training |raw score| per seed: "
            + ", ".join(f"{base[s]['max_abs']:.3g}" for s in seeds) + ").", "",
            *table(["max_step", "diverged", "largest \\|score\\|", *(
                c for m in metrics for c in (m, f"Δ{m} vs None (better/worse)",
                                             f"Δ{m}, seeds None did not diverge"))],
                   rows, "l" * (3 + 3 * len(metrics))), ""]


def run(jobs: int, keys: list[str], seeds=SEEDS, grid: tuple | None = None) -> dict:
    """Every fit: one record per (task, seed, max_step)."""
    t0, header = time.perf_counter(), run_header()  # the code the fits run on
    work = [(k, s, grid) for k in keys for s in seeds]
    records: list[dict] = []
    if jobs > 1:
        with ProcessPoolExecutor(jobs) as pool:
            for part in pool.map(fit_one, *zip(*work, strict=True)):
                records += part
    else:
        for k, s, g in work:
            records += fit_one(k, s, g)
    return {"header": header, "argv": sys.argv[1:], "keys": keys, "seeds": list(seeds),
            "grid": grid, "wall": time.perf_counter() - t0, "records": records,
            "versions": [lgb.__version__, platform.python_version()]}


def report(saved: dict) -> str:
    commit, when = saved["header"].removeprefix("commit ").split(", ", 1)
    grid = None if saved["grid"] is None else tuple(saved["grid"])
    lines = [
        "# max_step: the Newton-step bound of FocalLoss and FBetaSurrogate", "",
        f"{when}, commit {commit}. `python experiments/quality/max_step_study.py"
        + "".join(f" {a}" for a in saved["argv"]) + "`; "
        f"LightGBM {saved['versions'][0]}, Python {saved['versions'][1]}. "
        f"Wall time {saved['wall']:.0f} s.", "",
        __doc__.split("\n\n", 2)[2].strip(), "",
        f"LightGBM parameters: {ROUNDS} rounds, " + ", ".join(
            f"{k}={v}" for k, v in PARAMS.items() if k != "verbose") + ".", ""]
    if saved["seeds"] != list(SEEDS):
        lines += [f"Seeds {', '.join(map(str, saved['seeds']))} (not the default 0–4).", ""]
    for k in saved["keys"]:
        lines += task_lines(k, saved["records"], grid)
    fit_s = sum(r["seconds"] for r in saved["records"])
    lines.append(f"{len(saved['records'])} fits, {fit_s:.0f} s of training in all.")
    return "\n".join(lines)


if __name__ == "__main__":
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--jobs", type=int, default=1, help="processes (each fits on 1 thread)")
    ap.add_argument("--tasks", nargs="*", default=list(TASKS), choices=list(TASKS),
                    help="a subset of the tasks (default: all)")
    ap.add_argument("--seeds", nargs="*", type=int, default=list(SEEDS))
    ap.add_argument("--grid", nargs="*", default=None,
                    help="max_step values to fit instead of each task's grid ('None': off)")
    ap.add_argument("--report", action="store_true", help="only the report, from the json")
    args = ap.parse_args()
    grid = None if args.grid is None else tuple(
        None if g.lower() == "none" else float(g) for g in args.grid)
    full = args.tasks == list(TASKS) and args.seeds == list(SEEDS) and grid is None
    saved = load_json("max_step_study.json") if args.report else run(
        args.jobs, args.tasks, args.seeds, grid)
    if full and not args.report:
        save_json("max_step_study.json", saved)
    text = report(saved)
    if full:
        write("max_step_study.md", text + "\n")
    else:
        print(text)
