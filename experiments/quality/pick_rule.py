"""Does the tuner's pick survive held-out data? The old rule (the study's best CV trial)
against the pick rule (finalists rescored on fresh folds), and the tuner's overall
recommendation against Optuna's ``LightGBMTunerCV`` given the same wall time.

Data (reference data of ``../shared/data``):

- ``rank``: LightGBM's ``rank.train`` (201 queries) tuned on, ``rank.test`` (50 queries)
  held out; 5-fold CV, ``--seconds-rank`` per study (default 60);
- ``mq2008``: MQ2008 (LETOR 4.0) folds 1–5 (``gbrank.tuning._sources.letor_task``: four parts
  tuned on, the fifth held out); 3-fold CV, ``--seconds-mq`` per study (default 30).

Each data set runs the tuner's engine with ``--metric ndcg@10`` on the studies
``lambdarank:ndcg``, ``ranknet``, ``native:lambdarank`` (and ``native:rank_xendcg`` on
``rank``), unlimited trials within the time cap, 100 rounds at most with early stopping
after 15, one thread; the pick rescores 3 finalists on 2 fresh shuffles of the folds.
For every study it refits both configurations on the whole tuning part and scores the
held-out queries:

- old rule: the best trial; its CV estimate is the trial's CV value;
- pick: the tuner's pick; its estimate is the rescored mean.

*gap* = held-out − estimate; *within noise*: |gap| ≤ 2 × the larger of the fold
scores' standard deviation and the held-out score's standard error over its queries
(a held-out part is about a fold's size, so one held-out score scatters by about that
much). The mean gap over studies measures the bias of each rule's estimate. The overall
recommendation (the verdict's rule) and the best-CV study under the old rule are set
against ``LightGBMTunerCV`` on native ``lambdarank`` run with the tuner's time on the
task as its budget (``--anchor``).

Writes ``experiments/results/pick_rule.md`` and ``pick_rule.json`` (raw values;
``--from-json``: the report from them; ``--quick``: a smoke run, ``pick_rule_quick.*``).
"""

from __future__ import annotations

import argparse
import shutil
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from _paths import RESULTS, shared_data_dir  # noqa: E402
from _report import load_json, paired, run_header, save_json, table, workqueue_threads, write  # noqa: E402

workqueue_threads()

METRIC = "ndcg@10"


def _tasks(which: str, quick: bool):
    from gbrank.datasets import load_letor
    from gbrank.tuning import Task
    from gbrank.tuning._sources import letor_task

    data = shared_data_dir()
    if which == "rank":
        X, y, g = load_letor(data / "rank.train")
        Xt, yt, gt = load_letor(data / "rank.test", n_features=X.shape[1])
        yield Task("rank", "ranking", X, y, g, Xt, yt, gt, "rank.train → rank.test")
        return
    for k in ((1,) if quick else (1, 2, 3, 4, 5)):
        yield letor_task(data / "MQ2008", fold=k, name=f"MQ2008-fold{k}")


def _held_out(task, key: str, params: dict | None, rounds: int, cfg,
              booster_params: dict | None = None) -> tuple[float, float]:
    """Refit a configuration (a trial's ``params``, or the anchor's ``booster_params``)
    on the whole tuning part; its held-out NDCG@10 and that score's standard error over
    the held-out queries."""
    from gbrank.metrics import ndcg_per_query
    from gbrank.tuning._cv import fit_full
    from gbrank.tuning._pick import configuration
    from gbrank.tuning._spaces import build_objective, candidate

    if booster_params is not None:
        bp, obj = booster_params, None
    else:
        cand = candidate(key, cfg.booster)
        bp, op = configuration(params, cand, cfg.booster, task.y, cfg.seed)
        obj = None if cand.is_native else build_objective(cand, op, cfg.seed)
    _, _, s = fit_full(task, cfg.booster, bp, obj, rounds, cfg.n_jobs)
    v = ndcg_per_query(task.y_test, s, task.group_test, k=10).values
    return float(np.mean(v)), float(np.std(v, ddof=1) / np.sqrt(v.size))


