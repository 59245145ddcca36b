"""gbrank._compilation: the compile notice, warmup, and where numba caches the kernels.

Each test runs a fresh Python process with its own ``NUMBA_CACHE_DIR`` (an empty cache
is what a new install starts with), so the parent's compiled kernels do not interfere.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
PACKAGE = ROOT / "gbrank"


def _run(code: str, env_extra: dict[str, str]) -> subprocess.CompletedProcess:
    env = {**os.environ, "PYTHONPATH": str(ROOT), **env_extra}
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          env=env, timeout=600)
    assert proc.returncode == 0, proc.stderr[-3000:]
    return proc


_F1 = """
import numpy as np
import gbrank, gbrank._compilation as c
c.NOTICE_DELAY = {delay}
print(gbrank.metrics.f1(np.array([0.0, 1.0, 1.0]), np.array([-1.0, 2.0, -0.5]), margin=True))
"""


def test_compile_notice_once_on_an_empty_cache_and_quiet_when_warm(tmp_path):
    env = {"NUMBA_CACHE_DIR": str(tmp_path)}
    cold = _run(_F1.format(delay=0.0), env)
    assert cold.stdout.strip() == str(2 * 1 / (2 * 1 + 0 + 1))  # F1 = 2a/(2a+b+c)
    lines = [ln for ln in cold.stderr.splitlines() if ln.startswith("gbrank:")]
    starts = [ln for ln in lines if ln.startswith("gbrank: compiling ")]
    ends = [ln for ln in lines if ln.startswith("gbrank: compiled ")]
    assert starts and len(starts) == len(ends)
    assert "python -m gbrank warmup" in starts[0] and str(tmp_path) in starts[0]
    warm = _run(_F1.format(delay=0.0), env)
    assert "gbrank:" not in warm.stderr
    # A compilation shorter than the delay is not announced.
    other = tmp_path / "other"
    quiet = _run(_F1.format(delay=600.0), {"NUMBA_CACHE_DIR": str(other)})
    assert "gbrank:" not in quiet.stderr


def test_notice_goes_to_the_gbrank_logger_when_logging_is_configured(tmp_path):
    code = ("import logging, sys\n"
            "logging.basicConfig(stream=sys.stdout, level=logging.INFO, "
            "format='LOG %(name)s %(message)s')\n" + _F1.format(delay=0.0))
    proc = _run(code, {"NUMBA_CACHE_DIR": str(tmp_path)})
    assert "LOG gbrank gbrank: compiling " in proc.stdout
    assert "gbrank:" not in proc.stderr


def test_warmup_compiles_the_serial_and_threaded_forms_once(tmp_path):
    # Warmup restricted to two steps (the full list takes minutes on an empty cache).
    code = """
import numpy as np
import gbrank._compilation as c
from gbrank import metrics
from gbrank._kernels import ndcg
y = np.arange(400.0) % 3
g = np.full(40, 10)  # more queries than the threaded form's chunks
steps = [("ndcg", lambda: metrics.ndcg(y, -y, g, k=5)),
         ("f1", lambda: metrics.f1(y > 1, y - 1.5, margin=True))]
c._steps = lambda: steps
first = c.warmup(threads=True, verbose=False)
second = c.warmup(threads=True, verbose=False)
print(first["compiled"], second["compiled"], len(first["steps"]),
      len(ndcg._ndcg_chunk.signatures), len(ndcg._ndcg_parallel_kernel.signatures))
