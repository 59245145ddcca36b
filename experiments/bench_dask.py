"""Training on a Dask cluster: DaskLGBMRanker with LambdaRank("ndcg") vs native lambdarank.

One 2-worker ``distributed.LocalCluster`` (processes, 1 thread each, loopback), one data
set split by :func:`gbrank.dask.partition_by_query` into 2 partitions and persisted,
then ``DaskLGBMRanker.fit`` timed alternately with the two objectives (one warm-up fit
each: numba's cache load in the workers and LightGBM's first network setup stay out of
the figures). Also reports held-out NDCG@10 of the two models on a second data set.

    python experiments/bench_dask.py [--quick]
"""

from __future__ import annotations

import argparse
import os
import time
import warnings

import numpy as np


def _fit_time(model_factory, parts) -> tuple[float, object]:
    model = model_factory()
    t0 = time.perf_counter()
    model.fit(parts.X, parts.y, group=parts.group)
    return time.perf_counter() - t0, model


def run(quick: bool = False) -> str:
    import lightgbm as lgb
    from distributed import Client, LocalCluster

    import gbrank.dask as gd
    from gbrank import metrics
    from gbrank.datasets import make_ranking
    from gbrank.objectives import LambdaRank

    n_queries, rows, rounds, repeat = (250, 100, 20, 1) if quick else (2500, 100, 100, 3)
    held = 500  # held-out queries from the same generator (same coefficients)
    Xa, ya, ga = make_ranking(n_queries=n_queries + held, rows_per_query=rows,
                              n_features=50, seed=0)
    cut = n_queries * rows
    X, y, group = Xa[:cut], ya[:cut], ga[:n_queries]
    Xte, yte, gte = Xa[cut:], ya[cut:], ga[n_queries:]
    qid = np.repeat(np.arange(group.size), group)
    params = dict(n_estimators=rounds, num_leaves=31, learning_rate=0.1,
                  min_child_samples=50, verbose=-1, random_state=0)
    warnings.filterwarnings("ignore", message="Parameter n_jobs will be ignored")
    objectives = {"native": "lambdarank", "gbrank": LambdaRank(metric="ndcg")}
    times: dict[str, list[float]] = {k: [] for k in objectives}
    ndcg: dict[str, float] = {}
    with LocalCluster(n_workers=2, threads_per_worker=1, processes=True, host="127.0.0.1",
                      dashboard_address=None, silence_logs=40) as cluster, \
            Client(cluster) as client:
        parts = gd.partition_by_query(X, y, qid, npartitions=2)
        for obj in objectives.values():  # warm-up
            _fit_time(lambda o=obj: lgb.DaskLGBMRanker(objective=o, client=client,
                                                       **params), parts)
        for _ in range(repeat):
            for name, obj in objectives.items():
                t, model = _fit_time(lambda o=obj: lgb.DaskLGBMRanker(
                    objective=o, client=client, **params), parts)
                times[name].append(t)
                ndcg[name] = metrics.ndcg(yte, model.to_local().predict(Xte, raw_score=True),
                                          gte, k=10)
    med = {k: float(np.median(v)) for k, v in times.items()}
    load = " / ".join(f"{x:.1f}" for x in os.getloadavg())
    lines = [
        "## Dask: DaskLGBMRanker with a gbrank objective",
        "",
        f"`make_ranking({n_queries} + {held}, {rows}, 50)`: {n_queries * rows:,} training "
        f"rows, "
        f"{rounds} rounds, 31 leaves, learning rate 0.1, min_child_samples 50; a "
        "2-worker `LocalCluster` (processes, 1 thread each, loopback), data split by "
        "`gbrank.dask.partition_by_query` into 2 partitions of whole queries and "
        f"persisted. Wall time of `DaskLGBMRanker.fit`, median of {repeat} alternating "
        "fits after one warm-up fit each; held-out NDCG@10 on the "
        f"other {held} queries. Load average during the run: {load} "
        "(2 cores, shared).",
        "",
        "| objective | fit time (s) | all fits (s) | held-out NDCG@10 |",
        "|---|---:|---:|---:|",
        f"| native `lambdarank` | {med['native']:.2f} | "
        f"{', '.join(f'{t:.2f}' for t in times['native'])} | {ndcg['native']:.4f} |",
        f"| `LambdaRank(\"ndcg\")` | {med['gbrank']:.2f} | "
        f"{', '.join(f'{t:.2f}' for t in times['gbrank'])} | {ndcg['gbrank']:.4f} |",
        "",
        f"gbrank ÷ native: **{med['gbrank'] / med['native']:.2f}×** the training time.",
    ]
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true")
    args = parser.parse_args(argv)
    print(run(quick=args.quick))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
