"""GBRanker: learning to rank with a gbrank objective as a scikit-learn estimator."""

from __future__ import annotations

from typing import Any

import numpy as np
from sklearn.utils import _safe_indexing, check_random_state

from gbrank._fields import LIGHTGBM_MAX_QUERY
from gbrank._proba import predict_proba as _sigmoid
from gbrank._queries import query_order, query_structure
from gbrank._validation import (
    check_bool,
    check_row_weights,
)
from gbrank.metrics import get_metric
from gbrank.sklearn._base import (
    _GBBase,
    _is_frame,
    _refuse_booster_data,
    _resolve_objective,
    _ValidMetric,
)
from gbrank.sklearn._ranker_input import (
    _check_positions_have_queries,
    _checked_grades,
    _in_tie_order,
    _RankingInput,
    _warn_if_not_identifiable,
)

__all__ = ["GBRanker"]


class _when_calibrated:  # noqa: N801 (a decorator)
    """Like scikit-learn's ``available_if(GBRanker._has_probabilities)`` (``hasattr`` is
    False for an uncalibrated objective), but the AttributeError is the check's own,
    naming the fix, not "has no attribute" with the fix in its ``__cause__``."""

    def __init__(self, fn: Any) -> None:
        self.fn = fn
        self.__doc__ = fn.__doc__

    def __get__(self, obj: Any, owner: Any = None) -> Any:
        if obj is None:
            return self.fn
        obj._has_probabilities()
        import types

        return types.MethodType(self.fn, obj)


