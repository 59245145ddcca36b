import numpy as np
import pytest

from gbrank.datasets import load_data, load_letor, make_ranking


def test_load_letor_query_file(tmp_path):
    (tmp_path / "r.txt").write_text("2 1:0.5 3:1\n0 2:1\n1 1:0.1\n")
    (tmp_path / "r.txt.query").write_text("2\n1\n")
    X, y, g = load_letor(tmp_path / "r.txt", n_features=3)
    assert X.shape == (3, 3)
    np.testing.assert_array_equal(y, [2, 0, 1])
    np.testing.assert_array_equal(g, [2, 1])


def test_load_letor_qid_fields(tmp_path):
    (tmp_path / "r.txt").write_text("2 qid:7 1:0.5\n0 qid:7 2:1\n1 qid:9 1:0.1\n4 qid:3 1:1\n")
    _, y, g = load_letor(tmp_path / "r.txt")  # gathered by ascending id: 3, 7, 9
    np.testing.assert_array_equal(g, [1, 2, 1])
    np.testing.assert_array_equal(y, [4, 2, 0, 1])


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


# ---- rows of one query id gathered; columns a table cannot give -----------------------------

# qid 1, 1, 2, 2, 1, 1, 2, 2: two queries of four rows, interleaved. Feature 1 numbers the
# file's rows (1..8), so a gathered row shows where it came from.
INTERLEAVED = ("3 qid:1 1:1 2:0.5\n0 qid:1 1:2\n1 qid:2 1:3\n2 qid:2 1:4 2:1.5\n"
               "# a comment line is not a row\n"
               "4 qid:1 1:5\n0 qid:1 1:6\n2 qid:2 1:7 # trailing comment\n1 qid:2 1:8\n")
FILE_Y = [3, 0, 1, 2, 4, 0, 2, 1]
# Query 1 (first seen) holds file rows 0, 1, 4, 5; query 2 rows 2, 3, 6, 7.
GATHERED_ORDER = [0, 1, 4, 5, 2, 3, 6, 7]
GATHERED_X = [[1, 0.5], [2, 0], [5, 0], [6, 0], [3, 0], [4, 1.5], [7, 0], [8, 0]]
GATHERED_Y = [3, 0, 4, 0, 1, 2, 2, 1]


def test_load_letor_gathers_interleaved_query_ids(tmp_path):
    path = tmp_path / "r.txt"
    path.write_text(INTERLEAVED)
    X, y, g, order = load_letor(path, return_order=True)
    np.testing.assert_array_equal(g, [4, 4])
    np.testing.assert_array_equal(X.toarray(), GATHERED_X)
    np.testing.assert_array_equal(y, GATHERED_Y)
    np.testing.assert_array_equal(order, GATHERED_ORDER)
    # order maps the rows back to the file's.
    back = np.empty_like(y)
    back[order] = y
    np.testing.assert_array_equal(back, FILE_Y)
    X2, y2, g2 = load_data(path)
    np.testing.assert_array_equal(X2.toarray(), GATHERED_X)
    np.testing.assert_array_equal(y2, GATHERED_Y)
    np.testing.assert_array_equal(g2, [4, 4])


def test_load_letor_gathers_queries_by_ascending_id(tmp_path):
    """GBRanker's rule: queries in ascending id order, each query's rows in file order,
    so a loaded table and GBRanker on the file as read train the same model."""
    path = tmp_path / "r.txt"
    path.write_text("2 qid:9 1:1\n0 qid:9 1:2\n1 qid:3 1:3\n")  # ids need not ascend
    X, y, g, order = load_letor(path, return_order=True)
    np.testing.assert_array_equal(g, [1, 2])
    np.testing.assert_array_equal(order, [2, 0, 1])
    np.testing.assert_array_equal(X.toarray().ravel(), [3, 1, 2])


def test_query_file_sizes_win_over_qid_fields(tmp_path):
    # LightGBM's .query file gives sizes of consecutive rows: nothing is gathered.
    path = tmp_path / "r.txt"
    path.write_text(INTERLEAVED)
    (tmp_path / "r.txt.query").write_text("2\n2\n2\n2\n")
    X, y, g, order = load_letor(path, return_order=True)
    np.testing.assert_array_equal(g, [2, 2, 2, 2])
    np.testing.assert_array_equal(order, np.arange(8))
    np.testing.assert_array_equal(X.toarray()[:, 0], np.arange(1, 9))


