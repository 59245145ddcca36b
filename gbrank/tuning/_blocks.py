"""Which sessions of a click log must stay on the same side of a split.

A click log's lists are sessions, and the sessions of one query show the same documents:
split by session, the held-out part and every validation fold hold rows identical to
training rows, and their scores flatter the model (figures: CHANGELOG.md, the clicks
guide). So the tuner splits whole *blocks*: the
queries when the user names them, else the sessions linked by a shared feature row (the
same document for the same query), the connected components of sessions and rows.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from gbrank._sessions import feature_rows, linked_sessions

__all__ = ["session_blocks"]

# A block larger than this share of the sessions leaves no honest split: refused.
MAX_SHARE = 0.5


def session_blocks(name: str, X: Any, group: np.ndarray,
                   blocks: np.ndarray | None) -> tuple[np.ndarray, str | None]:
    """The block of each session (``blocks`` as given, or :func:`linked_sessions`) and a
    note saying how the sessions were joined (None: each session its own block).

    Refuses a block that holds more than half the sessions: no split of it is honest.
    """
    given = blocks is not None
    if given:
        blocks = np.asarray(blocks).ravel()
        if blocks.size != group.size:
            raise ValueError(f"{name}: blocks holds {blocks.size} values for {group.size} "
                             "sessions; give one per session (the query it belongs to)")
        blocks = np.unique(blocks, return_inverse=True)[1].ravel()
    else:
        blocks = linked_sessions(feature_rows(X), group)
    nb, ns = int(blocks.max(initial=-1)) + 1, group.size
    largest = int(np.bincount(blocks).max(initial=0))
    if ns and largest > MAX_SHARE * ns:
        how = ("by the query ids given" if given else
               "through identical feature rows (the same document shown in several "
               "sessions)")
        raise ValueError(
            f"{name}: {largest} of the log's {ns} sessions are linked {how}, so no "
            "split keeps the held-out part apart from the tuning part; give each session's "
            "query (--query-col, task_from_arrays(blocks=)) or a held-out log of other "
            "queries (--test-data)")
    if nb == ns:
        return blocks, None
    how = ("their queries (--query-col)" if given else
           "shared feature rows (the same document shown in several sessions; "
           "--query-col names the queries instead)")
    return blocks, (f"the log's {ns} sessions form {nb} blocks by {how}: the held-out part "
                    "and the folds split whole blocks, so no row they judge was trained on")
