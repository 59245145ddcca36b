"""Warm speed of one statement in two checkouts, in alternating fresh processes.

For hot paths that ``bench_compare.py`` does not time. Each process builds the data
(``--setup``), calls the statement twice (compilation or cache load, first-touch),
then times ``--calls`` calls and reports their median wall and CPU milliseconds (CPU of
all the process's threads: compare serial calls, below 200,000 rows, on a busy
machine); three processes per checkout, in the order old, new, new, old, old, new::

    python experiments/bench/bench_warm_ab.py /tmp/gbrank-before \\
        --setup "rng = np.random.default_rng(0); y = rng.integers(0, 5, 250_000) * 1.0; \\
                 s = rng.standard_normal(y.size); g = np.full(2_500, 100)" \\
        "LambdaRank('err', max_step=None).grad_hess(y, s, g)"

The statement sees ``np``, ``metrics`` and the objective classes. Each checkout keeps
its numba cache in ``/tmp/gbrank-bench-cache-<directory name>`` (as bench_compare.py).
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
from pathlib import Path

from bench_compare import _env

ROOT = Path(__file__).resolve().parents[2]

_CHILD = r"""
import json, os, sys, time
import numpy as np
import gbrank
assert gbrank.__file__.startswith(os.environ["PYTHONPATH"]), gbrank.__file__
from gbrank import metrics
from gbrank.objectives import FBetaSurrogate, FocalLoss, LambdaRank, RankNet
exec(SETUP)
f = eval("lambda: " + STATEMENT)
f()
f()
walls, cpus = [], []
for _ in range(CALLS):
    c, t = time.process_time(), time.perf_counter()
    f()
    walls.append(time.perf_counter() - t)
    cpus.append(time.process_time() - c)
walls.sort()
cpus.sort()
print(json.dumps([1e3 * walls[CALLS // 2], 1e3 * cpus[CALLS // 2]]))
"""


def _child(root: Path, setup: str, statement: str, calls: int) -> list[float]:
    script = (f"SETUP = {setup!r}\nSTATEMENT = {statement!r}\nCALLS = {calls}\n" + _CHILD)
    proc = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True,
                          env=_env(root), cwd=str(root))  # bench_compare's environment
    if proc.returncode != 0:
        raise RuntimeError(proc.stderr[-3000:])
    return json.loads(proc.stdout.strip().splitlines()[-1])


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("before", type=Path, help="checkout of the old code")
    parser.add_argument("statement")
    parser.add_argument("--setup", default="", help="Python code that builds the data")
    parser.add_argument("--calls", type=int, default=15)
    args = parser.parse_args(argv)
    roots = {"before": args.before.resolve(), "after": ROOT}
    res: dict[str, list[list[float]]] = {"before": [], "after": []}
    for which in ("before", "after", "after", "before", "before", "after"):
        res[which].append(_child(roots[which], args.setup, args.statement, args.calls))
    for which, values in res.items():
        for i, name in enumerate(("wall", "CPU")):
            v = [x[i] for x in values]
            print(f"{which}: {name} median {sorted(v)[1]:.3f} ms "
                  f"({', '.join(f'{x:.3f}' for x in v)})")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
