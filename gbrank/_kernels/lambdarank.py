"""LambdaRank: RankNet pairs weighted by |ΔZ|, only pairs with the higher-ranked row
in the top k. O(n log n + n·k) per query (one ordering, then k rows against the rest;
queries of up to ``RANK_SORT_MAX`` rows are ordered by counting ranks, O(n²) branch-free
comparisons, which beat a comparison sort at that size). Longer queries whose weights
read no rank below k go to :mod:`~gbrank._kernels.lambdarank_long` (O(n·k), no sort, no
n-row scratch); longer NDCG queries whose weights read every rank (LightGBM's discount,
the LambdaLoss weightings, or a truncation of at least half the query) to
:mod:`~gbrank._kernels.lambdarank_ranked` (an int32 radix order, pairs in blocks of
positions); the rest (ERR, MAP, MRR truncated at half the query or deeper) to NumPy's
argsort, as does the local loss. Queries run in chunks with scratch allocated once per
chunk, serial or threaded by ``_threads.dispatch``; one long query alone runs its blocks
on threads.

One kernel serves gradients and the local loss: the ranking, |ΔZ| and the optional
LightGBM rescalings are taken at scores ``at``; the pair terms at scores ``s``
(``at is s`` when the booster asks for gradients).

Pair weights other than |ΔZ| (docs/contract.md, "LambdaLoss weightings"; ranks r from 1, D(r) =
log2(1 + r), G = gain / IDCG@k, the pair (i, j) with l_i > l_j):

- ``LOSS1``: w_ij = G_i / D(r_i) (NDCG-Loss1: a weight of the higher-labelled row);
- ``LOSS2``: w_ij = |G_i − G_j| · (1/D(|r_i − r_j|) − 1/D(|r_i − r_j| + 1));
- ``LOSS2PP``: μ · (the LOSS2 weight) + |ΔNDCG_ij|;

and the smoothing mixture w = (1 − α)|ΔZ| + α |ΔNDCG| (α = ``smooth``), which keeps a
share of NDCG's dense signal under a sparse Z (ERR, MAP, MRR); under Z = NDCG the
mixture is |ΔZ| itself, and ``smooth`` is 0. All are frozen at the ranking of ``at``,
like |ΔZ|, so the local loss and its gradient check are unchanged.

The pair term (λ and h of one pair from its weight) and NDCG's weights are written once,
in :mod:`~gbrank._kernels._pair`, and inlined into every pair loop here and in the
long-query kernels.

Compiled forms: the metric and whether a query is too long for the counting sort are
constants of the query loop that :func:`_forms` makes per metric (closures over them,
each cached by numba on its own); the weighting and the smoothing share are run-time
arguments of that loop, which calls its gradient sweep, the pair loop of one query,
through a pointer: :func:`_sweep_form` compiles one sweep per metric, weighting and
smoothing flag (a ``cfunc`` of one signature for all, so they share the loop). A call
thus compiles its metric's loop once and its own sweep, nothing of the other options.
"""

import numpy as np
from numba import njit, prange, types
from numba.core.errors import TypingError
from numba.extending import overload

from gbrank._kernels import _threads
from gbrank._kernels._order import RANK_ORDER_MAX, rank_order_into
from gbrank._kernels._pair import ndcg_pairs, ndcg_weight, pair_update, rho_rows, rho_spread
from gbrank._kernels._sigmoid import row_exponentials_into, softplus
from gbrank._kernels._threads import N_CHUNKS, chunk_bounds, dispatch
from gbrank._kernels._topk import BUFFER_MAX_K
from gbrank._kernels._variant import compile_variant
from gbrank._kernels.delta import (
    ERR,
    LAMBDARANK,
    LGB_NORM_EPS,
    LOSS1,
    LOSS2,
    LOSS2PP,
    MAP,
    NDCG,
    discounts,
    pair_delta,
    prefix_arrays,
)
from gbrank._kernels.lambdarank_long import long_query, long_query_grad_hess
from gbrank._kernels.lambdarank_ranked import ranked_query, ranked_query_grad_hess

# The gradient sweeps are compiled with these options. error_model="numpy": a float
# division may not raise, so the pair loop has no branch for it; with the loop written
# over slices that start at 0 (no negative-index wraparound to check) LLVM vectorises it.
_LOOP_OPTIONS = {"fastmath": True, "error_model": "numpy", "nogil": True}

# The signature every gradient sweep is compiled for (:func:`_sweep_form`):
# (m, k, lab, sa, e, pre, sc, tail, pre_n, sc_n, disc, sigma, score_norm, mu, smooth, g, h)
# -> S. The query loop takes a sweep as a first-class function of this type, so one
# compiled loop serves every weighting and smoothing share of its metric.
_VEC = types.float64[::1]
_MAT = types.float64[:, ::1]
_SWEEP_SIGNATURE = types.float64(types.int64, types.int64, _VEC, _VEC, _VEC, _MAT, _VEC, _VEC,
                                 _MAT, _VEC, _VEC, types.float64, types.boolean,
                                 types.float64, types.float64, _VEC, _VEC)


