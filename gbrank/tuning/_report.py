"""``SUMMARY.md``: the verdict first (per task: the objective and settings to use for
the chosen metric, its paired lead or deficit against the best native objective and
whether it exceeds the fold noise, the code that trains it), then per task one row per
objective and native baseline — the pick's rescored CV score, the best trial's CV as
tuned, the paired difference against the best native baseline over the rescored units,
the held-out test score, trials and time. Written the same whoever wins."""

from __future__ import annotations

import re
import time
from pathlib import Path
from typing import Any

import numpy as np

from gbrank.metrics import get_metric
from gbrank.tuning._results import StudyResult
from gbrank.tuning._tasks import Task
from gbrank.tuning._verdict import (
    ANCHOR,
    CATBOOST,
    CATBOOST_NOT_RUN,
    best,
    catboost_applies,
    compare,
    flat_note,
    flat_value,
    verdict_lines,
)

__all__ = ["paired", "write_summary"]


def _ms(v) -> str:
    v = np.asarray(v, dtype=float)
    if v.size == 0:
        return "—"
    sd = float(np.std(v, ddof=1)) if v.size > 1 else 0.0
    return f"{np.mean(v):.4f} ± {sd:.4f}"


def best_native(rows: list[StudyResult], metric: str) -> StudyResult | None:
    """The native baseline with the best rescored mean on ``metric`` (its pick)."""
    return best([r for r in rows if r.native and r.status == "done"
                 and not r.key.startswith((ANCHOR, CATBOOST))], metric)


def paired(r: StudyResult, rows: list[StudyResult], n_folds: int):
    """The comparison of ``r`` with the best *other* native baseline on ``r``'s metric,
    over the rescored units (the same fresh folds in every study, so it is paired);
    None without one."""
    nat = best_native([x for x in rows if x is not r], r.target)
    if nat is None:
        return None
    return compare(r, nat, r.target, n_folds)


def _fmt_t(sec: float) -> str:
    return f"{sec:.0f} s" if sec < 120 else f"{sec / 60:.1f} min"


def _n_folds(rows: list[StudyResult]) -> int:
    return max((len(v) for r in rows for v in r.folds.values()), default=0)


def _n_units(rows: list[StudyResult]) -> int:
    return max((len(v) for r in rows for v in r.units.values()), default=0)


