"""Learning to rank from clicks, tuned against tuned: ``gbrank tune`` on MQ2008 click logs,
each correction and each native chosen on the clicks alone, judged on true grades.

    python experiments/quality/position_bias_tuned.py  # → results/position_bias_tuned.*
    python experiments/quality/position_bias_tuned.py --trials 4 --rotations 1  # timing

``position_bias.py`` compares the methods at fixed settings (LambdaRank's defaults and the
natives' defaults, 100 rounds, or rounds chosen on true grades). A user with a click log
has neither the true grades to choose by nor a reason to keep defaults: they run the
tuner. Here every candidate is tuned exactly as ``gbrank tune`` tunes it for such a user,
and nothing it chooses sees a true grade. Per MQ2008 rotation (LETOR fold f = 1 … 5) and
booster (LightGBM, XGBoost):

1. The click log of ``position_bias.py``'s ``mq2008_s40`` block, the same clicks: its
   weak logging ranker's top 10 of every training query shown to 40 sessions,
   position-based user (η = 1, ε⁻ = 0.1), sessions without a click dropped; written as
   a CSV (features, ``session``, ``shown_at``, ``clicked``).
2. The test part of fold f with its true grades, written as a CSV without the position
   column (the tuner then judges its held-out test by the grades).
3. ``gbrank tune --data clicks.csv --test-data graded.csv --position-col shown_at
   --propensity <the simulator's ρ(p) = 1/p> --objectives lambdarank:ndcg``: gbrank's
   LambdaRank study searches ``position_bias`` (none, ``ipw`` with these propensities,
   ``unbiased`` with ``bias_norm``/``bias_cost``, ``additive`` with its penalty), ``norm``,
   ``max_step`` and the booster's parameters; the native study is LightGBM's
   ``lambdarank`` on the positions (its ``lambdarank_position_bias_regularization``
   searched) or XGBoost's ``rank:ndcg`` with ``lambdarank_unbiased`` (its
   ``lambdarank_bias_norm`` searched). Every trial is early-stopped and judged by
   IPS-DCG@10 on held-out sessions (3-fold CV over sessions); each study's finalists are
   rescored on fresh folds and the best is refit on the whole log.
4. Each refit pick's NDCG@10 on the test part's true grades.

Paired over the five rotations: gbrank's pick against each native's pick, on the same
clicks and the same budget (``--trials`` per study). The tuner's logs and models go to a
temporary folder; the table and every pick's parameters to ``results/``.
"""

from __future__ import annotations

import argparse
import contextlib
import io
import json
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
sys.path.insert(0, str(Path(__file__).resolve().parent))
from _paths import RESULTS, shared_data_dir  # noqa: E402
from position_bias import SESSIONS, click_log, logging_scores, mq_task  # noqa: E402

from gbrank.tuning import cli  # noqa: E402

TRIALS = 12  # the tuner's default


def write_rotation(folder: Path, fold: int) -> dict:
    """The click log of the training parts and the graded test part of rotation
    ``fold`` (0-based) as CSVs; the propensities and the data's sizes."""
    import pandas as pd

    X, y, g, Xt, yt, gt = mq_task(fold)  # MQ2008 read once, for every rotation
    scores = logging_scores(X, y, g, fold)
    Xc, c, gc, pos, rho = click_log(X, y, g, scores, user="position", eta=1.0, seed=fold,
                                    sessions=SESSIONS["mq2008_s40"])
    names = [f"f{i}" for i in range(X.shape[1])]
    clicks = pd.DataFrame(Xc, columns=names)
    clicks["session"] = np.repeat(np.arange(gc.size), gc)
    clicks["shown_at"], clicks["clicked"] = pos.astype(int), c.astype(int)
    clicks.to_csv(folder / "clicks.csv", index=False)
    graded = pd.DataFrame(Xt, columns=names)
    graded["session"] = np.repeat(np.arange(gt.size), gt)
    graded["clicked"] = yt.astype(int)  # the --label-col column holds the true grades
    graded.to_csv(folder / "graded.csv", index=False)
    return {"propensity": [float(r) for r in rho[:10]], "sessions": int(gc.size),
            "rows": int(c.size), "test_queries": int(gt.size)}


