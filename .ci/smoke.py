"""Smoke test of an installed gbrank (run from outside the checkout, see .ci/wheel.sh).

    python smoke.py core   # the wheel alone: no booster installed
    python smoke.py        # with gbrank[lightgbm]

Checks what a user of the wheel meets first: the lazy submodules, no booster imported
by ``import gbrank``, a metric and an objective compiled and cached by numba although
the package directory is read-only, and one LightGBM round trip; with the core alone,
that objectives, metrics and gradient checks work and LightGBM's adapter names the
extra to install.
"""

import importlib.util
import os
import sys
from pathlib import Path

import numpy as np

import gbrank

if sys.argv[1:] == ["core"]:
    missing = [m for m in ("lightgbm", "xgboost") if importlib.util.find_spec(m) is None]
    assert missing == ["lightgbm", "xgboost"], f"the core wheel installed {missing}"
    from gbrank.gradcheck import check
    from gbrank.objectives import FocalLoss

    y = np.array([0.0, 1.0, 0.0, 1.0])
    s = np.array([-1.0, 0.5, 0.2, 2.0])
    assert 0.0 <= gbrank.metrics.f1(y, s, margin=True) <= 1.0  # s: raw margins
    assert check(FocalLoss(), y, s).ok
    try:
        gbrank.lightgbm.cv({}, None)
    except ImportError as exc:
        assert "pip install 'gbrank[lightgbm]'" in str(exc), exc
        print(f"core only: objectives, metrics, gradcheck work; LightGBM: {exc}")
    else:
        raise AssertionError("gbrank.lightgbm.cv ran without LightGBM")
    sys.exit(0)

here = Path(gbrank.__file__).resolve().parent
assert "site-packages" in str(here), f"gbrank imported from {here}, not the wheel"
assert not os.access(here, os.W_OK), f"{here} is writable: run this as an unprivileged user"
heavy = [m for m in ("lightgbm", "xgboost", "optuna", "matplotlib") if m in sys.modules]
assert not heavy, f"import gbrank imported {heavy}"

print("gbrank", gbrank.__version__, "from", here)
print(gbrank.xgboost.objective, gbrank.sklearn)

rng = np.random.default_rng(0)
y = rng.integers(0, 5, 1000).astype(float)
s = y + rng.standard_normal(1000)
group = np.full(10, 100)
value = gbrank.metrics.ndcg(y, s, group, k=10)
grad, hess = gbrank.objectives.LambdaRank().grad_hess(y, s, group)
assert 0.0 < value <= 1.0 and np.isfinite(grad).all() and (hess >= 0).all()

import lightgbm as lgb  # noqa: E402

X = np.column_stack([y + rng.standard_normal(1000), rng.standard_normal(1000)])
booster = lgb.train({"objective": gbrank.objectives.LambdaRank(), "verbose": -1},
                    lgb.Dataset(X, y, group=group), num_boost_round=5)
trained = gbrank.metrics.ndcg(y, booster.predict(X), group, k=10)
print(f"ndcg@10 of a noisy score {value:.4f}, after 5 LightGBM rounds {trained:.4f}")

cache = Path(os.environ.get("NUMBA_CACHE_DIR") or Path.home() / ".cache" / "numba")
index_files = list(cache.rglob("*.nbi"))
assert index_files, f"numba wrote no cache under {cache}"
print(f"numba cache: {len(index_files)} index files under {cache}")
print("smoke test passed")
