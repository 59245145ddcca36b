"""The shared trial budget: any number of processes on one storage run a study's trials
until exactly its total of them are complete or pruned (the admission lock, surplus
trials, heartbeats of running trials)."""

from __future__ import annotations

import contextlib
import logging
import os
import socket
import time
import warnings
from collections.abc import Callable, Sequence
from typing import Any

from gbrank._deps import require
from gbrank.tuning._storage import study_lock

__all__ = ["ADMITTED", "SURPLUS", "WORKER", "run_budget", "state_counts"]


# Trial user attributes of the shared budget (see run_budget).
ADMITTED = "gbrank_admitted"  # the trial's own number: it holds a slot of the total
SURPLUS = "gbrank_surplus"  # asked when the total was already taken; failed unrun
WORKER = "gbrank_worker"  # "<host>:<pid>" of the process that ran the trial


def _is_surplus(t: Any) -> bool:
    return bool(t.user_attrs.get(SURPLUS))


def state_counts(study: Any) -> tuple[int, int, int]:
    """Trials complete, pruned and failed (surplus trials, failed unrun, not counted)."""
    optuna = require("optuna")
    S = optuna.trial.TrialState
    c = [t.state for t in study.get_trials(deepcopy=False)
         if not (t.state == S.FAIL and _is_surplus(t))]
    return c.count(S.COMPLETE), c.count(S.PRUNED), c.count(S.FAIL)


class _BudgetFull(Exception):
    """The trial was asked after the study's total had been taken by other workers."""


class _FailedElsewhere(Exception):
    """This process's trial was failed by another worker (its heartbeat went stale)."""


class _QuietSurplus(logging.Filter):
    """Drop Optuna's "Trial n failed" warnings (with traceback) for surplus trials."""

    def __init__(self) -> None:
        super().__init__()
        self.numbers: set[int] = set()

    def filter(self, record: logging.LogRecord) -> bool:
        msg = record.getMessage()
        return not any(msg.startswith(f"Trial {n} failed") for n in self.numbers)


def _warn_failed_elsewhere(number: int, storage: Any) -> None:
    grace = getattr(storage, "grace_period", None)
    warnings.warn(
        f"trial {number} was failed by another worker while this process still ran it: "
        f"its heartbeat was older than the grace period"
        f"{f' of {grace} s' if grace else ''} (a stalled or overloaded process). Its "
        "result is dropped and its parameters are retried; if this recurs, raise "
        "--heartbeat (or grace)", RuntimeWarning, stacklevel=3)


