"""The tuner's recommendation against CatBoost and the boosters at their defaults, on
LETOR folds (issue 35, its goal).

For each fold k given, this runs the command a user runs::

    gbrank tune --data <shared>/MQ2008 --fold k --metric ndcg@10 --baselines catboost \\
        --out <out>/fold<k> [--trials N]

(one booster thread, the default budget unless ``--trials`` is given), records its wall
time, then reads its stored studies back (``report_only``: nothing is tuned or rescored
again, the picks are refit) for every study's held-out test NDCG@10 and the
recommendation. The defaults it is compared with are those of
``experiments/quality/learner_attribution.py`` on the same folds (train on three parts,
early-stop on the fourth by NDCG@10, lr 0.05, at most 1,000 rounds, mean of seeds 0-4;
read from ``experiments/results/learner_attribution.json``, not trained again here):
LightGBM ``lambdarank``, XGBoost ``rank:ndcg``, CatBoost ``YetiRank`` and ``LambdaMart``.
The tuner's pick is refit on the fold's four tuning parts (training and validation) and
tested on the fifth, as ``gbrank tune`` does.

    python experiments/quality/tuner_vs_catboost.py --fold 1 --fold 3 --fold 5
    python experiments/quality/tuner_vs_catboost.py --report   # the table from the runs

``--set mslr_sample`` runs the same on the second LETOR set (84 MSLR-WEB queries in five
parts, built by ``experiments/mslr_sample.py``); its defaults are read from
``experiments/results/second_letor_defaults.json`` (the same protocol, run by
``learner_attribution.py``'s code on that set).

Each fold's run writes ``<out>/fold<k>/run.json`` (command, seconds, figures); ``--report``
prints the Markdown table of every fold found.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[2]
ATTRIBUTION = ROOT / "experiments" / "results" / "learner_attribution.json"
SECOND = ROOT / "experiments" / "results" / "second_letor_defaults.json"
DEFAULTS = {"LightGBM lambdarank": "lgb:lambdarank", "XGBoost rank:ndcg": "xgb:rank:ndcg",
            "CatBoost YetiRank": "cb:YetiRank", "CatBoost LambdaMart": "cb:LambdaMart"}


def run_fold(fold: int, data: Path, out: Path, trials: int | None) -> dict:
    from gbrank.tuning import TuneConfig, tune
    from gbrank.tuning._sources import letor_task
    from gbrank.tuning._verdict import recommend

    dest = out / f"fold{fold}"
    cmd = [sys.executable, "-m", "gbrank.tuning", "--data", str(data), "--fold", str(fold),
           "--metric", "ndcg@10", "--baselines", "catboost", "--out", str(dest)]
    if trials is not None:
        cmd += ["--trials", str(trials)]
    t0 = time.perf_counter()
    subprocess.run(cmd, check=True)
    seconds = time.perf_counter() - t0
    task = letor_task(data, fold)
    cfg = TuneConfig(metric="ndcg@10", baselines=["catboost"], out_dir=dest,
                     run_trials=False, save_models=False, plots=False, progress=False,
                     **({} if trials is None else {"trials": trials}))
    results = tune([task], cfg)
    rec = recommend(results, "ndcg@10", cfg.n_folds)
    use = rec.use
    if rec.catboost_wins:
        use = rec.catboost
    record = {
        "fold": fold, "command": " ".join(["gbrank tune", *cmd[3:]]), "seconds": seconds,
        "test_queries": int(task.group_test.size),
        "studies": {r.key: {"test": r.test.get("ndcg@10"),
                            "cv": float(np.mean(r.units["ndcg@10"])) if r.units else None,
                            "seconds": r.seconds + r.rescore_seconds}
                    for r in results if r.status == "done"},
        "recommended": use.key,
        "recommended_test": use.test["ndcg@10"],
        "versus_catboost": None if rec.versus_catboost is None
        else rec.versus_catboost.describe(),
        "catboost_best": None if rec.catboost is None else rec.catboost.key,
    }
    (dest / "run.json").write_text(json.dumps(record, indent=1))
    return record


def defaults(fold: int, data_set: str = "mq2008") -> dict[str, float]:
    if data_set == "mslr_sample":  # every training of the defaults' protocol, by seed
        runs = json.loads(SECOND.read_text())
        return {label: float(np.mean([r["ndcg"] for k, r in runs.items()
                                      if k.startswith(f"mslr_sample|{fold}|{key}|")]))
                for label, key in DEFAULTS.items()}
    d = json.loads(ATTRIBUTION.read_text())
    units = d["protocol"]["units"]
    s = d["summary"]["mq2008"]
    return {label: float(s[key]["units"][units.index(fold)]) for label, key in DEFAULTS.items()}


def before(old: Path | None, fold: int) -> tuple[float, float] | None:
    """The test NDCG@10 of the recommendation of the tuner before issue 35 (a run of
    ``gbrank tune --data ... --fold k --metric ndcg@10 --out <old>/fold<k>`` from commit
    5442b31) and its wall time (``<old>/times.txt``: ``fold k rc=0 seconds=S`` lines)."""
    if old is None or not (old / f"fold{fold}" / "SUMMARY.md").exists():
        return None
    import re

    text = (old / f"fold{fold}" / "SUMMARY.md").read_text()
    test = float(re.search(r"\| recommended: `[^`]+` \| [^|]+ \| ([0-9.]+) \|", text)[1])
    times = (old / "times.txt").read_text()
    return test, float(re.search(rf"fold {fold} rc=0 seconds=([0-9.]+)", times)[1])


def report(out: Path, old: Path | None = None, data_set: str = "mq2008") -> str:
    runs = sorted((json.loads(p.read_text()) for p in out.glob("fold*/run.json")),
                  key=lambda r: r["fold"])
    if not runs:
        raise SystemExit(f"no run.json under {out}")
    runs = [dict(r, before=before(old, r["fold"])) for r in runs]
    with_old = all(r["before"] is not None for r in runs)
    head = ["tuner's pick", *(["tuner before (5442b31)"] if with_old else []), *DEFAULTS]
    lines = ["| fold | tuner's pick (study) | " + " | ".join(head) + " | run time |",
             "|---|---|" + "---:|" * (len(head) + 1)]
    cols: dict[str, list[float]] = {h: [] for h in head}
    for r in runs:
        base = defaults(r["fold"], data_set)
        vals = {"tuner's pick": r["recommended_test"], **base}
        if with_old:
            vals["tuner before (5442b31)"] = r["before"][0]
        for h in head:
            cols[h].append(vals[h])
        lines.append(f"| {r['fold']} | `{r['recommended']}` | "
                     + " | ".join(f"{vals[h]:.4f}" for h in head)
                     + f" | {r['seconds'] / 60:.1f} min"
                     + (f" (before: {r['before'][1] / 60:.1f} min)" if with_old else "")
                     + " |")
    lines.append(f"| mean ({len(runs)} folds) | | "
                 + " | ".join(f"{np.mean(cols[h]):.4f}" for h in head) + " | |")
    goal = [i for i, r in enumerate(runs) if r["fold"] in (1, 3, 5)]
    if len(goal) == 3 and len(runs) > 3:  # the goal is on folds 1, 3 and 5
        lines.append("| mean (folds 1, 3, 5) | | " + " | ".join(
            f"{np.mean([cols[h][i] for i in goal]):.4f}" for h in head) + " | |")
    from gbrank.metrics import paired_difference

    lines += ["", f"The tuner's pick against each default over the {len(runs)} folds "
              "(`gbrank.metrics.paired_difference`, folds as units):", ""]
    for h in head[1:]:
        d = paired_difference(cols["tuner's pick"], cols[h])
        lines.append(f"- {h}: {d.mean:+.4f} ± {d.se:.4f} ({d.wins} of {d.n} folds won)")
    lines += ["", "Every study's held-out test NDCG@10 (its pick refit on the fold's four "
              "tuning parts):", ""]
    keys = list(dict.fromkeys(k for r in runs for k in r["studies"]))
    lines += ["| study | " + " | ".join(f"fold {r['fold']}" for r in runs) + " |",
              "|---|" + "---:|" * len(runs)]
    for k in keys:
        lines.append(f"| `{k}` | " + " | ".join(
            f"{r['studies'][k]['test']:.4f}" if k in r["studies"] else "—" for r in runs)
            + " |")
    lines += ["", *(f"- fold {r['fold']}: `{r['command']}`, {r['seconds']:.0f} s; CatBoost's "
                    f"best study `{r['catboost_best']}` against the recommendation: "
                    f"{r['versus_catboost']}" for r in runs)]
    return "\n".join(lines)


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--fold", type=int, action="append", default=[])
    p.add_argument("--set", dest="data_set", choices=("mq2008", "mslr_sample"),
                   default="mq2008")
    p.add_argument("--data", type=Path, default=None,
                   help="the set's folder (default: MQ2008 in the reference data, or the "
                   "built MSLR sample)")
    p.add_argument("--out", type=Path, default=Path("/tmp/tuner_vs_catboost"))
    p.add_argument("--trials", type=int, default=None)
    p.add_argument("--report", action="store_true")
    p.add_argument("--old", type=Path, default=None, help="runs of the tuner before "
                   "issue 35 (commit 5442b31) to show beside")
    args = p.parse_args()
    if args.data is None:
        if args.data_set == "mslr_sample":
            sys.path.insert(0, str(ROOT / "experiments"))
            from mslr_sample import mslr_sample_dir

            args.data = mslr_sample_dir()
        else:
            args.data = ROOT.parent / "shared" / "data" / "MQ2008"
    for k in args.fold:
        r = run_fold(k, args.data, args.out, args.trials)
        print(f"fold {k}: {r['recommended']} {r['recommended_test']:.4f} "
              f"({r['seconds']:.0f} s)", flush=True)
    if args.report:
        print(report(args.out, args.old, args.data_set))


if __name__ == "__main__":
    main()
