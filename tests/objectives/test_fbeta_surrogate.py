"""FBetaSurrogate: its loss-augmented argmax against brute force over all 2^r labelings,
against the seed's (a, b) cell enumeration (v built explicitly per cell), the bound
Δ(sign(s), y) ≤ L(s), grad = v* − y, gradient checks, the class rules and bad input."""

from __future__ import annotations

import itertools

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from gbrank.gradcheck import check
from gbrank.objectives import FBetaSurrogate


def _spec(*args, **kwargs) -> FBetaSurrogate:
    """The surrogate of docs/contract.md: one structured example per query (the class's
    default for F_β trains on random examples of 75 rows, see the tests at the end)."""
    return FBetaSurrogate(*args, batch_size=None, **kwargs)


def delta_counts(a, b, c, d, beta: float, measure: str):
    """Δ from confusion counts (arrays allowed), straight from docs/contract.md."""
    a, b, c, d = (np.asarray(x, dtype=np.float64) for x in (a, b, c, d))
    if measure == "balanced":
        return 1.0 - 0.5 * (a / (a + c) + d / (d + b))
    b2 = beta * beta
    den = (1 + b2) * a + b + b2 * c
    with np.errstate(invalid="ignore", divide="ignore"):
        f = np.where(a + b + c == 0, 1.0, (1 + b2) * a / den)
    return 1.0 - f


def values_of(V: np.ndarray, y: np.ndarray, s: np.ndarray, beta: float, measure: str):
    """Δ(v, y) + Σ (v_i − y_i) s_i for each row v of V (±1 labels)."""
    pos, neg = y == 1, y == -1
    a = np.sum((V == 1) & pos, axis=1)
    b = np.sum((V == 1) & neg, axis=1)
    c = np.sum((V == -1) & pos, axis=1)
    d = np.sum((V == -1) & neg, axis=1)
    return delta_counts(a, b, c, d, beta, measure) + (V - y) @ s


def brute_force(y, s, beta, measure):
    r = y.size
    V = np.array(list(itertools.product((-1.0, 1.0), repeat=r)))
    vals = values_of(V, y, s, beta, measure)
    return vals.max(), V[np.argmax(vals)]


def seed_cells(y, s, beta, measure):
    """The seed's algorithm: for every cell (a, b) set v = +1 on the top-a positives and
    top-b negatives by score (stable order), −1 elsewhere; keep the first strict max."""
    order = np.argsort(-s, kind="stable")
    ip = order[y[order] == 1]
    jn = order[y[order] == -1]
    P, N = ip.size, jn.size
    best, best_v = -np.inf, None
    for a in range(P + 1):
        V = -np.ones((N + 1, y.size))
        V[:, ip[:a]] = 1.0
        for b in range(1, N + 1):
            V[b:, jn[b - 1]] = 1.0
        vals = values_of(V, y, s, beta, measure)
        b = int(np.argmax(vals))
        if vals[b] > best:
            best, best_v = vals[b], V[b].copy()
    return best, best_v


def _value(v, y, s, beta, measure):
    return float(values_of(v[None, :], y, s, beta, measure)[0])


def _random_case(rng, r, p_pos=0.4, scale=None):
    y = np.where(rng.random(r) < p_pos, 1.0, -1.0)
    scale = rng.choice([0.02, 0.2, 1.0, 3.0]) if scale is None else scale
    return y, rng.standard_normal(r) * scale


@pytest.mark.floors
@pytest.mark.parametrize("measure", ["fbeta", "balanced"])
def test_argmax_equals_brute_force_up_to_14(measure):
    rng = np.random.default_rng(0)
    for r in range(1, 15):
        for _ in range(3 if r < 12 else 1):
            y, s = _random_case(rng, r)
            if measure == "balanced" and (np.all(y == 1) or np.all(y == -1)):
                y[0] = -y[0]
                if r == 1:
                    continue
            beta = float(rng.choice([0.5, 1.0, 2.0]))
            obj = _spec(beta, measure)
            best, v_bf = brute_force(y, s, beta, measure)
            assert obj.loss(y, s) == pytest.approx(best, rel=1e-12, abs=1e-12)
            v = obj.argmax(y, s)
            assert _value(v, y, s, beta, measure) == pytest.approx(best, rel=1e-12, abs=1e-12)
            np.testing.assert_array_equal(v, v_bf)  # generic scores: unique maximiser


