"""Position bias (learning from clicks) on RankNet and LambdaRank: the three corrections
against the slow reference (tests/reference/position_bias.py), finite differences with
the estimates frozen, unit factors, the state of one training (owned by the training,
never by the objective), parity with LightGBM's native position-bias lambdarank and
XGBoost's lambdarank_unbiased, bad input."""

from __future__ import annotations

import json
import re

import numpy as np
import pytest
from conftest import needs_lightgbm_positions
from reference import position_bias as ref
from sklearn.base import clone

import gbrank.lightgbm
from gbrank.datasets import make_ranking, multi_click_sessions, simulate_clicks
from gbrank.gradcheck import check
from gbrank.objectives import LambdaRank, PositionBias, RankNet
from gbrank.objectives._position_bias import PositionBiasTraining

lgb = pytest.importorskip("lightgbm")
xgb = pytest.importorskip("xgboost")

METHODS = ("ipw", "unbiased", "additive")


def _clicks(seed, n_queries=5):
    """Queries of 3..9 displayed rows, clicks 0/1 (at least one click and one non-click
    per query), positions 1..n in display order, scores with ties and spread."""
    rng = np.random.default_rng(seed)
    sizes = rng.integers(3, 10, size=n_queries)
    y, pos = [], []
    for m in sizes:
        c = (rng.random(m) < 0.4).astype(float)
        c[rng.integers(m)] = 1.0
        c[(np.flatnonzero(c == 0)[:1] if (c == 0).any() else [0])] = 0.0
        y.append(c)
        pos.append(np.arange(1, m + 1))
    y = np.concatenate(y)
    pos = np.concatenate(pos)
    s = rng.normal(size=y.size)
    return y, s, sizes, pos


def _estimates(method, seed, top=9):
    """Non-trivial frozen estimates for positions 1..top."""
    rng = np.random.default_rng(100 + seed)
    positions = np.arange(1, top + 1)
    if method == "unbiased":
        tp = np.r_[1.0, rng.uniform(0.2, 1.2, top - 1)]
        tm = np.r_[1.0, rng.uniform(0.5, 1.5, top - 1)]
        return PositionBias("unbiased", positions, t_plus=tp, t_minus=tm)
    return PositionBias("additive", positions, offsets=rng.normal(scale=0.5, size=top))


PROPENSITY = [1.0, 0.5, 1 / 3, 0.25, 0.2, 1 / 6, 1 / 7, 0.125, 1 / 9]

# Objectives and the reference's pair options for them (0/1 clicks: gains 0, 1).
GAIN = np.array([0.0, 1.0])
FORMS = [
    (lambda **kw: RankNet(**kw), dict(ranknet=True), False),
    (lambda **kw: LambdaRank(max_step=None, truncation=4, **kw),
     dict(ranknet=False, metric="ndcg", k=4, gain_tab=GAIN), False),
    (lambda **kw: LambdaRank(max_step=None, norm=True, **kw),
     dict(ranknet=False, metric="ndcg", k=30, gain_tab=GAIN), True),
    (lambda **kw: LambdaRank(max_step=None, metric="err", truncation=5, **kw),
     # ERR's default: gains (2^l - 1)/2^max, an NDCG smoothing share of 0.9
     dict(ranknet=False, metric="err", k=5, gain_tab=np.array([0.0, 0.5]), smooth=0.9),
     False),
    (lambda **kw: LambdaRank(max_step=None, weighting="ndcg_loss2pp", mu=2.0, **kw),
     dict(ranknet=False, metric="ndcg", k=30, gain_tab=GAIN, weighting="ndcg_loss2pp",
          mu=2.0), False),
]
FORM_IDS = ["ranknet", "lambdarank_k4", "lambdarank_norm", "err_k5", "ndcg_loss2pp"]


def _objective(make, method, **kw):
    if method == "ipw":
        kw.setdefault("propensity", PROPENSITY)
    return make(position_bias=method, **kw)


# -- the corrections against the slow reference ------------------------------------------


# The floors run (tests/conftest.py) keeps seed 0 of RankNet and of LambdaRank@4, each
# correction once on each kernel.
FROZEN = [pytest.param(form, method, seed, id=f"{seed}-{method}-{FORM_IDS[form]}",
                       marks=[pytest.mark.floors] if seed == 0 and form < 2 else [])
          for seed in (0, 1) for method in METHODS for form in range(len(FORMS))]


