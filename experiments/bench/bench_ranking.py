"""Benchmark section "objectives": RankNet / LambdaRank against the boosters' native
ranking objectives and the seed article's numba RankNet, on one machine in one run."""

from __future__ import annotations

# numba's default threading layer, as a user has it: gbrank's kernels run serially
# below PARALLEL_MIN_ROWS rows, so no parallel region wakes OpenMP threads against
# LightGBM's on small data (what once made this file force "workqueue"); measured
# 2026-11-24, LambdaRank("ndcg") inside lgb.train on 250k rows took 9 ms per round under
# "omp" and 15 ms under "workqueue".
import sys
import time

import lightgbm as lgb
import numpy as np
import xgboost as xgb
from _timing import median_time, table
from numba import njit, prange

from gbrank._kernels.ranknet import ranknet_rows_grad_hess
from gbrank.datasets import make_ranking
from gbrank.metrics import err, ndcg, pair_accuracy
from gbrank.objectives import LambdaRank, RankNet
from gbrank.xgboost import objective


# ---- the seed article's RankNet (``ranknet_loss_v2``), compiled, looped over queries -------
@njit(cache=True)
def _seed_ranknet_loss_v2(y_true, y_pred):
    length = len(y_true)
    grad = np.zeros(length)
    hess = np.zeros(length)
    for i in range(length):
        for j in range(i + 1, length):
            if y_true[i] > y_true[j]:
                Sij = 1
            elif y_true[i] == y_true[j]:
                Sij = 0
            else:
                Sij = -1
            sigmoid_ij = 1 / (1 + np.exp(y_pred[j] - y_pred[i]))
            grad_i = -0.5 - 0.5 * Sij + sigmoid_ij
            hess_i = sigmoid_ij * (1 - sigmoid_ij)
            grad[i] += grad_i
            grad[j] -= grad_i
            hess[i] += hess_i
            hess[j] += hess_i
    return grad, hess


@njit(cache=True)
def _seed_all_queries(y, s, offsets):
    # The seed has no groups (one query); looping its kernel over queries inside numba
    # is the most favourable way to give it the same data.
    grad = np.zeros(y.size)
    hess = np.zeros(y.size)
    for q in range(offsets.size - 1):
        lo, hi = offsets[q], offsets[q + 1]
        g, h = _seed_ranknet_loss_v2(y[lo:hi], s[lo:hi])
        grad[lo:hi] = g
        hess[lo:hi] = h
    return grad, hess


@njit(cache=True, parallel=True)
def _exact_rows(y, s, rows, sigma):
    # Exact RankNet (ties skipped) for selected rows against every row: the reference
    # for the fast mode where all pairs (10^12 at 10^6 rows) are out of reach.
    g = np.zeros(rows.size)
    h = np.zeros(rows.size)
    for k in prange(rows.size):
        i = rows[k]
        for j in range(y.size):
            if y[j] == y[i]:
                continue
            up = y[i] > y[j]
            x = sigma * (s[i] - s[j]) if up else sigma * (s[j] - s[i])
            t = np.exp(-abs(x))
            rho = t / (1.0 + t) if x > 0.0 else 1.0 / (1.0 + t)
            g[k] += -sigma * rho if up else sigma * rho
            h[k] += sigma * sigma * rho * (1.0 - rho)
    return g, h


class SeedRankNet:
    """The seed's objective as a LightGBM callable (per-query loop added)."""

    def __call__(self, preds, train_set):
        y = train_set.get_label().astype(np.float64)
        offsets = np.concatenate(([0], np.cumsum(train_set.get_group()))).astype(np.int64)
        return _seed_all_queries(y, np.asarray(preds, dtype=np.float64), offsets)


def _log(row):  # a table row as it is measured
    print(f"[bench_ranking] {time.strftime('%H:%M:%S')} | {' | '.join(row)} |", file=sys.stderr,
          flush=True)


def _scores(y, s, g):
    return ndcg(y, s, g, k=10), err(y, s, g, k=10), pair_accuracy(y, s, g)