def test_fbeta_without_positives_follows_the_rule():
    # F = 1 when a + b + c = 0: all −1 costs nothing; the rule is not an error for F_β.
    rng = np.random.default_rng(1)
    for r in range(1, 10):
        y = -np.ones(r)
        s = rng.standard_normal(r)
        best, v_bf = brute_force(y, s, 1.0, "fbeta")
        obj = _spec()
        assert obj.loss(y, s) == pytest.approx(best, abs=1e-12)
        np.testing.assert_array_equal(obj.argmax(y, s), v_bf)
    assert _spec().loss([0, 0, 0], [-1.0, -2.0, -0.6]) == 0.0
    assert _spec().loss([0, 0], [-1.0, 0.3]) == pytest.approx(1.0 + 2 * 0.3)


@pytest.mark.parametrize("r, p_pos", [(40, 0.5), (300, 0.3), (2000, 0.01)])
@pytest.mark.parametrize("measure", ["fbeta", "balanced"])
def test_argmax_equals_seed_cell_enumeration(r, p_pos, measure):
    rng = np.random.default_rng(r)
    y, s = _random_case(rng, r, p_pos=p_pos, scale=1.0)
    y[:2] = [1.0, -1.0]
    for beta in (0.5, 2.0) if measure == "fbeta" else (1.0,):
        obj = _spec(beta, measure)
        best, v_ref = seed_cells(y, s, beta, measure)
        assert obj.loss(y, s) == pytest.approx(best, rel=1e-10)
        np.testing.assert_array_equal(obj.argmax(y, s), v_ref)


def test_ties_take_earlier_rows_and_smallest_cell():
    # All scores equal: every cell's v has the same score term; ties go to row order.
    y = np.array([-1.0, 1.0, -1.0, 1.0, -1.0])
    s = np.full(5, 0.3)
    for measure in ("fbeta", "balanced"):
        best, v_ref = seed_cells(y, s, 1.0, measure)
        obj = _spec(1.0, measure)
        assert obj.loss(y, s) == pytest.approx(best, abs=1e-12)
        np.testing.assert_array_equal(obj.argmax(y, s), v_ref)


@settings(max_examples=80, deadline=None)
@given(
    st.lists(st.tuples(st.booleans(), st.integers(-4, 4)), min_size=2, max_size=9),
    st.sampled_from([0.5, 1.0, 2.0]),
    st.sampled_from(["fbeta", "balanced"]),
)
def test_loss_equals_brute_force_property(rows, beta, measure):
    # Coarse integer-ish scores produce many ties: only the max value is unique.
    y = np.array([1.0 if p else -1.0 for p, _ in rows])
    s = np.array([0.25 * k for _, k in rows])
    if measure == "balanced" and (np.all(y == 1) or np.all(y == -1)):
        return
    obj = _spec(beta, measure)
    best, _ = brute_force(y, s, beta, measure)
    assert obj.loss(y, s) == pytest.approx(best, abs=1e-12)
    assert _value(obj.argmax(y, s), y, s, beta, measure) == pytest.approx(best, abs=1e-12)


@pytest.mark.parametrize("measure", ["fbeta", "balanced"])
def test_upper_bound_of_thresholded_measure(measure):
    rng = np.random.default_rng(5)
    for _ in range(200):
        r = int(rng.integers(2, 60))
        y, s = _random_case(rng, r)
        y[:2] = [1.0, -1.0]
        beta = float(rng.choice([0.5, 1.0, 2.0]))
        theta = float(rng.normal())
        obj = _spec(beta, measure)
        # docs/contract.md: Δ(sign(s − θ), y) ≤ L(s − θ); positive ⇔ s > θ.
        pred = np.where(s > theta, 1.0, -1.0)
        a, b = np.sum((pred == 1) & (y == 1)), np.sum((pred == 1) & (y == -1))
        c, d = np.sum((pred == -1) & (y == 1)), np.sum((pred == -1) & (y == -1))
        assert delta_counts(a, b, c, d, beta, measure) <= obj.loss(y, s - theta) + 1e-12


def test_grad_is_v_star_minus_y_and_constant_hessian():
    rng = np.random.default_rng(6)
    y01 = (rng.random(500) < 0.1).astype(np.float64)
    s = rng.standard_normal(500)
    for measure in ("fbeta", "balanced"):
        obj = _spec(2.0, measure, hess=0.7)
        v = obj.argmax(y01, s)
        g, h = obj.grad_hess(y01, s)
        np.testing.assert_array_equal(g, v - (2 * y01 - 1))
        assert set(np.unique(g)) <= {-2.0, 0.0, 2.0}
        np.testing.assert_array_equal(h, 0.7)
        ge, he = obj.exact_grad_hess(y01, s)
        np.testing.assert_array_equal(ge, g)
        np.testing.assert_array_equal(he, 0.0)


