"""The protocol every gbrank objective follows.

An objective owns its parameters, validates input once (through
``gbrank._validation``) and calls a numba kernel. It knows nothing of the boosters:
``__call__`` hands LightGBM's calling conventions to ``gbrank.lightgbm``, the adapter.
"""

from __future__ import annotations

from typing import Any, ClassVar

import numpy as np


class Objective:
    """Base class of gbrank objectives.

    Subclasses implement :meth:`grad_hess` (what the booster receives) and
    :meth:`loss` (the function whose gradient ``grad`` is), and override
    :meth:`exact_grad_hess` when the booster gets a modified Hessian (a floor, a
    constant) so that :func:`gbrank.gradcheck.check` can compare the true one.

    An instance is directly a LightGBM objective: ``lgb.train({"objective": obj})``
    calls ``obj(preds, train_set)`` and ``LGBMRanker(objective=obj)`` /
    ``LGBMClassifier(objective=obj)`` call ``obj(y_true, y_pred, weight, group)``.
    For XGBoost use :func:`gbrank.xgboost.objective`.
    """

    #: "ranking", "binary" or "multiclass": how adapters and the tuner treat it.
    task: ClassVar[str] = "ranking"
    #: Blocks the loss is a sum over: "query" (one term per query; group-less = one
    #: query) or "row" (one term per row). Gradient checks perturb within a block.
    loss_blocks: ClassVar[str] = "query"

    def grad_hess(self, y: Any, s: Any, group: Any = None, *, qid: Any = None,
                  weight: Any = None) -> tuple[np.ndarray, np.ndarray]:
        """Gradient and diagonal Hessian of the loss w.r.t. the raw scores ``s``."""
        raise NotImplementedError

    def exact_grad_hess(self, y: Any, s: Any, group: Any = None, *, qid: Any = None,
                        weight: Any = None) -> tuple[np.ndarray, np.ndarray]:
        """Gradient and the true diagonal Hessian (default: same as :meth:`grad_hess`)."""
        return self.grad_hess(y, s, group, qid=qid, weight=weight)

    def loss(self, y: Any, s: Any, group: Any = None, *, qid: Any = None, weight: Any = None,
             at: Any = None) -> float:
        """Value of the loss. ``at`` freezes any score-dependent pair weights at other
        scores (LambdaRank's local loss); objectives without such weights ignore it."""
        raise NotImplementedError

    def bind_data_defaults(self, y: Any) -> Objective:
        """This objective with any default that depends on the whole data (LambdaRank's
        ERR ``g_max``) fixed from labels ``y``; ``self`` when there is none. Used where
        the loss is evaluated on parts of the data (the gradient check)."""
        return self

    def init_score(self, y: Any, weight: Any = None) -> float | np.ndarray:
        """Loss-optimal constant raw score (LightGBM starts custom objectives at 0)."""
        return 0.0

    # LightGBM's protocol: 2 arguments from lgb.train, 4 from the sklearn API (which
    # picks the form by counting parameters, so exactly four are declared here).
    def __call__(self, a: Any, b: Any, weight: Any = None, group: Any = None,
                 ) -> tuple[np.ndarray, np.ndarray]:
        from gbrank.lightgbm import _call_objective

        return _call_objective(self, a, b, weight, group)

    def get_params(self) -> dict[str, Any]:
        """Constructor parameters (sklearn style), used by ``repr`` and the tuner."""
        import inspect

        names = [p for p in inspect.signature(type(self).__init__).parameters if p != "self"]
        return {name: getattr(self, name) for name in names}

    def __repr__(self) -> str:
        args = ", ".join(f"{k}={v!r}" for k, v in self.get_params().items())
        return f"{type(self).__name__}({args})"
