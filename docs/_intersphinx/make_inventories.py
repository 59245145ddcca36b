"""Write the intersphinx inventories the site links NumPy, scikit-learn, LightGBM and
XGBoost names through, without the network.

Sphinx's intersphinx reads each project's ``objects.inv`` (the names its site documents
and their addresses). The machines that build this site reach package registries only,
not the projects' sites, so the inventories live here, made from the installed packages:
every public class, function and method each package exports, at the address its site
gives such a name (``reference/generated/numpy.argsort.html`` for NumPy,
``modules/generated/sklearn.model_selection.GroupKFold.html`` for scikit-learn,
``pythonapi/lightgbm.Dataset.html`` for LightGBM, ``python/python_api.html#xgboost.DMatrix``
for XGBoost). With network access the real inventories can replace them:
``python -m sphinx.ext.intersphinx https://numpy.org/doc/stable/objects.inv`` lists one.

Run from the repository root after upgrading a dependency::

    .venv/bin/python docs/_intersphinx/make_inventories.py
"""

from __future__ import annotations

import importlib
import inspect
import zlib
from pathlib import Path

HERE = Path(__file__).resolve().parent

# Modules whose public names are linked, per project, and how a name becomes a page.
PROJECTS = {
    "numpy": {
        "modules": ["numpy", "numpy.random"],
        "page": "reference/generated/{name}.html#{name}",
        "method_page": "reference/generated/{cls}.{attr}.html#{cls}.{attr}",
        "methods_of": ["numpy.ndarray", "numpy.random.Generator"],
    },
    "sklearn": {
        "modules": ["sklearn", "sklearn.base", "sklearn.compose", "sklearn.datasets",
                    "sklearn.metrics", "sklearn.model_selection", "sklearn.pipeline",
                    "sklearn.preprocessing", "sklearn.utils"],
        "page": "modules/generated/{name}.html#{name}",
        "method_page": "modules/generated/{cls}.html#{cls}.{attr}",
        "methods_of": ["sklearn.model_selection.GridSearchCV",
                       "sklearn.model_selection.GroupKFold",
                       "sklearn.model_selection.TunedThresholdClassifierCV",
                       "sklearn.pipeline.Pipeline"],
    },
    "lightgbm": {
        "modules": ["lightgbm"],
        "page": "pythonapi/{name}.html#{name}",
        "method_page": "pythonapi/{cls}.html#{cls}.{attr}",
        "methods_of": ["lightgbm.Dataset", "lightgbm.Booster", "lightgbm.LGBMRanker",
                       "lightgbm.LGBMClassifier", "lightgbm.DaskLGBMRanker"],
    },
    "xgboost": {
        "modules": ["xgboost", "xgboost.dask"],
        "page": "python/python_api.html#{name}",
        "method_page": "python/python_api.html#{cls}.{attr}",
        "methods_of": ["xgboost.DMatrix", "xgboost.Booster", "xgboost.XGBRanker",
                       "xgboost.XGBClassifier"],
    },
}


def _public(module) -> list[str]:
    names = getattr(module, "__all__", None)
    if names is None:
        names = [n for n in vars(module) if not n.startswith("_")]
    return sorted(set(names))


def _entries(spec: dict) -> list[tuple[str, str, str]]:
    """``(name, role, uri)`` of every linked name of one project."""
    out = []
    for modname in spec["modules"]:
        module = importlib.import_module(modname)
        out.append((modname, "py:module", spec["page"].format(name=modname)))
        for attr in _public(module):
            try:
                obj = getattr(module, attr)
            except Exception:  # noqa: BLE001 - a lazily loaded optional part
                continue
            if inspect.ismodule(obj):
                continue
            if inspect.isclass(obj):
                role = "py:exception" if issubclass(obj, BaseException) else "py:class"
            elif callable(obj):
                role = "py:function"
            else:
                continue
            name = f"{modname}.{attr}"
            uri = spec["page"].format(name=name)
            out.append((name, role, uri))
            # The path Python gives the object (``xgboost.sklearn.XGBRanker``), which
            # Sphinx writes for a base class, goes to the same page.
            home = getattr(obj, "__module__", modname)
            canonical = f"{home}.{getattr(obj, '__qualname__', attr)}"
            if canonical != name:
                out.append((canonical, role, uri))
    for cls_path in spec["methods_of"]:
        modname, _, clsname = cls_path.rpartition(".")
        cls = getattr(importlib.import_module(modname), clsname)
        for attr, value in vars(cls).items():
            if attr.startswith("_"):
                continue
            if isinstance(value, property):
                role = "py:property"
            elif callable(value) or isinstance(value, (classmethod, staticmethod)):
                role = "py:method"
            else:
                continue
            uri = spec["method_page"].format(cls=cls_path, attr=attr)
            out.append((f"{cls_path}.{attr}", role, uri))
    return out


def write(project: str, spec: dict) -> Path:
    module = importlib.import_module(project)
    version = ".".join(module.__version__.split(".")[:2])
    lines = sorted({f"{name} {role} 1 {uri} -" for name, role, uri in _entries(spec)})
    header = (f"# Sphinx inventory version 2\n# Project: {project}\n# Version: {version}\n"
              "# The remainder of this file is compressed using zlib.\n").encode()
    path = HERE / f"{project}.inv"
    path.write_bytes(header + zlib.compress(("\n".join(lines) + "\n").encode(), 9))
    return path


if __name__ == "__main__":
    for project, spec in PROJECTS.items():
        path = write(project, spec)
        print(f"{path.relative_to(HERE.parents[1])}: {path.stat().st_size} bytes")