@pytest.mark.parametrize("measure", ["fbeta", "balanced"])
def test_gradcheck_grouped_weighted(measure):
    rng = np.random.default_rng(7)
    sizes = np.array([1, 2, 7, 30, 12, 5]) if measure == "fbeta" else np.array([2, 7, 30, 12, 5])
    n = int(sizes.sum())
    y = (rng.random(n) < 0.3).astype(np.float64)
    off = np.concatenate([[0], np.cumsum(sizes)])
    if measure == "balanced":
        y[off[:-1]] = 1.0
        y[off[:-1] + 1] = 0.0
    s = rng.standard_normal(n)
    qw = rng.random(sizes.size) + 0.5
    rep = check(_spec(1.5, measure), y, s, sizes, weight=qw)
    assert rep.ok, str(rep)
    rep = check(_spec(1.0, measure), y, s, sizes)
    assert rep.ok, str(rep)


def test_groups_equal_separate_queries_and_qid_order():
    rng = np.random.default_rng(8)
    sizes = [5, 9, 1, 14]
    n = sum(sizes)
    y = (rng.random(n) < 0.4).astype(np.float64)
    s = rng.standard_normal(n)
    w = np.array([1.0, 2.0, 0.5, 3.0])
    obj = _spec(1.0)
    g, h = obj.grad_hess(y, s, sizes, weight=w)
    off = np.concatenate([[0], np.cumsum(sizes)])
    total = 0.0
    for q in range(len(sizes)):
        lo, hi = off[q], off[q + 1]
        gq, hq = obj.grad_hess(y[lo:hi], s[lo:hi])
        np.testing.assert_array_equal(g[lo:hi], w[q] * gq)
        np.testing.assert_array_equal(h[lo:hi], w[q] * hq)
        total += w[q] * obj.loss(y[lo:hi], s[lo:hi])
    assert obj.loss(y, s, sizes, weight=w) == pytest.approx(total, rel=1e-14)
    # per-row weights constant within queries are the same thing
    g2, _ = obj.grad_hess(y, s, sizes, weight=np.repeat(w, sizes))
    np.testing.assert_array_equal(g2, g)
    # qid given out of order: same gradients per row
    qid = np.repeat(np.arange(4), sizes)
    perm = rng.permutation(n)
    gp, _ = obj.grad_hess(y[perm], s[perm], qid=qid[perm])
    np.testing.assert_array_equal(gp, obj.grad_hess(y, s, sizes)[0][perm])


def test_large_single_query_matches_prefix_sum_enumeration():
    # O(P·N) enumeration with prefix sums on 20,000 rows with 1% positives.
    rng = np.random.default_rng(9)
    n = 20_000
    y01 = (rng.random(n) < 0.01).astype(np.float64)
    s = rng.standard_normal(n) * 0.5
    P = int(y01.sum())
    N = n - P
    sp = np.sort(s[y01 == 1])[::-1]
    sn = np.sort(s[y01 == 0])[::-1]
    tail = np.concatenate([np.cumsum(sp[::-1])[::-1], [0.0]])
    head = np.concatenate([[0.0], np.cumsum(sn)])
    a = np.arange(P + 1)[:, None]
    b = np.arange(N + 1)[None, :]
    vals = 1.0 - 2.0 * a / (a + b + P) - 2 * tail[:, None] + 2 * head[None, :]
    assert _spec(1.0).loss(y01, s) == pytest.approx(vals.max(), rel=1e-9)


def test_init_score_minimises_constant_loss():
    rng = np.random.default_rng(10)
    y01 = (rng.random(400) < 0.05).astype(np.float64)
    for measure in ("fbeta", "balanced"):
        obj = _spec(1.0, measure)
        c = obj.init_score(y01)
        grid = np.linspace(-0.6, 0.6, 1201)
        losses = [obj.loss(y01, np.full(y01.size, x)) for x in grid]
        assert obj.loss(y01, np.full(y01.size, c)) <= min(losses) + 1e-9
    n_neg = int(np.sum(y01 == 0))
    assert _spec(measure="balanced").init_score(y01) == pytest.approx(
        -1 / (4 * n_neg), abs=1e-9)


