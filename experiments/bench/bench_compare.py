"""Before/after table of the hot paths from ONE run: old code (a ``git worktree``
of an earlier commit) and this checkout, each task in child processes alternating
old, new, new, old, old, new (each with its own numba cache directory), so that both
see the same machine load.

    git worktree add /tmp/gbrank-before <commit>
    python experiments/bench/bench_compare.py /tmp/gbrank-before [--tasks ndcg ranknet ...]

Each child reports, per task, the median wall time of warm calls of the public
function, the median CPU time of the process over the same calls (all threads; on a
busy machine the steadier of the two), and a checksum of the result so that old and
new can be seen to agree. Training: LightGBM 100 rounds on a Dataset binned once (not
timed), 2 threads, no environment variables set, two children per side,
``LambdaRank("ndcg")`` ÷ native ``lambdarank`` in the same child, the objective's
median time per round inside ``lgb.train`` beside its time alone, and the floor of
LightGBM's custom-objective path (the same rounds' gradients recorded, then handed back
at no cost). Memory: peak extra resident memory of one group-less call at 10^7 rows,
every option that changes it (a fresh child per case and side). Cold start: best and
median of 5 processes per child, beside the floor every numba library pays (a trivial
cached function). Prints markdown tables (cells: median of the children, then the
children's values).
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

from _timing import COLD_FLOOR_MODULE, table

ROOT = Path(__file__).resolve().parents[2]

CHILD = r"""
import json, os, sys, time
root = sys.argv[1]
sys.path.insert(0, root)
import numpy as np
import gbrank
assert gbrank.__file__.startswith(root), gbrank.__file__
from gbrank import metrics
from gbrank.objectives import FBetaSurrogate, LambdaRank, RankNet


def timed(f, n):
    f()
    walls, cpus = [], []
    for _ in range(n):
        c = time.process_time(); t = time.perf_counter()
        f()
        walls.append(time.perf_counter() - t); cpus.append(time.process_time() - c)
    return 1e3 * float(np.median(walls)), 1e3 * float(np.median(cpus))


def ranking_data(n_queries, size, seed=0):
    rng = np.random.default_rng(seed)
    n = n_queries * size
    y = np.minimum(rng.geometric(0.5, n) - 1, 4).astype(np.float64)
    return y, y * 0.5 + rng.standard_normal(n), np.full(n_queries, size)


def _grouped():
    from gbrank.datasets import make_ranking
    _, y, group = make_ranking(2500, 100, 50, seed=0)
    return y, np.random.default_rng(1).standard_normal(y.size), group


# Built once, before anything is timed: make_ranking's X @ coef wakes BLAS threads that
# spin on the two cores for a while after it returns (measured: RankNet 2.7 ms when
# timed long after it, 6.6 ms right after it).
GROUPED = _grouped()


def grouped():
    return GROUPED


def lambdarank():
    # LambdaRank("ndcg") with the true Hessian: the max_step bound (default 16) does not
    # exist in older commits, and it changes the Hessians.
    import inspect
    if "max_step" in inspect.signature(LambdaRank).parameters:
        return LambdaRank("ndcg", max_step=None)
    return LambdaRank("ndcg")


def checksum(g, h):
    return float(np.abs(g).sum() + np.abs(h).sum())


