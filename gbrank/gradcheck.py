"""Finite-difference check of an objective's gradient and diagonal Hessian.

For each score ``s_i`` the loss is perturbed by central differences,

    g_i ≈ (L(s + h e_i) − L(s − h e_i)) / 2h,
    H_ii ≈ (L(s + h e_i) − 2 L(s) + L(s − h e_i)) / h²,

and compared with the objective's
:meth:`~gbrank.objectives.Objective.exact_grad_hess` (the true Hessian, not the floored
or constant one a booster gets). Score-dependent pair weights
(LambdaRank's ΔZ) are frozen at the unperturbed scores through ``loss(..., at=s)``,
which is LambdaRank's "local loss" (``docs/contract.md``). The loss is evaluated on
the block that holds ``i`` only (its query, or its row for per-row objectives), so
rounding in a large total loss does not swamp the differences.

A plain function ``fn(y, s) -> (grad, hess)`` is checked against the loss it
differentiates, passed as ``loss=``; that loss is one block (all rows) unless it is
declared a sum over rows (``per_row=True``).
"""

from __future__ import annotations

import sys
import time
from dataclasses import dataclass
from typing import Any

import numpy as np

from gbrank._queries import query_structure
from gbrank._validation import (
    as_float_array,
    call_function_objective,
    check_bool,
    check_integer,
    check_number,
)
from gbrank.objectives import Objective

__all__ = ["GradCheckReport", "check"]


@dataclass(frozen=True)
class GradCheckReport:
    """Outcome of :func:`check`.

    Errors are ``max |analytic − numeric| / max(max |analytic|, max |numeric|, floor)``
    over all scores; ``floor`` is the smallest value central differences resolve at
    the loss's scale, below which values are compared absolutely.

    Attributes
    ----------
    ok : bool
        Both errors within their tolerances (the Hessian's when it was checked).
    grad_error, hess_error : float
        The largest relative errors; ``hess_error`` is ``None`` when the Hessian was
        not checked.
    grad_tol, hess_tol : float
        The tolerances ``ok`` used.
    n : int
        Number of scores checked.
    n_total : int, optional
        Number of scores given, when ``rows=`` checked a sample of them (else ``None``).
    worst_grad_index, worst_hess_index : int
        Flat index of the largest error (``None`` for an unchecked Hessian).
    objective : str
        What was checked (the objective's repr, or the function's name).
    grad_values, hess_values : tuple of float, optional
        ``(analytic, numeric)`` at the worst index.
    grad_ratio, hess_ratio : float, optional
        The median of analytic / numeric over the scores where both are resolved
        (``nan``: none): −1 points to a sign error, 2 or 0.5 to a factor of 2, a value
        near 1 to an error at a few scores only.
    unresolved : str, optional
        Set when every gradient or Hessian value lies below tolerance × floor (a large
        loss, e.g. squared errors of prices in dollars, or saturated scores): an error
        as large as the values passes there, so ``ok`` does not vouch for them (a
        Hessian off by 2 passed); it names what to check instead. ``None`` otherwise.

    Examples
    --------
    >>> from gbrank.gradcheck import check
    >>> from gbrank.objectives import RankNet
    >>> report = check(RankNet(), [2, 0, 1, 0, 1], [0.3, -0.2, 0.1, 0.5, 0.0], group=[3, 2])
    >>> report.ok, report.n, report.grad_error < report.grad_tol
    (True, 5, True)
    >>> print(str(report).splitlines()[0][:31])  # then one line per error
    gradcheck OK: RankNet(sigma=1.0
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
    grad_values: tuple[float, float] | None = None
    hess_values: tuple[float, float] | None = None
    grad_ratio: float | None = None
    hess_ratio: float | None = None
    n_total: int | None = None
    unresolved: str | None = None

    def __str__(self) -> str:
        verdict = "OK" if self.ok else "FAILED"
        lines = [
            f"gradcheck {verdict}: {self.objective} on {self.n} scores"
            + ("" if self.n_total is None else
               f" (a random sample of rows; {self.n_total} scores given)"),
            f"  gradient  max rel. error {self.grad_error:.3e} (tol {self.grad_tol:.0e}, "
            f"worst at index {self.worst_grad_index})",
        ]
        if self.grad_error > self.grad_tol:
            lines.append(_where_wrong(self.grad_values, self.grad_ratio))
        if self.hess_error is None:
            lines.append("  Hessian   not checked")
        else:
            lines.append(
                f"  Hessian   max rel. error {self.hess_error:.3e} (tol {self.hess_tol:.0e}, "
                f"worst at index {self.worst_hess_index})"
            )
            if self.hess_error > self.hess_tol:
                lines.append(_where_wrong(self.hess_values, self.hess_ratio))
        if self.unresolved:
            lines.append(f"  not resolved: {self.unresolved}")
        return "\n".join(lines)


def _where_wrong(values: tuple[float, float] | None, ratio: float | None) -> str:
    """The failed check's values at its worst score, and what their typical ratio hints."""
    if values is None:
        return ""
    text = f"            there analytic {values[0]:.6g}, numeric {values[1]:.6g}"
    if ratio is not None and np.isfinite(ratio):
        text += f"; analytic/numeric {ratio:.3g} (median over the scores)"
        hint = next((h for r, h in ((-1.0, "a sign error"), (2.0, "a factor of 2"),
                                    (0.5, "a factor of 1/2"))
                     if abs(ratio - r) < 0.02 * abs(r)), None)
        if hint:
            text += f": {hint}?"
    return text


