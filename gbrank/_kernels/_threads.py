"""How the kernels use threads: one rule for every kernel that has a parallel form.

A kernel with a parallel form comes as two compiled functions over the same row (or
query) function: ``parallel=True`` with a ``prange`` loop, and a serial twin with a
plain ``range`` loop. :func:`dispatch` runs the serial twin below
:data:`PARALLEL_MIN_ROWS` rows and the parallel one above.

Why two compiled functions instead of ``numba.set_num_threads(1)`` around the parallel
one for small inputs (what the focal kernels did before): that toggling made the speed
of a large call depend on the history of the process (a small first call, such as the
tuner's gradient gate makes before training, slowed every later large call). With the
serial twins no thread count is ever changed, the parallel pool is first started by a
call that uses it in full, and the order of calls cannot matter
(``experiments/bench/bench_threads.py`` measures it; figures in ``docs/performance.md``,
"Threads").

A second benefit: below the threshold no parallel region is launched at all, so the
OpenMP threads of numba's default threading layer are never woken and cannot spin
against LightGBM's own OpenMP threads while a booster trains on small or medium data.
The package does NOT change numba's threading layer: ``workqueue`` aborts the process
when two Python threads call parallel kernels at once (a threaded Dask worker, a
threaded grid search), which is worse than slowness; ``omp`` and ``tbb`` are
thread-safe. Users who want it can still set ``NUMBA_THREADING_LAYER`` themselves.
"""

from __future__ import annotations

import numpy as np
from numba import get_num_threads, njit

# Below this many rows one core finishes sooner than a second thread is woken and
# scheduled (docs/performance.md, "Threads").
PARALLEL_MIN_ROWS = 200_000


def threaded(n_rows: int) -> bool:
    """Whether work on ``n_rows`` rows runs on threads: the one rule behind
    :func:`dispatch`, :func:`fft_workers` and the buffers sized for threads."""
    return n_rows >= PARALLEL_MIN_ROWS


def dispatch(parallel, serial, n_rows: int, *args):
    """Call ``serial(*args)`` below :data:`PARALLEL_MIN_ROWS` rows, else ``parallel(*args)``.

    Both must compute the same thing (the same row function under ``range`` /
    ``prange``); the thread count of the process is never changed.
    """
    kernel = parallel if threaded(n_rows) else serial
    return kernel(*args)


def fft_workers(n_rows: int) -> int:
    """Threads for a batched ``scipy.fft`` call on data from ``n_rows`` rows: numba's
    thread count (``NUMBA_NUM_THREADS``, ``numba.set_num_threads``) at or above
    :data:`PARALLEL_MIN_ROWS`, where the parallel kernels run too; else one."""
    return int(get_num_threads()) if threaded(n_rows) else 1


# Grouped kernels cut their queries into this many chunks of about equal row counts;
# the parallel form runs the chunks on threads, the serial one loops over them.
N_CHUNKS = 32


@njit(cache=True, nogil=True)
def chunk_bounds(offsets):
    """Query index bounds of ``N_CHUNKS`` chunks with about equal numbers of rows."""
    nq = offsets.size - 1
    bounds = np.empty(N_CHUNKS + 1, dtype=np.int64)
    total = offsets[nq] - offsets[0]
    for c in range(N_CHUNKS + 1):
        target = offsets[0] + total * c // N_CHUNKS
        bounds[c] = min(np.searchsorted(offsets, target), nq)
    bounds[N_CHUNKS] = nq
    return bounds
