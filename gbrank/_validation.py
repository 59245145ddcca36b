"""Input validation: the one place public functions check their input (the query
structure of ranking input is :mod:`gbrank._queries`'s).

Everything a user hands to gbrank (NumPy arrays, pandas objects, lists; float32 or
float64; query sizes or per-row query ids) is turned here into contiguous float64
arrays plus a :class:`Queries` description, and checked once. Kernels downstream
trust what they get, so every error a user can cause is raised here, as a
``ValueError`` that names the problem, never from inside numba.
"""

from __future__ import annotations

import numbers
from typing import Any

import numpy as np

__all__ = [
    "as_float_array",
    "check_finite",
    "refuse_flat_multiclass",
    "check_probabilities",
    "probabilities_or_labels",
    "check_lengths",
    "check_grades",
    "check_number",
    "check_max_step",
    "check_integer",
    "check_choice",
    "check_bool",
    "check_beta",
    "check_threshold",
    "check_label_gain",
    "check_row_weights",
    "check_start_score",
    "prepare_binary",
    "call_function_objective",
    "check_positions",
    "check_propensity",
    "propensity_per_row",
    "check_clicks",
]

# 2**l - 1 is an exact float64 integer for l <= 53; beyond that the gain rounds.
MAX_EXACT_GRADE = 53


# -- scalar parameters ---------------------------------------------------------------
# One rule each. Errors name the parameter, the value and the valid range. What a user
# naturally passes is accepted: NumPy scalars, and for integers an integral float
# (``y.max()`` of float labels) as well as any NumPy integer. Booleans are not numbers.


def _interval(low: float, high: float, low_open: bool, high_open: bool) -> str:
    lo = "-inf" if low == -np.inf else f"{low:g}"
    hi = "inf" if high == np.inf else f"{high:g}"
    return f"{'(' if low_open or low == -np.inf else '['}{lo}, {hi}" \
           f"{')' if high_open or high == np.inf else ']'}"


def check_number(value: Any, name: str, low: float = -np.inf, high: float = np.inf, *,
                 low_open: bool = False, high_open: bool = False) -> float:
    """A finite real number in the interval from ``low`` to ``high`` (closed unless
    ``low_open`` / ``high_open``), returned as ``float``.

    Raises ``ValueError("<name> must be a finite number in <interval>, got <value>")``.
    """
    ok = not isinstance(value, (bool, np.bool_)) and isinstance(value, numbers.Real)
    v = float(value) if ok else np.nan
    if ok and np.isfinite(v):
        ok = (v > low if low_open else v >= low) and (v < high if high_open else v <= high)
    else:
        ok = False
    if not ok:
        raise ValueError(f"{name} must be a finite number in "
                         f"{_interval(low, high, low_open, high_open)}, got {value!r}")
    return v


def check_integer(value: Any, name: str, low: int | None = None, high: int | None = None,
                  *, allow_none: bool = False) -> int | None:
    """An integer in ``[low, high]`` (either end open-ended when ``None``), as ``int``.

    Python and NumPy integers count, and so does an integral finite float (``4.0``,
    ``np.float64(4.0)``); booleans and fractional values do not. ``None`` passes
    through when ``allow_none``.
    """
    if value is None and allow_none:
        return None
    v: int | None = None
    if isinstance(value, (bool, np.bool_)):
        v = None
    elif isinstance(value, numbers.Integral):
        v = int(value)
    elif isinstance(value, numbers.Real) and np.isfinite(value) and value == int(value):
        v = int(value)
    if v is None or (low is not None and v < low) or (high is not None and v > high):
        lo = "-inf" if low is None else str(low)
        hi = "inf" if high is None else str(high)
        extra = " or None" if allow_none else ""
        raise ValueError(f"{name} must be an integer in [{lo}, {hi}]{extra}, got {value!r}")
    return v


# The pair sigmoid's steepness: beyond 1e6, σ² · ρ(1 − ρ) and σ · Δs leave the range
# where float64 Hessians stay finite for booster-sized scores (σ = 1e200 gives NaN).
SIGMA_MAX = 1e6