def _error(a: np.ndarray, b: np.ndarray, floor: float,
           among: np.ndarray | None = None) -> tuple[float, int]:
    """The largest relative error and where; ``among``: only those scores (those a
    second look confirmed, when it confirmed an error: the rest may be rounding)."""
    diff = np.abs(a - b).ravel()
    scale = max(float(np.max(np.abs(a))), float(np.max(np.abs(b))), floor)
    if among is not None:
        diff = np.where(among, diff, -1.0)
    worst = int(np.argmax(diff))
    return float(diff[worst] / scale), worst


def _ratio(a: np.ndarray, b: np.ndarray, floor: float) -> float:
    """Median of analytic / numeric where both are above ``floor`` (else ``nan``)."""
    a, b = a.ravel(), b.ravel()
    ok = (np.abs(a) > floor) & (np.abs(b) > floor)
    return float(np.median(a[ok] / b[ok])) if ok.any() else float("nan")


def _function_name(fn: Any) -> str:
    return getattr(fn, "__qualname__", None) or repr(fn)


def _objective_case(obj: Objective, y: np.ndarray, s: np.ndarray, group: Any,
                    weight: Any, position: Any = None, estimates: Any = None,
                    ) -> tuple[np.ndarray, np.ndarray, np.ndarray, Any]:
    """Analytic derivatives, block offsets and ``block_loss(b) -> f(x)`` of an objective
    (``position``: the rows' display positions, for an objective with position bias;
    ``estimates``: its frozen estimates)."""
    # Blocks are checked one at a time: defaults taken from the whole data must not
    # change with the block.
    obj = obj.bind_data_defaults(y)
    at_rows = {} if position is None else {"position": position}
    if estimates is not None:
        at_rows["estimates"] = estimates
    grad, hess = obj.exact_grad_hess(y, s, group, weight=weight, **at_rows)
    if obj.loss_blocks == "row":
        offsets = np.arange(y.size + 1, dtype=np.int64)
    else:
        offsets = query_structure(y.size, group=group).offsets
    w = None if weight is None else as_float_array(weight, "weight")
    per_query_w = w is not None and obj.loss_blocks == "query" and w.size == offsets.size - 1

    def block_loss(b: int) -> Any:
        lo, hi = int(offsets[b]), int(offsets[b + 1])
        yb, sb = y[lo:hi], s[lo:hi].copy()
        wb = None if w is None else (w[b:b + 1] if per_query_w else w[lo:hi])
        kw = {} if position is None else {"position": position[lo:hi]}
        if estimates is not None:
            kw["estimates"] = estimates
        return lambda x: obj.loss(yb, x, None, weight=wb, at=sb, **kw)

    return grad, hess, offsets, block_loss


def _function_case(fn: Any, y: np.ndarray, s: np.ndarray, group: Any, loss: Any,
                   per_row: bool) -> tuple[np.ndarray, np.ndarray, np.ndarray, Any]:
    """The same for a plain function ``fn`` and its ``loss``."""
    grad, hess = call_function_objective(fn, y, s, group, name="the checked function")
    if per_row:
        offsets = np.arange(y.size + 1, dtype=np.int64)
    else:
        offsets = np.array([0, y.size], dtype=np.int64)

    def block_loss(b: int) -> Any:
        lo, hi = int(offsets[b]), int(offsets[b + 1])
        yb = y[lo:hi]
        if group is None:
            return lambda x: loss(yb, x)
        return lambda x: loss(yb, x, group)

    return grad, hess, offsets, block_loss


