"""Public objectives: each is a LightGBM objective as it stands and an XGBoost one
through :func:`gbrank.xgboost.objective`. Names (``"lambdarank:err"``, ...) are
resolved by :func:`gbrank.objectives.get_objective`."""

from gbrank.objectives._base import Objective
from gbrank.objectives._combination import Combination
from gbrank.objectives._cross_entropy import CrossEntropy
from gbrank.objectives._fbeta import FBetaSurrogate
from gbrank.objectives._focal import FocalLoss
from gbrank.objectives._lambdarank import LambdaRank
from gbrank.objectives._position_bias import PositionBias
from gbrank.objectives._ranknet import RankNet
from gbrank.objectives._registry import (
    OBJECTIVES,
    REGISTRY,
    ObjectiveEntry,
    get_objective,
    objective_names,
)

__all__ = ["Objective", "FocalLoss", "FBetaSurrogate", "RankNet", "LambdaRank",
           "CrossEntropy", "Combination", "PositionBias", "get_objective", "objective_names",
           "REGISTRY", "OBJECTIVES", "ObjectiveEntry"]
