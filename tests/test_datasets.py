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


def test_make_demand_levels_equal_grades_one_query():
    from gbrank.datasets import make_demand_levels

    X, y = make_demand_levels(n_rows=10_000, n_features=20, seed=0)
    assert X.shape == (10_000, 20)
    np.testing.assert_array_equal(np.bincount(y.astype(int)), [2000] * 5)  # the seed's 5 × 2,000
    X2, y2 = make_demand_levels(n_rows=10_000, n_features=20, seed=0)
    np.testing.assert_array_equal(X, X2)
    np.testing.assert_array_equal(y, y2)
    # Uneven sizes differ by at most one row.
    _, y3 = make_demand_levels(n_rows=1003, n_grades=4, seed=1)
    c = np.bincount(y3.astype(int))
    assert c.sum() == 1003 and c.max() - c.min() <= 1


def test_make_demand_levels_grades_follow_features():
    from gbrank.datasets import make_demand_levels

    # Without noise the grade is a monotone function of one linear score of X: a linear
    # least-squares fit must rank the rows almost perfectly (Spearman close to 1).
    X, y = make_demand_levels(n_rows=2000, noise=0.0, seed=3)
    coef, *_ = np.linalg.lstsq(np.c_[X, np.ones(len(X))], y, rcond=None)
    pred = np.c_[X, np.ones(len(X))] @ coef
    rank_pred = np.argsort(np.argsort(pred))
    rank_y = np.argsort(np.argsort(y + 1e-9 * np.arange(len(y))))
    assert np.corrcoef(rank_pred, rank_y)[0, 1] > 0.95


@pytest.mark.parametrize("kwargs, name", [
    ({"n_rows": 3}, "n_rows"), ({"n_grades": 1}, "n_grades"),
    ({"noise": -1.0}, "noise"), ({"n_features": 0}, "n_features")])
def test_make_demand_levels_bad_parameters(kwargs, name):
    from gbrank.datasets import make_demand_levels

    with pytest.raises(ValueError, match=name):
        make_demand_levels(**kwargs)


def test_make_imbalanced_rate():
    from gbrank.datasets import make_imbalanced

    X, y = make_imbalanced(n_rows=20_000, positive_rate=0.02, flip=0.0, seed=0)
    assert X.shape == (20_000, 20)
    assert set(np.unique(y)) == {0.0, 1.0}
    assert abs(y.mean() - 0.02) < 0.003
    with pytest.raises(ValueError, match="positive_rate"):
        make_imbalanced(positive_rate=0.7)


def test_load_breast_cancer_imbalanced():
    from sklearn.datasets import load_breast_cancer

    from gbrank.datasets import load_breast_cancer_imbalanced

    X, y = load_breast_cancer_imbalanced(positive_rate=0.05, seed=0)
    _, target = load_breast_cancer(return_X_y=True)
    n_benign = int(np.sum(target == 1))
    assert int(np.sum(y == 0)) == n_benign  # every benign row kept
    k = int(y.sum())
    assert k == round(0.05 * n_benign / 0.95)
    assert X.shape == (n_benign + k, 30)