def _loss_value(f: Any, x: np.ndarray) -> float:
    value = f(x)
    if np.ndim(value) != 0:
        raise ValueError(f"loss must return one number (the total loss), got an array of "
                         f"shape {np.shape(value)}; return its sum")
    value = float(value)
    if not np.isfinite(value):
        raise ValueError(f"loss returned {value} at finite scores")
    return value


def check(obj: Any, y: Any, s: Any, group: Any = None, *, qid: Any = None, weight: Any = None,
          loss: Any = None, per_row: bool = False, eps: float = 1e-6, hess_eps: float = 1e-4,
          grad_tol: float = 1e-5, hess_tol: float = 1e-3,
          hessian: bool = True, position: Any = None, estimates: Any = None,
          rows: int | None = None, seed: int = 0, progress: bool | None = None,
          ) -> GradCheckReport:
    r"""Compare a gradient and diagonal Hessian with central differences of their loss.

    For each score :math:`s_i`, with the loss :math:`L` evaluated on the block that
    holds :math:`i`,

    .. math::
        g_i \approx \frac{L(s + h e_i) - L(s - h e_i)}{2h}, \qquad
        H_{ii} \approx \frac{L(s + h' e_i) - 2 L(s) + L(s - h' e_i)}{h'^2},

    and the analytic values are compared with these (relative errors, see
    :class:`GradCheckReport`).

    Parameters
    ----------
    obj : gbrank objective or callable
        A gbrank objective (its :meth:`~gbrank.objectives.Objective.exact_grad_hess`
        against its own ``loss``), or a plain function ``fn(y, s) -> (grad, hess)``
        returning arrays of the shape of ``s`` — called ``fn(y, s, group)`` when a
        query structure is given. A LightGBM-style ``fobj(preds, train_set)`` is
        refused with the wrapper to use.
    y, s : array-like
        Labels and raw scores; ``s`` may be 2-D (n, K) for multiclass objectives.
    group, qid : array-like, optional
        Query structure as everywhere in gbrank; ``None`` is group-less. With ``qid``
        rows are put in query order first (reported indices are in that order) and a
        plain function receives the query sizes as ``group``.
    weight : array-like, optional
        Weights as a gbrank objective takes them. Not accepted with a plain function,
        which applies its own weights.
    loss : callable, optional
        Required with a plain function, not accepted with a gbrank objective: the loss
        ``loss(y, s) -> float`` (``loss(y, s, group)`` with a query structure) whose
        gradient and diagonal Hessian ``fn`` claims to return.
    per_row : bool, default False
        With a plain function: ``loss`` is a sum of one term per row, so it is
        evaluated one row at a time (``loss(y[i:i+1], s[i:i+1])``: O(n) work instead
        of O(n²), and the rounding of a large total does not blur the differences).
        Not with a query structure (a per-row loss has none).
        ``False`` evaluates ``loss`` on all rows: right for any loss.
    eps, hess_eps : float
        Steps for the first and second differences.
    grad_tol, hess_tol : float
        Thresholds for ``ok`` (the contract's 1e-5 and 1e-3).
    hessian : bool
        Also check the diagonal Hessian.
    position : array-like, optional
        The rows' display positions, for an objective with ``position_bias``; its
        estimates are frozen, as in every call outside boosting.
    estimates : PositionBias, optional
        The frozen estimates of such an objective (a training's ``position_bias_``);
        ``None``: the start values.
    rows : int, optional
        Check the scores of this many rows, drawn at random (``seed``), instead of
        all: each score costs four loss evaluations of its block, so a query of
        10,000 rows costs 40,000 evaluations of that query. The differences are
        still taken on whole blocks; the report's ``n_total`` says a sample was checked.
    seed : int, default 0
        Seed of the sample of ``rows``.
    progress : bool, optional
        Print progress to stderr (every 10 s, with the time left); ``None``: only once
        the check has run for 5 s.

    Returns
    -------
    GradCheckReport
        ``ok``, the largest relative errors and the (flat) indices where they occur.

    Notes
    -----
    Use it for every new objective, gbrank's or your own, before training with it: a
    wrong sign or a missing factor trains a plausible but wrong model. A plain
    function's Hessian is compared as returned; a gbrank objective's true Hessian is
    compared, not the floored one the booster gets.

    Examples
    --------
    >>> import numpy as np
    >>> from gbrank.gradcheck import check
    >>> def logistic(y, s):
    ...     p = 1.0 / (1.0 + np.exp(-s))
    ...     return p - y, p * (1.0 - p)
    >>> def logistic_loss(y, s):
    ...     return float(np.sum(np.logaddexp(0.0, s) - y * s))
    >>> y = np.array([0.0, 1.0, 1.0, 0.0])
    >>> s = np.array([-1.0, 0.5, 2.0, 0.3])
    >>> check(logistic, y, s, loss=logistic_loss, per_row=True).ok
    True
    >>> def wrong_sign(y, s):
    ...     grad, hess = logistic(y, s)
    ...     return -grad, hess
    >>> report = check(wrong_sign, y, s, loss=logistic_loss, per_row=True)
    >>> report.ok, report.worst_grad_index
    (False, 3)
    """
    for value, name in ((eps, "eps"), (hess_eps, "hess_eps"), (grad_tol, "grad_tol"),
                        (hess_tol, "hess_tol")):
        check_number(value, name, 0.0, low_open=True)
    hessian = check_bool(hessian, "hessian")
    per_row = check_bool(per_row, "per_row")
    is_objective = isinstance(obj, Objective)
    if is_objective:
        if loss is not None:
            raise ValueError(f"loss= is for plain functions; {obj!r} is a gbrank objective "
                             "and is checked against its own loss: drop loss=")
        if per_row:
            raise ValueError(f"per_row= is for plain functions; {obj!r} is a gbrank "
                             "objective and knows its blocks: drop per_row=")
    elif callable(obj):
        if loss is None:
            raise ValueError(
                f"check({_function_name(obj)}, y, s) needs the loss whose gradient the "
                "function returns: pass loss=f with f(y, s) -> float (the total loss; "
                "f(y, s, group) with a query structure), and per_row=True if it is a sum "
                "of one term per row")
        if not callable(loss):
            raise ValueError(f"loss must be a function loss(y, s) -> float, got {loss!r}")
        if weight is not None:
            raise ValueError("weight= is for gbrank objectives; a plain function applies "
                             "its own weights (bind them in fn and loss, e.g. a closure)")
        if per_row and (group is not None or qid is not None):
            raise ValueError("per_row=True declares a loss that is a sum over rows, which "
                             "has no query structure: drop group/qid or per_row")
    else:
        raise ValueError(f"obj must be a gbrank objective or a function "
                         f"fn(y, s) -> (grad, hess), got {obj!r}")
    y = as_float_array(y, "labels")
    s = as_float_array(s, "scores", allow_2d=True)
    if position is not None or estimates is not None:
        if not is_objective:
            raise ValueError("position= and estimates= are for gbrank objectives with "
                             "position_bias; a plain function binds its own (a closure)")
        position = np.asarray(position)
    if qid is not None:
        queries = query_structure(y.size, qid=qid, weight=weight)
        y, s = queries.apply(y), queries.apply(s)
        if position is not None:
            position = queries.apply(position)
        group = queries.sizes
        weight = queries.weights
    elif group is not None and not is_objective:
        group = query_structure(y.size, group=group).sizes
    if is_objective:
        grad, hess, offsets, block_loss = _objective_case(obj, y, s, group, weight, position,
                                                          estimates)
        name = repr(obj)
    else:
        if s.shape[0] != y.size:
            raise ValueError(f"labels have {y.size} rows but scores have {s.shape[0]}")
        grad, hess, offsets, block_loss = _function_case(obj, y, s, group, loss, per_row)
        name = _function_name(obj)
    grad = np.asarray(grad, dtype=np.float64).reshape(s.shape)
    hess = np.asarray(hess, dtype=np.float64).reshape(s.shape)

    n_rows = s.shape[0]
    chosen = np.ones(n_rows, dtype=bool)
    if rows is not None:
        rows = check_integer(rows, "rows", 1)
        if rows < n_rows:
            chosen[:] = False
            chosen[np.random.default_rng(seed).choice(n_rows, rows, replace=False)] = True
    per_row_scores = int(np.prod(s.shape[1:], dtype=np.int64))
    meter = _CheckProgress(int(chosen.sum()) * per_row_scores, progress, rows is None)
    fd_g = np.zeros_like(s)
    fd_h = np.zeros_like(s)
    loss_scale = 0.0
    for b in range(offsets.size - 1):
        lo, hi = int(offsets[b]), int(offsets[b + 1])
        if not chosen[lo:hi].any():
            continue
        sb = s[lo:hi].copy()
        f = block_loss(b)
        base = _loss_value(f, sb)
        loss_scale = max(loss_scale, abs(base))
        for idx in np.ndindex(sb.shape):
            if not chosen[lo + idx[0]]:
                continue
            meter.step()
            x = sb.copy()
            x[idx] = sb[idx] + eps
            up = _loss_value(f, x)
            x[idx] = sb[idx] - eps
            down = _loss_value(f, x)
            fd_g[(lo + idx[0],) + idx[1:]] = (up - down) / (2 * eps)
            if hessian:
                x[idx] = sb[idx] + hess_eps
                up = _loss_value(f, x)
                x[idx] = sb[idx] - hess_eps
                down = _loss_value(f, x)
                fd_h[(lo + idx[0],) + idx[1:]] = (up - 2 * base + down) / hess_eps**2

    meter.done()
    # Only the checked scores are compared; indices are flat indices of all scores.
    mask = np.broadcast_to(chosen.reshape((n_rows,) + (1,) * (s.ndim - 1)), s.shape).ravel()
    flat = np.flatnonzero(mask)
    grad, fd_g, hess, fd_h = (a.ravel()[flat] for a in (grad, fd_g, hess, fd_h))
    # Rounding of a loss of size |L| limits what differences can resolve.
    unit = np.finfo(np.float64).eps * max(1.0, loss_scale)
    g_floor = 10 * unit / eps / grad_tol
    settle = _Settler(s, offsets, block_loss, flat)
    g_seen = settle(grad, fd_g, eps, g_floor, grad_tol, second=False)
    g_err, g_at = _error(grad, fd_g, g_floor, g_seen)
    h_err = h_at = h_vals = h_ratio = None
    if hessian:
        h_floor = 10 * unit / hess_eps**2 / hess_tol
        h_seen = settle(hess, fd_h, hess_eps, h_floor, hess_tol, second=True)
        h_err, h_at = _error(hess, fd_h, h_floor, h_seen)
        h_vals = (float(hess[h_at]), float(fd_h[h_at]))
        h_ratio = _ratio(hess, fd_h, h_floor)
        h_at = int(flat[h_at])
    ok = g_err <= grad_tol and (h_err is None or h_err <= hess_tol)
    # Said, not silent: where every value is below tolerance × floor, an error as large
    # as the values themselves stays within the tolerance ("ok" vouches for nothing).
    parts = [("gradient", grad, g_floor, grad_tol)]
    if hessian:
        parts.append(("Hessian", hess, h_floor, hess_tol))
    unresolved = [what for what, a, floor, tol in parts
                  if a.size and 0 < float(np.max(np.abs(a))) < tol * floor]
    return GradCheckReport(
        ok=bool(ok), grad_error=g_err, hess_error=h_err, grad_tol=grad_tol, hess_tol=hess_tol,
        n=int(flat.size), worst_grad_index=int(flat[g_at]), worst_hess_index=h_at,
        objective=name, grad_values=(float(grad[g_at]), float(fd_g[g_at])),
        hess_values=h_vals, grad_ratio=_ratio(grad, fd_g, g_floor), hess_ratio=h_ratio,
        n_total=None if flat.size == s.size else int(s.size),
        unresolved=(f"every {' and '.join(unresolved)} value is below what the rounding "
                    f"of a loss of {loss_scale:.3g} lets the differences resolve (an error "
                    "as large as the values would pass): check at scores where they are "
                    "larger, rescale a large loss's labels and scores (thousands, not "
                    "units), or check blocks of fewer rows (per_row=True for a sum over "
                    "rows)" if unresolved else None),
    )


