"""gbrank: exact, fast custom objectives and metrics for LightGBM and XGBoost.

Learning to rank (RankNet, LambdaRank with a selectable IR metric), imbalanced binary
classification (focal loss, an F_beta structured surrogate), and the metrics that
judge them. Every objective is a numba grad/hess kernel checked by finite differences.
"""

from gbrank import metrics, objectives
from gbrank._proba import predict_proba
from gbrank._registry import get_metric, get_objective

__version__ = "0.1.0"

__all__ = ["metrics", "objectives", "predict_proba", "get_metric", "get_objective", "__version__"]
