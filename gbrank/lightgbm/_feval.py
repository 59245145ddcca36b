"""feval: gbrank metrics as LightGBM evaluation functions, under names of their own."""

from __future__ import annotations

import weakref
from typing import Any

import numpy as np

from gbrank._fields import (
    LOGIT,
    SOFTMAX,
    VALUE,
    check_fold_keeps_queries,
    custom_rounds,
    is_lightgbm_dataset,
    lightgbm_dataset_fields,
    lightgbm_objective,
    lightgbm_positions,
    lightgbm_subset_rows,
    margins_by_values,
    missing_start_error,
    native_link,
    renumbered_like_lightgbm,
    start_kind,
    warn_lightgbm_builtin_metrics,
)
from gbrank._queries import check_declared_queries


def metric_key(name: str) -> str:
    """The name under which a booster logs the gbrank metric ``name`` (in
    ``evals_result``, ``lgb.cv``'s result and early-stopping messages):
    ``"gbrank_" + canonical name`` with ``:`` written ``_`` (the key is the same for
    XGBoost, whose evaluation log splits at ``:``), never the name of one of LightGBM's
    own metrics.

    Parameters
    ----------
    name : str
        A metric name (:func:`gbrank.metrics.get_metric`).

    Returns
    -------
    str

    Examples
    --------
    >>> from gbrank.lightgbm import metric_key
    >>> metric_key("NDCG@10"), metric_key("fbeta:2")
    ('gbrank_ndcg@10', 'gbrank_fbeta_2')

    ``lgb.cv`` logs it with a ``"valid "`` prefix and ``"-mean"`` / ``"-stdv"`` suffixes:
    ``result["valid " + metric_key("ndcg@10") + "-mean"]``.
    """
    from gbrank.metrics import get_metric

    return get_metric(name).key


def _missing_start(ds: Any) -> str | None:
    """The kind of start (:func:`~gbrank._fields.start_kind`) the training Dataset
    ``ds`` refers to has and ``ds`` lacks; ``None`` when none is missing (read every
    round, as a Dataset's fields can be set between trainings; the usual Dataset,
    with its start or without a referred one, returns at once)."""
    ref = getattr(ds, "reference", None)
    if ref is None or ds.get_init_score() is not None:
        return None
    return start_kind(ref.get_init_score(), ref.num_data())


def _training_targets(ds: Any) -> dict[str, Any] | None:
    """For ``logloss`` and ``ece`` on a validation Dataset (or an ``lgb.cv`` fold) of
    a training on grades: the training labels' top grade, the ``g_max`` a calibrated
    objective's default mapping learned from (``CrossEntropy()``, ``calibration=α``).
    Without it, a part whose grades are all 0 or 1 would be read as clicks and one
    topping at 3 of a 0-4 scale mapped to other targets."""
    ref = None if ds is None else getattr(ds, "reference", None)
    y = None if ref is None else ref.get_label()
    if y is None or np.size(y) == 0:
        return None
    y = np.asarray(y, dtype=np.float64)
    if float(np.min(y)) >= 0.0 and float(np.max(y)) <= 1.0:
        return None  # clicks or rates: targets as they are
    return {"max_grade": float(np.max(y))}