@pytest.mark.parametrize("form, method, seed", FROZEN)
def test_frozen_estimates_match_the_reference(form, method, seed):
    make, pair_kw, norm = FORMS[form]
    y, s, sizes, pos = _clicks(seed)
    obj = _objective(make, method, max_weight=4.0) if method == "ipw" else \
        _objective(make, method)
    est = None if method == "ipw" else _estimates(method, seed)
    if method == "ipw":
        rho = np.asarray(PROPENSITY)
        def factor(i, j): return min(1.0 / rho[pos[i] - 1], 4.0)
        s_ref = s
    elif method == "unbiased":
        def factor(i, j): return 1.0 / (est.t_plus[pos[i] - 1] * est.t_minus[pos[j] - 1])
        s_ref = s
    else:
        def factor(i, j): return 1.0
        s_ref = s + est.offsets[pos - 1]
    g_ref, h_ref, l_ref, _, _ = ref.factored(y, s_ref, sizes, factor=factor, norm=norm,
                                             **pair_kw)
    g, h = obj.exact_grad_hess(y, s, sizes, position=pos, estimates=est)
    np.testing.assert_allclose(g, g_ref, rtol=1e-10, atol=1e-12)
    np.testing.assert_allclose(h, h_ref, rtol=1e-10, atol=1e-12)
    assert obj.loss(y, s, sizes, position=pos, estimates=est) == pytest.approx(l_ref,
                                                                               rel=1e-10)
    # the factors matter: the plain objective differs
    g_plain, _ = make().exact_grad_hess(y, s, sizes)
    assert np.abs(g - g_plain).max() > 1e-3


@pytest.mark.parametrize("form", [0, 1, 2], ids=FORM_IDS[:3])
@pytest.mark.parametrize("cost", ["paper", "xgboost"])
def test_unbiased_rounds_update_ratios_as_the_reference(form, cost):
    make, pair_kw, norm = FORMS[form]
    y, s, sizes, pos = _clicks(3, n_queries=8)
    obj = make(position_bias="unbiased", bias_cost=cost, bias_norm=0.5)
    slot = pos - 1
    tp, tm = np.ones(9), np.ones(9)
    run = obj.position_bias_training(pos)
    rng = np.random.default_rng(4)
    for _ in range(3):
        preds = s + rng.normal(scale=0.3, size=s.size)
        # a ratio of 0 (XGBoost's cost on a position without pairs) is not used
        u = np.divide(1.0, tp, out=np.zeros(9), where=tp >= 1e-16)[slot]
        v = np.divide(1.0, tm, out=np.zeros(9), where=tm >= 1e-16)[slot]

        def factor(i, j, u=u, v=v):
            return u[i] * v[j] if u[i] > 0 and v[j] > 0 else 1.0

        g_ref, h_ref, _, plus, minus = ref.factored(
            y, preds, sizes, factor=factor, norm=norm,
            cost_sign=+1 if cost == "xgboost" else -1, slot=slot, n_slots=9, u=u, v=v,
            **pair_kw)
        g, h = run.grad_hess(y, preds, sizes, None)
        np.testing.assert_allclose(g, g_ref, rtol=1e-10, atol=1e-12)
        np.testing.assert_allclose(h, h_ref, rtol=1e-10, atol=1e-12)
        tp, tm = ref.unbiased_update(plus, minus, tp, tm, 0.5, keep_empty=cost == "paper")
        np.testing.assert_allclose(run.estimates.t_plus, tp, rtol=1e-10)
        np.testing.assert_allclose(run.estimates.t_minus, tm, rtol=1e-10)
    assert np.ptp(tp) > 0.05  # the ratios moved
    assert run.estimates.rounds == 3
    assert "position_bias_" not in obj.__dict__  # the objective learned nothing


@pytest.mark.parametrize("lam", [0.0, 2.0])
def test_additive_rounds_move_offsets_as_the_reference(lam):
    make, pair_kw, norm = FORMS[2]
    y, s, sizes, pos = _clicks(5, n_queries=8)
    obj = make(position_bias="additive", position_bias_regularization=lam)
    b = np.zeros(9)
    run = obj.position_bias_training(pos, learning_rate=0.3)
    for r in range(3):
        preds = s * (1 + 0.1 * r)
        g_ref, h_ref, _, _, _ = ref.factored(y, preds + b[pos - 1], sizes,
                                             factor=lambda i, j: 1.0, norm=norm, **pair_kw)
        g, h = run.grad_hess(y, preds, sizes, None)
        np.testing.assert_allclose(g, g_ref, rtol=1e-10, atol=1e-12)
        b = ref.additive_update(g_ref, h_ref, pos - 1, b, 0.3, lam)
        shown = np.unique(pos) - 1  # the estimates cover the positions that occur
        np.testing.assert_allclose(run.estimates.offsets, b[shown], rtol=1e-9,
                                   atol=1e-12)
    assert np.abs(b).max() > 0.01


