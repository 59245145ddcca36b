"""gbrank._kernels._variant: each variant of a factory's closure has a cache index of its
own (numba picks a new entry's data file by counting the entries of the index it read,
so two processes compiling two variants sharing one index could swap their code)."""

from __future__ import annotations


def test_variants_of_one_closure_are_cached_under_names_of_their_own():
    from gbrank._kernels import lambdarank as K
    from gbrank._kernels.delta import ERR, NDCG

    a = K._make_long_forms(NDCG, False, False, True)
    b = K._make_long_forms(ERR, False, False, True)
    c = K._make_long_forms(NDCG, False, True, True)
    names = {f.py_func.__qualname__ for forms in (a, b, c) for f in forms}
    assert len(names) == 6  # serial and parallel of three variants
    # numba's cache file names start from __qualname__: six indexes, not two
    stems = {f._cache._cache_file._index_name for forms in (a, b, c) for f in forms}
    assert len(stems) == 6