def _ndcg_sweep_code(SCHEME):  # noqa: N803
    """The gradient sweep of one NDCG query under weighting ``SCHEME`` (|ΔNDCG| or a
    LambdaLoss scheme with ``mu``; ``disc`` the untruncated discounts, which only
    those read): every top position a < m against the positions below it
    (:func:`~gbrank._kernels._pair.ndcg_pairs`) into ``g``, ``h``; returns
    S = Σ 2σwρ for the norm. A closure over ``SCHEME``: that scheme's weight alone,
    branch-free, vectorised. ``k``, ``tail``, ``pre_n``, ``sc_n`` and ``smooth`` are
    unread (the signature is every sweep's)."""

    def sweep(m, k, lab, sa, e, pre, sc, tail, pre_n, sc_n, disc, sigma, score_norm, mu,
              smooth, g, h):
        n = lab.size
        p0 = pre[0]
        p1 = pre[1]
        c = sc[0]
        total = 0.0
        for a in range(m):
            x1 = p1[a]
            gs, hs, tot = ndcg_pairs(SCHEME, mu, True, lab[a], e[a], sa[a], p0[a], x1,
                                     x1 * c * disc[a], c, lab[a + 1:], sa[a + 1:],
                                     e[a + 1:], p1[a + 1:n], p0[a + 1:n], disc[a + 1:n],
                                     disc[0:n - a - 1], disc[1:n - a], sigma, score_norm,
                                     g[a + 1:], h[a + 1:])
            g[a] += gs
            h[a] += hs
            total += 2.0 * tot
        return total

    return sweep


def _sweep_code(M, S):  # noqa: N803
    """The gradient sweep of one query for metric ``M`` (ERR, MAP or MRR) and smoothing
    flag ``S``, as :func:`_ndcg_sweep_code`: without data-dependent branches for ERR
    and MAP (|ΔZ| written branch-free and masked by l_a ≠ l_b), so LLVM can vectorise
    it; MRR keeps the generic |ΔZ|. With ``S`` the weight is
    (1 − smooth)|ΔZ| + smooth |ΔNDCG| (NDCG's arrays ``pre_n``, ``sc_n``). A closure
    over both: the other metrics' code, and without ``S`` the smoothing term, are
    dropped before typing (a run-time smoothing flag would slow the plain loop,
    docs/performance.md). ``tail``: scratch of at least n entries for ERR and MAP;
    ``disc`` and ``mu`` are unread."""

    def sweep(m, k, lab, sa, e, pre, sc, tail, pre_n, sc_n, disc, sigma, score_norm, mu,
              smooth, g, h):
        n = lab.size
        total = 0.0
        # ERR / MAP terms of rank B that exist only for B ≤ k, as arrays (0 beyond k).
        if M == ERR or M == MAP:
            tail[:n] = 0.0
        if M == ERR:
            for b in range(min(k, n)):
                tail[b] = pre[1, b] / (b + 1.0)
        elif M == MAP:
            for b in range(min(k, n)):
                tail[b] = pre[1, b + 1] / (b + 1.0)
        p0 = pre[0]
        p1 = pre[1]
        p2 = pre[pre.shape[0] - 1]  # MRR's workspace has 2 rows (p2 unread)
        q0 = pre_n[0]
        q1 = pre_n[1]
        scn = sc_n[0]
        for a in range(m):
            la = lab[a]
            ea = e[a]
            saa = sa[a]
            A = a + 1.0
            x0 = p0[a]
            x1 = p1[a]
            inv_a = 1.0 / (1.0 - x0) if M == ERR else 0.0
            cut = p2[a + 1]
            y0 = q0[a] if S else 0.0
            y1 = q1[a] if S else 0.0
            # Row b = a + 1 + j of the query.
            lab_b = lab[a + 1:]
            e_b = e[a + 1:]
            sa_b = sa[a + 1:]
            p0_b = p0[a + 1:n]
            p2_b = p2[a + 1:n]
            tail_b = tail[a + 1:n]
            q0_b = q0[a + 1:n] if S else q0[0:0]
            q1_b = q1[a + 1:n] if S else q1[0:0]
            g_b = g[a + 1:]
            h_b = h[a + 1:]
            gsum = 0.0
            hsum = 0.0
            tot = 0.0
            for j in range(lab_b.size):
                lb = lab_b[j]
                if M == ERR:
                    rb = p0_b[j]
                    w = abs((rb - x0) * x1 / A + (p2_b[j] - cut) * (x0 - rb) * inv_a
                            + tail_b[j] * (x0 * (1.0 - rb) * inv_a - rb))
                elif M == MAP:
                    w = abs((x1 + 1.0) / A + p2_b[j] - cut - tail_b[j]) * sc[0] \
                        * abs(x0 - p0_b[j])
                else:
                    w = pair_delta(M, a, a + 1 + j, k, pre, sc)
                if S:
                    # The |ΔNDCG| share.
                    w = (1.0 - smooth) * w + smooth * (abs(y1 - q1_b[j]) * abs(y0 - q0_b[j])
                                                       * scn)
                w = w if la != lb else 0.0
                if score_norm:
                    w /= LGB_NORM_EPS + abs(saa - sa_b[j])
                up = la > lb
                rho, rq = rho_rows(up, ea, e_b[j])
                da, ha, lam = pair_update(w, up, rho, rq, sigma, g_b, h_b, j)
                gsum += da
                hsum += ha
                tot += lam
            g[a] += gsum
            h[a] += hsum
            total += 2.0 * tot
        return total

    return sweep


