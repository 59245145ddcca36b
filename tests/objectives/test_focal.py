"""FocalLoss against slow references written from docs/contract.md (naive formulas in plain
Python floats, finite differences), logistic/softmax special cases, gradient checks."""

from __future__ import annotations

import decimal
import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from gbrank import predict_proba
from gbrank.gradcheck import check
from gbrank.objectives import FocalLoss

GAMMAS = (0.0, 0.5, 1.0, 2.0, 5.0)
ALPHAS = (None, 0.25, 0.9)


_CTX = decimal.Context(prec=50)


def _fl_decimal(y: float, z, gamma: float, alpha: float | None) -> decimal.Decimal:
    """−α_t (1 − p_t)^γ log p_t straight from the definition, in 50-digit decimals."""
    with decimal.localcontext(_CTX):
        z = decimal.Decimal(z)
        one = decimal.Decimal(1)
        zt = z if y == 1 else -z
        # p_t and 1 − p_t each from its own sigmoid: no cancellation at any precision
        pt = one / (one + (-zt).exp())
        q = one / (one + zt.exp())
        at = one if alpha is None else decimal.Decimal(alpha if y == 1 else 1.0 - alpha)
        power = one if gamma == 0 else (q ** decimal.Decimal(gamma) if q > 0 else 0 * one)
        return -at * power * pt.ln()


def naive_fl(y: float, z: float, gamma: float, alpha: float | None) -> float:
    return float(_fl_decimal(y, z, gamma, alpha))


def fd_decimal(y: float, z: float, gamma: float, alpha: float | None,
               h: float = 1e-12) -> tuple[float, float]:
    """First and second central differences of the 50-digit loss (exact to ~1e-20)."""
    with decimal.localcontext(_CTX):
        zd, hd = decimal.Decimal(z), decimal.Decimal(h)
        up = _fl_decimal(y, zd + hd, gamma, alpha)
        mid = _fl_decimal(y, zd, gamma, alpha)
        down = _fl_decimal(y, zd - hd, gamma, alpha)
        return float((up - down) / (2 * hd)), float((up - 2 * mid + down) / (hd * hd))


def naive_multiclass_fl(c: int, z: np.ndarray, gamma: float, alpha=None) -> float:
    e = [math.exp(v) for v in z]
    pc = e[c] / sum(e)
    at = 1.0 if alpha is None else alpha[c]
    return -at * (1.0 - pc) ** gamma * math.log(pc)


def _data(n: int = 120, seed: int = 0):
    rng = np.random.default_rng(seed)
    y = (rng.random(n) < 0.3).astype(np.float64)
    s = rng.standard_normal(n) * 4
    return y, s


# ---------------------------------------------------------------------------------------
# values


@pytest.mark.floors
@pytest.mark.parametrize("gamma", GAMMAS)
@pytest.mark.parametrize("alpha", ALPHAS)
def test_loss_grad_hess_match_naive_reference(gamma, alpha):
    y, s = _data(60)
    s = np.clip(s, -12, 12)
    obj = FocalLoss(gamma, alpha)
    g, h = obj.exact_grad_hess(y, s)
    for i in range(y.size):
        ref = naive_fl(y[i], s[i], gamma, alpha)
        assert obj.loss(y[i:i + 1], s[i:i + 1]) == pytest.approx(ref, rel=1e-10, abs=1e-14)
        fg, fh = fd_decimal(y[i], s[i], gamma, alpha)
        assert g[i] == pytest.approx(fg, rel=1e-10, abs=1e-14)
        assert h[i] == pytest.approx(fh, rel=1e-8, abs=1e-14)


def test_gamma0_is_logistic_loss():
    y, s = _data(500)
    obj = FocalLoss(gamma=0.0, alpha=None)
    g, h = obj.exact_grad_hess(y, s)
    p = 1.0 / (1.0 + np.exp(-s))
    np.testing.assert_allclose(g, p - y, rtol=1e-13, atol=1e-15)
    np.testing.assert_allclose(h, p * (1 - p), rtol=1e-12, atol=1e-15)
    logistic = np.sum(np.logaddexp(0.0, -np.where(y == 1, s, -s)))
    assert obj.loss(y, s) == pytest.approx(logistic, rel=1e-13)


