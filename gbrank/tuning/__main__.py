"""``python -m gbrank.tuning``: the same as ``gbrank tune`` (:mod:`gbrank.tuning.cli`)."""

import sys

from gbrank.tuning.cli import main

if __name__ == "__main__":
    sys.exit(main())