def check_sigma(value: Any, name: str = "sigma") -> float:
    """σ of the pairwise objectives: a number in (0, ``SIGMA_MAX``]."""
    return check_number(value, name, 0.0, SIGMA_MAX, low_open=True)


def check_max_step(value: Any, name: str = "max_step") -> float | None:
    """The bound on a booster's Newton step (LambdaRank, FocalLoss, FBetaSurrogate): a
    finite number > 0, or ``None`` for no bound."""
    if value is None:
        return None
    try:
        return check_number(value, name, 0.0, low_open=True)
    except ValueError:
        raise ValueError(f"{name} must be a finite number in (0, inf) or None, "
                         f"got {value!r}") from None


def check_choice(value: Any, name: str, choices: tuple[str, ...]) -> str:
    """One of the strings ``choices`` (exact, case-sensitive)."""
    if not (isinstance(value, str) and value in choices):
        raise ValueError(f"{name} must be one of {list(choices)}, got {value!r}")
    return value


def check_beta(value: Any, name: str = "beta") -> float:
    """β of an F_β: a finite number > 0."""
    return check_number(value, name, 0.0, low_open=True)


def check_bool(value: Any, name: str) -> bool:
    """``True`` or ``False`` (NumPy booleans included)."""
    if not isinstance(value, (bool, np.bool_)):
        raise ValueError(f"{name} must be True or False, got {value!r}")
    return bool(value)


def check_threshold(value: Any, name: str = "threshold") -> float:
    """A threshold (relevance on labels, or a cut on scores): any finite number.

    The one rule for thresholds everywhere in gbrank: ±inf is refused like NaN (a
    threshold that nothing or everything passes is always a finite number away).
    """
    return check_number(value, name)


def check_label_gain(label_gain: Any, name: str = "label_gain") -> np.ndarray:
    """NDCG gain table indexed by integer grade: non-empty, finite, float64."""
    table = as_float_array(label_gain, name)
    check_finite(table, name)
    return table


def _check_weight_values(w: np.ndarray, name: str) -> None:
    check_finite(w, name)
    neg = np.flatnonzero(w < 0)
    if neg.size:
        raise ValueError(f"{name} must be non-negative; {neg.size} negative (first at index "
                         f"{neg[0]}: {float(w[neg[0]])!r})")
    if not np.any(w > 0):
        raise ValueError(f"{name} are all zero")


def check_row_weights(weight: Any, n: int, name: str = "weight") -> np.ndarray | None:
    """Per-row weights: ``None``, or ``n`` finite non-negative numbers, not all zero."""
    if weight is None:
        return None
    w = as_float_array(weight, name)
    if w.size != n:
        raise ValueError(f"{name} has {w.size} entries but there are {n} rows")
    _check_weight_values(w, "weights")
    return w


def _to_numpy(x: Any) -> np.ndarray:
    # pandas Series/DataFrame, LightGBM/XGBoost label arrays, lists, tuples.
    if hasattr(x, "to_numpy"):
        x = x.to_numpy()
    return np.asarray(x)


def as_float_array(x: Any, name: str, *, allow_2d: bool = False) -> np.ndarray:
    """Return ``x`` as a contiguous float64 array (1-D unless ``allow_2d``)."""
    if x is None:
        raise ValueError(f"{name} is required, got None")
    try:
        a = _to_numpy(x)
        if a.dtype == object:
            a = a.astype(np.float64)
    except (TypeError, ValueError) as exc:
        raise ValueError(f"{name} must be numeric: {exc}") from None
    if a.dtype.kind not in "biuf":
        raise ValueError(f"{name} must be numeric, got dtype {a.dtype}")
    if a.ndim == 2 and a.shape[1] == 1 and not allow_2d:
        a = a[:, 0]
    if a.ndim != 1 and not (allow_2d and a.ndim == 2):
        want = "1-D or 2-D" if allow_2d else "1-D"
        hint = ""
        if name == "scores" and a.ndim == 2 and a.shape[1] == 2:  # scikit-learn's habit
            hint = (" (predict_proba's two columns? pass the positive class's probability, "
                    "predict_proba(X)[:, 1])")
        raise ValueError(f"{name} must be {want}, got shape {a.shape}{hint}")
    if a.size == 0:
        raise ValueError(f"{name} is empty")
    return np.ascontiguousarray(a, dtype=np.float64)


