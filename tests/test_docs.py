"""The documentation's examples: every public class and function of gbrank's packages has
an Examples section, and every example under ``gbrank/`` (the numba kernels aside) runs
and shows what it says.

Public objects are read from each package's ``__all__`` (``gbrank`` and the packages it
lists), so a new public name is covered without editing this file. Examples run through
:mod:`doctest` in a fresh namespace, as a reader who copies one runs it: an example
imports what it uses. A module whose examples need an optional package that is not
installed (an extra such as ``dask`` or ``xgboost``) is skipped.
"""

from __future__ import annotations

import doctest
import importlib
import importlib.util
import inspect
import io
import re
import sys
from pathlib import Path

import pytest

import gbrank
from gbrank._deps import EXTRAS

ROOT = Path(gbrank.__file__).resolve().parent
# Kernels are internal numba code with no examples of their own.
EXCLUDED = ("_kernels",)
# The option pytest's --doctest-modules runs examples with, so both runners agree.
OPTIONS = doctest.ELLIPSIS
# A numpydoc section heading (indented as the docstring's other lines are).
EXAMPLES = re.compile(r"^[ \t]*Examples\n[ \t]*-{8}", re.M)


def _public_packages() -> list[str]:
    """``gbrank`` and the packages its ``__all__`` lists (found as files: collecting the
    tests imports none of the lazily loaded packages)."""
    lazy = [name for name in gbrank.__all__ if (ROOT / name).is_dir()
            or (ROOT / f"{name}.py").is_file()]
    return ["gbrank", *(f"gbrank.{name}" for name in lazy)]


def _modules() -> list[str]:
    """Every module under ``gbrank/`` but the excluded folders, by dotted name."""
    out = []
    for path in sorted(ROOT.rglob("*.py")):
        rel = path.relative_to(ROOT.parent).with_suffix("")
        if any(part in EXCLUDED for part in rel.parts):
            continue
        parts = list(rel.parts)
        if parts[-1] == "__init__":
            parts.pop()
        out.append(".".join(parts))
    return out


_IMPORTED = re.compile(r"(?:^|[\s;(])(?:import|from)\s+([A-Za-z_]\w*)"
                       r"|require\(\s*[\"']([A-Za-z_]\w*)", re.M)


def _installed(name: str) -> bool:
    """Whether top-level package ``name`` can be imported. An imported module may have
    replaced itself in ``sys.modules`` by one without ``__spec__`` (optuna-integration
    does, once ``optuna.integration`` is used), where ``find_spec`` raises: imported is
    installed."""
    if sys.modules.get(name) is not None:
        return True
    return importlib.util.find_spec(name) is not None


def _missing_extras(text: str) -> list[str]:
    """Optional packages (gbrank's extras) that ``text`` imports and are not installed."""
    names = {a or b for a, b in _IMPORTED.findall(text)}
    return sorted(n for n in names & set(EXTRAS) if not _installed(n))


def _import_or_skip(name: str):
    try:
        return importlib.import_module(name)
    except ImportError as exc:  # an extra of gbrank that is not installed
        missing = getattr(exc, "name", None)
        if missing in EXTRAS or "is not installed" in str(exc):
            pytest.skip(f"{name}: {exc}")
        raise


def _public_objects(package: str):
    """``(name, object)`` of every class and function in ``package.__all__``."""
    module = _import_or_skip(package)
    for name in module.__all__:
        try:
            obj = getattr(module, name)
        except ImportError as exc:  # e.g. gbrank.xgboost.XGBRanker without XGBoost
            if "is not installed" in str(exc) or getattr(exc, "name", None) in EXTRAS:
                continue
            raise
        if inspect.isclass(obj) or inspect.isfunction(obj) or inspect.isbuiltin(obj):
            yield name, obj


@pytest.mark.parametrize("package", _public_packages())
def test_every_public_object_has_examples(package):
    missing = [name for name, obj in _public_objects(package)
               if not EXAMPLES.search(inspect.getdoc(obj) or "")]
    assert not missing, (f"public objects of {package} without an 'Examples' section "
                         f"(numpydoc): {missing}")


def _documented_parameters(doc: str) -> list[str]:
    """The names a numpydoc docstring's Parameters section lists, in its order (``a, b :
    type`` gives both; a name line continued with a backslash is joined, as
    docs/conf.py does)."""
    names: list[str] = []
    lines = re.sub(r" \\\n\s*", " ", doc).splitlines()
    inside, indent = False, ""
    for i, line in enumerate(lines):
        underlined = i + 1 < len(lines) and re.fullmatch(r"-{3,}", lines[i + 1].strip())
        if underlined and line.strip():
            inside = line.strip() == "Parameters"
            indent = line[:len(line) - len(line.lstrip())]  # the entries' column
            continue
        entry = line.startswith(indent) and line[len(indent):len(indent) + 1].isalpha()
        if inside and entry:
            names += [n.strip().lstrip("*") for n in line.split(" :")[0].split(",")]
    return names


def _named_arguments(obj) -> list[str]:
    """The named arguments of a function or of a class's constructor (``*args`` and
    ``**kwargs`` aside: they pass on another callable's arguments)."""
    return [p for p, v in inspect.signature(obj).parameters.items()
            if v.kind not in (v.VAR_POSITIONAL, v.VAR_KEYWORD)]


def _undocumented_arguments(cls) -> list[str]:
    """The named constructor arguments of ``cls`` without a Parameters entry."""
    documented = _documented_parameters(inspect.getdoc(cls) or "")
    return [p for p in _named_arguments(cls) if p not in documented]


