"""What an install brings: the core needs no booster, each booster is an extra, and a
missing one is an ImportError naming the extra (gbrank._deps.require, the one place a
booster is imported)."""

from __future__ import annotations

import ast
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

tomllib = pytest.importorskip("tomllib")  # Python >= 3.11

ROOT = Path(__file__).resolve().parents[1]


def _project() -> dict:
    return tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]


def _closure(extras: list[str]) -> set[str]:
    """The extras ``extras`` install, following self-references (``gbrank[tune]``)."""
    optional = _project()["optional-dependencies"]
    seen: set[str] = set()
    todo = list(extras)
    while todo:
        extra = todo.pop()
        if extra in seen:
            continue
        seen.add(extra)
        for req in optional[extra]:
            if req.startswith("gbrank["):
                todo += [e.strip() for e in req[len("gbrank["):-1].split(",")]
    return seen


def _names(reqs: list[str]) -> set[str]:
    import re

    return {re.split(r"[\[<>=;! ]", r, maxsplit=1)[0].lower() for r in reqs}


def test_the_core_needs_no_booster_and_each_booster_is_an_extra():
    project = _project()
    assert not _names(project["dependencies"]) & {"lightgbm", "xgboost", "xgboost-cpu"}
    optional = project["optional-dependencies"]
    assert _names(optional["lightgbm"]) == {"lightgbm"}
    assert _names(optional["xgboost"]) == {"xgboost"}
    assert _closure(["all"]) >= {"lightgbm", "xgboost"}
    assert "lightgbm" in _closure(["tune"])  # the tuner trains LightGBM by default
    assert {"lightgbm", "xgboost", "tune"} <= _closure(["dev"])


def test_every_extra_an_import_error_names_exists():
    from gbrank._deps import EXTRAS

    distribution = {"optuna_integration": "optuna-integration", "distributed": "dask"}
    optional = _project()["optional-dependencies"]
    for module, extra in EXTRAS.items():
        reqs = _names([r for e in _closure([extra]) for r in optional[e]])
        assert distribution.get(module, module) in reqs, (module, extra)


def test_the_minimum_versions_run_covers_the_library_extras():
    """CI's floors run (.ci/min_versions.sh) installs dev and dask: every extra a user of
    the library installs; not postgres (no wheel of its floor for new Pythons) nor the
    experiment tools (anchor, bench, catboost) nor the documentation site's (docs)."""
    script = (ROOT / ".ci" / "min_versions.sh").read_text()
    assert 'min_versions.py" dev dask' in script and '[dev,dask]"' in script
    covered = _closure(["dev", "dask"])
    assert set(_project()["optional-dependencies"]) - covered == {"postgres", "anchor",
                                                                   "bench", "docs", "catboost"}


def test_boosters_are_imported_only_through_the_helper():
    offenders = []
    for path in (ROOT / "gbrank").rglob("*.py"):
        for node in ast.walk(ast.parse(path.read_text())):
            names = []
            if isinstance(node, ast.Import):
                names = [a.name for a in node.names]
            elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
                names = [node.module]
            if any(n.split(".")[0] in ("lightgbm", "xgboost") for n in names):
                offenders.append(f"{path.relative_to(ROOT)}:{node.lineno}")
    assert offenders == []


HIDDEN = textwrap.dedent('''
    import sys
    sys.modules["lightgbm"] = None
    sys.modules["xgboost"] = None
    import numpy as np

    import gbrank
    from gbrank.gradcheck import check
    from gbrank.objectives import FocalLoss, LambdaRank

    y = np.array([0.0, 1.0, 2.0, 0.0, 1.0, 0.0])
    s = np.array([0.3, -0.2, 1.5, 0.1, 0.4, -1.0])
    assert 0.0 < gbrank.metrics.ndcg(y, s, [3, 3], k=3) <= 1.0
    assert np.isfinite(LambdaRank().grad_hess(y, s, [3, 3])[0]).all()
    assert check(FocalLoss(), (y > 0).astype(float), s).ok
    assert check(LambdaRank(), y, s, [3, 3]).ok
    from gbrank.lightgbm import to_native
    from gbrank.sklearn import GBClassifier, GBRanker

    def message(call):
        try:
            call()
        except ImportError as exc:
            return str(exc)
        raise AssertionError("no ImportError")

    X = np.arange(12.0).reshape(6, 2)
    print(message(lambda: to_native(None, FocalLoss(), init_score=0.0)))
    print(message(lambda: GBRanker(groupless=True).fit(X, y)))
    print(message(lambda: gbrank.lightgbm.cv({}, None)))
    print(message(lambda: GBClassifier(booster="xgboost").fit(X, y > 0)))
    print(message(lambda: gbrank.xgboost.to_native(None, FocalLoss(), init_score=0.0)))
    try:
        import optuna  # noqa: F401
    except ImportError:
        print("pip install 'gbrank[xgboost]' (no optuna)")
    else:
        from gbrank.tuning import TuneConfig
        print(message(lambda: TuneConfig(booster="xgboost")))
''')


def test_without_boosters_the_core_works_and_adapters_name_the_extra():
    r = subprocess.run([sys.executable, "-c", HIDDEN], capture_output=True, text=True,
                       timeout=600, cwd=ROOT)
    assert r.returncode == 0, r.stderr[-3000:]
    lines = r.stdout.strip().splitlines()
    assert len(lines) == 6, r.stdout
    for line in lines[:3]:
        assert "pip install 'gbrank[lightgbm]'" in line, line
    for line in lines[3:]:
        assert "pip install 'gbrank[xgboost]'" in line, line
    assert lines[0].startswith("'lightgbm' is not installed; LightGBM (gbrank.lightgbm")
