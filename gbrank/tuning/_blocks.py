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

__all__ = ["session_blocks", "shared_documents"]

# A block larger than this share of the sessions leaves no honest split: refused.
MAX_SHARE = 0.5


def session_blocks(name: str, X: Any, group: np.ndarray, blocks: Any, *,
                   held_out: bool = True) -> tuple[np.ndarray | None, str]:
    """The block of each session (``blocks`` as given, the query of each; else the
    sessions linked by a shared document: :func:`~gbrank._sessions.linked_sessions`),
    None when each session is its own block, and a note saying which. ``held_out``:
    the task's held-out part is split from these sessions too (else only its folds).

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
    parts = "the held-out part and the folds split" if held_out else "the folds split"
    if given:
        return (blocks if nb < ns else None), (
            f"the log's {ns} sessions form {nb} blocks by their queries (--query-col): "
            f"{parts} whole queries")
    doc = _document(drop)
    if nb == ns:
        return None, (f"no two of the log's {ns} sessions share a document ({doc}), so "
                      f"{parts} single sessions; if sessions of one query show the same "
                      "documents with other feature values, name the queries (--query-col)")
    return blocks, (f"the log's {ns} sessions form {nb} blocks that share documents ({doc}): "
                    f"{parts} whole blocks, so no document they judge was trained on in "
                    "another session; --query-col names the queries instead")


def _document(drop: np.ndarray) -> str:
    k = int(drop.sum())
    if k == 0 or k == drop.size:
        return "an identical feature row"
    return (f"an identical feature row less the {k} column{'s' * (k > 1)} constant within "
            "each session")


def shared_documents(X: Any, group: np.ndarray, X_test: Any) -> float:
    """The share of ``X_test``'s rows whose document (feature row less the columns
    constant within each session of ``X``) is also a row of ``X``."""
    drop = session_columns(X, group)
    n = X.shape[0]
    both = np.vstack([_dense(X), _dense(X_test)])
    ids = feature_rows(both, drop)
    return float(np.isin(ids[n:], ids[:n]).mean()) if ids.size > n else 0.0


def _dense(X: Any) -> np.ndarray:
    return X.toarray() if hasattr(X, "toarray") else np.asarray(X, dtype=np.float64)
