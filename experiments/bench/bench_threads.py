"""Order independence of the kernels' speed (a thread-count trap).

A large call must be as fast after a small first call as in a fresh process. Each
figure comes from its own fresh Python process (the order of calls inside a process is
the thing measured), run several times interleaved; the table gives the median over
processes of each process's median call time.

Modes, each in a fresh process:

* ``fresh``: the large call is the first gbrank call of the process;
* ``small-first``: ``FocalLoss().grad_hess`` (or the F-beta oracle) on 600 rows first,
  as the tuner's gradient gate does before training;
* ``legacy-small-first``: the small first call made the way the kernels did before the
  fix (the parallel kernel run under ``numba.set_num_threads(1)``), to show the trap.
"""

from __future__ import annotations

import json
import subprocess
import sys

import numpy as np

LARGE = 1_000_000
SMALL = 600


def _child(kind: str, mode: str, repeat: int) -> float:
    import time

    from gbrank.objectives import FBetaSurrogate, FocalLoss

    rng = np.random.default_rng(0)

    def data(n):
        return (rng.random(n) < 0.1).astype(np.float64), rng.standard_normal(n)

    if kind == "focal":
        obj = FocalLoss(gamma=2.0)

        def call(y, s, group=None):
            return obj.grad_hess(y, s)
    else:
        obj = FBetaSurrogate(beta=1.0, batch_size=None)

        def call(y, s, group=None):
            return obj.grad_hess(y, s, group=group)

    y0, s0 = data(SMALL)
    g0 = np.full(6, SMALL // 6)
    if mode == "small-first":
        call(y0, s0, g0)
    elif mode == "legacy-small-first":
        import numba

        from gbrank._kernels import fbeta_surrogate as fb
        from gbrank._kernels import focal as fk

        previous = numba.get_num_threads()
        numba.set_num_threads(1)
        try:
            if kind == "focal":
                fk._binary_grad_hess_parallel(y0, s0, np.empty(0), 2.0, -1.0, 1e-6, 0.0,
                                              np.empty(SMALL), np.empty(SMALL))
            else:
                fb._oracle_parallel(y0, s0, np.arange(0, SMALL + 1, SMALL // 6), 0, 1.0,
                                    np.empty(SMALL))
        finally:
            numba.set_num_threads(previous)
    y, s = data(LARGE)
    g = np.full(1000, LARGE // 1000)
    call(y, s, g)  # compile/cache load and first touch out of the figure
    times = []
    for _ in range(repeat):
        t0 = time.perf_counter()
        call(y, s, g)
        times.append(time.perf_counter() - t0)
    return float(np.median(times))


def _measure(kind: str, mode: str, repeat: int) -> float:
    out = subprocess.run(
        [sys.executable, __file__, "--child", kind, mode, str(repeat)],
        check=True, capture_output=True, text=True)
    return json.loads(out.stdout.strip().splitlines()[-1])["seconds"]


def run(quick: bool = False) -> str:
    processes = 3 if quick else 7
    repeat = 15 if quick else 40
    modes = ("fresh", "small-first", "legacy-small-first")
    kinds = {"focal": "FocalLoss grad+hess, 10^6 rows",
             "fbeta": "FBetaSurrogate grad (oracle), 10^6 rows in 1,000 queries"}
    rows = [
        "## Order independence: a large call after a small first call",
        "",
        f"Median over {processes} fresh processes (each: median of {repeat} calls). "
        "Ratio = time after a small first call ÷ time in a fresh process (target ≤ 1.1). "
        "`legacy` makes the small first call the old way (parallel kernel under "
        "`numba.set_num_threads(1)`), which is what caused the trap.",
        "",
        "| kernel | fresh | after small call | ratio | legacy small call | legacy ratio |",
        "|---|---|---|---|---|---|",
    ]
    for kind, label in kinds.items():
        got = {m: [] for m in modes}
        try:
            for _ in range(processes):  # interleaved, so machine load hits every mode alike
                for m in modes:
                    got[m].append(_measure(kind, m, repeat))
        except subprocess.CalledProcessError as exc:
            last = (exc.stderr or "").strip().splitlines()[-1:] or ["?"]
            rows.append(f"| {label} | failed: {last[0]} | | | | |")
            continue
        med = {m: float(np.median(v)) for m, v in got.items()}
        rows.append(
            f"| {label} | {med['fresh'] * 1e3:.2f} ms | {med['small-first'] * 1e3:.2f} ms "
            f"| {med['small-first'] / med['fresh']:.2f} | "
            f"{med['legacy-small-first'] * 1e3:.2f} ms | "
            f"{med['legacy-small-first'] / med['fresh']:.2f} |")
    return "\n".join(rows)


if __name__ == "__main__":
    if len(sys.argv) > 1 and sys.argv[1] == "--child":
        secs = _child(sys.argv[2], sys.argv[3], int(sys.argv[4]))
        print(json.dumps({"seconds": secs}))
    else:
        print(run(quick="--quick" in sys.argv))