def test_ipw_rounds_learn_nothing_and_report_the_propensities():
    y, s, sizes, pos = _clicks(6)
    obj = LambdaRank(position_bias="ipw", propensity={p: 1.0 / p for p in range(1, 10)})
    run = obj.position_bias_training(pos)
    g1, _ = run.grad_hess(y, s, sizes, None)
    g0, _ = obj.grad_hess(y, s, sizes, position=pos)
    np.testing.assert_array_equal(g1, g0)
    est = run.estimates
    np.testing.assert_allclose(est.propensity, 1.0 / est.positions)
    assert est.positions.tolist() == sorted(set(pos.tolist()))


# -- finite differences with the estimates frozen -------------------------------------------


@pytest.mark.parametrize("form", range(len(FORMS)), ids=FORM_IDS)
@pytest.mark.parametrize("method", METHODS)
def test_gradient_check_with_estimates_frozen(form, method):
    make = FORMS[form][0]
    y, s, sizes, pos = _clicks(7)
    obj = _objective(make, method)
    est = None
    if method != "ipw":
        # estimates learned by a few rounds, then frozen
        run = obj.position_bias_training(pos, learning_rate=0.5)
        for r in range(3):
            run.grad_hess(y, s * 0.5 * r, sizes, None)
        est = run.estimates
        assert est.rounds == 3
    report = check(obj, y, s, sizes, position=pos, estimates=est)
    assert report.ok, str(report)


# -- unit factors reproduce the plain objective ---------------------------------------------


@pytest.mark.parametrize("form", range(len(FORMS)), ids=FORM_IDS)
@pytest.mark.parametrize("method", METHODS)
def test_unit_factors_reproduce_the_plain_objective(form, method):
    make = FORMS[form][0]
    y, s, sizes, pos = _clicks(8)
    kw = {"propensity": [1.0] * 9} if method == "ipw" else {}
    obj = make(position_bias=method, **kw)
    g0, h0 = make().grad_hess(y, s, sizes)
    g, h = obj.grad_hess(y, s, sizes, position=pos)
    np.testing.assert_allclose(g, g0, rtol=1e-13, atol=1e-15)
    np.testing.assert_allclose(h, h0, rtol=1e-13, atol=1e-15)
    assert obj.loss(y, s, sizes, position=pos) == pytest.approx(make().loss(y, s, sizes),
                                                                rel=1e-13)
    # the first boosting round too (fresh estimates: unit ratios, zero offsets)
    g1, h1 = obj.position_bias_training(pos, learning_rate=0.1).grad_hess(y, s, sizes, None)
    np.testing.assert_allclose(g1, g0, rtol=1e-13, atol=1e-15)
    np.testing.assert_allclose(h1, h0, rtol=1e-13, atol=1e-15)


# -- state of one training run ------------------------------------------------------------


@pytest.fixture(scope="module")
def click_log():
    X, y, g = make_ranking(n_queries=60, rows_per_query=20, n_features=5, seed=0)
    rng = np.random.default_rng(1)
    weak = X[:, 0] + rng.normal(size=y.size)
    summed = simulate_clicks(y, g, weak, top_n=10, n_sessions=5, seed=2)
    kept = simulate_clicks(y, g, weak, top_n=10, n_sessions=1, sessions="keep", seed=2)
    return {"summed": (X[summed.rows], summed.clicks, summed.group, summed.position),
            "kept": (X[kept.rows], kept.clicks, kept.group, kept.position)}


LGB_BASE = {"verbose": -1, "num_threads": 1, "learning_rate": 0.1, "min_data_in_leaf": 5,
            "deterministic": True, "force_row_wise": True}


