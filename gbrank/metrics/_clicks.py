"""Offline evaluation on click logs: inverse-propensity-scored DCG."""

from __future__ import annotations

from typing import Any

import numpy as np

from gbrank._queries import query_structure
from gbrank._validation import (
    as_float_array,
    check_finite,
    check_integer,
    check_lengths,
    check_positions,
    check_propensity,
    propensity_per_row,
    repeated_position,
)

__all__ = ["ips_dcg"]


def ips_dcg(clicks: Any, s: Any, position: Any, propensity: Any, group: Any = None,
            k: int | None = 10, *, qid: Any = None, weight: Any = None) -> float:
    r"""Inverse-propensity-scored DCG@k of the ranking ``s`` on logged clicks.

    Rows of a query are ranked by ``s`` (descending, ties by row order); a clicked row
    at rank r counts its clicks divided by the examination probability of the position
    it was *logged* at and by the rank discount:

    .. math:: \mathrm{IPS\text{-}DCG@k} = \sum_{r \le k}
              \frac{c_{(r)}}{\rho(p_{(r)}) \log_2(r + 1)},

    averaged over queries (weighted by query weights). Under the position-based model
    with the true propensities ρ, its expectation over click logs is the DCG@k of the
    ranking with gains P(relevant), which makes it usable for model selection and early
    stopping on click logs (Joachims et al., WSDM 2017).

    Parameters
    ----------
    clicks : array-like
        Clicks per row (0/1, or counts over sessions).
    s : array-like
        The model's scores.
    position : array-like of int
        The logged display position of every row (1-based, or any non-negative slot
        ids with a mapping ``propensity``).
    propensity : array-like or dict
        ρ(p) = P(examined | position p) in (0, 1]: a sequence for p = 1, 2, …, or a
        mapping ``{position: ρ}``.
    group
        Query structure, as in :func:`gbrank.metrics.ndcg`.
    k : int or None, default 10
        Cut-off; ``None``: every row.
    qid, weight
        Query structure and per-query weights, as in :func:`gbrank.metrics.ndcg`.

    Returns
    -------
    float

    Examples
    --------
    >>> import numpy as np
    >>> from gbrank.metrics import ips_dcg
    >>> # the click at logged position 2 (propensity 0.5) is ranked first: 1 / 0.5 / log2(2)
    >>> ips_dcg([0.0, 1.0], [0.1, 0.9], position=[1, 2], propensity=[1.0, 0.5])
    2.0
    """
    c = as_float_array(clicks, "clicks")
    s = as_float_array(s, "scores")
    check_lengths(c, s)
    check_finite(c, "clicks")
    check_finite(s, "scores")
    if np.any(c < 0):
        raise ValueError("clicks must be non-negative counts")
    p = check_positions(position, c.size, low=0 if isinstance(propensity, dict) else 1)
    rho = propensity_per_row(check_propensity(propensity), p)
    kk = check_integer(k, "k", 1, allow_none=True)
    queries = query_structure(c.size, group=group, qid=qid, weight=weight)
    c, s, rho = queries.apply(c), queries.apply(s), queries.apply(rho)
    offsets = queries.offsets
    sizes = np.diff(offsets)
    _check_one_session_per_list(queries.apply(p), sizes, group is None and qid is None)
    query = np.repeat(np.arange(sizes.size), sizes)
    order = np.lexsort((np.arange(c.size), -s, query))  # by query, score desc, row order
    rank = np.arange(c.size) - np.repeat(offsets[:-1], sizes)  # 0-based within the query
    gain = c[order] / rho[order] / np.log2(rank + 2.0)
    if kk is not None:
        gain[rank >= kk] = 0.0
    per_query = np.bincount(query, weights=gain, minlength=sizes.size)
    if queries.weights is None:
        return float(np.mean(per_query))
    return float(np.dot(queries.weights, per_query) / np.sum(queries.weights))


def _check_one_session_per_list(position: np.ndarray, sizes: np.ndarray, none_given: bool,
                                ) -> None:
    """A list shows each position once: a position on several rows of one list means
    sessions read as one list — all of them when no query structure was given (refused:
    the value would be of one list of the whole log), or several merged under one id
    (warned)."""
    found = repeated_position(position, sizes)
    if found is None:
        return
    at, pos, rows = found
    if none_given:
        raise ValueError(
            f"ips_dcg got no query structure, and position {pos} is on {rows} rows: every "
            "session would be read as one list. Pass each session's rows with group= "
            "(sizes) or qid= (ids), e.g. group=log.group of a simulated ClickLog")
    import warnings

    warnings.warn(
        f"list {at} (in ascending id order) shows position {pos} on {rows} rows: several "
        "sessions under one id, which ips_dcg reads as one list; give each session its "
        "own id", UserWarning, stacklevel=3)
