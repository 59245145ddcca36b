"""The verdict of a task: which objective and settings to use for the chosen metric,
whether its lead over the boosters' own objectives is larger than the fold noise, and
the code that trains it.

Every study's pick is rescored on the same fresh folds (:mod:`~gbrank.tuning._pick`), so
two studies differ unit by unit (repeat × fold). The noise of such a difference is
judged by gbrank's one paired rule, :func:`gbrank.metrics.paired_difference`, with the
corrected resampled t-test (Nadeau and Bengio; Bouckaert and Frank for repeated k-fold):
the units share training rows, so the variance of the mean difference is
(1/n + 1/(k − 1))·s² rather than s²/n. A gbrank objective is recommended only when
it has the best estimate and its interval against the best native objective lies above
zero — a 95 % interval, widened to 1 − 0.05/m when it is the best of m gbrank objectives
(Bonferroni: picking the best of m would otherwise find a lead beyond the noise by chance
more often than 5 % of the time); otherwise the native objective is, and the section says
by how much gbrank's best trails or leads within noise.

A study whose complete trials all scored the same value of its metric (a metric that
saturates, as NDCG@10 on one list of thousands of rows) had no signal to tune on, and
its pick is any of its trials: it is never recommended, nor is it the native baseline a
gbrank objective must beat; the section says so in plain words (:func:`flat_value`).
"""

from __future__ import annotations

import json
from dataclasses import dataclass

import numpy as np

from gbrank.metrics import PairedDifference, get_metric, paired_difference
from gbrank.tuning._config import ANCHOR_MIN_SECONDS
from gbrank.tuning._results import StudyResult

__all__ = ["Comparison", "best", "compare", "flat_note", "flat_value", "recommend",
           "verdict_lines"]

ANCHOR = "anchor:"
#: The key prefix of the ``--baselines catboost`` studies (another library: never the
#: booster's native baseline, compared with the recommendation instead).
CATBOOST = "catboost:"
# Said by the progress line and by SUMMARY.md when --baselines catboost cannot apply.
CATBOOST_NOT_RUN = ("not run: CatBoost's ranking losses need a ranking task with query ids "
                    "and graded labels (not a binary, multiclass, group-less or click task)")


def catboost_applies(task) -> bool:
    """Whether ``--baselines catboost`` can run on ``task``."""
    return task.kind == "ranking" and task.grouped and not task.clicks

# What the verdict says whenever CatBoost ran (issue 35; learner_attribution.md).
CATBOOST_NOTE = ("gbrank's objectives cannot run inside CatBoost: its Python custom "
                 "objectives receive blocks of rows with no query ids, so a pairwise or "
                 "listwise objective cannot know which rows to compare.")

#: Complete trials whose values agree to this relative difference scored one value.
FLAT_RTOL = 1e-12


def flat_value(r: StudyResult) -> float | None:
    """The value of ``r.target`` that every complete trial of study ``r`` scored, when
    there are two or more and they all agree (to :data:`FLAT_RTOL` relative): the
    study had no signal to tune on, so its pick is no basis for a recommendation.
    ``None`` otherwise (the trials differ, or fewer than two completed).

    Examples
    --------
    >>> from gbrank.tuning import StudyResult
    >>> from gbrank.tuning._verdict import flat_value
    >>> saturated = StudyResult("t", "native:lambdarank", "ndcg@10", True, "done",
    ...                         values=[1.0, 1.0, 1.0])
    >>> tuned = StudyResult("t", "ranknet", "pair_accuracy", False, "done",
    ...                     values=[0.861, 0.874, 0.870])
    >>> flat_value(saturated), flat_value(tuned)
    (1.0, None)
    """
    v = np.asarray(r.values, dtype=float)
    if v.size < 2 or not np.all(np.isfinite(v)):
        return None
    if float(np.ptp(v)) > FLAT_RTOL * float(np.max(np.abs(v))):
        return None
    return float(v[0])


def flat_note(r: StudyResult) -> str | None:
    """The plain words the report says of a flat study (:func:`flat_value`), or None.

    Examples
    --------
    >>> from gbrank.tuning import StudyResult
    >>> from gbrank.tuning._verdict import flat_note
    >>> note = flat_note(StudyResult("t", "native:lambdarank", "ndcg@10", True, "done",
    ...                              values=[1.0, 1.0, 1.0]))
    >>> print(note.replace("; ", ";\\n"))
    `native:lambdarank` is flat: every trial scored 1.0000 on ndcg@10;
    not a basis for a recommendation (3 complete trials).
    """
    v = flat_value(r)
    if v is None:
        return None
    return (f"`{r.key}` is flat: every trial scored {v:.4f} on {r.target}; not a basis "
            f"for a recommendation ({len(r.values)} complete trials).")