out = {}
for task in sys.argv[2].split(","):
    if task == "ndcg":
        y, s, g = ranking_data(10_000, 100)
        f = lambda: metrics.ndcg(y, s, g, k=10)
        out[task] = (*timed(f, 15), f())
    elif task == "pair_accuracy":
        rng = np.random.default_rng(3)
        y = rng.integers(0, 5, 10**6).astype(float)
        s = y * 0.3 + rng.standard_normal(y.size)
        f = lambda: metrics.pair_accuracy(y, s)
        out[task] = (*timed(f, 5), f())
    elif task in ("ranknet", "lambdarank"):
        y, s, g = grouped()
        obj = RankNet() if task == "ranknet" else lambdarank()
        f = lambda: obj.grad_hess(y, s, g)
        out[task] = (*timed(f, 9), checksum(*f()))
    elif task == "lambdarank_groupless" or task.startswith("ranknet_groupless_"):
        spread = float(task.rsplit("_", 1)[1]) if task.startswith("ranknet") else 1.0
        rng = np.random.default_rng(2)
        y = rng.integers(0, 5, 10**6).astype(float)
        s = rng.standard_normal(y.size) * spread
        obj = RankNet(method="fast") if task.startswith("ranknet") else lambdarank()
        f = lambda: obj.grad_hess(y, s)
        out[task] = (*timed(f, 3), checksum(*f()))
    elif task == "fbeta":
        rng = np.random.default_rng(1)
        y = (rng.random(10**6) < 0.01).astype(float)
        s = rng.standard_normal(y.size)
        # The oracle on the whole query (the only mode before batch_size existed).
        import inspect
        whole = "batch_size" in inspect.signature(FBetaSurrogate).parameters
        obj = FBetaSurrogate(batch_size=None) if whole else FBetaSurrogate()
        f = lambda: obj.grad_hess(y, s)
        out[task] = (*timed(f, 7), checksum(*f()))
    elif task == "training":
        import lightgbm as lgb
        from gbrank.datasets import make_ranking
        X, y, g = make_ranking(2500, 100, 50, seed=0)
        params = dict(learning_rate=0.1, num_leaves=31, min_data_in_leaf=20, verbose=-1,
                      num_threads=2, seed=0, deterministic=True)
        obj = LambdaRank("ndcg")
        inside = []

        def fobj(preds, ds):
            t = time.perf_counter()
            r = obj(preds, ds)
            inside.append(time.perf_counter() - t)
            return r

        # Binned once: constructing the Dataset (~1.3 s here) is the same work for
        # every objective, and timing it inside each fit pulled the ratio towards 1
        # (0.67 with it, 0.60-0.63 without, same code); bench_ranking times the same.
        ds = lgb.Dataset(X, y, group=g, free_raw_data=False).construct()

        def train(objective):
            t = time.perf_counter()
            b = lgb.train(dict(params, objective=objective), ds, num_boost_round=100)
            return time.perf_counter() - t, b

        train("lambdarank")  # warm-up (binning, thread pool)
        obj.grad_hess(y, np.zeros(y.size), g)  # kernels loaded before the timed run
        t_nat, _ = train("lambdarank")
        t_obj, b = train(fobj)
        s0 = np.random.default_rng(1).standard_normal(y.size)
        alone = timed(lambda: obj.grad_hess(y, s0, g), 9)[0]
        # The floor of LightGBM's custom-objective path: the same rounds' gradients,
        # recorded (as float32, what LightGBM keeps) and handed back at no cost.
        kept = []

        def record(preds, ds):
            gr, hs = obj(preds, ds)
            kept.append((gr.astype(np.float32), hs.astype(np.float32)))
            return kept[-1]

        train(record)
        rounds = iter(kept)
        t_replay, _ = train(lambda preds, ds: next(rounds))
        out[task] = (1e3 * t_obj, 1e3 * t_nat, t_obj / t_nat,
                     1e3 * float(np.median(inside)), alone, t_replay / t_nat)
print(json.dumps(out))
"""

COLD = r"""
import time
t = time.perf_counter()
import numpy as np
import gbrank
from gbrank import metrics
metrics.ndcg(np.array([3.0, 2, 1, 0, 0]), np.array([0.1, 0.4, 0.3, 0.2, 0.0]))
import sys
print(time.perf_counter() - t, "lightgbm" in sys.modules or "xgboost" in sys.modules)
"""

# Peak extra memory of one group-less call at 10^7 rows, in a fresh child per case
# (the method of bench_scaling.py: VmHWM reset just before the call; outputs count).
# Labels: grades 0-4 ("graded") or ~4,000 distinct real values ("real").
MEMORY = r"""
import ctypes, json, sys
root, case = sys.argv[1], sys.argv[2]
sys.path.insert(0, root)
import numpy as np
from gbrank import metrics
from gbrank.objectives import LambdaRank, RankNet
expr, kind = CASES[case]
fn = eval("lambda y, s: " + expr)
def data(n):
    rng = np.random.default_rng(0)
    if kind == "real":
        y = np.round(rng.uniform(0.0, 4.0, n), 3)
    else:
        y = np.minimum(rng.geometric(0.5, n) - 1, 4).astype(np.float64)
    s = y * 0.5 + rng.standard_normal(n)
    if kind == "binary":  # probabilities, the binary metrics' default scale (an older
        # checkout reads them as margins: the same sort and sweep either way)
        return (y > 0).astype(np.float64), 1.0 / (1.0 + np.exp(-s))
    return y, s