def _first_bad(a: np.ndarray, bad: np.ndarray) -> tuple[int, Any, float]:
    """How many entries of ``a`` the mask ``bad`` flags, the index of the first (a row
    number, or a tuple for 2-D) and its value."""
    flat = np.flatnonzero(bad.ravel())
    first = np.unravel_index(flat[0], a.shape)
    where = first[0] if a.ndim == 1 else tuple(int(i) for i in first)
    return flat.size, where, float(a[first])


def refuse_flat_multiclass(size: int, shape: str, n: int | None = None) -> None:
    """Refuse a flat vector of ``size`` K-class scores (``shape``: the one wanted, as
    the message says it): class-major (LightGBM 3) and row-major (NumPy's ravel, old
    XGBoost) readings each give a plausible number, so neither is guessed; both boosters
    this library supports hand (n, K) arrays. One value per row (``n`` rows) is a class
    label, not scores (XGBoost's ``multi:softmax``)."""
    if n is not None and size == n:
        raise ValueError(f"multiclass scores must have shape {shape}; got one value per "
                         "row: predicted classes, not scores (XGBoost's multi:softmax "
                         "hands its metrics those). Use multi:softprob, or pass the "
                         "(n, K) probabilities")
    raise ValueError(f"multiclass scores must have shape {shape}; got a flat vector of "
                     f"{size}. A flat n·K vector has two layouts (class-major: "
                     "s.reshape(K, n).T; row-major: s.reshape(n, K)): pass the (n, K) array")


def check_finite(a: np.ndarray, name: str) -> None:
    """Raise if ``a`` holds NaN or inf, with the count and first index."""
    bad = ~np.isfinite(a)
    if bad.any():
        count, where, value = _first_bad(a, bad)
        raise ValueError(
            f"{name} contain {count} NaN/inf value(s) (first at index {where}: {value!r})")


def check_probabilities(a: np.ndarray, name: str, fix: str) -> None:
    """Raise unless every entry of ``a`` lies in [0, 1], naming the first one outside
    (with the count) and ``fix``, what to pass instead when ``a`` holds another scale.

    The one check behind every "probabilities by default" function: a raw margin
    (log-odds) read as a probability is a plausible wrong number, not an error.
    """
    bad = (a < 0.0) | (a > 1.0)
    if bad.any():
        count, where, value = _first_bad(a, bad)
        raise ValueError(
            f"{name} hold {count} value(s) outside [0, 1] (first at index {where}: "
            f"{value!r}), so they are not probabilities; {fix}")


def probabilities_or_labels(s: np.ndarray) -> bool:
    """Whether binary scores ``s`` (finite, 1-D) read as probabilities: every one in
    [0, 1], or all predicted labels {-1, +1} (scikit-learn's ``f1_score(y, y_pred)``;
    {0, 1} labels lie in [0, 1] already)."""
    return bool((s.min() >= 0.0 and s.max() <= 1.0) or np.all(np.abs(s) == 1.0))


