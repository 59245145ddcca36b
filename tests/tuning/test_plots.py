"""The tuner's plots show the pick's rescored estimate beside the optimistic best value,
and colour a difference only when its interval excludes zero."""

from __future__ import annotations

import numpy as np
import pytest

pytest.importorskip("optuna")
pytest.importorskip("matplotlib")


def _study(values: list[float]):
    import optuna

    optuna.logging.set_verbosity(optuna.logging.WARNING)
    study = optuna.create_study(direction="maximize")
    dist = {"lr": optuna.distributions.FloatDistribution(0.01, 1.0),
            "leaves": optuna.distributions.IntDistribution(2, 64)}
    for i, v in enumerate(values):
        study.add_trial(optuna.trial.create_trial(
            params={"lr": 0.01 + 0.05 * i, "leaves": 2 + (7 * i) % 60}, distributions=dist,
            value=v))
    return study


def _capture(monkeypatch) -> dict:
    """The axes each plot is saved from, by file name (before the figure is closed)."""
    from gbrank.tuning import _plots as plots

    seen: dict = {}
    original = plots._save

    def keep(ax, title, path, plt):
        seen[path.name] = (ax, [t.get_text() for t in ax.get_legend().get_texts()]
                           if ax.get_legend() else [],
                           [tuple(line.get_ydata()) for line in ax.get_lines()])
        return original(ax, title, path, plt)

    monkeypatch.setattr(plots, "_save", keep)
    return seen


def test_history_marks_the_pick_and_its_rescored_estimate(tmp_path, monkeypatch):
    from gbrank.tuning._plots import study_plots

    seen = _capture(monkeypatch)
    values = [0.70, 0.83, 0.75, 0.79]
    # The best trial (1) as tuned is 0.83; rescored, trial 3 is the better: the pick.
    fins = [{"trial": 3, "rescored": 0.7712}, {"trial": 1, "rescored": 0.7544}]
    paths = study_plots(_study(values), tmp_path, "s", "ndcg@10", finalists=fins)
    assert "s_history.png" in [p.name for p in paths]
    _, legend, lines = seen["s_history.png"]
    assert "pick (trial 3): ndcg@10 0.7712" in legend
    assert "best CV as tuned (optimistic)" in legend
    # The dashed line sits at the pick's rescored mean, not at the best CV value.
    assert any(np.allclose(y, fins[0]["rescored"]) for y in lines)
    assert not any(np.allclose(y, max(values)) and len(y) == 2 for y in lines)


def test_importances_only_from_enough_trials(tmp_path, monkeypatch):
    from gbrank.tuning._plots import MIN_IMPORTANCE, study_plots

    few = study_plots(_study([0.5 + 0.01 * i for i in range(MIN_IMPORTANCE - 1)]),
                      tmp_path, "few", "ndcg@10")
    assert [p.name for p in few] == ["few_history.png"]
    n = MIN_IMPORTANCE + 2
    rng = np.random.default_rng(0)
    enough = study_plots(_study(list(0.5 + 0.1 * rng.random(n))), tmp_path, "many",
                         "ndcg@10")
    assert [p.name for p in enough] == ["many_history.png", "many_importance.png"]


def test_comparison_greys_a_difference_within_noise(tmp_path, monkeypatch):
    import matplotlib.pyplot as plt

    from gbrank.metrics import paired_difference
    from gbrank.tuning._plots import comparison_plot

    ahead = np.array([0.05, 0.04, 0.06, 0.05, 0.045, 0.055])
    noisy = np.array([0.05, -0.04, 0.02, -0.03, 0.01, 0.0])
    rows = []
    for key, d in (("a", ahead), ("b", noisy)):
        diff = paired_difference(d, np.zeros(d.size), n_folds=3)
        lo, hi = diff.low, diff.high
        rows.append({"key": key, "target": "ndcg@10", "vs": "native:lambdarank",
                     "diffs": d.tolist(), "low": lo, "high": hi})
    assert rows[0]["low"] > 0 and rows[1]["low"] < 0 < rows[1]["high"]
    bars = {}
    close = plt.close

    def grab(fig=None):
        if fig is not None and hasattr(fig, "axes"):
            bars["colors"] = [p.get_facecolor()[:3] for p in fig.axes[0].patches]
        close(fig)

    monkeypatch.setattr(plt, "close", grab)
    assert comparison_plot("t", rows, tmp_path / "c.png").exists()
    from matplotlib.colors import to_rgb

    assert bars["colors"] == [to_rgb("tab:green"), to_rgb("tab:gray")]
