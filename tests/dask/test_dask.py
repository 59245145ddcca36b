"""gbrank.dask on a real 2-process LocalCluster: query partitioning, its errors, pseudo-
queries, distributed metrics equal to the single-machine ones, and gbrank objectives
trained through LightGBM's and XGBoost's Dask APIs against single-machine models."""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest

pytest.importorskip("dask")
pytest.importorskip("distributed")
pytest.importorskip("pandas")

import dask  # noqa: E402
import dask.array as da  # noqa: E402
import dask.dataframe as dd  # noqa: E402
import pandas as pd  # noqa: E402

from gbrank import dask as gd  # noqa: E402
from gbrank import metrics  # noqa: E402
from gbrank.objectives import FocalLoss, LambdaRank  # noqa: E402

# Seconds any single cluster round trip may take before the test fails instead of hanging.
TIMEOUT = 120


def _compile_here():
    """Load or compile, in this process and before the cluster starts, the kernels the
    workers call. On an empty numba cache (CI) the two workers otherwise compiled the
    same functions at once, on two cores shared with this process, which then compiled
    them a third time for the single-machine models. Now they load them from the cache
    (the two training tests on an empty cache, this fixture included: 92 s before, 56 s
    with this and the long-query kernels compiled only when used)."""
    rng = np.random.default_rng(0)
    y = rng.integers(0, 4, 400).astype(np.float64)
    s = rng.standard_normal(400)
    g = np.array([150, 250])
    LambdaRank(metric="ndcg").grad_hess(y, s, g)
    FocalLoss(gamma=2.0).grad_hess((y > 1).astype(np.float64), s)
    metrics.ndcg(y, s, g, k=10)
    metrics.pair_accuracy(y, s, g)
    metrics.pair_accuracy(y, s)
    metrics.fbeta((y > 1).astype(np.float64), s, margin=True)


@pytest.fixture(scope="module")
def client():
    from distributed import Client, LocalCluster

    _compile_here()
    # No work stealing: tests that place partitions on given workers (the group-less
    # refusal needs one on each) must not see a loaded worker's task moved to the other.
    with dask.config.set({"distributed.comm.timeouts.connect": "30s",
                          "distributed.comm.timeouts.tcp": "60s",
                          "distributed.scheduler.work-stealing": False}):
        cluster = LocalCluster(n_workers=2, threads_per_worker=1, processes=True,
                               host="127.0.0.1", dashboard_address=None,
                               silence_logs=40)  # logging.ERROR: no shuffle chatter
        c = Client(cluster, timeout=TIMEOUT)
        try:
            yield c
        finally:
            # The same bound as every round trip: on a starved machine stopping the two
            # worker processes once took longer than 30 s and failed the teardown.
            c.close(timeout=TIMEOUT)
            cluster.close(timeout=TIMEOUT)


def _data(n=2000, n_queries=150, seed=0):
    rng = np.random.default_rng(seed)
    qid = rng.integers(0, n_queries, n) * 7 + 3  # sparse, unsorted ids
    y = rng.integers(0, 4, n).astype(np.float64)
    s = np.round(rng.standard_normal(n), 1)  # many score ties
    X = rng.standard_normal((n, 4))
    return X, y, qid, s


def _chunked(a, chunks):
    return da.from_array(a, chunks=(tuple(chunks),) + a.shape[1:])


def _stable(qid):
    return np.argsort(qid, kind="stable")


# -- partitioning ------------------------------------------------------------------------

