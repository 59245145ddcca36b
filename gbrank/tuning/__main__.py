"""``python -m gbrank.tuning``: the same as ``gbrank tune``; :func:`main` is the command
line's entry point (``gbrank tune`` and ``python -m gbrank tune`` call it too)."""

import sys

from gbrank.tuning._cli import main

__all__ = ["main"]

if __name__ == "__main__":
    sys.exit(main())