def run(quick: bool = False) -> str:
    n_q, rows, n_feat = (300, 100, 50) if quick else (3000, 100, 50)
    rounds = 20 if quick else 100
    X, y, g = make_ranking(n_q, rows, n_feat, seed=0)
    n_test_q = n_q // 6
    n_tr = (n_q - n_test_q) * rows
    X_tr, y_tr, g_tr = X[:n_tr], y[:n_tr], g[: n_q - n_test_q]
    X_te, y_te, g_te = X[n_tr:], y[n_tr:], g[n_q - n_test_q:]
    lines = []

    # -- 1. grad+hess per call on the training set -------------------------------------
    offsets = np.concatenate(([0], np.cumsum(g_tr))).astype(np.int64)
    s0 = np.random.default_rng(0).normal(size=y_tr.size)
    rep = 3 if quick else 7
    t_seed = median_time(lambda: _seed_all_queries(y_tr, s0, offsets), rep)
    calls = [
        ("seed `ranknet_loss_v2` (numba, ties pulled)", None, t_seed),
        ("gbrank RankNet(ties=\"pull\")", RankNet(ties="pull"), None),
        ("gbrank RankNet()", RankNet(), None),
        ("gbrank LambdaRank(\"ndcg\")", LambdaRank(), None),
        ("gbrank LambdaRank(\"ndcg\", norm=True)", LambdaRank(norm=True), None),
        ("gbrank LambdaRank(\"err\")", LambdaRank(metric="err"), None),
        ("gbrank LambdaRank(\"map\")", LambdaRank(metric="map"), None),
    ]
    call_rows = []
    for name, obj, t in calls:
        if t is None:
            t = median_time(lambda obj=obj: obj.grad_hess(y_tr, s0, g_tr), rep)
        call_rows.append([name, f"{t * 1e3:.1f}", f"{t / t_seed:.2f}"])
        _log(call_rows[-1])

    # -- 2. training through LightGBM -----------------------------------------------------
    lgb_params = dict(num_leaves=31, learning_rate=0.1, min_data_in_leaf=50, verbose=-1,
                      num_threads=2, force_row_wise=True, seed=0)
    dtr = lgb.Dataset(X_tr, y_tr, group=g_tr, free_raw_data=False).construct()
    lgb_runs = [
        ("LightGBM native `lambdarank`", "lambdarank"),
        ("gbrank LambdaRank(\"ndcg\", norm=True)", LambdaRank(norm=True)),
        ("gbrank LambdaRank(\"ndcg\")", LambdaRank()),
        ("gbrank LambdaRank(\"err\")", LambdaRank(metric="err")),
        ("gbrank RankNet()", RankNet()),
        ("seed RankNet (numba loop)", SeedRankNet()),
    ]
    train_rows = []

    def timed_runs(booster_name, runs, train, predict):
        """Train each run (the first one native), time it, score the held-out queries."""
        t_native = None
        for name, *how in runs:
            t0 = time.perf_counter()
            booster = train(*how)
            t = time.perf_counter() - t0
            t_native = t if t_native is None else t_native
            nd, er, pa = _scores(y_te, predict(booster), g_te)
            train_rows.append([booster_name, name, f"{t:.1f}", f"{t / t_native:.2f}",
                               f"{nd:.4f}", f"{er:.4f}", f"{pa:.4f}"])
            _log(train_rows[-1])

    lgb.train(dict(lgb_params, objective="lambdarank"), dtr, num_boost_round=1)  # warm-up
    timed_runs("LightGBM", lgb_runs,
               lambda obj: lgb.train(dict(lgb_params, objective=obj), dtr,
                                     num_boost_round=rounds),
               lambda booster: booster.predict(X_te))

    # -- 3. training through XGBoost --------------------------------------------------------
    xgb_params = {"tree_method": "hist", "grow_policy": "lossguide", "max_leaves": 31,
                  "max_depth": 0, "eta": 0.1, "min_child_weight": 0.0, "nthread": 2,
                  "base_score": 0.0}
    dx_tr = xgb.DMatrix(X_tr, y_tr, group=g_tr)
    dx_te = xgb.DMatrix(X_te)
    xgb_runs = [
        ("XGBoost native `rank:ndcg`", "rank:ndcg", None),
        ("XGBoost native `rank:pairwise`", "rank:pairwise", None),
        ("gbrank LambdaRank(\"ndcg\")", "rank:pairwise", LambdaRank()),
        ("gbrank RankNet()", "rank:pairwise", RankNet()),
    ]
    # XGBoost's first train call in a process pays a one-off start-up cost (measured:
    # seconds); keep it out of the first timed run.
    xgb.train(dict(xgb_params, objective="rank:ndcg"), dx_tr, num_boost_round=1)
    timed_runs("XGBoost", xgb_runs,
               lambda native, obj: xgb.train(dict(xgb_params, objective=native), dx_tr,
                                             num_boost_round=rounds,
                                             obj=None if obj is None else objective(obj)),
               lambda booster: booster.predict(dx_te))

    # -- 4. fast mode (one big query): accuracy vs exact, and time at scale ----------------
    n_acc = 5_000 if quick else 20_000
    rng = np.random.default_rng(1)
    # Compile (or load from cache) both fast kernels before timing them.
    for warm in (0.1, 1000.0):
        for pull in ("skip", "pull"):
            RankNet(ties=pull, method="fast").grad_hess(
                rng.integers(0, 2, 3000).astype(float), rng.normal(size=3000) * warm)
    y_big = rng.integers(0, 5, n_acc).astype(np.float64)
    fast_rows = []
    for pull in (False, True):
        for spread in (0.1, 1.0, 10.0, 100.0, 1000.0):
            s = rng.standard_normal(n_acc) * spread
            t0 = time.perf_counter()
            g0, h0 = ranknet_rows_grad_hess(y_big, s, 1.0, pull)
            t_exact = time.perf_counter() - t0
            obj = RankNet(ties="pull" if pull else "skip", method="fast")
            t0 = time.perf_counter()
            g1, h1 = obj.grad_hess(y_big, s)
            t_fast = time.perf_counter() - t0
            eg = np.abs(g1 - g0).max() / np.abs(g0).max()
            eh = np.abs(h1 - h0).max() / np.abs(h0).max()
            fast_rows.append(["pull" if pull else "skip", f"{spread:g}",
                              obj.last_fast_methods_[0], f"{eg:.1e}", f"{eh:.1e}",
                              f"{t_fast * 1e3:.0f}", f"{t_exact * 1e3:.0f}"])
            _log(fast_rows[-1])
    n_big = 100_000 if quick else 1_000_000
    y_m = rng.integers(0, 5, n_big).astype(np.float64)
    big_rows = []
    sample = rng.choice(n_big, 300, replace=False)
    for spread in (0.1, 1.0, 10.0, 100.0, 1000.0):
        s = rng.standard_normal(n_big) * spread
        obj = RankNet(method="fast")
        t = median_time(lambda s=s, obj=obj: obj.grad_hess(y_m, s), 3)
        g1, h1 = obj.grad_hess(y_m, s)
        g0, h0 = _exact_rows(y_m, s, sample, 1.0)
        eg = np.abs(g1[sample] - g0).max() / np.abs(g0).max()
        eh = np.abs(h1[sample] - h0).max() / np.abs(h0).max()
        big_rows.append([f"{n_big:,}", f"{spread:g}", f"RankNet, {obj.last_fast_methods_[0]}",
                         f"{t * 1e3:.0f}", f"{eg:.1e}", f"{eh:.1e}"])
        _log(big_rows[-1])
    s = rng.standard_normal(n_big)
    for name, obj in (("LambdaRank(\"ndcg\")", LambdaRank()),
                      ("LambdaRank(\"err\")", LambdaRank(metric="err"))):
        t = median_time(lambda obj=obj: obj.grad_hess(y_m, s), 3)
        big_rows.append([f"{n_big:,}", "1", f"{name}, exact O(n·k), k = 30", f"{t * 1e3:.0f}",
                         "—", "—"])
        _log(big_rows[-1])

    n_tr_rows = y_tr.size
    lines += [
        "## Ranking objectives (RankNet, LambdaRank)",
        "",
        f"Synthetic MSLR-shaped data (`make_ranking({n_q}, {rows}, {n_feat})`, grades 0–4): "
        f"{n_q - n_test_q} training queries ({n_tr_rows:,} rows), {n_test_q} held-out "
        f"queries. Boosters: {rounds} rounds, 31 leaves, learning rate 0.1, 2 threads. "
        "Held-out metrics are gbrank's (NDCG@10, ERR@10, pooled pair accuracy). All "
        "figures from this run; the machine is shared, so ratios are the thing to read.",
        "",
        "**grad + hess per call** (training set, random scores; median of "
        f"{rep}):",
        "",
        *table(["objective", "ms / call", "÷ seed loop"], call_rows),
        "",
        "**Training time and held-out quality**:",
        "",
        *table(["booster", "objective", "train s", "÷ native", "NDCG@10", "ERR@10",
                "pair acc."], train_rows, "llrrrrr"),
        "",
        f"**RankNet fast mode on one query of {n_acc:,} rows** (normal scores × spread; "
        "error = max |fast − exact| ÷ max |exact|; exact = all pairs, parallel over rows):",
        "",
        *table(["ties", "spread", "method", "grad err", "hess err", "fast ms", "exact ms"],
               fast_rows, "lrlrrrr"),
        "",
        "**One group-less query at scale** (RankNet fast mode, median of 3 calls; error "
        "against exact all-pairs sums for 300 sampled rows, max |fast − exact| ÷ max "
        "|exact| over them; LambdaRank needs no approximation):",
        "",
        *table(["rows", "spread", "objective / method", "ms / call", "grad err", "hess err"],
               big_rows, "rrlrrr"),
    ]
    return "\n".join(lines)


if __name__ == "__main__":
    print(run(quick="--quick" in sys.argv))