def tune(folder: Path, booster: str, rho: list[float], trials: int, seed: int) -> dict:
    """One ``gbrank tune`` run; each study's pick: its test NDCG@10 on the true grades,
    its CV estimate (IPS-DCG@10) and its parameters."""
    out = folder / f"out-{booster}"
    args = ["--data", str(folder / "clicks.csv"), "--test-data", str(folder / "graded.csv"),
            "--label-col", "clicked", "--qid-col", "session", "--position-col", "shown_at",
            "--propensity", ",".join(f"{r:.6g}" for r in rho),
            "--objectives", "lambdarank:ndcg", "--booster", booster,
            "--trials", str(trials), "--folds", "3", "--seed", str(seed),
            "--no-throughput", "--out", str(out)]
    log = io.StringIO()
    t0 = time.perf_counter()
    with contextlib.redirect_stdout(log), contextlib.redirect_stderr(log):
        code = cli.main(args)
    if code != 0:
        raise RuntimeError(f"gbrank tune exited {code}:\n{log.getvalue()[-2000:]}")
    picks = {}
    for params in (out / "tune" / "models").rglob("params.json"):
        meta = json.loads(params.read_text())
        op = meta.get("objective_params") or {}
        picks[meta["objective"]] = {
            "ndcg@10": meta["test"]["ndcg@10"], "cv_ips_dcg@10": meta["pick"]["estimate"],
            "rounds": meta["num_boost_round"],
            "position_bias": op.get("position_bias"),
            "objective_params": {k: op[k] for k in ("norm", "max_step", "position_bias",
                                                    "bias_norm", "bias_cost",
                                                    "position_bias_regularization")
                                 if k in op},
            "booster_params": meta["booster_params"]}
    return {"picks": picks, "seconds": time.perf_counter() - t0}


NATIVE = {"lightgbm": "native:lambdarank", "xgboost": "native:rank:ndcg"}


def _paired(a, b) -> str:
    d = np.asarray(a, float) - np.asarray(b, float)
    return f"{d.mean():+.4f} ({int((d > 0).sum())}/{d.size})"


