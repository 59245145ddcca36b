"""RankNet on one big query without O(n²): two fast modes, chosen per query by density.

- **window** (exact to ~4e-18 per pair): sort by score; pairs with |Δs| ≤ 40/σ are
  summed exactly, farther pairs only counted (φ is 0 or 1 there). Cost O(n log n +
  near pairs): right when few rows lie within 40/σ of each other (wide spreads).
- **grid** (O(n + M log M)): per-grade sums of the pair kernel on a uniform grid,
  below. Accurate when scores are dense at the kernel's scale, where the window
  would be quadratic.

Grid method.

With φ(x) = 1 / (1 + exp(σx)) and ψ = φ (1 − φ), every pair term of row i depends on
the other row only through its score and its grade. Since ρ(s_j − s_i) = 1 − φ(s_i − s_j),
both directions of a pair reduce to φ, and for a row of grade c

    ∂L/∂s_i  = σ [ N_{>c} − Σ_{j: l_j ≠ c} φ(s_i − s_j) ],
    ∂²L/∂s_i² = σ² Σ_{j: l_j ≠ c} ψ(s_i − s_j),

(``ties="pull"`` adds the same sums over rows of grade c, less the row itself, and
(n_c − 1)/2). The sums Σ_j K(t − s_j) over a grade are convolutions of that grade's
score density with K: deposit each row on a uniform grid of M nodes (plus one below and
two above) with the weights of 4-point (cubic) Lagrange interpolation, convolve with K
sampled at the grid lags, read back at s_i with the same weights. This is the
tensor-product cubic interpolant of K(t − s) in both arguments, so the error per pair
is fourth order in the spacing, O((σh)^4 · |∂⁴K|) (the linear weights used before were
second order: 1.8e-6 at 10^6 rows, spread 1000, against ~1e-9 now on a 5x coarser
grid). ψ vanishes beyond |x| = WINDOW/σ and φ is a step plus a residual that does too,
so the step part is a suffix sum and the FFT only carries kernels of half-width
w ≤ WINDOW/(σh) (zero-padded to M + w + 4 so the convolution is linear, not circular:
for wide spreads about half of the 2M a full kernel needs). M is chosen from
σ·(max − min) so that σh stays below ``TARGET_SIGMA_H``, within [MIN_NODES,
MAX_NODES]; beyond the cap (σ·spread > MAX_NODES · TARGET_SIGMA_H ≈ 16,000) σh grows
and so does the error, as h^4, up to σh = ``MAX_GRID_SIGMA_H`` (≈ 8e-7); wider spreads
go to the exact window sum.

numba has no FFT, so deposit and read-back are numba kernels and the convolution
uses ``scipy.fft`` (pocketfft, O(M log M)) in between: one batched forward transform of
the grade densities, one batched inverse of both kernels' products (on numba's thread
count above the dispatch threshold), the spectral products and the step part fused in
numba. Grid-sized arrays are allocated by NumPy and filled by the kernels (see
:func:`deposit`), which with the fusion took a third off a large call
(docs/history/performance-2026-11.md, sixth pass).

Memory: the per-grade grids are (grades × M) arrays, about ten of them alive at once.
With few grades they are small beside the rows and all grades are convolved at once.
With many (real-valued labels: thousands of distinct values, up to one per row) the
sums over the other grades are taken as "all rows" minus "own grade": one all-rows
field; the own-grade sums of grades of at most ``DIRECT_MAX_ROWS`` rows pair by pair
(exact), those of bigger grades on grids in batches that stay within
``GRID_CELLS_PER_ROW`` cells per row; rows reached through one int32 class-sorted
permutation. Worst case (every grade just above ``DIRECT_MAX_ROWS`` rows): n/257 grid
convolutions.
"""

import numpy as np
from numba import njit, prange

from gbrank._kernels._grades import (
    grade_classes_into,
    table_classes_into,
)
from gbrank._kernels._order import ascending_order, run_end
from gbrank._kernels._sigmoid import MAX_EXP_SPREAD, exp_scaled_into, rho_pair
from gbrank._kernels._threads import dispatch, fft_workers, threaded

