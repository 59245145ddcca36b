"""Every ranking objective on real data: MQ2008 (LETOR 4.0) with the standard protocol.

The LETOR 4.0 rotations (``MQ2008/readme.txt``): rotation k trains on three of the parts
S1–S5, early-stops on the fourth by NDCG@10 (at most 1000 rounds, patience 50) and is
tested on the fifth. LightGBM, learning rate 0.05, 31 leaves, everything else LightGBM's
defaults, one thread, seed 0. Each objective's test part is judged by gbrank's NDCG@10,
ERR@10, MAP@10 and MRR@10.

Writes ``experiments/results/mq2008_objectives.md``: the mean of each objective and
metric over the five rotations, and the paired difference against native
``lambdarank`` per rotation, with a 95 % t-interval over the rotations and the verdict
it supports (*wins* / *loses*: the interval excludes 0; *tie*: it does not). Raw values
go to ``mq2008_objectives.json`` (``--report``: the report from it; ``--quick``: 2
rotations, 4 objectives, into ``mq2008_objectives_quick.*``).
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from _paths import RESULTS, shared_data_dir  # noqa: E402
from _report import (  # noqa: E402
    load_json,
    paired,
    run_header,
    save_json,
    table,
    verdict,
    workqueue_threads,
    write,
)

workqueue_threads()

LR, LEAVES, MAX_ROUNDS, PATIENCE = 0.05, 31, 1000, 50
METRICS = ("ndcg@10", "err@10", "map@10", "mrr@10")
BASE = "native lambdarank"


def objectives(quick: bool = False) -> dict[str, object]:
    """Name -> LightGBM objective (a native name or a gbrank instance)."""
    from gbrank.objectives import LambdaRank, RankNet

    names = [BASE, "native rank_xendcg", "LambdaRank()", "RankNet()"] + ([] if quick else [
        'LambdaRank(weighting="ndcg_loss2pp")', 'LambdaRank(weighting="ndcg_loss1")',
        "LambdaRank(norm=True)", 'LambdaRank("err")', 'LambdaRank("map")', 'LambdaRank("mrr")'])
    # each name is the Python that builds it; "native x": LightGBM's built-in x
    return {n: n.removeprefix("native ") if n.startswith("native ") else
            eval(n, {"LambdaRank": LambdaRank, "RankNet": RankNet}) for n in names}


def run_rotation(parts, k: int, objs: dict[str, object]) -> dict[str, dict]:
    """Test scores of every objective on rotation ``k`` and its rounds."""
    import lightgbm as lgb

    from gbrank.datasets import letor_fold
    from gbrank.lightgbm import feval
    from gbrank.metrics import get_metric

    (X, y, g), (Xv, yv, gv), (Xt, yt, gt) = letor_fold(parts, k)
    params = {"learning_rate": LR, "num_leaves": LEAVES, "num_threads": 1, "seed": 0,
              "deterministic": True, "verbose": -1, "metric": "None"}
    out = {}
    for name, obj in objs.items():
        t0 = time.perf_counter()
        dt = lgb.Dataset(X, y, group=g)
        dv = lgb.Dataset(Xv, yv, group=gv, reference=dt)
        model = lgb.train({**params, "objective": obj}, dt, MAX_ROUNDS, valid_sets=[dv],
                          feval=feval("ndcg@10"),
                          callbacks=[lgb.early_stopping(PATIENCE, verbose=False)])
        s = model.predict(Xt, num_iteration=model.best_iteration)
        out[name] = {m: float(get_metric(m)(yt, s, gt)) for m in METRICS}
        out[name]["per_query"] = per_query(yt, s, gt)
        out[name]["rounds"] = int(model.best_iteration)
        out[name]["seconds"] = time.perf_counter() - t0
        print(f"  rotation {k} {name}: NDCG@10 {out[name]['ndcg@10']:.4f} "
              f"({out[name]['rounds']} rounds, {out[name]['seconds']:.0f} s)", flush=True)
    return out


def per_query(y: np.ndarray, s: np.ndarray, group: np.ndarray) -> dict[str, list[float]]:
    """Every metric of every query (their mean is the metric of the whole part; ERR's
    stop probabilities use the part's highest grade, as on the whole part)."""
    from gbrank.metrics import err, get_metric

    offs = np.concatenate(([0], np.cumsum(group)))
    top = int(y.max())

    def one(m, a, b):
        if m.startswith("err@"):
            return err(y[a:b], s[a:b], None, k=int(m.split("@")[1]), max_grade=top)
        return get_metric(m)(y[a:b], s[a:b], None)

    return {m: [float(one(m, a, b)) for a, b in zip(offs[:-1], offs[1:], strict=True)]
            for m in METRICS}


def report(runs: dict[int, dict], seconds: float, header: str) -> str:
    import lightgbm as lgb

    rotations = sorted(runs)
    names = list(runs[rotations[0]])
    lines = [
        "# Every ranking objective on MQ2008 (LETOR 4.0, standard protocol)", "",
        f"`experiments/quality/mq2008_objectives.py`, {header}, {seconds:.0f} s. "
        f"Rotation k of S1–S5 (the readme's folds): train on three parts, early-stop on "
        f"the fourth by NDCG@10 (≤ {MAX_ROUNDS} rounds, patience {PATIENCE}), test on the "
        f"fifth. LightGBM {lgb.__version__}, learning rate {LR}, {LEAVES} leaves, other "
        "parameters LightGBM's defaults (gbrank objectives with their defaults), one "
        "thread, seed 0. Metrics from `gbrank.metrics` on the test part.", "",
        f"## Mean over {len(rotations)} rotations (test part)", "",
    ]
    best = {m: max(np.mean([runs[k][n][m] for k in rotations]) for n in names)
            for m in METRICS}
    rows = []
    for n in names:
        cells = []
        for m in METRICS:
            v = float(np.mean([runs[k][n][m] for k in rotations]))
            cells.append(f"**{v:.4f}**" if v == best[m] else f"{v:.4f}")
        rows.append([n, *cells, f"{np.mean([runs[k][n]['rounds'] for k in rotations]):.0f}"])
    lines += table(["objective", *METRICS, "rounds"], rows)
    n_q = sum(len(runs[k][BASE]["per_query"]["ndcg@10"]) for k in rotations)
    for m in METRICS:
        rows = []
        for n in names:
            if n == BASE:
                continue
            p = paired([runs[k][n][m] - runs[k][BASE][m] for k in rotations])
            q = paired(_query_diffs(runs, n, m))
            rows.append([n, *(f"{x:+.4f}" for x in p.diffs), f"{p.mean:+.4f}",
                         f"[{p.low:+.4f}, {p.high:+.4f}]", f"{p.wins}/{p.n}", verdict(p),
                         f"[{q.low:+.4f}, {q.high:+.4f}]", verdict(q)])
        lines += ["", f"## {m}: paired difference against {BASE}", "",
                  "Per rotation, their mean, the 95 % t-interval over the rotations and its "
                  f"verdict; then the same over the {n_q} test queries pooled from all "
                  "rotations (each query is tested once: a tighter interval that treats "
                  "the five trained models as given).", "",
                  *table(["objective", *(f"rot. {k}" for k in rotations), "mean",
                          "95 % (rotations)", "won", "verdict", "95 % (queries)",
                          "verdict (queries)"], rows, "l" + "r" * (len(rotations) + 3) + "lrl")]
    lines += ["", "## What it says", "", *summary(runs)]
    return "\n".join(lines) + "\n"


def _query_diffs(runs: dict[int, dict], name: str, metric: str) -> np.ndarray:
    """Per-query differences against the baseline, every rotation's test queries."""
    return np.concatenate([np.subtract(runs[k][name]["per_query"][metric],
                                       runs[k][BASE]["per_query"][metric]) for k in runs])


def summary(runs: dict[int, dict]) -> list[str]:
    """Plain sentences computed from the tables: who wins, ties and loses, per metric."""
    rotations = sorted(runs)
    names = [n for n in runs[rotations[0]] if n != BASE]
    out = []
    for m in METRICS:
        groups: dict[str, list[str]] = {}
        for n in names:
            p = paired([runs[k][n][m] - runs[k][BASE][m] for k in rotations])
            by_rotation, by_query = verdict(p), verdict(paired(_query_diffs(runs, n, m)))
            where = by_rotation if by_rotation != "tie" else (
                f"{by_query} (queries only)" if by_query != "tie" else "tie")
            groups.setdefault(where, []).append(f"{n} ({p.mean:+.4f})")
        parts = [f"**{g}**: {', '.join(groups[g])}" for g in
                 ("wins", "loses", "wins (queries only)", "loses (queries only)")
                 if g in groups]
        parts.append(f"within noise: {', '.join(groups.get('tie', [])) or 'none'}")
        out.append(f"- {m} against {BASE} (mean difference): " + "; ".join(parts) + ".")
    out.append("- *wins*/*loses*: the 95 % interval over the rotations excludes 0; "
               "*(queries only)*: only the interval over the pooled test queries does.")
    return out


def main(argv: list[str] | None = None) -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    for flag in ("--quick", "--report"):
        p.add_argument(flag, action="store_true")
    p.add_argument("--data", type=Path, default=shared_data_dir() / "MQ2008")
    p.add_argument("--out", type=Path, default=RESULTS)
    args = p.parse_args(argv)
    stem = "mq2008_objectives" + ("_quick" if args.quick else "")
    if args.report:
        saved = load_json(args.out / f"{stem}.json")
        saved["runs"] = {int(k): v for k, v in saved["runs"].items()}
    else:
        from gbrank.datasets import load_letor_folds

        t0 = time.perf_counter()
        header = run_header()
        parts = load_letor_folds(args.data)
        rotations = (1, 2) if args.quick else (1, 2, 3, 4, 5)
        runs = {k: run_rotation(parts, k, objectives(args.quick)) for k in rotations}
        saved = {"header": header, "seconds": time.perf_counter() - t0, "runs": runs}
        save_json(args.out / f"{stem}.json", saved)
    write(args.out / f"{stem}.md", report(saved["runs"], saved["seconds"], saved["header"]))


if __name__ == "__main__":
    main()