# ---------------------------------------------------------------------------------------
# bad input


@pytest.mark.parametrize("kwargs, match", [
    ({"beta": 0.0}, "beta"),
    ({"beta": -1.0}, "beta"),
    ({"beta": np.inf}, "beta"),
    ({"measure": "f1"}, "measure"),
    ({"hess": 0.0}, r"hess must be a finite number in \(0, inf\), got 0\.0"),
])
def test_bad_parameters(kwargs, match):
    # scikit-learn's contract: stored as given, validated where used.
    obj = FBetaSurrogate(**kwargs)
    assert all(obj.get_params()[k] is v for k, v in kwargs.items())
    with pytest.raises(ValueError, match=match):
        obj.grad_hess([0.0, 1.0], [0.0, 0.0])


def test_bad_labels_and_weights():
    obj = _spec()
    with pytest.raises(ValueError, match="labels"):
        obj.grad_hess([0, 1, 2], [0.0, 0.0, 0.0])
    with pytest.raises(ValueError, match="labels"):
        obj.loss([-1, 0, 1], [0.0, 0.0, 0.0])
    with pytest.raises(ValueError, match="one weight per query"):
        obj.grad_hess([0, 1, 1], [0.0, 0.1, 0.2], weight=[1.0, 2.0, 1.0])
    with pytest.raises(ValueError, match="group sizes"):
        obj.grad_hess([0, 1, 1], [0.0, 0.1, 0.2], [2, 2])


def test_balanced_needs_both_classes_in_every_query():
    obj = _spec(measure="balanced")
    y = np.array([1, 0, 0, 0, 1, 1, 0], dtype=np.float64)
    s = np.zeros(7)
    with pytest.raises(ValueError, match="query 1 has none"):
        obj.grad_hess(y, s, [2, 2, 3])
    with pytest.raises(ValueError, match="negative row.*query 1"):
        obj.grad_hess(np.array([1, 0, 1, 1, 0, 1.0]), np.zeros(6), [2, 2, 2])
    with pytest.raises(ValueError, match="group-less"):
        obj.loss(np.zeros(4), np.zeros(4))
    with pytest.raises(ValueError, match="qid 7"):
        obj.grad_hess(y, s, qid=[3, 3, 7, 7, 9, 9, 9])
    # F_β is defined without positives (F = 1 when a + b + c = 0): no error
    _spec().grad_hess(y, s, [2, 2, 3])


# -- batch_size: random structured examples per boosting round (issue 10) -----------------

def _batch_case(seed=0, n=120):
    rng = np.random.default_rng(seed)
    y = (rng.random(n) < 0.15).astype(float)
    s = rng.standard_normal(n) * 0.4  # distinct scores: no tie rule involved
    return y, s


def test_batch_size_at_least_the_query_is_the_plain_objective():
    y, s = _batch_case()
    plain = _spec().grad_hess(y, s, [50, 70])
    big = FBetaSurrogate(batch_size=70, hess=1.0, random_state=3).grad_hess(y, s, [50, 70])
    np.testing.assert_array_equal(plain[0], big[0])
    np.testing.assert_array_equal(plain[1], big[1])


def test_batches_are_plain_examples_on_a_partition():
    y, s = _batch_case(1)
    obj = FBetaSurrogate(batch_size=25, random_state=5)
    g, _ = obj.grad_hess(y, s)
    perm, offsets, parent = obj._batches(np.array([0, y.size]), obj._params())
    assert sorted(perm.tolist()) == list(range(y.size))
    assert np.diff(offsets).tolist() == [24] * 5  # ⌈120/25⌉ = 5 near-equal parts
    assert parent.tolist() == [0] * 5
    plain = _spec()
    total = 0.0
    for lo, hi in zip(offsets[:-1], offsets[1:], strict=True):
        rows = perm[lo:hi]
        gp, _ = plain.grad_hess(y[rows], s[rows])
        np.testing.assert_array_equal(g[rows], gp)
        total += plain.loss(y[rows], s[rows])
    assert obj.loss(y, s) == pytest.approx(total, rel=1e-12)


@pytest.mark.parametrize("group", [None, [40, 80]])
def test_batches_gradcheck(group):
    y, s = _batch_case(2)
    report = check(FBetaSurrogate(batch_size=20, random_state=0), y, s, group, hessian=False)
    assert report.ok, str(report)


