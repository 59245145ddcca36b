"""LETOR / SVMlight files: one file, or the five parts of a LETOR 4.0 set."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np

from gbrank._validation import check_integer
from gbrank.datasets._tables import _group_rows


def load_letor(path: str | Path, query_path: str | Path | None = None,
               n_features: int | None = None, *, return_order: bool = False,
               zero_based: Any = "auto") -> tuple[Any, ...]:
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
    zero_based : bool or "auto", default "auto"
        Whether feature index ``i`` is column ``i`` (True) or ``i - 1`` (False, LETOR's
        indices from 1); ``"auto"``: zero-based exactly when index 0 occurs in the file,
        as scikit-learn's ``load_svmlight_file``. A training and a test file read apart
        can then disagree (one lacks feature 0, and every column of it is shifted): pass
        the same value to both (``True`` is always safe: a one-based file then has an
        empty column 0) and the same ``n_features``. :func:`load_letor_files` decides
        for several files at once.

    Returns
    -------
    X : scipy.sparse.csr_matrix
    y : ndarray of float64
    group : ndarray of int64
        Query sizes in row order. A file with neither a ``.query`` file nor ``qid:``
        fields, or with ``qid:0`` on every row, has no query structure: one query of
        all rows, with a ``UserWarning`` (:func:`load_data` returns ``None`` there).
    order : ndarray of int64, only with ``return_order=True``
        The file row (0-based, data lines only) of each returned row.

    Notes
    -----
    A query id names one query wherever its rows are in the file: rows of a query need
    not be adjacent. They are gathered, queries in ascending order of their ids
    (``GBRanker``'s rule) and rows of a query in file order, so rows may come back in
    another order than the file's
    (``qid`` 1, 1, 2, 2, 1 gives rows 0, 1, 4, 2, 3 and ``group`` [3, 2]); ``order``
    maps them back: ``in_file_order[order] = per_row_result``.

    Either every row has a ``qid:`` field or none has; a file that mixes them is
    refused, naming the first line without one.

    Examples
    --------
    Query 1's rows are not adjacent in the file; they are gathered first:

    >>> import tempfile
    >>> from pathlib import Path
    >>> from gbrank.datasets import load_letor
    >>> with tempfile.TemporaryDirectory() as tmp:
    ...     path = Path(tmp) / "train.txt"
    ...     _ = path.write_text("2 qid:1 1:0.5 2:1.0\\n"
    ...                         "0 qid:1 1:0.1\\n"
    ...                         "1 qid:2 2:0.3\\n"
    ...                         "0 qid:1 1:0.2 2:0.2\\n")
    ...     X, y, group, order = load_letor(path, return_order=True)
    >>> X.shape, y.tolist(), group.tolist(), order.tolist()
    ((4, 2), [2.0, 0.0, 0.0, 1.0], [3, 1], [0, 1, 3, 2])
    >>> X.toarray().tolist()
    [[0.5, 1.0], [0.1, 0.0], [0.2, 0.2], [0.0, 0.3]]
    """
    X, y, group, order = _read_letor(path, query_path, n_features, zero_based)
    if group is None:
        import warnings

        # Said, not silent: a .query file left behind reads as one list of every row.
        warnings.warn(f"{path}: no query structure (no qid: fields, no {Path(path).name}"
                      f".query file beside it): read as one query of all {X.shape[0]} "
                      "rows; give a query-size file elsewhere as query_path=",
                      UserWarning, stacklevel=2)
        group = np.array([X.shape[0]], dtype=np.int64)
    return (X, y, group, order) if return_order else (X, y, group)


#: The standard LETOR 4.0 rotation: fold k trains on three parts, validates on the
#: fourth and tests on the fifth (MQ2008/MQ2007 ``readme``: Fold1 = S1-S3 / S4 / S5).
LETOR_PARTS = ("S1", "S2", "S3", "S4", "S5")


