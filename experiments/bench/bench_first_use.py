"""First use: the first call of every public objective and metric on an empty numba cache.

What a fresh install, Docker image, CI runner or new Dask worker waits for. Every case
runs in a fresh process with its own empty ``NUMBA_CACHE_DIR`` (cold: numba compiles
what the call needs), then again in a fresh process on the cache the first one filled
(warm: the kernels load from disk). Cases cover the default options and each option
that selects another kernel (metric, weighting, norm, group-less, threaded sizes,
num_class, measure). The last rows run every case in one process, and ranx's first
``evaluate`` (its own numba compilation) is measured in the same run as the peer.

``--before <old checkout>`` measures both checkouts case by case in one run (``--markdown``,
``--json``: where to write it; ``--render``: the report of such a JSON), and the goal
(:data:`GOAL`: eleven first calls in one process, per call); ``--goal`` that alone. Times
are wall seconds of the call alone (imports excluded; the import line gives ``import
gbrank`` + the objective and metric modules) and CPU seconds of the process (compilation
is single-threaded: CPU time is the figure a busy machine disturbs least).
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[1]
sys.path.insert(0, str(HERE.parent))
from _report import table as md_table  # noqa: E402

# Data every case can use; no gbrank kernel runs while it is made.
_SETUP = r"""
import numpy as np
rng = np.random.default_rng(0)
def grouped(n_queries, size):
    y = rng.integers(0, 5, n_queries * size).astype(np.float64)
    s = rng.standard_normal(y.size)
    return y, s, np.full(n_queries, size, dtype=np.int64)
y, s, g = grouped(20, 100)                       # 2,000 rows in 20 queries
yb = (rng.random(2000) < 0.05).astype(np.float64)  # binary, 5% positives
sb = rng.standard_normal(2000)
# Probabilities for the binary metrics (read as probabilities by default; an older checkout
# reads them as margins, which compiles the same kernels).
pb = rng.random(2000)
yl, sl = rng.integers(0, 5, 20_000).astype(np.float64), rng.standard_normal(20_000)
yt, st, gt = grouped(2_500, 100)                 # 250,000 rows: the threaded forms
ym = rng.integers(0, 3, 2000).astype(np.float64)
sm = rng.standard_normal((2000, 3))
"""

# (label, statement): one public call each, the options that select another kernel.
CASES = [
    ("LambdaRank()", "LambdaRank().grad_hess(y, s, g)"),
    ("LambdaRank('err')", "LambdaRank('err').grad_hess(y, s, g)"),
    ("LambdaRank('map')", "LambdaRank('map').grad_hess(y, s, g)"),
    ("LambdaRank('mrr')", "LambdaRank('mrr').grad_hess(y, s, g)"),
    ("LambdaRank(norm=True)", "LambdaRank(norm=True).grad_hess(y, s, g)"),
    ("LambdaRank(weighting='ndcg_loss2pp')",
     "LambdaRank(weighting='ndcg_loss2pp').grad_hess(y, s, g)"),
    ("LambdaRank() group-less 20k rows", "LambdaRank().grad_hess(yl, sl)"),
    ("LambdaRank() 250k rows (threads)", "LambdaRank().grad_hess(yt, st, gt)"),
    ("RankNet()", "RankNet().grad_hess(y, s, g)"),
    ("RankNet(ties='pull')", "RankNet(ties='pull').grad_hess(y, s, g)"),
    ("RankNet() group-less 20k rows (fast mode)", "RankNet().grad_hess(yl, sl)"),
    ("FocalLoss()", "FocalLoss().grad_hess(yb, sb)"),
    ("FocalLoss(num_class=3)", "FocalLoss(num_class=3).grad_hess(ym, sm)"),
    ("FBetaSurrogate()", "FBetaSurrogate(random_state=0).grad_hess(yb, sb)"),
    ("FBetaSurrogate(measure='balanced')",
     "FBetaSurrogate(measure='balanced').grad_hess(yb, sb)"),
    ("ndcg(k=10)", "metrics.ndcg(y, s, g, k=10)"),
    ("ndcg(k=10) 250k rows (threads)", "metrics.ndcg(yt, st, gt, k=10)"),
    ("err(k=10)", "metrics.err(y, s, g, k=10)"),
    ("mean_ap", "metrics.mean_ap(y, s, g, k=10)"),
    ("mrr", "metrics.mrr(y, s, g)"),
    ("precision_at_k", "metrics.precision_at_k(y, s, g, k=5)"),
    ("recall_at_k", "metrics.recall_at_k(y, s, g, k=5)"),
    ("pair_accuracy", "metrics.pair_accuracy(y, s, g)"),
    ("pair_accuracy group-less", "metrics.pair_accuracy(yl, sl)"),
    ("f1", "metrics.f1(yb, pb)"),
    ("balanced_measure", "metrics.balanced_measure(yb, pb)"),
    ("best_threshold", "metrics.best_threshold(yb, pb)"),
]

# The first-use goal: these eleven first calls, one after the other in one fresh process
# on an empty cache, take at most 20 s of CPU in all (and pair_accuracy and group-less
# LambdaRank at most 3 s each). --before measures them per call, twice per checkout. A
# label of CASES, or an objective whose first call is ``.grad_hess(y, s, g)``.
GOAL = [(label, dict(CASES).get(label) or f"{label}.grad_hess(y, s, g)") for label in (
    "ndcg(k=10)", "err(k=10)", "pair_accuracy", "LambdaRank()", "LambdaRank() group-less 20k rows",
    "LambdaRank(weighting='ndcg_loss1')", "LambdaRank(weighting='ndcg_loss2')",
    "LambdaRank(weighting='ndcg_loss2pp')", "RankNet()", "FocalLoss()", "FocalLoss(num_class=3)")]

_CHILD = r"""
import json, os, sys, time
t0 = time.perf_counter()
import gbrank
assert gbrank.__file__.startswith(os.environ["PYTHONPATH"]), gbrank.__file__
from gbrank import metrics
from gbrank.objectives import FBetaSurrogate, FocalLoss, LambdaRank, RankNet
t_import = time.perf_counter() - t0
exec(compile(SETUP, "setup", "exec"))
c0, w0 = time.process_time(), time.perf_counter()
steps = []
for statement in STATEMENTS:
    c = time.process_time()
    exec(statement)
    steps.append(time.process_time() - c)