def test_load_letor_refuses_qid_on_some_rows_only(tmp_path):
    path = tmp_path / "r.txt"
    path.write_text("2 qid:1 1:1\n# comment\n0 1:2\n1 qid:1 1:3\n")
    for load in (load_letor, load_data):
        with pytest.raises(ValueError, match=r"r\.txt: line 3 has no qid: field while other "
                                             r"rows have one"):
            load(path)


@pytest.mark.parametrize("text", ["2 qid:0 1:1\n0 qid:0 1:2\n1 qid:0 1:3\n",
                                  "2 1:1\n0 1:2\n1 1:3\n"])
def test_no_query_structure_is_one_query(text, tmp_path):
    path = tmp_path / "r.txt"
    path.write_text(text)
    with pytest.warns(UserWarning, match=r"no query structure .* one query of all 3 rows"):
        _, y, g = load_letor(path)  # said: a .query file left behind reads so
    np.testing.assert_array_equal(g, [3])
    np.testing.assert_array_equal(y, [2, 0, 1])
    assert load_data(path)[2] is None


def test_load_table_refuses_text_columns_and_names_them(tmp_path):
    from gbrank.datasets import NonNumericColumnsError, load_table

    path = tmp_path / "t.csv"
    path.write_text("q,rel,a,city,b,when\n7,2,0.5,Paris,1,2024-01-02\n3,1,,Rome,2,2024-01-03\n"
                    "7,0,0.3,Oslo,3,2024-01-04\n")
    with pytest.raises(NonNumericColumnsError, match=r"not numeric: \['city', 'when'\].*"
                       r"'Paris'.*drop_cols=\['city', 'when'\]") as exc:
        load_table(path, "rel", "q")
    assert exc.value.columns == ("city", "when")
    with pytest.raises(NonNumericColumnsError, match="city"):
        load_data(path, label_col="rel")
    X, y, g, names, order = load_table(path, "rel", "q", drop_cols=["city", "when"],
                                       return_order=True)
    assert names == ["a", "b"]
    np.testing.assert_array_equal(X, [[np.nan, 2], [0.5, 1], [0.3, 3]])  # missing -> NaN
    np.testing.assert_array_equal(y, [1, 2, 0])  # query 3, then query 7's two rows
    np.testing.assert_array_equal(g, [1, 2])
    np.testing.assert_array_equal(order, [1, 0, 2])
    X2, _, _, names2 = load_table(path, "rel", "q", feature_cols=["b", "a"])
    assert names2 == ["b", "a"]
    np.testing.assert_array_equal(X2, X[:, ::-1])


@pytest.mark.parametrize("kwargs, match", [
    ({"feature_cols": ["a", "rel"]}, "feature_cols includes 'rel', the label_col"),
    ({"feature_cols": ["a", "q"]}, "feature_cols includes 'q', the qid_col"),
    ({"drop_cols": ["nope"]}, r"drop_cols names 1 column\(s\) the table does not have: "
                              r"\['nope'\]"),
    ({"feature_cols": ["a"], "drop_cols": ["b"]}, "feature_cols or drop_cols, not both"),
    ({"drop_cols": ["a", "b"]}, "no feature columns besides 'rel' and 'q'"),
])
def test_load_table_column_choices_are_checked(kwargs, match, tmp_path):
    from gbrank.datasets import load_table

    path = tmp_path / "t.csv"
    path.write_text("q,rel,a,b\n7,2,0.5,1\n3,1,0.1,2\n")
    with pytest.raises(ValueError, match=match):
        load_table(path, "rel", "q", **kwargs)


def test_load_table_refuses_missing_query_ids(tmp_path):
    from gbrank.datasets import load_table

    path = tmp_path / "t.csv"
    path.write_text("q,rel,a\nx,2,0.5\n,1,0.1\ny,0,0.2\n")
    with pytest.raises(ValueError, match=r"qid column 'q' has 1 missing value\(s\) \(first "
                                         r"at row 1\)"):
        load_table(path, "rel", "q")


