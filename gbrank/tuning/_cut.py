"""Where a binary model decides, as the tuner judges it.

F_β and the balanced measure read the scores at a cut, and the cut that suits one
objective does not suit another: a focal model's margins on rare positives may never pass
0, so judged at margin > 0 it scores F1 = 0 however well it ranks them. Judging every
objective at the same fixed cut compares cuts, not models (figures: CHANGELOG.md).
The tuner therefore judges a threshold metric at a cut chosen on held-out predictions,
never on the rows it is scored on:

- on a validation fold (trials, rescoring): :func:`cross_fitted`, the fold's rows split
  in two halves (stratified, the same split for every trial of the fold); the cut best
  on one half judges the other, and the metric is read from the pooled decisions;
- on the test split: the cut best on the out-of-fold predictions of the rescoring
  (:func:`best_cut` over every unit's validation rows), applied to the refit model: the
  cut the recommended code (``GBClassifier(threshold=...)``) decides at.

Cuts are on the margin scale (log-odds, the tuner's raw scores).

K classes decide likewise when the study's metric is a macro F_β (``macro_f1``): at
per-class offsets of the log-probabilities (:func:`gbrank.metrics.best_class_offsets`,
``GBClassifier``'s default rule), chosen on rows they do not judge: on each validation
fold, the offsets best on the other folds' validation rows pooled (cross-fold:
:func:`gbrank.tuning._cv.score_folds`; halves of the rows, :func:`cross_fitted_decisions`,
where there is one fold); on the test split, those best on the pick's out-of-fold
predictions, which the code carries as ``GBClassifier(decision=[...])``. Early stopping
reads the argmax (a search per round would cost more than the round). Every metric that
reads the decisions (macro, weighted and micro F_β, balanced accuracy) reads those;
``mlogloss`` reads the probabilities. A study on another metric decides at the argmax,
as the metric does.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from gbrank._proba import logit
from gbrank.metrics import best_class_offsets, best_threshold, get_metric

__all__ = ["as_offsets", "as_probability", "best_cut", "best_offsets", "cross_fitted",
           "cross_fitted_decisions", "decides_by_offsets", "decision_metric", "margin_of",
           "reads_cut", "reads_decision", "score_at"]

# Significant digits of a printed probability threshold (the code in SUMMARY.md); the
# test split is judged at the printed value.
_DIGITS = 6


def reads_cut(name: str) -> bool:
    """Whether metric ``name`` judges scores at a cut (F_β, the balanced measure), not
    their order (``ap``) or their calibration (``logloss``)."""
    m = get_metric(name)
    return m.kind == "binary" and m.reads_scale


def _balanced_cut(y: np.ndarray, s: np.ndarray) -> float:
    """The margin cut maximising (recall + specificity) / 2 of ``s > cut``: every cut
    between consecutive distinct scores swept once (ties: the highest cut)."""
    order = np.argsort(-s, kind="stable")
    ss, yy = s[order], y[order]
    last = np.r_[ss[1:] != ss[:-1], True]  # the end of each run of equal scores
    tp, fp, hi = np.cumsum(yy)[last], np.cumsum(1.0 - yy)[last], ss[last]
    P, N = float(tp[-1]), float(fp[-1])
    recall = tp / P if P > 0 else np.ones_like(tp)
    specificity = 1.0 - fp / N if N > 0 else np.ones_like(fp)
    # value[0]: nothing predicted positive; value[k]: the k highest runs of scores.
    value = np.r_[0.5 * ((0.0 if P > 0 else 1.0) + 1.0), 0.5 * (recall + specificity)]
    k = int(np.argmax(value))  # the first maximum: the highest cut
    if k == 0:
        return float(hi[0])  # nothing above the top score
    if k == hi.size:  # every row positive: just below the lowest score
        t = float(hi[-1]) - 1.0
        return t if t < hi[-1] else float(np.nextafter(hi[-1], -np.inf))
    lo, up = float(hi[k]), float(hi[k - 1])
    t = lo / 2.0 + up / 2.0
    return t if lo <= t < up else lo


def best_cut(name: str, y: np.ndarray, s: np.ndarray) -> float:
    """The margin cut at which threshold metric ``name`` is best on labels ``y`` (0/1)
    and margins ``s``."""
    m = get_metric(name)
    if m.name == "balanced":
        return _balanced_cut(np.asarray(y, np.float64), np.asarray(s, np.float64))
    return best_threshold(y, s, float(m.params.get("beta", 1.0)), margin=True)[0]


def _halves(y: np.ndarray) -> np.ndarray:
    """A stratified split of the rows in two (True: the first half) that depends only on
    the labels, so every trial of a fold is judged on the same halves."""
    rng = np.random.default_rng(0)
    first = np.zeros(y.size, dtype=bool)
    for c in np.union1d((0.0, 1.0), y):  # binary: 0 then 1, as always
        rows = np.flatnonzero(y == c)
        rows = rows[rng.permutation(rows.size)]
        first[rows[::2]] = True
    return first


def cross_fitted(name: str, y: np.ndarray, s: np.ndarray) -> float:
    """Threshold metric ``name`` of margins ``s`` on labels ``y``, each half of the rows
    decided at the cut best on the other half (:func:`best_cut`), the decisions pooled."""
    y = np.asarray(y, np.float64)
    s = np.asarray(s, np.float64)
    if not np.all((y == 0.0) | (y == 1.0)):
        y = (y == 1.0).astype(np.float64)  # {-1, +1}
    first = _halves(y)
    cut = np.empty(y.size)
    if first.all() or not first.any():  # one row: nothing to choose a cut on
        cut[:] = 0.0
    else:
        cut[~first] = best_cut(name, y[first], s[first])
        cut[first] = best_cut(name, y[~first], s[~first])
    # s - cut > 0 exactly when s > cut (IEEE subtraction is zero only for equal values).
    return float(get_metric(name).with_margin(True)(y, s - cut))


def decision_metric(metrics: tuple[str, ...] | list[str], target: str) -> str | None:
    """The metric whose cut the recommended code decides at: ``target`` when it reads a
    cut, else the first recorded metric that does (None: no metric reads one)."""
    for name in (target, *metrics):
        if reads_cut(name):
            return name
    return None


def as_probability(cut: float) -> float:
    """A margin cut as the probability threshold the code prints (6 significant
    digits; :func:`margin_of` gives the cut it stands for)."""
    p = float(1.0 / (1.0 + np.exp(-cut)))
    shown = float(f"{p:.{_DIGITS}g}")
    # Beyond 6 digits' reach of 0 or 1 (a cut past ±14 in log-odds) the exact value.
    return shown if 0.0 < shown < 1.0 else min(max(p, float(np.nextafter(0.0, 1.0))),
                                               float(np.nextafter(1.0, 0.0)))


def margin_of(p: float) -> float:
    """The margin cut of probability threshold ``p``, as ``GBClassifier`` computes it
    (``log(p) - log1p(-p)``): the cut the test split is judged at."""
    return logit(p)


def score_at(name: str, y: Any, s: Any, margin_cut: float) -> float:
    """Threshold metric ``name`` of margins ``s`` decided at ``margin_cut``."""
    return float(get_metric(name).with_margin(True).with_threshold(margin_cut)(y, s))


# ---- K classes: class offsets -------------------------------------------------------------

def decides_by_offsets(target: str) -> bool:
    """Whether a multiclass study judged on ``target`` decides at class offsets: a macro
    F_β, which the offsets maximise."""
    m = get_metric(target)
    return m.kind == "multiclass" and m.params.get("average") == "macro"


def reads_decision(name: str) -> bool:
    """Whether multiclass metric ``name`` reads each row's decided class (F_β, balanced
    accuracy), not the probabilities (``mlogloss``)."""
    m = get_metric(name)
    return m.kind == "multiclass" and not m.reads_scale


def best_offsets(target: str, y: np.ndarray, s: np.ndarray) -> np.ndarray:
    """The class offsets at which macro F_β ``target`` is best on classes ``y`` and raw
    scores ``s`` (n, K)."""
    beta = float(get_metric(target).params.get("beta", 1.0))
    return best_class_offsets(y, s, beta, margin=True)[0]


def cross_fitted_decisions(target: str, y: np.ndarray, s: np.ndarray) -> np.ndarray:
    """Raw scores ``s`` (n, K) plus class offsets, each half of the rows (stratified by
    class) at the offsets best on the other half for ``target``: scores whose argmax is
    the decision, never chosen on the rows judged."""
    y = np.asarray(y, np.float64)
    s = np.asarray(s, np.float64)
    first = _halves(y)
    out = s.copy()
    if first.all() or not first.any():
        return out
    out[~first] += best_offsets(target, y[first], s[first])
    out[first] += best_offsets(target, y[~first], s[~first])
    return out


def as_offsets(offsets: Any) -> list[float]:
    """Class offsets as the code prints them: less the first class's (a shift shared by
    every class changes no decision), 6 significant digits; the test split is judged at
    the printed values."""
    b = np.asarray(offsets, np.float64)
    return [float(f"{float(v):.{_DIGITS}g}") for v in b - b[0]]