#: The coverage of the verdict's paired intervals; the best of m studies is judged
#: at 1 − (1 − LEVEL)/m (:func:`picked_level`).
LEVEL = 0.95


@dataclass(frozen=True)
class Comparison:
    """``a`` against ``b`` on ``metric`` over their shared units: ``diff`` is the one
    paired rule (:func:`gbrank.metrics.paired_difference`, corrected for repeated
    k-fold units), oriented so that positive means ``a`` is better."""

    a: StudyResult
    b: StudyResult
    metric: str
    diff: PairedDifference

    def describe(self) -> str:
        text = self.diff.describe("the fold noise")
        picked = round((1.0 - LEVEL) / (1.0 - self.diff.level))
        if picked > 1:  # picked_level's interval
            text += (f" ({self.diff.level_percent} % rather than {100 * LEVEL:g} %: "
                     f"`{self.a.key}` is the best of {picked}, and picking the best of "
                     f"{picked} would find a lead at {100 * LEVEL:g} % by chance too often)")
        return text


def compare(a: StudyResult, b: StudyResult, metric: str, n_folds: int,
            level: float = LEVEL) -> Comparison | None:
    """``a`` against ``b`` on ``metric`` (None unless both have its rescored units), with
    an interval of coverage ``level``."""
    if metric not in a.units or metric not in b.units or len(a.units[metric]) != len(
            b.units[metric]):
        return None
    return Comparison(a, b, metric, paired_difference(
        a.units[metric], b.units[metric], n_folds=n_folds,
        higher_is_better=get_metric(metric).higher_is_better, level=level))


def picked_level(n_picked: int, level: float = LEVEL) -> float:
    """The coverage at which the best of ``n_picked`` studies is compared, so that
    picking the best does not make a lead look real more often than ``1 − level``
    (Bonferroni: ``1 − (1 − level)/n``).

    Examples
    --------
    >>> from gbrank.tuning._verdict import picked_level
    >>> picked_level(1), picked_level(5)
    (0.95, 0.99)
    """
    return 1.0 - (1.0 - level) / max(1, int(n_picked))


def best(rows: list[StudyResult], metric: str) -> StudyResult | None:
    """The study of ``rows`` with the best rescored mean of ``metric``, in its direction
    (None when none has its units)."""
    rows = [r for r in rows if metric in r.units]
    sign = 1.0 if get_metric(metric).higher_is_better else -1.0
    return max(rows, key=lambda r: sign * float(np.mean(r.units[metric]))) if rows else None


@dataclass(frozen=True)
class Recommendation:
    """What :func:`recommend` chose: ``use`` (None: no study with a pick and a signal),
    the best native and gbrank studies with a signal, ``versus_native`` (the best gbrank
    study against the best native one; against the best flat native one when every
    native study is flat, for the reader), the anchor and the recommendation against
    it, the ``flat`` studies (never recommended), and the best CatBoost study
    (``--baselines catboost``) with its comparison against the recommendation
    (``versus_catboost``: positive means CatBoost is better). ``catboost_wins``: its
    lead is beyond the fold noise, so the verdict says to use CatBoost."""

    use: StudyResult | None
    best_native: StudyResult | None
    best_gbrank: StudyResult | None
    versus_native: Comparison | None
    anchor: StudyResult | None
    versus_anchor: Comparison | None
    flat: tuple[StudyResult, ...] = ()
    catboost: StudyResult | None = None
    versus_catboost: Comparison | None = None

    @property
    def catboost_wins(self) -> bool:
        d = self.versus_catboost
        return d is not None and d.diff.mean > 0 and d.diff.beyond_noise


