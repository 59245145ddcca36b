"""Study storage: any SQLAlchemy URL through Optuna's RDBStorage (SQLite by default,
PostgreSQL for many workers), with heartbeats so a killed run's trials are failed and
retried instead of staying RUNNING forever, and a per-study lock that lets many
processes share one trial budget exactly (see :func:`study_lock`). Many processes may
open one fresh storage at once: its tables are created once (see :func:`open_storage`)."""

from __future__ import annotations

import contextlib
import hashlib
import random
import re
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from gbrank._deps import require

__all__ = ["NO_STUDY", "default_storage_url", "open_storage", "study_lock", "study_name"]

#: Why a report finds no study it names (``--report-only`` with other settings than the
#: run that tuned it).
NO_STUDY = ("no study {} in the storage (a study's name carries the data, booster, "
            "search spaces, folds, seed, rounds and patience: give the settings of the run "
            "that tuned it, --folds, --seed, --max-rounds, --patience and --quick)")


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
    ``max_retry`` times).

    Any number of processes may open one storage at the same moment, a fresh one
    included: the first creates the tables while the others wait (see
    :func:`_schema_lock`), then each finds them complete."""
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
    st = optuna.storages
    quiet = optuna.exceptions.ExperimentalWarning
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", quiet)
        if "heartbeat_stale_trial_callback" in inspect.signature(st.RDBStorage).parameters:
            kwargs["heartbeat_stale_trial_callback"] = st.RetryHeartbeatStaleTrialCallback(
                max_retry=max_retry)  # Optuna >= 4.9
        else:
            kwargs["failed_trial_callback"] = st.RetryFailedTrialCallback(max_retry=max_retry)
    for attempt in range(4):
        try:
            # catch_warnings inside the lock: threads of one process then open one
            # after another too, and never restore each other's (process-wide) filters
            # while one still constructs.
            with _schema_lock(url), warnings.catch_warnings():
                warnings.simplefilter("ignore", quiet)
                return st.RDBStorage(url, **kwargs)
        except Exception as exc:
            # A process that does not take the schema lock (plain Optuna, an older
            # gbrank) may still create the tables beside us; on PostgreSQL the loser
            # fails on the catalogue's unique index ("already exists" / duplicate key).
            # The tables exist then: try again.
            text = str(exc).lower()
            if attempt == 3 or not ("already exists" in text or "duplicate" in text):
                raise
            time.sleep(0.2 + random.random())
    raise AssertionError("unreachable")


@contextlib.contextmanager
def _schema_lock(url: str) -> Iterator[None]:
    """Hold, while Optuna creates or checks the tables of ``url``, a lock that every
    :func:`open_storage` of the same database takes.

    Optuna's ``RDBStorage`` checks whether each table and the schema version row exist,
    then creates what is missing: two processes on a fresh database both see nothing
    and both create (SQLite: ``UNIQUE constraint failed: alembic_version.version_num``;
    PostgreSQL: "already exists" or a duplicate key). Under the lock the first creates,
    the rest find the schema complete.

    * SQLite: ``flock`` on ``<database>.open.lock``. Not ``study_lock``'s file: an
      open would then wait behind every trial admission, and a process that opened a
      storage while holding its study lock would wait for itself (``flock`` locks
      belong to open file descriptions, two opens of one file exclude each other).
    * PostgreSQL, MySQL/MariaDB: an advisory lock of the database, on a connection of
      its own, held by the server until released or the connection drops.
    """
    from sqlalchemy.engine import make_url

    u = make_url(url)
    dialect = u.get_backend_name()
    if dialect == "sqlite":
        with _file_lock(_beside(u.database, ".open.lock")):
            yield
        return
    if dialect not in _ADVISORY:
        yield
        return
    from sqlalchemy import create_engine
    from sqlalchemy.pool import NullPool

    engine = create_engine(u, poolclass=NullPool)
    try:
        with _advisory_lock(engine, "gbrank: create the tables"):
            yield
    finally:
        engine.dispose()


def study_name(task_name: str, fingerprint: str, booster: str, key: str,
               metric: str | None = None,
               budget: tuple[int, int, int, int] | None = None,
               held_out_cut: bool = False) -> str:
    """``<data>-<hash of data>-<booster>-s<space version>[-cv<K>s<seed>r<R>p<P>]-<objective>``:
    re-running on the same data with the same search spaces and budget resumes the same
    study; a new version of the spaces
    (:data:`~gbrank.tuning._booster_spaces.SPACE_VERSION`; CatBoost's:
    :data:`~gbrank.tuning._booster_spaces.CATBOOST_SPACE_VERSION`) or another ``budget`` — the
    CV folds and their seed, most rounds and patience every trial's score depends on —
    starts a new study beside the stored ones. A study judged on a ``metric`` other than its
    objective's own ends in ``-on-<metric>``: it never resumes a study judged on another
    metric. One judged on a binary threshold metric at a held-out cut
    (``held_out_cut``, :mod:`gbrank.tuning._cut`) ends in ``-xcut``: it never resumes
    one whose trials were judged at margin > 0."""
    from gbrank.tuning._booster_spaces import CATBOOST_SPACE_VERSION, SPACE_VERSION

    version = CATBOOST_SPACE_VERSION if booster == "catboost" else SPACE_VERSION
    safe = re.sub(r"[^A-Za-z0-9_.:@-]+", "_", task_name)
    tail = "" if metric is None else "-on-" + re.sub(r"[^A-Za-z0-9_.:@-]+", "_", metric)
    runs = "" if budget is None else "-cv{}s{}r{}p{}".format(*budget)
    cut = "-xcut" if held_out_cut else ""
    return f"{safe}-{fingerprint}-{booster}-s{version}{runs}-{key}{tail}{cut}"


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
    if dialect in _ADVISORY:
        with _advisory_lock(engine, name):
            yield
        return
    path = _beside(engine.url.database, ".lock") if dialect == "sqlite" else None
    with _file_lock(path):
        yield


# SQLAlchemy dialects with server-side named locks (see _advisory_lock).
_ADVISORY = ("postgresql", "mysql", "mariadb")


@contextlib.contextmanager
def _advisory_lock(engine: Any, name: str) -> Iterator[None]:
    """A server-side lock named ``name`` on a connection of ``engine``'s own."""
    from sqlalchemy import text

    conn = engine.connect()
    try:
        if engine.name == "postgresql":
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


def _beside(database: str | None, suffix: str) -> Path | None:
    """``<database><suffix>`` beside an SQLite database file; ``None`` for an in-memory
    database, and when the file's folder does not exist (SQLite then fails to open the
    database with its own message)."""
    if not database or database == ":memory:" or database.startswith("file::memory:"):
        return None
    db = Path(database).resolve()
    return db.with_name(db.name + suffix) if db.parent.is_dir() else None


@contextlib.contextmanager
def _file_lock(path: Path | None) -> Iterator[None]:
    """An exclusive ``flock`` on ``path`` (created if missing); nothing for ``None`` or
    where there is no ``flock`` (Windows: one process needs no lock)."""
    try:
        import fcntl
    except ImportError:
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
