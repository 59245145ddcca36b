"""The fast paths of the kernels (issue 12) against slow references: every fast path
must give what docs/contract.md's brute force gives, exactly where the quantity is a count."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from reference.metrics import pair_counts_q

from gbrank import metrics
from gbrank._kernels import pair_accuracy as pa
from gbrank._kernels._grades import grade_classes_into
from gbrank._kernels._radix import descending_order_into

# ---------------------------------------------------------------- radix sort


@settings(max_examples=80, deadline=None)
@given(st.lists(st.one_of(st.floats(allow_nan=False),
                          st.sampled_from([0.0, -0.0, 1.5, -1.5, 5e-324])),
                min_size=1, max_size=400))
def test_descending_order_into_is_the_stable_descending_order(values):
    """The int32 radix order of long LambdaRank queries: scores descending, ties (and
    the two zeros) in row order, as NumPy's stable argsort of −s."""
    s = np.array(values, dtype=np.float64)
    order = np.empty(s.size, dtype=np.int32)
    descending_order_into(s, order, np.empty(s.size, dtype=np.int32))
    expected = sorted(range(s.size), key=lambda i: (-(s[i] + 0.0), i))
    assert order.tolist() == expected


@pytest.mark.parametrize("kind", ["normal", "ties", "constant", "ascending"])
def test_descending_order_into_matches_argsort_at_scale(kind):
    rng = np.random.default_rng(11)
    n = 300_000
    s = {"normal": rng.standard_normal(n), "ties": np.round(rng.standard_normal(n), 1),
         "constant": np.full(n, -0.0), "ascending": np.arange(n, dtype=float)}[kind]
    order = np.empty(n, dtype=np.int32)
    descending_order_into(s, order, np.empty(n, dtype=np.int32))
    np.testing.assert_array_equal(order, np.argsort(-(s + 0.0), kind="stable"))


def test_radix_order_of_extremes_and_zeros():
    s = np.array([-np.inf, -1e300, -1.0, -5e-324, -0.0, 0.0, 5e-324, 2.0, np.inf])
    order = np.empty(s.size, dtype=np.int32)
    descending_order_into(s, order, np.empty(s.size, dtype=np.int32))
    # Numeric order descending; -0.0 (row 4) and +0.0 (row 5) are one score: row order.
    assert order.tolist() == [8, 7, 6, 4, 5, 3, 2, 1, 0]


def test_grade_classes_dense_ranks():
    for y in (np.array([3.0, 1.0, 3.0, 7.0]), np.array([0.5, -2.0, 0.5, 1e9])):
        cls = np.empty(y.size, dtype=np.int32)
        n = grade_classes_into(y, cls)
        distinct = sorted(set(y.tolist()))
        assert n == len(distinct)
        assert cls.tolist() == [distinct.index(v) for v in y]


# ---------------------------------------------------------------- pair accuracy paths


@st.composite
def pair_cases(draw):
    n = draw(st.integers(1, 120))
    n_grades = draw(st.sampled_from([1, 2, 5, 40]))  # 40 > MERGE_MAX_CLASSES: radix path
    y = np.array(draw(st.lists(st.integers(0, n_grades - 1), min_size=n, max_size=n)),
                 dtype=np.float64)
    if draw(st.booleans()):
        y = y * 0.37 - 2.0  # non-integer labels go through the sorted distinct values
    pool = draw(st.sampled_from([[0.0, -0.0, 1.0], [-1.0, 0.0, 2.5, 3.0], None]))
    if pool is None:
        # No subnormals: the reference multiplies (s_i - s_j)(l_i - l_j), which
        # underflows to 0 (a "tie") for a subnormal score gap; the kernels compare.
        s = draw(st.lists(st.floats(-1e6, 1e6, allow_subnormal=False), min_size=n,
                          max_size=n))
    else:
        s = draw(st.lists(st.sampled_from(pool), min_size=n, max_size=n))
    return y, np.array(s, dtype=np.float64)


@settings(max_examples=120, deadline=None)
@given(pair_cases())
def test_every_pair_accuracy_path_counts_exactly(case):
    y, s = case
    good, pairs = pair_counts_q(list(y), list(s))
    for path in (pa._pair_counts_small, pa._pair_counts_radix, pa._pair_counts_big):
        c, t, p = path(y, s)
        assert p == pairs
        assert c + 0.5 * t == good


