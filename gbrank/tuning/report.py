"""``SUMMARY.md``: per task, one row per objective and native baseline — CV score, the
paired fold-wise difference against the best native baseline and its win count, the
held-out test score, trials and time. Written the same whoever wins."""

from __future__ import annotations

import time
from pathlib import Path

import numpy as np

from gbrank.tuning.results import StudyResult
from gbrank.tuning.tasks import Task

__all__ = ["paired", "write_summary"]


def _ms(v) -> str:
    v = np.asarray(v, dtype=float)
    if v.size == 0:
        return "—"
    sd = float(np.std(v, ddof=1)) if v.size > 1 else 0.0
    return f"{np.mean(v):.4f} ± {sd:.4f}"


def best_native(rows: list[StudyResult], metric: str) -> StudyResult | None:
    """The native baseline with the highest CV mean on ``metric`` (its best trial)."""
    nat = [r for r in rows if r.native and r.status == "done" and metric in r.folds
           and not r.key.startswith("anchor:")]
    if not nat:
        return None
    return max(nat, key=lambda r: float(np.mean(r.folds[metric])))


def paired(r: StudyResult, rows: list[StudyResult]) -> tuple[StudyResult | None, np.ndarray | None]:
    """Fold-wise differences of ``r`` against the best *other* native baseline on
    ``r``'s own metric (the same folds in every study, so the difference is paired)."""
    others = [x for x in rows if x is not r]
    nat = best_native(others, r.target)
    if nat is None or r.target not in r.folds:
        return None, None
    return nat, np.asarray(r.folds[r.target]) - np.asarray(nat.folds[r.target])


def _fmt_t(sec: float) -> str:
    return f"{sec:.0f} s" if sec < 120 else f"{sec / 60:.1f} min"


def task_section(task: Task, rows: list[StudyResult], n_folds: int) -> tuple[list[str], list[dict]]:
    lines = [f"## {task.name}", "", task.description, "",
             f"{task.y.size} tuning rows ({n_folds}-fold CV"
             + (", folds over queries" if task.grouped else ", folds over rows")
             + f"), {task.y_test.size} held-out test rows.", "",
             "| objective | tuned for | CV (mean ± sd) | Δ vs best native (paired) "
             "| folds won | test | trials complete / pruned / failed | time | trials/min |",
             "|---|---|---|---|---|---|---|---|---|"]
    plot_rows = []
    for r in rows:
        if r.status != "done":
            lines.append(f"| {r.key} | {r.target} | **{r.status}**: {r.message} "
                         "| | | | | | |")
            continue
        nat, d = paired(r, rows)
        if d is None:
            delta, won = "— (no other native)", "—"
        else:
            sd = float(np.std(d, ddof=1)) if d.size > 1 else 0.0
            delta = f"{np.mean(d):+.4f} ± {sd:.4f} vs {nat.key}"
            won = f"{int(np.sum(d > 0))}/{d.size}"
            if not r.native:
                plot_rows.append({"key": r.key, "target": r.target, "vs": nat.key,
                                  "diffs": d.tolist()})
        lines.append(
            f"| {r.key} | {r.target} | {_ms(r.folds[r.target])} | {delta} | {won} "
            f"| {r.test.get(r.target, float('nan')):.4f} "
            f"| {r.n_complete} / {r.n_pruned} / {r.n_fail} | {_fmt_t(r.seconds)} "
            f"| {r.trials_per_minute:.1f} |")
    done = [r for r in rows if r.status == "done"]
    if done:
        ms = list(task.metrics)
        lines += ["", "Every metric of the task at each study's best trial (CV mean; "
                  "held-out test in brackets), so objectives compare like with like:", "",
                  "| objective | " + " | ".join(ms) + " |",
                  "|---|" + "---|" * len(ms)]
        best = {m: max(float(np.mean(r.folds[m])) for r in done) for m in ms}
        for r in done:
            cells = []
            for m in ms:
                v = float(np.mean(r.folds[m]))
                cell = f"{v:.4f} ({r.test.get(m, float('nan')):.4f})"
                cells.append(f"**{cell}**" if v == best[m] else cell)
            lines.append(f"| {r.key} | " + " | ".join(cells) + " |")
    return lines, plot_rows


def write_summary(path: Path, tasks: list[Task], results: list[StudyResult], *,
                  config_line: str, throughput: list[str] | None = None,
                  wall_seconds: float | None = None, plot_dir: Path | None = None) -> Path:
    """Write ``SUMMARY.md`` (and, with ``plot_dir``, one comparison PNG per task)."""
    from gbrank.tuning.plots import comparison_plot

    lines = ["# gbrank tuning summary", "",
             f"{time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}. {config_line}"
             + (f" Wall time {_fmt_t(wall_seconds)}." if wall_seconds else ""), "",
             "Every study maximises its objective's own metric on the same cross-validation "
             "folds; Δ is the fold-by-fold difference against the best native baseline on "
             "that metric (mean ± sd over folds), *folds won* counts folds where the "
             "objective is higher. *test* is the refit best model on the held-out split "
             "(queries never seen while tuning). Time and trials/min count complete and "
             "pruned trials; a study stops at its trial total or its time cap, whichever "
             "comes first. The *Gradient gate* section lists objectives refused for "
             "wrong gradients.",
             ""]
    gate_lines = []
    for task in tasks:
        rows = [r for r in results if r.task == task.name]
        n_folds = max((len(v) for r in rows for v in r.folds.values()), default=0)
        sec, plot_rows = task_section(task, rows, n_folds)
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
    if throughput:
        lines += ["", *throughput]
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("\n".join(lines) + "\n")
    return path
