"""Compilation of gbrank's numba kernels as a user experiences it.

numba compiles a kernel the first time it is called with new argument types and keeps
the machine code in its cache (beside the package, in ``~/.cache/numba``-like user
directories when the package directory is read-only, or in ``NUMBA_CACHE_DIR``); later
processes load it in milliseconds. On an empty cache (a fresh install, Docker image, CI
runner or Dask worker) the first call of an objective waits for that compilation. This
module makes it visible and avoidable:

- a listener on numba's compile events says once on stderr (or through the ``gbrank``
  logger when logging is configured) that a kernel is compiling, when that takes more
  than :data:`NOTICE_DELAY` seconds, and how long it took; nothing is said when the
  kernels load from the cache;
- :func:`warmup` compiles every kernel ahead of time (``python -m gbrank warmup``).
"""

from __future__ import annotations

import logging
import sys
import threading
import time
from typing import Any

__all__ = ["NOTICE_DELAY", "cache_location", "install_notice", "warmup"]

#: Seconds a compilation may take before gbrank says that it is compiling.
NOTICE_DELAY = 1.0

_logger = logging.getLogger("gbrank")


def _emit(message: str) -> None:
    """Through the ``gbrank`` logger when the application configured logging, else on
    stderr (a library must not install handlers, and an unconfigured logger would
    drop an INFO message)."""
    if _logger.hasHandlers():
        _logger.info(message)
    else:
        print(message, file=sys.stderr, flush=True)


def _is_gbrank(event: Any) -> bool:
    dispatcher = event.data.get("dispatcher") if isinstance(event.data, dict) else None
    module = getattr(getattr(dispatcher, "py_func", None), "__module__", "") or ""
    return module.startswith("gbrank.")


def _what(event: Any) -> str:
    fn = event.data["dispatcher"].py_func
    return f"the {fn.__module__.rsplit('.', 1)[-1]} kernels ({fn.__name__})"


# The kernels announced in this process, with how many forms of each: the first notice
# explains the cache, later ones stay short.
_ANNOUNCED: dict[str, int] = {}
_ANNOUNCED_LOCK = threading.Lock()


class _Compilation:
    """One outermost compilation of a gbrank kernel (callees compile inside it)."""

    def __init__(self, what: str) -> None:
        self.what = what
        self.t0 = time.perf_counter()
        self.announced = False
        self.form = ""
        self.lock = threading.Lock()
        self.timer = threading.Timer(NOTICE_DELAY, self.announce)
        self.timer.daemon = True

    def announce(self) -> None:
        with _ANNOUNCED_LOCK:
            first = not _ANNOUNCED
            again = _ANNOUNCED.get(self.what, 0)
            _ANNOUNCED[self.what] = again + 1
        # Under the lock: finish() says "compiled" after this says "compiling".
        with self.lock:
            self.form = f" (form {again + 1})" if again else ""
            self.announced = True
            if first:
                _emit(f"gbrank: compiling {self.what} for first use (once per numba cache, "
                      f"here {cache_location()}; `python -m gbrank warmup` compiles every "
                      "kernel ahead of time) ...")
            else:
                # A kernel compiles once per option that selects its own code and per
                # argument types: say so, or the same name reads like the same work again.
                again_for = " again, for another option or argument type" if again else ""
                _emit(f"gbrank: compiling {self.what}{again_for}{self.form} ...")

    def finish(self) -> None:
        self.timer.cancel()
        with self.lock:
            if self.announced:
                _emit(f"gbrank: compiled {self.what}{self.form} in "
                      f"{time.perf_counter() - self.t0:.1f} s")


class _Notice:
    """numba compile-event listener (``numba.core.event.Listener``), per thread."""

    def __init__(self) -> None:
        self.local = threading.local()
        self.quiet = False  # set while warmup reports compilation itself

    def on_start(self, event: Any) -> None:
        if self.quiet or not _is_gbrank(event):
            return
        depth = getattr(self.local, "depth", 0)
        self.local.depth = depth + 1
        if depth == 0:
            self.local.current = _Compilation(_what(event))
            self.local.current.timer.start()

    def on_end(self, event: Any) -> None:
        if self.quiet or not _is_gbrank(event):
            return
        self.local.depth = max(0, getattr(self.local, "depth", 1) - 1)
        if self.local.depth == 0 and getattr(self.local, "current", None) is not None:
            self.local.current.finish()
            self.local.current = None


_INSTALLED: list[Any] = []


def install_notice() -> None:
    """Register the compile notice with numba (once per process)."""
    if _INSTALLED:
        return
    from numba.core import event

    class _Listener(event.Listener):
        def __init__(self, notice: _Notice) -> None:
            self.notice = notice

        def on_start(self, ev: Any) -> None:
            self.notice.on_start(ev)

        def on_end(self, ev: Any) -> None:
            self.notice.on_end(ev)

    listener = _Listener(_Notice())
    event.register("numba:compile", listener)
    _INSTALLED.append(listener)


