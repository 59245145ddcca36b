"""gbrank._sessions: which sessions of a click log show the same documents, and the
held-out draw of whole blocks of them."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from gbrank._sessions import feature_rows, held_out_blocks, linked_sessions


def _components_by_hand(X, group):
    """Union-find over sessions, joining two whenever they hold an equal row."""
    session = np.repeat(np.arange(group.size), group)
    parent = list(range(group.size))

    def root(i):
        while parent[i] != i:
            i = parent[i]
        return i

    for a in range(len(X)):
        for b in range(a):
            if np.array_equal(X[a], X[b]):
                parent[root(session[a])] = root(session[b])
    roots = [root(i) for i in range(group.size)]
    return np.unique(roots, return_inverse=True)[1]


def test_sessions_sharing_a_row_directly_or_through_others_are_one_block():
    rng = np.random.default_rng(0)
    docs = np.round(rng.standard_normal((12, 3)), 2)
    pick = rng.integers(0, 12, size=60)  # 15 sessions of 4 rows drawn from 12 documents
    X, group = docs[pick], np.full(15, 4)
    got = linked_sessions(feature_rows(X), group)
    want = _components_by_hand(X, group)
    # The same partition (labels may differ): equal pairs, both ways.
    assert np.array_equal(got[:, None] == got[None, :], want[:, None] == want[None, :])
    X2 = np.arange(60.0).reshape(20, 3)  # no row twice: every session its own block
    assert np.array_equal(linked_sessions(feature_rows(X2), np.full(5, 4)), np.arange(5))


def test_feature_rows_reads_frames_and_signed_zeros_alike():
    X = np.array([[0.0, 1.0], [-0.0, 1.0], [2.0, 1.0]])
    assert feature_rows(X).tolist()[0] == feature_rows(X).tolist()[1]
    df = pd.DataFrame({"a": ["x", "x", "y"], "b": [1, 1, 1]})
    ids = feature_rows(df)
    assert ids[0] == ids[1] != ids[2]


@pytest.mark.parametrize("share", [0.1, 0.25, 0.5])
def test_held_out_blocks_are_whole_and_near_the_share(share):
    blocks = np.repeat(np.arange(30), 4)  # 120 lists, 4 per block
    held = held_out_blocks(blocks, share, np.random.default_rng(1))
    for b in range(30):  # whole blocks only
        assert held[blocks == b].all() or not held[blocks == b].any()
    assert share * 120 <= held.sum() < share * 120 + 4
    assert not held_out_blocks(np.array([0, 0, 1]), 0.9, np.random.default_rng(0)).all()


def test_session_columns_are_those_constant_within_every_list():
    from gbrank._sessions import session_columns

    X = np.array([[1.0, 5.0, np.nan, 0.0], [2.0, 5.0, np.nan, 0.0],
                  [3.0, 7.0, 1.0, 0.0], [4.0, 7.0, 1.0, 1.0]])
    assert session_columns(X, np.array([2, 2])).tolist() == [False, True, True, False]
    df = pd.DataFrame({"doc": ["a", "b", "a", "b"], "device": ["m", "m", "d", "d"]})
    assert session_columns(df, np.array([2, 2])).tolist() == [False, True]
    # sessions of one query at two hours: one document each, read without the hour
    ids = feature_rows(np.c_[X[:, :1], [9.0, 9.0, 3.0, 3.0]], np.array([False, True]))
    assert ids.tolist() == feature_rows(X[:, :1]).tolist()