def _assert_whole_queries(parts, X, y, qid):
    """Rows are X[stable sort by qid] (queries ascending, input order within), every
    query in one partition, group sizes = the queries' row counts."""
    order = _stable(qid)
    Xp = parts.X.compute()
    yp, qp = dask.compute(parts.y, parts.qid)
    Xp = Xp.to_numpy() if hasattr(Xp, "to_numpy") else Xp
    np.testing.assert_array_equal(Xp, X[order])
    np.testing.assert_array_equal(np.asarray(yp), y[order])
    ids, sizes = np.unique(qid, return_counts=True)
    np.testing.assert_array_equal(parts.query_ids, ids)
    np.testing.assert_array_equal(np.asarray(qp), np.repeat(np.arange(ids.size), sizes))
    group = parts.group.compute()
    np.testing.assert_array_equal(group, sizes)
    assert parts.group.chunks[0] == parts.partition_queries
    assert sum(parts.partition_rows) == len(y)
    gd.check_query_partitions(parts.qid)  # raises if a query straddles


def test_partition_by_query_pandas_without_cluster():
    # Runs before the module's cluster starts: no client, so the local scheduler with
    # the data embedded in the graph (with a client it is scattered); same result.
    X, y, qid, _ = _data(n=300, n_queries=20)
    frame = pd.DataFrame(X, columns=["a", "b", "c", "d"])
    parts = gd.partition_by_query(frame, y, qid, npartitions=2, persist=False)
    _assert_whole_queries(parts, X, y, qid)
    # Columns by name, as with a Dask DataFrame: taken out of the features. A column
    # named qid beside ids given otherwise stayed a feature (seventh probe): refused.
    full = frame.assign(qid=qid, label=y)
    named = gd.partition_by_query(full, "label", "qid", npartitions=2, persist=False)
    assert list(named.X.columns) == ["a", "b", "c", "d"]
    _assert_whole_queries(named, X, y, qid)
    with pytest.raises(ValueError, match="X has a column 'qid', which would stay a feature"):
        gd.partition_by_query(full.drop(columns="label"), y, qid, persist=False)
    with pytest.raises(ValueError, match="need X to be a DataFrame"):
        gd.partition_by_query(X, y, "qid", persist=False)

def test_partition_by_query_in_memory(client):
    X, y, qid, _ = _data()
    parts = gd.partition_by_query(X, y, qid, npartitions=3)
    assert parts.npartitions == 3
    assert max(parts.partition_rows) - min(parts.partition_rows) < 0.1 * len(y)
    _assert_whole_queries(parts, X, y, qid)


def test_partition_by_query_carries_weights(client):
    X, y, qid, _ = _data(n=500, n_queries=40, seed=9)
    w = np.arange(500, dtype=np.float64)
    for data in ((X, y, qid, w), tuple(_chunked(a, (200, 300)) for a in (X, y, qid, w))):
        parts = gd.partition_by_query(*data[:3], weight=data[3], npartitions=2)
        np.testing.assert_array_equal(parts.weight.compute(), w[_stable(qid)])


def test_partition_by_query_carries_positions(client):
    X, y, qid, _ = _data(n=500, n_queries=40, seed=9)
    pos = np.arange(500, dtype=np.float64) % 10 + 1
    for data in ((X, y, qid, pos), tuple(_chunked(a, (200, 300)) for a in (X, y, qid, pos))):
        parts = gd.partition_by_query(*data[:3], position=data[3], npartitions=2)
        np.testing.assert_array_equal(parts.position.compute(), pos[_stable(qid)])
        np.testing.assert_array_equal(np.asarray(parts.y.compute()), y[_stable(qid)])
    frame = dd.from_pandas(pd.DataFrame({"a": X[:, 0], "q": qid, "y": y, "p": pos}),
                           npartitions=3)
    parts = gd.partition_by_query(frame, "y", "q", position="p", npartitions=2)
    assert list(parts.X.columns) == ["a"]
    np.testing.assert_array_equal(parts.position.compute().to_numpy(), pos[_stable(qid)])


def test_partition_by_query_dask_arrays(client):
    X, y, qid, _ = _data(seed=1)
    ch = (500, 700, 300, 500)
    parts = gd.partition_by_query(_chunked(X, ch), _chunked(y, ch), _chunked(qid, ch))
    assert parts.npartitions == 4
    assert isinstance(parts.X, da.Array)
    _assert_whole_queries(parts, X, y, qid)