fn(*data(300_000))  # kernels loaded, thread pool started
n = 10**7
y, s = data(n)
def kib(field):
    for line in open("/proc/self/status"):
        if line.startswith(field + ":"):
            return int(line.split()[1])
ctypes.CDLL("libc.so.6").malloc_trim(0)
open("/proc/self/clear_refs", "w").write("5")
before = kib("VmRSS")
fn(y, s)
print(json.dumps((kib("VmHWM") - before) * 1024 / (8.0 * n)))
"""
MEMORY_CASES = {
    "LambdaRank()": ("LambdaRank().grad_hess(y, s)", "graded"),
    "LambdaRank(norm=True)": ("LambdaRank(norm=True).grad_hess(y, s)", "graded"),
    "LambdaRank(weighting=\"ndcg_loss2pp\")":
        ("LambdaRank(weighting='ndcg_loss2pp').grad_hess(y, s)", "graded"),
    "LambdaRank(\"err\", truncation=100)":
        ("LambdaRank('err', truncation=100).grad_hess(y, s)", "graded"),
    "RankNet(method=\"fast\")": ("RankNet(method='fast').grad_hess(y, s)", "graded"),
    "RankNet(method=\"fast\"), 4,000 distinct labels":
        ("RankNet(method='fast').grad_hess(y, s)", "real"),
    "pair_accuracy": ("metrics.pair_accuracy(y, s)", "graded"),
    "pair_accuracy, 4,000 distinct labels": ("metrics.pair_accuracy(y, s)", "real"),
    "ndcg@10": ("metrics.ndcg(y, s, k=10)", "graded"),
    "ndcg (k=None)": ("metrics.ndcg(y, s, k=None)", "graded"),
    "best_threshold": ("metrics.best_threshold(y, s)", "binary"),
}

# Cold start of the floor every numba library pays: a trivial cached function.
FLOOR = r"""
import sys, time
t = time.perf_counter()
import numpy as np
sys.path.insert(0, sys.argv[1])
import cold_floor
cold_floor.total(np.ones(3))
print(time.perf_counter() - t, False)
"""

TASKS = ("ndcg", "pair_accuracy", "ranknet", "lambdarank", "lambdarank_groupless",
         "ranknet_groupless_1", "ranknet_groupless_1000", "fbeta", "training", "cold",
         "memory")


def _env(root: Path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH",)}
    env["PYTHONPATH"] = str(root)
    env["NUMBA_CACHE_DIR"] = f"/tmp/gbrank-bench-cache-{root.name}"
    # gbrank calls no BLAS; one BLAS thread keeps the data set-up from leaving spinning
    # threads behind that compete with the timed kernels.
    env["OPENBLAS_NUM_THREADS"] = "1"
    return env


def _child(root: Path, tasks: list[str]) -> dict:
    out = subprocess.run([sys.executable, "-c", CHILD, str(root), ",".join(tasks)],
                         env=_env(root), capture_output=True, text=True, check=True)
    return json.loads(out.stdout.strip().splitlines()[-1])


def _cold(root: Path, floor: bool = False) -> tuple[float, float]:
    """(best, median) over 5 fresh processes, cache warm, of the seconds from before
    ``import numpy`` to the end of the first ndcg call (``floor``: of a trivial cached
    numba function instead). Bytecode caching on, as for a user."""
    env = {k: v for k, v in _env(root).items() if k != "PYTHONDONTWRITEBYTECODE"}
    times = []
    with tempfile.TemporaryDirectory() as tmp:
        (Path(tmp) / "cold_floor.py").write_text(COLD_FLOOR_MODULE)
        if floor:
            env["NUMBA_CACHE_DIR"] = tmp
        for _ in range(6):
            out = subprocess.run([sys.executable, "-c", FLOOR if floor else COLD, tmp],
                                 env=env, capture_output=True, text=True, check=True)
            seconds, booster = out.stdout.split()
            assert booster == "False", "a booster was imported"
            times.append(float(seconds))
    warm = sorted(times[1:])  # the first run may (re)write the caches
    return warm[0], warm[len(warm) // 2]


def _memory(root: Path, case: str) -> float | None:
    """Peak extra memory in n-row arrays, or None when the child failed (out of memory:
    the old grid held grades × nodes)."""
    script = f"CASES = {MEMORY_CASES!r}\n" + MEMORY
    out = subprocess.run([sys.executable, "-c", script, str(root), case], env=_env(root),
                         capture_output=True, text=True)
    if out.returncode != 0:
        return None
    return float(out.stdout.strip().splitlines()[-1])


def _cell(values: list[float], fmt: str) -> str:
    med = sorted(values)[len(values) // 2]
    return f"{med:{fmt}} ({', '.join(f'{v:{fmt}}' for v in values)})"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("before", type=Path, help="checkout of the old commit")
    parser.add_argument("--tasks", nargs="+", default=list(TASKS), choices=TASKS)
    args = parser.parse_args(argv)
    roots = {"before": args.before.resolve(), "after": ROOT}
    order = ["before", "after", "after", "before", "before", "after"]
    timed_tasks = [t for t in args.tasks if t not in ("training", "cold", "memory")]
    res: dict[str, dict[str, list]] = {"before": {}, "after": {}}
    load = []
    for which in order:
        load.append(os.getloadavg()[0])
        if timed_tasks:
            for task, v in _child(roots[which], timed_tasks).items():
                res[which].setdefault(task, []).append(v)
        print(f"[compare] {which} done, load {load[-1]:.1f}", file=sys.stderr, flush=True)
    # Two children each (old, new, new, old): a training child takes 20 s on a quiet
    # machine, 1-2 minutes on a busy one.
    for which in order[:4] if "training" in args.tasks else ():
        v = _child(roots[which], ["training"])["training"]
        res[which].setdefault("training", []).append(v)
        load.append(os.getloadavg()[0])
    if "cold" in args.tasks:
        for which in order[:4]:
            res[which].setdefault("cold", []).append(_cold(roots[which]))
            res.setdefault("floor", {}).setdefault("cold", []).append(
                _cold(roots[which], floor=True))
            load.append(os.getloadavg()[0])
    if "memory" in args.tasks:
        for case in MEMORY_CASES:
            for which in ("before", "after"):
                res[which].setdefault("memory", []).append(_memory(roots[which], case))
            load.append(os.getloadavg()[0])
    print(f"Load average (1 min) during the run: {min(load):.1f}–{max(load):.1f}\n")
    rows = []
    for task in timed_tasks:
        b, a = res["before"][task], res["after"][task]
        wb, wa = [v[0] for v in b], [v[0] for v in a]
        vb, va = {round(v[2], 9) for v in b}, {round(v[2], 9) for v in a}
        same = "same" if vb == va else f"{sorted(vb)} → {sorted(va)}"
        rows.append([task, _cell(wb, ".1f"), _cell(wa, ".1f"), _cell([v[1] for v in b], ".1f"),
                     _cell([v[1] for v in a], ".1f"), f"{sorted(wb)[1] / sorted(wa)[1]:.2f}×",
                     f"{same} ({sorted(va)[0]:.12g})"])
    print("\n".join(table(["hot path", "before: wall ms", "after: wall ms", "before: CPU ms",
                           "after: CPU ms", "wall ratio", "values"], rows, "lrrrrrl")))
    if "training" in args.tasks:
        names = ("LambdaRank training s", "native lambdarank s", "ratio to native",
                 "objective ms/round inside lgb.train", "objective ms/call alone",
                 "floor: recorded gradients replayed, ratio to native")
        rows = [[name, *(_cell([v[i] * (1e-3 if i < 2 else 1.0) for v in res[w]["training"]],
                               ".2f") for w in ("before", "after"))]
                for i, name in enumerate(names) if i < len(res["before"]["training"][0])]
        print("\n" + "\n".join(table(["training (250k rows, 100 rounds, 2 threads)", "before",
                                      "after"], rows, "lll")))
    if "memory" in args.tasks:
        def arrays(v):
            return "failed (out of memory)" if v is None else f"{v:.2f}"

        rows = [[case, *(arrays(res[w]["memory"][i]) for w in ("before", "after"))]
                for i, case in enumerate(MEMORY_CASES)]
        print("\n" + "\n".join(table(["peak extra memory of one group-less call at 10^7 rows, "
                                      "in n-row float64 arrays (outputs included)", "before",
                                      "after"], rows)))
    if "cold" in args.tasks:
        rows = [[name, *(_cell([v[i] for v in res[w]["cold"]], ".3f")
                         for w in ("before", "after", "floor"))]
                for i, name in enumerate(("best s", "median s"))]
        print("\n" + "\n".join(table([
            "cold start: import numpy + import gbrank + first ndcg call, cache warm, bytecode "
            "cached (best / median of 5 processes; per child)", "before", "after",
            "numba floor (trivial cached function)"], rows, "llll")))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