def load_letor_folds(folder: str | Path) -> dict[str, tuple[Any, np.ndarray, np.ndarray]]:
    """Load the five parts of a LETOR 4.0 set (``S1.txt`` … ``S5.txt`` in ``folder``, as
    MQ2008 and MQ2007 ship) with a common feature width.

    Parameters
    ----------
    folder : path
        The folder holding ``S1.txt`` … ``S5.txt`` (each may have its ``.query`` file).
        Feature indices are read one-based unless some part holds index 0, decided for
        the five parts at once (as :func:`load_letor_files` does).

    Returns
    -------
    dict
        ``{"S1": (X, y, group), …}``: a CSR matrix, float64 labels and query sizes per
        part (rows gathered by query as :func:`load_letor` does). A part without query
        ids (``qid:`` fields or a ``.query`` file) is refused: a LETOR set is ranked
        within its queries.

    Examples
    --------
    >>> from gbrank.datasets import letor_fold, load_letor_folds  # doctest: +SKIP
    >>> parts = load_letor_folds("MQ2008")  # doctest: +SKIP
    >>> train, valid, test = letor_fold(parts, 1)  # doctest: +SKIP
    """
    folder = Path(folder)
    missing = [p for p in LETOR_PARTS if not (folder / f"{p}.txt").exists()]
    if missing:
        raise FileNotFoundError(f"{folder}: no {', '.join(m + '.txt' for m in missing)} "
                                "(a LETOR 4.0 folder holds S1.txt … S5.txt)")
    files = [folder / f"{p}.txt" for p in LETOR_PARTS]
    loaded = _together([_queries(f) for f in files], files)
    width = max(X.shape[1] for X, _, _ in loaded)
    return {p: _widen(part, width) for p, part in zip(LETOR_PARTS, loaded, strict=True)}


def letor_fold(parts: dict[str, tuple[Any, np.ndarray, np.ndarray]], fold: int,
               ) -> tuple[tuple[Any, np.ndarray, np.ndarray], ...]:
    """Training, validation and test sets of LETOR fold ``fold`` (1-5): training on the
    three parts from ``S<fold>`` on (cyclically), validation on the next, test on the
    last, as the LETOR 4.0 readme lists them.

    Parameters
    ----------
    parts : dict
        ``{"S1": (X, y, group), …, "S5": …}``, as :func:`load_letor_folds` returns.
    fold : int
        1 to 5.

    Returns
    -------
    (train, valid, test)
        Each ``(X, y, group)``, the training set's parts stacked in order.

    Examples
    --------
    Five tiny parts of two queries each; fold 2 trains on S2, S3, S4, validates on S5
    and tests on S1:

    >>> import numpy as np
    >>> from scipy.sparse import csr_matrix
    >>> from gbrank.datasets import letor_fold
    >>> parts = {f"S{i}": (csr_matrix(np.full((4, 2), float(i))), np.array([1.0, 0, 0, 1]),
    ...                    np.array([2, 2])) for i in range(1, 6)}
    >>> (X, y, group), valid, test = letor_fold(parts, 2)
    >>> X.shape, group.tolist()
    ((12, 2), [2, 2, 2, 2, 2, 2])
    >>> X[::4, 0].toarray().ravel().tolist(), float(valid[0][0, 0]), float(test[0][0, 0])
    ([2.0, 3.0, 4.0], 5.0, 1.0)
    """
    names = letor_rotation(fold)
    return _stack([parts[n] for n in names[:3]]), parts[names[3]], parts[names[4]]


def letor_rotation(fold: int) -> tuple[str, ...]:
    """The parts of LETOR 4.0 fold ``fold`` (1-5) in its roles: three training parts, the
    validation part, the test part (the readme's rotation: fold k starts at ``S<k>``).

    Parameters
    ----------
    fold : int
        1 to 5.

    Returns
    -------
    tuple of str
        Five names of :data:`LETOR_PARTS`: three training parts, validation, test.

    Examples
    --------
    >>> from gbrank.datasets import letor_rotation
    >>> letor_rotation(1), letor_rotation(2)[-1]
    (('S1', 'S2', 'S3', 'S4', 'S5'), 'S1')
    """
    fold = check_integer(fold, "fold", 1, 5)
    return tuple(LETOR_PARTS[(fold - 1 + i) % 5] for i in range(5))


def _stack(sets: list[tuple[Any, np.ndarray, np.ndarray]], n_features: int | None = None,
           ) -> tuple[Any, np.ndarray, np.ndarray]:
    """Several LETOR sets ``(X, y, group)`` as one, in order, each query kept whole, the
    CSR features widened to a common width (the widest set's, or ``n_features``)."""
    from scipy.sparse import vstack

    width = n_features or max(X.shape[1] for X, _, _ in sets)
    return (vstack([_widen(s, width)[0] for s in sets]).tocsr(),
            np.concatenate([y for _, y, _ in sets]), np.concatenate([g for _, _, g in sets]))