def _brute_counts(y, s):
    """O(n²) concordant and tied counts with NumPy, in row blocks."""
    conc = tied = pairs = 0
    for a in range(0, y.size, 500):
        dy = y[a:a + 500, None] - y[None, :]
        ds = s[a:a + 500, None] - s[None, :]
        diff = dy > 0  # each differently-labelled pair once: the higher label's row
        pairs += int(diff.sum())
        conc += int((diff & (ds > 0)).sum())
        tied += int((diff & (ds == 0)).sum())
    return conc, tied, pairs



@pytest.mark.parametrize("labels", ["grades", "real"])
def test_small_query_sorts_against_brute_force(labels):
    # Queries below RADIX_MIN_ROWS: counting ranks up to RANK_ORDER_MAX rows, NumPy's
    # sort (and the labels' radix order) above; both in one call.
    from gbrank._kernels._order import RANK_ORDER_MAX

    rng = np.random.default_rng(4)
    sizes = [RANK_ORDER_MAX + 200, 30, 1, RANK_ORDER_MAX, 1500]
    assert max(sizes) < pa.RADIX_MIN_ROWS
    n = sum(sizes)
    y = rng.integers(0, 5, n).astype(np.float64)
    if labels == "real":
        y = y * 0.37 + rng.integers(0, 3, n) * 1e-3  # not a small-integer table
    s = np.round(rng.standard_normal(n) * 20) / 4  # many ties
    s[::7] = -0.0
    good = pairs = 0.0
    lo = 0
    for m in sizes:
        c, t, p = _brute_counts(y[lo:lo + m], s[lo:lo + m])
        good += c + 0.5 * t
        pairs += p
        lo += m
    assert metrics.pair_accuracy(y, s, sizes) == pytest.approx(good / pairs, rel=1e-15)

@pytest.mark.parametrize("n_grades", [2, 5, 30])
def test_big_query_paths_against_brute_force(n_grades):
    rng = np.random.default_rng(n_grades)
    n = 6000  # above RADIX_MIN_ROWS: the public function takes the big-query path
    assert n >= pa.RADIX_MIN_ROWS
    y = rng.integers(0, n_grades, n).astype(np.float64)
    s = np.round(rng.standard_normal(n) * 20) / 4  # many ties
    s[::11] = -0.0
    s[::13] = 0.0
    conc, tied, pairs = _brute_counts(y, s)
    assert pa._pair_counts_big(y, s) == (conc, tied, pairs)
    assert pa._pair_counts_radix(y, s) == (conc, tied, pairs)
    # Public function: a big query beside small ones, pooled.
    y2 = np.concatenate((y, y[:50]))
    s2 = np.concatenate((s, s[:50]))
    c_small, t_small, p_small = _brute_counts(y[:50], s[:50])
    expected = (conc + 0.5 * tied + c_small + 0.5 * t_small) / (pairs + p_small)
    assert metrics.pair_accuracy(y2, s2, [n, 50]) == pytest.approx(expected, rel=1e-15)


# ---------------------------------------------------------------- top-k and NDCG


@settings(max_examples=150, deadline=None)
@given(st.integers(1, 64), st.lists(st.sampled_from([-1.0, 0.0, -0.0, 0.5, 2.0, 3.25]) |
                                    st.floats(-1e3, 1e3), min_size=1, max_size=250),
       st.integers(0, 5))
def test_pruned_top_k_is_head_of_stable_sort(k, values, pad):
    from gbrank._kernels._topk import top_k_into_pruned

    # The query sits inside a longer array (absolute indices), as in the NDCG kernel.
    s = np.concatenate((np.full(pad, 9e9), np.array(values), np.full(pad, 9e9)))
    a, b = pad, pad + len(values)
    k = min(k, b - a)
    idx = np.empty(k + 1, dtype=np.int64)  # + 1: the scratch slot of the rank count
    val = np.empty(k + 1)
    top_k_into_pruned(s, a, b, k, idx, val, np.empty(b - a, dtype=np.int64),
                      np.empty(b - a))
    expected = sorted(range(a, b), key=lambda i: (-s[i], i))[:k]
    assert idx[:k].tolist() == expected
    assert val[:k].tolist() == [s[i] for i in expected]


@settings(max_examples=150, deadline=None)
@given(st.integers(1, 40), st.lists(st.sampled_from([-1.0, 0.0, -0.0, 0.5, 2.0, 3.25]) |
                                    st.floats(-1e3, 1e3), min_size=80, max_size=1500),
       st.sampled_from(["as drawn", "ascending", "descending"]), st.integers(0, 5))
