"""XGBoost adapter: translate XGBoost's calling conventions to gbrank objects.

``xgb.train(..., obj=objective(o))`` passes ``(preds, dtrain)``; labels, weights and
query boundaries (``group_ptr``) are read from the ``DMatrix``; :func:`metric` is the
evaluation function of gbrank metrics; :func:`to_native` turns a model trained so into
one that XGBoost (or any loader of its JSON) predicts with alone; :class:`XGBRanker` is
XGBoost's scikit-learn ranker accepting gbrank objectives. XGBoost itself is imported
only inside the functions that need it (``XGBRanker`` is built on first access).
"""

from typing import Any

from gbrank.xgboost._export import to_native
from gbrank.xgboost._metric import metric
from gbrank.xgboost._objective import objective

__all__ = ["objective", "metric", "to_native", "XGBRanker"]


def __getattr__(name: str) -> Any:
    if name == "XGBRanker":
        from gbrank.xgboost._ranker import xgb_ranker_class

        return xgb_ranker_class()
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
