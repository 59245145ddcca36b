"""Loaders for LETOR-format ranking files and synthetic data sets for tests and benchmarks."""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from gbrank._validation import check_integer, check_number

__all__ = ["LETOR_PARTS", "ClickLog", "NonNumericColumnsError", "letor_fold",
           "load_breast_cancer_imbalanced", "load_data", "load_letor", "load_letor_folds",
           "load_table", "make_demand_levels", "make_imbalanced", "make_ranking",
           "shared_data_dir", "simulate_clicks"]


def shared_data_dir() -> Path:
    """The reference data of the project's tests and experiments (may be absent).

    ``$GBRANK_DATA`` when set; otherwise ``../shared/data`` beside a source checkout
    (relative to this file, so from an installed wheel the default points nowhere
    useful: set the variable there).
    """
    env = os.environ.get("GBRANK_DATA")
    if env:
        return Path(env)
    return Path(__file__).resolve().parents[2] / "shared" / "data"


def load_letor(path: str | Path, query_path: str | Path | None = None,
               n_features: int | None = None, *, return_order: bool = False,
               ) -> tuple[Any, ...]:
    """Load an SVMlight/LETOR file and its query sizes.

    Parameters
    ----------
    path : path
        SVMlight file, label first (``2 qid:10 1:0.5 ...`` or LightGBM's form
        without ``qid``).
    query_path : path, optional
        One query size per line (LightGBM's ``.query`` file; its rows are taken in file
        order). Default: ``path + ".query"`` if it exists, else the ``qid:`` fields of
        the file.
    n_features : int, optional
        Width of the feature matrix (to align train and test files).
    return_order : bool, default False
        Also return ``order`` (see below).

    Returns
    -------
    X : scipy.sparse.csr_matrix
    y : ndarray of float64
    group : ndarray of int64
        Query sizes in row order. A file with neither a ``.query`` file nor ``qid:``
        fields, or with ``qid:0`` on every row, has no query structure: one query of
        all rows.
    order : ndarray of int64, only with ``return_order=True``
        The file row (0-based, data lines only) of each returned row.

    Notes
    -----
    A query id names one query wherever its rows are in the file: rows of a query need
    not be adjacent. They are gathered, queries in order of first appearance and rows
    of a query in file order, so rows may come back in another order than the file's
    (``qid`` 1, 1, 2, 2, 1 gives rows 0, 1, 4, 2, 3 and ``group`` [3, 2]); ``order``
    maps them back: ``in_file_order[order] = per_row_result``.

    Either every row has a ``qid:`` field or none has; a file that mixes them is
    refused, naming the first line without one.
    """
    X, y, group, order = _read_letor(path, query_path, n_features)
    if group is None:
        group = np.array([X.shape[0]], dtype=np.int64)
    return (X, y, group, order) if return_order else (X, y, group)


#: The standard LETOR 4.0 rotation: fold k trains on three parts, validates on the
#: fourth and tests on the fifth (MQ2008/MQ2007 ``readme``: Fold1 = S1-S3 / S4 / S5).
LETOR_PARTS = ("S1", "S2", "S3", "S4", "S5")


def load_letor_folds(folder: str | Path) -> dict[str, tuple[Any, np.ndarray, np.ndarray]]:
    """Load the five parts of a LETOR 4.0 set (``S1.txt`` … ``S5.txt`` in ``folder``, as
    MQ2008 and MQ2007 ship) with a common feature width.

    Returns
    -------
    dict
        ``{"S1": (X, y, group), …}``: a CSR matrix, float64 labels and query sizes per
        part (rows gathered by query as :func:`load_letor` does).

    Examples
    --------
    >>> from gbrank.datasets import letor_fold, load_letor_folds  # doctest: +SKIP
    >>> parts = load_letor_folds("MQ2008")  # doctest: +SKIP
    >>> train, valid, test = letor_fold(parts, 1)  # doctest: +SKIP
    """
    from scipy.sparse import csr_matrix

    folder = Path(folder)
    missing = [p for p in LETOR_PARTS if not (folder / f"{p}.txt").exists()]
    if missing:
        raise FileNotFoundError(f"{folder}: no {', '.join(m + '.txt' for m in missing)} "
                                "(a LETOR 4.0 folder holds S1.txt … S5.txt)")
    loaded = {p: load_letor(folder / f"{p}.txt") for p in LETOR_PARTS}
    width = max(X.shape[1] for X, _, _ in loaded.values())
    return {p: (csr_matrix((X.data, X.indices, X.indptr), shape=(X.shape[0], width)), y, g)
            for p, (X, y, g) in loaded.items()}