def run_budget(study: Any, objective: Callable[[Any], float], total: int, *,
               storage: Any = None, timeout: float | None = None,
               max_trials: int | None = None, catch: Sequence[type[Exception]] = (),
               callbacks: Sequence[Callable[[Any, Any], None]] = (),
               poll: float = 0.5) -> int:
    """Run ``objective`` trials of ``study`` until ``total`` of them are COMPLETE or
    PRUNED, counting every process that works on the same study; returns the number of
    trials this process ran.

    The budget scheme (race-free with any number of processes on one storage):

    * A slot of the total is *claimed* by a COMPLETE or PRUNED trial, or by a RUNNING
      trial marked admitted (user attribute ``gbrank_admitted`` = its own number; a
      retried copy of a killed trial inherits the attribute with the old number, so it
      does not count until it is admitted itself).
    * A new trial is asked as usual (Optuna creates it, or pops a WAITING retry of a
      killed trial) and, before any parameter is drawn, the worker takes the study's
      lock (:func:`~gbrank.tuning._storage.study_lock`), counts the claimed slots and,
      if one is free, records the trial's heartbeat and marks it admitted, then
      releases the lock. The count and the mark are one atomic step, so no two trials
      take the last slot. A trial that finds no free slot (two workers asked at once)
      is failed unrun with ``gbrank_surplus``; it has no parameters, the sampler skips
      it and the report does not count it as a failure. After each trial the worker
      stops if every slot is claimed, so surplus trials are rare.
    * A slot comes back when its trial FAILS: the worker that caught the error asks
      again; a killed worker's trial has a heartbeat (recorded at admission), so after
      the grace period any worker fails it and Optuna re-queues its parameters.
      Therefore a worker with nothing to start does not leave while admitted trials
      still run elsewhere: it polls (failing stale trials) and takes a freed slot.
      Trials killed before admission claim nothing and are simply never counted.
    * A worker that was alive but stalled past the grace period (an overloaded machine, a
      suspended process) finds its trial failed by another worker and retried there;
      Optuna cannot record the result of a finished trial, so the worker warns, drops
      the result and carries on.

    ``timeout`` (seconds) stops starting new trials; the wait for other workers' running
    trials continues past it (each ends, or is failed after the grace period).
    ``max_trials`` caps the trials this process starts (a run where every trial fails
    must end).
    """
    optuna = require("optuna")
    S = optuna.trial.TrialState
    host = f"{socket.gethostname()}:{os.getpid()}"
    deadline = None if timeout is None else time.monotonic() + timeout
    started = 0
    quiet = _QuietSurplus()
    heartbeats = bool(getattr(storage, "get_heartbeat_interval", lambda: None)())

    def fail_stale() -> None:
        if heartbeats:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore", optuna.exceptions.ExperimentalWarning)
                optuna.storages.fail_stale_trials(study)

    def trials() -> list[Any]:
        return study.get_trials(deepcopy=False)

    def admitted_running(t: Any) -> bool:
        return t.state == S.RUNNING and t.user_attrs.get(ADMITTED) == t.number

    def claimed() -> int:
        return sum(t.state in (S.COMPLETE, S.PRUNED) or admitted_running(t)
                   for t in trials())

    # The trial this process runs, and whether another worker finished it meanwhile.
    running: dict[str, Any] = {"trial": None, "elsewhere": False}

    def failed_elsewhere(trial: Any) -> bool:
        tid = getattr(trial, "_trial_id", None)
        return (heartbeats and tid is not None
                and storage.get_trial(tid).state != S.RUNNING)

    def gated(trial: Any) -> float:
        running.update(trial=trial, elsewhere=False)
        try:
            return admitted(trial)
        finally:
            running["elsewhere"] = failed_elsewhere(trial)

    def admitted(trial: Any) -> float:
        nonlocal started
        with (study_lock(storage, study.study_name) if storage is not None
              else contextlib.nullcontext()):
            if failed_elsewhere(trial):
                raise _FailedElsewhere
            free = claimed() < total  # this trial is RUNNING but not admitted yet
            if free:
                tid = getattr(trial, "_trial_id", None)
                if heartbeats and tid is not None:
                    storage.record_heartbeat(tid)
                trial.set_user_attr(WORKER, host)
                trial.set_user_attr(ADMITTED, trial.number)
        if not free:
            quiet.numbers.add(trial.number)
            trial.set_user_attr(SURPLUS, True)
            study.stop()
            raise _BudgetFull(f"the total of {total} trials is taken")
        started += 1
        return objective(trial)

    def stop_when_full(study_: Any, trial_: Any) -> None:
        if claimed() >= total:
            study_.stop()

    log = logging.getLogger("optuna.study._optimize")
    log.addFilter(quiet)
    try:
        fail_stale()
        while True:
            left = None if deadline is None else deadline - time.monotonic()
            can_start = ((left is None or left > 0)
                         and (max_trials is None or started < max_trials))
            if can_start and claimed() < total:
                running.update(trial=None, elsewhere=False)  # this call's trials only
                try:
                    study.optimize(
                        gated, n_trials=None if max_trials is None else max_trials - started,
                        timeout=left, catch=(*catch, _BudgetFull, _FailedElsewhere),
                        gc_after_trial=False, callbacks=[stop_when_full, *callbacks])
                except Exception:
                    # Optuna refuses to record a trial another worker has finished (a
                    # ValueError or, in some versions, an AssertionError): carry on.
                    if not running["elsewhere"]:
                        raise
                    _warn_failed_elsewhere(running["trial"].number, storage)
                continue
            # Nothing to start here; stay while admitted trials run elsewhere, since
            # one may die and free its slot (see above).
            if not heartbeats or not any(admitted_running(t) for t in trials()):
                break
            time.sleep(poll)
            fail_stale()
    finally:
        log.removeFilter(quiet)
    return started
