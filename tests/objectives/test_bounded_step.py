"""The Newton-step bound ``max_step`` of FocalLoss (binary and multiclass) and
FBetaSurrogate.

The booster's Hessian is max(w·max(h, hess_floor), |w g| / max_step), elementwise, so
|g_i| ≤ max_step · h_i for every row and every leaf value −Σg/Σh is at most max_step in
size; the gradient and ``exact_grad_hess`` (what the gradient check compares) are
unchanged. The training tests replay the divergence the bound fixes (docs/max_step.md):
the 5-class focal fit of the report, and logistic loss (FocalLoss(γ=0), i.e. LightGBM's
``binary``) at 1,000:1.
"""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from sklearn.base import clone

from gbrank.gradcheck import check
from gbrank.objectives import FBetaSurrogate, FocalLoss

# margins that reach every regime: the far wrong side (the true Hessian negative for
# γ > 0, or vanishing), moderate, and the far right side (everything underflows)
EXTREME = np.array([-745.0, -700.0, -40.0, -12.0, -6.0, -3.0, -2.6, -1.0, 0.0, 1e-9, 1.0,
                    3.0, 12.0, 40.0, 700.0, 745.0])


def _binary_rows(seed: int, n: int = 200):
    rng = np.random.default_rng(seed)
    y = (rng.random(n) < 0.3).astype(np.float64)
    s = rng.standard_normal(n) * 5
    s = np.concatenate([s, EXTREME, EXTREME])
    y = np.concatenate([y, np.ones(EXTREME.size), np.zeros(EXTREME.size)])
    w = rng.random(y.size) * 3
    w[:5] = 0.0
    return y, s, w


def _assert_bounded(g, h, g_none, h_none, max_step, rng):
    """The contract of the bound, against the same objective with ``max_step=None``."""
    np.testing.assert_array_equal(g, g_none)  # the gradient is unchanged
    assert np.all(np.abs(g) <= max_step * h)  # exactly, in float64
    assert np.all(h >= h_none)
    # untouched wherever the floored Hessian satisfies the bound with room to spare;
    # elsewhere max(h, |g|/max_step), the latter rounded up by a few ulps so that the
    # line above holds exactly
    ok = np.abs(g) <= max_step * h_none * (1 - 1e-14)
    np.testing.assert_array_equal(h[ok], h_none[ok])
    assert not ok.all()  # the inputs do reach the bound
    np.testing.assert_allclose(h[~ok], np.maximum(h_none[~ok], np.abs(g[~ok]) / max_step),
                               rtol=2e-15, atol=0)
    # so no set of rows (a leaf) has a Newton value above max_step
    gf, hf = g.ravel(), h.ravel()
    for _ in range(200):
        leaf = rng.random(gf.size) < rng.uniform(0.01, 1.0)
        if hf[leaf].sum() > 0:
            assert abs(gf[leaf].sum()) <= max_step * hf[leaf].sum() * (1 + 1e-12)


@pytest.mark.floors
@pytest.mark.parametrize("gamma", [0.0, 0.5, 2.0, 5.0])
@pytest.mark.parametrize("max_step", [0.3, 1.0, 4.0, 16.0])
def test_focal_binary_bound(gamma, max_step):
    y, s, w = _binary_rows(int(10 * gamma + max_step))
    rng = np.random.default_rng(1)
    for alpha in (None, 0.25):
        for weight in (None, w):
            obj = FocalLoss(gamma, alpha, max_step=max_step)
            off = FocalLoss(gamma, alpha, max_step=None)
            g, h = obj.grad_hess(y, s, weight=weight)
            g0, h0 = off.grad_hess(y, s, weight=weight)
            _assert_bounded(g, h, g0, h0, max_step, rng)
            # max_step=None is the floored Hessian w·max(h, hess_floor) ...
            ge, he = off.exact_grad_hess(y, s)
            ww = np.ones_like(s) if weight is None else weight
            np.testing.assert_array_equal(h0, np.maximum(he, 1e-6) * ww)
            # ... and exact_grad_hess is the true one, bound or not
            ge_b, he_b = obj.exact_grad_hess(y, s, weight=weight)
            ge_0, he_0 = off.exact_grad_hess(y, s, weight=weight)
            np.testing.assert_array_equal(ge_b, ge_0)
            np.testing.assert_array_equal(he_b, he_0)
            np.testing.assert_array_equal(ge_b, g)
            if gamma >= 2:
                assert he_b.min() < 0  # the negative-Hessian region is in the data