def test_booster_rounds_draw_new_examples_reproducibly():
    y, s = _batch_case(3, n=400)
    a = FBetaSurrogate(batch_size=20, random_state=7)
    b = FBetaSurrogate(batch_size=20, random_state=7)
    g0 = a.grad_hess(y, s)[0]
    np.testing.assert_array_equal(g0, a.grad_hess(y, s)[0])  # no round passed
    rounds_a = [a.booster_grad_hess(y, s)[0] for _ in range(3)]
    rounds_b = [b.booster_grad_hess(y, s)[0] for _ in range(3)]
    for ga, gb in zip(rounds_a, rounds_b, strict=True):
        np.testing.assert_array_equal(ga, gb)
    assert any(not np.array_equal(rounds_a[0], r) for r in rounds_a[1:])


@pytest.mark.parametrize("kwargs, needle", [
    ({"batch_size": 0}, "batch_size"),
    ({"batch_size": 2.5}, "batch_size"),
    ({"batch_size": 10, "measure": "balanced"}, "batch_size"),
    ({"batch_size": 10, "random_state": -1}, "random_state"),
])
def test_batch_size_bad_parameters(kwargs, needle):
    y, s = _batch_case(4)
    obj = FBetaSurrogate(**kwargs)
    with pytest.raises(ValueError, match=needle):
        obj.grad_hess(y, s)


@pytest.mark.floors
def test_batch_state_does_not_leak_between_xgboost_trainings():
    # Each objective() wrapper trains its own copy (round counter from 0), so two
    # trainings with one instance are identical; set_params starts a new run too.
    xgb = pytest.importorskip("xgboost")
    from gbrank.xgboost import objective

    rng = np.random.default_rng(0)
    X = rng.standard_normal((600, 4))
    y = (X[:, 0] + 0.5 * rng.standard_normal(600) > 1.5).astype(float)
    obj = FBetaSurrogate(batch_size=30, random_state=0)
    dm = xgb.DMatrix(X, y)
    params = {"max_depth": 3, "eta": 0.3, "nthread": 1, "base_score": 0.0}
    a, b = (xgb.train(params, dm, 10, obj=objective(obj)).predict(dm, output_margin=True)
            for _ in range(2))
    np.testing.assert_array_equal(a, b)
    obj.booster_grad_hess(y, np.zeros(600))  # advance the instance's own round
    assert obj._round == 1
    obj.set_params(random_state=0)
    assert not hasattr(obj, "_round")


# -- the defaults: hess=None, batch_size="auto" (issue 10) ------------------------------

def test_defaults_are_stored_as_given_and_resolved_at_use():
    obj = FBetaSurrogate()
    assert obj.get_params()["hess"] is None and obj.get_params()["batch_size"] == "auto"
    p = obj._params()
    assert (p.batch_size, p.hess) == (75, 4.0)  # F_β: random examples of 75, Hessian 4
    p = FBetaSurrogate(measure="balanced")._params()
    assert (p.batch_size, p.hess) == (None, 1.0)  # one example per query, Hessian 1
    assert FBetaSurrogate(batch_size=None)._params().hess == 1.0
    assert FBetaSurrogate(batch_size=30)._params().hess == 4.0
    assert FBetaSurrogate(hess=2.5)._params().hess == 2.5
    y, s = _batch_case(5, n=400)
    got = FBetaSurrogate(random_state=4).grad_hess(y, s)
    want = FBetaSurrogate(hess=4.0, batch_size=75, random_state=4).grad_hess(y, s)
    np.testing.assert_array_equal(got[0], want[0])
    np.testing.assert_array_equal(got[1], want[1])
    # and it is not the one-example surrogate on 400 rows: the sum of ⌈400/75⌉ = 6
    # examples' surrogates
    batched = FBetaSurrogate(random_state=4).loss(y, s)
    assert batched != pytest.approx(_spec().loss(y, s), rel=1e-6)


def test_default_objective_gradcheck():
    y, s = _batch_case(6, n=300)
    for group in (None, [100, 200]):
        report = check(FBetaSurrogate(random_state=2), y, s, group, hessian=False)
        assert report.ok, str(report)


def test_batch_size_string_other_than_auto_is_refused():
    with pytest.raises(ValueError, match="batch_size must be 'auto', None or an integer"):
        FBetaSurrogate(batch_size="big").grad_hess([0.0, 1.0], [0.0, 0.0])