def _sweep_form(metric, scheme, smooth):
    """The compiled gradient sweep (a ``cfunc`` of :data:`_SWEEP_SIGNATURE`, made on
    first use and cached by numba) for ``metric``, ``scheme`` and whether the smoothing
    share ``smooth`` is positive (Z other than NDCG)."""
    if metric == NDCG:
        key = ("sweep", NDCG, int(scheme), False)
    else:
        key = ("sweep", int(metric), LAMBDARANK, bool(smooth > 0.0))
    form = _FORMS.get(key)
    if form is None:
        code = _ndcg_sweep_code(key[2]) if metric == NDCG else _sweep_code(key[1], key[3])
        form = _FORMS[key] = compile_variant(code, key[1:], _SWEEP_SIGNATURE,
                                             **_LOOP_OPTIONS)
    return form


@njit(cache=True, nogil=True)
def _pair_weight(metric, scheme, mu, smooth, a, b, up, k, pre, sc, pre_n, sc_n, disc):
    """Weight of the pair at positions a < b (``up``: the row at a has the higher
    label) under ``scheme`` and the smoothing share ``smooth`` (see the module doc;
    ``disc`` the untruncated discounts)."""
    if scheme == LAMBDARANK:
        w = pair_delta(metric, a, b, k, pre, sc)
        if smooth > 0.0:
            w = (1.0 - smooth) * w + smooth * pair_delta(NDCG, a, b, k, pre_n, sc_n)
        return w
    # The LambdaLoss weights need metric NDCG: its arrays are Z's own.
    x1 = pre[1, a]
    return ndcg_weight(scheme, mu, up, b - a - 1, pre[0, a], x1, x1 * sc[0] * disc[a], sc[0],
                       pre[1, a + 1:], pre[0, a + 1:], disc[a + 1:], disc, disc[1:])


# Queries up to this many rows are ordered by counting ranks (_rank_sort); longer ones
# by NumPy's stable argsort or take the long-query kernels.
RANK_SORT_MAX = RANK_ORDER_MAX
_rank_sort = rank_order_into


@njit(cache=True, nogil=True, inline="always")
def _is_long(n, k, scheme, lgb_discount):
    """Whether a query of n rows takes :mod:`~gbrank._kernels.lambdarank_long` (no full
    sort): too long to order by counting, and a weighting that reads no rank below k."""
    return (n > RANK_SORT_MAX and n > 2 * k and scheme == LAMBDARANK
            and not lgb_discount)


@njit(cache=True, nogil=True, inline="always")
def _is_ranked(n, k, metric, scheme, lgb_discount):
    """Whether a query of n rows takes :mod:`~gbrank._kernels.lambdarank_ranked` (an
    int32 radix order, pairs in blocks of positions): too long to order by counting,
    NDCG (the only metric of LightGBM's discount and of the LambdaLoss weightings), and
    not a query for the no-sort kernel."""
    return (n > RANK_SORT_MAX and metric == NDCG
            and not _is_long(n, k, scheme, lgb_discount))


@njit(cache=True, nogil=True, inline="always")
def _scratch(longest, metric, mixed):
    """Scratch for queries of up to ``longest`` rows, allocated once per call or chunk:
    the tuple (order, seen, lab, sa, e, g, h, tail, pre, sc, pre_n, sc_n); NDCG's
    prefix arrays ``pre_n`` hold rows only for a smoothing share (``mixed``)."""
    # Longer queries use the index array of their argsort as their order.
    order = np.empty(min(longest, RANK_SORT_MAX), dtype=np.int64)
    seen = np.empty(min(longest, RANK_SORT_MAX), dtype=np.int64)
    lab = np.empty(longest)
    sa = np.empty(longest)
    e = np.empty(longest)
    # Longer queries accumulate in the outputs themselves (end of the query loop).
    g = np.empty(min(longest, RANK_SORT_MAX))
    h = np.empty(min(longest, RANK_SORT_MAX))
    tail = np.empty(longest if (metric == ERR or metric == MAP) else 0)
    # ERR and MAP use three prefix rows, NDCG and MRR two (delta module doc).
    pre = np.empty((3 if (metric == ERR or metric == MAP) else 2, longest + 1))
    sc = np.empty(4)
    pre_n = np.empty((2, longest + 1 if mixed else 0))
    sc_n = np.empty(4)
    return order, seen, lab, sa, e, g, h, tail, pre, sc, pre_n, sc_n


