# Declarations of bndp._core.window (cimported by the modules that use them)

from bndp._core.common cimport *
from bndp._core.grid cimport *

cdef inline int64_t _gw_geometric(bitgen_t* bg, int sbits, uint64_t m) noexcept nogil:
    # k >= 1 with P(k) = (1 - m 2^-s)^(k - 1) m 2^-s: the index of the first s-bit word < m
    cdef uint64_t mask = ((<uint64_t> 1) << sbits) - 1
    cdef int64_t k = 1
    while (bg.next_uint64(bg.state) & mask) >= m and k < GD_EXACT:
        k += 1
    return k


cdef inline uint64_t _gw_target(const gw_rows_t* R, int64_t i, int64_t n, bitgen_t* bg,
                                int* where) noexcept nogil:
    # the table position for input i of a row of n intervals, or a tail block (where 1, 2)
    cdef int64_t N = R.N, a, b
    cdef uint64_t left, right, mid, u, c0
    a = (-i if -i > -N else -N) + N
    b = (n - i if n - i < N else N) + N + 1
    c0 = R.cum[a]
    mid = R.cum[b] - c0
    left = R.tailw * (<uint64_t> (i > N))
    right = R.tailw * (<uint64_t> (n - i > N))
    u = _ex_below(bg, left + mid + right)
    where[0] = (<int> (u < left)) + 2 * (<int> (u >= left + mid))
    # u - left wraps when u < left; the entry is then ignored (where != 0)
    return c0 + (u - left)


cdef inline void _gw_search(const gw_rows_t* R, const uint64_t* tt, int64_t* pos) noexcept nogil:
    # the table positions of GD_LANES targets below the table's total: by the guide where
    # the row has one, else the tree (the same positions)
    if R.guide != NULL:
        bndp_gd_search_guide(R.cum, R.guide, R.gshift, tt, pos)
    else:
        bndp_gd_search(R.cum, R.levels, tt, pos)


cdef inline int64_t _gw_index(double q, double lo, double hi, double inv_g,
                              int64_t n) noexcept nogil:
    # round-half-up of (clip(q) - lo) / gamma, exactly, clipped to [0, n]: z and zl are exact
    # (scaling by a power of two), d + err == z - zl exactly (TwoSum), 0 <= d <= n + 1 <
    # 2^52 makes |err| <= ulp(d)/2 <= 1/4 and fr = d - floor(d) exact; fr - 1/2 is exact
    # when fr >= 1/4 or d >= 1, and otherwise below -1/4 < -err: the comparison
    # fr - 1/2 >= -err decides fr + err >= 1/2 exactly (see docs/grid_laws.rst). Selects only; the
    # floor of d >= 0 is its truncation (an integer conversion, no libm call).
    cdef double z, zl, d, bb, err, fd, fr
    cdef int64_t i
    q = lo if q != q else q
    q = lo if q < lo else q
    q = hi if q > hi else q
    z = q * inv_g
    zl = lo * inv_g
    d = z - zl
    bb = d - z
    err = (z - (d - bb)) + (-zl - bb)
    d = 0.0 if d < 0.0 else d
    i = <int64_t> d
    fd = <double> i
    fr = d - fd
    i = i + <int64_t> ((fr - 0.5) >= -err)
    i = 0 if i < 0 else i
    i = n if i > n else i
    return i


cdef inline int64_t _gw_count(double lo, double hi, double inv_g) noexcept nogil:
    # floor((hi - lo) inv_g) exactly (TwoSum of the exact scalings; -1 where hi < lo)
    return bndp_gw_count(lo, hi, inv_g, GW_MAX_ROW)

cdef int64_t _gw_draw_one(bitgen_t* bg, const gw_rows_t* R, int64_t i, int64_t n) noexcept nogil
cdef void _gw_block(bitgen_t* bg, const gw_rows_t* R, const double* q, Py_ssize_t qstride,
                    int c, double lo, double hi, int64_t nr, double inv_g, double gamma,
                    double* out, int64_t k=*) noexcept nogil
cdef int _gw_guide(gw_rows_t* R, Py_ssize_t draws) except -1
cdef void _gw_idx_chunk(bitgen_t* bg, const gw_rows_t* R, const int64_t* idx,
                        const int64_t* nrow, int c, int64_t* jout) noexcept nogil
cdef int _gw_row_law(gw_rows_t* R, const uint64_t[::1] tree, int levels, int64_t N,
                     uint64_t tailw, int sbits, uint64_t tm, int e, double lo, double hi,
                     int64_t nrow) except -1
cdef int _gw_rows_law(gw_rows_t* R, const uint64_t[::1] tree, int levels, int64_t N,
                      uint64_t tailw, int sbits, uint64_t tm, int e) except -1
cdef int _search_variant(int v) noexcept