# Chosen by measurement (experiments/bench/bench_ranking.py, accuracy sweep): with
# cubic interpolation σh ≤ 1/32 keeps the gradient and Hessian within 1e-8 of exact
# (figures: docs/evidence.md, "RankNet(method=...)"); the node cap bounds time and
# memory (n_cls × MAX_NODES per grid array).
TARGET_SIGMA_H = 1.0 / 32.0
MIN_NODES = 1 << 12
MAX_NODES = 1 << 19


@njit(cache=True, nogil=True, inline="always")
def _cell(si, lo, inv_h, m):
    """First of the four grid nodes around score ``si`` and the cubic Lagrange weights
    of those nodes, one rule for deposit and read-back.

    Node ``j`` of the padded grid sits at ``lo + (j - 1) h`` (one node below ``lo`` and
    two above the top score), so a score in cell [x_c, x_{c+1}) uses nodes
    c, c + 1, c + 2, c + 3 of the padded array: x_c − h … x_c + 2h.
    """
    x = (si - lo) * inv_h
    c = int(x)
    if c > m - 2:
        c = m - 2
    f = x - c
    fm1 = f - 1.0
    fm2 = f - 2.0
    fp1 = f + 1.0
    w0 = f * fm1 * fm2 * (-1.0 / 6.0)
    w1 = fp1 * fm1 * fm2 * 0.5
    w2 = fp1 * f * fm2 * -0.5
    w3 = fp1 * f * fm1 * (1.0 / 6.0)
    return c, w0, w1, w2, w3


@njit(cache=True, nogil=True, inline="always")
def _add_row(row, si, lo, inv_h, m):
    """Deposit score ``si`` on the padded grid ``row`` with its four cubic weights."""
    j, w0, w1, w2, w3 = _cell(si, lo, inv_h, m)
    row[j] += w0
    row[j + 1] += w1
    row[j + 2] += w2
    row[j + 3] += w3


@njit(cache=True, nogil=True)
def _deposit_rows(s, cls, lo, inv_h, m, i0, i1, dens):
    """Clear ``dens`` and deposit rows ``[i0, i1)`` on it; an empty ``cls`` puts every
    row on grid row 0."""
    for c in range(dens.shape[0]):
        for j in range(dens.shape[1]):
            dens[c, j] = 0.0
    graded = cls.size > 0
    for i in range(i0, i1):
        _add_row(dens[cls[i]] if graded else dens[0], s[i], lo, inv_h, m)


# The parallel deposit gives each of this many row blocks its own density slab (no
# write races) and adds the slabs up. (Node ranges per thread instead, each thread
# reading every row, were slower, docs/performance.md: the test of whether a row falls
# in a thread's range is a coin flip for the branch predictor.)
DEPOSIT_BLOCKS = 2