print(json.dumps({"wall": time.perf_counter() - w0, "cpu": time.process_time() - c0,
                  "import": t_import, "steps": steps}))
"""

_RANX_CHILD = r"""
import json, time
import numpy as np
from ranx import Qrels, Run, evaluate
t0 = time.perf_counter()
c0 = time.process_time()
evaluate(Qrels({"q": {"a": 3, "b": 1}}), Run({"q": {"a": 0.1, "b": 0.5, "c": 0.3}}),
         "ndcg@10")
print(json.dumps({"wall": time.perf_counter() - t0, "cpu": time.process_time() - c0}))
"""


def _child(script: str, cache: Path, extra_path: Path | None = None) -> dict:
    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    env["NUMBA_CACHE_DIR"] = str(cache)
    env["PYTHONPATH"] = str(extra_path or ROOT)
    # The child runs in the measured checkout: ``python -c`` puts its working directory
    # first on sys.path, so any other directory holding a gbrank would shadow it.
    proc = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True,
                          env=env, cwd=str(extra_path or ROOT))
    if proc.returncode != 0:
        raise RuntimeError(f"child failed:\n{proc.stderr[-2000:]}")
    return json.loads(proc.stdout.strip().splitlines()[-1])


def _cold_warm(root: Path, statements: list[str], cache: Path) -> dict:
    """A fresh process on an empty ``cache``, one on the cache it filled, the cache size."""
    script = f"SETUP = {_SETUP!r}\nSTATEMENTS = {statements!r}\n" + _CHILD
    cold, warm = _child(script, cache, root), _child(script, cache, root)
    size = sum(f.stat().st_size for f in cache.rglob("*") if f.is_file())
    return {"cold": cold, "warm": warm, "cache_bytes": size}


def measure(cases: list[tuple[str, str]], root: Path = ROOT, peer: bool = True) -> dict:
    """Cold and warm first calls per case, all cases in one process, ranx, cache size;
    ``root``: the checkout whose ``gbrank`` is measured."""
    out: dict = {"cases": []}
    with tempfile.TemporaryDirectory() as tmp:
        for i, (label, statement) in enumerate(cases):
            c = {"label": label, **_cold_warm(root, [statement], Path(tmp) / f"case{i}")}
            out["cases"].append(c)
            print(f"[first use] {label}: cold {c['cold']['wall']:.2f} s "
                  f"(cpu {c['cold']['cpu']:.2f}), warm {c['warm']['wall']:.3f} s", flush=True)
        every = _cold_warm(root, [st for _, st in cases], Path(tmp) / "every")
        out.update(all_cold=every["cold"], all_warm=every["warm"],
                   cache_bytes=every["cache_bytes"])
        out["ranx"] = _ranx(Path(tmp) / "ranx") if peer else None
    return out


def _ranx(cache: Path) -> dict | None:
    """ranx's first ``evaluate`` on an empty cache; None when ranx is not installed."""
    try:
        import ranx  # noqa: F401
    except ImportError:
        return None
    return _child(_RANX_CHILD, cache)


