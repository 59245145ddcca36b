"""Benchmark section "scaling": time and peak memory of the group-less objectives and
metrics (one query of n rows) from 10^4 to 10^7 rows, with the fitted exponent of
time ∝ n^b, and one log-log plot.

- Time: median of warm calls of the public function (validation included), in this
  process. Repeats fall from 5 to 1 as n grows.
- Memory: peak resident memory of ONE call in a fresh child process, minus the
  resident memory just before it (inputs built, kernels warmed on 3·10^5 rows), in
  units of one n-row float64 array (8·n bytes). ``tracemalloc`` cannot see numba's
  allocations, so the resident set's high-water mark (VmHWM, reset just before the
  call) is the measure; the returned arrays count (an
  objective returns two: gradient and Hessian). A second table does this for every
  objective (and each option that changes its memory) and every metric at the
  largest n: the bound is 3 arrays.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
from _timing import median_time, pyplot, table

HERE = Path(__file__).resolve().parent
PNG = HERE.parent / "results" / "scaling.png"

# name -> the function of ``(y, s)`` timed (built once); data: grades 0-4, scores
# N(0, 1) + grade/2 (spread ~1)
CASES = {
    "RankNet(method=\"fast\")": "RankNet(method='fast').grad_hess",
    "LambdaRank(\"ndcg\")": "LambdaRank().grad_hess",
    "pair_accuracy": "metrics.pair_accuracy",
    "ndcg@10": "partial(metrics.ndcg, k=10)",
    "err@10": "partial(metrics.err, k=10)",
    "mean_ap@10": "partial(metrics.mean_ap, k=10)",
}


# Every objective and metric for the memory table: label -> expression of ``y, s``
# (``yb``: the labels as 0/1, for the binary ones; ``yd``: real-valued labels, every
# one distinct, grade/2 plus uniform noise), evaluated in the child.
MEMORY_CASES = {
    "RankNet()": "RankNet().grad_hess(y, s)",
    "RankNet(ties=\"pull\")": "RankNet(ties='pull').grad_hess(y, s)",
    "RankNet(), every label distinct": "RankNet().grad_hess(yd, s)",
    "LambdaRank(\"ndcg\")": "LambdaRank('ndcg').grad_hess(y, s)",
    "LambdaRank(\"err\")": "LambdaRank('err').grad_hess(y, s)",
    "LambdaRank(\"map\")": "LambdaRank('map').grad_hess(y, s)",
    "LambdaRank(\"mrr\")": "LambdaRank('mrr').grad_hess(y, s)",
    "LambdaRank(\"err\", truncation=100)": "LambdaRank('err', truncation=100).grad_hess(y, s)",
    "LambdaRank(norm=True)": "LambdaRank(norm=True).grad_hess(y, s)",
    "LambdaRank(weighting=\"ndcg_loss1\")":
        "LambdaRank(weighting='ndcg_loss1').grad_hess(y, s)",
    "LambdaRank(weighting=\"ndcg_loss2pp\")":
        "LambdaRank(weighting='ndcg_loss2pp').grad_hess(y, s)",
    "FocalLoss()": "FocalLoss().grad_hess(yb, s)",
    "FBetaSurrogate()": "FBetaSurrogate(random_state=0).grad_hess(yb, s)",
    "FBetaSurrogate(batch_size=None)": "FBetaSurrogate(batch_size=None).grad_hess(yb, s)",
    "ndcg@10": "metrics.ndcg(y, s, k=10)",
    "ndcg (k=None)": "metrics.ndcg(y, s, k=None)",
    "err@10": "metrics.err(y, s, k=10)",
    "err (k=None)": "metrics.err(y, s, k=None)",
    "mean_ap@10": "metrics.mean_ap(y, s, k=10)",
    "mean_ap (k=None)": "metrics.mean_ap(y, s)",
    "mrr": "metrics.mrr(y, s)",
    "precision_at_k@10": "metrics.precision_at_k(y, s, k=10)",
    "recall_at_k@10": "metrics.recall_at_k(y, s, k=10)",
    "pair_accuracy": "metrics.pair_accuracy(y, s)",
    "pair_accuracy, every label distinct": "metrics.pair_accuracy(yd, s)",
    "f1": "metrics.f1(yb, s, margin=True)",
    "fbeta(beta=2)": "metrics.fbeta(yb, s, beta=2.0, margin=True)",
    "balanced_measure": "metrics.balanced_measure(yb, s, margin=True)",
    "best_threshold": "metrics.best_threshold(yb, s, margin=True)",
}


def _data(n: int, seed: int = 0):
    rng = np.random.default_rng(seed)
    y = np.minimum(rng.geometric(0.5, n) - 1, 4).astype(np.float64)
    s = y * 0.5 + rng.standard_normal(n)
    return y, s


def _callable(name: str, memory: bool = False):
    """``f(y, s)`` of :data:`CASES` ``name`` (``memory``: of :data:`MEMORY_CASES` if there)."""
    from functools import partial

    from gbrank import metrics
    from gbrank.objectives import FBetaSurrogate, FocalLoss, LambdaRank, RankNet

    env = {"metrics": metrics, "RankNet": RankNet, "LambdaRank": LambdaRank,
           "FocalLoss": FocalLoss, "FBetaSurrogate": FBetaSurrogate, "partial": partial}
    if not (memory and name in MEMORY_CASES):
        return eval(CASES[name], env)
    code = compile(MEMORY_CASES[name], name, "eval")  # graded labels in, as yb and yd
    return lambda y, s: eval(code, env, {"y": y, "s": s, "yb": y, "yd": y})


def _child_peak(name: str, n: int) -> None:
    """Run in a fresh process: print the peak-RSS increase of one call, in bytes, and
    its time.

    Linux keeps the high-water mark of the resident set (VmHWM); writing 5 to
    ``/proc/self/clear_refs`` resets it to the current RSS, so building the inputs
    (whose temporaries may exceed what the call needs) does not hide the call's peak.
    """
    memory_case = name in MEMORY_CASES
    fn = _callable(name, memory=True)
    binary = memory_case and "yb" in MEMORY_CASES[name]
    distinct = memory_case and "yd" in MEMORY_CASES[name]

    def inputs(m: int):
        y, s = _data(m)
        if distinct:
            y = y / 2.0 + np.random.default_rng(5).uniform(0.0, 0.5, m)
        return ((y > 0).astype(np.float64) if binary else y), s

    # Warm-up above PARALLEL_MIN_ROWS, so that the threaded kernels are loaded and the
    # thread pool is started before the measured call (once per process, ~100 MB of
    # resident code and stacks that are not the call's memory).
    fn(*inputs(300_000))  # compile / load kernels, scipy.fft, …
    y, s = inputs(n)

    def status_kib(field: str) -> int:
        with open("/proc/self/status") as fh:
            for line in fh:
                if line.startswith(field + ":"):
                    return int(line.split()[1])
        raise RuntimeError(field)

    # Freed temporaries stay in the heap (glibc raises its mmap threshold after the
    # first big free) and the call would reuse them unseen: hand them back first.
    import ctypes

    ctypes.CDLL("libc.so.6").malloc_trim(0)
    with open("/proc/self/clear_refs", "w") as fh:
        fh.write("5")
    before = status_kib("VmRSS")
    t = time.perf_counter()
    fn(y, s)
    seconds = time.perf_counter() - t
    peak = status_kib("VmHWM")
    print(json.dumps({"extra": (peak - before) * 1024, "seconds": seconds}))


def _peak_extra(name: str, n: int, with_time: bool = False):
    cmd = [sys.executable, __file__, "--child", name, str(n)]
    env = dict(os.environ, NUMBA_NUM_THREADS=os.environ.get("NUMBA_NUM_THREADS", "2"))
    out = subprocess.run(cmd, capture_output=True, text=True, env=env, timeout=900)
    if out.returncode != 0:
        print(out.stderr[-2000:], file=sys.stderr)
        return None
    rec = json.loads(out.stdout.strip().splitlines()[-1])
    arrays = rec["extra"] / (8.0 * n)
    return (arrays, rec["seconds"]) if with_time else arrays


def _fit_exponent(ns, ts) -> float:
    """Least-squares slope of log t on log n over the sizes ≥ 10^5 (below, fixed costs
    dominate)."""
    ns, ts = np.asarray(ns, dtype=float), np.asarray(ts, dtype=float)
    keep = ns >= 1e5 if (ns >= 1e5).sum() >= 2 else np.ones_like(ns, dtype=bool)
    return float(np.polyfit(np.log(ns[keep]), np.log(ts[keep]), 1)[0])


def _plot(sizes, times, path: Path) -> None:
    plt = pyplot()
    fig, ax = plt.subplots(figsize=(7.5, 5.0))
    for name, ts in times.items():
        ok = [(n, t) for n, t in zip(sizes, ts, strict=True) if t is not None]
        ax.loglog([n for n, _ in ok], [t * 1e3 for _, t in ok], marker="o", label=name)
    ref_n = np.array([sizes[0], sizes[-1]], dtype=float)
    ax.loglog(ref_n, 0.1 * ref_n / ref_n[0], "k:", lw=1, label="slope 1 (linear)")
    ax.set_xlabel("rows in the one query (n)")
    ax.set_ylabel("time per call (ms, median)")
    ax.set_title("gbrank group-less objectives and metrics: time vs rows")
    ax.grid(True, which="both", alpha=0.3)
    ax.legend(fontsize=8, loc="upper left")
    fig.tight_layout()
    path.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(path, dpi=110)
    plt.close(fig)


def run(quick: bool = False) -> str:
    sizes = [10_000, 30_000, 100_000, 300_000, 1_000_000]
    sizes += [] if quick else [3_000_000, 10_000_000]
    mem_n = sizes[-1]
    times: dict[str, list[float | None]] = {}
    for name in CASES:
        fn = _callable(name, memory=True)
        row: list[float | None] = []
        for n in sizes:
            y, s = _data(n)
            repeat = 5 if n <= 300_000 else (3 if n <= 1_000_000 else 1)
            row.append(median_time(lambda fn=fn, y=y, s=s: fn(y, s), repeat))
            print(f"[bench_scaling] {time.strftime('%H:%M:%S')} {name} n={n:,} "
                  f"{row[-1] * 1e3:.1f} ms", file=sys.stderr, flush=True)
        times[name] = row
    mem = {name: _peak_extra(name, mem_n) for name in CASES}
    _plot(sizes, times, PNG)
    load = os.getloadavg()
    def power(n: int) -> str:
        e = int(np.floor(np.log10(n)))
        lead = n // 10**e
        return f"10^{e}" if lead == 1 else f"{lead}·10^{e}"

    lines = [
        f"## Scaling: group-less objectives and metrics, 10^4 to {power(sizes[-1])} rows",
        "",
        "One query of n rows (grades 0–4, half zero; scores = grade/2 + N(0, 1)); the "
        "public call, validation included; median of warm calls (5 up to 3·10^5 rows, "
        "3 at 10^6, 1 above). Exponent b: least-squares fit of time ∝ n^b over n ≥ "
        "10^5. Peak extra memory: one call in a fresh process, peak RSS minus RSS just "
        f"before, at n = {mem_n:,}, in n-row float64 arrays (outputs included: an "
        "objective returns 2). Load average during the run: "
        f"{load[0]:.1f} / {load[1]:.1f} / {load[2]:.1f} (2 cores, shared).",
        "",
        *table(["call (ms per call)", *(f"n = {power(n)}" for n in sizes), "b",
                "peak extra memory (n-row arrays)"],
               [[name, *(f"{t * 1e3:.1f}" for t in row), f"{_fit_exponent(sizes, row):.2f}",
                 "—" if mem[name] is None else f"{mem[name]:.2f}"]
                for name, row in times.items()]),
        "", f"Plot: `experiments/results/{PNG.name}`.", ""]
    lines += _memory_table(mem_n)
    return "\n".join(lines)


# The bound on the peak extra memory of one call, outputs included.
MEMORY_BOUND_ARRAYS = 3.0


def _memory_table(n: int) -> list[str]:
    """Peak extra memory and time of one call of every :data:`MEMORY_CASES` entry at
    ``n`` rows, each in a fresh process."""
    rows = []
    for name in MEMORY_CASES:
        got = _peak_extra(name, n, with_time=True)
        print(f"[bench_scaling] {time.strftime('%H:%M:%S')} memory {name} n={n:,} "
              f"{'failed' if got is None else f'{got[0]:.2f} arrays, {got[1]:.2f} s'}",
              file=sys.stderr, flush=True)
        rows.append((name, got))
    over = [name for name, got in rows if got is not None and got[0] > MEMORY_BOUND_ARRAYS]
    lines = [
        f"### Peak extra memory of every objective and metric, one query of {n:,} rows",
        "",
        "Each call in a fresh process, as above (labels: the graded ones, or 1 where "
        "the grade is positive for the binary objectives and metrics, ~50% positive, or "
        "real-valued and all distinct where the row says so); "
        "outputs included; the time is that one call's (first call at this size, "
        "kernels already loaded). Bound: "
        f"≤ {MEMORY_BOUND_ARRAYS:.0f} n-row float64 arrays; "
        + ("every call is within it." if not over else f"over it: {', '.join(over)}."),
        "",
        *table(["call", "peak extra memory (n-row arrays)", "time of the call (s)"],
               [[f"`{name}`", *(("failed", "—") if got is None else
                                (f"{got[0]:.2f}", f"{got[1]:.2f}"))] for name, got in rows]),
    ]
    return lines


if __name__ == "__main__":
    if len(sys.argv) == 4 and sys.argv[1] == "--child":
        sys.path.insert(0, str(HERE))
        _child_peak(sys.argv[2], int(sys.argv[3]))
    else:
        print(run(quick="--quick" in sys.argv))
