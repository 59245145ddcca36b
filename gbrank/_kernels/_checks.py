"""One fused pass over ranking input for the validation module's common case."""

import numpy as np
from numba import njit


@njit(cache=True, nogil=True)
def ranking_rows_ok(y, s, integer, max_grade):
    """True when every score and label is finite and every label is a grade in
    ``[0, max_grade]`` (an integer too when ``integer``; ``max_grade`` may be inf).

    One branch-free pass over both arrays (the NumPy checks it stands in for make
    five passes and as many temporary arrays); on ``False`` the caller runs those
    checks to say what is wrong and where.
    """
    bad = False
    for i in range(y.size):
        v = y[i]
        w = s[i]
        # w - w is 0 for finite w and NaN for inf/NaN; comparisons with NaN are False.
        bad |= not (w - w == 0.0)
        bad |= not (v - v == 0.0)
        bad |= not (v >= 0.0 and v <= max_grade)
        bad |= integer and v != np.floor(v)
    return not bad