def recommend(rows: list[StudyResult], metric: str, n_folds: int) -> Recommendation:
    """The recommendation among a task's studies on ``metric``: the best gbrank
    objective when its lead over the best native one is beyond the fold noise, else
    the best native objective. A flat study (:func:`flat_value`: every trial scored
    the same) is neither recommended nor the native baseline to beat: when every
    native study is flat, the best gbrank study with a signal is recommended.

    Examples
    --------
    >>> from gbrank.tuning import StudyResult
    >>> from gbrank.tuning._verdict import recommend
    >>> nat = StudyResult("t", "native:lambdarank", "ndcg@10", True, "done",
    ...                   units={"ndcg@10": [0.70, 0.72, 0.71, 0.69, 0.73, 0.70]})
    >>> ours = StudyResult("t", "ranknet", "ndcg@10", False, "done",
    ...                    units={"ndcg@10": [0.71, 0.72, 0.72, 0.69, 0.74, 0.70]})
    >>> rec = recommend([ours, nat], "ndcg@10", n_folds=3)
    >>> rec.use.key, rec.versus_native.diff.beyond_noise
    ('native:lambdarank', False)
    """
    done = [r for r in rows if r.status == "done" and r.units]
    anchor = next((r for r in done if r.key.startswith(ANCHOR)), None)
    catboost = best([r for r in done if r.key.startswith(CATBOOST)
                     and flat_value(r) is None], metric)
    done = [r for r in done if not r.key.startswith((ANCHOR, CATBOOST))]
    flat = tuple(r for r in done if flat_value(r) is not None)
    live = [r for r in done if flat_value(r) is None]
    nat = best([r for r in live if r.native], metric)
    ours = best([r for r in live if not r.native], metric)
    # Every native study flat: the gbrank pick is still shown against the best of them.
    base = nat if nat is not None else best([r for r in flat if r.native], metric)
    # The best of several gbrank objectives is judged as picked among them (Bonferroni).
    level = picked_level(sum(not r.native for r in live))
    vs = (compare(ours, base, metric, n_folds, level)
          if ours is not None and base is not None else None)
    if nat is None:
        use = ours
    elif vs is not None and vs.diff.mean > 0 and vs.diff.beyond_noise:
        use = ours
    else:
        use = nat
    va = compare(use, anchor, metric, n_folds) if use is not None and anchor else None
    n_catboost = sum(r.key.startswith(CATBOOST) and flat_value(r) is None for r in rows
                     if r.status == "done" and r.units)
    vc = (compare(catboost, use, metric, n_folds, picked_level(n_catboost))
          if use is not None and catboost else None)
    return Recommendation(use, nat, ours, vs, anchor, va, flat, catboost, vc)


#: Fewer units than this leave the interval too wide to separate objectives by much.
FEW_UNITS = 10


def _no_native(rows: list[StudyResult], use: StudyResult) -> str:
    """The recommendation's standing when no native study has a pick."""
    others = [r.key for r in rows if r.status == "done" and r.units and r is not use
              and not r.key.startswith((ANCHOR, CATBOOST))]
    if not others:
        return "the only objective with a pick (no native baseline ran)."
    return (f"the best rescored mean of the objectives with a pick (also "
            f"{', '.join(f'`{k}`' for k in others)}; no native baseline ran).")


def _few_units(vs: Comparison, n_folds: int) -> str:
    """A hint to add units when a lead within noise rests on few of them."""
    n = vs.diff.n
    if vs.diff.mean <= 0 or vs.diff.beyond_noise or n >= FEW_UNITS:
        return ""
    return (f" Only {n} units: an interval this wide cannot tell them apart; "
            f"`--repeats R` rescores on R × {n_folds} units.")


def _cell(r: StudyResult, metric: str, test_metric: str | None = None) -> str:
    v = np.asarray(r.units.get(metric, []), dtype=float)
    cv = f"{v.mean():.4f} ± {np.std(v, ddof=1):.4f}" if v.size > 1 else "—"
    test = r.test.get(test_metric or metric)
    return f"{cv} | {'—' if test is None else f'{test:.4f}'}"