def load_letor_files(paths: list[str | Path], n_features: int | None = None, *,
                     zero_based: Any = "auto") -> tuple[Any, np.ndarray, np.ndarray]:
    """LETOR/SVMlight files as one set of queries, in order, each file as
    :func:`load_letor` reads it and widened to a common width: the training and
    validation files of a fold tuned on together, or a test file at their width
    (``n_features``). A file without query ids
    (``qid:`` fields or a ``.query`` file) is refused: a LETOR set is ranked within its
    queries.

    Parameters
    ----------
    paths : list of path
        The files, stacked in this order (each may have its ``.query`` file).
    n_features : int, optional
        Width of ``X``; a file with more features is refused. Default: the widest
        file's width.
    zero_based : bool or "auto", default "auto"
        As in :func:`load_letor`, decided for all the files at once (``"auto"``:
        zero-based when any of them holds feature index 0), so a file that lacks
        feature 0 is not shifted against the others.

    Returns
    -------
    X : scipy.sparse.csr_matrix
    y : ndarray of float64
    group : ndarray of int64
        Query sizes in row order, the files' queries one after another.

    Examples
    --------
    >>> import tempfile
    >>> from pathlib import Path
    >>> from gbrank.datasets import load_letor_files
    >>> with tempfile.TemporaryDirectory() as tmp:
    ...     a, b = Path(tmp) / "train.txt", Path(tmp) / "vali.txt"
    ...     _ = a.write_text("2 qid:1 1:0.5\\n0 qid:1 1:0.1\\n")
    ...     _ = b.write_text("1 qid:7 2:0.3\\n0 qid:7 1:0.2\\n0 qid:8 2:0.9\\n")
    ...     X, y, group = load_letor_files([a, b])
    >>> X.shape, group.tolist()
    ((5, 2), [2, 2, 1])
    """
    paths = [Path(p) for p in paths]
    parts = _together([_queries(p) for p in paths], paths, zero_based)
    if n_features is not None:
        parts = [(_based(X, p, True, n_features), y, g) for (X, y, g), p in zip(
            parts, paths, strict=True)]
    return _stack(parts, n_features)


def number_alike(*parts: Any) -> list:
    """Feature matrices of one data set read apart, numbered as one.

    SVMlight/LETOR files name features by index: LETOR's start at 1, others at 0. Read
    with ``zero_based=True`` (column ``i`` holds index ``i``), parts of one data set are
    numbered here as the set is: one-based (index ``i`` to column ``i - 1``) unless some
    part holds index 0, and all at the widest part's width. Decided part by part, a
    file that lacks feature 0 would be shifted against the others.

    Parameters
    ----------
    *parts : sparse matrices
        The parts as read zero-based (``load_letor(..., zero_based=True)``,
        ``load_letor_files(..., zero_based=True)``, ``load_data(..., zero_based=True)``).

    Returns
    -------
    list of scipy.sparse.csr_matrix
        The parts in the given order, one numbering, one width.

    Examples
    --------
    >>> import numpy as np
    >>> from scipy.sparse import csr_matrix
    >>> from gbrank.datasets import number_alike
    >>> train = csr_matrix(np.array([[0.0, 1.0, 2.0]]))  # indices 1, 2: LETOR's
    >>> test = csr_matrix(np.array([[0.0, 3.0, 0.0, 4.0]]))  # indices 1, 3
    >>> [m.toarray().tolist() for m in number_alike(train, test)]
    [[[1.0, 2.0, 0.0]], [[3.0, 0.0, 4.0]]]
    """
    from scipy.sparse import csr_matrix

    parts = [csr_matrix(P) for P in parts]
    if not any(_uses_index_0(P) for P in parts):
        parts = [P[:, 1:] if P.shape[1] else P for P in parts]
    width = max((P.shape[1] for P in parts), default=0)
    return [csr_matrix((P.data, P.indices, P.indptr), shape=(P.shape[0], width))
            for P in parts]


