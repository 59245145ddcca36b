"""Where a first call's compilation goes: numba's compile events of one statement.

Runs the statement in a fresh process on an empty ``NUMBA_CACHE_DIR`` and lists every
function numba compiled (gbrank's own and numba's implementations of NumPy functions),
with CPU seconds per function (``total`` includes the compiles of its callees, ``self``
excludes them), the number of compiled functions and the cache size::

    python experiments/bench/compile_profile.py "LambdaRank().grad_hess(y, s, g)"
    python experiments/bench/compile_profile.py --root /path/to/other/checkout --tree \\
        "metrics.ndcg(y, s, g, k=10)"
    python experiments/bench/compile_profile.py --before "LambdaRank().grad_hess(y, s, g)" \\
        "LambdaRank('err').grad_hess(y, s, g)"   # the second after the first

The statement sees the data of ``bench_first_use.py`` (``y, s, g``: 2,000 rows in 20
queries; ``yl, sl``: 20,000 rows; ``yt, st, gt``: 250,000 rows in 2,500 queries),
``metrics`` and the objective classes.
"""

from __future__ import annotations

import argparse
import tempfile
from pathlib import Path

from bench_first_use import _SETUP, _child

HERE = Path(__file__).resolve().parent

_CHILD = r"""
import json, os, sys, time
from numba.core import event as ev


class Recorder(ev.Listener):
    def __init__(self):
        self.events = []

    def on_start(self, event):
        self.events.append((time.process_time(), event))

    def on_end(self, event):
        self.events.append((time.process_time(), event))


rec = Recorder()
ev.register("numba:compile", rec)
import gbrank
assert gbrank.__file__.startswith(os.environ["PYTHONPATH"]), gbrank.__file__
from gbrank import metrics
from gbrank.objectives import FBetaSurrogate, FocalLoss, LambdaRank, RankNet
exec(SETUP)
if BEFORE:
    exec(BEFORE)
    rec.events.clear()
c0 = time.process_time()
exec(STATEMENT)
cpu = time.process_time() - c0
stack, rows = [], []
for t, e in rec.events:
    f = e.data["dispatcher"].py_func
    name = f.__module__ + "." + f.__qualname__
    if e.is_start:
        stack.append([name, t, 0.0, str(e.data["args"])])
    else:
        name, t0, inner, args = stack.pop()
        if stack:
            stack[-1][2] += t - t0
        rows.append((name, t - t0, t - t0 - inner, args, len(stack)))
print(json.dumps({"cpu": cpu, "rows": rows}))
"""


def profile(statement: str, root: Path, before: str = "") -> dict:
    """The compile events of ``statement`` in a fresh process on an empty cache (the child
    of bench_first_use.py: ``root``'s gbrank, bytecode caching on)."""
    with tempfile.TemporaryDirectory() as cache:
        out = _child(f"SETUP = {_SETUP!r}\nBEFORE = {before!r}\nSTATEMENT = {statement!r}\n"
                     + _CHILD, Path(cache), root)
        files = [p for p in Path(cache).rglob("*") if p.is_file()]
        out["cache_bytes"] = sum(p.stat().st_size for p in files)
        out["cache_files"] = len(files)
    return out


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("statement")
    parser.add_argument("second", nargs="?",
                        help="with --before: profile this statement, run after the first")
    parser.add_argument("--root", type=Path, default=HERE.parents[1])
    parser.add_argument("--before", action="store_true",
                        help="run STATEMENT first (not profiled), then profile SECOND")
    parser.add_argument("--top", type=int, default=20)
    parser.add_argument("--tree", action="store_true", help="print the nesting of compiles")
    args = parser.parse_args(argv)
    if args.before:
        out = profile(args.second, args.root.resolve(), before=args.statement)
    else:
        out = profile(args.statement, args.root.resolve())
    rows = out["rows"]
    own = sum(r[0].startswith("gbrank") for r in rows)
    print(f"CPU {out['cpu']:.2f} s; {len(rows)} functions compiled ({own} gbrank, "
          f"{len(rows) - own} numba); cache {out['cache_bytes'] / 2**20:.2f} MiB in "
          f"{out['cache_files']} files")
    agg: dict[str, list] = {}
    for name, total, own_s, _, _ in rows:
        a = agg.setdefault(name, [0, 0.0, 0.0])
        a[0] += 1
        a[1] += total
        a[2] += own_s
    for name, (n, total, own_s) in sorted(agg.items(), key=lambda kv: -kv[1][2])[:args.top]:
        print(f"  {name:70s} x{n}  total {total:6.2f}  self {own_s:6.2f}")
    if args.tree:
        for name, total, own_s, _, depth in reversed(rows):
            print("  " * depth + f"{name} {total:.2f} (self {own_s:.2f})")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
