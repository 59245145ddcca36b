"""Objective names adapters and the tuner accept: ``"ranknet"``, ``"lambdarank"``,
``"lambdarank:err"``, ``"focal"``, ``"fbeta_surrogate"``."""

from __future__ import annotations

from collections.abc import Mapping
from types import MappingProxyType
from typing import Any

from gbrank.objectives._cross_entropy import CrossEntropy
from gbrank.objectives._fbeta import FBetaSurrogate
from gbrank.objectives._focal import FocalLoss
from gbrank.objectives._lambdarank import LambdaRank
from gbrank.objectives._ranknet import RankNet

__all__ = ["OBJECTIVES", "get_objective"]

# name -> class. "lambdarank:<metric>" is a shorthand
# for LambdaRank(metric=<metric>) (see get_objective).
OBJECTIVES: Mapping[str, type] = MappingProxyType({
    "ranknet": RankNet,
    "lambdarank": LambdaRank,
    "focal": FocalLoss,
    "fbeta_surrogate": FBetaSurrogate,
    "cross_entropy": CrossEntropy,
})


def get_objective(name: str, **params: Any) -> Any:
    """Build an objective by name: ``"ranknet"``, ``"lambdarank"``, ``"focal"``,
    ``"fbeta_surrogate"``, or ``"lambdarank:<metric>"`` (``"lambdarank:err"``).

    Keyword arguments go to the constructor (stored as given, scikit-learn style) and
    are validated here at once, so a bad value fails where it is named.

    Raises
    ------
    ValueError
        For an unknown name, listing the valid ones.
    """
    if not isinstance(name, str):
        raise ValueError(f"objective name must be a string, got {type(name).__name__}")
    key = name.strip().lower()
    family, _, metric = key.partition(":")
    if family not in OBJECTIVES or (metric and family != "lambdarank"):
        raise ValueError(
            f"unknown objective {name!r}; valid: {', '.join(OBJECTIVES)}, "
            "lambdarank:<ndcg|err|map|mrr>"
        )
    if metric:
        if "metric" in params:
            raise ValueError(f"{name!r} already names the metric; do not also pass metric=")
        params["metric"] = metric
    obj = OBJECTIVES[family](**params)
    obj._params()  # a name with parameters is checked at once (constructors only store)
    return obj
