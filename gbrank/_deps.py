"""Optional dependencies, imported inside the functions that need them.

The core (objectives, metrics, gradient checks) needs numpy, numba, scipy and
scikit-learn only; every other package comes with an extra of ``gbrank``. This module
is the one place that imports such a package and, when it is missing, says which extra
installs it.
"""

from __future__ import annotations

import importlib
from types import ModuleType

__all__ = ["EXTRAS", "require"]

#: Top-level module -> the extra of gbrank that installs it.
EXTRAS = {
    "lightgbm": "lightgbm",
    "xgboost": "xgboost",
    "optuna": "tune",
    "sqlalchemy": "tune",
    "matplotlib": "tune",
    "pandas": "tune",
    "pyarrow": "tune",
    "optuna_integration": "anchor",
    "catboost": "catboost",
    "dask": "dask",
    "distributed": "dask",
}

# What each extra is for, in the message of a missing package.
_FOR = {
    "lightgbm": "LightGBM (gbrank.lightgbm, booster='lightgbm', the tuner)",
    "xgboost": "XGBoost (gbrank.xgboost, booster='xgboost', the tuner's --booster xgboost)",
    "tune": "the tuner (gbrank.tuning, experiments/tune.py)",
    "anchor": "the tuner's --anchor baseline",
    "catboost": "the tuner's --baselines catboost",
    "dask": "gbrank.dask",
}


def require(module: str) -> ModuleType:
    """Import ``module`` (``"lightgbm"``, ``"xgboost.callback"``, ``"optuna"``, ...).

    Raises
    ------
    ImportError
        When its top-level package is not installed, naming the extra that installs
        it, e.g. ``pip install 'gbrank[lightgbm]'``. An import error raised inside an
        installed package (a broken dependency of its own) is not rewritten.
    """
    top = module.split(".")[0]
    try:
        return importlib.import_module(module)
    except ModuleNotFoundError as exc:
        if exc.name is None or exc.name.split(".")[0] != top:
            raise
        extra = EXTRAS.get(top)
        if extra is None:
            raise
        both = " ('gbrank[all]' installs both boosters)" if extra in ("lightgbm",
                                                                        "xgboost") else ""
        raise ImportError(
            f"{top!r} is not installed; {_FOR[extra]} needs it: "
            f"pip install 'gbrank[{extra}]'{both}"
        ) from None