def _mib(n: int) -> str:
    return f"{n / 2**20:.1f}"


def _cell(d: dict) -> str:
    return f"{d['wall']:.2f} s ({d['cpu']:.2f})"


def table(result: dict) -> str:
    rows = [[f"`{c['label']}`", _cell(c["cold"]), f"{c['warm']['wall']:.3f} s",
             f"{_mib(c['cache_bytes'])} MiB"] for c in result["cases"]]
    a, w = result["all_cold"], result["all_warm"]
    rows.append(["**all of the above, one process**", f"**{a['wall']:.1f} s** ({a['cpu']:.1f})",
                 f"{w['wall']:.2f} s", f"{_mib(result['cache_bytes'])} MiB"])
    if r := result.get("ranx"):
        rows.append(["ranx `evaluate(..., 'ndcg@10')` (peer)", _cell(r), "—", "—"])
    imp = sorted(c["warm"]["import"] for c in result["cases"])
    return "\n".join([
        "## First use (empty numba cache)", "",
        "Each call in a fresh process with an empty `NUMBA_CACHE_DIR` (cold), then in a "
        "fresh process on the cache it filled (warm). Seconds of the call alone; CPU "
        "seconds of the process in brackets (compilation runs on one core).", "",
        *md_table(["first call", "cold", "warm", "cache"], rows), "",
        f"`import gbrank` and the objective classes: {imp[len(imp) // 2]:.2f} s "
        "(median over the warm runs)."])


def compare_goal(before: Path, after: Path = ROOT, runs: int = 2) -> dict:
    """The :data:`GOAL` calls in one fresh process on an empty cache, per call (CPU
    seconds), ``runs`` times per checkout in alternating order (old, new, new, old)."""
    out: dict = {"labels": [label for label, _ in GOAL], "before": [], "after": []}
    script = f"SETUP = {_SETUP!r}\nSTATEMENTS = {[st for _, st in GOAL]!r}\n" + _CHILD
    order = [("before", before), ("after", after)]
    with tempfile.TemporaryDirectory() as tmp:
        for i in range(runs):
            for name, root in (order if i % 2 == 0 else order[::-1]):
                run = _child(script, Path(tmp) / f"goal-{name}{i}", root)
                run["load_1min"] = os.getloadavg()[0]
                out[name].append(run)
                print(f"[first use] goal, {name}: {run['cpu']:.2f} s of CPU", flush=True)
    return out


def goal_table(goal: dict) -> str:
    """Per-call CPU seconds of :func:`compare_goal`: the median of the runs, then each."""
    def cell(runs: list, i: int | None) -> str:
        values = [r["cpu"] if i is None else r["steps"][i] for r in runs]
        return f"{statistics.median(values):.2f} ({', '.join(f'{v:.2f}' for v in values)})"

    rows = [[f"`{label}`", cell(goal["before"], i), cell(goal["after"], i)]
            for i, label in enumerate(goal["labels"])]
    rows.append(["**all eleven**", cell(goal["before"], None),
                 f"**{cell(goal['after'], None)}**"])
    loads = [r["load_1min"] for side in ("before", "after") for r in goal[side]]
    return "\n".join([
        *md_table(["first call, in this order in one process", "before: CPU s",
                   "after: CPU s"], rows), "",
        f"Each cell: the median of the runs (each a fresh process on an empty cache), "
        f"then each run's value; 1-minute load average {min(loads):.1f}–"
        f"{max(loads):.1f} at the runs' ends."])


def compare(cases: list[tuple[str, str]], before: Path, after: Path = ROOT) -> dict:
    """:func:`measure` of two checkouts in one run, case by case (the old code's cold
    and warm processes right before or after the new code's, in alternating order, so
    that both see the same load); then all cases in one process for each, and the
    :data:`GOAL` calls (:func:`compare_goal`)."""
    commit = {name: subprocess.run(["git", "-C", str(root), "rev-parse", "--short", "HEAD"],
                                   capture_output=True, text=True).stdout.strip() or "?"
              for name, root in (("before", before), ("after", after))}
    out: dict = {"cases": [], "commit": commit, "cpus": os.cpu_count(),
                 "goal": compare_goal(before, after)}
    roots = (("before", before), ("after", after))
    with tempfile.TemporaryDirectory() as tmp:
        for i, (label, statement) in enumerate(cases):
            row: dict = {"label": label}
            for name, root in (roots if i % 2 == 0 else roots[::-1]):
                row[name] = _cold_warm(root, [statement], Path(tmp) / f"{name}{i}")
            out["cases"].append(row)
            out.setdefault("load_1min", []).append(os.getloadavg()[0])
            print(f"[first use] {label}: cold cpu {row['before']['cold']['cpu']:.2f} -> "
                  f"{row['after']['cold']['cpu']:.2f} s", flush=True)
        for name, root in roots:
            every = _cold_warm(root, [st for _, st in cases], Path(tmp) / f"every-{name}")
            out[name] = {"all_cold": every["cold"], "all_warm": every["warm"],
                         "cache_bytes": every["cache_bytes"]}
        out["ranx"] = _ranx(Path(tmp) / "ranx")
    return out


