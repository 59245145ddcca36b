"""gbrank benchmark: every section measures gbrank against peers on the same arrays,
in one run, and writes one markdown table per section to experiments/results/bench.md.

    python experiments/bench/bench.py            # all sections
    python experiments/bench/bench.py --quick    # smaller sizes, for a smoke run
    python experiments/bench/bench.py --only metrics objectives
"""

from __future__ import annotations

import argparse
import importlib
import platform
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

# section name -> module in experiments/ exposing run(quick: bool) -> str (markdown)
SECTIONS = {
    "metrics": "bench_metrics",
    "objectives": "bench_ranking",
    "binary": "bench_binary",
    "threads": "bench_threads",
    "scaling": "bench_scaling",
    "dask": "bench_dask",
    "first_use": "bench_first_use",
    "tuner_reuse": "bench_tuner_reuse",
}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="smaller sizes (smoke run)")
    parser.add_argument("--only", nargs="+", choices=sorted(SECTIONS), default=None)
    parser.add_argument("--out", type=Path, default=HERE.parent / "results" / "bench.md")
    args = parser.parse_args(argv)

    names = args.only or list(SECTIONS)
    parts = [
        "# gbrank benchmark",
        "",
        f"Machine: {platform.machine()}, Python {platform.python_version()}, "
        f"{time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}"
        + (" (quick run)" if args.quick else ""),
        "",
    ]
    for name in names:
        module_name = SECTIONS[name]
        try:
            module = importlib.import_module(module_name)
        except ModuleNotFoundError as exc:
            if exc.name != module_name:
                raise
            print(f"[bench] section {name}: not available yet", flush=True)
            continue
        print(f"[bench] section {name} ...", flush=True)
        t0 = time.perf_counter()
        table = module.run(quick=args.quick)
        print(table, flush=True)
        print(f"[bench] section {name} done in {time.perf_counter() - t0:.1f} s", flush=True)
        parts += [table, ""]
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text("\n".join(parts))
    print(f"[bench] wrote {args.out}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
