"""Where the experiments find the project's reference data and write their results."""

from __future__ import annotations

import os
from pathlib import Path

EXPERIMENTS = Path(__file__).resolve().parent
RESULTS = EXPERIMENTS / "results"


def shared_data_dir() -> Path:
    """The reference data (LightGBM's examples, LETOR's MQ2008): ``$GBRANK_DATA`` when
    set, else ``../shared/data`` beside the checkout (absent outside this project)."""
    env = os.environ.get("GBRANK_DATA")
    return Path(env) if env else EXPERIMENTS.parents[1] / "shared" / "data"
