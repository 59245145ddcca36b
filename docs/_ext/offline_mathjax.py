"""MathJax served with the site instead of from a CDN.

Sphinx's ``sphinx.ext.mathjax`` loads MathJax from jsDelivr by default, so formulas stay
raw TeX wherever the reader (or the machine that builds and checks the site) has no
network. MathJax 3's files come from the ``sphinx-mathjax-offline`` distribution (a
dependency of ``gbrank[docs]``); this extension copies the parts a page uses (the TeX
input with its extensions, the HTML output with its fonts, the menu) into
``_static/mathjax`` and points ``mathjax_path`` there.
"""

from __future__ import annotations

import importlib.util
import shutil
from pathlib import Path

# The combined component a page loads, and the folders it loads on demand (sre: the
# speech rules of the accessibility menu, which would otherwise come from a CDN).
ENTRY = "tex-chtml.js"
PARTS = ("input", "output", "ui", "a11y", "adaptors", "sre")


def _source() -> Path:
    spec = importlib.util.find_spec("sphinx-mathjax-offline")
    if spec is None or spec.origin is None:
        raise RuntimeError("MathJax's files come from sphinx-mathjax-offline: "
                           "pip install 'gbrank[docs]'")
    return Path(spec.origin).parent / "static" / "mathjax"


def _copy(app, exc) -> None:
    if exc is not None or app.builder.format != "html":
        return
    src, dst = _source(), Path(app.outdir) / "_static" / "mathjax"
    dst.mkdir(parents=True, exist_ok=True)
    shutil.copy2(src / ENTRY, dst / ENTRY)
    for part in PARTS:
        shutil.copytree(src / part, dst / part, dirs_exist_ok=True)


def setup(app):
    _source()  # fail at start, naming the package, rather than after the build
    app.config.mathjax_path = f"mathjax/{ENTRY}"
    app.connect("build-finished", _copy)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
