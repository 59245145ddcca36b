"""Loading any supported file by its extension: a table or LETOR/SVMlight text."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from gbrank.datasets._letor import _read_letor
from gbrank.datasets._tables import TABLE_SUFFIXES, load_table

__all__ = ["load_data"]


def load_data(path: str | Path, *, label_col: str | None = None, qid_col: str | None = None,
              query_path: str | Path | None = None, feature_cols: list[str] | None = None,
              drop_cols: list[str] | None = None, return_order: bool = False,
              n_features: int | None = None, zero_based: Any = "auto",
              ) -> tuple[Any, ...]:
    """Load any supported file by its extension: CSV/TSV/Parquet tables
    (:func:`load_table`, ``label_col`` required; ``feature_cols`` and ``drop_cols`` as
    there) or LETOR/SVMlight text (:func:`load_letor`: a ``.query`` file beside it, or
    ``qid:`` fields, or neither; ``n_features`` and ``zero_based`` as there, to align a
    test file's width and feature numbering with its training file's).

    Rows of one query id are gathered as the two loaders describe (queries in ascending
    order of their ids, rows of a query in file order); ``return_order=True`` also
    returns ``order``, the file row of each returned row. ``feature_cols`` or
    ``drop_cols`` for a LETOR file, and ``n_features`` for a table, are refused.

    Parameters
    ----------
    path : path
        The file. Suffixes in :data:`TABLE_SUFFIXES` are tables; anything else is read
        as LETOR/SVMlight.
    label_col : str, optional
        Table: the column of labels (required).
    qid_col : str, optional
        Table: the column of query ids; without it, no query structure.
    query_path : path, optional
        LETOR: one query size per line (default: ``path + ".query"`` if it exists,
        else the ``qid:`` fields).
    feature_cols : list of str, optional
        Table: the feature columns, in this order (default: every other column).
    drop_cols : list of str, optional
        Table: columns left out of the default features.
    return_order : bool, default False
        Also return ``order``.
    n_features : int, optional
        LETOR: width of ``X`` (to align a test file with its training file).
    zero_based : bool or "auto", default "auto"
        LETOR: whether feature index ``i`` is column ``i`` or ``i - 1``, as in
        :func:`load_letor`.

    Returns
    -------
    X : ndarray or scipy.sparse.csr_matrix
    y : ndarray of float64
    group : ndarray of int64 or None
        ``None`` when the file has no query structure.
    order : ndarray of int64, only with ``return_order=True``

    Examples
    --------
    >>> import tempfile
    >>> from pathlib import Path
    >>> from gbrank.datasets import load_data
    >>> with tempfile.TemporaryDirectory() as tmp:
    ...     table, letor = Path(tmp) / "rows.csv", Path(tmp) / "rows.txt"
    ...     _ = table.write_text("label,x0,x1\\n1,0.5,1.0\\n0,0.1,0.0\\n")
    ...     _ = letor.write_text("1 1:0.5 2:1.0\\n0 1:0.1\\n")  # no qid: no query structure
    ...     X1, y1, g1 = load_data(table, label_col="label")
    ...     X2, y2, g2 = load_data(letor)
    >>> X1.tolist() == X2.toarray().tolist(), y1.tolist(), g1, g2
    (True, [1.0, 0.0], None, None)
    """
    path = Path(path)
    if not path.exists():
        raise FileNotFoundError(f"{path}: no such file")
    if path.suffix.lower() in TABLE_SUFFIXES:
        if label_col is None:
            raise ValueError(f"{path}: a table needs label_col (the column of labels)")
        if n_features is not None:
            raise ValueError(f"{path}: n_features sets the width of a LETOR/SVMlight file; "
                             "a table's features are its columns")
        X, y, group, _, order = load_table(path, label_col, qid_col, feature_cols,
                                           drop_cols=drop_cols, return_order=True)
    else:
        if feature_cols is not None or drop_cols:
            raise ValueError(f"{path}: feature_cols and drop_cols choose columns of a table "
                             "(CSV/Parquet); this is read as LETOR/SVMlight")
        X, y, group, order = _read_letor(path, query_path, n_features, zero_based)
    return (X, y, group, order) if return_order else (X, y, group)
