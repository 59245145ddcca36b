"""What GBRanker reads from its input: the query ids and display positions, as columns
of ``X`` or as arguments (one source each), its validation set, and the refusals that
keep a ranker from training on the wrong lists (no query ids, ids left in ``X`` as a
feature, positions without queries)."""

from __future__ import annotations

from typing import Any

import numpy as np
from sklearn.utils import _safe_indexing

from gbrank._queries import id_like_names, query_order, query_structure, tie_order
from gbrank._validation import (
    as_float_array,
    check_finite,
    check_grades,
    check_positions,
    check_propensity,
)
from gbrank.sklearn._base import _is_frame, _refuse_booster_data


class _RankingInput:
    """GBRanker's readers of its input (a mixin: they read ``qid_col``,
    ``position_col``, ``scoring``, ``propensity`` and the fitted columns)."""

    def _qid_column(self, X: Any) -> int | None:
        """Position of the query-id column in ``X``, or ``None`` (see ``qid_col``)."""
        return self._named_column(X, self.qid_col, "qid_col", "qid")

    def _position_column(self, X: Any) -> int | None:
        """Position of the display-position column in ``X``, or ``None``."""
        at = self._named_column(X, self.position_col, "position_col", None)
        if at is not None and at == self._qid_column(X):
            raise ValueError(f"position_col={self.position_col!r} and qid_col="
                             f"{self.qid_col!r} name the same column of X")
        return at

    @staticmethod
    def _named_column(X: Any, col: Any, param: str, optional: str | None) -> int | None:
        """Index of the column ``col`` of ``X`` (``param``'s value); ``optional``: a
        name that is used when present and ignored otherwise."""
        if col is None:
            return None
        if isinstance(col, (int, np.integer)) and not isinstance(col, bool):
            width = X.shape[1]
            if not -width <= col < width:
                raise ValueError(f"{param}={col!r} is not a column index of X, which has "
                                 f"{width} columns")
            return int(col) % width
        if not isinstance(col, str):
            raise ValueError(f"{param} must be a column name (str), a column index (int) "
                             f"or None, got {col!r}")
        if _is_frame(X):
            names = [str(c) for c in X.columns]
            if col in names:
                return names.index(col)
        if col != optional:
            where = (f"columns: {', '.join(map(str, X.columns[:12]))}" if _is_frame(X)
                     else "X is not a DataFrame; name the column by its index")
            raise ValueError(f"{param}={col!r} is not a column of X ({where})")
        return None

    def _split_columns(self, X: Any) -> tuple[Any, np.ndarray | None, np.ndarray | None]:
        """``X`` without its query-id and position columns, and those columns (``None``
        where there is none)."""
        at_q, at_p = self._qid_column(X), self._position_column(X)
        drop = [a for a in (at_q, at_p) if a is not None]
        if not drop:
            return X, None, None

        def column(at: int | None) -> np.ndarray | None:
            if at is None:
                return None
            if _is_frame(X):
                return X.iloc[:, at].to_numpy()
            ids = X[:, [at]]
            return np.asarray(ids.todense() if hasattr(ids, "todense") else ids).ravel()

        ids, pos = column(at_q), column(at_p)
        if _is_frame(X):
            return X.drop(columns=X.columns[drop]), ids, pos
        keep = np.delete(np.arange(X.shape[1]), drop)
        return X[:, keep], ids, pos

    def _features(self, X: Any) -> tuple[Any, np.ndarray | None]:
        """``X`` without its query-id (and position) column, and the query ids
        (``None`` if it has none)."""
        X, ids, _ = self._split_columns(X)
        return X, ids

    def _query_ids(self, X: Any, qid: Any) -> tuple[Any, Any]:
        """Features and query ids from ``X``'s column or the ``qid`` argument (not both,
        unless they agree)."""
        X, in_X = self._features(X)
        if in_X is None:
            return X, qid
        if qid is not None and not np.array_equal(np.asarray(qid).ravel(), in_X):
            raise ValueError(
                f"query ids given twice, as the qid argument and as column {self.qid_col!r} "
                "of X, and they differ; pass one of them (qid_col=None ignores the column)")
        return X, in_X

    def _one_query_source(self, frame: Any, X: Any, qid: Any, group: Any, n: int,
                          groupless: bool, call: str = "fit",
                          objective_groupless: bool = False) -> Any:
        """Per-row query ids from the one source given (the column or ``qid``, or
        ``group`` sizes), ``None`` for declared group-less data; an error naming the
        fixes of ``call`` (``"fit"``, ``"score"`` or ``"eval_set"``) when there is none,
        or more than one."""
        if group is not None:
            if qid is not None:
                raise ValueError("query structure given twice, as group (query sizes) and "
                                 "as query ids (qid or a qid_col column of X): pass one")
            sizes = query_structure(n, group=group).sizes
            qid = np.repeat(np.arange(sizes.size), sizes)
        if groupless:
            if qid is not None:
                raise ValueError(
                    "groupless=True declares all rows one query, and query ids were given "
                    "(qid, group or a qid_col column of X): drop one of them")
            return None
        if qid is None:
            raise _no_queries_error(frame, self.qid_col, call, objective_groupless)
        _refuse_ids_as_feature(frame, X, qid, self.qid_col)
        return qid

    def _refuse_one_row_queries(self, frame: Any, qid: Any) -> None:
        """Refuse query ids that make each row a query of its own: no pair to rank;
        most often a feature read as the ids."""
        n = np.size(qid)
        if qid is None or n < 2 or np.unique(qid).size != n:
            return
        from_column = self._qid_column(frame) is not None
        like = _id_like_columns(frame, skip=self.qid_col)
        source = (f"column {self.qid_col!r} of X (qid_col={self.qid_col!r})" if from_column
                  else "qid=")
        hint = (f" X has a column {like[0]!r} that looks like query ids: "
                f"GBRanker(qid_col={like[0]!r})." if like else "")
        other = (f" If {self.qid_col!r} is a feature, name the id column with qid_col= (or "
                 "qid_col=None and pass qid=)." if from_column else "")
        raise ValueError(
            f"the query ids from {source} give each of the {n} rows a query of its own: "
            f"there is no pair to rank, so these are not the rows' queries.{other}{hint}")

    def _eval_part(self, eval_set: Any, eval_qid: Any, eval_group: Any, eval_position: Any,
                   groupless: bool, clicks: bool) -> tuple[Any, np.ndarray, Any, Any]:
        """The features, grades, query sizes and (for a click metric) positions of the
        one validation set ``eval_set``, its rows gathered by query id."""
        pairs = list(eval_set) if isinstance(eval_set, (list, tuple)) else None
        if pairs and len(pairs) == 2 and not isinstance(pairs[0], (list, tuple)):
            pairs = [tuple(pairs)]  # a bare (X_val, y_val)
        if not pairs or len(pairs) != 1 or len(pairs[0]) != 2:
            raise ValueError("eval_set must be [(X_val, y_val)], one validation set "
                             "(GBRanker early-stops on one)")

        def one(value: Any, name: str) -> Any:
            if value is None:
                return None
            if isinstance(value, (list, tuple)) and len(value) == 1:
                return value[0]
            raise ValueError(f"{name} must be a list of one array (for the one eval_set)")

        Xv, yv = pairs[0]
        _refuse_booster_data(Xv, "GBRanker's eval_set")
        Xv, full = self._checked_columns(Xv)
        feats, ids, pos = self._split_columns(Xv) if full else (Xv, None, None)
        m = feats.shape[0]
        qv, gv_sizes, pv = one(eval_qid, "eval_qid"), one(eval_group, "eval_group"), \
            one(eval_position, "eval_position")
        if ids is not None and qv is not None and not np.array_equal(np.asarray(qv).ravel(),
                                                                      ids):
            raise ValueError("eval_set's query ids given twice (eval_qid and its "
                             f"{self.qid_col!r} column), and they differ: pass one")
        qv = ids if qv is None else qv
        qv = self._one_query_source(Xv, feats, qv, gv_sizes, m, groupless, "eval_set")
        if pos is not None and pv is not None and not np.array_equal(
                np.asarray(pv).ravel(), pos):
            raise ValueError("eval_set's positions given twice (eval_position and its "
                             f"{self.position_col!r} column), and they differ: pass one")
        pv = pos if pv is None else pv
        if clicks:
            if pv is None:
                raise ValueError(
                    f"scoring={self.scoring!r} judges the validation clicks by the positions "
                    "they were logged at: pass eval_position=[positions] (or keep the "
                    "position_col column in X_val)")
            pv = check_positions(pv, m, "eval_position")
            _check_positions_have_queries(pv, qv)
        yv = _checked_grades(yv, m, "eval_set's y")
        order = np.arange(m) if qv is None else query_order(qv)
        sizes = (np.array([m]) if qv is None else
                 query_structure(m, qid=np.asarray(qv)[order]).sizes)
        return (_safe_indexing(feats, order), yv[order], sizes,
                None if pv is None else np.asarray(pv)[order])

    def _evaluation_propensity(self, obj: Any) -> Any:
        """The propensities a click metric ``scoring`` divides clicks by: the
        ``propensity`` parameter, else those of an ``"ipw"`` objective; an error naming
        the fix otherwise."""
        if self.propensity is not None:
            check_propensity(self.propensity, "propensity")
            return self.propensity
        method = None if isinstance(obj, str) else getattr(obj, "position_bias", None)
        if method == "ipw":
            return obj.propensity  # checked with the objective's parameters
        why = (f"objective position_bias={method!r} learns its own position effects, "
               "which are not examination probabilities" if method is not None else
               f"objective {self.objective!r} has no propensities")
        raise ValueError(
            f"scoring={self.scoring!r} divides each click by the examination propensity "
            f"of the position it was logged at, and {why}: pass them as GBRanker("
            "propensity=[rho_1, rho_2, ...]) (or {position: rho}), or use "
            "LambdaRank(position_bias='ipw', propensity=...)")

    def _one_position_source(self, position: Any, in_X: Any) -> Any:
        """The positions of the ``position`` argument or of the ``position_col`` column
        (``in_X``); both given and different is an error."""
        if in_X is None:
            return position
        if position is not None and not np.array_equal(np.asarray(position).ravel(), in_X):
            raise ValueError(
                f"positions given twice, as the position argument and as column "
                f"{self.position_col!r} of X, and they differ; pass one of them")
        return in_X

    def _positions(self, obj: Any, position: Any, in_X: Any, n: int,
                   for_metric: bool = False, judged: bool = False) -> np.ndarray | None:
        """The rows' display positions (argument or column), checked; ``None`` when
        neither the objective nor the validation metric (``for_metric``: a click
        metric on a validation split) uses them. ``judged``: ``scoring`` is a click
        metric, so positions that the objective ignores are there for ``score`` (and
        a click scorer) and are accepted."""
        position = self._one_position_source(position, in_X)
        # LightGBM's own lambdarank learns from a Dataset's positions when it has them
        # (and trains without them otherwise, as it always did).
        native_optional = (isinstance(obj, str) and self.booster == "lightgbm"
                           and obj == "lambdarank")
        uses = native_optional or (not isinstance(obj, str) and obj._uses_positions())
        if for_metric and position is None:
            raise ValueError(
                f"scoring={self.scoring!r} early-stops on the clicks of held-out queries, "
                "each weighed by the position it was logged at, and no positions were "
                "given: fit(X, y, qid=..., position=...) or position_col= (a column of X)")
        if not uses and not for_metric:
            if position is not None and not judged:
                raise ValueError(
                    f"positions were given, but objective {self.objective!r} has no "
                    "position_bias and would ignore them: use e.g. LambdaRank("
                    "position_bias='unbiased'), or drop position= / position_col, or "
                    "say the positions are for judging clicks: GBRanker(scoring="
                    "'ips_dcg@10', propensity=...)")
            return None
        if position is None and native_optional:
            return None
        if position is None:
            raise ValueError(
                f"objective {obj!r} learns from clicks and needs every row's display "
                "position: fit(X, y, qid=..., position=...) or position_col= (a column of "
                "X)")
        return check_positions(position, n)

    def _checked_columns(self, X: Any) -> tuple[Any, bool]:
        """``X`` checked against the columns of ``fit``: all of them (``True``), or the
        features alone (``False``), when ``fit``'s ``X`` had a query-id or position
        column, which serving data need not carry."""
        dropped = getattr(self, "_dropped_at", ())
        columns = getattr(self, "_fit_columns", None)
        if _is_frame(X) and columns is not None:
            kept = [c for i, c in enumerate(columns) if i not in dropped]
            given = list(X.columns)
            extra = [c for i, c in enumerate(columns) if i in dropped and c in given]
            if given == kept or (dropped and given != columns
                                 and [c for c in given if c not in extra] == kept):
                # the features alone (or with some of the id/position columns)
                if X.shape[0] == 0:
                    raise ValueError("X has 0 rows; at least 1 is required")
                X = X[kept] if extra else X
                if self.booster == "xgboost":
                    self._check_xgboost_sparsity(X)
                return X, False
            if sorted(map(str, given)) in (sorted(map(str, columns)),
                                           sorted(map(str, kept))) and given != columns:
                order = kept if len(given) == len(kept) else columns
                raise ValueError(
                    f"X has the columns fit read in another order ({given[:6]}…): the "
                    f"booster reads features by position. Reorder them: X[{order!r}]")
        if dropped and not _is_frame(X):
            if np.ndim(X) == 2 and X.shape[1] == self.n_features_in_ - len(dropped):
                from sklearn.utils import check_array

                X = check_array(X, accept_sparse=["csr", "csc"],
                                dtype=[np.float64, np.float32], ensure_all_finite="allow-nan")
                if self.booster == "xgboost":
                    self._check_xgboost_sparsity(X)
                return X, False
            elif (np.ndim(X) == 2 and X.shape[1] == self.n_features_in_
                  and hasattr(self, "feature_names_in_")):
                # Its id column can be found only by name, which an array has not.
                names = [str(self.feature_names_in_[i]) for i in dropped]
                raise ValueError(
                    f"X is an array of the {X.shape[1]} columns fit read from a DataFrame, "
                    f"with its column(s) {names} (at {list(dropped)}), which an array has no "
                    f"names to find by: pass the DataFrame, or the array of the "
                    f"{X.shape[1] - len(dropped)} feature columns alone")
        return self._validate_X(X, reset=False), True


