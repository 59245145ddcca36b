"""Click logs simulated from graded data (position-based and cascade users)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from gbrank._validation import check_integer, check_number


@dataclass(frozen=True)
class ClickLog:
    """Simulated clicks on the rows a logging ranker displayed (see :func:`simulate_clicks`).

    Every array has one entry per logged row: a displayed row, once (``sessions="sum"``)
    or once per session (``sessions="keep"``), grouped by query (or by query and
    session) in display order.

    Attributes
    ----------
    rows : ndarray of int64
        Index of the row in the data given to the simulation.
    group : ndarray of int64
        Sizes of the logged queries (sessions when kept), in row order.
    qid : ndarray of int64
        The query (index into the input queries) of every logged row.
    position : ndarray of int64
        1-based display rank under the logging ranker.
    clicks : ndarray of float64
        Clicks: 0/1 per session, or the number of sessions that clicked the row.
    n_sessions : int
        Sessions simulated per query.
    examination : ndarray of float64
        P(examined | position) of the position-based user for positions 1…top_n (the
        true propensities; a cascade user's examination depends on the clicks above).

    Examples
    --------
    Two queries, the top 2 rows of each shown to 100 sessions:

    >>> from gbrank.datasets import simulate_clicks
    >>> log = simulate_clicks([2, 0, 1, 0, 1], [3, 2], [0.9, 0.1, 0.5, 0.2, 0.8], top_n=2,
    ...                       n_sessions=100)
    >>> log.rows.tolist(), log.group.tolist(), log.position.tolist()
    ([0, 2, 4, 3], [2, 2], [1, 2, 1, 2])
    >>> log.examination.tolist()  # (1/p)^eta with eta = 1
    [1.0, 0.5]
    >>> int(log.clicks[0])  # grade 2 (the top grade) at position 1: always clicked
    100
    """

    rows: np.ndarray
    group: np.ndarray
    qid: np.ndarray
    position: np.ndarray
    clicks: np.ndarray
    n_sessions: int
    examination: np.ndarray


def simulate_clicks(y: Any, group: Any = None, logging_scores: Any = None, *, qid: Any = None,
                    top_n: int = 10, user: str = "position", eta: float = 1.0,
                    epsilon_minus: float = 0.1, epsilon_plus: float = 1.0,
                    max_grade: int | None = None, stop_after_click: float = 1.0,
                    n_sessions: int = 1, sessions: str = "sum", randomized: float = 0.0,
                    seed: int = 0) -> ClickLog:
    r"""Clicks of simulated users on the top of each query, for learning and evaluating
    position-debiased ranking on graded data (the protocol of the unbiased
    learning-to-rank literature).

    A logging ranker (``logging_scores``, e.g. a weak model's predictions) orders each
    query — scores descending, ties by row order — and displays its top ``top_n``
    rows. A row of grade l at display position p is clicked in a session when it is
    examined and found attractive; attractiveness is

    .. math:: \epsilon^- + (\epsilon^+ - \epsilon^-)\frac{2^l - 1}{2^{g_{max}} - 1},

    and examination follows the ``user`` model:

    - ``"position"`` (position-based model): examined with probability
      :math:`(1/p)^\eta`, independently of everything else;
    - ``"cascade"``: the user reads from the top; after a click they stop with
      probability ``stop_after_click`` (1: the classic cascade model, at most one click)
      and otherwise read on to the end of the list.

    One random stream (``seed``) draws every session of every query (the
    ``randomized`` sessions' order excepted: a stream of its own), so a simulation is
    reproducible and a larger ``n_sessions`` extends, not replaces, a smaller one only
    when nothing else changes.

    Parameters
    ----------
    y : array-like
        True grades (non-negative integers).
    group : array-like, optional
        Query sizes, as everywhere in gbrank (neither ``group`` nor ``qid``: one query).
    logging_scores : array-like
        Scores of the logging ranker, one per row (required).
    qid : array-like, optional
        Per-row query ids instead of ``group``.
    top_n : int, default 10
        Rows displayed per query.
    user : {"position", "cascade"}, default "position"
    eta : float, default 1.0
        Severity η ≥ 0 of the position bias (position-based user).
    epsilon_minus, epsilon_plus : float, default 0.1 and 1.0
        Click probabilities of an examined row of the lowest and the top grade
        (click noise; ``0 ≤ ε⁻ ≤ ε⁺ ≤ 1``).
    max_grade : int, optional
        :math:`g_{max}`; default the largest grade in ``y``.
    stop_after_click : float, default 1.0
        Cascade user: probability of stopping after a click.
    n_sessions : int, default 1
        Sessions per query.
    sessions : {"sum", "keep"}, default "sum"
        ``"sum"``: one logged row per displayed row with its number of clicks over the
        sessions; ``"keep"``: one logged query per session with 0/1 clicks.
    randomized : float in [0, 1], default 0.0
        Share of sessions whose top ``top_n`` rows are displayed in a uniformly random
        order instead of the logging ranker's (a randomisation intervention,
        RandTop-n): the same row is then seen at several positions, which is what
        lets a learned correction tell position from relevance
        (:func:`position_identifiability`). Needs ``sessions="keep"`` when above 0.
        Drawn from a stream of its own, so the other sessions' clicks are those of
        ``randomized=0``.
    seed : int, default 0

    Returns
    -------
    ClickLog

    Examples
    --------
    >>> import numpy as np
    >>> from gbrank.datasets import make_ranking, simulate_clicks
    >>> X, y, group = make_ranking(n_queries=50, rows_per_query=20, n_features=5)
    >>> weak = X[:, 0] + np.random.default_rng(0).standard_normal(y.size)
    >>> log = simulate_clicks(y, group, weak, top_n=10, eta=1.0, n_sessions=5)
    >>> log.rows.size, int(log.position.max())
    (500, 10)
    """
    from gbrank._queries import prepare_ranking
    from gbrank._validation import check_choice

    y_arr = np.asarray(y, dtype=np.float64) if y is not None else None
    if logging_scores is None:
        raise ValueError("simulate_clicks needs logging_scores: the scores of the ranker "
                         "whose top rows the users saw")
    y_q, s_q, queries = prepare_ranking(y_arr, logging_scores, group, qid, None,
                                        integer_grades=True)
    top_n = check_integer(top_n, "top_n", 1)
    user = check_choice(user, "user", ("position", "cascade"))
    eta = check_number(eta, "eta", 0.0)
    eps_minus = check_number(epsilon_minus, "epsilon_minus", 0.0, 1.0)
    eps_plus = check_number(epsilon_plus, "epsilon_plus", eps_minus, 1.0)
    stop = check_number(stop_after_click, "stop_after_click", 0.0, 1.0)
    n_sessions = check_integer(n_sessions, "n_sessions", 1)
    sessions = check_choice(sessions, "sessions", ("sum", "keep"))
    randomized = check_number(randomized, "randomized", 0.0, 1.0)
    if randomized > 0.0 and sessions != "keep":
        raise ValueError("randomized sessions show rows at other positions than the "
                         "logging ranker's, so their clicks cannot be summed per displayed "
                         "row: use sessions='keep'")
    top = float(y_q.max()) if max_grade is None else float(
        check_integer(max_grade, "max_grade", 0))
    if y_q.size and float(y_q.max()) > top:
        raise ValueError(f"max_grade={max_grade} is below the largest grade {y_q.max()!r}")
    order_in = np.arange(y_q.size) if queries.order is None else queries.order
    # The displayed rows, per query in display order.
    shown, pos, qix = [], [], []
    offsets = queries.offsets
    for q in range(queries.n_queries):
        lo, hi = int(offsets[q]), int(offsets[q + 1])
        rank = np.argsort(-s_q[lo:hi], kind="stable")[:top_n]
        shown.append(lo + rank)
        pos.append(np.arange(1, rank.size + 1))
        qix.append(np.full(rank.size, q))
    shown_q = np.concatenate(shown) if shown else np.empty(0, dtype=np.int64)
    position = np.concatenate(pos) if pos else np.empty(0, dtype=np.int64)
    query = np.concatenate(qix) if qix else np.empty(0, dtype=np.int64)
    attractive = eps_minus + (eps_plus - eps_minus) * (
        np.expm1(y_q[shown_q] * np.log(2.0)) / np.expm1(top * np.log(2.0)) if top > 0
        else np.zeros(shown_q.size))
    examination = (1.0 / np.arange(1, top_n + 1)) ** eta
    rng = np.random.default_rng(seed)
    clicks = np.empty((n_sessions, shown_q.size))
    sizes = np.array([p.size for p in pos], dtype=np.int64)
    starts = np.concatenate(([0], np.cumsum(sizes)))
    # Each session's display: slot j of a query's top shows row shown_q[display[t, j]].
    display = np.tile(np.arange(shown_q.size), (n_sessions, 1))
    if randomized > 0.0:
        swap = np.random.default_rng([seed, 1])
        for t in range(n_sessions):
            for q in np.flatnonzero(swap.random(queries.n_queries) < randomized):
                lo, hi = starts[q], starts[q + 1]
                display[t, lo:hi] = lo + swap.permutation(hi - lo)
    attractive_all = attractive
    for t in range(n_sessions):
        attractive = attractive_all[display[t]]
        if user == "position":
            seen = rng.random(shown_q.size) < examination[position - 1]
            clicks[t] = seen & (rng.random(shown_q.size) < attractive)
        else:
            u_click, u_stop = rng.random(shown_q.size), rng.random(shown_q.size)
            reading = np.ones(queries.n_queries, dtype=bool)
            for p in range(1, top_n + 1):
                at = np.flatnonzero(position == p)  # one row per query long enough
                q_at = query[at]
                c = reading[q_at] & (u_click[at] < attractive[at])
                clicks[t, at] = c
                reading[q_at[c & (u_stop[at] < stop)]] = False
    rows = order_in[shown_q]
    if sessions == "sum":
        return ClickLog(rows=rows, group=sizes, qid=query, position=position,
                        clicks=clicks.sum(axis=0), n_sessions=n_sessions,
                        examination=examination)
    take = np.concatenate([np.arange(starts[q], starts[q + 1])
                           for q in range(queries.n_queries) for _ in range(n_sessions)]
                          ) if shown_q.size else np.empty(0, dtype=np.int64)
    session_of = np.concatenate([np.full(sizes[q], t) for q in range(queries.n_queries)
                                 for t in range(n_sessions)]) if shown_q.size else take
    return ClickLog(rows=rows[display[session_of, take]], group=np.repeat(sizes, n_sessions),
                    qid=query[take], position=position[take],
                    clicks=clicks[session_of, take], n_sessions=n_sessions,
                    examination=examination)


@dataclass(frozen=True)
class PositionIdentifiability:
    """How much of a click log can tell position from relevance
    (:func:`position_identifiability`).

    Attributes
    ----------
    n_pairs : int
        Query–document pairs in the log.
    n_identifying : int
        Pairs shown at two or more positions.
    positions : ndarray of int64
        The positions that occur, ascending.
    swaps : ndarray of int64, shape (len(positions), len(positions))
        ``swaps[i, j]``: pairs shown at both ``positions[i]`` and ``positions[j]``
        (symmetric; the diagonal counts the pairs shown at each position).

    Examples
    --------
    >>> from gbrank.datasets import position_identifiability
    >>> ident = position_identifiability([1, 2, 1, 2], item=[5, 6, 5, 6])  # never swapped
    >>> ident.share, str(ident).split(" (")[0]
    (0.0, 'none of its 2 query–document pairs was shown at two positions')
    """

    n_pairs: int
    n_identifying: int
    positions: np.ndarray
    swaps: np.ndarray

    @property
    def share(self) -> float:
        """The share of query–document pairs shown at two or more positions."""
        return self.n_identifying / self.n_pairs if self.n_pairs else 0.0

    def __str__(self) -> str:
        if self.n_identifying == 0:
            return (f"none of its {self.n_pairs} query–document pairs was shown at two "
                    "positions (every document of a query always at the same place)")
        k = self.positions.size
        off = self.swaps[np.triu_indices(k, 1)]
        return (f"{self.share:.1%} of its {self.n_pairs} query–document pairs "
                f"({self.n_identifying}) were shown at two or more positions; pairs of "
                f"positions seen together by at least one document: "
                f"{int(np.count_nonzero(off))} of {off.size}")


# A sparse X's rows are compared densified, up to this many cells.
_MAX_SPARSE_CELLS = 50_000_000


def _document_ids(X: Any, n: int) -> np.ndarray:
    """One id per row of ``X``, equal for equal rows (a document, when rows are
    query–document features): a DataFrame's rows by pandas' row hash (any column
    types), numbers by their bytes — a missing value (NaN) equals itself there, -0.0 is
    made 0.0 (np.unique along rows would call NaN rows distinct) — a sparse matrix
    densified first, up to ``_MAX_SPARSE_CELLS`` cells (a ValueError beyond)."""
    from gbrank._validation import as_float_array

    if hasattr(X, "iloc"):  # a pandas DataFrame
        import pandas as pd

        ids = pd.util.hash_pandas_object(X, index=False).to_numpy()
        if ids.size != n:
            raise ValueError(f"X has {ids.size} rows but there are {n} positions")
        return ids
    if hasattr(X, "toarray"):
        if X.shape[0] * X.shape[1] > _MAX_SPARSE_CELLS:
            raise ValueError(f"X is a sparse matrix of {X.shape[0] * X.shape[1]} cells, too "
                             "large to compare its rows densified: pass item= (one "
                             "document id per row)")
        X = X.toarray()
    rows = as_float_array(X, "X", allow_2d=True).reshape(n, -1)
    rows = np.ascontiguousarray(np.where(np.isnan(rows), np.nan, rows + 0.0))
    return rows.view(np.dtype((np.void, 8 * rows.shape[1]))).ravel()


def _query_documents(n: int, qid: Any, item: Any, X: Any) -> np.ndarray:
    """One id per row for its query–document pair (0 … m−1): the document from ``item``
    (ids) or ``X`` (equal feature rows, :func:`_document_ids`), within its query."""
    if item is not None:
        keys = np.asarray(item).reshape(n, -1) if np.ndim(item) else None
        if keys is None or keys.shape[0] != n:
            raise ValueError(f"item has {np.size(item)} entries but there are {n} rows")
        _, doc = np.unique(keys, axis=0, return_inverse=True)
    else:
        _, doc = np.unique(_document_ids(X, n), return_inverse=True)
    doc = doc.ravel()
    if qid is None:
        return doc
    q = np.asarray(qid).ravel()
    if q.size != n:
        raise ValueError(f"qid has {q.size} entries but there are {n} rows")
    _, qi = np.unique(q, return_inverse=True)
    _, pair = np.unique(np.stack([qi.ravel(), doc]), axis=1, return_inverse=True)
    return pair.ravel()


def position_identifiability(position: Any, qid: Any = None, item: Any = None,
                             X: Any = None) -> PositionIdentifiability:
    """How much a click log can identify position effects: the query–document pairs
    shown at two or more positions, and how often each two positions show one pair.

    A learned position-bias correction (``position_bias="unbiased"`` or
    ``"additive"``) separates the effect of a position from the relevance of what is
    shown there only through documents seen at several positions of the same query
    (a randomised display, swaps, or a logger that changed): a log where every document
    of a query always sat at the same place leaves position and relevance confounded,
    and the learned estimates then follow the logger's quality (Hager et al., ICTIR
    2025). Inverse propensity weighting with propensities known from elsewhere (a
    randomisation experiment) needs no such pairs.

    Parameters
    ----------
    position : array-like of int
        The logged display position of every row.
    qid : array-like, optional
        The query of every row (the query, not the session: sessions of one query are
        what can show a document at different places). ``None``: the documents identify
        the pairs by themselves (their ids are unique across queries, or ``X``'s rows
        are query–document features).
    item : array-like, optional
        The document of every row (e.g. ``ClickLog.rows``: the row of the graded data a
        logged row shows).
    X : array-like, sparse matrix or DataFrame, optional
        Instead of ``item``: feature rows, a document being its feature vector
        (query–document features differ between queries, so identical rows are one
        pair; a missing value equals itself).

    Returns
    -------
    PositionIdentifiability

    Examples
    --------
    The same three documents of one query in two sessions, in another order the
    second time (a swap of positions 1 and 2):

    >>> from gbrank.datasets import position_identifiability
    >>> ident = position_identifiability([1, 2, 3, 1, 2, 3], item=[7, 8, 9, 8, 7, 9])
    >>> ident.n_pairs, ident.n_identifying, float(ident.share)
    (3, 2, 0.6666666666666666)
    >>> int(ident.swaps[0, 1])
    2
    """
    from gbrank._validation import check_positions

    pos = check_positions(position, np.size(position))
    n = pos.size
    if (item is None) == (X is None):
        raise ValueError("position_identifiability needs the documents: item= (one id per "
                         "row) or X= (feature rows), one of them")
    pair = _query_documents(n, qid, item, X)
    values, slot = np.unique(pos, return_inverse=True)
    k = values.size
    n_pairs = int(pair.max()) + 1 if n else 0
    seen = np.zeros((n_pairs, k), dtype=bool)
    seen[pair, slot.ravel()] = True
    multi = seen.sum(axis=1) >= 2
    m = seen.astype(np.int64)
    swaps = m.T @ m
    return PositionIdentifiability(n_pairs=n_pairs, n_identifying=int(multi.sum()),
                                   positions=values.astype(np.int64), swaps=swaps)


@dataclass(frozen=True)
class MultiClickSessions:
    """Whether a click log's users look like cascade users, who stop after a click
    (:func:`multi_click_sessions`).

    Attributes
    ----------
    seen : float
        Of the sessions with a click, the share with two or more clicks.
    independent : float
        That share if every row were clicked independently at its position's click rate
        in this log (the position-based model).
    expected_count : float
        The number of sessions with two or more clicks that model expects.

    Examples
    --------
    >>> from gbrank.datasets import multi_click_sessions
    >>> m = multi_click_sessions([1, 1, 0, 0, 0, 1], group=[3, 3], position=[1, 2, 3] * 2)
    >>> m.seen, m.cascade_like
    (0.5, False)
    """

    seen: float
    independent: float
    expected_count: float

    @property
    def cascade_like(self) -> bool:
        """The sign every ``position_bias`` correction refuses by default: ``seen`` below
        a quarter of ``independent``, with at least 20 such sessions expected."""
        from gbrank._sessions import looks_cascade

        return looks_cascade(self.seen, self.independent, self.expected_count)

    def __str__(self) -> str:
        return (f"{self.seen:.1%} of its sessions with a click have two or more clicks, "
                f"where independent clicks at the positions' click rates would give about "
                f"{self.independent:.0%}")


def multi_click_sessions(clicks: Any, group: Any = None, position: Any = None, *,
                         session: Any = None) -> MultiClickSessions | None:
    """How often a click log's sessions have more than one click, against what the
    position-based model gives at the log's per-position click rates.

    Every ``position_bias`` correction assumes the position-based model: a position is
    examined with a fixed probability whatever was clicked above it. A cascade user
    reads down and stops after a click, so sessions with two clicks are rare; on such
    a log every correction did worse than none, and each refuses it by default
    (``on_cascade``, ``docs/evidence.md``). This is the figure they report.

    Parameters
    ----------
    clicks : array-like of 0/1
        One click indicator per logged row, a session's rows together.
    group : array-like of int, optional
        Session sizes in row order (or ``session=``, one of them).
    position : array-like of int
        The display position of every row.
    session : array-like, optional
        Instead of ``group``: the session of every row (its rows contiguous).

    Returns
    -------
    MultiClickSessions or None
        ``None`` when no session has a click, or when a group shows a position twice (a
        query's sessions together, not one session: the check needs a group per
        session, as ``"ipw"`` and ``"unbiased"`` do).

    Examples
    --------
    A cascade user: one click per session, however many rows were relevant.

    >>> from gbrank.datasets import make_ranking, simulate_clicks, multi_click_sessions
    >>> X, y, g = make_ranking(n_queries=200, rows_per_query=10, seed=0)
    >>> log = simulate_clicks(y, g, X[:, 0], user="cascade", n_sessions=5,
    ...                       sessions="keep", seed=0)
    >>> m = multi_click_sessions(log.clicks, log.group, log.position)
    >>> m.seen, m.cascade_like
    (0.0, True)
    """
    from gbrank._queries import query_structure
    from gbrank._sessions import multi_click_shares
    from gbrank._validation import KEEP_SESSIONS, as_float_array, check_clicks, check_positions

    y = as_float_array(clicks, "clicks")
    check_clicks(y, "multi_click_sessions", "clicks",
                 fix="how many clicks each session had is what this function counts; "
                     + KEEP_SESSIONS)
    if position is None:
        raise ValueError("multi_click_sessions needs position= (every row's display "
                         "position)")
    pos = check_positions(position, y.size)
    if (group is None) == (session is None):
        raise ValueError("multi_click_sessions needs the sessions: group= (sizes) or "
                         "session= (one id per row), one of them")
    queries = query_structure(y.size, group=group, qid=session)
    if queries.order is not None:
        raise ValueError("session= ids are not contiguous: a session's rows must be "
                         "together, in display order")
    _, slot = np.unique(pos, return_inverse=True)
    shares = multi_click_shares(y, queries.sizes, slot.ravel().astype(np.int64),
                                int(slot.max()) + 1 if y.size else 0)
    return None if shares is None else MultiClickSessions(*map(float, shares))


def estimate_propensity(clicks: Any, position: Any, qid: Any = None, item: Any = None,
                        X: Any = None, *, max_iter: int = 500, tol: float = 1e-10,
                        ) -> np.ndarray:
    r"""Examination probabilities ρ(p)/ρ(1) of the positions of a click log, estimated
    from the query–document pairs it shows at several positions.

    Under the position-based click model a document d of a query, shown n_dk times at
    position k, is clicked :math:`c_{dk} \sim n_{dk}\,\rho_k\,a_d` times (a_d its
    attractiveness). The estimate maximises the Poisson likelihood of that rank-one
    model by alternating closed-form updates,

    .. math:: a_d = \frac{\sum_k c_{dk}}{\sum_k n_{dk}\rho_k},\qquad
              \rho_k = \frac{\sum_d c_{dk}}{\sum_d n_{dk} a_d},

    over the pairs seen at two or more positions (a pair seen at one position fits its
    own a_d and says nothing of ρ), until ρ changes by less than ``tol``; it is returned
    relative to the smallest position. With a randomised display (``simulate_clicks(
    ..., randomized=...)``) or swaps between rankers these pairs are many; without any
    the log cannot tell position from relevance, and this function refuses
    (:func:`position_identifiability` says how much of a log qualifies).

    Parameters
    ----------
    clicks : array-like
        Clicks of every logged row (0/1 per session, or counts).
    position, qid, item, X
        As in :func:`position_identifiability`.
    max_iter : int, default 500
    tol : float, default 1e-10

    Returns
    -------
    ndarray of float64
        ρ(p)/ρ(p_min) for the positions that occur, ascending (``PositionIdentifiability
        .positions``); a sequence for ``propensity=`` when positions are 1, 2, ….

    Examples
    --------
    Two documents of one query, each at positions 1 and 2; each is clicked half as
    often at position 2:

    >>> from gbrank.datasets import estimate_propensity
    >>> rho = estimate_propensity(clicks=[4, 2, 2, 1], position=[1, 2, 1, 2],
    ...                           item=["a", "a", "b", "b"])
    >>> [round(float(r), 6) for r in rho]
    [1.0, 0.5]
    """
    from gbrank._validation import as_float_array, check_finite

    ident = position_identifiability(position, qid, item, X)
    if ident.n_identifying == 0:
        raise ValueError(f"the click log cannot identify position effects: {ident}; "
                         "propensities need documents seen at several positions (a "
                         "randomised display, swaps) or a randomisation experiment")
    c = as_float_array(clicks, "clicks")
    check_finite(c, "clicks")
    pos = np.asarray(position).ravel()
    if c.size != pos.size:
        raise ValueError(f"clicks has {c.size} entries but there are {pos.size} rows")
    doc = _query_documents(pos.size, qid, item, X)  # as position_identifiability pairs
    slot = np.searchsorted(ident.positions, pos)
    k = ident.positions.size
    n_docs = int(doc.max()) + 1
    shows = np.zeros((n_docs, k))
    hits = np.zeros((n_docs, k))
    np.add.at(shows, (doc, slot), 1.0)
    np.add.at(hits, (doc, slot), c)
    keep = (shows > 0).sum(axis=1) >= 2
    shows, hits = shows[keep], hits[keep]
    rho = np.ones(k)
    for _ in range(max_iter):
        a = hits.sum(axis=1) / np.maximum(shows @ rho, 1e-300)
        seen = shows.T @ a
        new = np.where(seen > 0, hits.sum(axis=0) / np.maximum(seen, 1e-300), 0.0)
        if new[0] <= 0:
            raise ValueError("no clicks at the first position among the documents seen "
                             "at several positions: the examination ratios are undefined")
        new = new / new[0]
        done = np.max(np.abs(new - rho)) < tol
        rho = new
        if done:
            break
    return rho
