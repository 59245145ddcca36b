"""Sphinx configuration of gbrank's documentation site (``make docs``).

The site is the user guide (``guide/``, Markdown through MyST), the API reference
generated from the docstrings (``api/``, autosummary and numpydoc), the gallery of
examples run during the build (``examples/`` → ``auto_examples/``, sphinx-gallery) and
the background pages beside this file (the math contract, the evidence behind defaults,
performance notes). It builds without network access: MathJax is served with the site
(``_ext/offline_mathjax.py``) and the intersphinx inventories live in ``_intersphinx/``.
"""

from __future__ import annotations

import os
import re
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE / "_ext"))

# The gallery's examples train small models: one OpenMP thread each (on a busy machine
# the boosters' spinning threads make a tiny fit take seconds), and figures to files.
os.environ.setdefault("OMP_NUM_THREADS", "1")
os.environ.setdefault("MPLBACKEND", "agg")

from sphinx.util import logging  # noqa: E402

import gbrank  # noqa: E402

# gbrank loads its modules on first use (PEP 562); autodoc and autosummary need them as
# modules in sys.modules, not as attributes of the package.
for _name in ("objectives", "metrics", "lightgbm", "xgboost", "sklearn", "dask", "datasets",
              "gradcheck", "tuning"):
    __import__(f"gbrank.{_name}")
del _name

project = "gbrank"
author = "the gbrank developers"
copyright = "gbrank developers, MIT License"
version = release = gbrank.__version__

extensions = [
    "sphinx.ext.autodoc",
    "sphinx.ext.autosummary",
    "sphinx.ext.intersphinx",
    "sphinx.ext.mathjax",
    "numpydoc",
    "myst_parser",
    "sphinx_gallery.gen_gallery",
    "sphinx_copybutton",
    "offline_mathjax",
]

source_suffix = {".rst": "restructuredtext", ".md": "markdown"}
root_doc = "index"
exclude_patterns = ["_build", "_intersphinx", "examples/README.rst",
                    "auto_examples/*.ipynb", "auto_examples/*.py", "auto_examples/*.zip"]
templates_path = ["_templates"]

# Every cross-reference must resolve: a name a docstring links that does not exist is an
# error of the build (with -W), not a silent plain word.
nitpicky = True

# -- API reference: autosummary pages rendered from the runtime docstrings ----------
autosummary_generate = True
autosummary_ignore_module_all = False  # a module's public names are its __all__
autosummary_imported_members = True
autodoc_typehints = "none"  # numpydoc's Parameters carry the types
autodoc_member_order = "groupwise"
toc_object_entries_show_parents = "hide"  # "grad_hess()", not "LambdaRank.grad_hess()"
autodoc_default_options = {
    # scikit-learn's metadata-routing setters, made per estimator from its signature.
    "exclude-members": "set_fit_request, set_score_request, set_predict_request, "
                       "set_partial_fit_request, set_transform_request",
}
numpydoc_show_class_members = False  # the class template lists them
numpydoc_class_members_toctree = False
numpydoc_attributes_as_param_list = True
numpydoc_xref_param_type = False

# Classes show their methods, gbrank's bases' included, but not those of another
# library's base (scikit-learn's, XGBoost's): those are that library's to document.
FOREIGN_BASES = "BaseEstimator, ClassifierMixin, RegressorMixin, _MetadataRequester, " \
                "XGBModel, XGBRankerMixIn, XGBRanker, object"


_CODE = re.compile(r"(``.*?``|`[^`]*`)")
_PAGE = re.compile(r"(?<![\w/.])docs/([a-z_]+(?:/[a-z_]+)*)\.md(?![\w/])")


def _page_link(match) -> str | None:
    """A page of this site named by its path in the repository (``docs/evidence.md``):
    a link to it, the path its text; ``None`` for a path that is no page."""
    if not (HERE / f"{match.group(1)}.md").is_file():
        return None
    return f":doc:`docs/{match.group(1)}.md </{match.group(1)}>`"