"""
    first, second, n_steps, serial, parallel = map(
        int, _run(code, {"NUMBA_CACHE_DIR": str(tmp_path)}).stdout.split())
    assert first > 0 and second == 0
    assert n_steps == 4  # two steps, serial and threaded
    assert serial >= 1 and parallel >= 1
    # A new process finds everything in the cache.
    again = _run(code, {"NUMBA_CACHE_DIR": str(tmp_path)}).stdout.split()
    assert again[0] == "0"


def test_warmup_command_line(tmp_path):
    proc = subprocess.run([sys.executable, "-m", "gbrank", "warmup", "--help"],
                          capture_output=True, text=True, cwd=ROOT,
                          env={**os.environ, "PYTHONPATH": str(ROOT)})
    assert proc.returncode == 0 and "--no-threads" in proc.stdout
    bad = subprocess.run([sys.executable, "-m", "gbrank", "nope"], capture_output=True,
                         text=True, cwd=ROOT, env={**os.environ, "PYTHONPATH": str(ROOT)})
    assert bad.returncode == 2 and "invalid choice" in bad.stderr


# --- where the compiled kernels go -------------------------------------------------------

_WHERE = "from gbrank._compilation import cache_location; print(cache_location())"


def test_cache_beside_the_package_by_default():
    env = {k: v for k, v in os.environ.items() if k != "NUMBA_CACHE_DIR"}
    proc = subprocess.run([sys.executable, "-c", _WHERE], capture_output=True, text=True,
                          env={**env, "PYTHONPATH": str(ROOT)})
    assert Path(proc.stdout.strip()) == PACKAGE / "_kernels" / "__pycache__"


def test_cache_in_numba_cache_dir_when_set(tmp_path):
    where = Path(_run(_WHERE, {"NUMBA_CACHE_DIR": str(tmp_path)}).stdout.strip())
    assert tmp_path in where.parents


@pytest.mark.skipif(sys.platform == "win32", reason="XDG cache directory")
def test_cache_in_the_user_cache_when_the_package_is_read_only(tmp_path):
    # numba tries to create a file beside the package; where that fails (a read-only
    # install) it caches under the user's cache directory. Simulated for the package
    # directory only, since permissions do not stop root.
    code = f"""
import tempfile
real = tempfile.TemporaryFile
def refuse(*args, dir=None, **kwargs):
    if dir is not None and str(dir).startswith({str(PACKAGE)!r}):
        raise PermissionError(13, "read-only", dir)
    return real(*args, dir=dir, **kwargs)
tempfile.TemporaryFile = refuse
{_WHERE}
"""
    env = {k: v for k, v in os.environ.items() if k != "NUMBA_CACHE_DIR"}
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          env={**env, "PYTHONPATH": str(ROOT),
                               "XDG_CACHE_HOME": str(tmp_path), "HOME": str(tmp_path)})
    assert proc.returncode == 0, proc.stderr
    where = Path(proc.stdout.strip())
    assert tmp_path in where.parents and PACKAGE not in where.parents


def test_notice_explains_once_and_names_a_kernels_later_forms(tmp_path):
    """The first notice of a process explains the cache and warmup; a kernel compiled
    again for another option says so, instead of repeating the same line."""
    code = """