@pytest.mark.parametrize("method", METHODS)
def test_same_objective_twice_gives_identical_models(click_log, method):
    X, y, g, pos = click_log["kept"]
    obj = _objective(lambda **kw: LambdaRank(norm=True, **kw), method,
                     propensity=[1.0 / p for p in range(1, 11)])
    before = obj.get_params()
    f = gbrank.lightgbm.objective(obj, position=pos)
    models, estimates = [], []
    for _ in range(2):
        booster = lgb.train({**LGB_BASE, "objective": f}, lgb.Dataset(X, y, group=g), 5)
        models.append(booster.predict(X, raw_score=True))
        estimates.append(f.position_bias_)
    np.testing.assert_array_equal(models[0], models[1])
    assert estimates[0] is not estimates[1]
    assert estimates[0].as_dict() == estimates[1].as_dict()
    assert estimates[1].rounds == 5  # each training starts fresh
    assert estimates[1].positions.tolist() == list(range(1, 11))
    if method != "ipw":
        # the estimates moved, and they are not part of the prediction
        values = estimates[1].t_plus if method == "unbiased" else estimates[1].offsets
        assert np.ptp(values) > 1e-3
    # the objective stayed a set of parameters: nothing learned on it
    assert obj.get_params() == before
    assert not [k for k in vars(obj) if k.endswith("_") and not k.startswith("_")]
    fresh = clone(obj)
    assert fresh.get_params() == obj.get_params()


def test_one_objective_in_two_threads_gives_identical_models(click_log):
    """Two trainings at once with one objective object (each with its own adapter), and a
    pickled copy: the same model as one training alone."""
    import pickle
    from concurrent.futures import ThreadPoolExecutor

    X, y, g, pos = click_log["kept"]
    obj = LambdaRank(position_bias="unbiased", bias_norm=1.0)

    def fit(o):
        f = gbrank.lightgbm.objective(o, position=pos)
        b = lgb.train({**LGB_BASE, "objective": f}, lgb.Dataset(X, y, group=g), 8)
        return b.predict(X, raw_score=True), f.position_bias_

    alone, est = fit(obj)
    with ThreadPoolExecutor(2) as pool:
        both = list(pool.map(fit, [obj, obj]))
    for pred, e in both:
        np.testing.assert_array_equal(pred, alone)
        assert e.as_dict() == est.as_dict()
    again, _ = fit(pickle.loads(pickle.dumps(obj)))
    np.testing.assert_array_equal(again, alone)


def test_get_params_set_params_and_clone(click_log):
    obj = LambdaRank(position_bias="unbiased", bias_norm=1.0, bias_cost="xgboost")
    params = obj.get_params()
    for name in ("position_bias", "propensity", "max_weight", "bias_norm", "bias_cost",
                 "position_bias_regularization", "position_bias_learning_rate", "groupless"):
        assert name in params
    assert params["bias_norm"] == 1.0 and params["bias_cost"] == "xgboost"
    X, y, g, pos = click_log["kept"]
    f = gbrank.lightgbm.objective(obj, position=pos)
    lgb.train({**LGB_BASE, "objective": f}, lgb.Dataset(X, y, group=g), 2)
    assert f.position_bias_.rounds == 2
    obj.set_params(position_bias="additive", position_bias_regularization=1.0)
    assert obj.get_params()["position_bias_regularization"] == 1.0
    r = RankNet(position_bias="ipw", propensity={1: 1.0, 2: 0.5})
    assert clone(r).get_params()["propensity"] == {1: 1.0, 2: 0.5}


# -- parity with the native implementations -------------------------------------------------


def _lightgbm_logged_offsets(lines):
    """The offsets LightGBM's debug log prints after each round (its only output of them)."""
    rounds, cur = [], None
    for line in lines:
        if "bias_factor" in line:
            cur = []
            rounds.append(cur)
            continue
        m = re.match(r"\[LightGBM\] \[Debug\]\s+(\d+)\s+(\S+)$", line.strip())
        if cur is not None and m:
            cur.append(float(m.group(2)))
        elif cur is not None and cur:
            cur = None
    return [np.array(r) for r in rounds]


class _Log:
    def __init__(self):
        self.lines = []

    def info(self, msg):
        self.lines.append(msg)

    def warning(self, msg):
        self.lines.append(msg)