@njit(cache=True, nogil=True, parallel=True)
def _deposit_parallel(s, cls, lo, inv_h, m, slabs):
    n = s.size
    nb = slabs.shape[0]
    for b in prange(nb):
        _deposit_rows(s, cls, lo, inv_h, m, b * n // nb, (b + 1) * n // nb, slabs[b])
    g = slabs.shape[1]
    mp = slabs.shape[2]
    # slabs[0] += the others, node ranges on threads. This loop must run after the one
    # above (numba does not fuse loops whose bodies call functions on arrays).
    for part in prange(nb):
        for c in range(g):
            for j in range(part * mp // nb, (part + 1) * mp // nb):
                acc = slabs[0, c, j]
                for b in range(1, nb):
                    acc += slabs[b, c, j]
                slabs[0, c, j] = acc


@njit(cache=True, nogil=True)
def _deposit_serial(s, cls, lo, inv_h, m, slabs):
    _deposit_rows(s, cls, lo, inv_h, m, 0, s.size, slabs[0])


def deposit(s, cls, n_cls, lo, inv_h, m):
    """Cubic-interpolation deposit of every row on its grade's padded grid row
    (``m + 3`` nodes: ``m`` over [lo, hi], one below, two above); an empty ``cls``: all
    rows on one grid row. Row blocks on threads above the dispatch threshold.

    Grid-sized arrays here are allocated by NumPy, not inside numba: NumPy asks the
    kernel for huge pages, where first-touching numba-allocated 4 KiB pages one by one
    was about a third of a large call's time (docs/performance.md). The slabs come back as
    ``slabs[0]``, a view: the other slab lives as long as the density (a grid more,
    small beside the rows: see ``GRID_CELLS_PER_ROW``)."""
    blocks = DEPOSIT_BLOCKS if threaded(int(s.size)) else 1
    slabs = np.empty((blocks, n_cls, m + 3))
    dispatch(_deposit_parallel, _deposit_serial, int(s.size), s, cls, lo, inv_h, m, slabs)
    return slabs[0]


@njit(cache=True, nogil=True, inline="always")
def _interp2(field, c, j, w0, w1, w2, w3):
    """Both interleaved fields of grade c: φ sums at ``[c, 2j]``, ψ sums at ``[c, 2j + 1]``
    (flat 2-D indexing: faster than a 3-D ``[c, j, 0/1]`` array in numba)."""
    row = field[c]
    k = 2 * j
    a = w0 * row[k] + w1 * row[k + 2] + w2 * row[k + 4] + w3 * row[k + 6]
    b = w0 * row[k + 1] + w1 * row[k + 3] + w2 * row[k + 5] + w3 * row[k + 7]
    return a, b


@njit(cache=True, nogil=True, inline="always")
def _read_row(i, not_own, own, s, cls, lo, inv_h, above, counts, sigma, pull, grad, hess):
    """Row i of :func:`read_back_grad_hess`."""
    m = not_own.shape[1] // 2 - 3
    j, w0, w1, w2, w3 = _cell(s[i], lo, inv_h, m)
    c = cls[i]
    f, p = _interp2(not_own, c, j, w0, w1, w2, w3)
    g = above[c] - f
    h = p
    if pull:
        # The row itself is in its grade's sum with φ(0) = ½, ψ(0) = ¼.
        f, p = _interp2(own, c, j, w0, w1, w2, w3)
        g += 0.5 * (counts[c] - 1.0) - (f - 0.5)
        h += p - 0.25
    grad[i] = sigma * g
    hess[i] = sigma * sigma * h


@njit(cache=True, nogil=True, parallel=True)
def _read_back_parallel(not_own, own, s, cls, lo, inv_h, above, counts, sigma, pull, grad,
                        hess):
    for i in prange(s.size):
        _read_row(i, not_own, own, s, cls, lo, inv_h, above, counts, sigma, pull, grad, hess)


@njit(cache=True, nogil=True)
def _read_back_serial(not_own, own, s, cls, lo, inv_h, above, counts, sigma, pull, grad,
                      hess):
    for i in range(s.size):
        _read_row(i, not_own, own, s, cls, lo, inv_h, above, counts, sigma, pull, grad, hess)


@njit(cache=True, nogil=True)
def label_runs(y, perm, min_rows):
    """[start, end) positions in ``perm`` (rows by label ascending) of the grades with
    more than ``min_rows`` rows, as a (k, 2) array."""
    n = perm.size
    out = np.empty((n // (min_rows + 1) + 1, 2), dtype=np.int64)
    k = 0
    a = 0
    while a < n:
        b = run_end(y, perm, a)
        if b - a > min_rows:
            out[k, 0] = a
            out[k, 1] = b
            k += 1
        a = b
    return out[:k]


@njit(cache=True, nogil=True)
def _deposit_runs(s, perm, runs, lo, inv_h, m, dens):
    for c in range(dens.shape[0]):
        for j in range(dens.shape[1]):
            dens[c, j] = 0.0
    for r in range(runs.shape[0]):
        for t in range(runs[r, 0], runs[r, 1]):
            _add_row(dens[r], s[perm[t]], lo, inv_h, m)


def deposit_runs(s, perm, runs, lo, inv_h, m):
    """:func:`deposit` of the rows of each grade in ``runs`` (:func:`label_runs`), one
    grid row per grade."""
    dens = np.empty((runs.shape[0], m + 3))
    _deposit_runs(s, perm, runs, lo, inv_h, m, dens)
    return dens


def deposit_every(s, lo, inv_h, m):
    """:func:`deposit` of all rows on one grid row (grades ignored)."""
    return deposit(s, np.empty(0, dtype=np.int32), 1, lo, inv_h, m)


@njit(cache=True, nogil=True, inline="always")
def _combine(i, above, count, fa, pa, fo, po, sigma, pull, grad, hess):
    """Row i of a grade of ``count`` rows below ``above`` higher-graded rows, from the
    φ/ψ sums over all rows (``fa``, ``pa``) and over its own grade, itself included
    (``fo``, ``po``): the other grades' sums are the difference; ``pull`` adds the own
    grade's, less the row itself (φ(0) = ½, ψ(0) = ¼)."""
    g = above - (fa - fo)
    h = pa - po
    if pull:
        g += 0.5 * (count - 1.0) - (fo - 0.5)
        h += po - 0.25
    grad[i] = sigma * g
    hess[i] = sigma * sigma * h


@njit(cache=True, nogil=True)
def _read_back_runs_part(every, own, s, perm, runs, r0, r1, lo, inv_h, sigma, pull, grad,
                         hess):
    n = perm.size
    m = every.shape[1] // 2 - 3
    for r in range(r0, r1):
        a = runs[r, 0]
        b = runs[r, 1]
        for t in range(a, b):
            i = perm[t]
            j, w0, w1, w2, w3 = _cell(s[i], lo, inv_h, m)
            fa, pa = _interp2(every, 0, j, w0, w1, w2, w3)
            fo, po = _interp2(own, r, j, w0, w1, w2, w3)
            _combine(i, float(n - b), float(b - a), fa, pa, fo, po, sigma, pull, grad, hess)


@njit(cache=True, nogil=True, parallel=True)
def _read_back_runs_parallel(every, own, s, perm, runs, lo, inv_h, sigma, pull, grad, hess):
    k = runs.shape[0]
    for part in prange(N_PARTS):
        _read_back_runs_part(every, own, s, perm, runs, part * k // N_PARTS,
                             (part + 1) * k // N_PARTS, lo, inv_h, sigma, pull, grad, hess)


@njit(cache=True, nogil=True)
def _read_back_runs_serial(every, own, s, perm, runs, lo, inv_h, sigma, pull, grad, hess):
    _read_back_runs_part(every, own, s, perm, runs, 0, runs.shape[0], lo, inv_h, sigma,
                         pull, grad, hess)


def read_back_runs(every, own, s, perm, runs, lo, inv_h, sigma, pull, grad, hess) -> None:
    """:func:`read_back_grad_hess` for the rows of the grades ``runs`` (grid row r of
    ``own`` for ``runs[r]``), the other grades' sums as all rows' minus the own grade's;
    grades in parts on threads when there are enough of them and enough rows."""
    rows = int((runs[:, 1] - runs[:, 0]).sum()) if runs.shape[0] >= N_PARTS else 0
    dispatch(_read_back_runs_parallel, _read_back_runs_serial, rows, every, own, s, perm,
             runs, lo, inv_h, sigma, pull, grad, hess)


# Grades with at most this many rows get their own-grade sums pair by pair (exact; at
# most DIRECT_MAX_ROWS pairs per row), the others one grid convolution each (a fixed
# cost of FFTs): pair sums cost less below a few hundred rows.
DIRECT_MAX_ROWS = 256

# Threads take the grades in this many parts.
N_PARTS = 32


@njit(cache=True, nogil=True, fastmath=True, error_model="numpy")
def _own_sums_fast(et, e):
    """Σ_u φ and Σ_u ψ of a row (exponential ``et``) against rows with exponentials
    ``e`` (itself included): φ = e_u / (e_t + e_u), ψ = φ (1 − φ)."""
    f = 0.0
    p = 0.0
    for u in range(e.size):
        inv = 1.0 / (et + e[u])
        phi = e[u] * inv
        f += phi
        p += phi * (et * inv)
    return f, p


@njit(cache=True, nogil=True)
def _direct_part(every, y, s, perm, t0, t1, lo, inv_h, sigma, pull, grad, hess):
    """The grades of at most DIRECT_MAX_ROWS rows whose runs start in ``[t0, t1)`` of
    ``perm`` (rows by label ascending): own-grade sums pair by pair, ρ from row
    exponentials when the grade's spread allows, else one exp per pair."""
    n = perm.size
    m = every.shape[1] // 2 - 3
    zs = np.empty(DIRECT_MAX_ROWS)
    es = np.empty(DIRECT_MAX_ROWS)
    bits = np.empty(DIRECT_MAX_ROWS, dtype=np.int64)
    a = t0
    while a < t1:
        b = run_end(y, perm, a)
        nc = b - a
        if nc <= DIRECT_MAX_ROWS:
            zmax = -np.inf
            zmin = np.inf
            for t in range(nc):
                z = s[perm[a + t]]
                zs[t] = z
                zmax = max(zmax, z)
                zmin = min(zmin, z)
            fast = sigma * (zmax - zmin) <= MAX_EXP_SPREAD
            if fast:
                exp_scaled_into(zs[:nc], sigma, 0.5 * (zmax + zmin), es[:nc], bits[:nc])
            for t in range(nc):
                if fast:
                    fo, po = _own_sums_fast(es[t], es[:nc])
                else:
                    fo = 0.0
                    po = 0.0
                    for u in range(nc):
                        phi, one = rho_pair(sigma * (zs[t] - zs[u]))
                        fo += phi
                        po += phi * one
                j, w0, w1, w2, w3 = _cell(zs[t], lo, inv_h, m)
                fa, pa = _interp2(every, 0, j, w0, w1, w2, w3)
                _combine(perm[a + t], float(n - b), float(nc), fa, pa, fo, po, sigma, pull,
                         grad, hess)
        a = b


@njit(cache=True, nogil=True, inline="always")
def _run_start_at_or_after(y, perm, t):
    """The first position ≥ t where a run of equal labels starts."""
    n = perm.size
    while 0 < t < n and y[perm[t]] == y[perm[t - 1]]:
        t += 1
    return t


@njit(cache=True, nogil=True, parallel=True)
def _direct_parallel(every, y, s, perm, lo, inv_h, sigma, pull, grad, hess):
    n = perm.size
    for part in prange(N_PARTS):
        t0 = _run_start_at_or_after(y, perm, part * n // N_PARTS)
        t1 = _run_start_at_or_after(y, perm, (part + 1) * n // N_PARTS)
        _direct_part(every, y, s, perm, t0, t1, lo, inv_h, sigma, pull, grad, hess)


@njit(cache=True, nogil=True)
def _direct_serial(every, y, s, perm, lo, inv_h, sigma, pull, grad, hess):
    _direct_part(every, y, s, perm, 0, perm.size, lo, inv_h, sigma, pull, grad, hess)


def direct_small_grades(every, y, s, perm, lo, inv_h, sigma, pull, grad, hess) -> None:
    """Rows of the grades of at most DIRECT_MAX_ROWS rows: own-grade sums pair by pair,
    the all-rows sums read back from ``every``; parts of the rows (cut at grade
    boundaries) on threads."""
    dispatch(_direct_parallel, _direct_serial, int(perm.size), every, y, s, perm, lo, inv_h,
             sigma, pull, grad, hess)


def read_back_grad_hess(not_own, own, s, cls, lo, inv_h, above, counts, sigma, pull, grad,
                        hess) -> None:
    """The row sums of the module doc, read back and combined straight into ``grad``
    and ``hess`` (no n-row temporaries). ``not_own`` holds the φ and ψ sums over rows
    of grades other than c at node j, interleaved (``[c, 2j]``, ``[c, 2j + 1]``) so one
    read touches one cache line; ``own`` the same over grade c itself (used with ``pull``). Rows are
    independent: threads above the dispatch threshold."""
    dispatch(_read_back_parallel, _read_back_serial, int(s.size), not_own, own, s, cls, lo,
             inv_h, above, counts, sigma, pull, grad, hess)


@njit(cache=True, nogil=True)
def _kernels_into(w, h, sigma, k):
    """The residual φ − step (row 0 of ``k``) and ψ (row 1) at lags d·h, |d| ≤ w, in FFT
    (wrap-around) order: one (2, length) array, so one batched FFT transforms both.

    φ(x) = 1/(1 + e^{σx}) is the step (1 for x < 0, ½ at 0, 0 for x > 0) plus a
    residual that, like ψ, vanishes beyond |x| = WINDOW/σ (below e^-40). The step's
    convolution is a suffix sum, exact in O(M); only the short kernels need the FFT,
    whose length then is M + w + 4 instead of 2M. On the grid the split is exact:
    the step and the residual add up to φ at every lag.
    """
    length = k.shape[1]
    k[:] = 0.0
    for d in range(-w, w + 1):
        p, q = rho_pair(sigma * d * h)
        step = 1.0 if d < 0 else (0.5 if d == 0 else 0.0)
        idx = d % length
        k[0, idx] = p - step
        k[1, idx] = p * q


def _kernels(w, length, h, sigma):
    """:func:`_kernels_into` a NumPy-allocated (2, length) array (see :func:`deposit`)."""
    k = np.empty((2, length))
    _kernels_into(w, h, sigma, k)
    return k


def _fft_length(n: int) -> int:
    """Smallest 2^a·3^b·5^c ≥ n (sizes pocketfft transforms fastest)."""
    best = 1 << max(0, int(n - 1).bit_length())
    p5 = 1
    while p5 < best:
        p35 = p5
        while p35 < best:
            v = p35
            while v < n:
                v <<= 1
            best = min(best, v)
            p35 *= 3
        p5 *= 5
    return best


def grid_nodes(spread: float, sigma: float, nodes: int | None = None) -> int:
    """Grid size M for a score range ``spread``: σh ≤ ``TARGET_SIGMA_H`` within
    [MIN_NODES, MAX_NODES] (any size: the FFT length is rounded up to a 5-smooth one)."""
    if nodes is not None:
        return int(nodes)
    want = int(np.ceil(sigma * spread / TARGET_SIGMA_H)) + 2
    return max(MIN_NODES, min(MAX_NODES, want))


# Grid cells (grades × nodes) per row that one batch of per-grade convolutions may use:
# about ten arrays of that many cells live at once, so the grids hold at most ~10/64 of
# an n-row float64 array. At least MIN_BATCH_GRADES grades go in a batch whatever n is.
GRID_CELLS_PER_ROW = 1.0 / 64.0
MIN_BATCH_GRADES = 16


@njit(cache=True, nogil=True)
def _times_kernels(spec, fk, others, out):
    """The spectra of the densities the fields come from, times both kernels' spectra
    ``fk`` (rows 0, 1), into ``out``: row c is grade c's φ residual, row g + c its ψ.
    With ``others`` the density of grade c is that of every other grade (all rows'
    less its own), otherwise its own."""
    g, nf = spec.shape
    for k in range(nf):
        total = 0j
        if others:
            for c in range(g):
                total += spec[c, k]
        for c in range(g):
            v = total - spec[c, k] if others else spec[c, k]
            out[c, k] = v * fk[0, k]
            out[g + c, k] = v * fk[1, k]


@njit(cache=True, nogil=True)
def _assemble(dens, conv, others, field):
    """φ and ψ sums per node, interleaved into ``field`` (``[c, 2j]``, ``[c, 2j + 1]``):
    the step part of φ (the rows above node j plus half of node j, a suffix sum of the
    density) plus the convolved residual, and the convolved ψ; densities as in
    :func:`_times_kernels`."""
    g, mp = dens.shape
    above = np.zeros(g)
    for j in range(mp - 1, -1, -1):
        total = 0.0
        if others:
            for c in range(g):
                total += dens[c, j]
        for c in range(g):
            d = total - dens[c, j] if others else dens[c, j]
            above[c] += d
            field[c, 2 * j] = above[c] - 0.5 * d + conv[c, j]
            field[c, 2 * j + 1] = conv[g + c, j]


def _fields(dens, spec, fk, length, others, workers):
    """φ and ψ sums per node of each grid row's density (or, with ``others``, of all
    rows' but its own), from the densities and their spectrum ``spec``: one batched
    inverse FFT for both kernels; multiply, step part and interleaving fused in numba."""
    from scipy import fft  # ~1.6x NumPy's pocketfft here; imported on first use

    g, mp = dens.shape
    prod = np.empty((2 * g, spec.shape[1]), dtype=np.complex128)  # NumPy: see deposit
    _times_kernels(spec, fk, others, prod)
    conv = fft.irfft(prod, n=length, axis=1, workers=workers)
    del prod
    field = np.empty((g, 2 * mp))
    _assemble(dens, conv, others, field)
    return field


def ranknet_grid_grad_hess(y: np.ndarray, s: np.ndarray, sigma: float, pull: bool,
                           nodes: int | None = None, batch: int | None = None,
                           ) -> tuple[np.ndarray, np.ndarray]:
    """RankNet gradient and Hessian of ONE query by grid convolution (see module doc).
    ``batch``: grades per batch of convolutions (default from ``GRID_CELLS_PER_ROW``;
    when every grade fits one batch, the all-at-once form runs)."""
    from scipy import fft

    lo = float(s.min())
    spread = float(s.max()) - lo
    m = grid_nodes(spread, sigma, nodes)
    h = spread / (m - 1) if spread > 0.0 else 1.0
    inv_h = 1.0 / h
    mp = m + 3
    w = min(mp - 1, int(np.ceil(WINDOW / (sigma * h))) + 1)
    length = _fft_length(mp + w + 1)
    # The FFTs take batches of grid rows; pocketfft spreads a batch over threads.
    workers = fft_workers(int(y.size))
    fk = fft.rfft(_kernels(w, length, h, sigma), axis=1, workers=workers)
    if batch is None:
        batch = max(MIN_BATCH_GRADES, int(GRID_CELLS_PER_ROW * y.size / mp))
    grad = np.empty(y.size)
    hess = np.empty(y.size)
    cls = np.empty(y.size, dtype=np.int32)
    n_cls = table_classes_into(y, cls)  # -1: not small integer grades
    if 0 <= n_cls <= batch:
        # All grades at once: the other grades' sums straight from the spectra.
        counts = np.bincount(cls, minlength=n_cls).astype(np.float64)
        # Rows of grade c see N_{>c} higher-graded rows.
        above = np.concatenate((np.cumsum(counts[::-1])[::-1][1:], [0.0]))
        dens = deposit(s, cls, n_cls, lo, inv_h, m)
        spec = fft.rfft(dens, n=length, axis=1, workers=workers)
        not_own = _fields(dens, spec, fk, length, True, workers)
        own = _fields(dens, spec, fk, length, False, workers) if pull else np.zeros((1, 2))
        del spec
        read_back_grad_hess(not_own, own, s, cls, lo, inv_h, above, counts, float(sigma),
                            bool(pull), grad, hess)
        return grad, hess
    # Many grades: rows by label (each grade one run), all rows' field once; small
    # grades' own sums pair by pair, the others' own fields batch by batch.
    del cls
    perm = ascending_order(y)  # rows by label ascending
    every_dens = deposit_every(s, lo, inv_h, m)
    every = _fields(every_dens, fft.rfft(every_dens, n=length, axis=1, workers=workers), fk,
                    length, False, workers)
    direct_small_grades(every, y, s, perm, lo, inv_h, float(sigma), bool(pull), grad, hess)
    big = label_runs(y, perm, DIRECT_MAX_ROWS)
    for r0 in range(0, big.shape[0], batch):
        runs = big[r0:r0 + batch]
        dens = deposit_runs(s, perm, runs, lo, inv_h, m)
        own = _fields(dens, fft.rfft(dens, n=length, axis=1, workers=workers), fk, length,
                      False, workers)
        read_back_runs(every, own, s, perm, runs, lo, inv_h, float(sigma), bool(pull), grad,
                       hess)
    return grad, hess


# Beyond |Δs| = WINDOW/σ a pair's φ is 0 or 1 and ψ is 0 to within e^-40 ≈ 4e-18.
WINDOW = 40.0


@njit(cache=True, nogil=True)
def near_pairs(s, width):
    """Estimate of #pairs with |Δs| ≤ width, from a histogram of bins of that width (O(n))."""
    n = s.size
    # Extremes in one loop (finite scores: the values of s.min() and s.max(), whose
    # generic implementations take longer to compile).
    lo = s[0]
    top = s[0]
    for i in range(1, n):
        v = s[i]
        if v < lo:
            lo = v
        if v > top:
            top = v
    nb = int((top - lo) / width) + 1
    if nb > n // 2 + 16:
        nb = n // 2 + 16  # sparse data: coarser bins only overestimate (and stay small)
        width = (top - lo) / (nb - 1)
    cnt = np.zeros(nb + 2)
    for i in range(n):
        cnt[int((s[i] - lo) / width) + 1] += 1.0
    total = 0.0
    for b in range(1, nb + 1):
        total += cnt[b] * (cnt[b - 1] + cnt[b] + cnt[b + 1])
    return total


@njit(cache=True, nogil=True, parallel=True)
def ranknet_window_grad_hess(y, s, sigma, pull):
    """RankNet of ONE query, exact to e^-40 per pair: pairs within |Δs| ≤ WINDOW/σ are
    summed exactly, farther pairs are counted (φ = 1 for a row far above)."""
    n = s.size
    # int32 classes and positions (a query below 2^31 rows): scratch is one int64 order,
    # the sorted scores and three int32 arrays, 3.5 n-row float64 arrays' worth.
    cls = np.empty(n, dtype=np.int32)
    n_cls = grade_classes_into(y, cls)
    order = np.argsort(s, kind="mergesort")
    z = np.empty(n)
    c = np.empty(n, dtype=np.int32)
    for p in range(n):
        z[p] = s[order[p]]
        c[p] = cls[order[p]]
    counts = np.zeros(n_cls)
    for p in range(n):
        counts[c[p]] += 1.0
    above_grade = np.zeros(n_cls)
    acc = 0.0
    for k in range(n_cls - 1, -1, -1):
        above_grade[k] = acc
        acc += counts[k]
    # Per grade, sorted positions of its rows: counts of a grade beyond an index.
    starts = np.zeros(n_cls + 1, dtype=np.int64)
    for k in range(n_cls):
        starts[k + 1] = starts[k] + int(counts[k])
    fill = starts[:-1].copy()
    pos = np.empty(n, dtype=np.int32)
    for p in range(n):
        pos[fill[c[p]]] = p
        fill[c[p]] += 1
    width = WINDOW / sigma
    grad = np.zeros(n)
    hess = np.zeros(n)
    for p in prange(n):
        zp = z[p]
        cp = c[p]
        lo = np.searchsorted(z, zp - width)
        hi = np.searchsorted(z, zp + width, side="right")
        # Rows beyond hi are far above: φ(s_p − s_q) = 1 for each.
        seg = pos[starts[cp]:starts[cp + 1]]
        own_far = float(seg.size - np.searchsorted(seg, hi))
        far_other = float(n - hi) - own_far
        f_other = far_other
        f_own = own_far
        h_other = 0.0
        h_own = 0.0
        for q in range(lo, hi):
            if q == p:
                continue
            phi, one = rho_pair(sigma * (zp - z[q]))
            if c[q] == cp:
                f_own += phi
                h_own += phi * one
            else:
                f_other += phi
                h_other += phi * one
        g = above_grade[cp] - f_other
        hh = h_other
        if pull:
            g += 0.5 * (counts[cp] - 1.0) - f_own
            hh += h_own
        grad[order[p]] = sigma * g
        hess[order[p]] = sigma * sigma * hh
    return grad, hess


# Above this many near pairs per row (|Δs| ≤ WINDOW/σ) the grid is used: the window
# sum costs ~10 ns per near pair, and data that dense is where the grid is accurate
# (its error per pair is O((σh)²) and random in sign, so it shrinks relative to the
# gradient as more rows fall within 1/σ of each other). Measured at n = 2e4.
WINDOW_MAX_NEAR_PER_ROW = 2500.0


# Past the node cap the grid's spacing grows with the score range and its error as
# (σh)^4: 7.4e-9 measured at σh = 1/32, so about 8e-7 at σh = 0.1. Beyond that (σ·range
# above ~52,000, or scores so far apart that the range overflows) only the exact window
# sum is used: slower on dense data, never wrong.
MAX_GRID_SIGMA_H = 0.1


def ranknet_fast_grad_hess(y: np.ndarray, s: np.ndarray, sigma: float, pull: bool,
                           ) -> tuple[np.ndarray, np.ndarray, str]:
    """One big query: the window sum when scores are sparse at the kernel's scale (or
    spread too wide for an accurate grid), the grid otherwise. Returns ``(grad, hess,
    method_used)``."""
    spread = float(s.max()) - float(s.min())
    grid_ok = bool(np.isfinite(spread)) and sigma * spread / (MAX_NODES - 1) <= MAX_GRID_SIGMA_H
    if not grid_ok or near_pairs(s, WINDOW / sigma) <= WINDOW_MAX_NEAR_PER_ROW * s.size:
        g, h = ranknet_window_grad_hess(y, s, sigma, pull)
        return g, h, "window"
    g, h = ranknet_grid_grad_hess(y, s, sigma, pull)
    return g, h, "grid"
