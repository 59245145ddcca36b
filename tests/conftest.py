"""Shared fixtures: the reference data in ../shared/data.

Outside CI a test that needs it is skipped when it is absent; in CI (``CI=true``) the
data must be there, so its absence fails the test instead of hiding it as a skip.
"""

from __future__ import annotations

import os

import numpy as np
import pytest

from gbrank.datasets import load_letor, shared_data_dir


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
def binary_data():
    """LightGBM's binary example: dict with X_train, y_train, X_test, y_test."""
    out = {}
    for part in ("train", "test"):
        a = np.loadtxt(_need(f"binary.{part}"), delimiter="\t")
        out[f"X_{part}"], out[f"y_{part}"] = a[:, 1:], a[:, 0]
    return out
