"""Opening one fresh study storage from many processes at once
(``gbrank.tuning._storage.open_storage``): the schema is created once, every opener
gets a working storage."""

from __future__ import annotations

import os
import subprocess
import sys
import uuid
from pathlib import Path

import pytest

optuna = pytest.importorskip("optuna")

ROOT = Path(__file__).resolve().parents[2]

# One process: opens ``rounds`` fresh databases, each at the same instant as the other
# processes (a file barrier per round), and prints one line per failed open.
_OPENER = r"""
import os, sys, time
from pathlib import Path

from gbrank.tuning._storage import open_storage

base, me, n, rounds, url = Path(sys.argv[1]), sys.argv[2], int(sys.argv[3]), \
    int(sys.argv[4]), sys.argv[5]
for r in range(rounds):
    ready = base / f"ready-{r}"
    ready.mkdir(exist_ok=True)
    (ready / me).touch()
    deadline = time.monotonic() + 120
    while len(os.listdir(ready)) < n:
        if time.monotonic() > deadline:
            sys.exit(f"round {r}: the other processes never arrived")
        time.sleep(0.0005)
    try:
        storage = open_storage(url.format(r), heartbeat_interval=1)
        storage.get_all_studies()  # the schema is complete, not just present
        storage.engine.dispose()
    except Exception as exc:
        print(f"FAILED round {r}: {type(exc).__name__}: {str(exc).splitlines()[0]}",
              flush=True)
"""


def _open_together(url: str, tmp_path: Path, n_procs: int, rounds: int) -> list[str]:
    """Start ``n_procs`` processes that open ``url.format(r)`` together for each round
    ``r``; return the failure lines."""
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(
        [str(ROOT), *filter(None, [os.environ.get("PYTHONPATH")])]))
    procs = [subprocess.Popen([sys.executable, "-c", _OPENER, str(tmp_path), str(i),
                               str(n_procs), str(rounds), url],
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                              env=env, cwd=ROOT)
             for i in range(n_procs)]
    failures = []
    for p in procs:
        out, err = p.communicate(timeout=600)
        assert p.returncode == 0, err
        failures += [line for line in out.splitlines() if line.startswith("FAILED")]
    return failures


@pytest.fixture
def fast_dir(tmp_path):
    """A directory in memory (``/dev/shm``) where there is one: creating a schema there
    takes a fifth of the time it takes on disk (no fsync), the race is the same."""
    shm = Path("/dev/shm")
    if not (shm.is_dir() and os.access(shm, os.W_OK)):
        yield tmp_path
        return
    import shutil
    import tempfile

    path = Path(tempfile.mkdtemp(prefix="gbrank-test-", dir=shm))
    try:
        yield path
    finally:
        shutil.rmtree(path, ignore_errors=True)


@pytest.mark.slow
def test_processes_opening_a_fresh_sqlite_storage_at_once_all_succeed(fast_dir):
    rounds = 20
    url = f"sqlite:///{fast_dir}/studies-{{}}.db"
    failures = _open_together(url, fast_dir, n_procs=8, rounds=rounds)
    assert failures == [], f"{len(failures)} of {8 * rounds} opens failed: {failures[:3]}"
    # Every database holds exactly one schema version row (created once).
    from sqlalchemy import create_engine, text

    for r in range(rounds):
        engine = create_engine(url.format(r))
        with engine.connect() as conn:
            assert conn.execute(text("SELECT COUNT(*) FROM alembic_version")).scalar() == 1
            assert conn.execute(text("SELECT COUNT(*) FROM version_info")).scalar() == 1
        engine.dispose()


@pytest.mark.slow
def test_postgres_schema_created_once_by_concurrent_openers(pg_url, tmp_path):
    """The same on PostgreSQL, each round in a new schema of the test database."""
    from sqlalchemy import create_engine, text

    from gbrank.tuning._storage import _postgres_driver

    rounds, prefix = 5, f"race_{uuid.uuid4().hex[:8]}"
    admin = create_engine(_postgres_driver(pg_url), isolation_level="AUTOCOMMIT")
    with admin.connect() as conn:
        for r in range(rounds):
            conn.execute(text(f"CREATE SCHEMA {prefix}_{r}"))
    try:
        sep = "&" if "?" in pg_url else "?"
        url = f"{pg_url}{sep}options=-csearch_path%3D{prefix}_{{}}"
        failures = _open_together(url, tmp_path, n_procs=6, rounds=rounds)
        assert failures == [], failures[:3]
        with admin.connect() as conn:
            for r in range(rounds):
                n = conn.execute(text(f"SELECT COUNT(*) FROM {prefix}_{r}.alembic_version"))
                assert n.scalar() == 1
    finally:
        with admin.connect() as conn:
            for r in range(rounds):
                conn.execute(text(f"DROP SCHEMA IF EXISTS {prefix}_{r} CASCADE"))
        admin.dispose()