def _queries_code(M, BIG, LOSS, PAIRWISE):  # noqa: N803
    """The query loop of metric ``M``, as a closure over its constants, so that numba
    drops the code of every other form before typing it (a call compiles only what it
    runs). Compiled as the serial entry points (:func:`_make_forms`) and, inside the
    threaded one, through :func:`_chunk_queries`.

    - The weighting (``scheme``, ``mu``) and the smoothing share (``smooth`` > 0, for Z
      other than NDCG) are run-time arguments: one compiled loop serves them all. Its
      gradient pass calls ``sweep``, the option's compiled pair loop
      (:func:`_sweep_form`), once per query; the other forms take None.
    - ``LOSS`` False: gradients, each query's rows of ``grad``/``hess`` (input order,
      every row), times its weight and bounded by ``max_step``
      (:func:`_weigh_and_bound`); long queries (:func:`_is_long`, :func:`_is_ranked`)
      are left untouched for their own kernels. True: the local loss Σ w_q loss_q over
      every query is returned (``grad``, ``hess``, ``wide`` unused).
    - ``PAIRWISE`` False: a query whose score spread rules out row exponentials
      (:func:`~gbrank._kernels._sigmoid.row_exponentials_into`) is flagged in ``wide``
      and left untouched, for a pass with ``PAIRWISE`` True, which takes such queries
      pair by pair (one exp per pair).
    - ``BIG`` False: no query here has more than ``RANK_SORT_MAX`` rows (NumPy's
      argsort for them is not compiled).

    The loop runs over queries ``q0 … q1 - 1``, those set in ``only`` when it is not
    empty, with scratch allocated once (:func:`_scratch`); ``disc`` holds the discounts
    of :func:`_discount_length` positions.
    """

    def queries(y, s, at, offsets, qweights, k, sigma, gain_tab, threshold, norm,
                lgb_discount, scheme, mu, smooth, max_step, disc, sweep, q0, q1, only, wide,
                grad, hess):
        # NDCG's prefix arrays beside Z's for a smoothing share.
        mixed = M != NDCG and smooth > 0.0
        longest = q0 - q0  # an int64 from the start (a literal 0 would type twice)
        for qi in range(q0, q1):
            n = offsets[qi + 1] - offsets[qi]
            if LOSS or not (_is_long(n, k, scheme, lgb_discount)
                            or _is_ranked(n, k, M, scheme, lgb_discount)):
                longest = max(longest, n)
        order0, seen, lab, sa, e, g0, h0, tail, pre, sc, pre_n_buf, sc_n_buf = _scratch(
            longest, M, mixed)
        total = 0.0
        for qi in range(q0, q1):
            if only.size and not only[qi]:
                continue
            lo = offsets[qi]
            hi = offsets[qi + 1]
            n = hi - lo
            if not LOSS and (_is_long(n, k, scheme, lgb_discount)
                             or _is_ranked(n, k, M, scheme, lgb_discount)):
                continue  # done by the long-query pass, compiled only for such queries
            wq = qweights[qi] if qweights.size else 1.0
            if n < 2:
                if LOSS:
                    total += 0.0 * wq
                else:
                    for r in range(lo, hi):
                        grad[r] = 0.0
                        hess[r] = 0.0
                    _weigh_and_bound(grad, hess, lo, hi, wq, sigma, max_step)
                continue
            sq = s[lo:hi]
            atq = at[lo:hi]
            yq = y[lo:hi]
            gq = grad[lo:hi]
            hq = hess[lo:hi]
            order = order0
            g = g0
            h = h0
            if n <= RANK_SORT_MAX or not BIG:
                _rank_sort(atq, e, sa, order, seen)
            else:
                # Stable argsort of −s (as descending_order) with e as the key buffer;
                # its index array is the order (no n-row copies beyond NumPy's merge
                # buffer).
                for r in range(n):
                    e[r] = -atq[r]
                order = np.argsort(e[:n], kind="mergesort")
                for r in range(n):
                    sa[r] = atq[order[r]]
            far = n > RANK_SORT_MAX
            if not LOSS and far:
                # Gradients in rank order straight into the outputs, permuted at the end.
                g = gq
                h = hq
            for r in range(n):
                lab[r] = yq[order[r]]
            prefix_arrays(M, lab[:n], k, gain_tab, threshold, lgb_discount, disc, pre, sc)
            pre_n = pre
            sc_n = sc
            if mixed:
                pre_n = pre_n_buf
                sc_n = sc_n_buf
                top = 0
                for r in range(n):
                    top = max(top, int(lab[r]))
                ngain = np.empty(top + 1)
                for r in range(top + 1):
                    ngain[r] = np.exp2(r * 1.0) - 1.0
                # No LightGBM discount for the smoothing share (a run-time False: the
                # prefix arrays of the main NDCG form, not a literal's own).
                prefix_arrays(NDCG, lab[:n], k, ngain, threshold, lgb_discount and False,
                              disc, pre_n, sc_n)

            best = sa[0]
            worst = sa[n - 1]
            # g is scratch until zeroed below (for the loss a long query's g is shorter
            # than the query: the loss path is not the hot one, it allocates).
            fast = row_exponentials_into(sa[:n], sigma, e, g if g.size >= n else np.empty(n))
            if not PAIRWISE and not fast:
                wide[qi] = True
                continue
            score_norm = norm and best != worst
            if not LOSS:
                for r in range(n):
                    g[r] = 0.0
                    h[r] = 0.0
            sum_lambdas = 0.0
            acc = 0.0
            m = min(k, n - 1)
            if not PAIRWISE:
                # (fast here.)
                sum_lambdas = sweep(m, k, lab[:n], sa[:n], e[:n], pre, sc, tail, pre_n, sc_n,
                                    disc, sigma, score_norm, mu, smooth, g[:n], h[:n])
            else:
                for a in range(m):
                    la = lab[a]
                    for b in range(a + 1, n):
                        lb = lab[b]
                        if la == lb:
                            continue
                        up = la > lb
                        if mixed or scheme != LAMBDARANK:
                            w = _pair_weight(M, scheme, mu, smooth, a, b, up, k, pre, sc,
                                             pre_n, sc_n, disc)
                        else:
                            w = pair_delta(M, a, b, k, pre, sc)
                        if w == 0.0:
                            continue
                        if score_norm:
                            w /= LGB_NORM_EPS + abs(sa[a] - sa[b])
                        if fast:
                            rho, rq = rho_rows(up, e[a], e[b])
                        else:
                            rho, rq = rho_spread(up, sigma * (sa[a] - sa[b]))
                        sum_lambdas += 2.0 * sigma * w * rho
                        if LOSS:
                            d = sigma * (sq[order[a]] - sq[order[b]])
                            acc += w * softplus(-d if up else d)
                        else:
                            da, ha, _ = pair_update(w, up, rho, rq, sigma, g, h, b)
                            g[a] += da
                            h[a] += ha
            factor = 1.0
            if norm and sum_lambdas > 0.0:
                factor = np.log2(1.0 + sum_lambdas) / sum_lambdas
            if LOSS:
                total += acc * factor * wq
                continue
            if far:
                # g, h are the outputs in rank order; sa and e are dead now: copy there,
                # then scatter (independent stores; following the permutation's cycles
                # in place is slower at 10^6 rows, one cache miss after another).
                for r in range(n):
                    e[r] = g[r]
                    sa[r] = h[r]
                for r in range(n):
                    gq[order[r]] = e[r] * factor
                    hq[order[r]] = sa[r] * factor
            else:
                for r in range(n):
                    gq[order[r]] = g[r] * factor
                    hq[order[r]] = h[r] * factor
            _weigh_and_bound(grad, hess, lo, hi, wq, sigma, max_step)
        return total

    return queries


