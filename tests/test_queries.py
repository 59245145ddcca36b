"""gbrank._queries: the order in which a validation or test part's score ties are broken."""

from __future__ import annotations

import numpy as np
import pytest
import scipy.sparse as sp

from gbrank import metrics
from gbrank._queries import row_hash, tie_order


def _rows(seed=0, n=300, d=7):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, d))
    X[X < 0.2] = 0.0
    X[5, 3], X[6, 1] = np.nan, -0.0
    return X, rng.integers(0, 3, n).astype(float)


def test_row_hash_reads_values_not_their_layout():
    """The same values give the same keys as a C or Fortran array, a CSR matrix and a
    DataFrame (so the tuner's tables and files and GBRanker's inputs agree), and rows
    that differ get different keys."""
    pd = pytest.importorskip("pandas")
    X, y = _rows()
    keys = row_hash(X, y)
    for same in (np.asfortranarray(X), sp.csr_matrix(X), sp.csc_matrix(X), pd.DataFrame(X)):
        np.testing.assert_array_equal(row_hash(same, y), keys)
    assert np.unique(keys).size == np.unique(np.column_stack([np.nan_to_num(X, nan=9), y]),
                                             axis=0).shape[0]
    y2 = y.copy()
    y2[0] += 1
    assert row_hash(X, y2)[0] != keys[0] and np.all(row_hash(X, y2)[1:] == keys[1:])


def test_tie_order_makes_the_data_order_unable_to_score():
    """Rows sorted by grade within each query made a model that scores every row alike
    rank them perfectly under the metrics' row-order tie rule (probe 65: NDCG@10 0.92
    reported where its ties averaged 0.75). Judged in tie_order, the same rows in any
    order score the same, and that model scores near its tie average, not 1."""
    rng = np.random.default_rng(1)
    sizes = np.full(40, 12)
    X, y = _rows(n=sizes.sum())
    starts = np.r_[0, np.cumsum(sizes)[:-1]]
    by_grade = np.concatenate([s + np.argsort(-y[s:s + k], kind="stable")
                               for s, k in zip(starts, sizes, strict=True)])
    shuffled = np.concatenate([s + rng.permutation(k) for s, k in zip(starts, sizes,
                                                                       strict=True)])
    flat = np.zeros(y.size)  # a model that scores every row alike
    assert metrics.ndcg(y[by_grade], flat, sizes, 10) == 1.0  # the file order scores
    judged = []
    for rows in (by_grade, shuffled):
        o = tie_order(X[rows], y[rows], sizes)
        assert np.all(np.repeat(np.arange(40), 12)[o] == np.repeat(np.arange(40), 12))
        judged.append((X[rows][o], y[rows][o]))
    np.testing.assert_array_equal(judged[0][1], judged[1][1])
    np.testing.assert_array_equal(judged[0][0], judged[1][0])
    averaged = np.mean([metrics.ndcg(y[np.concatenate([s + rng.permutation(k) for s, k in
                                                        zip(starts, sizes, strict=True)])],
                                     flat, sizes, 10) for _ in range(200)])
    assert metrics.ndcg(judged[0][1], flat, sizes, 10) == pytest.approx(averaged, abs=0.05)
    assert metrics.ndcg(judged[0][1], flat, sizes, 10) < 0.9


def test_rows_alike_but_for_the_grade_meet_in_no_fixed_grade_order():
    """Rows equal in every value the hash reads (a DataFrame of categories, review 66)
    once met in one grade order in every query ([0, 1, 3, 2, 4]); mixed with the query
    they meet in many, and categories' codes are read."""
    pd = pytest.importorskip("pandas")
    sizes = np.full(200, 5)
    y = np.tile(np.arange(5.0), 200)
    X = np.zeros((y.size, 2))
    o = tie_order(X, y, sizes)
    firsts = y[o].reshape(200, 5)[:, 0]
    assert np.unique(firsts).size == 5 and np.bincount(firsts.astype(int)).max() < 80
    cats = pd.DataFrame({"c": pd.Categorical(np.tile(list("abcde"), 200))})
    assert not np.array_equal(row_hash(cats, y), row_hash(pd.DataFrame({"c": cats["c"]
                                                                         .cat.codes * 0}), y))


def test_sparse_row_hash_in_blocks_equals_dense():
    X, y = _rows(n=1000)
    np.testing.assert_array_equal(row_hash(sp.csr_matrix(X), y, rows=64), row_hash(X, y))
