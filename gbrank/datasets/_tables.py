"""Tables (CSV, TSV, Parquet), and the one rule that gathers a file's rows by query id."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np

from gbrank._queries import query_order


def _group_rows(qid: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Row order that makes each query contiguous and the query sizes in that order, by
    gbrank's one gathering rule (:func:`gbrank._queries.query_order`: queries in
    ascending order of their ids, rows in file order within a query), the rule
    ``GBRanker`` follows too, so that a model trained on a loaded table and one trained
    by ``GBRanker`` on the table as read are the same."""
    order = query_order(qid).astype(np.int64, copy=False)
    ids = np.asarray(qid)[order]
    starts = np.flatnonzero(np.r_[True, ids[1:] != ids[:-1]])
    group = np.diff(np.r_[starts, ids.size]).astype(np.int64)
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

    Examples
    --------
    >>> import tempfile
    >>> from pathlib import Path
    >>> from gbrank.datasets import NonNumericColumnsError, load_table
    >>> with tempfile.TemporaryDirectory() as tmp:
    ...     path = Path(tmp) / "table.csv"
    ...     _ = path.write_text("query,label,price,name\\n7,1,9.5,a\\n3,0,2.0,b\\n")
    ...     try:
    ...         load_table(path, "label", "query")
    ...     except NonNumericColumnsError as exc:
    ...         print(exc.columns, isinstance(exc, ValueError))
    ('name',) True
    """

    def __init__(self, problem: str, columns: list[str]) -> None:
        self.problem = problem
        self.columns = tuple(columns)
        super().__init__(f"{problem}; encode them as numbers in the file, or leave them out "
                         f"of the features (drop_cols={list(self.columns)!r}, or list the "
                         "features to use in feature_cols)")


# File suffixes that load_data reads as tables (load_table); anything else is LETOR.
TABLE_SUFFIXES = (".csv", ".tsv", ".parquet", ".pq")


def table_columns(path: str | Path) -> list[str]:
    """The column names of a CSV/TSV or Parquet table, read from its header alone.

    Parameters
    ----------
    path : path
        The table: Parquet for ``.parquet`` and ``.pq``, tab-separated for ``.tsv``,
        else comma-separated with a header row.

    Returns
    -------
    list of str

    Examples
    --------
    >>> import tempfile
    >>> from pathlib import Path
    >>> from gbrank.datasets import table_columns
    >>> with tempfile.TemporaryDirectory() as tmp:
    ...     path = Path(tmp) / "table.csv"
    ...     _ = path.write_text("query,label,price\\n7,1,9.5\\n")
    ...     table_columns(path)
    ['query', 'label', 'price']
    """
    import pandas as pd

    path = Path(path)
    if path.suffix.lower() in (".parquet", ".pq"):
        import pyarrow.parquet as pq

        return [str(c) for c in pq.ParquetFile(path).schema_arrow.names]
    sep = "\t" if path.suffix.lower() == ".tsv" else ","
    return [str(c) for c in pd.read_csv(path, sep=sep, nrows=0).columns]


def _check_header(path: Path, df: Any, sep: str) -> None:
    """A text table's first line must be a header of distinct names: pandas renames a
    repeated name (``label`` → ``label.1``), which then trains as a feature; a file
    without a header or with another separator gets a header of data."""
    import csv

    with open(path, newline="", encoding="utf-8-sig", errors="replace") as f:
        header = next(csv.reader(f, delimiter=sep), [])
    twice = sorted({h for h in header if header.count(h) > 1})
    if twice:
        raise ValueError(f"{path}: the header names {twice!r} more than once (pandas would "
                         f"read the second as {twice[0] + '.1'!r}, a feature): rename or "
                         "drop the repeated columns")
    if df.shape[1] == 1 and any(c in str(df.columns[0]) for c in ";|"):
        raise ValueError(f"{path}: one column named {str(df.columns[0])[:60]!r}: the file "
                         f"seems separated by something other than {sep!r}; gbrank reads "
                         "comma-separated .csv and tab-separated .tsv files (decimal "
                         "points): convert it")
    numeric = 0
    for h in header:
        try:
            float(h)
            numeric += 1
        except ValueError:
            pass
    # all numbers, and not a frame's default column names 0, 1, 2, ... (or 1, 2, ...)
    counted = [str(i) for i in range(len(header))]
    if header and numeric == len(header) and header not in (
            counted, [str(i + 1) for i in range(len(header))]):
        raise ValueError(f"{path}: its first line ({', '.join(header[:6])}"
                         f"{', ...' if len(header) > 6 else ''}) is numbers, not column "
                         "names: the table needs a header row naming its columns")


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
        not be adjacent: they are gathered, queries in ascending order of their ids and
        rows of a query in file order (``GBRanker``'s rule), so rows may come back in
        another order than the file's (ids 7, 3, 7 give rows 1, 0, 2; ``order`` maps
        them back). Without it the data have no query structure (group-less ranking or
        binary).
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

    Examples
    --------
    Query 3's row comes first (ascending ids), then query 7's rows 0 and 2 of the file:

    >>> import tempfile
    >>> from pathlib import Path
    >>> from gbrank.datasets import load_table
    >>> with tempfile.TemporaryDirectory() as tmp:
    ...     path = Path(tmp) / "table.csv"
    ...     _ = path.write_text("query,label,price,name\\n"
    ...                         "7,1,9.5,a\\n"
    ...                         "3,0,2.0,b\\n"
    ...                         "7,0,4.0,c\\n")
    ...     X, y, group, names = load_table(path, "label", "query", drop_cols=["name"])
    >>> X.tolist(), y.tolist(), group.tolist(), names
    ([[2.0], [9.5], [4.0]], [0.0, 1.0, 0.0], [1, 2], ['price'])
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
    if suffix not in (".parquet", ".pq"):
        _check_header(path, df, "\t" if suffix == ".tsv" else ",")
    cols = ", ".join(map(str, df.columns[:12])) + (", ..." if df.shape[1] > 12 else "")
    if qid_col is not None and qid_col == label_col:
        raise ValueError(f"{path}: label_col and qid_col both name {label_col!r}: the "
                         "labels and the query ids are two columns")
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
        value = df[label_col].iloc[bad]
        raise ValueError(f"{path}: label column {label_col!r} has a non-numeric or missing "
                         f"value (first at row {bad}: {value!r}); labels are numbers: "
                         "grades or 0/1, classes as 0 … K−1 (encode text classes, e.g. "
                         "with pandas' factorize), and rows without a label left out")
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