def _multiclass_rows(seed: int, k: int = 4, n: int = 150):
    rng = np.random.default_rng(seed)
    y = rng.integers(0, k, n).astype(np.float64)
    s = rng.standard_normal((n, k)) * rng.choice([0.5, 3.0, 12.0], (n, 1))
    # confidently wrong rows (true class far below another) and saturated ones
    s[:6] = 0.0
    s[np.arange(6), (y[:6].astype(int) + 1) % k] = [8.0, 20.0, 40.0, 700.0, 745.0, 3.0]
    s[6] = [700, -700, 0, 3]
    s[7] = [-745, 745, -745, 0]
    w = rng.random(n) * 2
    w[-3:] = 0.0
    return y, s, w


@pytest.mark.parametrize("gamma", [0.0, 1.0, 2.0, 5.0])
@pytest.mark.parametrize("max_step", [0.5, 4.0, 16.0])
def test_focal_multiclass_bound_elementwise(gamma, max_step):
    k = 4
    y, s, w = _multiclass_rows(int(10 * gamma + max_step), k)
    rng = np.random.default_rng(2)
    for alpha in (None, [0.2, 1.0, 3.0, 0.5]):
        for weight in (None, w):
            obj = FocalLoss(gamma, alpha, num_class=k, max_step=max_step)
            off = FocalLoss(gamma, alpha, num_class=k, max_step=None)
            g, h = obj.grad_hess(y, s, weight=weight)
            g0, h0 = off.grad_hess(y, s, weight=weight)
            assert g.shape == h.shape == (y.size, k)
            _assert_bounded(g, h, g0, h0, max_step, rng)
            ge_b, he_b = obj.exact_grad_hess(y, s, weight=weight)
            ge_0, he_0 = off.exact_grad_hess(y, s, weight=weight)
            np.testing.assert_array_equal(ge_b, ge_0)
            np.testing.assert_array_equal(he_b, he_0)
    # A flat n·K vector (class- or row-major: both read as plausible) is refused.
    with pytest.raises(ValueError, match="A flat n·K vector has two layouts"):
        FocalLoss(gamma, num_class=k, max_step=max_step).grad_hess(y, s.ravel())


@settings(max_examples=80, deadline=None)
@given(
    # weights 0 or ≥ 1e-6: a weight near 1e-308 makes |w g| / max_step subnormal, where
    # the bound may fall short by its last unit (gbrank/_kernels/_step.py)
    st.lists(st.tuples(st.booleans(), st.floats(-750, 750),
                       st.one_of(st.just(0.0), st.floats(1e-6, 5.0))),
             min_size=1, max_size=30),
    st.sampled_from([0.0, 0.5, 1.0, 2.0, 5.0]),
    st.floats(1e-3, 1e3),
    st.sampled_from([1e-6, 1e-3, 0.0]),
)
def test_focal_bound_property(rows, gamma, max_step, hess_floor):
    y = np.array([float(a) for a, _, _ in rows])
    s = np.array([b for _, b, _ in rows])
    w = np.array([c for _, _, c in rows])
    if not np.any(w > 0):
        w[0] = 1.0
    obj = FocalLoss(gamma, hess_floor=hess_floor, max_step=max_step)
    g, h = obj.grad_hess(y, s, weight=w)
    g0, h0 = FocalLoss(gamma, hess_floor=hess_floor, max_step=None).grad_hess(y, s, weight=w)
    np.testing.assert_array_equal(g, g0)
    assert np.all(np.abs(g) <= max_step * h)
    assert np.all(h >= h0)
    ok = np.abs(g) <= max_step * h0 * (1 - 1e-14)
    np.testing.assert_array_equal(h[ok], h0[ok])
    np.testing.assert_allclose(h[~ok], np.maximum(h0[~ok], np.abs(g[~ok]) / max_step),
                               rtol=2e-15, atol=0)