@pytest.mark.floors
def test_additive_reproduces_lightgbm_native_position_bias(click_log):
    needs_lightgbm_positions()
    """LightGBM's lambdarank with lambdarank_position_bias_regularization (norm,
    truncation 30, exponential gains) vs LambdaRank(norm=True, max_step=None,
    position_bias="additive"): same trees for 10 rounds; predictions agree to LightGBM's
    tabulated sigmoid, offsets to its float32 storage."""
    X, y, g, pos = click_log["summed"]
    lam = 0.5
    log = _Log()
    lgb.register_logger(log)
    try:
        native = lgb.train({**LGB_BASE, "verbose": 2, "objective": "lambdarank",
                            "lambdarank_position_bias_regularization": lam},
                           lgb.Dataset(X, y, group=g, position=pos), 10)
    finally:
        lgb.register_logger(_Silent())
    obj = LambdaRank(norm=True, max_step=None, position_bias="additive",
                     position_bias_regularization=lam)
    f = gbrank.lightgbm.objective(obj, position=pos)
    ours = lgb.train({**LGB_BASE, "objective": f},
                     lgb.Dataset(X, y, group=g, position=pos), 10)
    p_native = native.predict(X, raw_score=True)
    p_ours = ours.predict(X, raw_score=True)
    assert np.abs(p_native).max() > 0.5
    # measured: 1.9e-5 (predictions up to 1.5), 1.4e-6 (offsets)
    np.testing.assert_allclose(p_ours, p_native, rtol=0, atol=5e-5)
    logged = _lightgbm_logged_offsets(log.lines)
    assert len(logged) == 10
    np.testing.assert_allclose(f.position_bias_.offsets, logged[-1], rtol=0, atol=1e-5)
    assert np.ptp(logged[-1]) > 0.1


class _Silent:
    def info(self, msg):
        pass

    def warning(self, msg):
        pass


@pytest.mark.floors
@pytest.mark.parametrize("rounds", [1, 2, 5])
def test_unbiased_reproduces_xgboost_lambdarank_unbiased(click_log, rounds):
    """XGBoost's rank:ndcg with lambdarank_unbiased (topk pairs, 10 per sample, its
    default bias norm 1, score normalization and log2 normalization) vs
    LambdaRank(norm=True, truncation=10, position_bias="unbiased", bias_norm=1,
    bias_cost="xgboost"). XGBoost's Hessian is twice the pair loss's second
    derivative: with reg_lambda=0 and min_child_weight=0 half its eta grows the same trees."""
    X, y, g, pos = click_log["kept"]
    base = {"nthread": 1, "max_depth": 3, "base_score": 0.0, "tree_method": "hist",
            "reg_lambda": 0.0, "min_child_weight": 0.0}
    dn = xgb.DMatrix(X, y, group=g)
    native = xgb.train({**base, "eta": 0.1, "objective": "rank:ndcg",
                        "lambdarank_pair_method": "topk", "lambdarank_num_pair_per_sample": 10,
                        "lambdarank_unbiased": True}, dn, rounds)
    cfg = json.loads(native.save_config())["learner"]["objective"]
    from gbrank.xgboost import objective

    obj = LambdaRank(norm=True, truncation=10, max_step=None, position_bias="unbiased",
                     bias_norm=1.0, bias_cost="xgboost")
    do = xgb.DMatrix(X, y, group=g)
    f = objective(obj, position=pos)
    ours = xgb.train({**base, "eta": 0.05}, do, rounds, obj=f)
    tp = np.asarray(cfg["ti+"], dtype=float)[:10]
    tm = np.asarray(cfg["tj-"], dtype=float)[:10]
    est = f.position_bias_
    assert est.rounds == rounds
    # measured: 3e-8 (ti+) and 1.5e-7 (tj-) after 5 rounds
    np.testing.assert_allclose(est.t_plus, tp, rtol=0, atol=1e-6)
    np.testing.assert_allclose(est.t_minus, tm, rtol=0, atol=1e-6)
    assert np.ptp(tp) > 0.1
    np.testing.assert_allclose(ours.predict(do, output_margin=True),
                               native.predict(dn, output_margin=True), rtol=0, atol=1e-5)


# -- bad input ---------------------------------------------------------------------------