def check_start_score(value: Any, num_class: int, n_rows: int | None = None,
                      name: str = "init_score") -> np.ndarray:
    """The raw score a model starts from: a number, or one per class ``(num_class,)``
    when ``num_class > 1``; with ``n_rows``, also one per row (``(n_rows,)``, or
    ``(n_rows, num_class)``).

    Returns a float64 array: ``(num_class,)`` for a constant start (a number repeated
    per class), else the per-row array as given.
    """
    if np.ndim(value) == 0:
        number = value.item() if isinstance(value, np.ndarray) else value
        return np.full(num_class, check_number(number, name))
    a = as_float_array(value, name, allow_2d=num_class > 1)
    check_finite(a, name)
    if a.shape == (num_class,):
        return a
    if n_rows is not None and a.shape == ((n_rows,) if num_class == 1 else (n_rows, num_class)):
        return a
    shapes = ["a number"]
    if num_class > 1:
        shapes.append(f"one per class {(num_class,)}")
    if n_rows is not None:
        shapes.append(f"one per row {(n_rows,) if num_class == 1 else (n_rows, num_class)}")
    valid = shapes[0] if len(shapes) == 1 else ", ".join(shapes[:-1]) + ", or " + shapes[-1]
    raise ValueError(f"{name} must be {valid}; got shape {a.shape}")


def check_grades(y: np.ndarray, *, integer: bool, max_grade: int | None = MAX_EXACT_GRADE,
                 name: str = "labels", max_grade_reason: str | None = None) -> None:
    """Ranking labels: non-negative, integer where a gain 2**l - 1 needs it, and at most
    ``max_grade`` (``max_grade_reason`` says why, e.g. the length of ``label_gain``)."""
    neg = np.flatnonzero(y < 0)
    if neg.size:
        raise ValueError(
            f"{name} must be non-negative grades; {neg.size} negative (first at index "
            f"{neg[0]}: {float(y[neg[0]])!r})"
        )
    if integer:
        frac = np.flatnonzero(y != np.floor(y))
        if frac.size:
            raise ValueError(
                f"{name} must be integer grades for gain 2**l - 1; {frac.size} non-integer "
                f"(first at index {frac[0]}: {float(y[frac[0]])!r}); use integer grades, "
                "or for real-valued labels the metric metrics.ndcg(..., gain='linear') "
                "and the objective RankNet (it reads any non-negative labels)"
            )
    if max_grade is not None:
        big = np.flatnonzero(y > max_grade)
        if big.size:
            why = max_grade_reason or (f"2**l - 1 is exact in float64 only up to "
                                       f"l = {max_grade}")
            raise ValueError(
                f"{name}: grade {float(y[big[0]])!r} at index {big[0]} is too large; {why}"
            )


def check_lengths(y: np.ndarray, s: np.ndarray) -> None:
    """Labels and scores have the same number of rows."""
    if y.shape[0] != s.shape[0]:
        raise ValueError(f"labels have {y.shape[0]} rows but scores have {s.shape[0]}")


def prepare_binary(y: Any, s: Any, weight: Any = None, *, allow_2d_scores: bool = False,
                   ) -> tuple[np.ndarray, np.ndarray, np.ndarray | None]:
    """Validate binary input; labels {0, 1} or {-1, +1} become float64 {0, 1}.

    Returns ``(y01, s, w)`` with ``w`` per-row float64 or ``None``.
    """
    y = as_float_array(y, "labels")
    s = as_float_array(s, "scores", allow_2d=allow_2d_scores)
    check_lengths(y, s)
    check_finite(y, "labels")
    check_finite(s, "scores")
    # Two O(n) passes instead of np.unique's sort: this runs on every boosting round.
    pos = y == 1.0
    if np.all(pos | (y == 0.0)):
        y01 = y
    elif np.all(pos | (y == -1.0)):
        y01 = pos.astype(np.float64)
    else:
        values = np.unique(y)
        bad = values[~np.isin(values, (-1.0, 0.0, 1.0))]
        shown = (bad if bad.size else values)[:5]
        raise ValueError(
            f"binary labels must be {{0, 1}} or {{-1, +1}}; found {values.size} distinct "
            f"values including {shown.tolist()}"
        )
    return y01, s, check_row_weights(weight, y.size)


# Attribute names a LightGBM-style ``fobj(preds, train_set)`` reads from its second
# argument; handed an array there instead, it fails with an AttributeError naming one.
_DATASET_READERS = ("get_label", "get_weight", "get_group", "get_init_score", "get_field",
                    "get_data", "get_base_margin", "get_float_info", "get_uint_info",
                    "'label'", "'weight'", "'group'")


