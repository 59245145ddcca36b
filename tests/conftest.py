"""Shared fixtures: the reference data in ../shared/data, and the PostgreSQL server of
the tests of shared study storage.

Outside CI a test that needs either is skipped when it is absent; in CI (``CI=true``)
it must be there, so its absence fails the test instead of hiding it as a skip.
PostgreSQL comes from ``GBRANK_TEST_POSTGRES`` (``bash .ci/postgres.sh start`` then
``source .ci/postgres.env``; ``.ci/run`` does both).
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

import numpy as np
import pytest

from gbrank.datasets import load_letor

# The slow reference implementations the tests compare against (tests/reference/).
sys.path.insert(0, str(Path(__file__).resolve().parent))


def shared_data_dir() -> Path:
    """The reference data: ``$GBRANK_DATA`` when set, else ``../shared/data`` beside the
    checkout."""
    env = os.environ.get("GBRANK_DATA")
    return Path(env) if env else Path(__file__).resolve().parents[2] / "shared" / "data"


def _need(name: str):
    path = shared_data_dir() / name
    if not path.exists():
        if os.environ.get("CI", "").lower() in ("1", "true", "yes"):
            pytest.fail(f"reference data not found: {path} (required in CI)")
        pytest.skip(f"reference data not found: {path}")
    return path


@pytest.fixture(scope="session")
def rank_data():
    """LETOR ranking data: dict with X_train, y_train, g_train, X_test, y_test, g_test."""
    X_tr, y_tr, g_tr = load_letor(_need("rank.train"))
    X_te, y_te, g_te = load_letor(_need("rank.test"), n_features=X_tr.shape[1])
    return {"X_train": X_tr, "y_train": y_tr, "g_train": g_tr,
            "X_test": X_te, "y_test": y_te, "g_test": g_te}


@pytest.fixture(scope="session")
def mq2008_dir() -> Path:
    """The folder of LETOR 4.0's MQ2008 parts (S1.txt … S5.txt and readme.txt)."""
    return _need("MQ2008")


@pytest.fixture(scope="session")
def binary_data():
    """LightGBM's binary example: dict with X_train, y_train, X_test, y_test."""
    out = {}
    for part in ("train", "test"):
        a = np.loadtxt(_need(f"binary.{part}"), delimiter="\t")
        out[f"X_{part}"], out[f"y_{part}"] = a[:, 1:], a[:, 0]
    return out


@pytest.fixture(scope="session")
def lgbm_classifier(binary_data):
    """LightGBM's own ``LGBMClassifier`` (50 trees, native ``binary``) fitted on
    ``binary.train``: the source of the ``predict_proba`` output users pass to metrics."""
    lgb = pytest.importorskip("lightgbm")
    clf = lgb.LGBMClassifier(n_estimators=50, verbosity=-1, random_state=0)
    return clf.fit(binary_data["X_train"], binary_data["y_train"])


def _postgres_url() -> str:
    # Like every optional extra, a missing driver skips (the floors' venv of .ci/run
    # installs only gbrank[dev]); a missing server skips only outside CI.
    pytest.importorskip("psycopg2", reason="psycopg2 is not installed: "
                        "pip install 'gbrank[postgres]'")
    url = os.environ.get("GBRANK_TEST_POSTGRES")
    if not url:
        why = ("GBRANK_TEST_POSTGRES is not set (bash .ci/postgres.sh start && "
               "source .ci/postgres.env)")
        if os.environ.get("CI", "").lower() in ("1", "true", "yes"):
            pytest.fail(why + " (required in CI)")
        pytest.skip(why)
    return url  # set but unreachable: the tests fail, the URL was given on purpose


@pytest.fixture(scope="module")
def pg_url() -> str:
    return _postgres_url()


@pytest.fixture(params=["sqlite", "postgresql"])
def any_url(request, tmp_path) -> str:
    if request.param == "sqlite":
        return f"sqlite:///{tmp_path / 'studies.db'}"
    return _postgres_url()


def needs_lightgbm_positions() -> None:
    """Skip unless LightGBM's Dataset takes display positions (LightGBM >= 4.1)."""
    lgb = pytest.importorskip("lightgbm")
    if not hasattr(lgb.Dataset, "get_position"):
        pytest.skip(f"LightGBM {lgb.__version__} has no Dataset positions (4.1 added them)")


@pytest.fixture(scope="session")
def click_log():
    """A small simulated click log, one session per query (40 queries of 15 rows, a weak
    logging ranker's top 8, position-based user): ``X`` of the shown rows, ``clicks``,
    the session ids ``qid``, their sizes ``group``, the logged ``position`` and the
    simulator's true examination probabilities ``rho`` (position 1, 2, …)."""
    from types import SimpleNamespace

    from gbrank.datasets import make_ranking, simulate_clicks

    X, y, g = make_ranking(n_queries=40, rows_per_query=15, n_features=4, seed=3)
    weak = X[:, 0] + np.random.default_rng(0).normal(size=y.size)
    log = simulate_clicks(y, g, weak, top_n=8, n_sessions=1, sessions="keep", seed=1)
    return SimpleNamespace(X=X[log.rows], clicks=log.clicks,
                           qid=np.repeat(np.arange(log.group.size), log.group),
                           group=log.group, position=log.position, rho=log.examination)


# The floors run (.ci/min_versions.sh: the declared minimum versions, with
# -m "not slow and not main_only") keeps every test of gbrank's use of its dependencies
# (adapters, estimators, tuning, dask, datasets, export, docs, compilation, ...). Of the
# pure-math tests (tests/kernels, tests/metrics, tests/objectives), which check gbrank's own
# arithmetic against slow references and cost mostly numba compiling one more form of a
# kernel, it keeps only those marked ``floors``: each kernel once against its reference on
# the floor numba and NumPy, and the comparisons with LightGBM, XGBoost, scikit-learn and
# trec_eval. The main run runs them all.
_PURE_MATH = ("kernels", "metrics", "objectives")


def pytest_itemcollected(item):
    parts = item.path.relative_to(Path(__file__).resolve().parent).parts
    if len(parts) > 1 and parts[0] in _PURE_MATH and not item.get_closest_marker("floors"):
        item.add_marker(pytest.mark.main_only)