def verdict_lines(task_name: str, rows: list[StudyResult], metric: str, n_folds: int, *,
                  kind: str, booster: str, groupless: bool = False, metric_chosen: bool,
                  data_hint: str = "", position_hint: str = "", data_remark: str = "",
                  test_metric: str | None = None) -> list[str]:
    """The verdict section of one task in ``SUMMARY.md`` (Markdown lines).
    ``groupless``: the task is group-less ranking (:attr:`Task.groupless
    <gbrank.tuning.Task>`); ``test_metric``: the held-out part is judged on it instead
    of ``metric`` (a click log tuned on clicks, tested on true grades); ``data_hint``,
    ``position_hint`` and ``data_remark``: see
    ``gbrank.tuning._report.write_summary``."""
    from gbrank.tuning._recipe import training_code

    rec = recommend(rows, metric, n_folds)
    lines = [f"### {task_name}: {metric}", ""]
    if not metric_chosen:
        tuned = sorted({f"`{r.key}` for {r.target}" for r in rows
                        if r.status == "done" and r.target != metric
                        and not r.key.startswith(ANCHOR)})
        moved = sorted(f"`{r.key}`" for r in rows if r.status == "done"
                       and r.target == metric and r.own_target != metric
                       and not r.key.startswith(ANCHOR))
        why = (f" Group-less ranking (all rows one list): {', '.join(moved)} "
               f"{'was' if len(moved) == 1 else 'were'} tuned for {metric} rather than "
               f"{'its' if len(moved) == 1 else 'their'} own cut-off metric, which one list "
               "of every row saturates."
               if groupless and moved else "")
        if tuned:
            lines += [f"Judged on {metric}, the task's headline metric. Without `--metric` "
                      "each study was tuned for its own objective's metric"
                      f" ({', '.join(tuned)}); `--metric {metric}` tunes every candidate "
                      f"for {metric}.{why}", ""]
        else:
            lines += [f"Judged on {metric}, the task's headline metric, which every study "
                      f"was tuned for.{why}", ""]
    flat = [flat_note(r) for r in rec.flat]
    if rec.use is None:
        if flat:
            return lines + [" ".join(flat) + " No study with a pick has a signal: nothing "
                            "to recommend. Tune on a metric that tells the trials apart"
                            + (" (group-less ranking: `--metric ndcg`, NDCG over the "
                               "whole list)" if groupless else "") + ".", ""]
        return lines + ["No study finished with a pick: nothing to recommend.", ""]
    direction = "" if get_metric(metric).higher_is_better else f" ({metric}: lower is better)"
    use, vs = rec.use, rec.versus_native
    what = "LightGBM's" if booster == "lightgbm" else "XGBoost's"
    if rec.catboost_wins:
        lines += _catboost_lines(rec, metric, direction, booster)
    if use.native:
        head = f"**Use `{use.key}`** ({what} own objective)"
        if rec.best_gbrank is None and any(not r.native for r in rec.flat):
            lines.append(f"{head}: no gbrank objective's study has a signal to compare "
                         "with it.")
        elif rec.best_gbrank is None:
            lines.append(f"{head}: no gbrank objective is among this run's studies "
                         "(`--objectives`).")
        elif vs is None:
            lines.append(f"{head}: gbrank's objectives have no units to compare with it.")
        else:
            lines.append(f"{head}: no gbrank objective beats it beyond the fold noise on "
                         f"{metric}{direction}. The best gbrank objective, "
                         f"`{rec.best_gbrank.key}`, is {vs.describe()}."
                         + _few_units(vs, n_folds))
    elif rec.best_native is None and vs is not None:  # every native study is flat
        lines.append(f"**Use `{use.key}`**: no native objective's study has a signal on "
                     f"{metric}{direction} to recommend it or to beat (below); against "
                     f"`{vs.b.key}` it is {vs.describe()}.")
    else:
        lines.append(f"**Use `{use.key}`**: on {metric}{direction} it is "
                     + (vs.describe() + f" against the best native objective, "
                        f"`{rec.best_native.key}`." if vs is not None
                        else _no_native(rows, use)))
    if rec.catboost is not None and not rec.catboost_wins:
        lines += ["", f"Against `{use.key}` on {metric}, CatBoost's best, "
                  f"`{rec.catboost.key}` (`--baselines catboost`), is "
                  f"{rec.versus_catboost.describe()}; not a lead that calls for another "
                  "library. " + CATBOOST_NOTE]
    if flat:
        lines += ["", *flat]
    held = (f"held-out test: {test_metric} on true grades" if test_metric
            else "held-out test")
    # when CatBoost is the recommendation, the booster's pick is only the best of its kind
    first = (f"best {'LightGBM' if booster == 'lightgbm' else 'XGBoost'}"
             if rec.catboost_wins else "recommended")
    lines += ["", f"| | {metric}: rescored CV (mean ± sd over units) | {held} |",
              "|---|---|---|", f"| {first}: `{use.key}` | {_cell(use, metric, test_metric)} |"]
    for label, r in (("best native", rec.best_native), ("best gbrank", rec.best_gbrank),
                     *(("flat", r) for r in rec.flat)):
        if r is not None and r is not use:
            lines.append(f"| {label}: `{r.key}` | {_cell(r, metric, test_metric)} |")
    if rec.catboost is not None:
        label = "recommended" if rec.catboost_wins else "CatBoost's best"
        lines.append(f"| {label}: `{rec.catboost.key}` "
                     f"| {_cell(rec.catboost, metric, test_metric)} |")
    if test_metric:
        lines += ["", f"The pick is made on the clicks ({metric}); the held-out part's "
                  f"true grades ({test_metric}) check it on one split, with no "
                  "interval."]
    if rec.anchor is not None:
        a = rec.anchor
        run = a.message.removeprefix("LightGBMTunerCV, ")
        tuned = "" if metric == a.target else f", tuned on {a.target}"
        lines.append(f"| Optuna `LightGBMTunerCV` on native lambdarank ({run}{tuned}) "
                     f"| {_cell(a, metric)} |")
    if rec.versus_anchor is not None:
        lines += ["", f"Against Optuna's `LightGBMTunerCV` given the tuner's time on this "
                  f"task (at least {ANCHOR_MIN_SECONDS} s), the recommendation is "
                  f"{rec.versus_anchor.describe()}."]
        t_use, t_a = use.test.get(metric), rec.anchor.test.get(metric)
        if t_use is not None and t_a is not None:
            better = (t_use >= t_a) if get_metric(metric).higher_is_better else (t_use <= t_a)
            lines.append(f"On the held-out split: {t_use:.4f} against {t_a:.4f} "
                         f"({'at least as good' if better else 'worse'}).")
    try:
        code = training_code(use, kind, booster, groupless=groupless)
    except ValueError as exc:
        lines += ["", f"(No code: {exc}.)", ""]
        return lines
    who = "`X`, `y`: the training rows and labels"
    if kind == "ranking" and not groupless:
        who += "; `qid`: each row's query id"
        if not data_hint:  # a table's columns are named by the hint instead
            who += ("; from a LETOR/SVMlight file, `X, y, qid = "
                    "sklearn.datasets.load_svmlight_file(path, query_id=True)`, or when its "
                    "query sizes are in a `.query` file beside it (LightGBM's examples), "
                    "`X, y = load_svmlight_file(path)`, `g = np.loadtxt(path + \".query\", "
                    "dtype=int)`, `qid = np.repeat(np.arange(g.size), g)`")
    if any("position=position" in line for line in code):
        who += "; `position`: each row's logged display position"
        data_hint += position_hint
    lines += ["", f"Train it — {who}{data_hint}{data_remark}:", "", "```python", *code,
              "```", ""]
    if use.model_path:
        lines += [f"The tuner's refit of it on the whole tuning part is saved for "
                  f"{booster} alone: `{use.model_path}` (parameters in `params.json` "
                  "beside it).", ""]
    return lines