# Compiled entry points per option, made on first use (:func:`_forms`).
_FORMS: dict = {}


def _chunk_queries(metric, big, y, s, at, offsets, qweights, k, sigma, gain_tab, threshold,
                   norm, lgb_discount, scheme, mu, smooth, max_step, disc, sweep, q0, q1,
                   only, wide, grad, hess):
    """The gradient pass of metric ``metric`` and ``big`` (literals) over queries
    ``q0 … q1 - 1``: the serial entry point (:func:`_make_forms`, called with the
    arguments from ``y`` on), for the threaded entry point, which cannot refer to that
    closure itself (numba's cache cannot key a closure over another). For jitted code
    only."""
    raise TypeError("_chunk_queries is called from jitted code only")


@overload(_chunk_queries, prefer_literal=True, jit_options={"nogil": True})
def _chunk_queries_impl(metric, big, y, s, at, offsets, qweights, k, sigma, gain_tab,
                        threshold, norm, lgb_discount, scheme, mu, smooth, max_step, disc,
                        sweep, q0, q1, only, wide, grad, hess):
    flags = (metric, big)
    if not all(isinstance(f, types.Literal) for f in flags):
        raise TypingError("_chunk_queries needs literal metric and big arguments")
    # The serial entry point itself: compiled once per process (typing asks for this
    # implementation twice, the threaded loop and its body apart) and shared with
    # serial calls.
    queries = _forms(*(f.literal_value for f in flags))[0]

    def chunk(metric, big, y, s, at, offsets, qweights, k, sigma, gain_tab, threshold, norm,
              lgb_discount, scheme, mu, smooth, max_step, disc, sweep, q0, q1, only, wide,
              grad, hess):
        queries(y, s, at, offsets, qweights, k, sigma, gain_tab, threshold, norm,
                lgb_discount, scheme, mu, smooth, max_step, disc, sweep, q0, q1, only, wide,
                grad, hess)
    return chunk


@njit(cache=True, nogil=True)
def _weigh_and_bound(grad, hess, lo, hi, wq, sigma, max_step):
    """Rows ``lo … hi − 1`` of one query: times its weight ``wq``, then the Hessian
    bound of ``max_step`` (see :func:`lambdarank_grad_hess`)."""
    if wq != 1.0:
        for r in range(lo, hi):
            grad[r] *= wq
            hess[r] *= wq
    if max_step > 0.0:
        ratio = sigma / max_step
        for r in range(lo, hi):
            bound = ratio * abs(grad[r])
            if hess[r] < bound:
                hess[r] = bound