@pytest.mark.parametrize("make", [RankNet, LambdaRank])
def test_bad_input_names_the_problem(make):
    y, s, sizes, pos = _clicks(9)
    obj = make(position_bias="unbiased")
    with pytest.raises(ValueError, match="position has 3 entries but there are"):
        obj.grad_hess(y, s, sizes, position=pos[:3])
    with pytest.raises(ValueError, match="needs positions"):
        obj.grad_hess(y, s, sizes)
    neg = pos.copy()
    neg[2] = -1
    with pytest.raises(ValueError, match="integer positions"):
        obj.grad_hess(y, s, sizes, position=neg)
    with pytest.raises(ValueError, match="integer positions"):
        obj.grad_hess(y, s, sizes, position=pos + 0.5)
    with pytest.raises(ValueError, match="probabilities in \\(0, 1\\]"):
        make(position_bias="ipw", propensity=[1.0, 0.0]).grad_hess(y, s, sizes, position=pos)
    with pytest.raises(ValueError, match="probabilities in \\(0, 1\\]"):
        make(position_bias="ipw", propensity={1: 1.0, 2: -0.5}).grad_hess(
            y, s, sizes, position=pos)
    with pytest.raises(ValueError, match="5 entries but position 6 occurs"):
        make(position_bias="ipw", propensity=[1.0] * 5).grad_hess(y, s, sizes, position=pos)
    with pytest.raises(ValueError, match="no value for position 3, which occurs"):
        make(position_bias="ipw", propensity={p: 1 / p for p in range(1, 10) if p != 3}
             ).grad_hess(y, s, sizes, position=pos)
    with pytest.raises(ValueError, match="needs propensity="):
        make(position_bias="ipw").grad_hess(y, s, sizes, position=pos)
    graded = y.copy()
    graded[0] = 2.0
    for method in ("ipw", "unbiased"):
        with pytest.raises(ValueError, match=f"position_bias='{method}' needs clicks"):
            _objective(make, method).grad_hess(graded, s, sizes, position=pos)
    # additive takes any grades
    make(position_bias="additive").grad_hess(graded, s, sizes, position=pos)
    with pytest.raises(ValueError, match="position_bias must be one of|position_bias"):
        make(position_bias="ips").grad_hess(y, s, sizes, position=pos)


@pytest.mark.floors
def test_lightgbm_without_positions_is_refused(click_log):
    X, y, g, pos = click_log["kept"]
    with pytest.raises(ValueError, match="LightGBM passes the objective no positions"):
        lgb.train({**LGB_BASE, "objective": LambdaRank(position_bias="unbiased")},
                  lgb.Dataset(X, y, group=g), 1)
    # LightGBM's scikit-learn API passes no positions
    with pytest.raises(ValueError, match="gbrank.lightgbm.objective"):
        lgb.LGBMRanker(objective=LambdaRank(position_bias="unbiased"), n_estimators=1,
                       verbose=-1).fit(X, y, group=g)
    # ... unless the objective carries them
    f = gbrank.lightgbm.objective(LambdaRank(position_bias="unbiased"), position=pos)
    lgb.LGBMRanker(objective=f, n_estimators=2, verbose=-1).fit(X, y, group=g)
    assert f.position_bias_.rounds == 2
    with pytest.raises(ValueError, match="needs every training row's display position"):
        gbrank.lightgbm.objective(LambdaRank(position_bias="ipw", propensity=[1.0] * 10))
    with pytest.raises(ValueError, match="position= is for an objective with position_bias"):
        gbrank.lightgbm.objective(LambdaRank(), position=pos)