class GBRanker(_RankingInput, _GBBase):
    r"""Learning to rank with a gbrank objective, as a scikit-learn estimator.

    Query ids travel with ``X``: a column named ``"qid"`` of a DataFrame (XGBoost's
    ``XGBRanker`` convention), or the column ``qid_col`` names (a column index for
    arrays), holds each row's query id and is never a feature. Rows of a query need not
    be adjacent. Every scikit-learn tool then splits, fits and scores whole queries
    without metadata routing: ``cross_val_score(GBRanker(), X, y, groups=X["qid"],
    cv=GroupKFold(5), scoring=make_scorer("ndcg@10"))``. Without such a column,
    ``fit(X, y, qid=qid)`` takes the ids as an argument (or ``group=`` sizes; with
    ``sklearn.set_config(enable_metadata_routing=True)``, ``set_fit_request(qid=True)``
    and :func:`make_scorer` route them through cross-validation). Without any ids
    ``fit`` refuses, naming the fixes, unless ``groupless=True`` declares group-less
    ranking: all rows one query, of any size.

    ``predict`` returns scores (higher = ranked higher) in the caller's row order;
    ``score`` returns the ``scoring`` metric (pair accuracy by default). Works in
    ``cross_val_score``, ``learning_curve``, ``GridSearchCV`` (over estimator and
    ``objective__*`` parameters) and ``Pipeline`` (the query-id column must reach the
    ranker: keep DataFrame output, ``set_output(transform="pandas")``, or name it by
    index).

    Parameters
    ----------
    objective : str or gbrank objective, default "ranknet"
        A registry name (``"ranknet"``, ``"lambdarank"``, ``"lambdarank:err"``, …), a
        gbrank ranking objective instance (cloned at fit), or ``"native:<name>"`` for
        the booster's own objective (``"native:lambdarank"`` for LightGBM,
        ``"native:rank:pairwise"`` for XGBoost).
    booster : {"lightgbm", "xgboost"}, default "lightgbm"
    n_estimators : int, default 100
        Boosting rounds (the most; early stopping may use fewer).
    learning_rate : float, default 0.1
        Shrinkage η of round 0.
    learning_rate_decay : float in (0, 1], optional
        Round ``i`` uses :math:`\eta \cdot \text{decay}^i` (the article's
        ``0.2 * 0.99 ** i``); ``None`` keeps η constant.
    early_stopping_rounds : int, optional
        Stop when the ``scoring`` metric on the validation split has not improved for
        this many rounds; ``predict`` then uses the best round. ``None``: no early
        stopping and no validation split.
    validation_fraction : float in (0, 1), default 0.1
        Share held out for early stopping: of the rows when group-less, of the whole
        queries when grouped; drawn from ``random_state``. On a click log (rows with
        positions) whose sessions share documents (identical feature rows, as the
        sessions of one query do), whole blocks of such sessions, so no validation row
        is also a training row.
    scoring : str, default "pair_accuracy"
        gbrank metric name (``"ndcg@10"``, ``"err@5"``, ``"map"``, …) used by ``score``
        and early stopping. On click logs, ``"ips_dcg@k"`` judges the held-out queries'
        clicks, each divided by the examination propensity of the position it was
        logged at (:func:`gbrank.metrics.ips_dcg`): it needs every row's position
        (``position=`` or ``position_col``) and the propensities (see ``propensity``).
    qid_col : str, int or None, default "qid"
        The column of ``X`` holding query ids: a DataFrame column name, or a column
        index (arrays and DataFrames). The default ``"qid"`` is used when ``X`` is a
        DataFrame with that column and ignored otherwise; any other value must name a
        column of ``X``. ``None``: ``X`` has no query-id column.
    position_col : str, int or None, default None
        The column of ``X`` holding each row's logged display position (click logs, for
        an objective with ``position_bias``): a DataFrame column name or a column index.
        Like the query-id column it is never a feature (dropped at ``predict`` too).
        ``None``: positions come from ``fit(..., position=...)`` when needed. LightGBM's
        own ``"native:lambdarank"`` takes them too (its ``Dataset(position=...)``: its
        additive position-bias model, ``booster_params={"lambdarank_position_bias_
        regularization": ...}``).
    propensity : sequence or dict, optional
        Examination probabilities ρ(1), ρ(2), … (or ``{position: ρ}``) for a click
        metric ``scoring`` (``"ips_dcg@10"``), which weighs every held-out click by
        1/ρ of its logged position. ``None``: those of an objective with
        ``position_bias="ipw"`` (its ``propensity``). An objective with
        ``position_bias="unbiased"`` or ``"additive"`` (or none) learns or has no
        propensities, so a click metric then needs this parameter, and ``fit`` refuses
        without it rather than judge the clicks by guessed ones. Given, it is used even
        beside an ``"ipw"`` objective's own. Only for click metrics (an error
        otherwise).
    random_state : int, RandomState or None
        Seeds the validation split and the booster.
    num_leaves, max_depth : int, optional
        Tree size (LightGBM ``num_leaves``/``max_depth``; XGBoost ``max_leaves``/
        ``max_depth``). ``None``: the booster's default.
    min_child_samples : int, optional
        LightGBM's ``min_data_in_leaf`` (no XGBoost counterpart: an error there).
    subsample, colsample_bytree : float in (0, 1], optional
        Row subsampling per round and feature subsampling per tree.
    reg_lambda : float, optional
        L2 regularisation of leaf values.
    n_jobs : int, optional
        Booster threads. ``None`` means 1 (scikit-learn's convention, not the
        boosters' all-cores default); ``-1`` all cores, ``-2`` all but one, ….
    booster_params : dict, optional
        Anything else, passed to the booster as is (``monotone_constraints``,
        ``max_bin``, ``max_cat_to_onehot``, …).
    groupless : bool, default False
        Declare group-less ranking: all rows of ``fit`` (and of ``score``) are one
        query, ranked as one list (the seed's demand-level task). Query ids left out
        are never read as this mode: without ids and without this, ``fit`` refuses;
        with it, ids given are refused.

    Attributes
    ----------
    booster_ : lightgbm.Booster or xgboost.Booster
    objective_ : gbrank objective or str
        The objective trained with (a clone of ``objective``).
    evals_result_ : dict
        Validation curve per round, ``{"valid": {metric: [...]}}`` (empty without a
        validation split).
    best_iteration_ : int
        Rounds ``predict`` uses.
    init_score_ : float
        Constant added to the booster's raw scores: 0 for a ranking loss, the
        objective's constant start for a calibrated one.
    position_bias_ : PositionBias
        For an objective with ``position_bias``: the estimates its training learned
        (:class:`~gbrank.objectives.PositionBias`), never part of ``predict``.
    classes_ : ndarray [0, 1]
        For a calibrated objective only: ``predict_proba``'s columns.
    calibration_targets_ : dict
        For a calibrated objective only: how its training labels became targets in
        [0, 1] (``target``, ``max_grade``, ``threshold``; the top grade fixed from
        them), which ``score``, early stopping and
        :func:`gbrank.sklearn.make_scorer` give ``"logloss"`` and ``"ece"``: other rows
        are judged against the targets the model learned, whatever grades they hold.
    n_features_in_, feature_names_in_ : as in scikit-learn.
    feature_importances_ : ndarray
        Normalised total gain per column of ``X`` (0 for the query-id and position
        columns).

    Notes
    -----
    Sample weights are query weights: per row, constant within each query (for
    group-less data: all equal), as gbrank's ranking objectives define them.

    Click logs: with an objective that has ``position_bias`` (e.g.
    ``LambdaRank(position_bias="unbiased")``), ``fit`` needs every row's display
    position (``position=`` or ``position_col``); the training part's positions go to
    the objective through :func:`gbrank.lightgbm.objective` /
    :func:`gbrank.xgboost.objective` (LightGBM's own ``"native:lambdarank"`` through
    ``Dataset(position=...)``), the learned estimates are ``position_bias_`` and never
    part of ``predict``. With
    ``position_bias="additive"`` on XGBoost the offsets move by ``learning_rate`` (not
    its decayed value). Early stopping on click logs: ``scoring="ips_dcg@10"`` with
    ``early_stopping_rounds``; the held-out queries keep their rows' positions through
    the split, and the best round is the one with the highest IPS-DCG@10 on them (the
    positions are then needed even for an objective without ``position_bias``, and
    only for the metric).

    ``save_model(path)`` writes a model whose own prediction is ``predict``'s score
    (objective ``lambdarank`` for LightGBM; ``rank:ndcg``, ``rank:map`` or
    ``rank:pairwise`` for XGBoost). Its features are the columns of ``X`` without the
    query-id column (``qid_col``), in the same order.

    Examples
    --------
    >>> import numpy as np
    >>> import pandas as pd
    >>> from sklearn.model_selection import GroupKFold, cross_val_score
    >>> from gbrank.datasets import make_ranking
    >>> from gbrank.sklearn import GBRanker, make_scorer
    >>> X, y, group = make_ranking(n_queries=60, rows_per_query=20, n_features=5)
    >>> df = pd.DataFrame(X, columns=[f"f{i}" for i in range(5)])
    >>> df["qid"] = np.repeat(np.arange(60), 20)
    >>> scores = cross_val_score(GBRanker("lambdarank", n_estimators=20), df, y,
    ...                          groups=df["qid"], cv=GroupKFold(3),
    ...                          scoring=make_scorer("ndcg@10"))
    >>> scores.shape
    (3,)

    Early stopping on a click log, judged by IPS-DCG@10 on held-out sessions:

    >>> from gbrank.datasets import simulate_clicks
    >>> from gbrank.objectives import LambdaRank
    >>> log = simulate_clicks(y, group, X[:, 0], top_n=10, n_sessions=1, seed=0)
    >>> qid = np.repeat(np.arange(log.group.size), log.group)
    >>> rho = log.examination
    >>> ranker = GBRanker(LambdaRank(position_bias="ipw", propensity=rho),
    ...                   scoring="ips_dcg@10", early_stopping_rounds=5, n_estimators=30,
    ...                   validation_fraction=0.25, random_state=0)
    >>> ranker = ranker.fit(X[log.rows], log.clicks, qid=qid, position=log.position)
    >>> list(ranker.evals_result_["valid"])
    ['ips_dcg@10']
    """

    _task = "ranking"

    def __init__(self, objective: Any = "ranknet", booster: str = "lightgbm",
                 n_estimators: int = 100, learning_rate: float = 0.1,
                 learning_rate_decay: float | None = None,
                 early_stopping_rounds: int | None = None,
                 validation_fraction: float | None = 0.1, scoring: str = "pair_accuracy",
                 qid_col: str | int | None = "qid", position_col: str | int | None = None,
                 propensity: Any = None, random_state: Any = None, num_leaves: int | None = None,
                 max_depth: int | None = None, min_child_samples: int | None = None,
                 subsample: float | None = None, colsample_bytree: float | None = None,
                 reg_lambda: float | None = None, n_jobs: int | None = None,
                 booster_params: dict[str, Any] | None = None,
                 groupless: bool = False) -> None:
        self.objective = objective
        self.booster = booster
        self.n_estimators = n_estimators
        self.learning_rate = learning_rate
        self.learning_rate_decay = learning_rate_decay
        self.early_stopping_rounds = early_stopping_rounds
        self.validation_fraction = validation_fraction
        self.scoring = scoring
        self.qid_col = qid_col
        self.position_col = position_col
        self.propensity = propensity
        self.random_state = random_state
        self.num_leaves = num_leaves
        self.max_depth = max_depth
        self.min_child_samples = min_child_samples
        self.subsample = subsample
        self.colsample_bytree = colsample_bytree
        self.reg_lambda = reg_lambda
        self.n_jobs = n_jobs
        self.booster_params = booster_params
        self.groupless = groupless

    def fit(self, X: Any, y: Any, *, qid: Any = None, group: Any = None,
            sample_weight: Any = None, position: Any = None, eval_set: Any = None,
            eval_qid: Any = None, eval_group: Any = None,
            eval_position: Any = None) -> GBRanker:
        """Fit on features ``X`` and grades ``y`` (non-negative; integers for NDCG/ERR
        gains), grouped by query.

        The query ids come from one place: the query-id column of ``X`` (``qid_col``),
        per-row ``qid`` (any order, ids of any sortable type) or ``group`` (query sizes
        of consecutive rows, LightGBM's convention). Without any, ``fit`` refuses unless
        ``groupless=True`` declares all rows one query. Rows are gathered by query id
        (ascending, each query's rows in their given order), so the same rows in any
        order of queries give the same model.

        Parameters
        ----------
        X : array-like, sparse matrix or DataFrame of shape (n, n_columns)
        y : array-like of shape (n,)
        qid : array-like of shape (n,), optional
            Per-row query ids (XGBoost's ``XGBRanker`` convention).
        group : array-like, optional
            Query sizes of consecutive rows (LightGBM's ``LGBMRanker`` convention).
        sample_weight : array-like of shape (n,), optional
            Query weights, per row and constant within each query.
        position : array-like of shape (n,), optional
            Every row's logged display position (click logs; or the column
            ``position_col`` of ``X``), for an objective with ``position_bias`` and for
            a click metric ``scoring`` (``"ips_dcg@10"``) judging the validation rows.
        eval_set : list of one (X_val, y_val) pair, optional
            Your own validation queries (e.g. LETOR's validation part) instead of the
            split of ``validation_fraction``: with ``early_stopping_rounds`` the best
            round on them is kept; without it, every round is kept and
            ``evals_result_`` records the curve. ``X_val`` has the columns of ``X``
            (the query-id and position columns may be left out).
        eval_qid, eval_group : list of one array, optional
            The query ids (per row) or query sizes of ``X_val``, as ``qid`` /
            ``group`` for ``X``, when ``X_val`` has no query-id column.
        eval_position : list of one array, optional
            ``X_val``'s logged positions, for a click metric ``scoring``, when ``X_val``
            has no position column.

        Returns
        -------
        self
        """
        _refuse_booster_data(X, "GBRanker")
        if y is None:
            raise ValueError("GBRanker requires y to be passed, but the target y is None")
        p = self._check_params()
        groupless = check_bool(self.groupless, "groupless")
        metric = _ValidMetric(self.scoring, None)  # validates the name before training
        obj = _resolve_objective(self.objective, "ranking", "GBRanker")
        clicks = metric.metric.kind == "clicks"
        own_valid = eval_set is not None
        holdout = p["early_stopping_rounds"] is not None or own_valid
        # Checked before any work: never judge held-out clicks by absent propensities.
        rho = self._evaluation_propensity(obj) if clicks else None
        if not clicks and self.propensity is not None:
            raise ValueError(
                f"propensity= weighs the clicks of a click metric, and scoring="
                f"{self.scoring!r} is not one: use scoring='ips_dcg@10', or drop "
                "propensity (an objective's own goes to LambdaRank(propensity=...))")
        if not own_valid and any(a is not None for a in (eval_qid, eval_group,
                                                          eval_position)):
            raise ValueError("eval_qid, eval_group and eval_position describe eval_set; "
                             "pass eval_set=[(X_val, y_val)] too")
        X = self._validate_X(X, reset=True)
        self._qid_at = self._qid_column(X)
        self._fit_columns = list(X.columns) if _is_frame(X) else None
        self._dropped_at = tuple(sorted(a for a in (self._qid_at, self._position_column(X))
                                        if a is not None))
        frame = X
        in_X = self._split_columns(X)[2]
        X, qid = self._query_ids(X, qid)
        n = X.shape[0]
        qid = self._one_query_source(frame, X, qid, group, n, groupless, "fit",
                                     bool(getattr(obj, "groupless", False)))
        if group is None:
            self._refuse_one_row_queries(frame, qid)
        position = self._positions(obj, position, in_X, n,
                                   for_metric=clicks and holdout and not own_valid,
                                   judged=clicks)
        _check_positions_have_queries(position, qid)
        # The training's queries (ids given, not sizes): scoring rows of them is a cut split.
        self._fit_queries = (None if qid is None or group is not None else
                             _id_counts(qid))
        y = _checked_grades(y, n)
        counts = None if qid is None else _id_counts(qid)
        if (sample_weight is not None and counts is not None
                and np.size(sample_weight) == counts[0].size != n):
            raise ValueError(
                f"sample_weight has one entry per query ({counts[0].size}), XGBRanker's "
                f"convention; GBRanker takes one per row ({n} rows), the same within a "
                "query: w_rows = w[np.unique(qid, return_inverse=True)[1]] (w in "
                "ascending id order)")
        w = check_row_weights(sample_weight, n, "sample_weight")
        # The one gathering rule (gbrank.datasets' loaders follow it too): ascending ids.
        order = np.arange(n) if qid is None else query_order(qid)
        queries = query_structure(n, qid=None if qid is None else np.asarray(qid)[order],
                                  weight=None if w is None else w[order])
        if position is not None and qid is not None:
            if getattr(obj, "position_bias", None) is None:
                _warn_if_merged_sessions(np.asarray(position)[order],
                                         np.diff(queries.offsets))
        rng = check_random_state(self.random_state)
        seed = int(rng.randint(np.iinfo(np.int32).max))
        tr, va = self._split(n, queries.offsets, p["validation_fraction"],
                             holdout and not own_valid, rng,
                             _linked(X, order, queries.offsets, position)
                             if holdout and not own_valid else None)
        sizes = np.diff(queries.offsets)

        def part(idx: np.ndarray) -> tuple[Any, np.ndarray, np.ndarray, Any]:
            rows = order[idx]
            # Queries stay contiguous: idx is increasing within the query order.
            qs = np.repeat(np.arange(sizes.size), sizes)[idx]
            part_sizes = np.bincount(qs, minlength=sizes.size)
            return (_safe_indexing(X, rows), y[rows], part_sizes[part_sizes > 0],
                    None if w is None else w[rows])

        Xt, yt, gt, wt = part(tr)
        if p["booster"] == "lightgbm" and obj == "lambdarank" and gt.max() > LIGHTGBM_MAX_QUERY:
            raise ValueError(
                f"LightGBM's lambdarank refuses a query of more than {LIGHTGBM_MAX_QUERY:,} "
                f"rows, and "
                f"{'this one list' if gt.size == 1 else 'the longest query'} holds "
                f"{int(gt.max()):,}: use a gbrank objective (\"lambdarank\", "
                "\"ranknet\": no such limit), \"native:rank_xendcg\", or booster=\"xgboost\"")
        if isinstance(obj, str):
            trains_on_positions = p["booster"] == "lightgbm" and obj == "lambdarank"
        else:
            trains_on_positions = obj._uses_positions()
        pos_t = position[order[tr]] if trains_on_positions and position is not None else None
        if pos_t is not None and not isinstance(obj, str):
            _warn_if_not_identifiable(obj, Xt, pos_t)
            if p["early_stopping_rounds"] is not None and not clicks:
                import warnings

                warnings.warn(
                    f"early stopping reads scoring={self.scoring!r} of held-out clicks, "
                    "which rewards the logged ranking's position bias that position_bias "
                    "corrects; scoring='ips_dcg@10' with propensity= judges them by "
                    "examination (docs/guide/clicks.md)", UserWarning, stacklevel=2)
        Xv = yv = gv = wv = pos_v = None
        if own_valid:
            Xv, yv, gv, pos_v = self._eval_part(eval_set, eval_qid, eval_group,
                                                eval_position, groupless, clicks)
        elif va is not None:
            Xv, yv, gv, wv = part(va)
            if clicks:  # the held-out rows' positions, in the validation data's order
                pos_v = position[order[va]]
        if Xv is not None and not clicks:
            Xv, yv, gv, wv = _in_tie_order(Xv, yv, gv, wv)
        self.objective_ = obj
        # A ranking loss ignores a constant; a calibrated one starts from the logit of
        # the mean target, as a binary objective does.
        self.init_score_ = 0.0 if isinstance(obj, str) else float(obj.init_score(yt, wt))
        mapping = None if isinstance(obj, str) else obj.target_mapping(yt)
        if mapping is not None:
            self.calibration_targets_ = mapping
        else:
            self.__dict__.pop("calibration_targets_", None)
        metric = _ValidMetric(self.scoring, None, propensity=rho if clicks else None,
                              position=pos_v if clicks else None, targets=mapping)
        self._train(p, obj, Xt, yt, gt, wt, self.init_score_, Xv, yv, gv, wv, metric, seed,
                    position=pos_t)
        if not isinstance(obj, str) and getattr(obj, "probability", False):
            self.classes_ = np.array([0, 1])
        else:
            self.__dict__.pop("classes_", None)
        return self

    def _warn_if_split_queries(self, qid: Any) -> None:
        """Warn when scored queries also had other rows in training: a split that cut
        queries in two (scikit-learn's KFold on rows, ``cross_val_score`` without
        ``groups=``), whose scores judge short lists of half-seen queries."""
        fit = self.__dict__.get("_fit_queries")
        if fit is None or qid is None:
            return
        seen = _id_counts(qid)
        if seen is None:
            return
        ids, counts = seen
        try:
            common, a, b = np.intersect1d(ids, fit[0], return_indices=True)
        except TypeError:  # scored ids of another type than the training ids
            return
        cut = int(np.sum(counts[a] != fit[1][b]))
        if cut:
            import warnings

            warnings.warn(
                f"{cut} of the {ids.size} scored query ids also name queries that had "
                "other rows in training. If they are the same queries, the split cut them "
                "in two, and their scores judge the rest of lists the model partly "
                "learned: split whole queries (GroupKFold with groups= the query ids, "
                "cross_val_score(..., groups=ids), or GroupShuffleSplit). If the scored "
                "data numbers queries of its own (ids restarting at 0), they are other "
                "queries: give them ids unused in training", UserWarning, stacklevel=3)

    def _booster_features(self, X: Any) -> Any:
        X, full = self._checked_columns(X)
        return self._features(X)[0] if full else X

    def predict(self, X: Any) -> np.ndarray:
        """Ranking scores (raw booster output plus ``init_score_``; higher = ranked
        higher), one per row, in the order of ``X``'s rows. ``X`` has the columns of
        ``fit``'s ``X``, or those without the query-id and position columns (serving
        data need not carry them)."""
        return self._margins(X)

    def _has_probabilities(self) -> bool:
        """``predict_proba`` exists only for a calibrated objective (see there): the
        fitted one once fitted (``set_params`` without a refit changes nothing the
        model learned), else the parameter."""
        obj = getattr(self, "objective_", self.objective)
        try:
            calibrated = not isinstance(obj, str) and bool(getattr(obj, "probability", False))
        except ValueError:  # a bad parameter: fit names it
            calibrated = False
        if not calibrated:
            raise AttributeError(
                f"predict_proba needs a calibrated ranking objective; {obj!r} orders rows "
                "within a query but leaves the scale of its scores free. Use e.g. "
                "GBRanker(objective=LambdaRank(calibration=0.1))")
        return True

    @_when_calibrated
    def predict_proba(self, X: Any) -> np.ndarray:
        r"""Probability of relevance per row, :math:`\sigma(\text{score})`, for a calibrated
        objective (``RankNet(calibration=α)``, ``LambdaRank(calibration=α)`` with α > 0,
        or a :class:`~gbrank.objectives.Combination` with a calibration term); a ranking
        loss alone leaves the scores' offset and scale free, so the method does not
        exist there (``AttributeError`` naming the fix).

        Returns
        -------
        ndarray of shape (n_samples, 2)
            As scikit-learn's classifiers give it, columns ``classes_`` = [0, 1]: the
            probability that each row is not relevant and that it is (clicked, or its
            target as ``calibration_target`` maps grades), comparable across queries.
            On grades with the default mapping this is not P(grade ≥ 1): grade 1 of
            0–2 has target 1/3 (``calibration_target="binary"`` gives P(grade ≥ 1)).
        """
        p = _sigmoid(self._margins(X))
        return np.column_stack([1.0 - p, p])

    def score(self, X: Any, y: Any, *, qid: Any = None, group: Any = None,
              position: Any = None) -> float:
        """The ``scoring`` metric of ``predict(X)`` against grades ``y``, per query of
        ``X``'s query-id column, ``qid`` or ``group`` (one of them, or
        ``groupless=True``). A click metric (``"ips_dcg@10"``) also reads the rows'
        logged positions (``position=`` or the ``position_col`` column of ``X``) and the
        propensities of ``fit``."""
        s = self.predict(X)
        Xv, full = self._checked_columns(X)
        in_X = None
        if full:
            feats, qid = self._query_ids(Xv, qid)
            in_X = self._split_columns(Xv)[2]
        else:
            feats = Xv
        qid = self._one_query_source(X, feats, qid, group, feats.shape[0],
                                     check_bool(self.groupless, "groupless"), "score")
        self._warn_if_split_queries(qid)
        metric = get_metric(self.scoring).with_margin(True)  # predict gives margins
        metric = metric.with_targets(getattr(self, "calibration_targets_", None))
        if metric.kind != "clicks":
            return float(metric(y, s, qid=qid))
        position = self._one_position_source(position, in_X)
        if position is None:
            raise ValueError(f"scoring={self.scoring!r} needs every row's logged position: "
                             "score(X, clicks, qid=..., position=...) or position_col=")
        _check_positions_have_queries(position, qid)
        rho = self._evaluation_propensity(self.objective_)
        return float(metric.with_propensity(rho)(y, s, qid=qid, position=position))