def _id_like_columns(X: Any, skip: Any = None) -> list[str]:
    """Names of ``X``'s columns that look like query ids (a DataFrame's), but ``skip``."""
    if not _is_frame(X):
        return []
    return id_like_names(X.columns, skip)


def _no_queries_error(X: Any, qid_col: Any, call: str = "fit",
                       objective_groupless: bool = False) -> ValueError:
    like = _id_like_columns(X)
    found = (f" X has a column {like[0]!r} that looks like query ids: "
             f"GBRanker(qid_col={like[0]!r})." if like else "")
    if objective_groupless:  # the objective says group-less, the estimator does not
        return ValueError(
            "GBRanker got no query ids, and its objective declares group-less ranking "
            "(groupless=True): declare it on the estimator too, GBRanker(objective, "
            "groupless=True), so that fit, score and eval_set all read one list; or pass "
            f"query ids (qid=, group= or a qid_col column).{found}")
    if call == "eval_set":
        return ValueError(
            "GBRanker got no query ids for eval_set, so its rows would be ranked as one "
            "list: pass eval_qid=[ids] (one id per row) or eval_group=[sizes], or keep a "
            f"column of X_val named by qid_col (now {qid_col!r}).{found} If all rows really "
            "are one query, declare it: GBRanker(groupless=True)")
    how = ("score(X, y, qid=ids) (one id per row) or group=sizes" if call == "score" else
           "fit(X, y, qid=ids) (one id per row) or group=sizes (query sizes)")
    return ValueError(
        f"GBRanker got no query ids, so every row would be ranked as one list. Pass them: "
        f"{how}, or a column of X named by qid_col (now {qid_col!r}).{found} With "
        f"cross_val_score(..., groups=ids) the ids only make the folds and never reach "
        f"{call}: put them in a column of X (qid_col=...) or enable metadata routing "
        f"(sklearn.set_config(enable_metadata_routing=True); ranker.set_{call}_request("
        f"qid=True)). If all rows really are one query (group-less ranking), declare it: "
        f"GBRanker(groupless=True)")


