"""Study storage: any SQLAlchemy URL through Optuna's RDBStorage (SQLite by default,
PostgreSQL for many workers), with heartbeats so a killed run's trials are failed and
retried instead of staying RUNNING forever, and a per-study lock that lets many
processes share one trial budget exactly (see :func:`study_lock`)."""

from __future__ import annotations

import contextlib
import hashlib
import random
import re
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from gbrank.tuning._deps import require

__all__ = ["default_storage_url", "open_storage", "study_lock", "study_name"]


def default_storage_url(out_dir: str | Path) -> str:
    """``sqlite:///<out_dir>/studies.db`` (the directory is created)."""
    out = Path(out_dir).resolve()
    out.mkdir(parents=True, exist_ok=True)
    return f"sqlite:///{out / 'studies.db'}"


def _postgres_driver(url: str) -> str:
    """A plain ``postgresql://`` (or ``postgres://``) URL with the driver that is
    installed: SQLAlchemy 2.1 reads it as psycopg 3, while ``gbrank[postgres]`` installs
    psycopg2. An explicit ``postgresql+<driver>://`` is left alone."""
    scheme, sep, rest = url.partition("://")
    if scheme not in ("postgresql", "postgres"):
        return url
    import importlib.util

    if importlib.util.find_spec("psycopg") is None and importlib.util.find_spec("psycopg2"):
        return f"postgresql+psycopg2://{rest}"
    return f"postgresql://{rest}"


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

    url = _postgres_driver(url)
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
        for attempt in range(4):
            try:
                return st.RDBStorage(url, **kwargs)
            except Exception as exc:
                # Processes that open a fresh database at the same moment all create its
                # tables; on PostgreSQL the losers fail on the catalogue's unique index
                # ("already exists" / duplicate key). The tables exist then: try again.
                text = str(exc).lower()
                if attempt == 3 or not ("already exists" in text or "duplicate" in text):
                    raise
                time.sleep(0.2 + random.random())
    raise AssertionError("unreachable")


def study_name(task_name: str, fingerprint: str, booster: str, key: str) -> str:
    """``<data>-<hash of data>-<booster>-<objective>``: re-running on the same data
    resumes the same study."""
    safe = re.sub(r"[^A-Za-z0-9_.:@-]+", "_", task_name)
    return f"{safe}-{fingerprint}-{booster}-{key}"


def _key64(text: str) -> int:
    """A signed 64-bit integer from ``text`` (PostgreSQL's advisory-lock key)."""
    return int.from_bytes(hashlib.blake2b(text.encode(), digest_size=8).digest(), "big",
                          signed=True)


@contextlib.contextmanager
def study_lock(storage: Any, name: str) -> Iterator[None]:
    """Hold a lock shared by every process that works on study ``name`` in ``storage``.

    The tuner holds it for a few milliseconds while it decides whether a new trial
    still fits in the study's budget (count, then mark the trial admitted); the count
    and the mark must not interleave with another worker's, or both would take the last
    slot. The lock lives where the workers meet:

    * PostgreSQL: a session advisory lock (``pg_advisory_lock``) keyed by a hash of the
      study name, on its own connection; the server drops it if the process dies;
    * MySQL/MariaDB: ``GET_LOCK`` with the same key;
    * SQLite (one machine by nature): ``flock`` on ``<database>.lock`` beside the file.
      Not on the database file itself: closing any descriptor of a file drops a
      process's POSIX locks on it, SQLite's own included.

    Any other storage (Optuna's in-memory one, a journal file) gets no lock: it is not
    shared between processes by the tuner.
    """
    engine = getattr(storage, "engine", None)
    dialect = getattr(engine, "name", None)
    if dialect in ("postgresql", "mysql", "mariadb"):
        from sqlalchemy import text

        conn = engine.connect()
        try:
            if dialect == "postgresql":
                take, give = "SELECT pg_advisory_lock(:k)", "SELECT pg_advisory_unlock(:k)"
                key: Any = _key64(name)
            else:  # MySQL lock names are at most 64 characters
                take, give = "SELECT GET_LOCK(:k, -1)", "SELECT RELEASE_LOCK(:k)"
                key = "gbrank-" + hashlib.blake2b(name.encode(), digest_size=16).hexdigest()
            conn.execute(text(take), {"k": key})
            conn.commit()
            try:
                yield
            finally:
                conn.execute(text(give), {"k": key})
                conn.commit()
        finally:
            conn.close()
        return
    path = None
    if dialect == "sqlite":
        db = engine.url.database
        if db and db != ":memory:" and not db.startswith("file::memory:"):
            path = Path(db).resolve().with_name(Path(db).name + ".lock")
    try:
        import fcntl
    except ImportError:  # Windows: no flock; a single process needs no lock
        fcntl = None
    if path is None or fcntl is None:
        yield
        return
    with open(path, "a") as fh:
        fcntl.flock(fh.fileno(), fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(fh.fileno(), fcntl.LOCK_UN)