def _discount_length(sizes, k, lgb_discount, scheme, every_position):
    """How many positions' discounts 1/log2(r + 2) are read: the first k (IDCG@k and
    the truncated NDCG discount), and under LightGBM's discount and the LambdaLoss
    weights every position of the queries that are sorted here (``every_position``: all
    of them, as the local loss sorts every query; for gradients only those of up to
    ``RANK_SORT_MAX`` rows, the longer ones making their own in blocks). No n-row array
    for a group-less query's gradients."""
    longest = int(sizes.max()) if sizes.size else 0
    if lgb_discount or scheme != LAMBDARANK:
        if every_position:
            return longest
        return min(longest, max(k, RANK_SORT_MAX))
    return min(longest, k)


def _make_forms(metric, big):
    """The entry points of metric ``metric`` (:func:`_queries_code`; ``big``: some query
    they handle has more than ``RANK_SORT_MAX`` rows): ``serial``, ``parallel`` (chunks
    of queries on threads), ``pairwise`` (the queries flagged ``wide`` by either) and
    ``loss``. Each is a closure over these constants, which numba caches per value of
    them; all but ``parallel`` take the arguments of :func:`_chunk_queries` from ``y``
    on, ``parallel`` those without ``at``, ``q0``, ``q1`` and ``only`` (all queries)."""
    key = (metric, big)
    serial = compile_variant(_queries_code(metric, big, False, False), (*key, 0, 0))
    pairwise = compile_variant(_queries_code(metric, big, False, True), (*key, 0, 1))
    loss = compile_variant(_queries_code(metric, big, True, True), (*key, 1, 1))

    def parallel(y, s, offsets, qweights, k, sigma, gain_tab, threshold, norm,
                 lgb_discount, scheme, mu, smooth, max_step, disc, sweep, wide, grad, hess):
        bounds = chunk_bounds(offsets)
        for c in prange(N_CHUNKS):
            _chunk_queries(metric, big, y, s, s, offsets, qweights, k, sigma, gain_tab,
                           threshold, norm, lgb_discount, scheme, mu, smooth, max_step, disc,
                           sweep, bounds[c], bounds[c + 1], wide[:0], wide, grad, hess)

    return serial, compile_variant(parallel, key, parallel=True), pairwise, loss


def _forms(metric, big):
    """(serial, parallel, pairwise, loss) entry points of ``metric`` and ``big``
    (:func:`_make_forms`), made on first use."""
    key = (int(metric), bool(big))
    forms = _FORMS.get(key)
    if forms is None:
        forms = _FORMS[key] = _make_forms(*key)
    return forms


def _make_long_forms(metric, deep, smoothed, fast):
    """The long-query pass: queries ``which`` through
    :func:`~gbrank._kernels.lambdarank_long.long_query_grad_hess`, one after the other
    or on threads, for ``metric``, ``deep`` (k > ``BUFFER_MAX_K``), ``smoothed`` and
    ``fast`` (constants there, as in :func:`_make_forms`); a query the fast form leaves
    (its scores too spread for row exponentials) is flagged in ``left``."""

    def serial(y, s, offsets, qweights, k, sigma, gain_tab, threshold, norm, smooth,
               max_step, disc, which, left, grad, hess):
        for t in range(which.size):
            lo = offsets[which[t]]
            hi = offsets[which[t] + 1]
            if long_query_grad_hess(metric, deep, smoothed, fast, y[lo:hi], s[lo:hi], k,
                                    sigma, gain_tab, threshold, norm, smooth, disc,
                                    grad[lo:hi], hess[lo:hi]):
                _weigh_and_bound(grad, hess, lo, hi,
                                 qweights[which[t]] if qweights.size else 1.0, sigma,
                                 max_step)
            else:
                left[t] = True

    def parallel(y, s, offsets, qweights, k, sigma, gain_tab, threshold, norm, smooth,
                 max_step, disc, which, left, grad, hess):
        for t in prange(which.size):
            lo = offsets[which[t]]
            hi = offsets[which[t] + 1]
            if long_query_grad_hess(metric, deep, smoothed, fast, y[lo:hi], s[lo:hi], k,
                                    sigma, gain_tab, threshold, norm, smooth, disc,
                                    grad[lo:hi], hess[lo:hi]):
                _weigh_and_bound(grad, hess, lo, hi,
                                 qweights[which[t]] if qweights.size else 1.0, sigma,
                                 max_step)
            else:
                left[t] = True

    key = (metric, deep, smoothed, fast)
    return (compile_variant(serial, key),
            compile_variant(parallel, key, parallel=True))