def _refuse_ids_as_feature(frame: Any, X: Any, qid: Any, qid_col: Any) -> None:
    """A feature column that holds the query ids (the same partition of the rows) would
    let the model learn the ids: refused, naming ``qid_col``."""
    for name in _id_like_columns(X, skip=qid_col):
        col = X[name].to_numpy()
        q = np.asarray(qid).ravel()
        try:
            pairs = np.unique(np.stack([np.unique(col, return_inverse=True)[1].ravel(),
                                        np.unique(q, return_inverse=True)[1].ravel()]),
                              axis=1).shape[1]
        except TypeError:  # ids of mixed types: not comparable, not the same
            continue
        if pairs == np.unique(q).size == np.unique(col).size:
            raise ValueError(
                f"column {name!r} of X holds the query ids and would be a feature: name it "
                f"as the id column, GBRanker(qid_col={name!r}), or drop it from X")


def _warn_if_not_identifiable(obj: Any, X: Any, position: np.ndarray) -> None:
    """A learned correction (``"unbiased"``, ``"additive"``) on a log where no document
    was shown at two positions: its estimates cannot separate position from relevance
    (they follow the logger), so the figure is given with the alternatives."""
    method = obj._params().pb.method
    if method not in ("unbiased", "additive"):
        return
    from gbrank.datasets import position_identifiability

    try:
        ident = position_identifiability(position, X=X)
    except ValueError:  # a sparse X too large to compare its rows: not judged
        return
    if ident.n_identifying == 0:
        import warnings

        warnings.warn(
            f"position_bias={method!r} learns position effects from the log, and this log "
            f"cannot identify them: {ident}. Its estimates then follow the logger's order, "
            "not the users' examination (docs/evidence.md). Use position_bias='ipw' with "
            "propensities from a randomisation experiment (or estimated from a log with "
            "swaps: gbrank.datasets.estimate_propensity), or no correction",
            UserWarning, stacklevel=3)