def test_partition_by_query_dask_dataframe_columns(client):
    X, y, qid, _ = _data(seed=2)
    frame = pd.DataFrame(X, columns=["a", "b", "c", "d"]).assign(q=qid, label=y)
    parts = gd.partition_by_query(dd.from_pandas(frame, npartitions=3), "label", "q",
                                  npartitions=2)
    assert list(parts.X.columns) == ["a", "b", "c", "d"]
    _assert_whole_queries(parts, X, y, qid)


def test_straddling_query_is_named(client):
    qid = np.repeat([5, 9, 2, 8], [3, 4, 2, 3])
    # chunks of 8 + 4 rows: query 2 (rows 7 and 8) is cut between the two
    with pytest.raises(ValueError, match=r"query 2 straddles partitions 0 and 1"):
        gd.check_query_partitions(_chunked(qid, (8, 4)))
    with pytest.raises(ValueError, match=r"query 2 straddles partitions 0 and 1"):
        gd.lightgbm_group(_chunked(qid, (8, 4)))
    ok = gd.lightgbm_group(_chunked(qid, (7, 5)))
    assert ok.chunks == ((2, 2),)
    np.testing.assert_array_equal(ok.compute(), [3, 4, 2, 3])


def test_noncontiguous_query_is_named(client):
    qid = np.array([1, 1, 4, 4, 1, 6, 6])
    with pytest.raises(ValueError, match=r"query 1 is not contiguous in partition 0.*row 4"):
        gd.check_query_partitions(_chunked(qid, (7,)))
    series = dd.from_pandas(pd.Series(qid), npartitions=1)
    with pytest.raises(ValueError, match=r"query 1 is not contiguous"):
        gd.check_query_partitions(series)


def test_groupless_is_refused_with_the_alternative(client):
    X, y, _, _ = _data()
    with pytest.raises(ValueError, match=r"one query cannot be split across Dask workers"
                                         r".*partition_pseudo_queries"):
        gd.partition_by_query(X, y, None)
    with pytest.raises(ValueError, match="partition_pseudo_queries"):
        gd.partition_by_query(_chunked(X, (1000, 1000)), _chunked(y, (1000, 1000)), None)


def test_missing_query_ids_are_refused(client):
    """NaN ids became one made-up query in memory (NaN sorts last) and vanished from the
    query sizes of Dask input (value_counts drops them; LightGBM then failed on a
    count mismatch that did not name them)."""
    X, y, qid, _ = _data()
    q = qid.astype(np.float64)
    q[[5, 700, 1900]] = np.nan
    fix = "qid is missing \\(NaN/None\\) on 3 rows: every row needs the id of its query"
    with pytest.raises(ValueError, match=fix):
        gd.partition_by_query(X, y, q, npartitions=2, persist=False)
    with pytest.raises(ValueError, match=fix):
        gd.partition_by_query(_chunked(X, (1000, 1000)), _chunked(y, (1000, 1000)),
                              _chunked(q, (1000, 1000)), persist=False)
    frame = dd.from_pandas(pd.DataFrame(X).assign(y=y, q=q), npartitions=2)
    frame.columns = [str(c) for c in frame.columns]
    with pytest.raises(ValueError, match=fix):
        gd.partition_by_query(frame, "y", "q", persist=False)


# -- pseudo-queries ----------------------------------------------------------------------