def run_task(task, keys: list[str], seconds: float, n_folds: int, quick: bool) -> dict:
    import optuna

    from gbrank.tuning import TuneConfig, tune_task
    from gbrank.tuning._storage import default_storage_url, open_storage
    from gbrank.tuning._verdict import recommend

    out_dir = Path(tempfile.mkdtemp(prefix="pick_rule_"))
    cfg = TuneConfig(trials=10_000, timeout=seconds, n_folds=n_folds, max_rounds=100,
                     patience=15, out_dir=out_dir, objectives=keys, metric=METRIC,
                     anchor=True, save_models=False, plots=False, progress=True,
                     finalists=3, repeats=1 if quick else 2)
    t0 = time.perf_counter()
    results = tune_task(task, cfg)
    wall = time.perf_counter() - t0
    storage = open_storage(default_storage_url(out_dir))
    studies = []
    for r in results:
        if r.status != "done":
            continue
        row = {"key": r.key, "complete": r.n_complete, "pruned": r.n_pruned,
               "seconds": r.seconds, "rescore_seconds": r.rescore_seconds,
               "new_cv": r.estimate, "new_sd": float(np.std(r.units[METRIC], ddof=1)),
               "pick_trial": r.pick_trial, "best_trial": r.best_trial,
               "units": r.units[METRIC], "old_cv": r.best_value,
               "old_sd": float(np.std(r.folds[METRIC], ddof=1)), "message": r.message}
        if r.key.startswith("anchor:"):
            test = _held_out(task, r.key, None, r.rounds, cfg, r.booster_params)
            row.update(new_test=test[0], new_se=test[1], old_test=test[0], old_se=test[1])
        else:
            new = _held_out(task, r.key, r.best_params, r.rounds, cfg)
            assert abs(new[0] - r.test[METRIC]) < 1e-9  # the tuner's own refit
            best = optuna.load_study(study_name=r.study, storage=storage).best_trial
            rounds = max(1, int(round(float(np.mean(best.user_attrs["best_iters"])))))
            old = new if r.pick_trial == r.best_trial else _held_out(
                task, r.key, best.params, rounds, cfg)
            row.update(new_test=new[0], new_se=new[1], old_test=old[0], old_se=old[1])
        studies.append(row)
    shutil.rmtree(out_dir, ignore_errors=True)  # the studies' database: nothing kept
    rec = recommend(results, METRIC, n_folds)
    ours = [s for s in studies if not s["key"].startswith("anchor:")]
    old_best = max(ours, key=lambda s: s["old_cv"])
    return {"task": task.name, "description": task.description, "wall": wall,
            "test_queries": int(task.group_test.size), "studies": studies,
            "recommended": rec.use.key, "recommended_test": rec.use.test[METRIC],
            "old_recommended": old_best["key"], "old_recommended_test": old_best["old_test"],
            "anchor_test": rec.anchor.test[METRIC] if rec.anchor else None,
            "anchor_message": rec.anchor.message if rec.anchor else "",
            "versus_anchor": None if rec.versus_anchor is None else [
                rec.versus_anchor.diff.mean, rec.versus_anchor.diff.low,
                rec.versus_anchor.diff.high]}