@pytest.mark.parametrize("package", _public_packages())
def test_parameters_follow_the_signature(package):
    """A public function's Parameters section lists every named argument, and every
    Parameters section lists them in the signature's order (a reader who passes
    arguments by position goes by it). Classes whose fields are Attributes have none."""
    wrong = []
    for name, obj in _public_objects(package):
        documented = _documented_parameters(inspect.getdoc(obj) or "")
        params = _named_arguments(obj)
        lacking = [p for p in params if p not in documented]
        if inspect.isfunction(obj) and lacking:
            wrong.append(f"{name}: no entry for {lacking}")
        order = [p for p in documented if p in params]
        if order != [p for p in params if p in documented]:
            wrong.append(f"{name}: entries in the order {order}")
    assert not wrong, f"{package}: " + "; ".join(wrong)


def test_every_objective_parameter_is_documented():
    """Each public objective's Parameters section lists every argument of its
    constructor (a parameter without an entry is one a user can only guess)."""
    from gbrank.objectives import Objective

    missing = {}
    for name, obj in _public_objects("gbrank.objectives"):
        if not (inspect.isclass(obj) and issubclass(obj, Objective)):
            continue
        lacking = _undocumented_arguments(obj)
        if lacking:
            missing[name] = lacking
    assert not missing, f"constructor arguments without a Parameters entry: {missing}"


# Public classes beyond the objectives whose constructor arguments a user sets (or, for
# StudyResult, reads back as attributes): dataclasses of many fields and a wrapper whose
# one argument of its own changes how it trains.
DOCUMENTED_CLASSES = [("gbrank.tuning", "TuneConfig"), ("gbrank.tuning", "Task"),
                      ("gbrank.tuning", "StudyResult"), ("gbrank.xgboost", "XGBRanker")]


@pytest.mark.parametrize(("package", "name"), DOCUMENTED_CLASSES)
def test_every_class_parameter_is_documented(package, name):
    """The Parameters section of each of these classes lists every argument of its
    constructor."""
    module = _import_or_skip(package)
    try:
        cls = getattr(module, name)
    except ImportError as exc:  # XGBRanker without XGBoost
        pytest.skip(f"{package}.{name}: {exc}")
    lacking = _undocumented_arguments(cls)
    assert not lacking, f"{package}.{name}: constructor arguments without a Parameters " \
                        f"entry: {lacking}"


def _not_reached(module) -> list[tuple[str, object]]:
    """Public objects of a package that no module's doctest finder reaches: built on
    first access (``gbrank.xgboost.XGBRanker``), so in no module's namespace."""
    out = []
    for name in getattr(module, "__all__", ()):
        if name in vars(module):
            continue
        try:
            obj = getattr(module, name)
        except ImportError:
            continue
        if inspect.ismodule(obj):
            continue
        home = sys.modules.get(getattr(obj, "__module__", ""), None)
        if home is None or vars(home).get(getattr(obj, "__name__", None)) is not obj:
            out.append((f"{module.__name__}.{name}", obj))
    return out


class _Runner(doctest.DocTestRunner):
    """Keeps the exceptions examples raise, to tell a missing extra from a failure."""

    def __init__(self, **kwargs):
        super().__init__(**kwargs)
        self.raised: list[BaseException] = []

    def report_unexpected_exception(self, out, test, example, exc_info):
        self.raised.append(exc_info[1])
        super().report_unexpected_exception(out, test, example, exc_info)


def _is_missing_extra(exc: BaseException) -> bool:
    if not isinstance(exc, ImportError):
        return False
    name = (getattr(exc, "name", None) or "").split(".")[0]
    return (name in EXTRAS and not _installed(name)) or (
        "is not installed" in str(exc) and "pip install 'gbrank[" in str(exc))


@pytest.fixture(scope="module")
def one_openmp_thread():
    """Examples run with one OpenMP thread: on a busy machine the boosters' spinning
    threads make a tiny example take seconds, and no output depends on the count. The
    limit reaches the OpenMP runtimes loaded when it is set, so the boosters are
    imported first."""
    threadpoolctl = pytest.importorskip("threadpoolctl")  # a dependency of scikit-learn
    for booster in ("lightgbm", "xgboost"):
        if importlib.util.find_spec(booster) is not None:
            importlib.import_module(booster)
    with threadpoolctl.threadpool_limits(limits=1, user_api="openmp"):
        yield


@pytest.mark.parametrize("name", _modules())
def test_examples_run(name, tmp_path, monkeypatch, one_openmp_thread):
    source = (ROOT.parent / (name.replace(".", "/") + ".py"))
    if not source.exists():
        source = ROOT.parent / name.replace(".", "/") / "__init__.py"
    missing = _missing_extras(source.read_text(encoding="utf-8"))
    if missing:
        pytest.skip(f"{name} needs {missing}, not installed")
    module = _import_or_skip(name)
    finder = doctest.DocTestFinder(exclude_empty=True)
    tests = finder.find(module, name, globs={"__name__": name})
    for qualname, obj in _not_reached(module):
        tests += finder.find(obj, qualname, module=False, globs={"__name__": name})
    tests = [t for t in tests if t.examples]
    if not tests:
        return  # nothing to run
    monkeypatch.chdir(tmp_path)  # an example that writes a file leaves the checkout alone
    runner = _Runner(optionflags=OPTIONS)
    report = io.StringIO()
    for test in sorted(tests, key=lambda t: t.name):
        runner.run(test, out=report.write)
    failed, attempted = runner.summarize(verbose=False)
    missing = [e for e in runner.raised if _is_missing_extra(e)]
    if failed and missing:  # later examples fail for want of what it would have made
        pytest.skip(f"{name}: an optional package is not installed ({missing[0]})")
    assert failed == 0, f"{failed} of {attempted} examples of {name} failed:\n" \
                        f"{report.getvalue()}"
