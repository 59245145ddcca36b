"""gbrank: exact, fast custom objectives and metrics for LightGBM and XGBoost.

Learning to rank (RankNet, LambdaRank with a selectable IR metric), imbalanced binary
classification (focal loss, an F_beta structured surrogate), and the metrics that
judge them. Every objective is a numba grad/hess kernel checked by finite differences.

The objectives, adapters and helpers below are submodules loaded on first use (PEP
562), so ``import gbrank`` imports neither booster and no objective kernel:
``gbrank.objectives`` (and ``gbrank.get_objective``), ``gbrank.lightgbm``,
``gbrank.xgboost``, ``gbrank.sklearn``, ``gbrank.datasets``, ``gbrank.gradcheck``,
``gbrank.tuning``, ``gbrank.dask``.
"""

from __future__ import annotations

import importlib
from typing import Any

from gbrank import metrics
from gbrank._compilation import install_notice, warmup
from gbrank._proba import predict_proba
from gbrank.metrics import get_metric

install_notice()  # say so when a kernel takes long to compile (first use on a new cache)

# The one place the version is written (pyproject.toml reads it from here).
__version__ = "0.3.0"

_LAZY_SUBMODULES = ("objectives", "lightgbm", "xgboost", "sklearn", "datasets", "gradcheck",
                    "tuning", "dask")

__all__ = ["metrics", "predict_proba", "get_metric", "get_objective", "warmup", "__version__",
           *_LAZY_SUBMODULES]


def __getattr__(name: str) -> Any:
    if name in _LAZY_SUBMODULES:
        module = importlib.import_module(f"gbrank.{name}")
        globals()[name] = module  # later lookups skip this function
        return module
    if name == "get_objective":
        from gbrank.objectives import get_objective

        globals()[name] = get_objective
        return get_objective
    raise AttributeError(f"module 'gbrank' has no attribute {name!r}")


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(_LAZY_SUBMODULES) | {"get_objective"})