def letor_fold(parts: dict[str, tuple[Any, np.ndarray, np.ndarray]], fold: int,
               ) -> tuple[tuple[Any, np.ndarray, np.ndarray], ...]:
    """Training, validation and test sets of LETOR fold ``fold`` (1-5): training on the
    three parts from ``S<fold>`` on (cyclically), validation on the next, test on the
    last, as the LETOR 4.0 readme lists them.

    Returns
    -------
    (train, valid, test)
        Each ``(X, y, group)``, the training set's parts stacked in order.
    """
    from scipy.sparse import vstack

    fold = check_integer(fold, "fold", 1, 5)
    names = [LETOR_PARTS[(fold - 1 + i) % 5] for i in range(5)]
    train = [parts[n] for n in names[:3]]
    stacked = (vstack([X for X, _, _ in train]).tocsr(),
               np.concatenate([y for _, y, _ in train]),
               np.concatenate([g for _, _, g in train]))
    return stacked, parts[names[3]], parts[names[4]]


def _read_letor(path: str | Path, query_path: str | Path | None = None,
                n_features: int | None = None):
    """``X, y, group, order`` of :func:`load_letor`, ``group=None`` without query
    structure. A file sklearn cannot parse raises a ValueError naming it."""
    from sklearn.datasets import load_svmlight_file

    path = Path(path)
    if not path.exists():
        raise FileNotFoundError(f"{path}: no such file")
    qp = Path(query_path) if query_path is not None else Path(str(path) + ".query")
    try:
        if qp.exists():
            X, y = load_svmlight_file(str(path), n_features=n_features)
            qid = None
        else:
            X, y, qid = load_svmlight_file(str(path), n_features=n_features, query_id=True)
    except ValueError as exc:
        msg = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
        raise ValueError(f"{path}: cannot parse as LETOR/SVMlight: {msg}") from None
    n = X.shape[0]
    if n == 0:
        raise ValueError(f"{path}: no rows")
    y = np.asarray(y, dtype=np.float64)
    order = np.arange(n, dtype=np.int64)
    if qid is None:
        group = np.loadtxt(qp, dtype=np.int64, ndmin=1)
        if int(group.sum()) != n:
            raise ValueError(f"{qp}: query sizes sum to {int(group.sum())}, file has {n} rows")
        return X, y, group, order
    if qid.size not in (0, n):
        # sklearn keeps a qid only for the rows that have one.
        line = _first_line_without_qid(path)
        where = f"line {line} has" if line is not None else f"{n - qid.size} rows have"
        raise ValueError(f"{path}: {where} no qid: field while other rows have one; give "
                         "every row a qid (the rows of one query share it), or none (no "
                         "query structure)")
    if qid.size == 0 or not np.any(qid):
        return X, y, None, order
    gathered, group = _group_rows(qid)
    if np.any(gathered != order):
        X, y, order = X[gathered], y[gathered], gathered
    return X, y, group, order


def _first_line_without_qid(path: Path) -> int | None:
    """1-based number of the first data line of an SVMlight file without a ``qid:``."""
    import bz2
    import gzip

    opener = {".gz": gzip.open, ".bz2": bz2.open}.get(path.suffix.lower(), open)
    with opener(path, "rt", errors="replace") as fh:
        for number, line in enumerate(fh, 1):
            tokens = line.split("#", 1)[0].split()
            if tokens and not any(t.startswith("qid:") for t in tokens[1:]):
                return number
    return None