import numpy as np
import gbrank._compilation as c
c.NOTICE_DELAY = 0.0
from gbrank.objectives import RankNet
y = np.arange(40.0) % 3
s = np.sin(np.arange(40.0))
g = np.full(4, 10)
RankNet().grad_hess(y, s, g)
RankNet(ties="pull").grad_hess(y, s, g)  # another form of the same kernel
"""
    lines = [ln for ln in _run(code, {"NUMBA_CACHE_DIR": str(tmp_path)}).stderr.splitlines()
             if ln.startswith("gbrank: compiling ")]
    assert "python -m gbrank warmup" in lines[0]
    assert sum("python -m gbrank warmup" in ln for ln in lines) == 1
    chunk = [ln for ln in lines if "ranknet kernels (_chunk)" in ln]
    assert len(chunk) == 2 and "again" not in chunk[0]
    assert chunk[1].endswith("again, for another option or argument type (form 2) ...")


def test_warmup_reaches_the_click_corrections_and_calibrated_losses():
    """Warmup left the position-bias kernels, long lists' losses and the calibration
    metrics to compile at first use (eighth probe); its steps now call them (here on
    the test run's cache: the calls must work, not compile)."""
    from gbrank._compilation import _steps

    steps = dict(_steps())
    for label in ("click corrections (position_bias)", "calibrated ranking",
                  "binary and multiclass metrics"):
        steps[label]()


# Every kernel family a user reaches through the public API: both boosters, every
# ranking objective and option, the click corrections, calibration, classification, one
# long list, the metrics and the gradient check. Nothing here may compile after warmup.
_WORKLOAD = """
import warnings
import numpy as np
warnings.simplefilter("ignore")
from gbrank import metrics as M
from gbrank.datasets import make_imbalanced, make_ranking, simulate_clicks
from gbrank.gradcheck import check
from gbrank.objectives import FBetaSurrogate, FocalLoss, LambdaRank, RankNet
from gbrank.sklearn import GBClassifier, GBRanker

X, y, g = make_ranking(n_queries=60, rows_per_query=15, n_features=5, seed=0)
qid = np.repeat(np.arange(g.size), g)
log = simulate_clicks(y, g, X[:, 0], top_n=10, n_sessions=3, sessions="keep",
                      randomized=0.3, seed=0)
sq = np.repeat(np.arange(log.group.size), log.group)
Xb, yb = make_imbalanced(n_rows=800, positive_rate=0.1, seed=0)
yk = np.arange(800) % 4
for b in ("lightgbm", "xgboost"):
    for obj in [LambdaRank(), LambdaRank(metric="err"), LambdaRank(metric="map"),
                LambdaRank(metric="mrr"), LambdaRank(weighting="ndcg_loss2pp"),
                LambdaRank(norm=True), RankNet(), RankNet(ties="pull"),
                LambdaRank(calibration=0.5)]:
        GBRanker(obj, booster=b, n_estimators=3, n_jobs=1).fit(X, y, qid=qid)
    for pb in ("ipw", "unbiased", "additive"):
        kw = {"propensity": log.examination} if pb == "ipw" else {}
        for cls in (LambdaRank, RankNet):
            GBRanker(cls(position_bias=pb, on_cascade="ignore", **kw), booster=b,
                     n_estimators=3, n_jobs=1).fit(X[log.rows], log.clicks, qid=sq,
                                                   position=log.position)
    for obj in ("focal", FBetaSurrogate(), FocalLoss(gamma=1.0, alpha=0.25)):
        GBClassifier(obj, booster=b, n_estimators=3, n_jobs=1).fit(Xb, yb)
    GBClassifier(FocalLoss(num_class=4), booster=b, n_estimators=3, n_jobs=1).fit(Xb, yk)
Xl, yl, _ = make_ranking(n_queries=1, rows_per_query=3000, n_features=5, seed=1)
for obj in (LambdaRank(groupless=True), RankNet(groupless=True)):
    GBRanker(obj, n_estimators=2, n_jobs=1, groupless=True).fit(Xl, yl)
s = np.random.default_rng(0).normal(size=y.size)
for k in (None, 5):
    M.ndcg(y, s, g, k=k); M.err(y, s, g, k=k); M.mean_ap(y, s, g, k=k); M.mrr(y, s, g, k=k)
M.pair_accuracy(y, s, g)
M.ips_dcg(log.clicks, np.zeros(log.clicks.size), log.position, log.examination,
          group=log.group)
p = np.clip(np.random.default_rng(1).random(800), 0.01, 0.99)
M.f1(yb, p); M.log_loss(yb, p); M.expected_calibration_error(yb, p)
M.average_precision(yb, p)
M.fbeta_multiclass(yk, np.random.default_rng(2).random((800, 4)))
check(LambdaRank(), y[:30], s[:30], group=[15, 15]); check(FocalLoss(), yb[:50], p[:50])
print("done")
"""


@pytest.mark.slow
def test_nothing_compiles_after_warmup_on_an_empty_cache(tmp_path):
    """`gbrank warmup` on a new install's empty cache (about 2 minutes here), then a
    workload through every part of the public API: it compiles nothing more (it
    compiled 35 s of kernels without warmup). A kernel family warmup misses fails this
    test by name in the compile notice."""
    env = {**os.environ, "PYTHONPATH": str(ROOT), "NUMBA_CACHE_DIR": str(tmp_path)}
    warm = subprocess.run([sys.executable, "-m", "gbrank", "warmup"], capture_output=True,
                          text=True, env=env, timeout=1200)
    assert warm.returncode == 0, warm.stderr[-3000:]
    run = _run(_WORKLOAD, {"NUMBA_CACHE_DIR": str(tmp_path)})
    assert run.stdout.strip() == "done"
    compiled = [line for line in run.stderr.splitlines() if "gbrank: compil" in line]
    assert not compiled, compiled
