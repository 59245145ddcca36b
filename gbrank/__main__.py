"""``python -m gbrank <command>`` (also the ``gbrank`` console script).

Commands:
  tune     tune every objective against the boosters' own (gbrank.tuning)
  warmup   compile every numba kernel now (Docker images, CI caches, Dask workers)
"""

from __future__ import annotations

import argparse
import sys

from gbrank._help import plain_text


def main(argv: list[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    if argv[:1] == ["tune"]:  # the tuner parses its own flags
        from gbrank.tuning.__main__ import main as tune

        return tune(argv[1:])
    parser = argparse.ArgumentParser(prog="gbrank",
                                     description=plain_text(__doc__.splitlines()[0]))
    sub = parser.add_subparsers(dest="command", required=True)
    sub.add_parser("tune", help="tune every objective against the boosters' own "
                   "(gbrank tune --help)")
    warm = sub.add_parser("warmup", help="compile every numba kernel ahead of time")
    warm.add_argument("--no-threads", action="store_true",
                      help="skip the threaded forms (used from 200,000 rows on)")
    warm.add_argument("--quiet", action="store_true", help="print only the total")
    args = parser.parse_args(argv)
    if args.command == "warmup":
        from gbrank._compilation import warmup

        report = warmup(threads=not args.no_threads, verbose=not args.quiet)
        if args.quiet:
            print(f"gbrank warmup: {report['compiled']} functions compiled in "
                  f"{report['seconds']:.1f} s; cache: {report['cache']}")
        return 0
    return 2  # pragma: no cover (argparse refuses unknown commands)


if __name__ == "__main__":
    sys.exit(main())