def cache_location() -> str:
    """Where numba keeps gbrank's compiled kernels in this process."""
    from gbrank._kernels._threads import chunk_bounds

    path = getattr(getattr(chunk_bounds, "_cache", None), "_cache_path", None)
    return str(path) if path else "numba's cache directory"


# -- warmup ---------------------------------------------------------------------------------


def _steps() -> list[tuple[str, Any]]:
    """(label, call) for every kernel a public objective or metric can select."""
    import numpy as np

    from gbrank import metrics
    from gbrank.objectives import FBetaSurrogate, FocalLoss, LambdaRank, RankNet

    rng = np.random.default_rng(0)
    y = rng.integers(0, 5, 640).astype(np.float64)
    s = rng.standard_normal(640)
    # A single-row query and more queries than the threaded forms' chunks.
    g = np.array([1, 2, 97] + [15] * 36)
    yl = rng.integers(0, 5, 1200).astype(np.float64)  # one query longer than 512 rows
    sl = rng.standard_normal(1200)
    yb = (rng.random(640) < 0.1).astype(np.float64)
    ym = rng.integers(0, 3, 640).astype(np.float64)
    sm = rng.standard_normal((640, 3))

    def ranking(obj: Any) -> None:
        obj.grad_hess(y, s, g)
        obj.grad_hess(yl, sl)
        obj.loss(y, s, g)
        obj.loss(yl, sl)  # a list longer than 512 rows selects another loss kernel

    steps: list[tuple[str, Any]] = []
    for metric in ("ndcg", "err", "map", "mrr"):
        steps.append((f"LambdaRank('{metric}')", lambda m=metric: ranking(LambdaRank(m))))
    steps.append(("LambdaRank(norm=True)", lambda: ranking(LambdaRank(norm=True))))
    for w in ("ndcg_loss1", "ndcg_loss2", "ndcg_loss2pp"):
        steps.append((f"LambdaRank(weighting='{w}')",
                       lambda w=w: ranking(LambdaRank(weighting=w))))
    steps.append(("RankNet()", lambda: ranking(RankNet())))
    steps.append(("RankNet(ties='pull')", lambda: ranking(RankNet(ties="pull"))))
    # The fast mode of long queries: near pairs summed exactly (scores spread out) or
    # a score grid (many rows close together), with few or many distinct labels.
    yf = rng.integers(0, 5, 6000).astype(np.float64)
    sf = rng.standard_normal(6000)

    def ranknet_fast() -> None:
        for ties in ("skip", "pull"):
            fast = RankNet(ties=ties, method="fast")
            fast.grad_hess(yl, sl * 100.0)
            fast.grad_hess(yf, sf)
            fast.grad_hess(np.abs(sf + rng.standard_normal(6000)), sf)

    steps.append(("RankNet fast mode", ranknet_fast))

    def focal() -> None:
        obj = FocalLoss()
        obj.grad_hess(yb, s)
        obj.loss(yb, s)
        obj.init_score(yb)
        multi = FocalLoss(num_class=3)
        multi.grad_hess(ym, sm)
        multi.loss(ym, sm)
        multi.init_score(ym)

    def fbeta() -> None:
        for obj in (FBetaSurrogate(random_state=0), FBetaSurrogate(batch_size=None),
                    FBetaSurrogate(measure="balanced")):
            obj.grad_hess(yb, s)
            obj.loss(yb, s)

    steps += [("FocalLoss (binary, multiclass)", focal), ("FBetaSurrogate", fbeta)]

    # Click logs: each correction of both pairwise objectives, on sessions whose rows
    # are shown at positions 1 … size; and the calibrated ranking losses.
    position = np.concatenate([np.arange(1, n + 1) for n in g]).astype(np.float64)
    clicks = (rng.random(position.size) < 0.3).astype(np.float64)
    rho = 1.0 / np.arange(1, g.max() + 1)

    def click_corrections() -> None:
        import warnings

        with warnings.catch_warnings():  # (a random log identifies no position effect)
            warnings.simplefilter("ignore")
            for cls in (LambdaRank, RankNet):
                for bias in ("ipw", "unbiased", "additive"):
                    obj = cls(position_bias=bias, propensity=rho if bias == "ipw" else None)
                    obj.grad_hess(clicks, s, g, position=position)
                    obj.loss(clicks, s, g, position=position)
            metrics.ips_dcg(clicks, s, position, rho, g, k=10)

    def calibrated() -> None:
        for obj in (LambdaRank(calibration=0.5), RankNet(calibration=0.5)):
            obj.grad_hess(y, s, g)
            obj.loss(y, s, g)

    steps += [("click corrections (position_bias)", click_corrections),
              ("calibrated ranking", calibrated)]

    def ranking_metrics() -> None:
        for yy, ss, gg in ((y, s, g), (yl, sl, None)):
            metrics.ndcg(yy, ss, gg, k=10)
            metrics.ndcg(yy, ss, gg, k=None)
            metrics.err(yy, ss, gg, k=10)
            metrics.mean_ap(yy, ss, gg, k=10)
            metrics.mrr(yy, ss, gg)
            metrics.precision_at_k(yy, ss, gg, k=5)
            metrics.recall_at_k(yy, ss, gg, k=5)
            metrics.pair_accuracy(yy, ss, gg)
        metrics.pair_accuracy(np.abs(rng.standard_normal(1200)), sl)  # many labels

    def binary_metrics() -> None:
        metrics.fbeta(yb, s, 2.0, margin=True)
        metrics.f1(yb, s, margin=True)
        metrics.balanced_measure(yb, s, margin=True)
        metrics.best_threshold(yb, s, margin=True)
        metrics.log_loss(yb, s, margin=True)
        metrics.expected_calibration_error(yb, s, margin=True)
        metrics.average_precision(yb, s)
        metrics.fbeta_multiclass(ym, sm)
        metrics.balanced_accuracy(ym, sm)
        metrics.multiclass_log_loss(ym, sm, margin=True)
        metrics.best_class_offsets(ym, sm, margin=True)

    steps += [("ranking metrics", ranking_metrics),
              ("binary and multiclass metrics", binary_metrics)]
    return steps