def _fbeta_rows(seed: int):
    rng = np.random.default_rng(seed)
    sizes = np.array([7, 30, 12, 51])
    n = int(sizes.sum())
    y = (rng.random(n) < 0.3).astype(np.float64)
    s = rng.standard_normal(n)
    return y, s, sizes, rng.random(sizes.size) + 0.5


@pytest.mark.floors
@pytest.mark.parametrize("hess, max_step", [(1.0, 0.25), (1.0, 1.0), (1.0, 2.0), (4.0, 0.1),
                                            (4.0, 0.5), (4.0, 8.0)])
def test_fbeta_bound(hess, max_step):
    y, s, sizes, qw = _fbeta_rows(int(hess * max_step * 100))
    obj = FBetaSurrogate(hess=hess, batch_size=None, max_step=max_step)
    off = FBetaSurrogate(hess=hess, batch_size=None)
    assert off.max_step is None  # the default: its step is already ≤ 2 / hess
    g, h = obj.grad_hess(y, s, sizes, weight=qw)
    g0, h0 = off.grad_hess(y, s, sizes, weight=qw)
    np.testing.assert_array_equal(g, g0)
    assert np.all(np.abs(g) <= max_step * h)
    wrow = np.repeat(qw, sizes)
    np.testing.assert_array_equal(h0, hess * wrow)
    # |g| is 0 or 2w: a bound at or above 2 / hess changes nothing; a smaller one raises
    # exactly the rows with a gradient, to 2w / max_step
    moved = g != 0
    assert moved.any() and not moved.all()
    if max_step > 2.0 / hess:
        np.testing.assert_array_equal(h, h0)
    elif max_step == 2.0 / hess:  # the bound is tight: at most a few ulps up
        np.testing.assert_allclose(h, h0, rtol=2e-15, atol=0)
    else:
        np.testing.assert_array_equal(h[~moved], h0[~moved])
        np.testing.assert_allclose(h[moved], 2.0 * wrow[moved] / max_step, rtol=2e-15)
    ge, he = obj.exact_grad_hess(y, s, sizes, weight=qw)
    np.testing.assert_array_equal(ge, g)
    np.testing.assert_array_equal(he, 0.0)
    # the random-example default goes through the same kernel
    gb, hb = FBetaSurrogate(random_state=3, max_step=0.1).grad_hess(y, s)
    assert np.all(np.abs(gb) <= 0.1 * hb) and np.any(hb != 4.0)


# -- the gradient check compares the true Hessian, so it passes with the bound active ----

@pytest.mark.parametrize("gamma", [0.0, 2.0, 5.0])
def test_gradcheck_with_the_bound_active(gamma):
    y, s, w = _binary_rows(3, n=60)
    for alpha in (None, 0.25):
        obj = FocalLoss(gamma, alpha, max_step=0.5)
        assert np.any(obj.grad_hess(y, s)[1] != FocalLoss(gamma, alpha, max_step=None)
                      .grad_hess(y, s)[1])
        rep = check(obj, y, s, weight=w + 0.1)  # (a row of weight 0 alone is refused)
        assert rep.ok, str(rep)
    ym, sm, wm = _multiclass_rows(4, n=30)
    for alpha in (None, [0.2, 1.0, 3.0, 0.5]):
        rep = check(FocalLoss(gamma, alpha, num_class=4, max_step=0.5), ym, sm,
                    weight=wm + 0.1)
        assert rep.ok, str(rep)


