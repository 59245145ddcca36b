"""Study storage: any SQLAlchemy URL through Optuna's RDBStorage (SQLite by default,
PostgreSQL for many workers), with heartbeats so a killed run's trials are failed and
retried instead of staying RUNNING forever."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

from gbrank.tuning._deps import require

__all__ = ["default_storage_url", "open_storage", "study_name"]


def default_storage_url(out_dir: str | Path) -> str:
    """``sqlite:///<out_dir>/studies.db`` (the directory is created)."""
    out = Path(out_dir).resolve()
    out.mkdir(parents=True, exist_ok=True)
    return f"sqlite:///{out / 'studies.db'}"


def open_storage(url: str, heartbeat_interval: int = 10, grace_period: int | None = None,
                 max_retry: int = 3) -> Any:
    """``optuna.storages.RDBStorage`` on ``url`` with a heartbeat every
    ``heartbeat_interval`` s; a RUNNING trial whose heartbeat is older than
    ``grace_period`` (default 3 × interval) is failed at the next trial start of any
    worker, and Optuna's retry callback (``RetryHeartbeatStaleTrialCallback``, or
    ``RetryFailedTrialCallback`` before Optuna 4.9) re-queues its parameters (at most
    ``max_retry`` times)."""
    optuna = require("optuna")
    if not isinstance(url, str) or "://" not in url:
        raise ValueError(f"storage={url!r} is invalid: expected an SQLAlchemy URL such as "
                         "sqlite:///studies.db or postgresql://user@host/db")
    import inspect
    import warnings

    engine_kwargs = {"connect_args": {"timeout": 60}} if url.startswith("sqlite") else {}
    kwargs = {"engine_kwargs": engine_kwargs, "heartbeat_interval": int(heartbeat_interval),
              "grace_period": int(grace_period or 3 * heartbeat_interval)}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", optuna.exceptions.ExperimentalWarning)
        st = optuna.storages
        if "heartbeat_stale_trial_callback" in inspect.signature(st.RDBStorage).parameters:
            kwargs["heartbeat_stale_trial_callback"] = st.RetryHeartbeatStaleTrialCallback(
                max_retry=max_retry)  # Optuna >= 4.9
        else:
            kwargs["failed_trial_callback"] = st.RetryFailedTrialCallback(max_retry=max_retry)
        return st.RDBStorage(url, **kwargs)


def study_name(task_name: str, fingerprint: str, booster: str, key: str) -> str:
    """``<data>-<hash of data>-<booster>-<objective>``: re-running on the same data
    resumes the same study."""
    safe = re.sub(r"[^A-Za-z0-9_.:@-]+", "_", task_name)
    return f"{safe}-{fingerprint}-{booster}-{key}"
