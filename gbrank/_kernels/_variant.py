"""Compiling one variant of a closure made by a code factory, with numba's cache.

numba keeps one index file per function name and line, listing every compiled entry of
it, and picks a new entry's data file by counting the entries it read: two processes
compiling two variants of one closure at once (an empty cache under pytest-xdist, the
tuner's workers, Dask) can both take the same data file, and the index then points one
variant at the other's machine code — wrong gradients, or a ZeroDivisionError, in every
later process. A variant named after its constants has an index of its own, so no two
variants share a file.
"""

from numba import cfunc, njit

__all__ = ["compile_variant"]


def _name(fn, key) -> None:
    # numba names the cache files after __qualname__ (and the line number).
    tag = "_".join(str(int(k)) if isinstance(k, bool) else str(k) for k in key)
    fn.__qualname__ = f"{fn.__qualname__}__{tag}"


def compile_variant(fn, key, signature=None, **options):
    """``njit(cache=True, nogil=True, **options)(fn)`` — or, with ``signature``,
    ``cfunc(signature, cache=True, **options)(fn)`` — of closure ``fn`` made for the
    constants ``key``, cached under a name of its own."""
    _name(fn, key)
    if signature is not None:
        return cfunc(signature, cache=True, **options)(fn)
    return njit(cache=True, nogil=True, **options)(fn)
