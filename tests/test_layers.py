"""The house rules of DESIGN.md, read from the imports of every module in gbrank/.

- Layers: every import (module level or inside a function) points to the same layer or
  a lower one: kernels → checks and readers → objects (objectives, metrics, datasets,
  gradcheck) → adapters (lightgbm, xgboost, export, the training loop) → estimators
  (sklearn, dask) → tuning → the package's entry points.
- No package imports another package's private module (``gbrank.metrics._ranking`` from
  outside ``gbrank.metrics``).
- No circles between packages.
- Optional heavy dependencies are imported inside functions, never at module level.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1] / "gbrank"

# Lower number = lower layer. The first matching prefix names a module's layer.
LAYERS = [
    ("gbrank._kernels", 0),
    ("gbrank._validation", 1), ("gbrank._fields", 1), ("gbrank._deps", 1),
    ("gbrank._proba", 1), ("gbrank._targets", 1),
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
HEAVY = ("lightgbm", "xgboost", "optuna", "optuna_integration", "dask", "distributed",
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