class _FEval:
    """LightGBM metric callable for ``lgb.train(feval=...)`` and the sklearn API.

    ``lgb.train`` calls ``f(preds, eval_data)``; ``LGBMRanker.fit(eval_metric=f)`` counts
    the parameters of ``f`` and, seeing exactly four, calls ``f(y_true, y_pred, weight,
    group)``. Both return a list of ``(name, value, True)``.
    """

    def __init__(self, metrics: tuple[Any, ...], position: Any = None,
                 margin: bool | None = None, groupless: bool = False) -> None:
        self.metrics = metrics
        self.position = position
        self.margin = margin
        self.groupless = groupless

    def __call__(self, a: Any, b: Any, weight: Any = None, group: Any = None,
                 ) -> list[tuple[str, float, bool]]:
        if is_lightgbm_dataset(b):
            preds, ds = a, b
            y, weight, group = lightgbm_dataset_fields(b)
        else:  # LightGBM's scikit-learn API: arrays only, no Dataset
            y, preds, ds = a, b, None
        ranking = [m for m in self.metrics if m.kind in ("ranking", "clicks")]
        if ds is not None:
            if ranking:
                check_fold_keeps_queries(ds)
            warn_lightgbm_builtin_metrics(ds, self.metrics[0].key)
            self._check_start(ds)
        if ranking:
            group = self._queries(ranking[0].name, group, ds is not None)
        margin = self._margin(preds, ds)
        targets = (_training_targets(ds) if any(m.maps_targets for m in self.metrics)
                   else None)
        out = []
        for m in self.metrics:
            m = m.with_targets(targets)
            if margin is not None:
                m = m.with_margin(margin)
            if m.kind == "clicks":
                value = m(y, preds, group, weight,
                          position=self._positions(m.name, ds, np.size(y)))
            else:
                value = m(y, preds, group if m.kind == "ranking" else None, weight)
            out.append((m.key, value, m.higher_is_better))
        return out

    def _check_start(self, ds: Any) -> None:
        """Refuse an evaluation Dataset without the start (``init_score``) its training
        Dataset has (:func:`~gbrank._fields.missing_start_error`)."""
        kind = _missing_start(ds)
        message = None if kind is None else missing_start_error(
            kind, self.metrics,
            "this evaluation Dataset has no init_score and the training Dataset starts "
            "from one", "LightGBM adds a Dataset's own start",
            "lgb.Dataset(X_valid, y_valid, init_score=...)")
        if message is not None:
            raise ValueError(message)

    def _positions(self, name: str, ds: Any, n: int) -> np.ndarray:
        """The logged positions of the ``n`` rows evaluated (from ``ds``): those given to
        :func:`feval`, for this data set or the fold of it ``lgb.cv`` made; checked
        against the positions the Dataset was built with, when it has any."""
        pos = self.position
        if pos is None:
            raise ValueError(
                f"{name} needs the logged display position of every evaluated row, given "
                f"as they are: feval({name!r}, propensity=..., position=positions) (a "
                "constructed LightGBM Dataset holds only LightGBM's renumbering of its "
                "positions, 0, 1, … by first appearance)")
        rows = None if ds is None else lightgbm_subset_rows(ds)
        if pos.size != n and rows is not None and rows.size == n and rows.max() < pos.size:
            pos = pos[rows]
        if pos.size != n:
            raise ValueError(f"feval's position= holds {pos.size} positions and the data "
                             f"evaluated has {n} rows: evaluate the data set they belong to")
        held = None if ds is None else lightgbm_positions(ds)
        if held is not None and not np.array_equal(renumbered_like_lightgbm(pos),
                                                    np.asarray(held, dtype=np.int64)):
            raise ValueError("feval's position= disagrees with the positions this LightGBM "
                             "Dataset was built with (compared through LightGBM's "
                             "renumbering): pass the evaluated data set's own positions, in "
                             "its row order")
        return pos
    def _queries(self, name: str, group: Any, dataset: bool) -> Any:
        """The query sizes a ranking metric judges: the data's, or none (all rows one
        query) when ``groupless=True`` declares it (:func:`check_declared_queries`)."""
        where = ("lgb.Dataset(X, y, group=sizes)" if dataset
                 else "LGBMRanker.fit(..., eval_group=[sizes])")
        check_declared_queries(None if group is None else int(np.size(group)),
                               self.groupless, name, "this evaluation data",
                               f"pass the query sizes ({where})", "feval(..., groupless=True)")
        return None if self.groupless else group

    def _margin(self, preds: Any, ds: Any) -> bool | None:
        """Whether ``preds`` are raw margins (``True``) or probabilities (``False``),
        for the metrics that read the scale (``None``: none of them does). An explicit
        ``margin`` wins; else the objective ``lgb.train`` copied into the Dataset says
        it (a custom one: margins; a logistic or softmax link: probabilities); else the
        values do, when some lies outside [0, 1]."""
        scaled = [m.name for m in self.metrics if m.reads_scale]
        if not scaled:
            return None
        if self.margin is not None:
            return self.margin
        name = None if ds is None else lightgbm_objective(ds)
        moved = None if ds is None else self._custom_rounds_moved(ds)
        if name is not None:
            link = native_link("lightgbm", name)
            by_values = margins_by_values(preds)
            if name == "none" and moved is False and by_values is None:
                raise ValueError(self._reused(
                    name, scaled[0], "no gbrank objective has been called since its last "
                    "evaluation and every prediction lies in [0, 1], as a native "
                    "objective's probabilities do"))
            if link is None:  # "none" (a custom objective) or a raw-score one
                return True
            if link in (LOGIT, SOFTMAX):
                if by_values:
                    raise ValueError(self._reused(
                        name, scaled[0], "some predictions lie outside [0, 1], where no "
                        "probability lies, as a custom objective's raw margins do"))
                return False
            if link == VALUE:
                cut = [m for m in scaled if m in ("f1", "balanced") or m.startswith("fbeta")]
                advice = ("feval(..., margin=True, threshold=0.5) to cut the values at 0.5"
                          if len(cut) == len(scaled) else
                          "feval(..., margin=False) to read values in [0, 1] as "
                          "probabilities")
                raise ValueError(
                    f"LightGBM's objective {name!r} hands feval estimates of the label, "
                    f"neither log-odds margins nor probabilities, so {scaled[0]} cannot "
                    f"read them unasked (as margins, it would take σ of them): pass "
                    f"{advice}, or train a classification objective")
            raise ValueError(
                f"LightGBM's objective {name!r} hands feval its predictions through a "
                f"{link!r} link, neither raw margins nor probabilities, so {scaled[0]} "
                "cannot read them unasked: pass feval(..., margin=True) to judge them as "
                "margins or margin=False as probabilities")
        by_values = margins_by_values(preds)
        if by_values is None:
            raise ValueError(
                f"{scaled[0]} reads probabilities or raw margins, and this call does not "
                "say which (LightGBM's scikit-learn API hands feval predictions without "
                "the Dataset: a native objective such as 'binary' gives probabilities, a "
                "custom one raw margins); every prediction lies in [0, 1], so both could "
                "be meant: pass feval(..., margin=False) for probabilities or "
                "feval(..., margin=True) for raw margins")
        return by_values

    def _custom_rounds_moved(self, ds: Any) -> bool | None:
        """Whether a gbrank objective has trained a round on ``ds``'s training data since
        this feval last evaluated ``ds`` (``None``: no gbrank objective ever trained on
        it, or the first look)."""
        rounds = custom_rounds(ds)
        if rounds is None:
            return None
        seen = self.__dict__.setdefault("_rounds_seen", weakref.WeakKeyDictionary())
        try:
            last = seen.get(ds)
            seen[ds] = rounds
        except TypeError:
            return None
        return None if last is None else rounds != last

    @staticmethod
    def _reused(name: str, metric: str, evidence: str) -> str:
        return (f"{metric} reads probabilities or raw margins, and this Dataset's "
                f"parameters say objective {name!r}, but {evidence}: LightGBM keeps the "
                "objective of the first lgb.train that used a Dataset in its parameters "
                "when another training reuses it, so they may not describe this training. "
                "Say which: feval(..., margin=False) for a native objective's "
                "probabilities, feval(..., margin=True) for raw margins; or build new "
                "Datasets for each training")

    def __getstate__(self) -> dict[str, Any]:
        state = dict(self.__dict__)
        state.pop("_rounds_seen", None)  # per-process training state, not picklable
        return state

    def __repr__(self) -> str:
        return f"feval({', '.join(repr(m.name) for m in self.metrics)})"


