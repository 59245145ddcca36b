"""Many tuner processes on one study: the shared trial budget of
``gbrank.tuning._budget.run_budget`` and its lock, on SQLite and on PostgreSQL, and real
``gbrank tune`` processes sharing a PostgreSQL study (two processes started by
hand, and ``--workers 2``).

PostgreSQL comes from ``GBRANK_TEST_POSTGRES`` (the ``pg_url`` and ``any_url`` fixtures
of ``conftest.py``). Outside CI its absence skips the PostgreSQL tests with that
instruction; in CI (``CI=true``) it fails them.
"""

from __future__ import annotations

import random
import re
import subprocess
import sys
import threading
import time
import uuid
from pathlib import Path

import pytest

optuna = pytest.importorskip("optuna")

from gbrank.tuning._budget import (  # noqa: E402
    ADMITTED,
    SURPLUS,
    WORKER,
    run_budget,
    state_counts,
)
from gbrank.tuning._sampler import seeded_tpe  # noqa: E402
from gbrank.tuning._storage import _postgres_driver, open_storage, study_lock  # noqa: E402

ROOT = Path(__file__).resolve().parents[2]
TUNE = [sys.executable, "-m", "gbrank.tuning"]  # what `gbrank tune` runs
S = optuna.trial.TrialState


def _unique(prefix: str) -> str:
    return f"{prefix}-{uuid.uuid4().hex[:12]}"


def _drop(url: str, names) -> None:
    storage = open_storage(url)
    for name in names:
        try:
            optuna.delete_study(study_name=name, storage=storage)
        except KeyError:
            pass


def _retried_from(trial):
    """The number of the trial ``trial`` retries (Optuna's retry callback), or None."""
    import warnings

    with warnings.catch_warnings():
        warnings.simplefilter("ignore", optuna.exceptions.ExperimentalWarning)
        return optuna.storages.RetryFailedTrialCallback.retried_trial_number(trial)


def _check_budget(trials, total: int) -> None:
    """Exactly ``total`` trials counted; every number once; nothing left running; every
    failure accounted for (a surplus trial, failed unrun, or a failed admitted trial)."""
    numbers = [t.number for t in trials]
    assert sorted(numbers) == list(range(len(trials)))  # each number once, none missing
    assert sum(t.state in (S.COMPLETE, S.PRUNED) for t in trials) == total
    assert not [t.number for t in trials if t.state in (S.RUNNING, S.WAITING)]
    # Trials failed by another worker (a heartbeat stale under load) and retried.
    retried = {_retried_from(t) for t in trials} - {None}
    for t in trials:
        if t.user_attrs.get(SURPLUS):
            assert t.state == S.FAIL and not t.params  # never ran
        elif t.user_attrs.get(ADMITTED) != t.number:
            # Failed as stale before its admission: claimed nothing, retried.
            assert t.state == S.FAIL and t.number in retried
        else:
            assert WORKER in t.user_attrs


# ---- the budget scheme, in one process ------------------------------------------------------

def test_postgres_url_gets_the_installed_driver():
    url = _postgres_driver("postgresql://u:p@127.0.0.1:5/db")
    import importlib.util

    if importlib.util.find_spec("psycopg") is None and importlib.util.find_spec("psycopg2"):
        assert url == "postgresql+psycopg2://u:p@127.0.0.1:5/db"
    assert _postgres_driver("postgres://h/db").endswith("://h/db")
    assert _postgres_driver("postgresql+pg8000://h/db") == "postgresql+pg8000://h/db"
    assert _postgres_driver("sqlite:///x.db") == "sqlite:///x.db"


def test_study_lock_excludes_other_holders(any_url):
    """A second holder (its own storage, as another process would have) waits until the
    first releases the lock. On PostgreSQL another study's lock is independent; on
    SQLite the lock is the database file's (one machine, held for milliseconds)."""
    name = _unique("lock")
    a, b = open_storage(any_url), open_storage(any_url)
    events: list[str] = []
    held = threading.Event()

    def second():
        held.wait()
        with study_lock(b, name):
            events.append("b")

    t = threading.Thread(target=second, daemon=True)
    t.start()
    with study_lock(a, name):
        held.set()
        if any_url.startswith("postgresql"):
            with study_lock(b, name + "-other"):  # would deadlock if it were the same
                events.append("other")
        time.sleep(0.3)
        events.append("a")
    t.join(10)
    assert events == (["other"] if any_url.startswith("postgresql") else []) + ["a", "b"]


