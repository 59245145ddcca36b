"""The main job from a checkout: ``python experiments/tune.py [flags]`` is ``gbrank tune``
(``make tune`` runs it). Results go to ``./gbrank-results``."""

import sys

from gbrank.__main__ import main

if __name__ == "__main__":
    sys.exit(main(["tune", *sys.argv[1:]]))