def link_pages(line: str) -> str:
    """Mentions of the site's pages by their path (``docs/contract.md``), as plain text
    or as code, made links to them; other code and roles are left alone."""
    parts = _CODE.split(line)
    for i, part in enumerate(parts):
        if i % 2 == 0:
            parts[i] = _PAGE.sub(lambda m: _page_link(m) or m.group(0), part)
        elif part.startswith("``") and (page := _PAGE.fullmatch(part[2:-2])):
            parts[i] = _page_link(page) or part
    return "".join(parts)


def constant_doc(module_name: str, name: str) -> str:
    """What the API page says of a module constant (``LETOR_PARTS``, ``REGISTRY``): the
    comment above its assignment in the module that defines it, then its value (the
    keys of a mapping)."""
    module = sys.modules[module_name]
    value = getattr(module, name)
    package = Path(module.__file__).parent
    comment: list[str] = []
    for path in sorted(package.glob("*.py")):
        lines = path.read_text(encoding="utf-8").splitlines()
        for i, line in enumerate(lines):
            if re.match(rf"{name}\b[^=]*=", line):
                j = i - 1
                while j >= 0 and lines[j].lstrip().startswith("#"):
                    comment.insert(0, lines[j].lstrip().lstrip("#:").strip())
                    j -= 1
                break
        if comment:
            break
    text = " ".join(comment)
    if hasattr(value, "keys"):
        entries = list(value.values())
        kind = type(entries[0]).__name__ if entries else "value"
        if kind in getattr(module, "__all__", ()):
            kind = f":class:`{kind}`"
        text = text or f"Each registry name and its {kind}."
        text += " Names: " + ", ".join(f"``{key}``" for key in value) + "."
    else:
        text += f" Value: ``{value!r}``."
    return link_pages(text.strip())


API_MODULES = ("objectives", "metrics", "lightgbm", "xgboost", "sklearn", "dask", "datasets",
               "gradcheck", "tuning")
CONSTANT_DOCS = {
    f"gbrank.{module}.{name}": constant_doc(f"gbrank.{module}", name)
    for module in API_MODULES for name in sys.modules[f"gbrank.{module}"].__all__
    if not callable(getattr(sys.modules[f"gbrank.{module}"], name))
}
autosummary_context = {"foreign_bases": FOREIGN_BASES, "constant_docs": CONSTANT_DOCS}


def _join_continued_lines(app, what, name, obj, options, lines):
    """A numpydoc entry naming many parameters may continue its name line with a
    backslash (``a, b, \\`` then ``c``), as gbrank's raw docstrings do: one line again,
    before numpydoc parses the sections."""
    i = 0
    while i < len(lines) - 1:
        if lines[i].endswith(" \\"):
            lines[i] = lines[i][:-1] + lines.pop(i + 1).strip()
        else:
            i += 1


_ROLE = re.compile(r":(class|func|meth|attr|data|obj):`([A-Za-z_]\w*)`")


def _qualify_module_refs(app, what, name, obj, options, lines):
    """A module docstring's bare references (``:class:`GBRanker```) are relative to its
    module; its first sentence is also shown in the API index's table, away from that
    module, so they are written out in full there (``~gbrank.sklearn.GBRanker``)."""
    if what != "module":
        return

    def qualify(match):
        role, target = match.groups()
        if hasattr(obj, target):
            return f":{role}:`~{name}.{target}`"
        return match.group(0)

    lines[:] = [_ROLE.sub(qualify, line) for line in lines]


_BARS = re.compile(r"(?<![\\|])\|([^|\s`][^|`]*?)(?<!\s)\|(?!_)")


def _escape_absolute_values(app, what, name, obj, options, lines):
    """Docstrings write absolute values as plain text (``|ΔZ|``, ``|g| / c``), which
    reStructuredText reads as a substitution reference: escape the bars outside code
    and roles, so the page shows them as written."""
    for i, line in enumerate(lines):
        parts = _CODE.split(line)
        parts[::2] = [_BARS.sub(r"\\|\1\\|", part) for part in parts[::2]]
        lines[i] = "".join(parts)


def _link_pages(app, what, name, obj, options, lines):
    """Docstrings cite the background pages by their path in the repository
    (``docs/evidence.md``), which reads in a terminal; on the site those are links."""
    lines[:] = [link_pages(line) for line in lines]