def test_min_true_hessian_gamma2():
    # docs/contract.md: min ≈ −0.047 at γ = 2; here from second differences of the 50-digit formula.
    u = np.linspace(-8, 4, 1201)
    fh = np.array([fd_decimal(1, x, 2.0, None)[1] for x in u])
    assert fh.min() == pytest.approx(-0.047, abs=5e-4)
    _, h = FocalLoss(2.0).exact_grad_hess(np.ones_like(u), u)
    np.testing.assert_allclose(h, fh, rtol=1e-9, atol=1e-15)
    # the booster never sees it (the floor alone; max_step raises more: test_bounded_step)
    _, hb = FocalLoss(2.0, hess_floor=1e-6, max_step=None).grad_hess(np.ones_like(u), u)
    assert hb.min() == 1e-6
    np.testing.assert_array_equal(hb, np.maximum(h, 1e-6))


@pytest.mark.parametrize("gamma", GAMMAS)
@pytest.mark.parametrize("alpha", ALPHAS)
def test_gradcheck_including_extreme_margins(gamma, alpha):
    y, s = _data(80, seed=int(10 * gamma))
    extreme = np.array([700.0, -700.0, 350.0, -350.0, 40.0, -40.0, 0.0, 1e-9])
    s = np.concatenate([s, extreme, extreme])
    y = np.concatenate([y, np.ones(8), np.zeros(8)])
    obj = FocalLoss(gamma, alpha)
    rep = check(obj, y, s)
    assert rep.ok, str(rep)
    g, h = obj.exact_grad_hess(y, s)
    assert np.all(np.isfinite(g)) and np.all(np.isfinite(h))


@pytest.mark.parametrize("gamma", (0.0, 0.5, 2.0, 5.0))
def test_no_overflow_far_beyond_700(gamma):
    s = np.array([-1e300, -1e5, -745.5, -700.0, 700.0, 745.5, 1e5, 1e300])
    for label in (0.0, 1.0):
        y = np.full(s.size, label)
        obj = FocalLoss(gamma, 0.25)
        with np.errstate(over="raise", invalid="raise", divide="raise"):
            g, h = obj.exact_grad_hess(y, s)
            val = obj.loss(y, s)
        assert np.all(np.isfinite(g)) and np.all(np.isfinite(h)) and np.isfinite(val)
        assert np.all(np.abs(g) <= 1.0)  # |∂FL/∂z| ≤ α_t·1 on the wrong side


def test_weights_and_label_encodings():
    y, s = _data(300)
    w = np.random.default_rng(3).random(y.size) * 3
    obj = FocalLoss(2.0, 0.25)
    g, h = obj.grad_hess(y, s)
    gw, hw = obj.grad_hess(y, s, weight=w)
    np.testing.assert_allclose(gw, w * g, rtol=1e-15)
    np.testing.assert_allclose(hw, w * h, rtol=1e-15)
    assert obj.loss(y, s, weight=w) == pytest.approx(
        sum(w[i] * naive_fl(y[i], s[i], 2.0, 0.25) for i in range(y.size)), rel=1e-10)
    gpm, hpm = obj.grad_hess(2 * y - 1, s)
    np.testing.assert_array_equal(gpm, g)
    np.testing.assert_array_equal(hpm, h)
    g32, _ = obj.grad_hess(y.astype(np.float32).tolist(), s)
    np.testing.assert_array_equal(g32, g)


@settings(max_examples=60, deadline=None)
@given(
    st.lists(st.tuples(st.booleans(), st.floats(-30, 30)), min_size=1, max_size=40),
    st.sampled_from(GAMMAS),
    st.sampled_from(ALPHAS),
)
def test_kernel_matches_reference_property(rows, gamma, alpha):
    y = np.array([float(a) for a, _ in rows])
    s = np.array([b for _, b in rows])
    obj = FocalLoss(gamma, alpha)
    ref = sum(naive_fl(yi, si, gamma, alpha) for yi, si in zip(y, s, strict=True))
    assert obj.loss(y, s) == pytest.approx(ref, rel=1e-9, abs=1e-12)
    g, h = obj.exact_grad_hess(y, s)
    for i in range(y.size):
        fg, fh = fd_decimal(y[i], s[i], gamma, alpha)
        assert g[i] == pytest.approx(fg, rel=1e-9, abs=1e-14)
        assert h[i] == pytest.approx(fh, rel=1e-7, abs=1e-14)