def warmup(threads: bool = True, verbose: bool = True) -> dict[str, Any]:
    """Compile every gbrank kernel now, so that no later call waits for numba.

    For Docker images and CI caches (run it once at build time), and Dask workers
    (``client.run(gbrank.warmup)``). It calls every public objective (each metric,
    weighting and option that selects another kernel, grouped and group-less) and every
    metric on small data; with ``threads`` it repeats the calls with the threaded forms
    that large data (at least 200,000 rows) selects. Kernels already in numba's cache
    load instead of compiling, so a second warmup takes seconds.

    Parameters
    ----------
    threads : bool, default True
        Also compile the threaded (``parallel=True``) forms.
    verbose : bool, default True
        Print one line per step (what, seconds, functions compiled) and the total.

    Returns
    -------
    dict
        ``{"seconds": total, "compiled": functions compiled, "steps": [(label, seconds,
        compiled), ...], "cache": cache_location()}``.

    Examples
    --------
    >>> import gbrank
    >>> report = gbrank.warmup(verbose=False)  # doctest: +SKIP
    >>> report["compiled"] >= 0  # doctest: +SKIP
    True
    """
    from numba.core import event

    from gbrank._kernels import _threads

    counter = event.RecordingListener()
    steps = _steps()
    passes = [("", None)] + ([(" [threads]", 1)] if threads else [])
    out: list[tuple[str, float, int]] = []
    t_all = time.perf_counter()
    threshold = _threads.PARALLEL_MIN_ROWS
    notice = _INSTALLED[0].notice if _INSTALLED else None
    if notice is not None:
        notice.quiet = True
    if verbose:  # the first step alone can take ten seconds on an empty cache
        print(f"gbrank warmup: {len(steps) * len(passes)} steps, each compiling what is not "
              f"in numba's cache ({cache_location()}); on an empty cache a minute or two",
              flush=True)
    try:
        with event.install_listener("numba:compile", counter):
            for suffix, min_rows in passes:
                try:
                    if min_rows is not None:  # every call takes the threaded form
                        _threads.PARALLEL_MIN_ROWS = min_rows
                    for label, call in steps:
                        before = sum(1 for _, e in counter.buffer if e.is_start)
                        t0 = time.perf_counter()
                        call()
                        seconds = time.perf_counter() - t0
                        compiled = sum(1 for _, e in counter.buffer if e.is_start) - before
                        out.append((label + suffix, seconds, compiled))
                        if verbose:
                            print(f"gbrank warmup: {label + suffix:<40} {seconds:6.1f} s  "
                                  f"{compiled:4d} functions compiled", flush=True)
                finally:
                    _threads.PARALLEL_MIN_ROWS = threshold
    finally:
        if notice is not None:
            notice.quiet = False
    total = time.perf_counter() - t_all
    n = sum(c for _, _, c in out)
    report = {"seconds": total, "compiled": n, "steps": out, "cache": cache_location()}
    if verbose:
        print(f"gbrank warmup: {n} functions compiled in {total:.1f} s; cache: "
              f"{report['cache']}", flush=True)
    return report