def _make_ranked_forms(scheme, fast):
    """The ranked-query pass for ``scheme`` and ``fast``: queries ``which`` through
    :func:`~gbrank._kernels.lambdarank_ranked.ranked_query_grad_hess` (NDCG only), those
    the fast form leaves flagged in ``left`` (as :func:`_make_long_forms`)."""

    def serial(y, s, offsets, qweights, k, sigma, gain_tab, norm, lgb_discount, mu,
               max_step, which, left, grad, hess):
        for t in range(which.size):
            lo = offsets[which[t]]
            hi = offsets[which[t] + 1]
            if ranked_query_grad_hess(scheme, fast, y[lo:hi], s[lo:hi], k, sigma, gain_tab,
                                      norm, lgb_discount, mu, grad[lo:hi], hess[lo:hi]):
                _weigh_and_bound(grad, hess, lo, hi,
                                 qweights[which[t]] if qweights.size else 1.0, sigma,
                                 max_step)
            else:
                left[t] = True

    def parallel(y, s, offsets, qweights, k, sigma, gain_tab, norm, lgb_discount, mu,
                 max_step, which, left, grad, hess):
        for t in prange(which.size):
            lo = offsets[which[t]]
            hi = offsets[which[t] + 1]
            if ranked_query_grad_hess(scheme, fast, y[lo:hi], s[lo:hi], k, sigma, gain_tab,
                                      norm, lgb_discount, mu, grad[lo:hi], hess[lo:hi]):
                _weigh_and_bound(grad, hess, lo, hi,
                                 qweights[which[t]] if qweights.size else 1.0, sigma,
                                 max_step)
            else:
                left[t] = True

    key = (scheme, fast)
    return (compile_variant(serial, key),
            compile_variant(parallel, key, parallel=True))


def _long_forms(metric, k, smooth, fast=True):
    key = ("long", int(metric), k > BUFFER_MAX_K, smooth > 0.0, bool(fast))
    forms = _FORMS.get(key)
    if forms is None:
        forms = _FORMS[key] = _make_long_forms(*key[1:])
    return forms


def _ranked_forms(scheme, fast=True):
    key = ("ranked", int(scheme), bool(fast))
    forms = _FORMS.get(key)
    if forms is None:
        forms = _FORMS[key] = _make_ranked_forms(*key[1:])
    return forms


def _pass(forms, n_rows, which, *args):
    """One long-query pass (:func:`_long_forms` or :func:`_ranked_forms`, a function of
    ``fast``) over the queries ``which``: the fast forms, serial or on threads, then the
    queries they left (scores too spread for row exponentials; rare, a diverging fit)
    one exp per pair, in a form compiled only when needed. ``args``: the forms'
    arguments before ``which``; ``grad``, ``hess`` last."""
    *head, grad, hess = args
    serial, parallel = forms(True)
    left = np.zeros(which.size, dtype=np.bool_)
    dispatch(parallel, serial, n_rows, *head, which, left, grad, hess)
    if left.any():
        forms(False)[0](*head, which[left], left[left], grad, hess)


def _long_kernels(sizes, k, metric, scheme, lgb_discount):
    """Per query, whether it takes the no-sort kernel (:func:`_is_long`) and whether the
    ranked one (:func:`_is_ranked`): the same rules on all query sizes at once."""
    far = sizes > RANK_SORT_MAX
    long_ = far & (sizes > 2 * k) if (scheme == LAMBDARANK and not lgb_discount) else (
        np.zeros(sizes.size, dtype=np.bool_))
    ranked = far & ~long_ if metric == NDCG else np.zeros(sizes.size, dtype=np.bool_)
    return long_, ranked