# ---------------------------------------------------------------------------------------
# multiclass


@pytest.mark.parametrize("gamma", (0.0, 0.5, 2.0, 5.0))
@pytest.mark.parametrize("alpha", (None, [0.1, 0.5, 0.2, 0.7]))
def test_multiclass_gradcheck_every_column(gamma, alpha):
    rng = np.random.default_rng(7)
    n, k = 40, 4
    y = rng.integers(0, k, n).astype(np.float64)
    s = rng.standard_normal((n, k)) * 3
    s[0] = [700, -700, 0, 3]
    s[1] = [-700, 700, -700, 0]
    s[2] = [5, 5, 5, 5]
    obj = FocalLoss(gamma, alpha, num_class=k)
    rep = check(obj, y, s)
    assert rep.ok, str(rep)


@pytest.mark.floors
def test_multiclass_values_against_naive():
    rng = np.random.default_rng(8)
    n, k = 30, 3
    y = rng.integers(0, k, n)
    s = rng.standard_normal((n, k)) * 2
    alpha = [0.2, 0.3, 0.5]
    obj = FocalLoss(2.0, alpha, num_class=k)
    ref = sum(naive_multiclass_fl(int(y[i]), s[i], 2.0, alpha) for i in range(n))
    assert obj.loss(y, s) == pytest.approx(ref, rel=1e-11)
    # γ = 0: softmax cross-entropy, grad = p − onehot, diag hess = p(1 − p)
    g, h = FocalLoss(0.0, num_class=k).exact_grad_hess(y, s)
    p = predict_proba(s)
    onehot = np.eye(k)[y]
    np.testing.assert_allclose(g, p - onehot, rtol=1e-12, atol=1e-15)
    np.testing.assert_allclose(h, p * (1 - p), rtol=1e-12, atol=1e-15)


def test_two_class_softmax_equals_binary():
    rng = np.random.default_rng(9)
    n = 50
    y = rng.integers(0, 2, n).astype(np.float64)
    s = rng.standard_normal((n, 2)) * 3
    z = s[:, 1] - s[:, 0]
    mc, b = FocalLoss(2.0, num_class=2), FocalLoss(2.0)
    assert mc.loss(y, s) == pytest.approx(b.loss(y, z), rel=1e-12)
    g2, h2 = mc.exact_grad_hess(y, s)
    g1, h1 = b.exact_grad_hess(y, z)
    np.testing.assert_allclose(g2[:, 1], g1, rtol=1e-11, atol=1e-14)
    np.testing.assert_allclose(g2[:, 0], -g1, rtol=1e-11, atol=1e-14)
    np.testing.assert_allclose(h2[:, 1], h1, rtol=1e-10, atol=1e-14)


# ---------------------------------------------------------------------------------------
# init score


def test_init_score_logistic_is_logit_of_weighted_base_rate():
    y, _ = _data(400)
    w = np.random.default_rng(1).random(y.size)
    rate = np.sum(w * y) / np.sum(w)
    assert FocalLoss(0.0).init_score(y, w) == pytest.approx(np.log(rate / (1 - rate)), rel=1e-12)
    assert FocalLoss(0.0).init_score(2 * y - 1) == pytest.approx(
        np.log(y.mean() / (1 - y.mean())), rel=1e-12)


@pytest.mark.parametrize("gamma", (0.5, 2.0, 5.0))
@pytest.mark.parametrize("alpha", ALPHAS)
def test_init_score_minimises_focal_loss(gamma, alpha):
    y = (np.random.default_rng(2).random(1000) < 0.03).astype(np.float64)
    obj = FocalLoss(gamma, alpha)
    c = obj.init_score(y)
    n1 = y.sum()
    n0 = y.size - n1

    def total(x: float) -> float:
        p = 1.0 / (1.0 + math.exp(-x))
        a1, a0 = (1.0, 1.0) if alpha is None else (alpha, 1.0 - alpha)
        return -n1 * a1 * (1 - p) ** gamma * math.log(p) - n0 * a0 * p ** gamma * math.log(1 - p)

    grid = np.linspace(-8, 8, 3201)
    best = grid[np.argmin([total(x) for x in grid])]
    assert c == pytest.approx(best, abs=5e-3)
    assert total(c) <= min(total(c - 1e-4), total(c + 1e-4))