def task_section(task: Task, rows: list[StudyResult], n_folds: int) -> tuple[list[str], list[dict]]:
    n_units = _n_units(rows)
    # A click log with a held-out part of true grades: its test column is their metric.
    graded = task.graded_test_metric
    lines = [f"## {task.name}", "", task.description, "",
             *(x for note in task.notes for x in (note[0].upper() + note[1:] + ".", "")),
             f"{task.y.size} tuning rows ({n_folds}-fold CV"
             + (", folds over queries" if task.grouped else
                ", group-less: one query, folds over rows" if task.groupless
                else ", folds over rows")
             + f"), {task.y_test.size} held-out test rows"
             + (f" ({task.group_test.size} queries)" if task.grouped else "")
             + (f", listed in `{held_out_file(task)}` (their places in the data read, "
                "from 0; in a file, data rows only; in the order they were judged)"
                if task.held_out_rows is not None else "") + ".", "",
             "| objective | judged on | pick: rescored CV (mean ± sd) | best trial's CV as "
             "tuned | Δ vs best native (paired, 95 % interval) | units won | "
             + (f"test ({graded}, true grades) " if graded else "test ")
             + "| trials complete / pruned / failed | time |",
             "|---|---|---|---|---|---|---|---|---|"]
    plot_rows = []
    for r in rows:
        if r.status != "done":
            lines.append(f"| {r.key} | {r.target} | **{r.status}**: {r.message} "
                         "| | | | | | |")
            continue
        judged = r.target + ("" if r.higher_is_better else " (lower is better)")
        if r.own_target != r.target:
            judged += f" (own: {r.own_target})"
        anchor = r.key.startswith(ANCHOR)
        pick = (_ms(r.units[r.target]) + ("" if anchor else f" (trial {r.pick_trial})")
                if r.target in r.units else "—")
        as_tuned = (f"{r.best_value:.4f}" + ("" if anchor else f" (trial {r.best_trial})")
                    if r.best_value is not None else "—")
        if flat_value(r) is not None:
            as_tuned += " **flat**: every trial"
        c = paired(r, rows, n_folds)
        if c is None:
            delta, won = "— (no other native)", "—"
        else:
            d = c.diff
            delta = (f"{d.mean:+.4f} [{d.low:+.4f}, {d.high:+.4f}] vs {c.b.key}"
                     + (" **beyond noise**" if d.beyond_noise else ""))
            won = f"{d.wins}/{d.n}"
            if not r.native:
                plot_rows.append({"key": r.key, "target": r.target, "vs": c.b.key,
                                  "diffs": d.diffs.tolist(), "low": d.low, "high": d.high})
        time_ = _fmt_t(r.seconds) + (f" + {_fmt_t(r.rescore_seconds)} rescoring"
                                     if r.rescore_seconds else "")
        lines.append(
            f"| {r.key} | {judged} | {pick} | {as_tuned} | {delta} | {won} "
            f"| {r.test.get(graded or r.target, float('nan')):.4f} "
            f"| {r.n_complete} / {r.n_pruned} / {r.n_fail} | {time_} |")
    flat = [flat_note(r) for r in rows if r.status == "done" and flat_value(r) is not None]
    if flat:
        lines += ["", *(f"- {note}" for note in flat)]
    done = [r for r in rows if r.status == "done" and r.units]
    if done:
        ms = list(task.metrics)
        lines += ["", f"Every metric of the task at each study's pick (rescored CV mean over "
                  f"{n_units} units; held-out test in brackets"
                  + (", below for the held-out part of true grades" if graded else "")
                  + "), so objectives compare like with like; **bold**: the best rescored "
                  "mean:", "",
                  "| objective | " + " | ".join(ms) + " |",
                  "|---|" + "---|" * len(ms)]
        best = {}
        for m in ms:
            vals = [float(np.mean(r.units[m])) for r in done if m in r.units]
            best[m] = (max if get_metric(m).higher_is_better else min)(vals) if vals else None
        for r in done:
            cells = []
            for m in ms:
                if m not in r.units:
                    cells.append("—")
                    continue
                v = float(np.mean(r.units[m]))
                cell = f"{v:.4f}" + (f" ({r.test[m]:.4f})" if m in r.test else "")
                cells.append(f"**{cell}**" if v == best[m] else cell)
            lines.append(f"| {r.key} | " + " | ".join(cells) + " |")
        if graded:
            tm = list(task.test_metrics)
            lines += ["", "The held-out part's true grades (no clicks there; every study's "
                      "refit on the whole tuning part):", "",
                      "| objective | " + " | ".join(tm) + " |", "|---|" + "---|" * len(tm)]
            lines += [f"| {r.key} | " + " | ".join(
                f"{r.test[m]:.4f}" if m in r.test else "—" for m in tm) + " |"
                for r in done]
        lines += _cut_lines(done)
        lines += ["", "The pick of each study: its best trials as tuned (finalists: trial, "
                  "CV as tuned → rescored):", ""]
        for r in done:
            if r.finalists:
                lines.append(f"- {r.key}: " + "; ".join(
                    f"{f['trial']}: {f['cv']:.4f} → {f['rescored']:.4f}"
                    for f in r.finalists))
    return lines, plot_rows


def _cut_lines(done: list[StudyResult]) -> list[str]:
    """How the threshold metrics of a binary task (the decisions of a multiclass one)
    were judged, and each pick's cut (class offsets)."""
    cut = [r for r in done if r.cuts]
    if not cut:
        return []
    if any(isinstance(c, list) for r in cut for c in r.cuts.values()):
        target = cut[0].target
        return ["", f"Multiclass decisions are judged as `GBClassifier` decides by default: "
                "at class offsets added to the log-probabilities (threshold moving for K "
                f"classes), the offsets best for {target} on rows the model is not scored on "
                "(a plain argmax would compare how each objective happens to suit it, not "
                "the models): on a validation fold, at the offsets best on the other folds' "
                "validation rows; on the held-out split, at the offsets best on the "
                "pick's out-of-fold predictions (every rescored unit pooled), which the "
                "recommendation's code decides at (`decision=[...]`). Every metric of the "
                "decided class reads them; `mlogloss` reads the probabilities. The picks' "
                "offsets (columns as the sorted classes):", "",
                *(f"- {r.key}: [" + ", ".join(f"{b:.4g}" for b in r.cuts[target]) + "]"
                  for r in cut if target in r.cuts)]
    names = ", ".join(dict.fromkeys(m for r in cut for m in r.cuts))
    return ["", f"Threshold metrics ({names}) read the scores at a cut; each model is judged "
            "at a cut chosen "
            "on rows it is not scored on (a fixed cut would compare cuts, not models): on "
            "a validation fold, each half of the rows at the cut best on the other half; on "
            "the held-out split, at the cut best on the pick's out-of-fold predictions "
            "(every rescored unit pooled), which the recommendation's code decides at "
            "(`threshold=`, a probability). The picks' thresholds:", "",
            *(f"- {r.key}: " + ", ".join(f"{m} {p:.4g}" for m, p in r.cuts.items())
              for r in cut)]