def compare_report(result: dict) -> str:
    """The before/after table with what a reader needs to judge it: the two commits,
    the machine's load, the command."""
    commit, samples = result.get("commit", {}), result.get("load_1min", [])
    nan = float("nan")
    rows = []
    for c in result["cases"]:
        b, a = c["before"], c["after"]
        rows.append([f"`{c['label']}`", _cell(b["cold"]), f"**{_cell(a['cold'])}**",
                     _cell(b["warm"]), _cell(a["warm"]),
                     f"{_mib(b['cache_bytes'])} → {_mib(a['cache_bytes'])} MiB"])
    b, a = result["before"], result["after"]
    rows.append(["**all of the above, one process**", _cell(b["all_cold"]),
                 f"**{_cell(a['all_cold'])}**", _cell(b["all_warm"]), _cell(a["all_warm"]),
                 f"{_mib(b['cache_bytes'])} → {_mib(a['cache_bytes'])} MiB"])
    lines = [
        "# First use: before and after", "",
        "Written by `python experiments/bench/bench_first_use.py --before <old checkout> "
        "--markdown experiments/results/first_use.md --json "
        "experiments/results/first_use.json`",
        f"(before: commit {commit.get('before', '?')}, after: commit "
        f"{commit.get('after', '?')}). Each call in a fresh process with an empty "
        "`NUMBA_CACHE_DIR` (cold), then in a fresh process on the cache it filled "
        "(warm); old and new code alternate case by case. Wall seconds of the call "
        "alone, CPU seconds of the process during the call in brackets (compilation "
        "runs on one core: CPU is the figure a busy machine disturbs least). The cache "
        "column is the cache the cold call wrote.", "",
        f"Machine: {result.get('cpus', '?')} cores shared with other developers; "
        f"1-minute load average {min(samples, default=nan):.1f}–"
        f"{max(samples, default=nan):.1f} during the run (median "
        f"{sorted(samples)[len(samples) // 2] if samples else nan:.1f}, "
        f"{len(samples)} samples).", "",
        *md_table(["first call", "cold before", "cold after", "warm before", "warm after",
                   "cache before → after"], rows)]
    if r := result.get("ranx"):
        lines += ["", "The peer, in the same run: ranx's first `evaluate(qrels, run, "
                  f"'ndcg@10')` on an empty cache took {r['wall']:.2f} s ({r['cpu']:.2f} CPU)."]
    if result.get("goal"):
        lines += ["", "## The first-use goal", "",
                  "Eleven first calls, one after the other in one fresh process on an empty "
                  "cache (goal: at most 20 s of CPU in all, `pair_accuracy` and group-less "
                  "`LambdaRank` at most 3 s each), measured before the table above:", "",
                  goal_table(result["goal"])]
    return "\n".join(lines) + "\n"


def run(quick: bool = False) -> str:
    cases = CASES[:6] + CASES[15:17] if quick else CASES
    return table(measure(cases))


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--only", help="run the cases whose label contains this text")
    parser.add_argument("--root", type=Path, default=ROOT,
                        help="measure the gbrank of this checkout (default: this one)")
    parser.add_argument("--before", type=Path, help="also measure this (older) checkout")
    parser.add_argument("--goal", action="store_true", help="with --before: the goal alone")
    parser.add_argument("--render", type=Path, help="report a before/after JSON, measure nothing")
    parser.add_argument("--json", type=Path, help="also write the raw figures here")
    parser.add_argument("--markdown", type=Path, help="write the before/after report here")
    args = parser.parse_args(argv)
    cases = [c for c in CASES if args.only is None or args.only in c[0]]
    root = args.root.resolve()
    if args.goal and args.before is not None:
        print(goal_table(compare_goal(args.before.resolve(), root)))
        return 0
    if args.render is not None:
        result = json.loads(args.render.read_text())
    elif args.before is not None:
        result = compare(cases, args.before.resolve(), root)
    else:
        result = measure(cases, root)
    if args.json:
        args.json.write_text(json.dumps(result, indent=1))
    text = table(result) if "all_cold" in result else compare_report(result)
    if args.markdown and "all_cold" not in result:
        args.markdown.write_text(text)
    print(text)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