def _public_base(cls):
    """A base class as the reader can find it: gbrank's private classes by the public
    name that exports them (``gbrank.objectives.Objective``), private mix-ins hidden."""
    parts = cls.__module__.split(".")
    if parts[0] != "gbrank" or not any(p.startswith("_") for p in parts):
        return cls
    for i in range(len(parts) - 1, 0, -1):
        package = sys.modules.get(".".join(parts[:i]))
        if (package is not None and not any(p.startswith("_") for p in parts[:i])
                and cls.__name__ in getattr(package, "__all__", ())):
            return f":py:class:`{package.__name__}.{cls.__name__}`"
    return None


def _process_bases(app, name, obj, options, bases):
    bases[:] = [b for b in map(_public_base, bases) if b is not None]


def _check_every_public_name(app, env):
    """Every name of every API module's ``__all__`` has its entry in the reference: a
    new public name without one is a warning (an error of ``make docs``)."""
    documented = env.get_domain("py").objects
    for module in API_MODULES:
        for name in sys.modules[f"gbrank.{module}"].__all__:
            if f"gbrank.{module}.{name}" not in documented:
                logging.getLogger(__name__).warning(
                    "gbrank.%s.%s is public (__all__) but has no API entry", module, name)


def setup(app):
    app.connect("env-check-consistency", _check_every_public_name)
    app.connect("autodoc-process-docstring", _join_continued_lines, priority=100)
    app.connect("autodoc-process-docstring", _qualify_module_refs, priority=100)
    app.connect("autodoc-process-docstring", _escape_absolute_values, priority=100)
    app.connect("autodoc-process-docstring", _link_pages, priority=100)
    app.connect("autodoc-process-bases", _process_bases)


# -- Markdown pages --------------------------------------------------------------------
myst_enable_extensions = ["dollarmath", "colon_fence", "deflist"]
myst_heading_anchors = 3

# -- Links to the libraries gbrank works with (inventories made offline) -------------
intersphinx_mapping = {
    "numpy": ("https://numpy.org/doc/stable/", str(HERE / "_intersphinx" / "numpy.inv")),
    "sklearn": ("https://scikit-learn.org/stable/",
                str(HERE / "_intersphinx" / "sklearn.inv")),
    "lightgbm": ("https://lightgbm.readthedocs.io/en/stable/",
                 str(HERE / "_intersphinx" / "lightgbm.inv")),
    "xgboost": ("https://xgboost.readthedocs.io/en/stable/",
                str(HERE / "_intersphinx" / "xgboost.inv")),
}

# -- Gallery: every example runs during the build, on embedded data, in seconds ------
# The examples run in this process: gbrank's notice that a kernel is compiling (with the
# builder's cache path, and only on a cold cache) is not part of their output.
import logging as _stdlib_logging  # noqa: E402

_stdlib_logging.getLogger("gbrank").addHandler(_stdlib_logging.NullHandler())

sphinx_gallery_conf = {
    "examples_dirs": "examples",
    "gallery_dirs": "auto_examples",
    "filename_pattern": r"\.py$",  # run every example, not only plot_*.py
    "within_subsection_order": "FileNameSortKey",
    "download_all_examples": False,
    "remove_config_comments": True,
    "show_memory": False,
    "min_reported_time": 1,
    # The computation-times page loads DataTables and jQuery from CDNs: the site loads
    # nothing remote, so it is not written (each example's page states its own time).
    "write_computation_times": False,
    "reference_url": {"gbrank": None},  # link names in the code to the API pages
    "matplotlib_animations": False,
}

# -- HTML ------------------------------------------------------------------------------
html_theme = "pydata_sphinx_theme"
html_title = f"gbrank {release}"
html_static_path = ["_static"]
html_css_files = ["gbrank.css"]
html_show_sourcelink = False
html_theme_options = {
    "navbar_align": "left",
    "show_toc_level": 2,
    "navigation_with_keys": False,
    "header_links_before_dropdown": 6,
    "secondary_sidebar_items": ["page-toc"],
    "footer_start": ["copyright"],
    "footer_end": ["sphinx-version"],
}
html_context = {"default_mode": "light"}