_MORE_LOOKS = 64


class _Settler:
    """Second looks at the scores whose difference disagrees with the analytic value.

    The rounding of a loss summed over many terms (one query of thousands of rows) can
    exceed what the floor allows for, and blur a correct Hessian's second difference.
    For such a score (one within a quarter of the tolerance too) the difference is taken
    again at 1, 4, 16, 64 and 256 times the step, and the smallest step kept of the three
    neighbouring steps that agree best (rounding falls and truncation error grows with
    the step) — a choice that never looks at the analytic value. The worst scores are
    looked at first, until none disagrees, or one still does (an error in the
    derivative) and a few more looks have made the report's worst score a confirmed
    one."""

    def __init__(self, s: np.ndarray, offsets: np.ndarray, block_loss: Any,
                 flat: np.ndarray) -> None:
        self.s, self.offsets, self.block_loss, self.flat = s, offsets, block_loss, flat

    def __call__(self, analytic: np.ndarray, numeric: np.ndarray, step: float,
                 floor: float, tol: float, *, second: bool) -> np.ndarray | None:
        """Second looks, written into ``numeric``; the scores looked at again when one
        of them confirmed an error (the report's worst is among them), else None."""
        seen = np.zeros(numeric.size, dtype=bool)
        left = -1  # looks left once a disagreement is confirmed
        while left != 0:
            diff = np.abs(analytic - numeric)
            scale = max(float(np.max(np.abs(analytic))), float(np.max(np.abs(numeric))),
                        floor)
            diff[seen] = -1.0
            j = int(np.argmax(diff))
            if diff[j] <= 0.25 * tol * scale:  # near the tolerance too: looked at again
                break
            seen[j] = True
            numeric[j] = self._plateau(int(self.flat[j]), step, second)
            left -= 1
            if left < 0 and abs(analytic[j] - numeric[j]) > tol * scale:
                # Not rounding: an error in the derivative. A few more looks, so that
                # the report's worst score is a confirmed one, not rounding elsewhere.
                left = _MORE_LOOKS
        return seen if left >= 0 else None

    def _plateau(self, at: int, step: float, second: bool) -> float:
        idx = np.unravel_index(at, self.s.shape)
        b = int(np.searchsorted(self.offsets, idx[0], side="right")) - 1
        lo, hi = int(self.offsets[b]), int(self.offsets[b + 1])
        f = self.block_loss(b)
        sb = self.s[lo:hi].copy()
        at_block = (idx[0] - lo,) + tuple(idx[1:])
        base = _loss_value(f, sb) if second else 0.0
        values = []
        for h in (step, 4 * step, 16 * step, 64 * step, 256 * step):
            x = sb.copy()
            x[at_block] = sb[at_block] + h
            up = _loss_value(f, x)
            x[at_block] = sb[at_block] - h
            down = _loss_value(f, x)
            values.append((up - 2 * base + down) / h**2 if second else (up - down) / (2 * h))
        # The smallest step of the three neighbouring steps that agree best (a pair can
        # agree by chance where rounding dominates; three rarely do): there rounding is
        # small, and its truncation error is the least of the three.
        gaps = np.abs(np.diff(values))
        k = int(np.argmin(np.maximum(gaps[:-1], gaps[1:])))
        return values[k]


class _CheckProgress:
    """Progress of a long check on stderr: every 10 s, with the time left; by default
    only once the check has run for 5 s (a short check prints nothing)."""

    def __init__(self, total: int, show: bool | None, whole: bool) -> None:
        self.total, self.show, self.whole = total, show, whole
        self.count = 0
        self.start = self.last = time.monotonic()
        self.printed = False

    def step(self) -> None:
        self.count += 1
        # The clock at every score: one score of a big query costs seconds of loss
        # evaluations (a check every 16 scores printed nothing for minutes, probe 62).
        if self.show is False:
            return
        now = time.monotonic()
        wait = 5.0 if not self.printed and self.show is None else 10.0
        if now - self.last < wait:
            return
        self.last = now
        left = (now - self.start) / self.count * (self.total - self.count)
        hint = ("; rows=N checks a random sample of N rows" if self.whole and not
                self.printed else "")
        print(f"gradcheck: {self.count:,} of {self.total:,} scores, about {left:.0f} s "
              f"left{hint}", file=sys.stderr, flush=True)
        self.printed = True

    def done(self) -> None:
        if self.printed:
            print(f"gradcheck: {self.total:,} scores checked in "
                  f"{time.monotonic() - self.start:.0f} s", file=sys.stderr, flush=True)
