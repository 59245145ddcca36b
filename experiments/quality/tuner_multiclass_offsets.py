"""`gbrank tune`'s multiclass studies on the 5-class synthetic set of
``experiments/quality/multiclass.py`` (20,000 rows; classes of 90/6/2/1.5/0.5 %), default
budget, one seed per run: prints each study's rescored macro-F1, its test macro-F1 and the
class offsets its code decides at. Run with the checkout to measure on ``PYTHONPATH``
(``python experiments/quality/tuner_multiclass_offsets.py SEED``); the results of the
change that judges decisions at class offsets are in
``experiments/results/tuner_multiclass_offsets.md``."""

from __future__ import annotations

import sys
import tempfile
import time
from pathlib import Path

from sklearn.datasets import make_classification

from gbrank.tuning import TuneConfig, task_from_arrays, tune_task


def main(seed: int) -> None:
    X, y = make_classification(20000, 20, n_informative=10, n_classes=5,
                               n_clusters_per_class=1,
                               weights=[0.90, 0.06, 0.02, 0.015, 0.005], flip_y=0.01,
                               random_state=seed)
    task = task_from_arrays("mc", X, y, kind="multiclass", seed=seed)
    t0 = time.time()
    cfg = TuneConfig(out_dir=Path(tempfile.mkdtemp()), plots=False, progress=False,
                     n_jobs=1, seed=seed, save_models=False)
    for r in tune_task(task, cfg):
        print(seed, r.key, round(r.estimate, 4), round(r.test["macro_f1"], 4),
              r.cuts.get("macro_f1"))
    print("seconds", round(time.time() - t0))


if __name__ == "__main__":
    main(int(sys.argv[1]))