def report(saved: dict) -> str:
    rot, boosters = saved["rotations"], saved["boosters"]
    n = len(rot)
    lines = ["# Learning to rank from clicks: tuned against tuned (MQ2008)", "",
             "Generated by `experiments/quality/position_bias_tuned.py` (protocol in its "
             "docstring). Every study tuned by `gbrank tune` on the click log of "
             "`position_bias.py`'s `mq2008_s40` block (40 sessions per query, position-based "
             f"user, η = 1, ε⁻ = 0.1), {saved['trials']} trials per study"
             + (" (the tuner's default)" if saved["trials"] == TRIALS else "")
             + ", 3-fold CV over sessions, every choice by IPS-DCG@10 on held-out "
             "clicks with the simulator's propensities; each pick refit on the whole log and "
             "judged by NDCG@10 on the **true grades** of the rotation's test part, which "
             f"no choice saw. {n} rotation(s).", ""]
    ndcg = {(b, k): [r[b]["picks"].get(k, {}).get("ndcg@10", np.nan) for r in rot]
            for b in boosters for k in ("lambdarank:ndcg", NATIVE[b])}
    head = ["rotation"]
    for b in boosters:
        head += [f"{b}: gbrank `lambdarank:ndcg` (the correction it picked)",
                 f"{b}: `{NATIVE[b]}`"]
    lines += ["| " + " | ".join(head) + " |", "|---|" + "---:|" * (len(head) - 1)]
    for i, r in enumerate(rot):
        cells = [str(r["fold"] + 1)]
        for b in boosters:
            ours = r[b]["picks"].get("lambdarank:ndcg", {})
            op = ours.get("objective_params", {})
            cells += [f"{ndcg[b, 'lambdarank:ndcg'][i]:.4f} "
                      f"({ours.get('position_bias') or 'none'}, norm={op.get('norm')})",
                      f"{ndcg[b, NATIVE[b]][i]:.4f}"]
        lines.append("| " + " | ".join(cells) + " |")
    lines.append("| mean | " + " | ".join(
        f"{np.mean(ndcg[b, k]):.4f}" for b in boosters
        for k in ("lambdarank:ndcg", NATIVE[b])) + " |")
    lines += ["", "Paired differences of NDCG@10 (mean, rotations won):", ""]
    for b in boosters:
        for b2 in boosters:
            lines.append(f"- gbrank on {b} − `{NATIVE[b2]}` ({b2}): "
                         f"{_paired(ndcg[b, 'lambdarank:ndcg'], ndcg[b2, NATIVE[b2]])}")
    cv = {(b, k): [r[b]["picks"].get(k, {}).get("cv_ips_dcg@10", np.nan) for r in rot]
          for b in boosters for k in ("lambdarank:ndcg", NATIVE[b])}
    lines += ["", "What the tuner saw: each pick's IPS-DCG@10 on the clicks (its rescored CV "
              "estimate), gbrank − native on the same booster, and the test's true-grade "
              "difference beside it:", ""]
    for b in boosters:
        lines.append(f"- {b}: IPS-DCG@10 {_paired(cv[b, 'lambdarank:ndcg'], cv[b, NATIVE[b]])}"
                     f" against NDCG@10 {_paired(ndcg[b, 'lambdarank:ndcg'], ndcg[b, NATIVE[b]])}"
                     f" (IPS-DCG@10 of the picks {np.mean(cv[b, 'lambdarank:ndcg']):.4f} and "
                     f"{np.mean(cv[b, NATIVE[b]]):.4f}).")
    picked = [r[b]["picks"].get("lambdarank:ndcg", {}).get("position_bias") or "none"
              for r in rot for b in boosters]
    lines += ["", "Corrections gbrank's study picked (rotation × booster): " + ", ".join(
        f"`{m}` {picked.count(m)}" for m in dict.fromkeys(picked)) + "."]
    lines += ["", "Seconds per tuning run (both studies, rescoring and refits; a shared "
              "2-core machine): " + ", ".join(
                  f"{b} {np.mean([r[b]['seconds'] for r in rot]):.0f}" for b in boosters)
              + ".", ""]
    return "\n".join(lines) + "\n"


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--trials", type=int, default=TRIALS)
    ap.add_argument("--rotations", default="1,2,3,4,5")
    ap.add_argument("--boosters", default="lightgbm,xgboost")
    ap.add_argument("--out", default="position_bias_tuned")
    args = ap.parse_args(argv)
    if not (shared_data_dir() / "MQ2008" / "S1.txt").exists():
        print("MQ2008 is not in ../shared/data: nothing to run")
        return
    boosters = args.boosters.split(",")
    saved = {"trials": args.trials, "boosters": boosters, "rotations": []}
    for f in (int(r) - 1 for r in args.rotations.split(",")):
        with tempfile.TemporaryDirectory() as tmp:
            folder = Path(tmp)
            info = write_rotation(folder, f)
            entry = {"fold": f, **info}
            for b in boosters:
                entry[b] = tune(folder, b, info["propensity"], args.trials, seed=f)
                print(f"rotation {f + 1} {b}: " + ", ".join(
                    f"{k} {v['ndcg@10']:.4f} ({v['position_bias']})"
                    for k, v in entry[b]["picks"].items())
                    + f" [{entry[b]['seconds']:.0f} s]", flush=True)
            saved["rotations"].append(entry)
        (RESULTS / f"{args.out}.json").write_text(json.dumps(saved, indent=1))
        (RESULTS / f"{args.out}.md").write_text(report(saved))
    print(f"wrote {RESULTS / (args.out + '.md')}")


if __name__ == "__main__":
    main()