def test_load_letor_files_stack_whole_queries_at_one_width(tmp_path):
    from gbrank.datasets import load_letor_files

    (tmp_path / "a.txt").write_text("2 qid:5 1:0.5\n0 qid:5 1:0.1\n")
    (tmp_path / "b.txt").write_text("1 qid:5 3:0.3\n0 qid:2 2:0.2\n")
    X, y, g = load_letor_files([tmp_path / "a.txt", tmp_path / "b.txt"])
    # Each file's queries stay whole and apart (qid 5 in both files is two queries).
    assert X.shape == (4, 3) and g.tolist() == [2, 1, 1] and y.tolist() == [2, 0, 0, 1]
    Xt, _, _ = load_letor_files([tmp_path / "a.txt"], n_features=X.shape[1])
    assert Xt.shape == (2, 3)
    (tmp_path / "flat.txt").write_text("1 1:0.5\n0 1:0.1\n")
    with pytest.raises(ValueError, match="flat.txt: no query structure"):
        load_letor_files([tmp_path / "a.txt", tmp_path / "flat.txt"])


def test_letor_folds_rotate_and_refuse_parts_without_query_ids(tmp_path):
    from gbrank.datasets import letor_fold, letor_rotation, load_letor_folds

    assert letor_rotation(3) == ("S3", "S4", "S5", "S1", "S2")
    for p in range(1, 6):
        (tmp_path / f"S{p}.txt").write_text(f"{p % 2} qid:{p} 1:{p}\n0 qid:{p} 2:1\n")
    train, valid, test = letor_fold(load_letor_folds(tmp_path), 3)
    assert train[2].tolist() == [2, 2, 2] and valid[0][0, 0] == 1.0 and test[0][0, 0] == 2.0
    (tmp_path / "S4.txt").write_text("1 1:0.5\n0 2:1\n")
    with pytest.raises(ValueError, match="S4.txt: no query structure"):
        load_letor_folds(tmp_path)


def test_table_columns_read_the_header_of_each_format(tmp_path):
    import pandas as pd

    from gbrank.datasets import table_columns

    df = pd.DataFrame({"qid": [1, 1], "label": [1, 0], "x": [0.5, 0.1]})
    df.to_csv(tmp_path / "t.csv", index=False)
    df.to_csv(tmp_path / "t.tsv", index=False, sep="\t")
    df.to_parquet(tmp_path / "t.parquet")
    for name in ("t.csv", "t.tsv", "t.parquet"):
        assert table_columns(tmp_path / name) == ["qid", "label", "x"]


def test_a_headerless_table_without_extension_names_the_table_route(tmp_path):
    """LightGBM's binary.train is a tab-separated table with no header or extension:
    read as LETOR it fails, and the error says how a table is read."""
    path = tmp_path / "binary.train"
    path.write_text("1\t0.5\t0.25\n0\t0.1\t0.75\n")
    with pytest.raises(ValueError, match=r"cannot parse as LETOR/SVMlight .*header row.*"
                                         r"\.csv, \.tsv or \.parquet"):
        load_letor(path)


def test_files_read_together_share_one_feature_numbering(tmp_path):
    """scikit-learn's dump_svmlight_file writes zero-based indices; a test file where
    feature 0 happens to be all zero has no index 0, and read on its own ("auto") it is
    taken as one-based: every column shifted left against the training file's."""
    from sklearn.datasets import dump_svmlight_file, load_svmlight_files

    from gbrank._queries import tie_order
    from gbrank.datasets import load_letor, load_letor_files
    from gbrank.tuning._sources import letor_parts

    rng = np.random.default_rng(0)
    X = rng.random((40, 4))
    X[:, 0] = (rng.random(40) < 0.3)  # a rare indicator: present in train ...
    Xt = rng.random((20, 4))
    Xt[:, 0] = 0.0  # ... absent in test
    q, qt = np.repeat(np.arange(4), 10), np.repeat(np.arange(2), 10)
    dump_svmlight_file(X, rng.integers(0, 3, 40), str(tmp_path / "train.txt"), query_id=q)
    dump_svmlight_file(Xt, rng.integers(0, 3, 20), str(tmp_path / "test.txt"), query_id=qt)
    want = load_svmlight_files([str(tmp_path / "train.txt"), str(tmp_path / "test.txt")],
                               query_id=True)
    (A, _, _), (B, _, _) = letor_parts([tmp_path / "train.txt"], [tmp_path / "test.txt"])
    np.testing.assert_allclose(A.toarray(), want[0].toarray())
    np.testing.assert_allclose(B.toarray(), want[3].toarray())
    np.testing.assert_allclose(B.toarray(), Xt)
    both = load_letor_files([tmp_path / "train.txt", tmp_path / "test.txt"])[0].toarray()
    np.testing.assert_allclose(both[40:], Xt)
    # apart, "auto" decides per file (as scikit-learn's load_svmlight_file): say which
    alone = load_letor(tmp_path / "test.txt", n_features=4)[0].toarray()
    assert not np.allclose(alone, Xt)
    np.testing.assert_allclose(load_letor(tmp_path / "test.txt", n_features=4,
                                          zero_based=True)[0].toarray(), Xt)
    with pytest.raises(ValueError, match="feature index 0 in a file read one-based"):
        load_letor(tmp_path / "train.txt", zero_based=False)
    # gbrank tune --data train.txt --test-data test.txt reads them alike
    pytest.importorskip("optuna")
    from gbrank.tuning._cli import parse_args
    from gbrank.tuning._cli_data import load_tasks

    (task,) = load_tasks(parse_args(["--data", str(tmp_path / "train.txt"), "--test-data",
                                     str(tmp_path / "test.txt")]))
    o = tie_order(want[3], want[4], [10, 10])  # the values as the file holds them
    np.testing.assert_allclose(task.X_test.toarray(), Xt[o])  # judged in tie_order
    np.testing.assert_allclose(task.X.toarray(), X)


