"""Where XGBoost's ``rank:ndcg`` lead over gbrank's ``LambdaRank`` on click logs comes
from (issue 33): XGBoost's leaf normalisation switched off, gbrank's ``norm=True``, the
step size (XGBoost at twice, gbrank at half the learning rate), on one
protocol of click_protocols.py (its data, loggers, clicks and booster settings). Units:
5 MQ2008 rotations × 2 click seeds; NDCG@10 on the test parts' true grades, paired with
gbrank ``LambdaRank()`` on XGBoost.

    python experiments/quality/xgboost_click_lead.py swap_s10   # or good_s5, ...
"""

from __future__ import annotations

import sys
import time
from pathlib import Path

import lightgbm as lgb
import numpy as np
import xgboost as xgb

import gbrank.xgboost
from gbrank.metrics import ndcg, paired_difference
from gbrank.objectives import LambdaRank

sys.path.insert(0, str(Path(__file__).resolve().parent))
import click_protocols as cp  # noqa: E402

NATIVE = {"xgb rank:ndcg (defaults)": {},
          "xgb rank:ndcg, lambdarank_normalization=False": {"lambdarank_normalization": False},
          "xgb rank:ndcg, eta 0.2": {"eta": 0.2}}
BASE = "gbrank LambdaRank() on xgb"
GBRANK = {BASE: ("xgb", {}),
          "gbrank LambdaRank(norm=True) on xgb": ("xgb", {"norm": True}),
          "gbrank LambdaRank(norm=True, max_step=None) on xgb":
              ("xgb", {"norm": True, "max_step": None}),
          "gbrank LambdaRank() on lgb": ("lgb", {}),
          "gbrank LambdaRank(norm=True) on lgb": ("lgb", {"norm": True}),
          "gbrank LambdaRank() on xgb, eta 0.05": ("xgb", {}, 0.05)}


def main(protocol: str) -> None:
    proto, scores, start = cp.PROTOCOLS[protocol], {k: [] for k in (*NATIVE, *GBRANK)}, time.time()
    for rotation in cp.ROTATIONS:
        X, y, g, Xt, yt, gt = cp.mq2008(rotation)
        logger = cp.logger_scores(proto["logger"], X, y, g, rotation)
        for seed in cp.CLICK_SEEDS:
            Xc, c, gc = cp.click_log(X, y, g, logger, proto, seed)[:3]
            train, test = xgb.DMatrix(Xc, c, group=gc), xgb.DMatrix(Xt)
            for name, extra in NATIVE.items():
                m = xgb.train({**cp.XGB, "objective": "rank:ndcg", **extra}, train, cp.ROUNDS)
                scores[name].append(ndcg(yt, m.predict(test, output_margin=True), gt, k=10))
            for name, (booster, kw, *eta) in GBRANK.items():
                if booster == "lgb":
                    m = lgb.train({**cp.LGB, "objective": LambdaRank(**kw)},
                                  lgb.Dataset(Xc, c, group=gc), cp.ROUNDS)
                    s = m.predict(Xt, raw_score=True)
                else:
                    f = gbrank.xgboost.objective(LambdaRank(**kw))
                    params = {**cp.XGB, "eta": eta[0]} if eta else cp.XGB
                    s = xgb.train(params, train, cp.ROUNDS, obj=f).predict(test, output_margin=True)
                scores[name].append(ndcg(yt, s, gt, k=10))
        print(f"rotation {rotation} done at {time.time() - start:.0f} s", flush=True)
    base = np.array(scores[BASE])
    print(f"| {protocol} | NDCG@10 | − {BASE} (wins) |\n|---|---:|---:|")
    for name, values in scores.items():
        d = paired_difference(np.array(values), base)
        cell = "—" if name == BASE else f"{d.mean:+.4f} ± {d.se:.4f} ({d.wins}/{d.n})"
        print(f"| {name} | {np.mean(values):.4f} | {cell} |")


if __name__ == "__main__":
    main(sys.argv[1] if len(sys.argv) > 1 else "swap_s10")