def call_function_objective(fn: Any, y: np.ndarray, s: np.ndarray, group: Any = None,
                            name: str = "objective") -> tuple[np.ndarray, np.ndarray]:
    """Gradient and Hessian from a plain function ``fn(y, s) -> (grad, hess)``.

    ``fn`` is called ``fn(y, s)``, or ``fn(y, s, group)`` when ``group`` (query sizes)
    is given. Both results must be finite and have the shape of ``s``; they are
    returned as float64 arrays. A LightGBM-style ``fobj(preds, train_set)`` is
    recognised by the ``AttributeError`` it raises and refused with the fix.
    """
    args = (y, s) if group is None else (y, s, group)
    try:
        out = fn(*args)
    except AttributeError as exc:
        if any(attr in str(exc) for attr in _DATASET_READERS):
            raise ValueError(
                f"{name} {getattr(fn, '__qualname__', fn)!r} reads a booster's data object "
                f"({exc}); gbrank calls a plain function as fn(y, s) -> (grad, hess), "
                "labels first. Wrap a LightGBM-style fobj(preds, train_set), e.g. "
                "lambda y, s: fobj(s, lightgbm.Dataset(np.zeros((len(y), 1)), label=y, "
                "params={'verbose': -1}).construct()), or an XGBoost-style "
                "obj(predt, dtrain): lambda y, s: obj(s, xgboost.DMatrix("
                "np.zeros((len(y), 1)), label=y))"
            ) from exc
        raise
    try:
        grad, hess = out
    except (TypeError, ValueError):
        raise ValueError(f"{name} must return a pair (grad, hess), got "
                         f"{type(out).__name__}") from None
    arrays = []
    for value, what in ((grad, "gradient"), (hess, "Hessian")):
        a = np.asarray(value, dtype=np.float64)
        if a.shape != s.shape:
            raise ValueError(f"{name} returned a {what} of shape {a.shape}; it must have "
                             f"the shape of the scores, {s.shape}")
        check_finite(a, f"{name}'s {what} values")
        arrays.append(a)
    return arrays[0], arrays[1]


# -- click logs: positions, propensities, clicks ---------------------------------------


def check_positions(position: Any, n: int, name: str = "position", *, low: int = 0,
                    ) -> np.ndarray:
    """Display positions, one per row: integers ≥ ``low`` (1-based display ranks, or any
    non-negative integer slot ids), returned as int64."""
    if position is None:
        raise ValueError(f"{name} is required, got None")
    p = as_float_array(position, name)
    if p.size != n:
        raise ValueError(f"{name} has {p.size} entries but there are {n} rows")
    missing = ~np.isfinite(p)
    if missing.any():
        raise ValueError(
            f"{name} is missing (NaN/inf) on {int(missing.sum())} rows (first at index "
            f"{int(np.flatnonzero(missing)[0])}): every row of a click log was shown at a "
            "position; leave out rows that were not displayed")
    bad = np.flatnonzero((p < low) | (p != np.floor(p)))
    if bad.size:
        what = ("1-based display ranks or slot ids" if low >= 1 else
                "display ranks or non-negative integer slot ids")
        raise ValueError(f"{name} must hold integer positions ≥ {low} ({what}); {bad.size} "
                         f"do not (first at index {bad[0]}: {float(p[bad[0]])!r})")
    if p.size and float(p.max()) >= 2.0**53:
        raise ValueError(f"{name} holds {float(p.max())!r}, beyond the integers float64 "
                         "represents exactly")
    return p.astype(np.int64)


def repeated_position(position: np.ndarray, sizes: np.ndarray | None,
                      ) -> tuple[int, int, int] | None:
    """The first list (``sizes``: contiguous lists' lengths) holding one display position
    on several rows, as ``(list index, position, rows)``; None when every list's positions
    are distinct (a session shows one row per position; several sessions merged under
    one id repeat them)."""
    if sizes is None or position.size == 0:
        return None
    lists = np.repeat(np.arange(np.size(sizes)), sizes)
    key = lists * (int(position.max()) + 1) + position
    values, counts = np.unique(key, return_counts=True)
    at = np.flatnonzero(counts > 1)
    if not at.size:
        return None
    span = int(position.max()) + 1
    v = int(values[at[0]])
    return v // span, v % span, int(counts[at[0]])