def write_summary(path: Path, tasks: list[Task], results: list[StudyResult], *,
                  config_line: str, wall_seconds: float | None = None, plot_dir: Path | None = None,
                  metric: str | None = None, booster: str = "lightgbm",
                  data_hint: str = "", position_hint: str = "", data_remark: str = "",
                  baselines: Any = None) -> Path:
    """Write ``SUMMARY.md`` (and, with ``plot_dir``, one comparison PNG per task).

    ``metric`` is the run's ``--metric`` (None: each task's verdict is on its headline
    metric); ``data_hint`` (optional) tells the reader how to load the data the verdict's
    code trains on, ``position_hint`` where its positions are (added only when that
    code trains on them), ``data_remark`` a remark after both.
    """
    from gbrank.tuning._plots import comparison_plot

    lines = ["# gbrank tuning summary", "",
             f"{time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}. {config_line}"
             + (f" Wall time {_fmt_t(wall_seconds)}." if wall_seconds else ""), "",
             "## Verdict", ""]
    for task in tasks:
        rows = [r for r in results if r.task == task.name]
        lines += verdict_lines(task.name, rows, metric or task.metrics[0], _n_folds(rows),
                               kind=task.kind, booster=booster, groupless=task.groupless,
                               metric_chosen=metric is not None, data_hint=data_hint,
                               position_hint=position_hint, data_remark=data_remark,
                               test_metric=task.graded_test_metric)
        if "catboost" in (baselines or ()) and not catboost_applies(task):
            lines += [f"CatBoost baseline (`--baselines catboost`): {CATBOOST_NOT_RUN}.", ""]
    lines += ["## How to read the tables", "",
              "Every study tunes its objective on the same cross-validation folds (each "
              "trial early-stopped on the metric it is judged on). A study's best trial is "
              "the maximum of many noisy CV scores, each early-stopped on the rows it is "
              "scored on: optimistic (*best trial's CV as tuned*). So each study's best "
              "trials (its finalists) are rescored on fresh shuffles of the folds "
              "(repeats), each repeat with another booster seed (a configuration that won "
              "by a lucky seed of its bagging or random splits does not keep its luck), "
              "trained for exactly the rounds of their refit, and the best "
              "there is the study's *pick*: the configuration it refits, saves and "
              "recommends, and whose rescored mean is its CV estimate. Every study is "
              "rescored on the same units (repeat × fold), so Δ against the best native "
              "baseline is paired unit by unit; its 95 % interval is the corrected "
              "resampled t-test's (the units share training rows), and *beyond noise* "
              "means it excludes 0 (the verdict judges the best of m gbrank objectives "
              "at 1 − 0.05/m, for having picked it). *test* is the refit pick on the "
              "held-out split (data never seen while tuning). Time counts complete and "
              "pruned trials, plus the rescoring; a study stops at its trial total or its "
              "time cap. The *Gradient gate* section lists objectives refused for wrong "
              "gradients.", ""]
    gate_lines = []
    for task in tasks:
        rows = [r for r in results if r.task == task.name]
        sec, plot_rows = task_section(task, rows, _n_folds(rows))
        lines += sec
        if plot_dir is not None and plot_rows:
            p = comparison_plot(task.name, plot_rows, plot_dir / f"comparison_{task.name}.png")
            if p is not None:
                rel = p.relative_to(path.parent) if p.is_relative_to(path.parent) else p
                lines += ["", f"![{task.name}: paired differences]({rel})"]
        lines.append("")
        gate_lines += [f"- {r.task} / {r.message}" for r in rows if r.status == "rejected"]
    lines += ["## Gradient gate", ""]
    lines += gate_lines or ["Every gbrank objective passed `gbrank.gradcheck` on random inputs "
                            "and on a sample of each task's labels."]
    path.parent.mkdir(parents=True, exist_ok=True)
    for task in tasks:
        if task.held_out_rows is not None:
            (path.parent / held_out_file(task)).write_text(
                "".join(f"{r}\n" for r in task.held_out_rows))
    path.write_text("\n".join(lines) + "\n")
    return path


def held_out_file(task: Task) -> str:
    """The file beside ``SUMMARY.md`` that lists the rows the run held out (one row
    number a line: the place in the source, from 0; data rows only)."""
    return f"held_out_{task.name}.txt"


#: :func:`held_out_file`'s names as a SUMMARY.md quotes them (the name without ``.txt``).
HELD_OUT_LISTED = re.compile(r"`(held_out_[^`/]*)\.txt`")
