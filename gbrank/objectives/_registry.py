"""Objective names adapters, estimators and the tuner accept, with what each objective
is for: ``"ranknet"``, ``"lambdarank"``, ``"lambdarank:err"``, ``"focal"``,
``"fbeta_surrogate"``, ``"cross_entropy"``.

Each name carries its class, the constructor arguments the name fixes, its task and the
metric it exists for (the one a tuner judges it by). Users of the names read them here;
they do not list them again.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Any

from gbrank.objectives._cross_entropy import CrossEntropy
from gbrank.objectives._fbeta import FBetaSurrogate
from gbrank.objectives._focal import FocalLoss
from gbrank.objectives._lambdarank import LambdaRank
from gbrank.objectives._ranknet import RankNet

__all__ = ["OBJECTIVES", "REGISTRY", "ObjectiveEntry", "get_objective", "objective_names"]


@dataclass(frozen=True)
class ObjectiveEntry:
    """What a registry name stands for.

    Attributes
    ----------
    cls : type
        The objective class.
    params : mapping
        Constructor arguments the name fixes (``"lambdarank:err"``: ``metric="err"``).
    task : str
        ``"ranking"`` or ``"binary"`` (``FocalLoss(num_class=K)`` is multiclass by its
        parameter).
    target : str
        The metric the objective exists for, by name (a
        :func:`gbrank.metrics.get_metric` name).

    Examples
    --------
    >>> from gbrank.objectives import REGISTRY
    >>> entry = REGISTRY["lambdarank:err"]
    >>> entry.cls.__name__, dict(entry.params), entry.task, entry.target
    ('LambdaRank', {'metric': 'err'}, 'ranking', 'err@10')
    >>> entry.cls(**entry.params).metric  # what get_objective("lambdarank:err") builds
    'err'
    """

    cls: type
    params: Mapping[str, Any] = field(default_factory=dict)
    task: str = "ranking"
    target: str = "ndcg@10"


REGISTRY: Mapping[str, ObjectiveEntry] = MappingProxyType({
    "ranknet": ObjectiveEntry(RankNet, {}, "ranking", "pair_accuracy"),
    "lambdarank": ObjectiveEntry(LambdaRank, {}, "ranking", "ndcg@10"),
    "lambdarank:ndcg": ObjectiveEntry(LambdaRank, {"metric": "ndcg"}, "ranking", "ndcg@10"),
    "lambdarank:err": ObjectiveEntry(LambdaRank, {"metric": "err"}, "ranking", "err@10"),
    "lambdarank:map": ObjectiveEntry(LambdaRank, {"metric": "map"}, "ranking", "map@10"),
    "lambdarank:mrr": ObjectiveEntry(LambdaRank, {"metric": "mrr"}, "ranking", "mrr@10"),
    "focal": ObjectiveEntry(FocalLoss, {}, "binary", "ap"),
    "fbeta_surrogate": ObjectiveEntry(FBetaSurrogate, {}, "binary", "f1"),
    "cross_entropy": ObjectiveEntry(CrossEntropy, {}, "binary", "logloss"),
})

# name -> class, for the names without a ":<metric>" part.
OBJECTIVES: Mapping[str, type] = MappingProxyType(
    {name: entry.cls for name, entry in REGISTRY.items() if ":" not in name})


def objective_names(task: str | None = None) -> tuple[str, ...]:
    """Registry names, of one task (``"ranking"``, ``"binary"``) or all.

    Parameters
    ----------
    task : {"ranking", "binary"}, optional
        Only the names of this task; ``None``: every name.

    Returns
    -------
    tuple of str
        Names :func:`get_objective` accepts, in registry order.

    Examples
    --------
    >>> from gbrank.objectives import get_objective, objective_names
    >>> objective_names("binary")
    ('focal', 'fbeta_surrogate', 'cross_entropy')
    >>> [get_objective(name).task for name in objective_names("ranking")][:2]
    ['ranking', 'ranking']
    """
    return tuple(n for n, e in REGISTRY.items() if task is None or e.task == task)


def get_objective(name: str, **params: Any) -> Any:
    """Build an objective by name: ``"ranknet"``, ``"lambdarank"``, ``"focal"``,
    ``"fbeta_surrogate"``, ``"cross_entropy"``, or ``"lambdarank:<metric>"``
    (``"lambdarank:err"``).

    Keyword arguments go to the constructor (stored as given, scikit-learn style) and
    are validated here at once, so a bad value fails where it is named.

    Parameters
    ----------
    name : str
        A registry name (:data:`REGISTRY`; case and surrounding spaces ignored), or
        ``"lambdarank:<metric>"`` with any ``metric`` :class:`LambdaRank` accepts.
    **params
        Constructor arguments of the objective's class; not ``metric`` with a name that
        fixes it.

    Returns
    -------
    Objective
        A new instance of the name's class.

    Raises
    ------
    ValueError
        For an unknown name, listing the valid ones.

    Examples
    --------
    >>> from gbrank.objectives import get_objective
    >>> get_objective("lambdarank:err", truncation=10).metric
    'err'
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