def _checked_grades(y: Any, n: int, name: str = "y") -> np.ndarray:
    y = as_float_array(y, name)
    if y.size != n:
        raise ValueError(f"{name} has {y.size} entries but X has {n} rows")
    check_finite(y, name)
    check_grades(y, integer=False, max_grade=None, name=name)
    return y


def _check_positions_have_queries(position: Any, qid: Any) -> None:
    """Positions are ranks within a session: group-less rows (one list) that repeat a
    position are many sessions with their query ids missing, and would be ranked and
    judged as one list."""
    if position is None or qid is not None:
        return
    values, counts = np.unique(np.asarray(position).ravel(), return_counts=True)
    if counts.size and counts.max() > 1:
        at = int(np.argmax(counts))
        raise ValueError(
            f"position {values[at].item()!r} is on {int(counts[at])} rows and there are no query "
            "ids: a click log's positions are ranks within a session or query; pass "
            "qid= (or a qid_col column of X) so that each session is its own list")


def _in_tie_order(Xv: Any, yv: np.ndarray, gv: np.ndarray, wv: Any) -> tuple:
    """A validation part's rows of each query in :func:`gbrank._queries.tie_order`, the
    order its metric is read in: every ranking metric breaks score ties by row order,
    and data sorted by grade within each query made early stopping favour a model that
    scores rows alike (a click log's rows keep their display order; not called)."""
    order = tie_order(Xv, yv, gv)
    return (_safe_indexing(Xv, order), np.asarray(yv)[order], gv,
            None if wv is None else np.asarray(wv)[order])