def _catboost_lines(rec: Recommendation, metric: str, direction: str,
                    booster: str) -> list[str]:
    """The head of a verdict whose best CatBoost study leads the recommendation beyond
    the fold noise: use CatBoost, the paired interval, and the code that trains it."""
    cb, vc = rec.catboost, rec.versus_catboost
    loss = cb.key.removeprefix(CATBOOST)
    name = "LightGBM" if booster == "lightgbm" else "XGBoost"
    shown = {k: v for k, v in cb.booster_params.items()
             if k not in ("thread_count", "allow_writing_files", "verbose")}
    shown.update(verbose=0, allow_writing_files=False)  # no catboost_info/ folder
    params = ["    " + json.dumps(k) + ": " + (json.dumps(v) if isinstance(v, str) else repr(v))
              + "," for k, v in shown.items()]
    saved = ([f"The tuner's refit of it is saved: `{cb.model_path}` "
              "(`CatBoost().load_model(path)`).", ""] if cb.model_path else [])
    return [f"**Use CatBoost `{loss}`** (`{cb.key}`, `--baselines catboost`): on "
            f"{metric}{direction} it is {vc.describe()} against the best {name} "
            f"configuration, `{rec.use.key}`. " + CATBOOST_NOTE, "",
            "Train it — `X`, `y`: the training rows and labels; `qid`: each row's query "
            "id, the rows of a query next to each other:", "", "```python",
            "import numpy as np",
            "import scipy.sparse as sp",
            "from catboost import CatBoost, Pool", "",
            "", "def catboost_matrix(X):  # CatBoost takes sparse rows as CSR, 32-bit indices",
            "    if not sp.issparse(X):",
            "        return X",
            "    X = sp.csr_matrix(X, copy=True)",
            "    X.indices, X.indptr = X.indices.astype(np.int32), X.indptr.astype(np.int32)",
            "    return X", "", "",
            "model = CatBoost({", *params, "})",
            "model.fit(Pool(catboost_matrix(X), y, group_id=qid))",
            "scores = model.predict(catboost_matrix(X_new), prediction_type=\"RawFormulaVal\")",
            "```", "",
            *saved, f"Within {name} (the best configuration, should CatBoost not be "
            "an option):", ""]