def test_init_score_one_class_is_finite():
    assert FocalLoss(0.0).init_score(np.ones(10)) == pytest.approx(np.log(1e12), rel=1e-6)
    assert np.isfinite(FocalLoss(2.0, 0.25).init_score(np.zeros(10)))


@pytest.mark.parametrize("gamma", (0.0, 2.0))
def test_init_score_multiclass(gamma):
    rng = np.random.default_rng(4)
    k = 4
    y = rng.choice(k, 500, p=[0.7, 0.2, 0.08, 0.02]).astype(np.float64)
    obj = FocalLoss(gamma, num_class=k)
    c = obj.init_score(y)
    assert c.shape == (k,)
    s = np.tile(c, (y.size, 1))
    g, _ = obj.exact_grad_hess(y, s)
    np.testing.assert_allclose(g.sum(axis=0), 0.0, atol=1e-6 * y.size)
    if gamma == 0:
        freq = np.bincount(y.astype(int), minlength=k) / y.size
        np.testing.assert_allclose(predict_proba(s[:1])[0], freq, rtol=1e-9)


# ---------------------------------------------------------------------------------------
# alpha="balanced": scikit-learn's balanced class weights


def _skewed(n=300, k=4, seed=11):
    rng = np.random.default_rng(seed)
    y = rng.choice(k, n, p=[0.75, 0.15, 0.07, 0.03]).astype(np.float64)
    return y, rng.standard_normal((n, k)) * 3


def test_balanced_gradients_are_the_natively_weighted_softmax_gradients():
    from sklearn.utils.class_weight import compute_sample_weight

    y, s = _skewed()
    w = compute_sample_weight("balanced", y)  # n / (K n_c), scikit-learn's rule
    exact = FocalLoss(0.0, "balanced", hess_floor=0.0, num_class=4, max_step=None)
    g, h = exact.grad_hess(y, s)
    p = predict_proba(s)
    onehot = np.eye(4)[y.astype(int)]
    np.testing.assert_allclose(g, w[:, None] * (p - onehot), rtol=1e-12, atol=1e-15)
    np.testing.assert_allclose(h, w[:, None] * p * (1 - p), rtol=1e-12, atol=1e-15)
    # For any gamma and the defaults (floor, step bound): balanced is these weights,
    # given as sample weights or as explicit class weights.
    for gamma in (0.0, 2.0):
        ref = FocalLoss(gamma, num_class=4).grad_hess(y, s, weight=w)
        per_class = y.size / (4 * np.bincount(y.astype(int), minlength=4))
        explicit = FocalLoss(gamma, alpha=per_class.tolist(), num_class=4)
        for got in (FocalLoss(gamma, "balanced", num_class=4).grad_hess(y, s),
                    explicit.grad_hess(y, s)):
            np.testing.assert_allclose(got[0], ref[0], rtol=1e-12, atol=1e-15)
            np.testing.assert_allclose(got[1], ref[1], rtol=1e-12, atol=1e-15)
        assert FocalLoss(gamma, "balanced", num_class=4).loss(y, s) == pytest.approx(
            FocalLoss(gamma, num_class=4).loss(y, s, weight=w), rel=1e-12)


