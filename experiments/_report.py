"""What every experiment writes, in one place: Markdown tables, figures, the results files
(JSON of raw figures, the report regenerated from it), the run's header line, and the one paired
comparison (:func:`gbrank.metrics.paired_difference`) in the forms the reports print."""

from __future__ import annotations

import json
import os
import subprocess
import time
from pathlib import Path
from typing import Any

import numpy as np
from _paths import RESULTS  # noqa: E402  (experiments/ is on sys.path)

from gbrank.metrics import PairedDifference, paired_difference


def workqueue_threads() -> None:
    """numba's "omp" threading layer keeps spinning OpenMP threads after a parallel kernel,
    which starve LightGBM's own OpenMP threads (see docs/performance.md, "Threads"); the
    "workqueue" layer has none. Call before any parallel kernel runs."""
    import numba

    if "NUMBA_THREADING_LAYER" not in os.environ:
        numba.config.THREADING_LAYER = "workqueue"


def pyplot():
    """``matplotlib.pyplot`` on the Agg backend (figures go to files only)."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    return plt


def table(header: list[str], rows: list[list[Any]], align: str = "") -> list[str]:
    """Markdown table lines: ``align`` holds one letter per column, ``l`` (``---``) or
    ``r`` (``---:``); default: the first column left, the others right."""
    align = align or "l" + "r" * (len(header) - 1)
    sep = "|" + "".join("---|" if a == "l" else "---:|" for a in align)
    return (["| " + " | ".join(header) + " |", sep]
            + ["| " + " | ".join(str(c) for c in row) + " |" for row in rows])


def paired(d: Any, *, higher_is_better: bool = True, n_folds: int | None = None,
           ) -> PairedDifference:
    """The paired comparison of differences ``d`` already taken unit by unit (a − b)."""
    d = np.asarray(d, dtype=np.float64)
    return paired_difference(d, np.zeros_like(d), higher_is_better=higher_is_better,
                             n_folds=n_folds)


def interval(p: PairedDifference) -> str:
    """``+0.0123 [-0.0040, +0.0286], 4/5``: mean, 95 % interval, units won of all."""
    return f"{p.mean:+.4f} [{p.low:+.4f}, {p.high:+.4f}], {p.wins}/{p.n}"


def verdict(p: PairedDifference) -> str:
    """``wins`` / ``loses`` when the interval excludes 0, else ``tie``."""
    return "wins" if p.low > 0 else "loses" if p.high < 0 else "tie"


def run_header() -> str:
    """``commit abc1234, 2026-11-24 10:00 UTC``: what produced a report."""
    here = Path(__file__).parent
    try:
        sha = subprocess.run(["git", "rev-parse", "--short", "HEAD"], capture_output=True,
                             text=True, cwd=here, check=True).stdout.strip()
        dirty = subprocess.run(["git", "status", "--porcelain", "--untracked-files=no"],
                               capture_output=True, text=True, cwd=here,
                               check=True).stdout.strip()
        commit = sha + (" (with uncommitted changes)" if dirty else "")
    except (OSError, subprocess.CalledProcessError):
        commit = "unknown"
    return f"commit {commit}, {time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}"


def load_json(name: str | Path, default: Any = None) -> Any:
    """A results file (a name in ``experiments/results`` or a path), or ``default``."""
    path = RESULTS / name if isinstance(name, str) else name
    return json.loads(path.read_text()) if path.exists() else default


def save_json(name: str | Path, obj: Any, indent: int = 1, **kw: Any) -> Path:
    path = RESULTS / name if isinstance(name, str) else name
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(obj, indent=indent, **kw))
    return path


def write(name: str | Path, text: str) -> Path:
    """Write a report as given and say where."""
    path = RESULTS / name if isinstance(name, str) else name
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    print(f"wrote {path}", flush=True)
    return path
