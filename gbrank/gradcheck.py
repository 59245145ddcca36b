"""Finite-difference check of an objective's gradient and diagonal Hessian.

For each score ``s_i`` the loss is perturbed by central differences,

    g_i ≈ (L(s + h e_i) − L(s − h e_i)) / 2h,
    H_ii ≈ (L(s + h e_i) − 2 L(s) + L(s − h e_i)) / h²,

and compared with the objective's :meth:`exact_grad_hess` (the true Hessian, not
the floored or constant one a booster gets). Score-dependent pair weights
(LambdaRank's ΔZ) are frozen at the unperturbed scores through ``loss(..., at=s)``,
which is the SPEC's "local loss". The loss is evaluated on the block that holds
``i`` only (its query, or its row for per-row objectives), so rounding in a large
total loss does not swamp the differences.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from gbrank._validation import as_float_array, check_bool, check_number, query_structure

__all__ = ["GradCheckReport", "check"]


@dataclass(frozen=True)
class GradCheckReport:
    """Outcome of :func:`check`.

    Errors are ``max |analytic − numeric| / max(max |analytic|, max |numeric|, floor)``
    over all scores; ``floor`` is the smallest value central differences resolve at
    the loss's scale, below which values are compared absolutely.
    """

    ok: bool
    grad_error: float
    hess_error: float | None
    grad_tol: float
    hess_tol: float
    n: int
    worst_grad_index: int
    worst_hess_index: int | None
    objective: str

    def __str__(self) -> str:
        verdict = "OK" if self.ok else "FAILED"
        lines = [
            f"gradcheck {verdict}: {self.objective} on {self.n} scores",
            f"  gradient  max rel. error {self.grad_error:.3e} (tol {self.grad_tol:.0e}, "
            f"worst at index {self.worst_grad_index})",
        ]
        if self.hess_error is None:
            lines.append("  Hessian   not checked")
        else:
            lines.append(
                f"  Hessian   max rel. error {self.hess_error:.3e} (tol {self.hess_tol:.0e}, "
                f"worst at index {self.worst_hess_index})"
            )
        return "\n".join(lines)


def _blocks(obj: Any, n: int, group: Any) -> np.ndarray:
    if obj.loss_blocks == "row":
        return np.arange(n + 1, dtype=np.int64)
    return query_structure(n, group=group).offsets


def _error(a: np.ndarray, b: np.ndarray, floor: float) -> tuple[float, int]:
    diff = np.abs(a - b).ravel()
    scale = max(float(np.max(np.abs(a))), float(np.max(np.abs(b))), floor)
    worst = int(np.argmax(diff))
    return float(diff[worst] / scale), worst


def check(obj: Any, y: Any, s: Any, group: Any = None, *, qid: Any = None, weight: Any = None,
          eps: float = 1e-6, hess_eps: float = 1e-4, grad_tol: float = 1e-5,
          hess_tol: float = 1e-3, hessian: bool = True) -> GradCheckReport:
    """Compare ``obj``'s gradient and Hessian with central differences of ``obj.loss``.

    Parameters
    ----------
    obj : gbrank objective
    y, s : array-like
        Labels and raw scores; ``s`` may be 2-D (n, K) for multiclass objectives.
    group, qid : array-like, optional
        Query structure as everywhere in gbrank; ``None`` is group-less.
    weight : array-like, optional
        Weights as the objective takes them.
    eps, hess_eps : float
        Steps for the first and second differences.
    grad_tol, hess_tol : float
        Thresholds for ``ok`` (SPEC: 1e-5 and 1e-3).
    hessian : bool
        Also check the diagonal Hessian.

    Returns
    -------
    GradCheckReport
    """
    for value, name in ((eps, "eps"), (hess_eps, "hess_eps"), (grad_tol, "grad_tol"),
                        (hess_tol, "hess_tol")):
        check_number(value, name, 0.0, low_open=True)
    hessian = check_bool(hessian, "hessian")
    y = as_float_array(y, "labels")
    s = as_float_array(s, "scores", allow_2d=True)
    if qid is not None:
        queries = query_structure(y.size, qid=qid, weight=weight)
        y, s = queries.apply(y), queries.apply(s)
        group = queries.sizes
        weight = queries.weights
    # Blocks are checked one at a time: defaults taken from the whole data must not
    # change with the block.
    obj = obj.bind_data_defaults(y)
    grad, hess = obj.exact_grad_hess(y, s, group, weight=weight)
    grad = np.asarray(grad, dtype=np.float64).reshape(s.shape)
    hess = np.asarray(hess, dtype=np.float64).reshape(s.shape)

    offsets = _blocks(obj, y.size, group)
    w = None if weight is None else as_float_array(weight, "weight")
    per_query_w = w is not None and obj.loss_blocks == "query" and w.size == offsets.size - 1
    fd_g = np.zeros_like(s)
    fd_h = np.zeros_like(s)
    loss_scale = 0.0
    for b in range(offsets.size - 1):
        lo, hi = int(offsets[b]), int(offsets[b + 1])
        yb, sb = y[lo:hi], s[lo:hi].copy()
        wb = None if w is None else (w[b:b + 1] if per_query_w else w[lo:hi])

        def loss(x: np.ndarray, yb=yb, sb=sb, wb=wb) -> float:
            return float(obj.loss(yb, x, None, weight=wb, at=sb))

        base = loss(sb)
        loss_scale = max(loss_scale, abs(base))
        for idx in np.ndindex(sb.shape):
            x = sb.copy()
            x[idx] = sb[idx] + eps
            up = loss(x)
            x[idx] = sb[idx] - eps
            down = loss(x)
            fd_g[(lo + idx[0],) + idx[1:]] = (up - down) / (2 * eps)
            if hessian:
                x[idx] = sb[idx] + hess_eps
                up = loss(x)
                x[idx] = sb[idx] - hess_eps
                down = loss(x)
                fd_h[(lo + idx[0],) + idx[1:]] = (up - 2 * base + down) / hess_eps**2

    # Rounding of a loss of size |L| limits what differences can resolve.
    unit = np.finfo(np.float64).eps * max(1.0, loss_scale)
    g_err, g_at = _error(grad, fd_g, 10 * unit / eps / grad_tol)
    h_err = h_at = None
    if hessian:
        h_err, h_at = _error(hess, fd_h, 10 * unit / hess_eps**2 / hess_tol)
    ok = g_err <= grad_tol and (h_err is None or h_err <= hess_tol)
    return GradCheckReport(
        ok=bool(ok), grad_error=g_err, hess_error=h_err, grad_tol=grad_tol, hess_tol=hess_tol,
        n=int(s.size), worst_grad_index=g_at, worst_hess_index=h_at, objective=repr(obj),
    )
