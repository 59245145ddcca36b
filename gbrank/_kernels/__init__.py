"""Pure numba kernels on plain float64/int64 arrays. They trust their input: every
check happens in ``gbrank._validation`` before a kernel is called."""
