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

from gbrank._sessions import feature_rows, linked_sessions, session_columns

__all__ = ["session_blocks"]

# A block larger than this share of the sessions leaves no honest split: refused.
MAX_SHARE = 0.5


def session_blocks(name: str, X: Any, group: np.ndarray, blocks: Any, *,
                   X_test: Any = None, test_name: str = "") -> tuple[np.ndarray | None, str]:
    """The block of each session (``blocks`` as given, the query of each; else the
    sessions linked by a shared document: :func:`~gbrank._sessions.linked_sessions`),
    None when each session is its own block, and a note saying which. ``X_test``: a
    held-out log read apart (``--test-data`` ``test_name``; only the folds split these
    sessions); the note then gives the share of its rows that show a document of ``X``.

    Refuses a block that holds more than half the sessions: no split of it is honest.
    """
    given = blocks is not None
    drop = session_columns(X, group)
    if given:
        blocks = np.asarray(blocks).ravel()
        if blocks.size != group.size:
            raise ValueError(f"{name}: blocks holds {blocks.size} values for {group.size} "
                             "sessions; give one per session (the query it belongs to)")
        blocks = np.unique(blocks, return_inverse=True)[1].ravel()
    else:
        blocks = linked_sessions(feature_rows(X, drop), group)
    nb, ns = int(blocks.max(initial=-1)) + 1, group.size
    largest = int(np.bincount(blocks).max(initial=0))
    if ns and largest > MAX_SHARE * ns:
        how = ("by the query ids given" if given else
               "through shared documents (identical feature rows)")
        raise ValueError(
            f"{name}: {largest} of the log's {ns} sessions are linked {how}, so no "
            "split keeps the held-out part apart from the tuning part; give each session's "
            "query (--query-col, task_from_arrays(blocks=)) or a held-out log of other "
            "queries (--test-data)")
    parts = "the folds split" if X_test is not None else \
        "the held-out part and the folds split"
    if given:
        note = (f"the log's {ns} sessions form {nb} blocks by their queries (--query-col): "
                f"{parts} whole queries")
    elif nb == ns:
        note = (f"no two of the log's {ns} sessions share a document ({_document(drop)}), "
                f"so {parts} single sessions; if sessions of one query show the same "
                "documents with other feature values, name the queries (--query-col)")
    else:
        note = (f"the log's {ns} sessions form {nb} blocks that share documents "
                f"({_document(drop)}): {parts} whole blocks, so no document they judge "
                "was trained on in another session; --query-col names the queries instead")
    if X_test is not None:
        share = _shared(X, X_test, drop)
        if share > 0:
            note += (f"; {share:.1%} of the rows of --test-data {test_name} show a document "
                     "of --data (its test is not of unseen queries)")
    return (blocks if nb < ns else None), note


def _document(drop: np.ndarray) -> str:
    k = int(drop.sum())
    if k == 0 or k == drop.size:
        return "an identical feature row"
    return (f"an identical feature row less the {k} column{'s' * (k > 1)} constant within "
            "each session")


def _shared(X: Any, X_test: Any, drop: np.ndarray) -> float:
    """The share of ``X_test``'s rows whose document (feature row less the columns
    ``drop``) is also a row of ``X``."""
    n = X.shape[0]
    ids = feature_rows(np.vstack([_dense(X), _dense(X_test)]), drop)
    return float(np.isin(ids[n:], ids[:n]).mean()) if ids.size > n else 0.0


def _dense(X: Any) -> np.ndarray:
    return X.toarray() if hasattr(X, "toarray") else np.asarray(X, dtype=np.float64)