def test_balanced_weights_come_from_the_labels_and_bind_fixes_them():
    y, s = _skewed(200)
    obj = FocalLoss(2.0, "balanced", num_class=4)
    counts = np.bincount(y.astype(int), minlength=4)
    bound = obj.bind_data_defaults(y)
    assert bound.alpha == pytest.approx((y.size / (4 * counts)).tolist(), rel=1e-15)
    assert obj.alpha == "balanced"  # the original is unchanged (get_params as given)
    # Single rows are weighted as in training only once bound: one row alone is its
    # class's whole data set (weight n / K = 1/4 there).
    g_all, _ = obj.grad_hess(y, s)
    g_row, _ = bound.grad_hess(y[:1], s[:1])
    np.testing.assert_allclose(g_row, g_all[:1], rtol=1e-13)
    assert not np.allclose(obj.grad_hess(y[:1], s[:1])[0], g_all[:1])
    rep = check(obj, y[:40], s[:40])  # check() binds on the labels it is given
    assert rep.ok, str(rep)
    # A class absent from the labels weighs as a class of one row (finite, unused).
    assert obj.bind_data_defaults(np.array([0.0, 0.0, 1.0])).alpha == pytest.approx(
        [0.375, 0.75, 0.75, 0.75])
    assert FocalLoss(0.0, num_class=3).bind_data_defaults(y) is not None


@pytest.mark.parametrize("gamma", (0.0, 2.0))
def test_balanced_init_score(gamma):
    from scipy.optimize import minimize

    y, _ = _skewed(500)
    obj = FocalLoss(gamma, "balanced", num_class=4)
    c = obj.init_score(y)
    explicit = FocalLoss(gamma, obj.bind_data_defaults(y).alpha, num_class=4)
    np.testing.assert_allclose(c, explicit.init_score(y), rtol=0, atol=1e-9)
    if gamma == 0:  # every class weighs n / K in total: the uniform start, exactly
        np.testing.assert_allclose(c, 0.0, atol=1e-15)
    # It minimises the balanced loss of a constant (direct numerical minimisation).
    def f(v):
        return obj.loss(y, np.tile(v, (y.size, 1)))

    best = minimize(f, np.zeros(4), method="Nelder-Mead",
                    options={"xatol": 1e-10, "fatol": 1e-12, "maxiter": 20000}).x
    assert f(c) <= f(best) + 1e-9


def test_class_weighted_gamma0_init_score_is_the_weighted_log_frequency():
    y, _ = _skewed(500)
    alpha = [0.5, 2.0, 1.0, 4.0]
    c = FocalLoss(0.0, alpha, num_class=4).init_score(y)
    mass = np.bincount(y.astype(int), minlength=4) * np.array(alpha)
    np.testing.assert_allclose(predict_proba(c[None, :])[0], mass / mass.sum(), rtol=1e-12)
    assert c.sum() == pytest.approx(0.0, abs=1e-12)


def test_balanced_parameter_errors():
    obj = FocalLoss(alpha="balanced")  # binary: no K classes to balance
    assert obj.get_params()["alpha"] == "balanced"
    with pytest.raises(ValueError, match=r"alpha='balanced' weights the K classes of the "
                                         r"multiclass loss: set num_class"):
        obj.grad_hess([0.0, 1.0], [0.0, 0.0])
    with pytest.raises(ValueError, match=r"alpha must be one of .*'balanced'.*got 'balance'"):
        FocalLoss(alpha="balance", num_class=3).loss([0.0, 1.0], np.zeros((2, 3)))
    with pytest.raises(ValueError, match="alpha must be None, 'balanced' or 3 finite class "
                                         "weights"):
        FocalLoss(alpha=[1.0, 2.0], num_class=3).loss([0.0, 1.0], np.zeros((2, 3)))


# ---------------------------------------------------------------------------------------
# predict_proba and bad input


def test_predict_proba_stable():
    z = np.array([-1e4, -800.0, -30.0, 0.0, 30.0, 800.0, 1e4])
    with np.errstate(over="raise", invalid="raise", divide="raise"):
        p = predict_proba(z)
    np.testing.assert_allclose(p[2:5], [1 / (1 + math.exp(30)), 0.5, 1 / (1 + math.exp(-30))],
                               rtol=1e-15)
    assert p[0] == 0.0 and p[-1] == 1.0
    pm = predict_proba([[1000.0, -1000.0, 0.0], [0.0, 0.0, 0.0]])
    np.testing.assert_allclose(pm, [[1, 0, 0], [1 / 3, 1 / 3, 1 / 3]], rtol=1e-15)
    with pytest.raises(ValueError, match="NaN"):
        predict_proba([0.0, np.nan])