def _linked(X: Any, order: np.ndarray, offsets: np.ndarray,
            position: np.ndarray | None) -> np.ndarray | None:
    """A click log's blocks of sessions that show the same documents (identical feature
    rows less the columns constant within each session), which the validation split
    keeps together; None when the data are not a
    click log (no positions) or no two sessions share a row."""
    if position is None or offsets.size < 3:
        return None
    from gbrank._sessions import feature_rows, linked_sessions, session_columns

    X, sizes = _safe_indexing(X, order), np.diff(offsets)
    blocks = linked_sessions(feature_rows(X, session_columns(X, sizes)), sizes)
    return blocks if int(blocks.max()) + 1 < offsets.size - 1 else None


def _warn_if_merged_sessions(position: np.ndarray, sizes: np.ndarray) -> None:
    """A query id whose rows repeat a display position holds several sessions, while
    IPS-DCG reads each list as one session (a correction's own training warns about its
    groups itself)."""
    from gbrank._validation import repeated_position

    twice = repeated_position(np.asarray(position, dtype=np.int64), sizes)
    if twice is not None:
        import warnings

        i, at, rows = twice
        warnings.warn(
            f"query {i} (in ascending id order) shows position {at} on {rows} rows: several "
            "sessions under one id, while ips_dcg reads each list as one session (each "
            "position once); give each session its own qid",
            UserWarning, stacklevel=3)


def _id_counts(qid: Any) -> tuple[np.ndarray, np.ndarray] | None:
    """The distinct query ids and their row counts (None for ids of mixed types)."""
    try:
        return np.unique(np.asarray(qid).ravel(), return_counts=True)
    except TypeError:  # ids of mixed types
        return None
