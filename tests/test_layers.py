"""The house rules of DESIGN.md, read from the imports of every module in gbrank/.

- Layers: every import (module level or inside a function) points to the same layer or
  a lower one: kernels → checks and readers → objects (objectives, metrics, datasets,
  gradcheck) → adapters (lightgbm, xgboost, export, the training loop) → estimators
  (sklearn, dask) → tuning → the package's entry points.
- No package imports another package's private module (``gbrank.metrics._ranking`` from
  outside ``gbrank.metrics``).
- No circles between packages.
- Optional heavy dependencies are imported inside functions, never at module level.
- A module does one job: none outside the kernels is over 600 lines.
- No code reads another library's frames, except the one place named below (and why).
- A name means one thing across the package: a public name or a constant (an upper-case
  name, private or not) defined in two packages is one of the deliberate parallels
  listed below, each the same thing in another place.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1] / "gbrank"

# Lower number = lower layer. The first matching prefix names a module's layer.
LAYERS = [
    ("gbrank._kernels", 0),
    ("gbrank._validation", 1), ("gbrank._queries", 1), ("gbrank._fields", 1),
    ("gbrank._deps", 1),
    ("gbrank._proba", 1), ("gbrank._targets", 1), ("gbrank._sessions", 1),
    ("gbrank._warnings", 1), ("gbrank._help", 1),
    ("gbrank.objectives", 2), ("gbrank.metrics", 2), ("gbrank.datasets", 2),
    ("gbrank.gradcheck", 2), ("gbrank._compilation", 2),
    ("gbrank.lightgbm", 3), ("gbrank.xgboost", 3), ("gbrank._export", 3),
    ("gbrank._train", 3),
    ("gbrank.sklearn", 4), ("gbrank.dask", 4),
    ("gbrank.tuning", 5),
    ("gbrank.__main__", 6), ("gbrank", 6),
]
PACKAGES = ("objectives", "metrics", "datasets", "lightgbm", "xgboost", "sklearn", "dask",
            "tuning", "_kernels")
HEAVY = ("lightgbm", "xgboost", "catboost", "optuna", "optuna_integration", "dask", "distributed",
         "matplotlib", "pandas", "onnx", "onnxmltools", "onnxruntime", "treelite",
         "sqlalchemy", "psycopg2", "pyarrow")


def _module_name(path: Path) -> str:
    parts = list(path.relative_to(ROOT.parent).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def _layer(name: str) -> int:
    for prefix, layer in LAYERS:
        if name == prefix or name.startswith(prefix + "."):
            return layer
    raise AssertionError(f"{name} has no layer in tests/test_layers.py")


def _package(name: str) -> str:
    parts = name.split(".")
    return parts[1] if len(parts) > 1 and parts[1] in PACKAGES else name


def _imports():
    """(module, imported gbrank module, line, at module level) for every import."""
    out = []
    for path in sorted(ROOT.rglob("*.py")):
        name = _module_name(path)
        tree = ast.parse(path.read_text(encoding="utf-8"))
        package = name if path.name == "__init__.py" else name.rsplit(".", 1)[0]
        top = {id(n) for n in tree.body}
        for node in ast.walk(tree):
            targets = []
            if isinstance(node, ast.Import):
                targets = [a.name for a in node.names]
            elif isinstance(node, ast.ImportFrom):
                base = node.module or ""
                if node.level:
                    up = package.split(".")[: len(package.split(".")) - node.level + 1]
                    base = ".".join(up + ([base] if base else []))
                targets = [base] + [f"{base}.{a.name}" for a in node.names]
            for t in targets:
                out.append((name, t, node.lineno, id(node) in top))
    return out


IMPORTS = _imports()


def _gbrank_module(target: str) -> str | None:
    """The gbrank module an import names (``from gbrank.x import f`` names gbrank.x)."""
    if not (target == "gbrank" or target.startswith("gbrank.")):
        return None
    parts = target.split(".")
    while parts:
        candidate = ROOT.parent.joinpath(*parts)
        if candidate.with_suffix(".py").exists() or (candidate / "__init__.py").exists():
            return ".".join(parts)
        parts.pop()
    return None


def test_every_module_has_a_layer():
    for path in ROOT.rglob("*.py"):
        _layer(_module_name(path))


def test_imports_point_down():
    bad = []
    for module, target, line, _ in IMPORTS:
        dest = _gbrank_module(target)
        if dest is None or dest == "gbrank":
            continue  # the package itself holds only lazy entry points
        if _layer(dest) > _layer(module):
            bad.append(f"{module}:{line} imports {dest} (layer {_layer(dest)} above "
                       f"{_layer(module)})")
    assert not bad, "\n".join(sorted(set(bad)))


def test_no_private_module_of_another_package():
    bad = []
    for module, target, line, _ in IMPORTS:
        dest = _gbrank_module(target)
        if dest is None:
            continue
        parts = dest.split(".")
        # A dunder module (a package's __main__) is its entry point, not private.
        private = [i for i, p in enumerate(parts)
                   if p.startswith("_") and not p.startswith("__") and i >= 2]
        # The kernels are one private layer: the objects above call any of them.
        if private and _package(dest) != _package(module) and parts[1] != "_kernels":
            bad.append(f"{module}:{line} imports {dest}")
    assert not bad, "\n".join(sorted(set(bad)))


def test_no_circles_between_packages():
    edges: dict[str, set[str]] = {}
    for module, target, _, _ in IMPORTS:
        dest = _gbrank_module(target)
        if dest is None or dest == "gbrank":
            continue
        a, b = _package(module), _package(dest)
        if a != b:
            edges.setdefault(a, set()).add(b)

    def reach(start: str) -> set[str]:
        seen, todo = set(), [start]
        while todo:
            for nxt in edges.get(todo.pop(), ()):
                if nxt not in seen:
                    seen.add(nxt)
                    todo.append(nxt)
        return seen

    circles = sorted(a for a in edges if a in reach(a))
    assert not circles, f"packages in an import circle: {circles}"


@pytest.mark.parametrize("heavy", HEAVY)
def test_heavy_dependencies_are_imported_lazily(heavy):
    bad = [f"{module}:{line}" for module, target, line, top in IMPORTS
           if top and (target == heavy or target.startswith(heavy + "."))]
    assert not bad, f"{heavy} imported at module level in {bad}"


# -- size, frames, names -------------------------------------------------------------------
MAX_LINES = 600


def _modules():
    for path in sorted(ROOT.rglob("*.py")):
        yield _module_name(path), path


def test_no_module_outside_the_kernels_is_over_600_lines():
    big = [f"{name}: {len(path.read_text(encoding='utf-8').splitlines())} lines"
           for name, path in _modules() if not name.startswith("gbrank._kernels")
           and len(path.read_text(encoding="utf-8").splitlines()) > MAX_LINES]
    assert not big, "split (a module does one job): " + ", ".join(big)


# Reading another library's call stack. XGBoost's early stopping guesses a custom metric's
# direction from its name (only names starting auc, map, ndcg, pre are maximised), and a
# custom metric is given nothing but (predictions, DMatrix): without the stack,
# xgb.train(..., custom_metric=gbrank.xgboost.metric("err@10"), early_stopping_rounds=5)
# would keep the worst round. And the module names of the frames above a warning raised
# inside a training round, to attribute it to the user's line (warnings.warn's
# skip_file_prefixes needs Python 3.12). Nothing else in gbrank may read frames.
FRAME_READERS = {"gbrank.xgboost._metric": "_from_the_stack",
                 "gbrank._warnings": "warn_user"}


def _reads_frames(node: ast.AST) -> bool:
    if not isinstance(node, ast.Attribute):
        return False
    owner = node.value.id if isinstance(node.value, ast.Name) else None
    return (node.attr in ("f_locals", "f_back", "f_globals")
            or (owner == "sys" and node.attr == "_getframe")
            or (owner == "inspect" and node.attr in ("currentframe", "stack", "getouterframes")))


def test_no_frame_reads_but_the_one_named():
    bad = []
    for name, path in _modules():
        tree = ast.parse(path.read_text(encoding="utf-8"))
        functions = [n for n in ast.walk(tree) if isinstance(n, ast.FunctionDef)]
        for node in ast.walk(tree):
            if not _reads_frames(node):
                continue
            inner = [f for f in functions if f.lineno <= node.lineno <= f.end_lineno]
            where = max(inner, key=lambda f: f.lineno).name if inner else "<module>"
            if FRAME_READERS.get(name) != where:
                bad.append(f"{name}:{node.lineno} ({where})")
    assert not bad, "reads a call stack: " + ", ".join(sorted(set(bad)))


# Names defined in two packages that mean the same thing there, on purpose.
PARALLELS = {
    # gbrank.dask's distributed form of the gbrank.metrics function of the same name
    "f1": {"dask", "metrics"}, "fbeta": {"dask", "metrics"}, "ndcg": {"dask", "metrics"},
    "pair_accuracy": {"dask", "metrics"},
    # each booster adapter's entry of the same name, and its link-to-objective table
    "objective": {"lightgbm", "xgboost"}, "to_native": {"lightgbm", "xgboost"},
    "LINK_OBJECTIVE": {"lightgbm", "xgboost"},
    # the kernel of a per-query metric and the public statistic built on it
    "err_per_query": {"_kernels", "metrics"}, "ndcg_per_query": {"_kernels", "metrics"},
    # the empty float64 array the objects hand a kernel for "no weights"
    "EMPTY": {"metrics", "objectives"},
    # the command lines' entry points (gbrank, gbrank tune)
    "main": {"gbrank.__main__", "tuning"},
}


def test_a_name_means_one_thing_across_packages():
    where: dict[str, set[str]] = {}
    for name, path in _modules():
        tree = ast.parse(path.read_text(encoding="utf-8"))
        for node in tree.body:
            if isinstance(node, (ast.FunctionDef, ast.ClassDef)):
                names = [node.name]
            elif isinstance(node, ast.Assign):
                names = [t.id for t in node.targets if isinstance(t, ast.Name)]
            elif isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name):
                names = [node.target.id]
            else:
                continue
            for n in names:
                bare = n.lstrip("_")
                if n.startswith("__") or not (bare.isupper() or not n.startswith("_")):
                    continue  # a private helper's name is its module's business
                where.setdefault(bare, set()).add(_package(name))
    # A private helper may share a public or constant name of another package.
    for name, path in _modules():
        for node in ast.parse(path.read_text(encoding="utf-8")).body:
            if isinstance(node, (ast.FunctionDef, ast.ClassDef)) and node.name.startswith(
                    "_") and not node.name.startswith("__"):
                bare = node.name.lstrip("_")
                if bare in where and not bare.isupper():
                    where[bare].add(_package(name))
    twice = {n: sorted(p) for n, p in where.items() if len(p) > 1 and PARALLELS.get(n) != p}
    assert not twice, ("one name, two meanings (rename one, or list a deliberate parallel "
                       f"in PARALLELS): {twice}")
