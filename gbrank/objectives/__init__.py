"""Public objectives: each is a LightGBM objective as it stands and an XGBoost one
through :func:`gbrank.xgboost.objective`."""

from gbrank.objectives._base import Objective

__all__ = ["Objective"]
