"""Timing shared by the benchmark sections, and the experiments' report writer for them."""

import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # experiments/
from _report import pyplot, table  # noqa: E402, F401


def median_time(fn, repeat: int) -> float:
    """Median wall time of ``repeat`` calls of ``fn`` after one warm-up call
    (compilation, cache loads and first-touch allocations stay out of the figure)."""
    fn()
    times = []
    for _ in range(repeat):
        t0 = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t0)
    return float(np.median(times))


# The floor every numba library pays at cold start: the source of a module with one
# trivial cached function (written to a temporary directory, imported by the children
# of bench_metrics.py and bench_compare.py).
COLD_FLOOR_MODULE = """
from numba import njit


@njit(cache=True)
def total(a):
    s = 0.0
    for x in a:
        s += x
    return s
"""
