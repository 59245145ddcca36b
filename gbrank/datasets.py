"""Loaders for LETOR-format ranking files and synthetic data sets for tests and benchmarks."""

from __future__ import annotations

from pathlib import Path

import numpy as np

__all__ = ["load_letor", "make_ranking", "shared_data_dir"]


def shared_data_dir() -> Path:
    """``../shared/data`` beside the project checkout (reference data; may be absent)."""
    return Path(__file__).resolve().parents[2] / "shared" / "data"


def load_letor(path: str | Path, query_path: str | Path | None = None,
               n_features: int | None = None):
    """Load an SVMlight/LETOR file and its query sizes.

    Parameters
    ----------
    path : path
        SVMlight file, label first (``2 qid:10 1:0.5 ...`` or LightGBM's form
        without ``qid``).
    query_path : path, optional
        One query size per line (LightGBM's ``.query`` file). Default: ``path +
        ".query"`` if it exists, else the ``qid:`` fields of the file.
    n_features : int, optional
        Width of the feature matrix (to align train and test files).

    Returns
    -------
    X : scipy.sparse.csr_matrix
    y : ndarray of float64
    group : ndarray of int64
        Query sizes in row order.
    """
    from sklearn.datasets import load_svmlight_file

    path = Path(path)
    qp = Path(query_path) if query_path is not None else Path(str(path) + ".query")
    if qp.exists():
        X, y = load_svmlight_file(str(path), n_features=n_features)
        group = np.loadtxt(qp, dtype=np.int64, ndmin=1)
    else:
        X, y, qid = load_svmlight_file(str(path), n_features=n_features, query_id=True)
        starts = np.flatnonzero(np.diff(qid)) + 1
        group = np.diff(np.concatenate(([0], starts, [qid.size]))).astype(np.int64)
    if int(group.sum()) != X.shape[0]:
        raise ValueError(f"{qp}: query sizes sum to {int(group.sum())}, file has {X.shape[0]} rows")
    return X, y, group


def make_ranking(n_queries: int = 3000, rows_per_query: int = 100, n_features: int = 50,
                 n_grades: int = 5, noise: float = 1.0, seed: int = 0):
    """Synthetic MSLR-shaped ranking data: grades from a noisy linear score.

    Returns ``X`` (float64, n × n_features), ``y`` (grades 0..n_grades-1, skewed to
    low grades as in web search), ``group`` (sizes).
    """
    rng = np.random.default_rng(seed)
    n = n_queries * rows_per_query
    X = rng.standard_normal((n, n_features))
    coef = rng.standard_normal(n_features) * (rng.random(n_features) < 0.4)
    latent = X @ coef / np.sqrt(max(1.0, float(np.sum(coef**2))))
    latent += noise * rng.standard_normal(n)
    # Quantile cut points: 50% grade 0, then thinning toward the top grade.
    probs = np.array([0.5, 0.25, 0.13, 0.08, 0.04])[:n_grades]
    probs = probs / probs.sum()
    cuts = np.quantile(latent, np.cumsum(probs)[:-1])
    y = np.searchsorted(cuts, latent).astype(np.float64)
    group = np.full(n_queries, rows_per_query, dtype=np.int64)
    return X, y, group
