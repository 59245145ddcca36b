"""Print pip constraints that pin every declared floor: ``name>=x`` becomes ``name==x``.

    python .ci/min_versions.py [extra ...] > constraints.txt

Reads pyproject.toml (the one place the floors are written): the core dependencies
and the given extras. Self-references (``gbrank[tune]``) are followed.
"""

from __future__ import annotations

import re
import sys
from pathlib import Path

import tomllib

ROOT = Path(__file__).resolve().parents[1]
# Test tools are not part of what a user installs; their newest versions are fine. The
# serving tools (ONNX, Treelite) are test tools too: gbrank never imports them, the tests
# load exported models with them as a server would.
NOT_PINNED = {"pytest", "pytest-xdist", "hypothesis", "ruff", "build", "pytrec-eval-terrier",
              "onnxmltools", "onnxruntime", "onnx", "treelite"}
REQ = re.compile(r"^\s*([A-Za-z0-9_.-]+)(\[[^\]]*\])?\s*>=\s*([^,;\s]+)\s*$")


def floors(extras: list[str]) -> dict[str, str]:
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    optional = project.get("optional-dependencies", {})
    out: dict[str, str] = {}
    todo = list(project["dependencies"])
    seen: set[str] = set()
    for extra in extras:
        todo += optional[extra]
    while todo:
        req = todo.pop()
        if req.startswith(project["name"] + "["):
            for extra in req[len(project["name"]) + 1:-1].split(","):
                if extra not in seen:
                    seen.add(extra)
                    todo += optional[extra.strip()]
            continue
        m = REQ.match(req)
        if not m:
            raise SystemExit(f"pyproject.toml: {req!r} has no '>=' floor")
        name = m.group(1).lower()
        if name not in NOT_PINNED:
            out[name] = m.group(3)
    return out


if __name__ == "__main__":
    for name, version in sorted(floors(sys.argv[1:]).items()):
        print(f"{name}=={version}")
