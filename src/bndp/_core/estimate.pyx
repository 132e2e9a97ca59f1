# cython: language_level=3, boundscheck=False, wraparound=False, cdivision=True, initializedcheck=False
"""Kernels of the estimation layer (``bndp.estimation``): the scaled model of per-row bounds
places positions in ``[0, 1]`` on rows ``[lower, upper]`` and reads the values on an equally
spaced grid, each value shared between its two nearest grid values by linear interpolation
(``bndp.estimation._scaled``). These loops do that placement without the ``(rows x
positions)`` temporaries of the NumPy expression it replaces (10^6 rows, 200 positions:
2 x 10^8 values a call).

Every function takes inputs validated by its caller (float64 buffers, finite, indices in
range) and adds into a caller-allocated C-contiguous output. The arithmetic is that of the
NumPy expression ``f = clip((lower + u * (upper - lower) - x0) / step, 0, X - 1)``,
``k = min(floor(f), X - 2)``, ``t = f - k``, the weight ``w (1 - t)`` at ``k`` and ``w t``
at ``k + 1``, operation for operation (the extension is built without contraction into
fused multiply-adds); only the order in which the shares are summed into a grid value
differs (rounding of the last bits of a sum)."""

from libc.stdint cimport int64_t

cdef enum:
    # rows placed per block (their bounds and weights stay in cache while every position
    # is placed on them)
    ROW_BLOCK = 2048


cdef inline void _share(double x, double x0, double step, double top, Py_ssize_t X,
                        double w, double* out) noexcept nogil:
    # the weight w of the value x, shared between its two nearest grid values
    cdef double f = (x - x0) / step
    cdef Py_ssize_t k
    cdef double t
    if not f >= 0.0:             # (a NaN too: never an index outside the grid)
        f = 0.0
    elif f > top:
        f = top
    k = <Py_ssize_t>f            # f >= 0: truncation is floor
    if k > X - 2:
        k = X - 2
    t = f - <double>k
    out[k] += w * (1.0 - t)
    out[k + 1] += w * t


def place_positions(const double[::1] u, const double[::1] lower, const double[::1] upper,
                    const double[::1] weight, double x0, double step, double[:, ::1] out):
    """``out[m, k] +=`` the weight of every row ``(lower[r], upper[r])`` (``weight[r]``)
    whose position ``u[m]`` falls at the grid value ``x0 + k step``: each row's value
    ``lower + u[m] (upper - lower)`` shared between its two nearest grid values by linear
    interpolation (``out``: positions x grid values, at least 2 grid values)."""
    cdef Py_ssize_t M = u.shape[0], X = out.shape[1], n = lower.shape[0]
    cdef Py_ssize_t a, b, r, m
    cdef double top = <double>(X - 1)
    cdef double um
    cdef double* row
    if out.shape[0] != M or upper.shape[0] != n or weight.shape[0] != n or X < 2:
        raise ValueError("place_positions: inconsistent shapes")
    with nogil:
        a = 0
        while a < n:
            b = a + ROW_BLOCK if a + ROW_BLOCK < n else n
            for m in range(M):
                um = u[m]
                row = &out[m, 0]
                for r in range(a, b):
                    _share(lower[r] + um * (upper[r] - lower[r]), x0, step, top, X,
                           weight[r], row)
            a = b


def place_rows(const double[::1] u, const int64_t[::1] pos, const double[::1] lower,
               const double[::1] width, double x0, double step, double[::1] out):
    """``out[k] +=`` one unit for each row ``r``, whose value ``lower[r] + u[pos[r]]
    width[r]`` is shared between its two nearest grid values ``x0 + k step`` by linear
    interpolation (``out``: the grid, at least 2 values; ``pos`` indices into ``u``)."""
    cdef Py_ssize_t X = out.shape[0], n = lower.shape[0], M = u.shape[0], r
    cdef double top = <double>(X - 1)
    cdef bint bad = False
    if pos.shape[0] != n or width.shape[0] != n or X < 2:
        raise ValueError("place_rows: inconsistent shapes")
    with nogil:
        for r in range(n):
            if pos[r] < 0 or pos[r] >= M:
                bad = True
    if bad:
        raise ValueError("place_rows: a position index outside u")
    with nogil:
        for r in range(n):
            _share(lower[r] + u[pos[r]] * width[r], x0, step, top, X, 1.0, &out[0])