def test_long_top_k_is_head_of_stable_sort(k, values, arrangement, pad):
    """The chunked scan of the long-query LambdaRank kernel, including score orders
    that make every row beat the buffer (ascending) and ties at the bound."""
    from gbrank._kernels._topk import top_k_into_long

    v = np.array(values)
    if arrangement != "as drawn":
        v = np.sort(v) if arrangement == "ascending" else np.sort(v)[::-1].copy()
    s = np.concatenate((np.full(pad, 9e9), v, np.full(pad, 9e9)))
    a, b = pad, pad + v.size
    k = min(k, v.size // 2)
    idx = np.empty(k, dtype=np.int64)
    val = np.empty(k)
    top_k_into_long(s, a, b, k, idx, val)
    expected = sorted(range(a, b), key=lambda i: (-s[i], i))[:k]
    assert idx.tolist() == expected
    assert val.tolist() == [s[i] for i in expected]


def test_ndcg_parallel_and_serial_forms_agree_with_reference():
    from reference.metrics import ndcg_q

    from gbrank._kernels.ndcg import _ndcg_parallel, _ndcg_serial

    rng = np.random.default_rng(5)
    sizes = rng.integers(1, 140, 300)
    offsets = np.concatenate(([0], np.cumsum(sizes)))
    n = int(offsets[-1])
    y = rng.integers(0, 4, n).astype(np.float64)
    s = np.round(rng.standard_normal(n) * 3) / 2  # ties
    table = 2.0 ** np.arange(4) - 1.0
    for k in (1, 5, 10, 64, 0):
        depth = int(sizes.max()) if k == 0 else k
        discount = 1.0 / np.log2(np.arange(2, depth + 2))
        out_p = np.empty(sizes.size)
        out_s = np.empty(sizes.size)
        _ndcg_parallel(y, s, offsets, k, table, False, discount, out_p)
        _ndcg_serial(y, s, offsets, k, table, False, discount, out_s)
        expected = [ndcg_q(list(y[a:b]), list(s[a:b]), None if k == 0 else k)
                    for a, b in zip(offsets[:-1], offsets[1:], strict=True)]
        assert out_p.tolist() == out_s.tolist()
        np.testing.assert_allclose(out_s, expected, rtol=1e-13)


@pytest.mark.parametrize("n_grades", [1, 2, 4, 5, 6, 8, 9, 20])
def test_ndcg_ideal_dcg_by_grade_passes_and_histogram(n_grades):
    # <= GRADE_PASSES_MAX grades: passes of four grades from the top (1, 2 passes, a
    # pass ending below grade 1); more: the histogram. label_gain with a non-zero gain
    # for grade 0 checks the rows left to the end; k beyond the counted rows too.
    from reference.metrics import ndcg_q

    from gbrank._kernels.ndcg import GRADE_PASSES_MAX, _ndcg_serial

    assert GRADE_PASSES_MAX == 8
    rng = np.random.default_rng(n_grades)
    sizes = rng.integers(1, 60, 200)
    offsets = np.concatenate(([0], np.cumsum(sizes)))
    n = int(offsets[-1])
    # Skewed grades: the top grades are rare, so several passes are needed.
    y = np.minimum(rng.geometric(0.45, n) - 1, n_grades - 1).astype(np.float64)
    s = np.round(rng.standard_normal(n) * 3) / 2
    table = np.sqrt(np.arange(n_grades, dtype=np.float64)) + 0.25  # gain(0) = 0.25
    for k in (1, 3, 10, 64, 0):
        depth = int(sizes.max()) if k == 0 else k
        discount = 1.0 / np.log2(np.arange(2, depth + 2))
        out = np.empty(sizes.size)
        _ndcg_serial(y, s, offsets, k, table, False, discount, out)
        expected = [ndcg_q(list(y[a:b]), list(s[a:b]), None if k == 0 else k,
                           gain=lambda lab: table[int(lab)])
                    for a, b in zip(offsets[:-1], offsets[1:], strict=True)]
        np.testing.assert_allclose(out, expected, rtol=1e-13)


@pytest.mark.parametrize("integer", [True, False])
def test_fused_ranking_check_agrees_with_numpy_checks(integer):
    from gbrank._kernels._checks import ranking_rows_ok

    rng = np.random.default_rng(3)
    y = rng.integers(0, 5, 300).astype(np.float64)
    s = rng.standard_normal(300)
    assert ranking_rows_ok(y, s, integer, 4.0)
    assert ranking_rows_ok(y, s, integer, np.inf)
    assert ranking_rows_ok(-0.0 * y, s, integer, 4.0)  # -0.0 is grade 0
    assert not ranking_rows_ok(y, s, integer, 3.0)  # above max_grade
    for where, value in (("y", -1.0), ("y", np.nan), ("y", np.inf), ("s", np.nan),
                         ("s", -np.inf), ("y", 2.5)):
        yy, ss = y.copy(), s.copy()
        (yy if where == "y" else ss)[123] = value
        bad = not (where == "y" and value == 2.5 and not integer)
        assert ranking_rows_ok(yy, ss, integer, np.inf) is (not bad)
    # Through the public functions: the NumPy checks still name the problem.
    s[7] = np.nan
    with pytest.raises(ValueError, match=r"scores contain 1 NaN/inf value\(s\) \(first at "
                                         r"index 7"):
        metrics.ndcg(y, s, [300])


def test_vectorised_row_exponentials_within_one_ulp_of_libm():
    from gbrank._kernels._sigmoid import MAX_EXP_SPREAD, row_exponentials_into

    rng = np.random.default_rng(11)
    # Spreads up to the limit: σ(z − mid) covers ±350, the reduction's whole range.
    for spread, sigma in ((1e-3, 1.0), (1.0, 1.0), (40.0, 2.5), (MAX_EXP_SPREAD, 1.0)):
        z = rng.uniform(-1.0, 1.0, 5000) * spread / 2
        z[:2] = (-spread / 2, spread / 2)
        z /= sigma
        e = np.empty(z.size)
        assert row_exponentials_into(z, sigma, e, np.empty(z.size))
        mid = 0.5 * (z.max() + z.min())
        # The reference is exp of the same float64 argument in extended precision, rounded
        # once: NumPy's own float64 exp is itself up to ~1 ulp off, and differs by version.
        t = sigma * (z - mid)
        exact = np.exp(t.astype(np.longdouble)).astype(np.float64)
        assert np.all(np.abs(e - exact) <= np.spacing(exact))  # within 1 ulp
    z = np.array([0.0, MAX_EXP_SPREAD + 1.0])
    e = np.full(2, 7.0)
    assert not row_exponentials_into(z, 1.0, e, np.empty(2))
    assert e.tolist() == [7.0, 7.0]  # untouched: the pairs call rho_pair


@pytest.mark.parametrize("beta", [0.5, 1.0, 2.0])
def test_fbeta_oracle_single_query_fast_path_against_cell_enumeration(beta):
    # The group-less path (NumPy sort, tighter candidate floor, branch-free v* pass)
    # against all cells (a, b) with stable top-a / top-b selection; scores rounded so
    # the k-th score is tied across the cut.
    from gbrank._kernels import fbeta_surrogate as fk

    rng = np.random.default_rng(int(beta * 10))
    n = 3000
    y = (rng.random(n) < 0.05).astype(np.float64)
    s = np.round(rng.standard_normal(n) * 4) / 40  # many ties, several near 0
    b2 = beta * beta
    pos_rows = [i for i in sorted(range(n), key=lambda i: (-s[i], i)) if y[i] == 1]
    neg_rows = [i for i in sorted(range(n), key=lambda i: (-s[i], i)) if y[i] == 0]
    P, N = len(pos_rows), len(neg_rows)
    tail = np.concatenate([np.cumsum(s[pos_rows][::-1])[::-1], [0.0]])
    head = np.concatenate([[0.0], np.cumsum(s[neg_rows])])
    a = np.arange(P + 1)[:, None]
    b = np.arange(N + 1)[None, :]
    d = a + b + b2 * P
    vals = 1.0 - (1.0 + b2) * a / d - 2.0 * tail[:, None] + 2.0 * head[None, :]
    best = vals.max()
    # Smallest a, then smallest b, among cells within rounding of the maximum.
    cells = np.argwhere(vals >= best - 1e-9)
    ca, cb = cells[0]
    expected = np.where(y == 1, -2.0, 0.0)
    expected[pos_rows[:ca]] = 0.0
    expected[neg_rows[:cb]] = 2.0
    grad = np.empty(n)
    value = fk.oracle(y, s, np.array([0, n]), fk.FBETA, b2, grad)
    assert value[0] == pytest.approx(best, rel=1e-12)
    np.testing.assert_array_equal(grad, expected)
    # The grouped (numba-sorted) path gives the same on the same query.
    grad2 = np.empty(n)
    fk._oracle_serial(y, s, np.array([0, n]), fk.FBETA, b2, grad2)
    np.testing.assert_array_equal(grad2, expected)


# ---------------------------------------------------------------- grouped RankNet


@settings(max_examples=100, deadline=None)
@given(st.lists(st.sampled_from([0.0, 1.0, 2.0, 4.0, 63.0, 64.0, 0.5, -3.0]), min_size=1,
                max_size=80))
def test_ranknet_label_order_counting_and_merge_paths(labels):
    from gbrank._kernels.ranknet import COUNT_SORT_MAX_SPAN, _label_order_into

    y = np.array(labels)
    n = y.size
    order = np.empty(n, dtype=np.int64)
    nxt = np.empty(n, dtype=np.int64)
    _label_order_into(y, order, nxt, np.empty(COUNT_SORT_MAX_SPAN, dtype=np.int64))
    expected = sorted(range(n), key=lambda i: (-y[i], i))
    assert order.tolist() == expected
    lab = y[expected]
    assert nxt.tolist() == [next((q for q in range(p, n) if lab[q] < lab[p]), n)
                            for p in range(n)]


def _ranknet_reference(y, s, offsets, qweights, sigma, pull):
    """Every pair of every query from docs/contract.md's formulas, in plain Python."""
    import math

    g = np.zeros(y.size)
    h = np.zeros(y.size)
    for q in range(offsets.size - 1):
        w = qweights[q] if qweights.size else 1.0
        for i in range(offsets[q], offsets[q + 1]):
            for j in range(offsets[q], offsets[q + 1]):
                if i == j or (y[i] == y[j] and not pull):
                    continue
                x = sigma * (s[i] - s[j])
                t = math.exp(-abs(x))  # rho = 1/(1 + e^x) without overflow
                rho, one_minus = (t / (1 + t), 1 / (1 + t)) if x > 0 else (1 / (1 + t),
                                                                            t / (1 + t))
                target = 1.0 if y[i] > y[j] else (0.0 if y[i] < y[j] else 0.5)
                g[i] += w * sigma * ((1.0 - target) - rho)
                h[i] += w * sigma * sigma * rho * one_minus
    return g, h


@pytest.mark.parametrize("labels", ["grades", "wide", "fractional"])
@pytest.mark.parametrize("pull", [False, True])
def test_grouped_ranknet_serial_and_parallel_forms(labels, pull):
    from gbrank._kernels.ranknet import _grad_hess_parallel, _grad_hess_serial

    rng = np.random.default_rng(3)
    sizes = rng.integers(1, 40, 60)
    offsets = np.concatenate(([0], np.cumsum(sizes)))
    n = int(offsets[-1])
    y = rng.integers(0, 4, n).astype(np.float64)
    if labels == "wide":
        y *= 100.0  # span beyond the counting sort: merge-sort path
    elif labels == "fractional":
        y += 0.25 * rng.integers(0, 2, n)
    s = rng.standard_normal(n) * 3
    s[-30:] *= 400  # spread beyond MAX_EXP_SPREAD: the per-pair exp path
    qw = rng.uniform(0.5, 2.0, sizes.size)
    skip = np.zeros(0, dtype=np.bool_)
    g_ref, h_ref = _ranknet_reference(y, s, offsets, qw, 1.3, pull)
    for form in (_grad_hess_parallel, _grad_hess_serial):
        g = np.zeros(n)
        h = np.zeros(n)
        form(y, s, offsets, qw, 1.3, pull, skip, g, h)
        np.testing.assert_allclose(g, g_ref, rtol=1e-12, atol=1e-12)
        np.testing.assert_allclose(h, h_ref, rtol=1e-12, atol=1e-300)



@pytest.mark.parametrize("pull", [False, True])
def test_grouped_ranknet_label_sorts_of_short_and_long_queries(pull):
    # Labels outside the counting sort's span: counting ranks up to RANK_ORDER_MAX rows,
    # the stable merge sort above, both in one call.
    from gbrank._kernels._order import RANK_ORDER_MAX
    from gbrank._kernels.ranknet import _grad_hess_serial

    rng = np.random.default_rng(8)
    sizes = np.array([RANK_ORDER_MAX + 40, 25, 1, RANK_ORDER_MAX])
    offsets = np.concatenate(([0], np.cumsum(sizes)))
    n = int(offsets[-1])
    y = rng.integers(0, 4, n) * 100.0 + 0.5 * rng.integers(0, 2, n)
    s = rng.standard_normal(n) * 3
    qw = rng.uniform(0.5, 2.0, sizes.size)
    g_ref, h_ref = _ranknet_reference(y, s, offsets, qw, 0.8, pull)
    g = np.zeros(n)
    h = np.zeros(n)
    _grad_hess_serial(y, s, offsets, qw, 0.8, pull, np.zeros(0, dtype=np.bool_), g, h)
    np.testing.assert_allclose(g, g_ref, rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(h, h_ref, rtol=1e-12, atol=1e-300)

# ---------------------------------------------------------------- group-less RankNet grid


@pytest.mark.parametrize("pull", [False, True])
@pytest.mark.parametrize("spread", [0.1, 1.0, 10.0, 100.0, 1000.0])
def test_cubic_grid_within_1e7_of_exact_at_every_spread(spread, pull):
    from gbrank._kernels.ranknet import ranknet_rows_grad_hess
    from gbrank._kernels.ranknet_grid import ranknet_grid_grad_hess

    rng = np.random.default_rng(int(spread * 10) + pull)
    n = 6000
    y = rng.integers(0, 5, n).astype(np.float64)
    s = rng.standard_normal(n) * spread
    g0, h0 = ranknet_rows_grad_hess(y, s, 1.0, pull)  # every pair, exact
    g1, h1 = ranknet_grid_grad_hess(y, s, 1.0, pull)
    assert np.abs(g1 - g0).max() <= 1e-7 * np.abs(g0).max()
    assert np.abs(h1 - h0).max() <= 1e-7 * np.abs(h0).max()


@pytest.mark.parametrize("pull", [False, True])
@pytest.mark.parametrize("spread", [1.0, 1000.0])
def test_cubic_grid_on_threads_matches_serial_and_exact(spread, pull, monkeypatch):
    """The few-grade path with every threaded part on (two deposit slabs, threaded
    read-back, FFTs on numba's thread count): the dispatch threshold is lowered."""
    from gbrank._kernels import _threads
    from gbrank._kernels.ranknet import ranknet_rows_grad_hess
    from gbrank._kernels.ranknet_grid import ranknet_grid_grad_hess

    rng = np.random.default_rng(int(spread) + 7 * pull)
    n = 6000
    y = rng.integers(0, 5, n).astype(np.float64)
    s = rng.standard_normal(n) * spread
    g_ser, h_ser = ranknet_grid_grad_hess(y, s, 1.0, pull)
    monkeypatch.setattr(_threads, "PARALLEL_MIN_ROWS", 1)
    assert _threads.fft_workers(n) >= 1
    g_par, h_par = ranknet_grid_grad_hess(y, s, 1.0, pull)
    np.testing.assert_allclose(g_par, g_ser, rtol=0, atol=1e-12 * np.abs(g_ser).max())
    np.testing.assert_allclose(h_par, h_ser, rtol=0, atol=1e-12 * np.abs(h_ser).max())
    g0, h0 = ranknet_rows_grad_hess(y, s, 1.0, pull)  # every pair, exact
    assert np.abs(g_par - g0).max() <= 1e-7 * np.abs(g0).max()
    assert np.abs(h_par - h0).max() <= 1e-7 * np.abs(h0).max()


@pytest.mark.parametrize("labels", ["few grades, batched", "two decimals", "all distinct",
                                    "mixed"])
@pytest.mark.parametrize("threads", [False, True])
def test_grid_with_many_grades_within_1e7_of_exact(labels, threads, monkeypatch):
    """Many distinct labels: all rows' field minus each grade's own, the own sums pair by
    pair for grades of at most DIRECT_MAX_ROWS rows and on grids in batches for bigger
    ones (``batch=6`` forces two batches on eight grades), serial and on threads (the
    parts are compiled in; the Python-side thresholds are lowered)."""
    from gbrank._kernels import _threads
    from gbrank._kernels import ranknet_grid as grid
    from gbrank._kernels.ranknet import ranknet_rows_grad_hess

    rng = np.random.default_rng(12)
    n = 5000
    y = {"few grades, batched": rng.integers(0, 8, n).astype(np.float64),
         "two decimals": np.round(rng.uniform(0, 4, n), 2),
         "all distinct": rng.uniform(0, 4, n),
         "mixed": np.where(rng.random(n) < 0.5, rng.integers(0, 3, n),
                           rng.uniform(3, 9, n))}[labels]
    s = rng.standard_normal(n) * 20
    s[:40] = s[0]  # tied scores within and across grades
    if threads:
        monkeypatch.setattr(_threads, "PARALLEL_MIN_ROWS", 1)
        monkeypatch.setattr(grid, "N_PARTS", 4)  # enough grades for parts
    for pull in (False, True):
        g0, h0 = ranknet_rows_grad_hess(y, s, 1.0, pull)
        g1, h1 = grid.ranknet_grid_grad_hess(y, s, 1.0, pull, batch=6)
        assert np.abs(g1 - g0).max() <= 1e-7 * np.abs(g0).max()
        assert np.abs(h1 - h0).max() <= 1e-7 * np.abs(h0).max()


def test_grid_parallel_deposit_and_read_back_match_serial():
    from gbrank._kernels import ranknet_grid as grid

    rng = np.random.default_rng(11)
    n = 5000
    y = rng.integers(0, 4, n).astype(np.float64)
    s = rng.standard_normal(n) * 30
    cls = np.empty(n, dtype=np.int32)
    n_cls = grade_classes_into(y, cls)
    lo = float(s.min())
    m = grid.grid_nodes(float(np.ptp(s)), 1.0)
    inv_h = (m - 1) / float(np.ptp(s))
    slabs = np.full((2, n_cls, m + 3), np.nan)  # both forms must clear their slabs
    grid._deposit_parallel(s, cls, lo, inv_h, m, slabs)
    d_par = slabs[0]
    d_ser = np.full((1, n_cls, m + 3), np.nan)
    grid._deposit_serial(s, cls, lo, inv_h, m, d_ser)
    d_ser = d_ser[0]
    np.testing.assert_allclose(d_par, d_ser, rtol=0, atol=1e-12)
    assert d_ser.sum() == pytest.approx(n, rel=1e-12)  # cubic weights sum to 1
    every = grid.deposit_every(s, lo, inv_h, m)  # all rows on one grid row
    np.testing.assert_allclose(every[0], d_ser.sum(axis=0), rtol=0, atol=1e-12)
    field = rng.standard_normal((n_cls, 2 * (m + 3)))
    out = []
    for form in (grid._read_back_parallel, grid._read_back_serial):
        g = np.empty(n)
        h = np.empty(n)
        form(field, field, s, cls, lo, inv_h, np.ones(n_cls), np.ones(n_cls), 1.0, True, g, h)
        out.append((g, h))
    assert out[0][0].tolist() == out[1][0].tolist()
    assert out[0][1].tolist() == out[1][1].tolist()


@pytest.mark.parametrize("k", [3, 10, 64, 100, None])
def test_top_k_metrics_on_long_queries_against_reference(k):
    # Queries of 20-300 rows: k = 3, 10 take the pruned top-k, 64 both paths, 100 and
    # None the full sort; ties in scores throughout.
    from reference.metrics import ap_q, err_q, precision_q

    rng = np.random.default_rng(21 if k is None else k)
    sizes = rng.integers(20, 300, 25)
    n = int(sizes.sum())
    y = rng.integers(0, 4, n).astype(np.float64)
    s = np.round(rng.standard_normal(n) * 4) / 2
    bounds = np.concatenate(([0], np.cumsum(sizes)))
    queries = [(list(y[a:b]), list(s[a:b])) for a, b in zip(bounds[:-1], bounds[1:],
                                                             strict=True)]
    g_max = float(y.max())
    expected_err = np.mean([err_q(qy, qs, k, g_max) for qy, qs in queries])
    expected_ap = np.mean([ap_q(qy, qs, k) for qy, qs in queries])
    expected_p = np.mean([precision_q(qy, qs, k) for qy, qs in queries])
    assert metrics.err(y, s, sizes, k=k) == pytest.approx(expected_err, rel=1e-13)
    assert metrics.mean_ap(y, s, sizes, k=k) == pytest.approx(expected_ap, rel=1e-13)
    if k is not None:
        assert metrics.precision_at_k(y, s, sizes, k=k) == pytest.approx(expected_p,
                                                                          rel=1e-13)