def make_ranking(n_queries: int = 3000, rows_per_query: int = 100, n_features: int = 50,
                 n_grades: int = 5, noise: float = 1.0, seed: int = 0,
                 ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
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


def _group_rows(qid: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Row order that makes each query contiguous (queries in order of first appearance,
    rows in file order within a query) and the query sizes in that order: the one rule
    by which the loaders gather the rows of a query id."""
    _, first, inverse = np.unique(qid, return_index=True, return_inverse=True)
    rank_of_query = np.argsort(np.argsort(first, kind="stable"), kind="stable")
    key = rank_of_query[inverse.ravel()]
    order = np.argsort(key, kind="stable").astype(np.int64, copy=False)
    group = np.bincount(key, minlength=first.size).astype(np.int64)
    return order, group


class NonNumericColumnsError(ValueError):
    """Feature columns of a table that are not numeric.

    Attributes
    ----------
    columns : tuple of str
        Their names.
    problem : str
        The message without its advice (which names :func:`load_table`'s parameters),
        for callers that offer other ways out.
    """

    def __init__(self, problem: str, columns: list[str]) -> None:
        self.problem = problem
        self.columns = tuple(columns)
        super().__init__(f"{problem}; encode them as numbers in the file, or leave them out "
                         f"of the features (drop_cols={list(self.columns)!r}, or list the "
                         "features to use in feature_cols)")


# File suffixes that load_data reads as tables (load_table); anything else is LETOR.
TABLE_SUFFIXES = (".csv", ".tsv", ".parquet", ".pq")


def load_table(path: str | Path, label_col: str, qid_col: str | None = None,
               feature_cols: list[str] | None = None, *, drop_cols: list[str] | None = None,
               return_order: bool = False) -> tuple[Any, ...]:
    """Load a CSV (``.csv``, ``.tsv``, ``.txt``) or Parquet (``.parquet``, ``.pq``) table.

    Parameters
    ----------
    path : path
        The table; CSV needs a header row (the column names).
    label_col : str
        Column of labels (grades for ranking, 0/1 for binary).
    qid_col : str, optional
        Column of query ids (numbers or strings, none missing). Rows of one query need
        not be adjacent: they are gathered, queries in order of first appearance and
        rows of a query in file order, so rows may come back in another order than the
        file's (ids 7, 3, 7 give rows 0, 2, 1; ``order`` maps them back). Without it
        the data have no query structure (group-less ranking or binary).
    feature_cols : list of str, optional
        Feature columns, in this order; default every column other than the label,
        the qid and ``drop_cols``, in the table's order.
    drop_cols : list of str, optional
        Columns left out of the default features (identifiers, text); not with
        ``feature_cols``.
    return_order : bool, default False
        Also return ``order`` (see below).

    Returns
    -------
    X : ndarray of float64
        Missing values are NaN (the boosters' missing values).
    y : ndarray of float64
    group : ndarray of int64 or None
        Query sizes in row order (``None`` without ``qid_col``).
    feature_names : list of str
        The names of ``X``'s columns.
    order : ndarray of int64, only with ``return_order=True``
        The table row (0-based) of each returned row: ``in_file_order[order] =
        per_row_result``.

    Raises
    ------
    NonNumericColumnsError
        A feature column is not numeric (text, dates): gbrank does not encode such
        columns; the error names them (a ``ValueError``).
    ValueError
        A named column does not exist, the label is not numeric or is missing, a query
        id is missing, or a column is both a feature and the label or qid.
    """
    import pandas as pd

    path = Path(path)
    if not path.exists():
        raise FileNotFoundError(f"{path}: no such file")
    suffix = path.suffix.lower()
    try:
        if suffix in (".parquet", ".pq"):
            df = pd.read_parquet(path)
        else:
            df = pd.read_csv(path, sep="\t" if suffix == ".tsv" else ",")
    except ImportError as exc:
        raise ImportError(f"{path}: reading Parquet needs pyarrow ({exc})") from None
    except Exception as exc:  # pandas raises many parser types
        raise ValueError(f"{path}: cannot parse as a table: {exc}") from None
    cols = ", ".join(map(str, df.columns[:12])) + (", ..." if df.shape[1] > 12 else "")
    for name, col in (("label_col", label_col), ("qid_col", qid_col)):
        if col is not None and col not in df.columns:
            raise ValueError(f"{path}: {name}={col!r} is not a column (columns: {cols})")
    for name, given in (("feature_cols", feature_cols), ("drop_cols", drop_cols)):
        unknown = [c for c in given or () if c not in df.columns]
        if unknown:
            raise ValueError(f"{path}: {name} names {len(unknown)} column(s) the table does "
                             f"not have: {unknown!r} (columns: {cols})")
    if feature_cols is not None and drop_cols:
        raise ValueError(f"{path}: pass feature_cols or drop_cols, not both")
    if feature_cols is None:
        feature_cols = [c for c in df.columns
                        if c not in (label_col, qid_col) and c not in (drop_cols or ())]
    else:
        feature_cols = list(feature_cols)
        for name, col in (("label_col", label_col), ("qid_col", qid_col)):
            if col is not None and col in feature_cols:
                raise ValueError(f"{path}: feature_cols includes {col!r}, the {name}")
    if not feature_cols:
        raise ValueError(f"{path}: no feature columns besides {label_col!r}"
                         + (f" and {qid_col!r}" if qid_col is not None else ""))
    text = [c for c in feature_cols if not pd.api.types.is_numeric_dtype(df[c])]
    if text:
        first = df[text[0]].dropna()
        example = f", e.g. {first.iloc[0]!r}" if len(first) else ""
        raise NonNumericColumnsError(
            f"{path}: {len(text)} feature column(s) are not numeric: {text!r} "
            f"({text[0]!r} has dtype {df[text[0]].dtype}{example}); gbrank does not encode "
            "text or date columns", text)
    y = pd.to_numeric(df[label_col], errors="coerce").to_numpy(np.float64)
    if not np.all(np.isfinite(y)):
        bad = int(np.flatnonzero(~np.isfinite(y))[0])
        raise ValueError(f"{path}: label column {label_col!r} has a non-numeric or missing "
                         f"value (first at row {bad})")
    X = df[feature_cols].to_numpy(dtype=np.float64, na_value=np.nan)
    group = None
    order = np.arange(len(df), dtype=np.int64)
    if qid_col is not None:
        missing = np.flatnonzero(df[qid_col].isna().to_numpy())
        if missing.size:
            raise ValueError(f"{path}: qid column {qid_col!r} has {missing.size} missing "
                             f"value(s) (first at row {int(missing[0])}); every row needs "
                             "the id of its query")
        order, group = _group_rows(df[qid_col].to_numpy())
        X, y = X[order], y[order]
    out = (X, y, group, [str(c) for c in feature_cols])
    return (*out, order) if return_order else out


def load_data(path: str | Path, *, label_col: str | None = None, qid_col: str | None = None,
              query_path: str | Path | None = None, feature_cols: list[str] | None = None,
              drop_cols: list[str] | None = None, return_order: bool = False,
              ) -> tuple[Any, ...]:
    """Load any supported file by its extension: CSV/TSV/Parquet tables
    (:func:`load_table`, ``label_col`` required; ``feature_cols`` and ``drop_cols`` as
    there) or LETOR/SVMlight text (:func:`load_letor`: a ``.query`` file beside it, or
    ``qid:`` fields, or neither).

    Rows of one query id are gathered as the two loaders describe (queries in order of
    first appearance, rows of a query in file order); ``return_order=True`` also
    returns ``order``, the file row of each returned row.

    Returns
    -------
    X : ndarray or scipy.sparse.csr_matrix
    y : ndarray of float64
    group : ndarray of int64 or None
        ``None`` when the file has no query structure.
    order : ndarray of int64, only with ``return_order=True``
    """
    path = Path(path)
    if not path.exists():
        raise FileNotFoundError(f"{path}: no such file")
    if path.suffix.lower() in TABLE_SUFFIXES:
        if label_col is None:
            raise ValueError(f"{path}: a table needs label_col (the column of labels)")
        X, y, group, _, order = load_table(path, label_col, qid_col, feature_cols,
                                           drop_cols=drop_cols, return_order=True)
    else:
        if feature_cols is not None or drop_cols:
            raise ValueError(f"{path}: feature_cols and drop_cols choose columns of a table "
                             "(CSV/Parquet); this is read as LETOR/SVMlight")
        X, y, group, order = _read_letor(path, query_path)
    return (X, y, group, order) if return_order else (X, y, group)


# -- click logs ---------------------------------------------------------------------------------


@dataclass(frozen=True)
class ClickLog:
    """Simulated clicks on the rows a logging ranker displayed (see :func:`simulate_clicks`).

    Every array has one entry per logged row: a displayed row, once (``sessions="sum"``)
    or once per session (``sessions="keep"``), grouped by query (or by query and
    session) in display order.

    Attributes
    ----------
    rows : ndarray of int64
        Index of the row in the data given to the simulation.
    group : ndarray of int64
        Sizes of the logged queries (sessions when kept), in row order.
    qid : ndarray of int64
        The query (index into the input queries) of every logged row.
    position : ndarray of int64
        1-based display rank under the logging ranker.
    clicks : ndarray of float64
        Clicks: 0/1 per session, or the number of sessions that clicked the row.
    n_sessions : int
        Sessions simulated per query.
    examination : ndarray of float64
        P(examined | position) of the position-based user for positions 1…top_n (the
        true propensities; a cascade user's examination depends on the clicks above).
    """

    rows: np.ndarray
    group: np.ndarray
    qid: np.ndarray
    position: np.ndarray
    clicks: np.ndarray
    n_sessions: int
    examination: np.ndarray


def simulate_clicks(y: Any, group: Any = None, logging_scores: Any = None, *, qid: Any = None,
                    top_n: int = 10, user: str = "position", eta: float = 1.0,
                    epsilon_minus: float = 0.1, epsilon_plus: float = 1.0,
                    max_grade: int | None = None, stop_after_click: float = 1.0,
                    n_sessions: int = 1, sessions: str = "sum", seed: int = 0) -> ClickLog:
    r"""Clicks of simulated users on the top of each query, for learning and evaluating
    position-debiased ranking on graded data (the protocol of the unbiased
    learning-to-rank literature).

    A logging ranker (``logging_scores``, e.g. a weak model's predictions) orders each
    query — scores descending, ties by row order — and displays its top ``top_n``
    rows. A row of grade l at display position p is clicked in a session when it is
    examined and found attractive; attractiveness is

    .. math:: \epsilon^- + (\epsilon^+ - \epsilon^-)\frac{2^l - 1}{2^{g_{max}} - 1},

    and examination follows the ``user`` model:

    - ``"position"`` (position-based model): examined with probability
      :math:`(1/p)^\eta`, independently of everything else;
    - ``"cascade"``: the user reads from the top; after a click they stop with
      probability ``stop_after_click`` (1: the classic cascade model, at most one click)
      and otherwise read on to the end of the list.

    One random stream (``seed``) draws every session of every query, so a simulation is
    reproducible and a larger ``n_sessions`` extends, not replaces, a smaller one only
    when nothing else changes.

    Parameters
    ----------
    y : array-like
        True grades (non-negative integers).
    group, qid : array-like, optional
        Query structure as everywhere in gbrank (neither: one query).
    logging_scores : array-like
        Scores of the logging ranker, one per row.
    top_n : int, default 10
        Rows displayed per query.
    user : {"position", "cascade"}, default "position"
    eta : float, default 1.0
        Severity η ≥ 0 of the position bias (position-based user).
    epsilon_minus, epsilon_plus : float, default 0.1 and 1.0
        Click probabilities of an examined row of the lowest and the top grade
        (click noise; ``0 ≤ ε⁻ ≤ ε⁺ ≤ 1``).
    max_grade : int, optional
        :math:`g_{max}`; default the largest grade in ``y``.
    stop_after_click : float, default 1.0
        Cascade user: probability of stopping after a click.
    n_sessions : int, default 1
        Sessions per query.
    sessions : {"sum", "keep"}, default "sum"
        ``"sum"``: one logged row per displayed row with its number of clicks over the
        sessions; ``"keep"``: one logged query per session with 0/1 clicks.
    seed : int, default 0

    Returns
    -------
    ClickLog

    Examples
    --------
    >>> import numpy as np
    >>> from gbrank.datasets import make_ranking, simulate_clicks
    >>> X, y, group = make_ranking(n_queries=50, rows_per_query=20, n_features=5)
    >>> weak = X[:, 0] + np.random.default_rng(0).standard_normal(y.size)
    >>> log = simulate_clicks(y, group, weak, top_n=10, eta=1.0, n_sessions=5)
    >>> log.rows.size, int(log.position.max())
    (500, 10)
    """
    from gbrank._validation import check_choice, prepare_ranking

    y_arr = np.asarray(y, dtype=np.float64) if y is not None else None
    if logging_scores is None:
        raise ValueError("simulate_clicks needs logging_scores: the scores of the ranker "
                         "whose top rows the users saw")
    y_q, s_q, queries = prepare_ranking(y_arr, logging_scores, group, qid, None,
                                        integer_grades=True)
    top_n = check_integer(top_n, "top_n", 1)
    user = check_choice(user, "user", ("position", "cascade"))
    eta = check_number(eta, "eta", 0.0)
    eps_minus = check_number(epsilon_minus, "epsilon_minus", 0.0, 1.0)
    eps_plus = check_number(epsilon_plus, "epsilon_plus", eps_minus, 1.0)
    stop = check_number(stop_after_click, "stop_after_click", 0.0, 1.0)
    n_sessions = check_integer(n_sessions, "n_sessions", 1)
    sessions = check_choice(sessions, "sessions", ("sum", "keep"))
    top = float(y_q.max()) if max_grade is None else float(
        check_integer(max_grade, "max_grade", 0))
    if y_q.size and float(y_q.max()) > top:
        raise ValueError(f"max_grade={max_grade} is below the largest grade {y_q.max()!r}")
    order_in = np.arange(y_q.size) if queries.order is None else queries.order
    # The displayed rows, per query in display order.
    shown, pos, qix = [], [], []
    offsets = queries.offsets
    for q in range(queries.n_queries):
        lo, hi = int(offsets[q]), int(offsets[q + 1])
        rank = np.argsort(-s_q[lo:hi], kind="stable")[:top_n]
        shown.append(lo + rank)
        pos.append(np.arange(1, rank.size + 1))
        qix.append(np.full(rank.size, q))
    shown_q = np.concatenate(shown) if shown else np.empty(0, dtype=np.int64)
    position = np.concatenate(pos) if pos else np.empty(0, dtype=np.int64)
    query = np.concatenate(qix) if qix else np.empty(0, dtype=np.int64)
    attractive = eps_minus + (eps_plus - eps_minus) * (
        np.expm1(y_q[shown_q] * np.log(2.0)) / np.expm1(top * np.log(2.0)) if top > 0
        else np.zeros(shown_q.size))
    examination = (1.0 / np.arange(1, top_n + 1)) ** eta
    rng = np.random.default_rng(seed)
    clicks = np.empty((n_sessions, shown_q.size))
    sizes = np.array([p.size for p in pos], dtype=np.int64)
    for t in range(n_sessions):
        if user == "position":
            seen = rng.random(shown_q.size) < examination[position - 1]
            clicks[t] = seen & (rng.random(shown_q.size) < attractive)
        else:
            u_click, u_stop = rng.random(shown_q.size), rng.random(shown_q.size)
            reading = np.ones(queries.n_queries, dtype=bool)
            for p in range(1, top_n + 1):
                at = np.flatnonzero(position == p)  # one row per query long enough
                q_at = query[at]
                c = reading[q_at] & (u_click[at] < attractive[at])
                clicks[t, at] = c
                reading[q_at[c & (u_stop[at] < stop)]] = False
    rows = order_in[shown_q]
    if sessions == "sum":
        return ClickLog(rows=rows, group=sizes, qid=query, position=position,
                        clicks=clicks.sum(axis=0), n_sessions=n_sessions,
                        examination=examination)
    starts = np.concatenate(([0], np.cumsum(sizes)))
    take = np.concatenate([np.arange(starts[q], starts[q + 1])
                           for q in range(queries.n_queries) for _ in range(n_sessions)]
                          ) if shown_q.size else np.empty(0, dtype=np.int64)
    session_of = np.concatenate([np.full(sizes[q], t) for q in range(queries.n_queries)
                                 for t in range(n_sessions)]) if shown_q.size else take
    return ClickLog(rows=rows[take], group=np.repeat(sizes, n_sessions), qid=query[take],
                    position=position[take], clicks=clicks[session_of, take],
                    n_sessions=n_sessions, examination=examination)
