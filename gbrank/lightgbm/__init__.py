"""LightGBM adapter: translate LightGBM's calling conventions to gbrank objects.

Objectives need nothing from here (an objective instance is a valid
``params["objective"]`` and reads the ``Dataset`` itself, by duck typing) unless they
learn from clicks: :func:`objective` gives them the display positions a constructed
``Dataset`` no longer holds. This module also holds :func:`feval`, the metric adapter,
:func:`cv`, ``lgb.cv`` with query-wise folds,
:func:`refit`, LightGBM's refit for models trained with a custom objective, and
:func:`to_native`, a model that LightGBM (or any loader of its files) predicts with
alone. LightGBM is imported only inside the functions that need it.
"""

from gbrank.lightgbm._cv import cv
from gbrank.lightgbm._export import to_native
from gbrank.lightgbm._feval import feval, metric_key
from gbrank.lightgbm._objective import objective
from gbrank.lightgbm._refit import refit

__all__ = ["cv", "feval", "metric_key", "objective", "refit", "to_native"]
