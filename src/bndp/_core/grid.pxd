# Declarations of bndp._core.grid (cimported by the modules that use them)

from bndp._core.common cimport *

cdef inline void _gd_span_window(const int64_t* sa, const int64_t* sb, int64_t s, int64_t i,
                                 int64_t N, int64_t* lo, int64_t* hi) noexcept nogil:
    # the table positions [lo, hi) of span s seen from input i: the span clipped to the
    # window [i - N, i + N] (empty when hi == lo); selects only
    cdef int64_t a = sa[s] - i + N, b = sb[s] - i + N + 1
    a = 0 if a < 0 else a
    a = 2 * N + 1 if a > 2 * N + 1 else a
    b = 2 * N + 1 if b > 2 * N + 1 else b
    b = a if b < a else b
    lo[0] = a
    hi[0] = b


cdef inline int64_t _gd_search_one(const uint64_t* cum, int levels, uint64_t t) noexcept nogil:
    # one target: the 4-ary search over the padded cumulative table tree[0:4^levels]
    cdef int64_t q4, p = 0, width = 1
    cdef int lvl
    for lvl in range(levels):
        width *= 4
    for lvl in range(levels):
        q4 = width >> 2
        p += q4 * (<int64_t> (cum[p + q4] <= t) + <int64_t> (cum[p + 2 * q4] <= t)
                   + <int64_t> (cum[p + 3 * q4] <= t))
        width = q4
    return p

cdef int _gd_check_tree(const uint64_t[::1] tree, int levels, int64_t n) except -1
cdef int _gd_check_exponent(int e) except -1
cdef int64_t _gd_set_draw_one(bitgen_t* bg, const gd_set_t* L, int64_t i) noexcept nogil
cdef int _gd_check_set(const uint64_t[::1] tree, int levels, int64_t N, const int64_t[::1] sa,
                       const int64_t[::1] sb, const double[::1] gap_hi, uint64_t tailw,
                       int sbits) except -1
cdef int _search_variant(int v) noexcept