def test_fbeta_gradcheck_with_the_bound_active():
    y, s, sizes, qw = _fbeta_rows(5)
    rep = check(FBetaSurrogate(hess=1.0, batch_size=None, max_step=0.25), y, s, sizes,
                weight=qw)
    assert rep.ok, str(rep)
    rep = check(FBetaSurrogate(random_state=2, max_step=0.1), y, s, hessian=False)
    assert rep.ok, str(rep)


# -- the parameter ---------------------------------------------------------------------

_OBJECTIVES = [
    (lambda **kw: FocalLoss(**kw), np.array([0.0, 1.0]), np.array([-3.0, -8.0])),
    (lambda **kw: FocalLoss(num_class=3, **kw), np.array([0.0, 2.0]),
     np.array([[0.0, 9.0, 0.0], [5.0, 0.0, -5.0]])),
    (lambda **kw: FBetaSurrogate(batch_size=None, **kw), np.array([0.0, 1.0]),
     np.array([0.3, -0.2])),
]


@pytest.mark.parametrize("make, y, s", _OBJECTIVES)
@pytest.mark.parametrize("bad", [0, 0.0, -1.0, np.nan, np.inf, "16", True])
def test_bad_max_step_is_named(make, y, s, bad):
    obj = make(max_step=bad)
    assert obj.get_params()["max_step"] is bad  # stored as given, checked at use
    with pytest.raises(ValueError, match=r"max_step must be a finite number in \(0, inf\) "
                                         r"or None, got "):
        obj.grad_hess(y, s)


@pytest.mark.parametrize("make, y, s", _OBJECTIVES)
def test_max_step_follows_the_parameter_contract(make, y, s):
    obj = make(max_step=2)
    assert clone(obj).get_params() == obj.get_params()
    h2 = obj.grad_hess(y, s)[1]
    obj.set_params(max_step=None)
    h_none = obj.grad_hess(y, s)[1]
    assert np.all(h_none <= h2)
    obj.max_step = 2  # plain assignment is seen too
    np.testing.assert_array_equal(obj.grad_hess(y, s)[1], h2)


def test_defaults():
    assert FocalLoss().max_step == FocalLoss(num_class=3).max_step == 16.0
    assert FBetaSurrogate().max_step is None


# -- training: the divergence the bound fixes ----------------------------------------------
# LightGBM, one thread, fixed seeds. Every tree adds learning_rate × (a leaf value) to a
# row's raw score, and a leaf value is at most max_step in size, so after R rounds
# |raw − init| ≤ R · learning_rate · max_step (LightGBM rounds g and h to float32: a
# relative 1e-6 to spare). That is the guaranteed bound; the realistic one asserted
# beside it is some 3x what the bounded fits reach (measured with LightGBM 4.7.0: 10.9
# and 13.0 on the 5-class data at γ = 2 and 1, 7.3 and 19.4 at 1,000:1 at γ = 2 and 0,
# 0.85 for FBetaSurrogate), far below the diverging fits (~1e4).

LGB = {"learning_rate": 0.1, "num_leaves": 31, "verbose": -1, "num_threads": 1, "seed": 0,
       "deterministic": True, "force_row_wise": True}
ROUNDS = 500


def _train(obj, X, y, rounds):
    lgb = pytest.importorskip("lightgbm")
    init = obj.init_score(y)
    multiclass = np.ndim(init) == 1
    start = np.tile(init, (y.size, 1)) if multiclass else np.full(y.size, init)
    params = {**LGB, "objective": obj}
    if multiclass:
        params["num_class"] = init.size
    model = lgb.train(params, lgb.Dataset(X, y, init_score=start), rounds)
    return model.predict(X, raw_score=True)  # without init: the sum of the trees


