"""The tuner's round budget (issue 35): ``gbrank tune`` at 100 rounds with patience 15
(the former default) against 1,000 with patience 50, on what a user brings:

- ``mq2008``: MQ2008 folds 1-5 (``--data MQ2008 --fold k --metric ndcg@10``);
- ``clicks``: click logs from MQ2008 rotations 1-5 (``click_protocols.py``'s
  ``swap_s10``: a good logger, 10 sessions per query, a quarter of them randomised;
  sessions with a click), tuned on IPS-DCG@10 of held-out clicks, the held-out part
  judged on its true grades (NDCG@10);
- ``synthetic``: ``make_ranking`` with 1,000 queries of 100 rows and 50 features
  (800 tuned on, 200 held out), the objectives ``lambdarank:ndcg`` and
  ``native:lambdarank`` only.

Each run is the command a user runs, one booster thread, seed 0, every other setting at
its default; its SUMMARY.md gives the recommendation's held-out test and the wall time.
Runs are skipped when their SUMMARY.md exists under ``--work``.

    python experiments/quality/tuner_budget.py --work /tmp/budget   # runs, then the table
"""

from __future__ import annotations

import argparse
import re
import subprocess
import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from _paths import shared_data_dir  # noqa: E402
from _report import paired, run_header, table, write  # noqa: E402

BUDGETS = {"100/15": ("100", "15"), "1000/50": ("1000", "50")}
UNITS = range(1, 6)


def _click_log(work: Path, r: int) -> tuple[Path, Path, str]:
    """Rotation ``r``'s click log (train CSV, test CSV of true grades) and propensities."""
    import click_protocols as cp
    import pandas as pd

    train, test = work / f"clicks{r}_train.csv", work / f"clicks{r}_test.csv"
    X, y, g, Xt, yt, gt, _ = cp.mq2008(r)
    p = cp.PROTOCOLS["swap_s10"]
    model = cp.logger(p["logger"], X, y, g, r)
    Xc, c, gc, pos, rho = cp.click_log(X, y, g, model.predict(X), p, seed=r)[:5]
    if not train.exists():
        cols = [f"f{i}" for i in range(X.shape[1])]
        df = pd.DataFrame(Xc, columns=cols)
        df["session"], df["shown_at"] = np.repeat(np.arange(gc.size), gc), pos
        df["clicked"] = c.astype(int)
        df.to_csv(train, index=False)
        dt = pd.DataFrame(Xt, columns=cols)
        dt["session"], dt["clicked"] = np.repeat(np.arange(gt.size), gt), yt.astype(int)
        dt.to_csv(test, index=False)
    return train, test, ",".join(f"{v:.4f}" for v in rho)


def _synthetic(work: Path) -> tuple[Path, Path]:
    from sklearn.datasets import dump_svmlight_file

    from gbrank.datasets import make_ranking

    train, test = work / "synthetic_train.txt", work / "synthetic_test.txt"
    if not train.exists():
        X, y, g = make_ranking(n_queries=1000, rows_per_query=100, n_features=50, seed=0)
        qid = np.repeat(np.arange(g.size), g)
        tr = qid < 800
        dump_svmlight_file(X[tr], y[tr], str(train), query_id=qid[tr])
        dump_svmlight_file(X[~tr], y[~tr], str(test), query_id=qid[~tr])
    return train, test


def runs(work: Path) -> dict[tuple[str, int], list[str]]:
    """(set, unit) -> the command's arguments (without the budget and --out)."""
    mq = shared_data_dir() / "MQ2008"
    if not (mq / "S1.txt").exists():
        raise SystemExit("MQ2008 not found in ../shared/data")
    out = {("mq2008", k): ["--data", str(mq), "--fold", str(k), "--metric", "ndcg@10"]
           for k in UNITS}
    for r in UNITS:
        train, test, rho = _click_log(work, r)
        out[("clicks", r)] = ["--data", str(train), "--test-data", str(test), "--label-col",
                              "clicked", "--qid-col", "session", "--position-col",
                              "shown_at", "--propensity", rho]
    train, test = _synthetic(work)
    out[("synthetic", 1)] = ["--data", str(train), "--test-data", str(test), "--metric",
                             "ndcg@10", "--objectives", "lambdarank:ndcg,native:lambdarank"]
    return out


def read(summary: Path) -> tuple[str, float, float]:
    """The recommendation, its held-out test and the run's wall time (s)."""
    text = summary.read_text()
    rec = re.search(r"^\| recommended: `([^`]+)` \| [^|]+\| ([0-9.]+) \|", text, re.M)
    wall = re.search(r"Wall time ([0-9.]+) (s|min)", text)
    seconds = float(wall.group(1)) * (60.0 if wall.group(2) == "min" else 1.0)
    return rec.group(1), float(rec.group(2)), seconds


def _span(seconds: list[float]) -> str:
    lo, hi = min(seconds), max(seconds)
    return f"{lo:.0f}" if round(lo) == round(hi) else f"{lo:.0f}–{hi:.0f}"


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--work", type=Path, required=True)
    args = ap.parse_args()
    args.work.mkdir(parents=True, exist_ok=True)
    got: dict = {}
    for (name, unit), cmd in runs(args.work).items():
        for label, (rounds, patience) in BUDGETS.items():
            out = args.work / f"{name}{unit}-{label.replace('/', '-')}"
            if not (out / "SUMMARY.md").exists():
                subprocess.run([sys.executable, "-m", "gbrank", "tune", *cmd, "--max-rounds",
                                rounds, "--patience", patience, "--out", str(out),
                                "--quiet"], check=True)
            got[(name, unit, label)] = read(out / "SUMMARY.md")
    rows = []
    for name in ("mq2008", "clicks", "synthetic"):
        units = sorted({u for n, u, _ in got if n == name})
        a = [got[(name, u, "1000/50")][1] for u in units]
        b = [got[(name, u, "100/15")][1] for u in units]
        ta = [got[(name, u, "1000/50")][2] for u in units]
        tb = [got[(name, u, "100/15")][2] for u in units]
        d = paired(np.subtract(a, b)).cell() if len(units) > 1 else f"{a[0] - b[0]:+.4f}"
        rows.append([name, len(units), f"{np.mean(b):.4f}", f"{np.mean(a):.4f}", d,
                     _span(tb), _span(ta)])
    per = [[n, u, got[(n, u, "100/15")][0], f"{got[(n, u, '100/15')][1]:.4f}",
            got[(n, u, "1000/50")][0], f"{got[(n, u, '1000/50')][1]:.4f}"]
           for n, u, lab in got if lab == "100/15"]
    lines = ["# The tuner's round budget", "",
             f"Generated by `experiments/quality/tuner_budget.py`. {run_header()}", "",
             "The recommendation's held-out test (NDCG@10; click logs on their test part's "
             "true grades) at 100 rounds with patience 15 and at 1,000 with patience 50, "
             "paired over the units (folds or rotations); wall time of the whole run in "
             "seconds (two runs at a time on a 2-core machine).", "",
             *table(["set", "units", "100/15", "1000/50", "1000/50 − 100/15",
                     "s (100/15)", "s (1000/50)"], rows, "lrrrrrr"), "",
             "Per unit:", "",
             *table(["set", "unit", "pick (100/15)", "test", "pick (1000/50)", "test"], per,
                    "lrlrlr"), ""]
    write("tuner_budget.md", "\n".join(lines))
    print("\n".join(lines))


if __name__ == "__main__":
    main()
