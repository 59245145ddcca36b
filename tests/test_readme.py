"""Every ```python block of README.md and of the documentation site's Markdown pages (the
home page and the user guide) runs as written, after a bare ``import gbrank``.

Each block is a complete program (it makes its own small data), executed in a fresh
namespace in a temporary working directory, so a renamed function or a changed
signature in the package breaks this test instead of a newcomer's first session.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
README = ROOT / "README.md"
# The pages a reader copies code from: the site's home page and the user guide.
PAGES = [README, ROOT / "docs" / "index.md", *sorted((ROOT / "docs" / "guide").glob("*.md"))]
BLOCK = re.compile(r"^```python\n(.*?)^```", re.S | re.M)


def _blocks(pages=PAGES) -> list[tuple[str, str]]:
    out = []
    for page in pages:
        text = page.read_text(encoding="utf-8")
        for m in BLOCK.finditer(text):
            line = text.count("\n", 0, m.start()) + 1
            out.append((f"{page.relative_to(ROOT).as_posix()}:{line}", m.group(1)))
    return out


def test_readme_has_python_examples():
    assert len(_blocks([README])) >= 2


def test_guide_has_python_examples():
    pages = {where.split(":")[0] for where, _ in _blocks()}
    assert len(pages) >= 8, pages


@pytest.mark.parametrize(("where", "code"), _blocks(), ids=[w for w, _ in _blocks()])
def test_block_runs(where, code, tmp_path, monkeypatch):
    import sklearn

    monkeypatch.chdir(tmp_path)
    namespace: dict = {"__name__": "__readme__"}
    # An example may change scikit-learn's global config (metadata routing): whatever
    # happens, later tests see it as it was.
    with sklearn.config_context():
        exec(compile("import gbrank\n" + code, where, "exec"), namespace)


def test_every_path_the_readme_names_exists():
    """A file or folder the README points to (`gbrank/...`, `docs/...`, `experiments/...`)
    is there: a Layout that names modules gone stale is caught here."""
    root = README.parent
    text = README.read_text(encoding="utf-8")
    named = set(re.findall(r"`((?:gbrank|docs|experiments|tests|data)/[\w./-]*)`", text))
    # docs/_build/ is what `make docs` writes: named as the place to look, absent from a clone.
    built = "docs/_build"
    missing = sorted(p for p in named
                     if "*" not in p and not p.startswith(built) and not (root / p).exists())
    assert not missing, f"README.md names paths that do not exist: {missing}"