def _five_classes(seed: int = 1):
    """The reported case: 5 classes at 90/6/2/1.5/0.5 %, the 70 % training split."""
    from sklearn.datasets import make_classification
    from sklearn.model_selection import train_test_split

    X, y = make_classification(20000, 20, n_informative=10, n_classes=5,
                               n_clusters_per_class=1,
                               weights=[0.90, 0.06, 0.02, 0.015, 0.005], flip_y=0.01,
                               random_state=seed)
    Xtr, _, ytr, _ = train_test_split(X, y.astype(np.float64), test_size=0.3, stratify=y,
                                      random_state=seed)
    return Xtr, ytr


def _thousand_to_one(seed: int = 1):
    from gbrank.datasets import make_imbalanced

    return make_imbalanced(30000, positive_rate=0.001, flip=0.0, seed=seed)


def _assert_trained_within(raw, obj, rounds, realistic):
    assert np.all(np.isfinite(raw))
    guaranteed = rounds * LGB["learning_rate"] * obj.max_step * (1 + 1e-6)
    assert np.abs(raw).max() <= guaranteed
    assert np.abs(raw).max() < realistic, np.abs(raw).max()


@pytest.mark.slow
def test_five_class_focal_diverges_without_the_bound():
    # the precondition of the next test: 30 rounds of the reported fit without the bound
    # reach raw scores in the hundreds (200 rounds: ~1e4), with it they stay small
    X, y = _five_classes()
    raw_off = _train(FocalLoss(2.0, num_class=5, max_step=None), X, y, 30)
    raw_on = _train(FocalLoss(2.0, num_class=5), X, y, 30)
    assert np.abs(raw_off).max() > 100.0, ("the replay no longer diverges without the "
                                           "bound", np.abs(raw_off).max())
    assert np.abs(raw_on).max() < 10.0


@pytest.mark.slow
@pytest.mark.parametrize("gamma, realistic", [(2.0, 35.0), (1.0, 40.0)])
def test_five_class_focal_trains_bounded(gamma, realistic):
    X, y = _five_classes()
    obj = FocalLoss(gamma, num_class=5)
    _assert_trained_within(_train(obj, X, y, ROUNDS), obj, ROUNDS, realistic)


@pytest.mark.slow
def test_thousand_to_one_logistic_diverges_without_the_bound():
    # FocalLoss(γ=0, max_step=None) is LightGBM's `binary`, whose Newton step is not
    # bounded either: at 1,000:1 a leaf of positives (g ≈ −1, h ≈ p ≈ 0.001) jumps
    X, y = _thousand_to_one()
    raw_off = _train(FocalLoss(0.0, max_step=None), X, y, 100)
    assert np.abs(raw_off).max() > 1000.0, np.abs(raw_off).max()


@pytest.mark.slow
@pytest.mark.parametrize("gamma, realistic", [(2.0, 25.0), (0.0, 60.0)])
def test_thousand_to_one_focal_trains_bounded(gamma, realistic):
    X, y = _thousand_to_one()
    obj = FocalLoss(gamma)
    _assert_trained_within(_train(obj, X, y, ROUNDS), obj, ROUNDS, realistic)


@pytest.mark.slow
def test_fbeta_surrogate_trains_bounded():
    # max_step=None (its default): the step is at most 2 / hess by construction
    from gbrank.datasets import make_imbalanced

    X, y = make_imbalanced(6000, positive_rate=0.03, seed=1)
    for obj in (FBetaSurrogate(random_state=0), FBetaSurrogate(random_state=0, max_step=0.25)):
        raw = _train(obj, X, y, ROUNDS)
        assert np.all(np.isfinite(raw))
        step = min(2.0 / obj._params().hess, obj.max_step or np.inf)
        assert np.abs(raw).max() <= ROUNDS * LGB["learning_rate"] * step * (1 + 1e-6)
        assert np.abs(raw).max() < 3.0, np.abs(raw).max()