def feval(*names: str, threshold: float | None = None, propensity: Any = None,
          position: Any = None, margin: bool | None = None,
          groupless: bool = False) -> _FEval:
    """A LightGBM evaluation function computing gbrank metrics by name.

    Parameters
    ----------
    *names : str
        Registry names (:func:`gbrank.metrics.get_metric`): ``"ndcg@10"``, ``"err@10"``,
        ``"map@5"``, ``"mrr"``, ``"pair_accuracy"``, ``"f1"``, ``"fbeta:2"``, ...
    threshold : float, optional
        Threshold for binary metrics (prediction ``s > threshold``), on the scale of
        the predictions. Default: 0 on raw margins, 0.5 on probabilities.
    propensity : sequence or dict, optional
        Examination propensities for click metrics (``"ips_dcg@10"``): ρ(1), ρ(2), …
        or ``{position: ρ}``. Their labels are clicks: early stopping on a held-out part
        of the click log.
    position : array-like of int, optional
        For click metrics (required there): the logged display position of every row of
        the evaluated Dataset, in its row order (a constructed Dataset holds only
        LightGBM's renumbering of its own). Evaluated by ``lgb.cv``, the positions of
        the whole training set (each fold takes its rows'). When the Dataset was also
        built with ``position=``, the two must agree.
    margin : bool, optional
        Whether LightGBM hands raw margins (``True``) or probabilities (``False``) to
        the metrics that read the scale (binary, ``logloss``, ``ece``, ``mlogloss``).
        ``None`` (default) infers it: in ``lgb.train`` / ``lgb.cv`` from the objective
        they copy into the evaluation Dataset (a custom objective, e.g. every gbrank
        one, and LightGBM's raw-score objectives give margins; ``binary``,
        ``cross_entropy``, ``multiclass``, ``multiclassova`` give probabilities; other
        links are refused); in LightGBM's scikit-learn API, which hands no Dataset,
        from the values: any outside [0, 1] means margins, and all inside is refused as
        ambiguous. An explicit value is used as given. LightGBM keeps the objective of
        the first ``lgb.train`` that used a Dataset in its parameters when a later one
        reuses it: a native objective's probabilities (every value in [0, 1]) where the
        Dataset says a custom one, with no gbrank objective trained since this feval's
        last look at it, and values outside [0, 1] where it says a probability
        objective, are refused (a new feval's first look cannot tell, nor can one
        evaluation after training; pass ``margin=`` with reused Datasets).
    groupless : bool, default False
        Declare that every row of the evaluation data is one query, for ranking and
        click metrics on data without query structure (which is otherwise refused);
        data with several queries is then refused.

    Returns
    -------
    callable
        Use as ``lgb.train(..., feval=f)`` (query sizes from ``Dataset.get_group()``,
        weights from ``get_weight()``) or ``LGBMRanker().fit(..., eval_metric=f)``.
        It returns one ``("gbrank_<name>", value, higher_is_better)`` per name; early
        stopping follows each metric's direction.

    Raises
    ------
    ValueError
        When a ranking metric meets evaluation data without query structure (and no
        ``groupless=True``), or a scale-reading metric meets predictions it cannot
        read unambiguously (and no ``margin=``); both messages name the fix.

    Notes
    -----
    Each value is logged as ``"gbrank_<name>"`` (:func:`metric_key`), never under the
    name of one of LightGBM's own metrics (``ndcg@10``, ``map@5``), so both can be
    recorded side by side. LightGBM lists its built-in metrics first: when any is
    configured (``params["metric"]``) on ``lgb.train``'s data this function warns once,
    because ``early_stopping(first_metric_only=True)`` would stop on the built-in
    metric; set ``metric="None"`` to evaluate only gbrank's. Ranking metrics refuse a
    cross-validation fold that cuts queries (see :func:`cv`). In the scikit-learn API
    (no Dataset) neither check can run.

    Examples
    --------
    >>> import lightgbm as lgb
    >>> from gbrank.datasets import make_ranking
    >>> from gbrank.lightgbm import feval
    >>> from gbrank.objectives import LambdaRank
    >>> X, y, group = make_ranking(n_queries=40, rows_per_query=20, n_features=5)
    >>> train = lgb.Dataset(X[:600], y[:600], group=group[:30])
    >>> valid = lgb.Dataset(X[600:], y[600:], group=group[30:], reference=train)
    >>> log = {}
    >>> booster = lgb.train({"objective": LambdaRank(), "metric": "None", "verbosity": -1},
    ...                     train, num_boost_round=5, valid_sets=[valid],
    ...                     feval=feval("ndcg@10", "err@10"),
    ...                     callbacks=[lgb.record_evaluation(log)])
    >>> sorted(log["valid_0"])
    ['gbrank_err@10', 'gbrank_ndcg@10']

    A native ``binary`` objective hands probabilities, a custom one raw margins;
    ``feval("f1", "logloss")`` reads either from the training's objective:

    >>> import numpy as np
    >>> from gbrank.objectives import FocalLoss
    >>> rng = np.random.default_rng(0)
    >>> Xb = rng.standard_normal((400, 3))
    >>> yb = (Xb[:, 0] + rng.standard_normal(400) > 0).astype(float)
    >>> for objective in ("binary", FocalLoss(gamma=0.0)):
    ...     data = lgb.Dataset(Xb, yb)
    ...     log = {}
    ...     booster = lgb.train({"objective": objective, "metric": "None", "verbosity": -1},
    ...                         data, num_boost_round=20, valid_sets=[data],
    ...                         feval=feval("f1", "logloss"),
    ...                         callbacks=[lgb.record_evaluation(log)])
    ...     print(round(log["training"]["gbrank_logloss"][-1], 2))
    0.4
    0.4
    """
    from gbrank._validation import check_bool
    from gbrank.metrics import get_metric

    if not names:
        raise ValueError("feval needs at least one metric name, e.g. feval('ndcg@10')")
    metrics = tuple(get_metric(n) for n in names)
    if threshold is not None:
        metrics = tuple(m.with_threshold(threshold) for m in metrics)
    if propensity is not None or position is not None:
        if not any(m.kind == "clicks" for m in metrics):
            raise ValueError("propensity= and position= are for click metrics such as "
                             f"'ips_dcg@10'; none of {[m.name for m in metrics]} is one")
    if propensity is not None:
        metrics = tuple(m.with_propensity(propensity) for m in metrics)
    if position is not None:
        from gbrank._validation import check_positions

        position = check_positions(position, np.size(position))
    margin = None if margin is None else check_bool(margin, "margin")
    return _FEval(metrics, position, margin, check_bool(groupless, "groupless"))
