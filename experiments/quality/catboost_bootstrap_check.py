"""Does the Bayesian bootstrap the tuner's CatBoost space forces (to search
``bagging_temperature``) cost CatBoost ``LambdaMart`` on rank.train? The protocol of
learner_attribution.py (its ``rank`` set: five 80/20 splits of rank.train, early
stopping on the 20 % by NDCG@10, lr 0.05, <= 1,000 rounds, test on rank.test), seeds
0-2, CatBoost's defaults against ``bootstrap_type="Bayesian", bagging_temperature=1``.
Numbers in experiments/results/tuner_vs_catboost.md.

    python experiments/quality/catboost_bootstrap_check.py
"""

from __future__ import annotations

import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).parent))

import learner_attribution as la  # noqa: E402

from gbrank.metrics import paired_difference  # noqa: E402

CONFIGS = {"default": {},
           "bayes1": {"bootstrap_type": "Bayesian", "bagging_temperature": 1.0}}


def main() -> None:
    out = {}
    for name, params in CONFIGS.items():
        t0 = time.time()
        cfg = {"booster": "cb", "objective": "LambdaMart", "params": params}
        out[name] = [float(np.mean([la.train_once(cfg, s, la.load("rank", unit))["ndcg"]
                                    for s in (0, 1, 2)])) for unit in la.UNITS]
        print(name, np.round(out[name], 4), round(float(np.mean(out[name])), 4),
              f"{time.time() - t0:.0f} s", flush=True)
    d = paired_difference(out["bayes1"], out["default"])
    print(f"bayes1 - default: {d.mean:+.4f} ± {d.se:.4f} ({d.wins} of {d.n} splits won)")


if __name__ == "__main__":
    main()
