import numpy as np
import pytest

from gbrank.datasets import load_letor, make_ranking


def test_load_letor_query_file(tmp_path):
    (tmp_path / "r.txt").write_text("2 1:0.5 3:1\n0 2:1\n1 1:0.1\n")
    (tmp_path / "r.txt.query").write_text("2\n1\n")
    X, y, g = load_letor(tmp_path / "r.txt", n_features=3)
    assert X.shape == (3, 3)
    np.testing.assert_array_equal(y, [2, 0, 1])
    np.testing.assert_array_equal(g, [2, 1])


def test_load_letor_qid_fields(tmp_path):
    (tmp_path / "r.txt").write_text("2 qid:7 1:0.5\n0 qid:7 2:1\n1 qid:9 1:0.1\n4 qid:3 1:1\n")
    _, y, g = load_letor(tmp_path / "r.txt")
    np.testing.assert_array_equal(g, [2, 1, 1])
    np.testing.assert_array_equal(y, [2, 0, 1, 4])


def test_load_letor_mismatched_query_file(tmp_path):
    (tmp_path / "r.txt").write_text("2 1:0.5\n0 2:1\n")
    (tmp_path / "r.txt.query").write_text("3\n")
    with pytest.raises(ValueError, match="sum to 3, file has 2 rows"):
        load_letor(tmp_path / "r.txt")


def test_make_ranking_shape_and_grades():
    X, y, g = make_ranking(n_queries=20, rows_per_query=10, n_features=5, seed=1)
    assert X.shape == (200, 5) and g.sum() == 200
    counts = np.bincount(y.astype(int), minlength=5)
    assert counts[0] > counts[4] > 0  # skewed toward low grades, every grade present


def test_shared_reference_data_loads(rank_data):
    assert rank_data["X_train"].shape[0] == rank_data["g_train"].sum() == 3005
    assert rank_data["X_test"].shape[1] == rank_data["X_train"].shape[1]