def test_a_query_file_that_disagrees_with_the_qid_fields_is_refused(tmp_path):
    path = tmp_path / "b.txt"
    path.write_text("".join(f"{i % 2} qid:{q} 1:{i}\n" for i, q in enumerate([1, 1, 2, 2, 3, 3])))
    (tmp_path / "b.txt.query").write_text("3\n3\n")  # stale: merges queries 1 and 2
    with pytest.raises(ValueError, match=r"gives 2 queries and the qid: fields .* 3 runs"):
        load_letor(path)
    (tmp_path / "b.txt.query").write_text("2\n2\n2\n")  # agrees
    assert load_letor(path)[2].tolist() == [2, 2, 2]


def test_number_alike_decides_the_numbering_for_all_parts():
    """LETOR parts read apart (the tuner's tuning and test files): one-based unless some
    part holds index 0, then zero-based for every part, at the widest part's width —
    a test file without feature 0 is not shifted against a training file with it."""
    from scipy.sparse import csr_matrix

    from gbrank.datasets import number_alike

    with_zero = csr_matrix(np.array([[5.0, 1.0, 0.0]]))  # indices 0, 1
    without = csr_matrix(np.array([[0.0, 2.0, 0.0, 3.0]]))  # indices 1, 3
    a, b = number_alike(with_zero, without)
    assert a.toarray().tolist() == [[5.0, 1.0, 0.0, 0.0]]
    assert b.toarray().tolist() == [[0.0, 2.0, 0.0, 3.0]]
    c, d = number_alike(csr_matrix(np.array([[0.0, 1.0]])), without)
    assert c.toarray().tolist() == [[1.0, 0.0, 0.0]]
    assert d.toarray().tolist() == [[2.0, 0.0, 3.0]]


@pytest.mark.parametrize("text,match", [
    ("q,label,f1,label\n1,0,0.5,1\n1,1,0.2,0\n", r"names \['label'\] more than once"),
    ("q,label,f1,f1\n1,0,0.5,1\n1,1,0.2,0\n", r"names \['f1'\] more than once"),
    ("10002,0,0.3,1.0\n10002,1,0.2,0\n", "is numbers, not column names"),
    ("q;label;f1\n1;0;0,5\n", "separated by something other than ','"),
])
def test_load_table_refuses_a_header_it_would_misread(tmp_path, text, match):
    """pandas renames a repeated name (the second `label` became the feature `label.1`,
    83 % of a model's gain, probe 65); a header-less file or another separator made a
    header of data. Each is refused, naming what to fix; a frame's default column names
    0, 1, 2 are names."""
    from gbrank.datasets import load_table

    path = tmp_path / "t.csv"
    path.write_text(text)
    with pytest.raises(ValueError, match=match):
        load_table(path, "label", "q")
    path.write_text("0,1,2\n1,0,0.5\n1,1,0.2\n")
    assert load_table(path, "1", "0")[3] == ["2"]
    with pytest.raises(ValueError, match="both name '1'"):
        load_table(path, "1", "1")


def test_load_table_reads_a_header_behind_a_byte_order_mark(tmp_path):
    """Excel's "CSV UTF-8" starts with a BOM, which hid a repeated first column from the
    check (review 66)."""
    from gbrank.datasets import load_table

    path = tmp_path / "t.csv"
    path.write_bytes("\ufefflabel,q,f1,label\n1,1,0.5,1\n0,1,0.2,0\n".encode("utf-8"))
    with pytest.raises(ValueError, match="more than once"):
        load_table(path, "label", "q")