def test_threads_share_the_total_exactly(any_url):
    """Six workers, each with its own storage, on one study of 18 trials whose
    objective fails or prunes at random: the old per-process "remaining = total - done"
    (Optuna's MaxTrialsCallback) ended with 21 to 23 in six runs; the budget ends with 18."""
    name, total, n_workers = _unique("budget"), 18, 6
    optuna.create_study(study_name=name, storage=open_storage(any_url), direction="maximize")
    ran: dict[int, int] = {}

    def worker(i: int) -> None:
        storage = open_storage(any_url, heartbeat_interval=1)
        study = optuna.load_study(study_name=name, storage=storage,
                                  sampler=seeded_tpe(0, n_startup_trials=3))
        rng = random.Random(i)

        def objective(trial):
            x = trial.suggest_float("x", 0.0, 1.0)
            time.sleep(rng.uniform(0.005, 0.03))
            u = rng.random()
            if u < 0.15:
                raise ValueError("a failing trial")
            if u < 0.3:
                raise optuna.TrialPruned()
            return x

        ran[i] = run_budget(study, objective, total, storage=storage, max_trials=100,
                            catch=(ValueError,))

    optuna.logging.set_verbosity(optuna.logging.ERROR)
    try:
        threads = [threading.Thread(target=worker, args=(i,)) for i in range(n_workers)]
        for t in threads:
            t.start()
        for t in threads:
            t.join(120)
        study = optuna.load_study(study_name=name, storage=open_storage(any_url))
        trials = study.get_trials()
        _check_budget(trials, total)
        # Each worker's return value is the number of trials it ran (admitted).
        assert sum(ran.values()) == sum(t.user_attrs.get(ADMITTED) == t.number
                                        for t in trials)
        assert len(ran) == n_workers
        complete, pruned, failed = state_counts(study)
        assert complete + pruned == total
        assert failed == sum(t.state == S.FAIL and not t.user_attrs.get(SURPLUS)
                             for t in trials)
        # Per-trial seeds: no two trials drew the same x.
        xs = [t.params["x"] for t in trials if "x" in t.params]
        assert len(set(xs)) == len(xs)
    finally:
        optuna.logging.set_verbosity(optuna.logging.WARNING)
        _drop(any_url, [name])


@pytest.mark.parametrize("when", ["admitted", "before admission"])
def test_a_trial_failed_by_another_worker_is_retried_and_the_worker_carries_on(any_url, when):
    """A worker stalled past the grace period finds its trial failed by another (as
    Optuna's stale-trial check does) and retried. Optuna cannot record a finished trial:
    it raised out of run_budget ("Cannot tell a FAIL trial", CI of stop 44); the worker
    now warns, drops the result and still ends the study at its total."""
    name, total = _unique("stale"), 5
    storage = open_storage(any_url, heartbeat_interval=1)
    study = optuna.create_study(study_name=name, storage=storage, direction="maximize",
                                sampler=seeded_tpe(0, n_startup_trials=3))
    other = open_storage(any_url, heartbeat_interval=1)  # another worker's connection
    stolen: list[int] = []

    def fail_from_elsewhere(trial) -> None:
        # What Optuna's fail_stale_trials does with a stale trial, done at once.
        stolen.append(trial.number)
        assert other.set_trial_state_values(trial._trial_id, S.FAIL)
        callback = getattr(other, "get_heartbeat_stale_trial_callback",  # Optuna >= 4.9
                           getattr(other, "get_failed_trial_callback", None))()
        callback(study, other.get_trial(trial._trial_id))

    def objective(trial):
        if when == "admitted" and not stolen:
            fail_from_elsewhere(trial)
        return trial.suggest_float("x", 0.0, 1.0)

    if when == "before admission":
        # The other worker fails it between Optuna's ask and the admission lock.
        real = study.ask

        def ask(*a, **k):
            trial = real(*a, **k)
            if not stolen:
                fail_from_elsewhere(trial)
            return trial
        study.ask = ask
    try:
        with pytest.warns(RuntimeWarning, match=r"trial 0 was failed by another worker.*"
                          r"retried.*--heartbeat"):
            ran = run_budget(study, objective, total, storage=storage, max_trials=20)
        trials = study.get_trials()
        _check_budget(trials, total)
        assert stolen == [0] and trials[0].state == S.FAIL
        complete, pruned, failed = state_counts(study)
        assert (complete, pruned, failed) == (total, 0, 1)
        assert ran == total + (when == "admitted")
        # The retried copy of trial 0 ran (Optuna re-queued it).
        assert _retried_from(trials[1]) == 0
    finally:
        _drop(any_url, [name])


def test_an_error_after_a_trial_failed_elsewhere_is_not_taken_for_one(any_url):
    """After a trial failed by another worker, a later error out of Optuna (a lost
    connection) was swallowed as another such failure, in a loop (review)."""
    name = _unique("stale-then-error")
    storage = open_storage(any_url, heartbeat_interval=1)
    study = optuna.create_study(study_name=name, storage=storage, direction="maximize")
    other = open_storage(any_url, heartbeat_interval=1)
    real, calls = study.ask, []

    def ask(*a, **k):
        calls.append(1)
        if len(calls) == 2:
            raise RuntimeError("the storage went away")
        trial = real(*a, **k)
        assert other.set_trial_state_values(trial._trial_id, S.FAIL)
        return trial

    study.ask = ask
    try:
        with pytest.warns(RuntimeWarning, match="failed by another worker"), \
                pytest.raises(RuntimeError, match="the storage went away"):
            run_budget(study, lambda t: t.suggest_float("x", 0, 1), 3, storage=storage,
                       max_trials=10)
        assert len(calls) == 2
    finally:
        _drop(any_url, [name])