@pytest.mark.parametrize("kwargs, match", [
    ({"gamma": -0.1}, "gamma"),
    ({"gamma": np.nan}, "gamma"),
    ({"alpha": 0.0}, "alpha"),
    ({"alpha": 1.0}, "alpha"),
    ({"alpha": 1.5}, "alpha"),
    ({"alpha": -0.2}, "alpha"),
    ({"hess_floor": -1.0}, "hess_floor"),
    ({"num_class": 1}, "num_class"),
    ({"num_class": 3, "alpha": [0.5, 0.5]}, "one per class"),
    ({"num_class": 2, "alpha": [0.5, 0.0]}, "> 0"),
])
def test_bad_parameters(kwargs, match):
    # scikit-learn's contract: stored as given, validated where used.
    obj = FocalLoss(**kwargs)
    assert all(obj.get_params()[k] is v for k, v in kwargs.items())
    k = kwargs.get("num_class")
    y = np.array([0.0, 1.0])
    s = np.zeros((2, k)) if isinstance(k, int) and k >= 2 else np.zeros(2)
    with pytest.raises(ValueError, match=match):
        obj.grad_hess(y, s)


def test_alpha_error_names_value_and_range():
    with pytest.raises(ValueError, match=r"alpha must be a finite number in \(0, 1\), got 1\.5"):
        FocalLoss(alpha=1.5).loss([0.0, 1.0], [0.0, 0.0])


def test_task_follows_num_class():
    obj = FocalLoss()
    assert obj.task == "binary"
    assert obj.set_params(num_class=3).task == "multiclass"


@pytest.mark.parametrize("y", [[0, 1, 2], [-1, 0, 1], [0.5, 1, 0], [1, 1, np.nan]])
def test_bad_labels(y):
    obj = FocalLoss()
    s = np.zeros(3)
    for f in (obj.grad_hess, obj.exact_grad_hess, obj.loss):
        with pytest.raises(ValueError, match="labels"):
            f(np.asarray(y, dtype=np.float64), s)
    with pytest.raises(ValueError, match="labels"):
        obj.init_score(y)


def test_bad_scores_and_shapes():
    obj = FocalLoss()
    with pytest.raises(ValueError, match="NaN/inf"):
        obj.grad_hess(np.array([0.0, 1.0]), np.array([0.0, np.inf]))
    with pytest.raises(ValueError, match="rows"):
        obj.grad_hess(np.array([0.0, 1.0]), np.zeros(3))
    with pytest.raises(ValueError, match="weight"):
        obj.grad_hess(np.array([0.0, 1.0]), np.zeros(2), weight=[1.0])
    with pytest.raises(ValueError, match="non-negative"):
        obj.grad_hess(np.array([0.0, 1.0]), np.zeros(2), weight=[1.0, -1.0])
    mc = FocalLoss(num_class=3)
    with pytest.raises(ValueError, match=r"\[0, 3\)"):
        mc.grad_hess([0, 3], np.zeros((2, 3)))
    with pytest.raises(ValueError, match="shape"):
        mc.grad_hess([0, 1], np.zeros((2, 2)))


@pytest.mark.floors
def test_polynomial_exp_and_log1p_match_libm():
    from numba import njit

    from gbrank._kernels.focal import exp_neg, log1p_unit

    @njit
    def both(x):
        out = np.empty((2, x.size))
        for i in range(x.size):
            out[0, i] = exp_neg(x[i])
            out[1, i] = log1p_unit(np.exp(-x[i]))
        return out

    rng = np.random.default_rng(11)
    x = np.concatenate([np.abs(rng.standard_normal(200_000)) * 10, rng.random(50_000) * 745,
                        [0.0, 1e-300, 1e-12, 0.34657359, 0.34657360, 700.0, 745.0, 746.0]])
    e_ref = np.exp(-x)
    l_ref = np.log1p(e_ref)
    got = both(x)
    normal = e_ref > 1e-300  # subnormal results have fewer significant bits anyway
    assert np.max(np.abs(got[0] - e_ref)[normal] / e_ref[normal]) < 1e-15
    assert np.max(np.abs(got[1] - l_ref)[normal] / l_ref[normal]) < 1e-15
    assert got[0, -1] == 0.0 and np.all(np.isfinite(got))
