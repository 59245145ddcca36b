"""The main job from a checkout: ``python experiments/tune.py [flags]`` is ``gbrank tune``
(:mod:`gbrank.tuning.cli`; ``make tune`` runs it). Results go to ``./gbrank-results``."""

import sys

from gbrank.tuning.cli import main

if __name__ == "__main__":
    sys.exit(main())