def test_seeded_tpe_is_reproducible_and_differs_by_trial():
    def run():
        study = optuna.create_study(sampler=seeded_tpe(7, n_startup_trials=3))
        study.optimize(lambda t: t.suggest_float("x", 0, 1) ** 2, n_trials=8)
        return [t.params["x"] for t in study.trials]

    a, b = run(), run()
    assert a == b and len(set(a)) == 8


# ---- real tuner processes on PostgreSQL -----------------------------------------------------

def _csv(path: Path, n: int = 3000) -> Path:
    import pandas as pd

    from gbrank.datasets import make_imbalanced

    X, y = make_imbalanced(n_rows=n, n_features=6, n_informative=4, positive_rate=0.1,
                           seed=0)
    df = pd.DataFrame(X, columns=[f"f{i}" for i in range(X.shape[1])])
    df["label"] = y.astype(int)
    df.to_csv(path, index=False)
    return path


def _cmd(csv: Path, url: str, out: Path, total: int, *extra: str) -> list[str]:
    return [*TUNE, "--data", str(csv), "--label-col", "label",
            "--objectives", "native:binary", "--trials", str(total), "--max-rounds", "200",
            "--folds", "3", "--storage", url, "--out", str(out), *extra]


def _study_of(url: str, csv: Path):
    storage = open_storage(url)
    names = [s.study_name for s in optuna.get_all_study_summaries(storage)
             if s.study_name.startswith(csv.name + "-")]
    assert len(names) == 1, names
    return optuna.load_study(study_name=names[0], storage=storage)


def _summary_counts(summary: str) -> tuple[int, int, int]:
    row = next(line for line in summary.splitlines() if line.startswith("| native:binary | ap"))
    c, p, f = re.search(r"\| (\d+) / (\d+) / (\d+) \|", row).groups()
    return int(c), int(p), int(f)


@pytest.mark.slow
def test_two_tuner_processes_share_one_postgres_study(pg_url, tmp_path):
    """One normal run and one ``--trials-only`` helper, started together on one URL."""
    csv = _csv(tmp_path / f"{_unique('two')}.csv")
    total = 8
    a = subprocess.Popen(_cmd(csv, pg_url, tmp_path / "a", total), stdout=subprocess.PIPE,
                         stderr=subprocess.PIPE, text=True)
    b = subprocess.Popen(_cmd(csv, pg_url, tmp_path / "b", total, "--trials-only"),
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    out_a, err_a = a.communicate(timeout=300)
    out_b, err_b = b.communicate(timeout=300)
    study = _study_of(pg_url, csv)
    try:
        assert a.returncode == 0, err_a
        assert b.returncode == 0, err_b
        trials = study.get_trials()
        _check_budget(trials, total)
        hosts = {t.user_attrs[WORKER] for t in trials if WORKER in t.user_attrs}
        pids = {int(h.rsplit(":", 1)[1]) for h in hosts}
        assert pids == {a.pid, b.pid}  # both processes ran trials
        # The normal run reported the whole study (it waited for the helper's trials);
        # the helper wrote nothing.
        c, p, _ = _summary_counts((tmp_path / "a" / "SUMMARY.md").read_text())
        assert c + p == total
        assert not (tmp_path / "b").exists()
        assert "run by this process" in out_b
    finally:
        _drop(pg_url, [study.study_name])


@pytest.mark.slow
def test_workers_flag_runs_worker_processes_on_postgres(pg_url, tmp_path):
    csv = _csv(tmp_path / f"{_unique('workers')}.csv")
    total = 8
    r = subprocess.run(_cmd(csv, pg_url, tmp_path / "out", total, "--workers", "2"),
                       capture_output=True, text=True, timeout=300)
    study = _study_of(pg_url, csv)
    try:
        assert r.returncode == 0, r.stderr
        trials = study.get_trials()
        _check_budget(trials, total)
        hosts = {t.user_attrs[WORKER] for t in trials if WORKER in t.user_attrs}
        assert len(hosts) == 2  # two worker processes ran trials
        assert "[tune w0]" in r.stdout and "[tune w1]" in r.stdout
        assert pg_url.split("@")[0].split(":")[-1] not in r.stdout  # password not shown
        c, p, _ = _summary_counts((tmp_path / "out" / "SUMMARY.md").read_text())
        assert c + p == total
        assert len(list((tmp_path / "out" / "tune" / "models").rglob("params.json"))) == 1
    finally:
        _drop(pg_url, [study.study_name])