def report(runs: list[dict], header: str, settings: str) -> str:
    lines = ["# The pick rule on held-out queries", "",
             f"`experiments/quality/pick_rule.py`, {header}. {settings}", "",
             "Per study: the CV estimate and the held-out NDCG@10 of the configuration "
             "each rule recommends; gap = held-out − estimate; *fold sd*: the standard "
             "deviation of the fold scores behind the estimate (the fold noise); *se*: "
             "the held-out score's own standard error over its queries; ✓: |gap| ≤ 2 × "
             "max(fold sd, se), the scatter of one held-out score about the size of a "
             "fold.", ""]
    gaps, inside, rows = {"old": [], "new": []}, {"old": [], "new": []}, []
    for run in runs:
        for s in run["studies"]:
            cells, anchor = [], s["key"].startswith("anchor:")
            for rule in ("old", "new"):
                cv, test, sd, se = (s[f"{rule}_{k}"] for k in ("cv", "test", "sd", "se"))
                gap = test - cv
                ok = abs(gap) <= 2 * max(sd, se)
                if not anchor:
                    gaps[rule].append(gap)
                    inside[rule].append(ok)
                cells.append(f"{cv:.4f} → {test:.4f} ({gap:+.4f}; fold sd {sd:.4f}, "
                             f"se {se:.4f}) " + ("✓" if ok else "✗"))
            pick = cells[1] + ("" if anchor or s["pick_trial"] == s["best_trial"] else
                               f" (trial {s['pick_trial']}, not {s['best_trial']})")
            rows.append([run["task"], s["key"], s["message"] if anchor else
                         f"{s['complete']} / {s['pruned']}", cells[0], pick])
    lines += [*table(["data", "study", "trials (complete / pruned)",
                      "old rule: CV → held-out (gap)", "pick: rescored CV → held-out (gap)"],
                     rows, "lllll"), "", "Over the tuner's studies (the anchor aside):", "",
              *table(["rule", "mean gap", "mean |gap|", "within noise"],
                     [[label, f"{np.mean(gaps[rule]):+.4f}",
                       f"{np.abs(gaps[rule]).mean():.4f}",
                       f"{sum(inside[rule])}/{len(inside[rule])}"]
                      for rule, label in (("old", "old rule (best CV trial)"),
                                          ("new", "pick (rescored)"))])]
    dt = paired([s["new_test"] - s["old_test"] for run in runs for s in run["studies"]
                 if not s["key"].startswith("anchor:")])
    lines += ["", f"Held-out NDCG@10 of the configuration each rule picks, pick − old rule, "
              f"over the {dt.n} studies: mean {dt.mean:+.4f} (standard error {dt.se:.4f}); "
              f"the pick better in {dt.wins}, the same configuration or score in "
              f"{int(np.sum(dt.diffs == 0))}, worse in {int(np.sum(dt.diffs < 0))}. The pick "
              "makes the estimate less optimistic (the mean gap above); whether it also picks "
              "better configurations is what this line measures."]
    rows = [[run["task"], f"{run['wall'] / 60:.1f} min",
             f"{run['recommended']} {run['recommended_test']:.4f}",
             f"{run['old_recommended']} {run['old_recommended_test']:.4f}",
             f"{run['anchor_test']:.4f}", "—" if (va := run["versus_anchor"]) is None
             else f"{va[0]:+.4f} [{va[1]:+.4f}, {va[2]:+.4f}]"] for run in runs]
    lines += ["", "## The overall recommendation against LightGBMTunerCV (same wall time)", "",
              *table(["data", "tuner's time", "recommended (verdict rule) → held-out",
                      "old rule's best-CV study → held-out", "LightGBMTunerCV → held-out",
                      "recommended − LightGBMTunerCV, rescored CV (95 % interval)"], rows,
                     "lrllll")]
    d = np.asarray([run["recommended_test"] - run["anchor_test"] for run in runs])
    old_d = np.asarray([run["old_recommended_test"] - run["anchor_test"] for run in runs])
    lines += ["", f"Held-out NDCG@10, recommended − LightGBMTunerCV: mean {d.mean():+.4f} over "
              f"{d.size} data set(s) ({int(np.sum(d >= 0))} at least as good): "
              + ", ".join(f"{x:+.4f}" for x in d) + f"; the old rule's best-CV study − "
              f"LightGBMTunerCV: mean {old_d.mean():+.4f} ({int(np.sum(old_d >= 0))} at least "
              "as good)."]
    return "\n".join(lines) + "\n"


def main(argv: list[str] | None = None) -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--data", choices=("rank", "mq2008", "both"), default="both")
    p.add_argument("--seconds-rank", type=float, default=60.0)
    p.add_argument("--seconds-mq", type=float, default=30.0)
    p.add_argument("--quick", action="store_true")
    p.add_argument("--out", type=Path, default=RESULTS)
    p.add_argument("--from-json", type=Path, help="rewrite the report from a saved "
                   "pick_rule.json (no training)")
    args = p.parse_args(argv)
    if args.from_json is not None:
        saved = load_json(args.from_json)
        write(args.out / args.from_json.with_suffix(".md").name,
              report(saved["runs"], saved["header"], saved["settings"]))
        return
    header = run_header()
    t0 = time.perf_counter()
    runs = []
    sec_rank = 15.0 if args.quick else args.seconds_rank
    sec_mq = 10.0 if args.quick else args.seconds_mq
    if args.data in ("rank", "both"):
        for task in _tasks("rank", args.quick):
            runs.append(run_task(task, ["lambdarank:ndcg", "ranknet", "native:lambdarank",
                                        "native:rank_xendcg"], sec_rank, 5, args.quick))
    if args.data in ("mq2008", "both"):
        for task in _tasks("mq2008", args.quick):
            runs.append(run_task(task, ["lambdarank:ndcg", "ranknet", "native:lambdarank"],
                                 sec_mq, 3, args.quick))
    settings = (f"Every study judged on {METRIC} (`--metric`), ≤ 100 rounds, early stopping "
                f"after 15, one thread, unlimited trials within {sec_rank:.0f} s per study "
                f"(rank, 5-fold CV) and {sec_mq:.0f} s (MQ2008 folds, 3-fold CV); the pick "
                f"rescores 3 finalists on {1 if args.quick else 2} fresh fold shuffle(s). "
                f"Total {(time.perf_counter() - t0) / 60:.0f} min on a shared 2-core "
                "machine.")
    stem = "pick_rule" + ("_quick" if args.quick else "")
    save_json(args.out / f"{stem}.json", {"header": header, "settings": settings, "runs": runs})
    write(args.out / f"{stem}.md", report(runs, header, settings))


if __name__ == "__main__":
    main()