@pytest.mark.parametrize("booster", ["lightgbm", "xgboost"])
def test_a_cascade_users_log_is_refused_by_default_and_a_position_based_one_is_not(booster):
    """Users who stop after a click break the position-based model every correction
    assumes (docs/evidence.md: each made the model worse than none on such a log). The
    sign is counted by hand: no session with two clicks, where independent examination
    of the positions at the log's click rates gives a third or more. By default the
    training refuses with that figure; on_cascade='warn' trains and warns, 'ignore'
    trains silently; a position-based user's log trains in every case."""
    import warnings

    import gbrank.xgboost

    X, y, g = make_ranking(n_queries=100, rows_per_query=20, n_features=6, seed=0)

    def train(user, method, **opts):
        """The cascade messages raised or warned, and the rounds trained."""
        log = simulate_clicks(y, g, X[:, 0], top_n=10, user=user, n_sessions=5,
                              sessions="keep", seed=0)
        kw = {"propensity": list(log.examination)} if method == "ipw" else {}
        obj = LambdaRank(position_bias=method, **kw, **opts)
        Xc = X[log.rows]
        if user == "cascade":  # by hand: at most one click in every session
            starts = np.r_[0, np.cumsum(log.group)[:-1]]
            assert np.add.reduceat(log.clicks, starts).max() == 1
        with warnings.catch_warnings(record=True) as w:
            warnings.simplefilter("always")
            try:
                if booster == "lightgbm":
                    f = gbrank.lightgbm.objective(obj, position=log.position,
                                                  learning_rate=0.1)
                    lgb.train({"objective": f, "verbose": -1},
                              lgb.Dataset(Xc, log.clicks, group=log.group), 2)
                else:
                    f = gbrank.xgboost.objective(obj, position=log.position,
                                                 learning_rate=0.1)
                    xgb.train({"verbosity": 0},
                              xgb.DMatrix(Xc, log.clicks, group=log.group), 2, obj=f)
            except ValueError as exc:
                assert "cascade users" in str(exc)
                return ("raised", str(exc)), getattr(f.position_bias_, "rounds", 0)
        found = [x for x in w if "cascade users" in str(x.message)]
        # Attributed to the user's line (here: the train call above), not a booster's.
        assert all(x.filename == __file__ for x in found), [x.filename for x in found]
        return (("warned", str(found[0].message)) if found else ("trained", ""),
                f.position_bias_.rounds)

    for method in METHODS:
        assert train("position", method) == (("trained", ""), 2)
        (kind, msg), rounds = train("cascade", method)
        assert kind == "raised" and rounds == 0
        assert f"position_bias={method!r}" in msg and "0.0% of those with a click" in msg
        assert "Train without position_bias" in msg and "on_cascade='warn'" in msg
        (kind, msg), rounds = train("cascade", method, on_cascade="warn")
        assert kind == "warned" and rounds == 2 and "0.0% of those with a click" in msg
        assert "pass on_cascade" not in msg
        assert train("cascade", method, on_cascade="ignore") == (("trained", ""), 2)
    with pytest.raises(ValueError, match="on_cascade"):
        LambdaRank(position_bias="ipw", propensity=[1.0], on_cascade="maybe").grad_hess(
            [1.0, 0.0], [0.0, 0.0], position=[1, 2])


def _multi_click_shares(clicks, group, position):
    """By hand, session by session: the share of sessions with a click that have two or
    more, and that share under independent clicks at the log's per-position rates."""
    rate = {}
    for p in np.unique(position):
        rate[p] = clicks[position == p].mean()
    seen_two = seen_any = exp_two = exp_any = 0.0
    start = 0
    for m in group:
        c, pos = clicks[start:start + m], position[start:start + m]
        start += m
        seen_two += c.sum() >= 2
        seen_any += c.sum() >= 1
        ps = [min(rate[p], 1 - 1e-9) for p in pos]
        none = np.prod([1 - q for q in ps])
        one = sum(q * np.prod([1 - r for j, r in enumerate(ps) if j != i])
                  for i, q in enumerate(ps))
        exp_two += 1 - none - one
        exp_any += 1 - none
    return seen_two / seen_any, exp_two / exp_any


def test_the_cascade_check_follows_the_ratio_of_multi_click_sessions():
    """Sessions of a position-based log thinned to one click in a growing share: the
    public figure (multi_click_sessions) equals the one counted by hand, and the
    training refuses exactly when the share of sessions with two clicks falls below a
    quarter of what independent clicks give, on both sides of it."""
    X, y, g = make_ranking(n_queries=100, rows_per_query=20, n_features=6, seed=1)
    log = simulate_clicks(y, g, X[:, 0], top_n=10, n_sessions=5, sessions="keep", seed=2)
    starts = np.r_[0, np.cumsum(log.group)[:-1]]
    rng = np.random.default_rng(0)
    outcomes = set()
    for thin in (0.0, 0.6, 0.75, 0.85, 0.95):
        clicks = log.clicks.astype(float).copy()
        for s0, m in zip(starts, log.group, strict=True):
            c = clicks[s0:s0 + m]
            if c.sum() >= 2 and rng.random() < thin:
                c[np.flatnonzero(c)[1:]] = 0.0  # keep the first click only
        seen, expected = _multi_click_shares(clicks, log.group, log.position)
        public = multi_click_sessions(clicks, log.group, log.position)
        assert public.seen == pytest.approx(seen, abs=1e-12)
        assert public.independent == pytest.approx(expected, abs=1e-12)
        session = np.repeat(np.arange(log.group.size), log.group)
        assert multi_click_sessions(clicks, position=log.position, session=session) == public
        run = PositionBiasTraining(LambdaRank(position_bias="unbiased"), log.position)
        try:
            run.grad_hess(clicks, np.zeros(clicks.size), log.group)
            refused = False
        except ValueError as exc:
            assert f"{seen:.1%} of those with a click" in str(exc)
            refused = True
        assert refused == (seen < 0.25 * expected) == public.cascade_like, (thin, seen)
        outcomes.add(refused)
    assert outcomes == {True, False}