def lambdarank_grad_hess(y, s, offsets, qweights, metric, k, sigma, gain_tab, threshold,
                         norm, lgb_discount, scheme=LAMBDARANK, mu=0.0, smooth=0.0,
                         max_step=0.0, out=None):
    """Gradients and diagonal Hessians of all queries (``qweights`` empty = unweighted);
    ``scheme``, ``mu``, ``smooth``: the pair weighting (module doc; ``smooth`` 0 for
    NDCG).

    ``max_step`` > 0 returns the booster's Hessian max(h_i, σ|λ_i|/max_step) instead of
    the true h_i (0: the true Hessian). Then |λ_i| ≤ (max_step/σ)·h_i for every row, so
    the Newton value −Σλ/Σh of any set of rows (a leaf) is at most max_step/σ in size.
    A pair (hi, lo) has |λ|/h = 1/(σ(1 − ρ)): small while the pair is ordered, growing
    like e^{σ(s_lo − s_hi)}/σ once it is inverted, where the pair loss is linear and its
    curvature vanishes. A row's ratio is a weighted mean of its pairs', so the bound
    only acts on rows whose pairs are, on balance, badly inverted.

    Serial below :data:`~gbrank._kernels._threads.PARALLEL_MIN_ROWS` rows or with fewer
    queries than chunks; chunks of whole queries on threads above
    (:func:`~gbrank._kernels._threads.dispatch`). Every output row is written by its
    query, so the outputs start uninitialised: ``out``, a pair of n-row float64
    arrays, is written and returned instead of new arrays.
    """
    n = int(y.size)
    grad, hess = (np.empty(n), np.empty(n)) if out is None else out
    nq = offsets.size - 1
    metric, k, scheme = int(metric), int(k), int(scheme)
    sigma, threshold, mu, smooth = float(sigma), float(threshold), float(mu), float(smooth)
    norm, lgb_discount, max_step = bool(norm), bool(lgb_discount), float(max_step)
    sizes = np.diff(offsets)
    if nq == 1 and _threads.threaded(n):
        wq = float(qweights[0]) if qweights.size else 1.0
        if _is_long(n, k, scheme, lgb_discount):
            # One long query (group-less data): its blocks of rows on threads.
            disc = discounts(_discount_length(sizes, k, lgb_discount, scheme, False))
            long_query(metric, k > BUFFER_MAX_K, smooth > 0.0, True, y, s, k, sigma,
                       gain_tab, threshold, norm, smooth, disc, grad, hess)
            _weigh_and_bound(grad, hess, 0, n, wq, sigma, max_step)
            return grad, hess
        if _is_ranked(n, k, metric, scheme, lgb_discount):
            # One long query whose weights read every rank: its blocks of positions on
            # threads.
            ranked_query(scheme, True, y, s, k, sigma, gain_tab, norm, lgb_discount, mu,
                         grad, hess)
            _weigh_and_bound(grad, hess, 0, n, wq, sigma, max_step)
            return grad, hess
    long_, ranked = _long_kernels(sizes, k, metric, scheme, lgb_discount)
    aside = long_ | ranked
    disc = discounts(_discount_length(sizes, k, lgb_discount, scheme, False))
    if not aside.all():
        # Queries of more than RANK_SORT_MAX rows take the long-query kernels below,
        # except under a truncation of at least half the query (ERR, MAP, MRR).
        big = bool((sizes[~aside] > RANK_SORT_MAX).any())
        serial, parallel, pairwise, _ = _forms(metric, big)
        sweep = _sweep_form(metric, scheme, smooth)
        wide = np.zeros(nq, dtype=np.bool_)
        if _threads.threaded(n if nq >= N_CHUNKS else 0):
            parallel(y, s, offsets, qweights, k, sigma, gain_tab, threshold, norm,
                     lgb_discount, scheme, mu, smooth, max_step, disc, sweep, wide, grad,
                     hess)
        else:
            serial(y, s, s, offsets, qweights, k, sigma, gain_tab, threshold, norm,
                   lgb_discount, scheme, mu, smooth, max_step, disc, sweep, 0, nq, wide[:0],
                   wide, grad, hess)
        if wide.any():
            # Scores spread too wide for row exponentials (rare: a diverging fit), so
            # their queries go pair by pair, in a kernel compiled only when needed.
            pairwise(y, s, s, offsets, qweights, k, sigma, gain_tab, threshold, norm,
                     lgb_discount, scheme, mu, smooth, max_step, disc, None, 0, nq, wide,
                     wide, grad, hess)
    if aside.any():
        # Called from here, one kernel per kind, so that data without such queries
        # never compiles them.
        long_rows = int(sizes[aside].sum()) if np.count_nonzero(aside) > 1 else 0
        if nq == 1 and long_[0]:
            # Group-less data below the threads' threshold: the one query's kernel
            # called directly (no loop over queries compiled around it).
            long_query(metric, k > BUFFER_MAX_K, smooth > 0.0, False, y, s, k, sigma,
                       gain_tab, threshold, norm, smooth, disc, grad, hess)
            _weigh_and_bound(grad, hess, 0, n, float(qweights[0]) if qweights.size else 1.0,
                             sigma, max_step)
        elif long_.any():
            _pass(lambda fast: _long_forms(metric, k, smooth, fast), long_rows,
                  np.flatnonzero(long_), y, s, offsets, qweights, k, sigma, gain_tab,
                  threshold, norm, smooth, max_step, disc, grad, hess)
        if nq == 1 and ranked[0]:
            # Group-less data below the threads' threshold: the one query's kernel.
            ranked_query(scheme, False, y, s, k, sigma, gain_tab, norm, lgb_discount, mu,
                         grad, hess)
            _weigh_and_bound(grad, hess, 0, n, float(qweights[0]) if qweights.size else 1.0,
                             sigma, max_step)
        elif ranked.any():
            _pass(lambda fast: _ranked_forms(scheme, fast), long_rows,
                  np.flatnonzero(ranked), y, s, offsets, qweights, k, sigma, gain_tab, norm,
                  lgb_discount, mu, max_step, grad, hess)
    return grad, hess


def lambdarank_loss(y, s, at, offsets, qweights, metric, k, sigma, gain_tab, threshold, norm,
                    lgb_discount, scheme=LAMBDARANK, mu=0.0, smooth=0.0):
    """Local loss Σ_q w_q Σ_pairs w_ij(at) · log(1 + exp(−σ (s_hi − s_lo)))."""
    sizes = np.diff(offsets)
    nq = int(sizes.size)
    big = nq > 0 and int(sizes.max()) > RANK_SORT_MAX
    loss = _forms(metric, big)[3]
    disc = discounts(_discount_length(sizes, int(k), bool(lgb_discount), int(scheme), True))
    none = np.empty(0, dtype=np.bool_)
    return loss(y, s, at, offsets, qweights, int(k), float(sigma), gain_tab,
                float(threshold), bool(norm), bool(lgb_discount), int(scheme), float(mu),
                float(smooth), 0.0, disc, None, 0, nq, none, none, none.astype(np.float64),
                none.astype(np.float64))


__all__ = ["LAMBDARANK", "LOSS1", "LOSS2", "LOSS2PP", "NDCG", "lambdarank_grad_hess",
           "lambdarank_loss"]
