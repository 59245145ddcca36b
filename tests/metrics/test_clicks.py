"""gbrank.metrics.ips_dcg: each list a session, which shows each position once."""

from __future__ import annotations

import numpy as np
import pytest

from gbrank.datasets import make_ranking, simulate_clicks
from gbrank.metrics import ips_dcg


def _slow_ips_dcg(clicks, s, position, rho, group, k):
    """Per session: Σ over its top k rows by score (ties: row order) of
    click / ρ(position) / log2(rank + 1); the mean over sessions."""
    out, start = [], 0
    for size in group:
        rows = np.arange(start, start + size)
        order = rows[np.lexsort((rows, -s[rows]))][:k]
        out.append(sum(clicks[r] / rho[position[r] - 1] / np.log2(i + 2)
                       for i, r in enumerate(order)))
        start += size
    return float(np.mean(out))


def test_a_log_of_sessions_without_its_lists_is_refused():
    """Without group= every session of the log was read as one list, silently: 2.0
    against 1.34 per session (seventh probe), position 1 on hundreds of rows."""
    X, y, g = make_ranking(n_queries=30, rows_per_query=12, n_features=4, seed=0)
    log = simulate_clicks(y, g, X[:, 0], top_n=8, n_sessions=5, sessions="keep", seed=1)
    s = np.random.default_rng(0).standard_normal(log.clicks.size)
    rho = np.asarray(log.examination)
    value = ips_dcg(log.clicks, s, log.position, rho, group=log.group, k=5)
    assert value == pytest.approx(_slow_ips_dcg(log.clicks, s, log.position, rho,
                                                log.group, 5), abs=1e-12)
    with pytest.raises(ValueError, match=r"no query structure, and position 1 is on \d+ "
                       "rows: every session would be read as one list"):
        ips_dcg(log.clicks, s, log.position, rho, k=5)
    # Several sessions under one id: warned (the value is of the merged list).
    merged = np.repeat(np.arange(log.group.size) // 2, log.group)
    with pytest.warns(UserWarning, match="several sessions under one id"):
        ips_dcg(log.clicks, s, log.position, rho, qid=merged, k=5)
    # One session without group= is one list, as for every metric.
    first = slice(0, int(log.group[0]))
    assert ips_dcg(log.clicks[first], s[first], log.position[first], rho, k=5) == \
        pytest.approx(_slow_ips_dcg(log.clicks[first], s[first], log.position[first], rho,
                                    log.group[:1], 5), abs=1e-12)