def _queries(path: Path):
    """Raw ``(X, y, group)`` (indices as columns) of a LETOR file that has query ids,
    else a ValueError."""
    X, y, group, _ = _read_raw(path, None)
    if group is None:
        raise ValueError(f"{path}: no query structure (no qid: fields, no {path.name}.query "
                         "file of query sizes beside it); a LETOR set is ranked within its "
                         "queries: give every row the qid of its query")
    return X, y, group


def _widen(part: tuple[Any, np.ndarray, np.ndarray], width: int):
    """``part`` with its CSR features at ``width`` columns."""
    from scipy.sparse import csr_matrix

    X, y, g = part
    X = X.tocsr()
    return csr_matrix((X.data, X.indices, X.indptr), shape=(X.shape[0], width)), y, g


def _read_letor(path: str | Path, query_path: str | Path | None = None,
                n_features: int | None = None, zero_based: Any = "auto"):
    """``X, y, group, order`` of :func:`load_letor`, ``group=None`` without query
    structure. A file sklearn cannot parse raises a ValueError naming it."""
    X, y, group, order = _read_raw(path, query_path)
    return _based(X, path, zero_based, n_features), y, group, order


def _uses_index_0(X: Any) -> bool:
    """Whether a raw (zero-based) CSR matrix holds an entry of feature index 0."""
    return bool(np.any(X.indices == 0))


def _based(X: Any, path: Any, zero_based: Any, n_features: int | None) -> Any:
    """Raw features (column ``i`` = index ``i``) as the file's indices mean them:
    zero-based (as written), or one-based (index ``i`` is column ``i - 1``); ``"auto"``:
    zero-based exactly when index 0 occurs. Widened to ``n_features``."""
    from scipy.sparse import csr_matrix

    uses0 = _uses_index_0(X)
    if zero_based == "auto":
        zero_based = uses0
    if not zero_based:
        if uses0:
            raise ValueError(f"{path}: feature index 0 in a file read one-based (LETOR's "
                             "indices start at 1); read it zero_based=True")
        X = X[:, 1:] if X.shape[1] else X
    if n_features is not None:
        if X.shape[1] > n_features:
            raise ValueError(f"{path}: {X.shape[1]} features, more than n_features="
                             f"{n_features}")
        X = csr_matrix((X.data, X.indices, X.indptr), shape=(X.shape[0], n_features))
    return X


def _together(raws: list, paths: list, zero_based: Any = "auto") -> list:
    """Raw parts read as one set: ``"auto"`` decides for all of them at once (zero-based
    when any holds index 0), so a part that lacks feature 0 is not shifted against the
    others."""
    if zero_based == "auto":
        zero_based = any(_uses_index_0(r[0]) for r in raws)
    return [(_based(r[0], p, zero_based, None), *r[1:]) for r, p in zip(raws, paths,
                                                                       strict=True)]


def _read_raw(path: str | Path, query_path: str | Path | None = None):
    """``X, y, group, order`` with the file's indices as columns (zero-based, as
    written)."""
    from sklearn.datasets import load_svmlight_file

    path = Path(path)
    if not path.exists():
        raise FileNotFoundError(f"{path}: no such file")
    qp = Path(query_path) if query_path is not None else Path(str(path) + ".query")
    try:
        X, y, qid = load_svmlight_file(str(path), zero_based=True, query_id=True)
    except ValueError as exc:
        msg = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
        raise ValueError(
            f"{path}: cannot parse as LETOR/SVMlight ({msg}); a table of columns needs a "
            "header row and the .csv, .tsv or .parquet extension (then --label-col / "
            "label_col names the label)") from None
    n = X.shape[0]
    if n == 0:
        raise ValueError(f"{path}: no rows")
    y = np.asarray(y, dtype=np.float64)
    order = np.arange(n, dtype=np.int64)
    if qp.exists():
        group = np.loadtxt(qp, dtype=np.int64, ndmin=1)
        if int(group.sum()) != n:
            raise ValueError(f"{qp}: query sizes sum to {int(group.sum())}, file has {n} rows")
        if qid.size == n and np.any(qid):  # both sources: they must agree
            runs = np.diff(np.flatnonzero(np.r_[True, qid[1:] != qid[:-1], True]))
            if not np.array_equal(runs, group):
                raise ValueError(
                    f"{qp} gives {group.size} queries and the qid: fields of {path} "
                    f"{runs.size} runs of equal ids: they disagree (a stale .query file?); "
                    "remove one of them")
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