def test_multi_click_sessions_names_what_it_needs():
    with pytest.raises(ValueError, match="0 or 1 per displayed row") as err:
        multi_click_sessions([2, 0], [2], [1, 2])
    # The way round names the sessions, not a correction (this is a diagnostic).
    assert "sessions='keep'" in str(err.value) and "additive" not in str(err.value)
    with pytest.raises(ValueError, match="needs position="):
        multi_click_sessions([1, 0], [2])
    with pytest.raises(ValueError, match="needs the sessions"):
        multi_click_sessions([1, 0], position=[1, 2])
    with pytest.raises(ValueError, match="not contiguous"):
        multi_click_sessions([1, 0, 1], position=[1, 1, 2], session=[0, 1, 0])
    assert multi_click_sessions([0, 0], [2], [1, 2]) is None  # no session with a click
    with pytest.raises(ValueError, match="one of them"):
        multi_click_sessions([1, 0], [2], [1, 2], session=[0, 0])


def test_a_querys_sessions_in_one_group_are_warned_about():
    """Groups that are queries (their sessions one after another) show positions twice:
    a cascade user's log grouped so cannot be read per session, so its figure is None —
    and the corrections trained on it silently, pairing rows across sessions (a
    document with itself) past the cascade check (eleventh probe). Warned, naming a
    group per session (a grid session shows several rows per position id, which is
    legitimate: not refused); with one group per session, the cascade log is refused."""
    X, y, g = make_ranking(n_queries=100, rows_per_query=20, n_features=6, seed=0)
    log = simulate_clicks(y, g, X[:, 0], top_n=10, user="cascade", n_sessions=5,
                          sessions="keep", seed=0)
    assert multi_click_sessions(log.clicks, log.group, log.position).cascade_like
    by_query = np.bincount(log.qid)[np.unique(log.qid)]  # sessions of a query together
    assert np.all(np.diff(log.qid) >= 0) and by_query.sum() == log.clicks.size
    assert multi_click_sessions(log.clicks, by_query, log.position) is None
    for method in ("ipw", "unbiased", "additive"):
        extra = {"propensity": 1.0 / np.arange(1, 11)} if method == "ipw" else {}
        run = PositionBiasTraining(
            LambdaRank(position_bias=method, position_bias_learning_rate=0.1, **extra),
            log.position)
        with pytest.warns(UserWarning, match=rf"group 0 shows position 1 on 5 rows, and "
                          rf"position_bias='{method}' reads each group as one session.*"
                          "give one group per session"):
            run.grad_hess(log.clicks, np.zeros(log.clicks.size), by_query)
        run = PositionBiasTraining(
            LambdaRank(position_bias=method, position_bias_learning_rate=0.1, **extra),
            log.position)
        with pytest.raises(ValueError, match="cascade users"):
            run.grad_hess(log.clicks, np.zeros(log.clicks.size), log.group)


def test_distributed_workers_make_the_same_reductions_whatever_their_rows():
    """The cascade check's reductions are collective: a worker whose rows cannot be read
    as sessions (no groups, counts, nothing) must make the same calls as one whose rows
    can, or the workers' later reductions (the estimates' updates) would pair wrongly."""
    X, y, g = make_ranking(n_queries=30, rows_per_query=12, n_features=4, seed=3)
    log = simulate_clicks(y, g, X[:, 0], top_n=8, n_sessions=3, sessions="keep", seed=1)

    def calls(clicks, group, method="unbiased"):
        seen = []

        def reduce(a, op):
            seen.append((op, np.shape(a)))
            return a

        kw = {"propensity": list(log.examination)} if method == "ipw" else {}
        run = PositionBiasTraining(LambdaRank(position_bias=method, **kw), log.position,
                                   reduce=reduce, learning_rate=0.1)
        run.grad_hess(clicks, np.zeros(clicks.size), group)
        return seen

    for method in METHODS:
        base = calls(log.clicks, log.group, method)
        assert calls(log.clicks, None, method) == base
        if method == "additive":  # the one that takes any labels (ipw, unbiased: 0/1)
            assert calls(2.0 * log.clicks, log.group, method) == base
