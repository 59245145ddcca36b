"""The gradient gate: an objective is tuned only if ``gbrank.gradcheck`` passes, on random
inputs and on a sample of the user's own labels."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from gbrank.tuning._tasks import Task

__all__ = ["GateResult", "gate"]


@dataclass(frozen=True)
class GateResult:
    ok: bool
    message: str


def _random_inputs(kind: str, rng: np.random.Generator, num_class: int = 1):
    if kind == "multiclass":
        y = np.arange(200, dtype=np.float64) % num_class
        return y, 2.0 * rng.standard_normal((200, num_class)), None
    if kind == "ranking":
        y = rng.integers(0, 5, 36).astype(np.float64)
        return y, rng.standard_normal(36), np.array([12, 12, 12])
    y = (rng.random(200) < 0.2).astype(np.float64)
    y[:2] = (0.0, 1.0)
    return y, 2.0 * rng.standard_normal(200), None


def _data_sample(task: Task, rng: np.random.Generator, max_rows: int):
    """Labels of the user's data: whole small queries (grouped), a random subset of rows
    (group-less ranking: one query, kept small since the loss is O(n²) per query), or a
    stratified random subset (binary; multiclass: up to 40 rows of each class, with
    K random scores per row). Scores are random: the gate checks the calculus,
    not a model."""
    y = task.y
    if task.grouped:
        offs = np.concatenate(([0], np.cumsum(task.group)))
        rows, sizes = [], []
        for q in rng.permutation(task.group.size):
            if task.group[q] > 100:
                continue
            rows.append(np.arange(offs[q], offs[q + 1]))
            sizes.append(task.group[q])
            if sum(sizes) >= max_rows:
                break
        if not rows:  # every query is large: one random slice of the first query
            idx = np.sort(rng.choice(task.group[0], size=min(100, task.group[0]), replace=False))
            return y[idx], rng.standard_normal(idx.size), np.array([idx.size])
        idx = np.concatenate(rows)
        return y[idx], rng.standard_normal(idx.size), np.asarray(sizes)
    if task.kind == "binary":
        pos, neg = np.flatnonzero(y == 1), np.flatnonzero(y != 1)
        idx = np.sort(np.concatenate([rng.choice(pos, min(pos.size, 20), replace=False),
                                      rng.choice(neg, min(neg.size, 180), replace=False)]))
        return y[idx], 2.0 * rng.standard_normal(idx.size), None
    if task.kind == "multiclass":  # up to 40 rows of each class
        idx = np.sort(np.concatenate([
            rng.choice(rows, min(rows.size, 40), replace=False)
            for rows in (np.flatnonzero(y == c) for c in np.unique(y))]))
        return y[idx], 2.0 * rng.standard_normal((idx.size, task.num_class)), None
    idx = np.sort(rng.choice(y.size, size=min(y.size, 120), replace=False))
    return y[idx], rng.standard_normal(idx.size), None


def gate(obj: Any, task: Task, name: str = "", *, seed: int = 0,
         max_rows: int = 300) -> GateResult:
    """Run ``gbrank.gradcheck.check`` on ``obj`` twice (random inputs, a sample of
    ``task``'s labels); the message names the first failure in one readable line."""
    from gbrank.gradcheck import check

    name = name or type(obj).__name__
    rng = np.random.default_rng(seed)
    for where, (y, s, g) in (("random inputs", _random_inputs(task.kind, rng, task.num_class)),
                             (f"a sample of the {task.name} data",
                              _data_sample(task, rng, max_rows))):
        try:
            rep = check(obj, y, s, g)
        except Exception as exc:  # an objective that cannot even be evaluated
            return GateResult(False, f"{name}: rejected by the gradient gate on {where}: "
                                     f"{type(exc).__name__}: {exc}")
        if not rep.ok:
            parts = []
            if rep.grad_error > rep.grad_tol:
                parts.append(f"gradient max rel. error {rep.grad_error:.2e} "
                             f"> tol {rep.grad_tol:.0e}")
            if rep.hess_error is not None and rep.hess_error > rep.hess_tol:
                parts.append(f"Hessian max rel. error {rep.hess_error:.2e} "
                             f"> tol {rep.hess_tol:.0e}")
            return GateResult(False, f"{name}: rejected by the gradient gate on {where} "
                                     f"({rep.n} scores): " + "; ".join(parts)
                                     + " — not tuned")
    return GateResult(True, f"{name}: gradient gate passed")
