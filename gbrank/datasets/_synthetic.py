"""Synthetic data sets: graded ranking, group-less demand levels, imbalanced binary."""

from __future__ import annotations

import numpy as np

from gbrank._validation import check_integer, check_number


def make_ranking(n_queries: int = 3000, rows_per_query: int = 100, n_features: int = 50,
                 n_grades: int = 5, noise: float = 1.0, seed: int = 0,
                 ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Synthetic MSLR-shaped ranking data: grades from a noisy linear score.

    Each query has ``rows_per_query`` rows of standard-normal features; a latent score
    (a random sparse linear function of the features plus ``noise``) is cut at its
    quantiles over all rows into grades, about half of them 0 and fewer toward the top
    grade, as in web search (MSLR-WEB).

    Parameters
    ----------
    n_queries : int, default 3000
    rows_per_query : int, default 100
    n_features : int, default 50
    n_grades : int, default 5
        Grades 0 … ``n_grades`` − 1 (at most 5).
    noise : float, default 1.0
        Standard deviation of the label noise relative to the unit-variance signal.
    seed : int, default 0
        Seed of ``numpy.random.default_rng``.

    Returns
    -------
    X : ndarray of float64, shape (n_queries * rows_per_query, n_features)
    y : ndarray of float64
        Grades.
    group : ndarray of int64, shape (n_queries,)
        Query sizes (every query ``rows_per_query`` rows, in row order).

    Examples
    --------
    >>> import numpy as np
    >>> from gbrank.datasets import make_ranking
    >>> X, y, group = make_ranking(n_queries=10, rows_per_query=20, n_features=5)
    >>> X.shape, group.tolist()[:3]
    ((200, 5), [20, 20, 20])
    >>> np.bincount(y.astype(int)).tolist()  # rows per grade 0..4
    [100, 50, 26, 16, 8]
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


def make_demand_levels(n_rows: int = 10_000, n_features: int = 20, n_grades: int = 5,
                       noise: float = 0.5, seed: int = 0,
                       ) -> tuple[np.ndarray, np.ndarray]:
    r"""A group-less demand-level task: one query of all rows, equal-sized grades.

    Each row (a search query in the article) carries a purchase-demand grade
    ``0 .. n_grades-1``; there is no query structure, the whole set is ranked at once.
    Features are standard normal; a latent demand

    .. math:: d_i = \frac{x_i^\top c}{\lVert c\rVert} + \text{noise}\cdot\varepsilon_i,
              \qquad \varepsilon_i \sim N(0, 1),

    with a random coefficient vector ``c`` on about half of the features, is cut at its
    empirical quantiles into ``n_grades`` grades of equal size (sizes differ by at most
    one when ``n_rows`` is not a multiple of ``n_grades``), as in the article's 10,000
    documents in five grades of 2,000.

    Parameters
    ----------
    n_rows : int, default 10_000
        Number of rows (≥ ``n_grades``).
    n_features : int, default 20
        Number of features (≥ 1).
    n_grades : int, default 5
        Number of grades (≥ 2).
    noise : float, default 0.5
        Standard deviation of the label noise relative to the unit-variance signal
        (0 = grades are a deterministic function of ``X``).
    seed : int, default 0
        Seed of ``numpy.random.default_rng``.

    Returns
    -------
    X : ndarray of float64, shape (n_rows, n_features)
    y : ndarray of float64, shape (n_rows,)
        Grades; use it group-less (one query) with gbrank objectives and metrics.

    Examples
    --------
    >>> import numpy as np
    >>> from gbrank.datasets import make_demand_levels
    >>> X, y = make_demand_levels(n_rows=100, n_features=4)
    >>> X.shape, np.bincount(y.astype(int)).tolist()
    ((100, 4), [20, 20, 20, 20, 20])
    """
    n_grades = check_integer(n_grades, "n_grades", 2)
    n_rows = check_integer(n_rows, "n_rows", n_grades)
    n_features = check_integer(n_features, "n_features", 1)
    noise = check_number(noise, "noise", 0.0)
    rng = np.random.default_rng(seed)
    X = rng.standard_normal((n_rows, n_features))
    coef = rng.standard_normal(n_features) * (rng.random(n_features) < 0.5)
    if not np.any(coef):
        coef[rng.integers(n_features)] = 1.0
    latent = X @ coef / np.sqrt(float(np.sum(coef**2))) + noise * rng.standard_normal(n_rows)
    # Equal-size grades: rank r (0-based, ascending latent) gets grade floor(r·G / n).
    order = np.argsort(latent, kind="stable")
    y = np.empty(n_rows)
    y[order] = np.arange(n_rows) * n_grades // n_rows
    return X, y


def make_imbalanced(n_rows: int = 20_000, n_features: int = 20, positive_rate: float = 0.02,
                    n_informative: int = 8, flip: float = 0.01, seed: int = 0,
                    ) -> tuple[np.ndarray, np.ndarray]:
    """Synthetic imbalanced binary classification (scikit-learn's ``make_classification``).

    Parameters
    ----------
    n_rows : int, default 20_000
        Number of rows (≥ 20).
    n_features : int, default 20
        Number of features (≥ ``n_informative``).
    positive_rate : float, default 0.02
        Share of rows in the positive class before label noise, in (0, 0.5].
    n_informative : int, default 8
        Informative features (≥ 1).
    flip : float, default 0.01
        Share of labels assigned at random (label noise), in [0, 1).
    seed : int, default 0
        Random seed.

    Returns
    -------
    X : ndarray of float64, shape (n_rows, n_features)
    y : ndarray of float64 in {0, 1}

    Examples
    --------
    >>> from gbrank.datasets import make_imbalanced
    >>> X, y = make_imbalanced(n_rows=1000, positive_rate=0.05)
    >>> X.shape, int(y.sum())
    ((1000, 20), 50)
    """
    from sklearn.datasets import make_classification

    n_rows = check_integer(n_rows, "n_rows", 20)
    n_informative = check_integer(n_informative, "n_informative", 1)
    n_features = check_integer(n_features, "n_features", n_informative)
    positive_rate = check_number(positive_rate, "positive_rate", 0.0, 0.5, low_open=True)
    flip = check_number(flip, "flip", 0.0, 1.0, high_open=True)
    X, y = make_classification(
        n_samples=n_rows, n_features=n_features, n_informative=n_informative,
        n_redundant=min(2, n_features - n_informative), weights=[1.0 - positive_rate],
        flip_y=flip, class_sep=1.0, random_state=seed)
    return X.astype(np.float64), y.astype(np.float64)


def load_breast_cancer_imbalanced(positive_rate: float = 0.05, seed: int = 0,
                                  ) -> tuple[np.ndarray, np.ndarray]:
    """scikit-learn's bundled breast-cancer data, malignant = positive, subsampled.

    Every benign row is kept, and enough malignant rows drawn at random (at least 4)
    for a positive share of ``positive_rate`` — no download needed.

    Parameters
    ----------
    positive_rate : float, default 0.05
        Target share of positives, in (0, 0.373] (0.373 = all malignant rows kept).
    seed : int, default 0
        Random seed of the subsample.

    Returns
    -------
    X : ndarray of float64, shape (n, 30)
    y : ndarray of float64 in {0, 1}

    Examples
    --------
    >>> from gbrank.datasets import load_breast_cancer_imbalanced
    >>> X, y = load_breast_cancer_imbalanced(positive_rate=0.05)
    >>> X.shape, int(y.sum())  # all 357 benign rows and 19 malignant ones
    ((376, 30), 19)
    """
    from sklearn.datasets import load_breast_cancer

    positive_rate = check_number(positive_rate, "positive_rate", 0.0, 0.373, low_open=True)
    X, target = load_breast_cancer(return_X_y=True)
    y = (target == 0).astype(np.float64)  # scikit-learn codes malignant as 0
    rng = np.random.default_rng(seed)
    pos, neg = np.flatnonzero(y == 1), np.flatnonzero(y == 0)
    k = min(pos.size, max(4, int(round(positive_rate * neg.size / (1.0 - positive_rate)))))
    keep = np.sort(np.concatenate([neg, rng.choice(pos, size=k, replace=False)]))
    return X[keep].astype(np.float64), y[keep]
