"""Training on a Dask cluster: DaskLGBMRanker with LambdaRank("ndcg") vs native lambdarank.

One 2-worker ``distributed.LocalCluster`` (processes, 1 thread each, loopback), one data
set split by :func:`gbrank.dask.partition_by_query` into 2 partitions and persisted,
then ``DaskLGBMRanker.fit`` timed alternately with the two objectives (one warm-up fit
each: numba's cache load in the workers and LightGBM's first network setup stay out of
the figures). Also reports held-out NDCG@10 of the two models on a second data set.
"""

from __future__ import annotations

import argparse
import os
import time
import warnings

import numpy as np
from _timing import table


def _fit_time(model_factory, X, y, group) -> tuple[float, object]:
    model = model_factory()
    t0 = time.perf_counter()
    model.fit(X, y, group=group)
    return time.perf_counter() - t0, model


def run(quick: bool = False, repeat: int | None = None) -> str:
    import lightgbm as lgb
    from distributed import Client, LocalCluster

    import gbrank.dask as gd
    from gbrank import metrics
    from gbrank.datasets import make_ranking
    from gbrank.objectives import LambdaRank

    n_queries, rows, rounds, rep = (250, 100, 20, 1) if quick else (2500, 100, 100, 3)
    repeat = rep if repeat is None else repeat
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
    runs = [(where, name) for where in ("dask", "single") for name in objectives]
    times: dict[tuple[str, str], list[float]] = {r: [] for r in runs}
    ndcg: dict[tuple[str, str], float] = {}
    with LocalCluster(n_workers=2, threads_per_worker=1, processes=True, host="127.0.0.1",
                      dashboard_address=None, silence_logs=40) as cluster, \
            Client(cluster) as client:
        parts = gd.partition_by_query(X, y, qid, npartitions=2)

        def fit(where: str, obj: object) -> tuple[float, object]:
            if where == "dask":
                return _fit_time(lambda: lgb.DaskLGBMRanker(objective=obj, client=client,
                                                            **params),
                                 parts.X, parts.y, parts.group)
            # the same data and parameters on one machine, one thread (the workers' count)
            return _fit_time(lambda: lgb.LGBMRanker(objective=obj, n_jobs=1, **params),
                             X, y, group)

        for where, name in runs:  # warm-up
            fit(where, objectives[name])
        for _ in range(repeat):
            for where, name in runs:
                t, model = fit(where, objectives[name])
                times[where, name].append(t)
                local = model.to_local() if where == "dask" else model
                ndcg[where, name] = metrics.ndcg(yte, local.predict(Xte, raw_score=True),
                                                 gte, k=10)
    med = {k: float(np.median(v)) for k, v in times.items()}
    load = " / ".join(f"{x:.1f}" for x in os.getloadavg())
    label = {"native": "native `lambdarank`", "gbrank": "`LambdaRank(\"ndcg\")`"}
    lines = [
        "## Dask: DaskLGBMRanker with a gbrank objective",
        "",
        f"`make_ranking({n_queries} + {held}, {rows}, 50)`: {n_queries * rows:,} training "
        f"rows, {rounds} rounds, 31 leaves, learning rate 0.1, min_child_samples 50; a "
        "2-worker `LocalCluster` (processes, 1 thread each, loopback), data split by "
        "`gbrank.dask.partition_by_query` into 2 partitions of whole queries and "
        "persisted; beside it `LGBMRanker` on one machine with 1 thread, same data and "
        f"parameters. Wall time of `fit`, median of {repeat} rounds of alternating fits "
        f"after one warm-up fit each; held-out NDCG@10 on the other {held} queries. Load "
        f"average at the end of the run: {load} (2 cores, shared with other jobs: "
        "absolute times are noisy, compare within a row of fits).",
        "",
        *table(["where", "objective", "fit time (s)", "all fits (s)", "held-out NDCG@10"],
               [[where, label[name], f"{med[where, name]:.2f}",
                 ", ".join(f"{x:.2f}" for x in times[where, name]), f"{ndcg[where, name]:.4f}"]
                for where, name in runs], "llrrr"),
    ]
    dask_ratio = med["dask", "gbrank"] / med["dask", "native"]
    single_ratio = med["single", "gbrank"] / med["single", "native"]
    lines += [
        "",
        f"gbrank ÷ native on the Dask cluster: **{dask_ratio:.2f}×** the training time "
        f"(one machine, 1 thread: {single_ratio:.2f}×).",
    ]
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true")
    parser.add_argument("--repeat", type=int, default=None, help="rounds of fits (default 3)")
    args = parser.parse_args(argv)
    print(run(quick=args.quick, repeat=args.repeat))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