def check_propensity(propensity: Any, name: str = "propensity",
                     ) -> tuple[np.ndarray, np.ndarray]:
    """Examination probabilities per position, as ``(positions, values)`` sorted by
    position: a sequence ρ(1), ρ(2), … for positions 1, 2, … (``ClickLog.examination``),
    or a mapping ``{position: ρ}`` for any non-negative integer positions; every value
    in (0, 1]."""
    if isinstance(propensity, dict):
        if not propensity:
            raise ValueError(f"{name} is an empty mapping; give {{position: probability}}")
        keys = [check_integer(k, f"a position (key) of {name}", 0) for k in propensity]
        order = np.argsort(keys, kind="stable")
        pos = np.asarray(keys, dtype=np.int64)[order]
        rho = as_float_array([propensity[k] for k in propensity], name)[order]
    else:
        if isinstance(propensity, (str, bytes)) or np.ndim(propensity) != 1:
            raise ValueError(f"{name} must be a sequence of probabilities for positions 1, "
                             f"2, … or a mapping {{position: probability}}, got "
                             f"{propensity!r}")
        rho = as_float_array(propensity, name)
        pos = np.arange(1, rho.size + 1, dtype=np.int64)
    check_finite(rho, name)
    bad = np.flatnonzero((rho <= 0) | (rho > 1))
    if bad.size:
        raise ValueError(f"{name} must hold probabilities in (0, 1]; position "
                         f"{int(pos[bad[0]])} has {float(rho[bad[0]])!r}")
    return pos, rho


def propensity_per_row(table: tuple[np.ndarray, np.ndarray], positions: np.ndarray,
                       name: str = "propensity", hint: str = "") -> np.ndarray:
    """ρ of every row's position from a :func:`check_propensity` table; a position
    without a value is an error naming it (``hint`` is appended)."""
    pos, rho = table
    at = np.searchsorted(pos, positions)
    at_c = np.minimum(at, pos.size - 1)
    missing = np.flatnonzero(pos[at_c] != positions)
    if missing.size:
        p = int(positions[missing[0]])
        if p == 0 and pos[0] == 1 and np.array_equal(pos, np.arange(1, pos.size + 1)):
            why = (f"position 0 occurs, but a sequence of {name} is for positions 1, 2, …; "
                   f"pass a mapping {{position: probability}} for slot ids that start at 0")
        elif pos[0] == 1 and np.array_equal(pos, np.arange(1, pos.size + 1)):
            why = (f"{name} has {pos.size} entries but position {p} occurs; give one "
                   "examination probability per position 1, 2, …")
        else:
            why = f"{name} has no value for position {p}, which occurs"
        raise ValueError(why + hint)
    return rho[at_c]


#: The way round a log of click counts, where sessions matter.
KEEP_SESSIONS = ("keep sessions apart (gbrank.datasets.simulate_clicks("
                  "sessions='keep'))")


def check_clicks(y: np.ndarray, why: str, name: str = "labels", *,
                 fix: str = f"{KEEP_SESSIONS}, or use position_bias='additive', which "
                            "takes any grades") -> None:
    """Labels that are clicks, 0 or 1 each (``why`` names what needs them, ``fix`` the
    way round a log of click counts)."""
    bad = np.flatnonzero((y != 0) & (y != 1))
    if bad.size:
        raise ValueError(
            f"{why} needs clicks as {name}, 0 or 1 per displayed row (one query per "
            f"session); {bad.size} are not (first at index {bad[0]}: {float(y[bad[0]])!r}). "
            f"Counts or rates of clicks summed over sessions lose which rows a session "
            f"compared: {fix}")