def test_pseudo_queries_sizes_and_pair_count():
    n, m = 103, 10
    for order in ("random", "sequential"):
        ids = gd.pseudo_queries(n, m, seed=3, order=order)
        counts = np.bincount(ids)
        assert counts.tolist() == [m] * 10 + [3]
        # pairs compared: sum m_q (m_q - 1) / 2 = n (m - 1) / 2 up to the short last one
        assert int(np.sum(counts * (counts - 1) // 2)) == 10 * 45 + 3
    np.testing.assert_array_equal(gd.pseudo_queries(n, m, order="sequential"),
                                  np.arange(n) // m)
    a, b = gd.pseudo_queries(n, m, seed=1), gd.pseudo_queries(n, m, seed=2)
    assert not np.array_equal(a, b)
    with pytest.raises(ValueError, match="size"):
        gd.pseudo_queries(n, 1)


def test_pseudo_pair_probability_matches_docstring():
    # P(i, j in one pseudo-query) = (m - 1) / (n - 1): checked exactly by counting, over
    # all draws of a fixed seed list, how often rows 0 and 1 share a pseudo-query.
    n, m, draws = 12, 4, 3000
    same = sum(int(ids[0] == ids[1]) for ids in
               (gd.pseudo_queries(n, m, seed=s) for s in range(draws)))
    p = (m - 1) / (n - 1)
    assert abs(same / draws - p) < 4 * np.sqrt(p * (1 - p) / draws)


def test_partition_pseudo_queries(client):
    X, y, _, _ = _data(n=1000)
    ch = (400, 600)
    parts = gd.partition_pseudo_queries(_chunked(X, ch), _chunked(y, ch), 64, seed=0)
    assert parts.partition_rows == ch
    assert parts.partition_queries == (7, 10)
    gd.check_query_partitions(parts.qid)
    Xp, yp = dask.compute(parts.X, parts.y)
    # Rows stay in their partition (no data moves between workers), only reordered.
    for a, b in ((0, 400), (400, 1000)):
        np.testing.assert_array_equal(np.sort(Xp[a:b, 0]), np.sort(X[a:b, 0]))
        np.testing.assert_array_equal(np.sort(yp[a:b]), np.sort(y[a:b]))
    np.testing.assert_array_equal(parts.group.compute()[:7], [64] * 6 + [16])


# -- distributed metrics ------------------------------------------------------------------

CHUNKS = (300, 0, 900, 500, 300)  # uneven, one empty partition


def _query_chunks(qid):
    """Row chunks of data sorted by qid that never split a query."""
    _, sizes = np.unique(qid, return_counts=True)
    ends = np.cumsum(sizes)
    cut = [int(ends[np.searchsorted(ends, t)]) for t in (500, 1200)]
    return (cut[0], cut[1] - cut[0], int(ends[-1]) - cut[1])


def test_pair_accuracy_groupless_exact(client):
    _, y, _, s = _data(seed=4)
    got = gd.pair_accuracy(_chunked(y, CHUNKS), _chunked(s, CHUNKS))
    assert got == metrics.pair_accuracy(y, s)
    # all scores tied: every pair counts 1/2
    z = np.zeros_like(s)
    assert gd.pair_accuracy(_chunked(y, CHUNKS), _chunked(z, CHUNKS)) == 0.5
    # one label only: nothing to order
    one = np.ones_like(y)
    assert gd.pair_accuracy(_chunked(one, CHUNKS), _chunked(s, CHUNKS)) == 1.0


def test_pair_accuracy_grouped_exact(client):
    _, y, qid, s = _data(seed=5)
    o = _stable(qid)
    ch = _query_chunks(qid)
    got = gd.pair_accuracy(_chunked(y[o], ch), _chunked(s[o], ch), _chunked(qid[o], ch))
    assert got == metrics.pair_accuracy(y, s, qid=qid)
    _, sizes = np.unique(qid, return_counts=True)
    w = np.repeat(np.linspace(0.5, 2.0, sizes.size), sizes)
    got_w = gd.pair_accuracy(_chunked(y[o], ch), _chunked(s[o], ch), _chunked(qid[o], ch),
                             weight=_chunked(w, ch))
    assert got_w == pytest.approx(metrics.pair_accuracy(y[o], s[o], qid=qid[o], weight=w),
                                  rel=1e-12)


def test_ndcg_exact(client):
    _, y, qid, s = _data(seed=6)
    o = _stable(qid)
    ch = _query_chunks(qid)
    args = (_chunked(y[o], ch), _chunked(s[o], ch), _chunked(qid[o], ch))
    for k in (1, 10, None):
        assert gd.ndcg(*args, k=k) == pytest.approx(metrics.ndcg(y, s, qid=qid, k=k),
                                                     rel=1e-12, abs=0)
    assert gd.ndcg(*args, gain="linear") == pytest.approx(
        metrics.ndcg(y, s, qid=qid, gain="linear"), rel=1e-12)
    # group-less: top-k merge, identical (ties by row order across partitions)
    for k in (1, 10, 50):
        assert gd.ndcg(_chunked(y, CHUNKS), _chunked(s, CHUNKS), k=k) == \
            metrics.ndcg(y, s, k=k)
    bad = s.copy()
    bad[1500] = np.nan  # not a top-10 candidate, still refused as on one machine
    with pytest.raises(ValueError, match="scores contain 1 NaN"):
        gd.ndcg(_chunked(y, CHUNKS), _chunked(bad, CHUNKS), k=10)
    with pytest.raises(ValueError, match="finite k"):
        gd.ndcg(_chunked(y, CHUNKS), _chunked(s, CHUNKS), k=None)


def test_metrics_refuse_straddling_queries(client):
    _, y, qid, s = _data(seed=7)
    with pytest.raises(ValueError, match=r"query \d+ straddles partitions 0 and 1"):
        gd.ndcg(_chunked(y, (1000, 1000)), _chunked(s, (1000, 1000)),
                _chunked(qid, (1000, 1000)))


def test_fbeta_exact(client):
    rng = np.random.default_rng(8)
    y = (rng.random(3000) < 0.1).astype(np.float64)
    s = np.round(rng.standard_normal(3000) + y, 1)
    ch = (1000, 0, 1500, 500)
    for beta, t in ((1.0, 0.0), (2.0, 0.5), (0.5, -0.3), (1.0, None)):
        assert gd.fbeta(_chunked(y, ch), _chunked(s, ch), beta, t, margin=True) == \
            metrics.fbeta(y, s, beta, t, margin=True)
    assert gd.f1(_chunked(2 * y - 1, ch), _chunked(s, ch), margin=True) == metrics.f1(
        y, s, margin=True)
    w = rng.random(3000) + 0.1
    assert gd.fbeta(_chunked(y, ch), _chunked(s, ch), 2.0, weight=_chunked(w, ch),
                    margin=True) == pytest.approx(metrics.fbeta(y, s, 2.0, weight=w,
                                                                margin=True), rel=1e-12)
    series = [dd.from_pandas(pd.Series(a), npartitions=3) for a in (y, s)]
    assert gd.fbeta(*series, margin=True) == metrics.fbeta(y, s, margin=True)
    # Probabilities by default, as the single-machine function reads them; margins are
    # refused there as on one machine.
    p = 1.0 / (1.0 + np.exp(-s))
    assert gd.f1(_chunked(y, ch), _chunked(p, ch)) == metrics.f1(y, p)
    with pytest.raises(ValueError, match="margin=True"):
        gd.f1(_chunked(y, ch), _chunked(s, ch))


# -- boosters on the cluster --------------------------------------------------------------

LGB_PARAMS = dict(n_estimators=50, num_leaves=31, learning_rate=0.1, min_child_samples=50,
                  verbose=-1, random_state=0, time_out=2)  # time_out: LightGBM's socket minutes


@pytest.mark.slow
@pytest.mark.filterwarnings("ignore:Parameter n_jobs will be ignored")
def test_lightgbm_dask_ranker_matches_single_machine(client, rank_data):
    lgb = pytest.importorskip("lightgbm")
    X, y, g = rank_data["X_train"].toarray(), rank_data["y_train"], rank_data["g_train"]
    Xte, yte, gte = rank_data["X_test"].toarray(), rank_data["y_test"], rank_data["g_test"]
    parts = gd.partition_by_query(X, y, np.repeat(np.arange(g.size), g), npartitions=2)
    model = lgb.DaskLGBMRanker(objective=LambdaRank(metric="ndcg"), client=client,
                               **LGB_PARAMS)
    model.fit(parts.X, parts.y, group=parts.group)
    dist = metrics.ndcg(yte, model.to_local().predict(Xte, raw_score=True), gte, k=10)
    single = lgb.LGBMRanker(objective=LambdaRank(metric="ndcg"), n_jobs=1, **LGB_PARAMS)
    one = metrics.ndcg(yte, single.fit(X, y, group=g).predict(Xte, raw_score=True), gte,
                       k=10)
    assert abs(dist - one) <= 0.01, (dist, one)
    assert dist > 0.7  # and it learned something (a constant model scores ~0.5 here)


@pytest.mark.filterwarnings("ignore:Parameter n_jobs will be ignored")
def test_lightgbm_dask_classifier_focal_loss(client, binary_data):
    lgb = pytest.importorskip("lightgbm")
    X, y = binary_data["X_train"], binary_data["y_train"]
    obj = FocalLoss(gamma=2.0)
    init = obj.init_score(y)
    Xd, yd = _chunked(X, (3500, X.shape[0] - 3500)), _chunked(y, (3500, y.size - 3500))
    initd = _chunked(np.full(y.size, init), (3500, y.size - 3500))
    params = dict(LGB_PARAMS, n_estimators=30)
    model = lgb.DaskLGBMClassifier(objective=obj, client=client, **params)
    model.fit(Xd, yd, init_score=initd)
    Xte, yte = binary_data["X_test"], binary_data["y_test"]
    dist = model.to_local().predict(Xte, raw_score=True) + init
    single = lgb.LGBMClassifier(objective=obj, n_jobs=1, **params).fit(
        X, y, init_score=np.full(y.size, init)).predict(Xte, raw_score=True) + init
    # the same loss, so held-out focal loss within 1% and F1 at the margin within 0.02
    lo_d, lo_s = obj.loss(yte, dist) / yte.size, obj.loss(yte, single) / yte.size
    assert abs(lo_d - lo_s) <= 0.01 * lo_s, (lo_d, lo_s)
    assert abs(metrics.f1(yte, dist, margin=True) - metrics.f1(yte, single, margin=True)) <= 0.02


def test_xgboost_dask_train_matches_single_machine(client, rank_data):
    xgb = pytest.importorskip("xgboost")
    import xgboost.dask as xgb_dask

    import gbrank.xgboost

    X, y, g = rank_data["X_train"].toarray(), rank_data["y_train"], rank_data["g_train"]
    Xte, yte, gte = rank_data["X_test"].toarray(), rank_data["y_test"], rank_data["g_test"]
    parts = gd.partition_by_query(X, y, np.repeat(np.arange(g.size), g), npartitions=2)
    params = {"tree_method": "hist", "eta": 0.1, "max_depth": 6,
              "disable_default_eval_metric": 1, "nthread": 1}
    dtrain = xgb_dask.DaskDMatrix(client, parts.X, parts.y, qid=parts.qid)
    out = xgb_dask.train(client, params, dtrain, num_boost_round=50,
                         obj=gbrank.xgboost.objective(LambdaRank(metric="ndcg")))
    dist = metrics.ndcg(yte, out["booster"].predict(xgb.DMatrix(Xte)), gte, k=10)
    single = xgb.train(params, xgb.DMatrix(X, y, group=g), 50,
                       obj=gbrank.xgboost.objective(LambdaRank(metric="ndcg")))
    one = metrics.ndcg(yte, single.predict(xgb.DMatrix(Xte)), gte, k=10)
    assert abs(dist - one) <= 0.01, (dist, one)
    assert dist > 0.7


def test_xgboost_dask_trains_a_calibrated_ranker(client, rank_data):
    # The calibration term is per row and the ranking term per query (queries whole on
    # one worker), so distributed training follows the single-machine one; the constant
    # start comes from all labels, as the estimators compute it.
    xgb = pytest.importorskip("xgboost")
    import xgboost.dask as xgb_dask

    import gbrank.xgboost

    X, y, g = rank_data["X_train"].toarray(), rank_data["y_train"], rank_data["g_train"]
    Xte, yte, gte = rank_data["X_test"].toarray(), rank_data["y_test"], rank_data["g_test"]
    rel, rel_te = (y >= 1).astype(float), (yte >= 1).astype(float)
    obj = LambdaRank(calibration=0.5)
    init = obj.init_score(rel)
    parts = gd.partition_by_query(X, rel, np.repeat(np.arange(g.size), g), npartitions=2)
    params = {"tree_method": "hist", "eta": 0.1, "max_depth": 6,
              "disable_default_eval_metric": 1, "nthread": 1}
    margin = da.full(parts.y.shape, init, chunks=parts.y.chunks)
    dtrain = xgb_dask.DaskDMatrix(client, parts.X, parts.y, qid=parts.qid,
                                  base_margin=margin)
    out = xgb_dask.train(client, params, dtrain, num_boost_round=30,
                         obj=gbrank.xgboost.objective(obj))
    test = xgb.DMatrix(Xte, base_margin=np.full(yte.size, init))
    dist = out["booster"].predict(test, output_margin=True)
    single = xgb.train(params, xgb.DMatrix(X, rel, group=g, base_margin=np.full(y.size, init)),
                       30, obj=gbrank.xgboost.objective(obj)).predict(test, output_margin=True)
    lo_d, lo_s = (metrics.log_loss(rel_te, s, margin=True) for s in (dist, single))
    assert abs(lo_d - lo_s) <= 0.01 * lo_s, (lo_d, lo_s)
    nd_d, nd_s = (metrics.ndcg(rel_te, s, gte, k=10) for s in (dist, single))
    assert abs(nd_d - nd_s) <= 0.01, (nd_d, nd_s)
    # calibrated: the mean predicted probability is near the test rate (a pure ranking
    # loss leaves the level arbitrary)
    assert abs(np.mean(1 / (1 + np.exp(-dist))) - rel_te.mean()) < 0.05


@pytest.mark.slow
@pytest.mark.filterwarnings("ignore:Parameter n_jobs will be ignored")
def test_readme_dask_example_runs(client):
    # The user guide's "Training on a Dask cluster" example (docs/guide/scaling.md), on
    # this module's cluster.
    import importlib.util
    from pathlib import Path

    pytest.importorskip("lightgbm")
    pytest.importorskip("xgboost")
    path = Path(__file__).resolve().parents[2] / "experiments" / "examples" / "dask_example.py"
    spec = importlib.util.spec_from_file_location("dask_example", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    out = module.main(client)
    assert out["lightgbm ndcg@10"] > 0.6 and out["xgboost ndcg@10"] > 0.6
    assert out["group-less pair_accuracy"] > 0.8


def test_xgboost_dask_refuses_groupless_objective(client):
    pytest.importorskip("xgboost")
    import xgboost.dask as xgb_dask

    import gbrank.xgboost
    from gbrank.objectives import RankNet

    X, y, _, _ = _data(n=1000)
    # One partition on each worker: with all data on one worker XGBoost trains on that
    # worker alone, where the group-less objective is the single-machine one (allowed).
    # The partitions are cut without the cluster and each block is scattered to its
    # worker: where the scheduler runs tasks is its choice (it put both blocks on one
    # worker under load), where scattered data lives is not.
    workers = sorted(client.scheduler_info()["workers"])
    assert len(workers) == 2
    local = gd.partition_pseudo_queries(da.from_array(X, chunks=(500, X.shape[1])),
                                        da.from_array(y, chunks=500), 50)
    blocks = local.X.chunks[0]
    assert len(blocks) == 2
    Xl, yl, ql = dask.compute(local.X, local.y, local.qid, scheduler="sync")
    keep = []  # the scattered futures must outlive the graph built on them

    def placed(a):
        futures, start = [], 0
        for size, w in zip(blocks, workers, strict=True):
            futures.append(client.scatter(a[start:start + size], workers=[w]))
            start += size
        keep.extend(futures)
        return da.concatenate([da.from_delayed(f, shape=(n,) + a.shape[1:], dtype=a.dtype)
                               for f, n in zip(futures, blocks, strict=True)])

    parts = local
    Xp, yp, qp = placed(Xl), placed(yl), placed(ql)
    from distributed import wait

    wait(keep, timeout=TIMEOUT)
    holders = {w for ws in client.who_has(keep).values() for w in ws}
    assert len(holders) == 2, holders
    parts = dataclasses.replace(parts, X=Xp, y=yp, qid=qp)
    dtrain = xgb_dask.DaskDMatrix(client, parts.X, parts.y)  # no qid
    with pytest.raises(ValueError, match=r"RankNet got no query ids on one of 2 XGBoost "
                                         r"workers.*partition_pseudo_queries"):
        xgb_dask.train(client, {"tree_method": "hist", "nthread": 1}, dtrain,
                       num_boost_round=2, obj=gbrank.xgboost.objective(RankNet()))
    # with the pseudo-queries' qid it trains
    dtrain = xgb_dask.DaskDMatrix(client, parts.X, parts.y, qid=parts.qid)
    xgb_dask.train(client, {"tree_method": "hist", "nthread": 1}, dtrain,
                   num_boost_round=2, obj=gbrank.xgboost.objective(RankNet()))


def test_xgboost_dask_position_bias_near_single_machine(client):
    """Click logs on two workers: positions travel with their queries (label_lower_bound),
    gradients are per worker, the ratios' sums are allreduced: the model is the
    single-machine one up to XGBoost's distributed histograms."""
    xgb = pytest.importorskip("xgboost")
    import xgboost.dask as xgb_dask

    import gbrank.xgboost
    from gbrank.datasets import make_ranking, simulate_clicks

    X, y, g = make_ranking(n_queries=80, rows_per_query=15, n_features=4, seed=3)
    weak = X[:, 0] + np.random.default_rng(0).normal(size=y.size)
    log = simulate_clicks(y, g, weak, top_n=8, n_sessions=2, sessions="keep", seed=1)
    Xc, c, pos = X[log.rows], log.clicks, log.position.astype(np.float64)
    qid = np.repeat(np.arange(log.group.size), log.group)
    parts = gd.partition_by_query(Xc, c, qid, position=pos, npartitions=2)
    params = {"tree_method": "hist", "eta": 0.3, "max_depth": 4, "nthread": 1,
              "disable_default_eval_metric": 1, "base_score": 0.0}
    dtrain = xgb_dask.DaskDMatrix(client, parts.X, parts.y, qid=parts.qid,
                                  label_lower_bound=parts.position)
    obj = gbrank.xgboost.objective(LambdaRank(position_bias="unbiased"),
                                   position="label_lower_bound")
    dist = xgb_dask.train(client, params, dtrain, num_boost_round=10, obj=obj)["booster"]
    single_obj = gbrank.xgboost.objective(LambdaRank(position_bias="unbiased"), position=pos)
    single = xgb.train(params, xgb.DMatrix(Xc, c, group=log.group), 10, obj=single_obj)
    plain = xgb.train(params, xgb.DMatrix(Xc, c, group=log.group), 10,
                      obj=gbrank.xgboost.objective(LambdaRank()))
    d = xgb.DMatrix(X)
    p_dist, p_one, p_plain = (b.predict(d, output_margin=True) for b in (dist, single, plain))
    assert single_obj.position_bias_.rounds == 10
    near = metrics.ndcg(y, p_dist, g, k=10) - metrics.ndcg(y, p_one, g, k=10)
    assert abs(near) <= 0.01, near
    # the positions mattered on one machine: the debiased model is not the plain one
    assert np.abs(p_one - p_plain).max() > 0.05
