"""PNG plots: Optuna's optimisation history and parameter importances per study, and
one comparison across objectives per task."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np

from gbrank._deps import require

__all__ = ["study_plots", "comparison_plot"]

#: Complete trials a study needs before its parameter importances are drawn.
MIN_IMPORTANCE = 10


def _pyplot():
    mpl = require("matplotlib")
    mpl.use("Agg")
    return require("matplotlib.pyplot")


def _title(ax: Any, text: str) -> None:
    """Replace Optuna's title (it sets one on the left) with ours, small enough to fit."""
    for loc in ("left", "center", "right"):
        ax.set_title("", loc=loc)
    ax.set_title(text, loc="left", fontsize=10)


def _save(ax: Any, title: str, path: Path, plt: Any) -> Path:
    """Our title on one of Optuna's axes, a common size, saved to ``path`` and closed."""
    _title(ax, title)
    ax.figure.set_size_inches(7.5, 4.2)
    ax.figure.tight_layout()
    ax.figure.savefig(path, dpi=100)
    plt.close(ax.figure)
    return path


def _mark_pick(ax: Any, finalists: list[dict], metric: str) -> None:
    """The finalists' rescored means (diamonds at their trial numbers) and the pick's
    (a dashed line): the estimate the report gives, beside the optimistic best value."""
    from matplotlib.lines import Line2D

    xs = [f["trial"] for f in finalists]
    ys = [f["rescored"] for f in finalists]
    ax.scatter(xs, ys, marker="D", s=36, color="tab:orange", zorder=5)
    ax.axhline(ys[0], color="tab:orange", ls="--", lw=1.2)
    handles, labels = ax.get_legend_handles_labels()
    renamed = ["best CV as tuned (optimistic)" if lab == "Best Value" else lab
               for lab in labels]
    handles += [Line2D([], [], marker="D", color="tab:orange", ls="", ms=6),
                Line2D([], [], color="tab:orange", ls="--")]
    renamed += ["finalist rescored on fresh folds",
                f"pick (trial {xs[0]}): {metric} {ys[0]:.4f}"]
    ax.legend(handles, renamed, fontsize=8, loc="upper left", bbox_to_anchor=(1.02, 1.0))


def study_plots(study: Any, out_dir: Path, label: str, metric: str,
                title: str | None = None, finalists: list[dict] | None = None
                ) -> list[Path]:
    """``<label>_history.png`` and (with ≥ ``MIN_IMPORTANCE`` complete trials)
    ``<label>_importance.png``
    (``title`` names the study in the plot titles; default ``label``). ``finalists``
    (``{"trial", "rescored"}`` per finalist, the pick first) are marked on the history
    with the pick's rescored estimate."""
    from matplotlib.ticker import MaxNLocator

    title = title or label
    import warnings

    optuna = require("optuna")
    plt = _pyplot()
    vis = optuna.visualization.matplotlib
    out_dir.mkdir(parents=True, exist_ok=True)
    paths = []
    complete = [t for t in study.trials if t.state == optuna.trial.TrialState.COMPLETE]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # Optuna marks its matplotlib API experimental
        if complete:
            ax = vis.plot_optimization_history(study, target_name=f"CV {metric}")
            ax.xaxis.set_major_locator(MaxNLocator(integer=True))
            if finalists:
                _mark_pick(ax, finalists, metric)
            paths.append(_save(ax, f"{title}: optimisation history\n(CV mean {metric})",
                               out_dir / f"{label}_history.png", plt))
        # fANOVA on a handful of trials ranks noise: no importances below MIN_IMPORTANCE.
        if len(complete) >= MIN_IMPORTANCE and any(len(t.params) for t in complete):
            try:
                ax = vis.plot_param_importances(study, target_name=f"CV {metric}")
            except (RuntimeError, ValueError, ZeroDivisionError):
                ax = None
            if ax is not None:
                paths.append(_save(
                    ax, f"{title}: parameter importances\n(fANOVA over {len(complete)} "
                    f"complete trials, for CV {metric})",
                    out_dir / f"{label}_importance.png", plt))
    return paths


def comparison_plot(task_name: str, rows: list[dict], path: Path) -> Path | None:
    """Per objective: its paired differences against the best native baseline on the
    metric it is judged on, one per rescored unit (repeat × fold; dots), their mean
    (bar), the mean's 95 % interval (whisker, from each row's ``low`` and ``high`` when
    given) and a zero line. A dot above zero is a unit the objective wins (for a loss,
    the differences are turned so that above zero is still better); a bar is green or
    red only when its interval excludes 0, grey when the difference is within noise."""
    rows = [r for r in rows if r.get("diffs") is not None]
    if not rows:
        return None
    plt = _pyplot()
    fig, ax = plt.subplots(figsize=(max(8.5, 1.9 * len(rows) + 4.5), 4.6))
    x = np.arange(len(rows))
    means = [float(np.mean(r["diffs"])) for r in rows]
    has_ci = all("low" in r and "high" in r for r in rows)

    def color(r: dict, m: float) -> str:
        if has_ci and r["low"] <= 0.0 <= r["high"]:
            return "tab:gray"
        return "tab:green" if m >= 0 else "tab:red"

    ax.bar(x, means, color=[color(r, m) for r, m in zip(rows, means, strict=True)],
           alpha=0.35, width=0.6)
    for i, r in enumerate(rows):
        d = np.asarray(r["diffs"])
        ax.scatter(np.full(d.size, i) + np.linspace(-0.12, 0.12, d.size), d, color="k", s=14,
                   zorder=3)
        if has_ci:
            ax.errorbar(i + 0.22, means[i], yerr=[[means[i] - r["low"]], [r["high"] - means[i]]],
                        color="tab:blue", capsize=4, lw=1.5, zorder=4)
    ax.axhline(0.0, color="grey", lw=1)
    ax.set_xticks(x)
    ax.set_xticklabels([f"{r['key']}\n{r['target']}\nvs {r['vs']}" for r in rows],
                       fontsize=8)
    ax.set_ylabel("rescored CV − best native's, same unit")
    ax.set_title(f"{task_name}: each objective vs the best native baseline, per unit",
                 fontsize=10)
    from matplotlib.lines import Line2D
    from matplotlib.patches import Patch

    handles = [Line2D([], [], marker="o", color="k", ls="", ms=4, label="one unit")]
    if has_ci:
        handles += [Line2D([], [], color="tab:blue", marker="_", ms=8,
                           label="95 % interval of the mean\n(corrected resampled t)"),
                    Patch(color="tab:green", alpha=0.35, label="mean, ahead beyond noise"),
                    Patch(color="tab:red", alpha=0.35, label="mean, behind beyond noise"),
                    Patch(color="tab:gray", alpha=0.35, label="mean, within noise")]
    else:
        handles += [Patch(color="tab:green", alpha=0.35, label="mean, ahead"),
                    Patch(color="tab:red", alpha=0.35, label="mean, behind")]
    ax.legend(handles=handles, fontsize=8, loc="upper left", bbox_to_anchor=(1.01, 1.0))
    fig.tight_layout()
    path.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(path, dpi=100)
    plt.close(fig)
    return path
