"""Optional dependencies of the tuner, imported only when a function needs them."""

from __future__ import annotations

import importlib
from typing import Any


def require(module: str, extra: str = "tune") -> Any:
    """Import ``module`` or raise an ImportError that says which extra installs it."""
    try:
        return importlib.import_module(module)
    except ModuleNotFoundError as exc:
        if exc.name is not None and module.split(".")[0] != exc.name.split(".")[0]:
            raise
        raise ImportError(
            f"gbrank.tuning needs {module.split('.')[0]!r}: pip install 'gbrank[{extra}]'"
        ) from None
