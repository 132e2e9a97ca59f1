# cython: language_level=3, boundscheck=False, wraparound=False, cdivision=True, initializedcheck=False
"""Windowed grid-law draws: the default release of the bounded Laplace
and the univariate bounded Gaussian; the law and its certificate are described in
_core/certify_grid.pyx.
"""

import numpy as _np

cimport numpy as _cnp
from bndp._core.common cimport *
from bndp._core.grid cimport *

_cnp.import_array()

cdef int _gw_guide(gw_rows_t* R, Py_ssize_t draws) except -1:
    # a guide for R's table when ``draws`` draws amortise building it (at least 8 per
    # bucket; at most 2^14 buckets): R.guide is then malloc'ed (the caller frees it)
    cdef int64_t m = 2 * R.N + 2
    cdef int bits = 2
    R.guide = NULL
    while bits < 14 and ((<int64_t> 1) << bits) < 4 * m:
        bits += 1
    if draws < 8 * ((<Py_ssize_t> 1) << bits):
        return 0
    R.gshift = bndp_gd_guide_shift(R.cum[m - 1], bits)
    cdef uint32_t* g = <uint32_t*> malloc((((R.cum[m - 1] - 1) >> R.gshift) + 1) * sizeof(uint32_t))
    if g == NULL:
        raise MemoryError()
    bndp_gd_guide_build(R.cum, m, R.gshift, g)
    R.guide = g
    return 0


cdef int64_t _gw_draw_one(bitgen_t* bg, const gw_rows_t* R, int64_t i, int64_t n) noexcept nogil:
    cdef int where
    cdef uint64_t t
    cdef int64_t j
    while True:
        t = _gw_target(R, i, n, bg, &where)
        if where == 0:
            return _gd_search_one(R.cum, R.levels, t) - R.N + i
        if where == 1:
            j = i - R.N - _gw_geometric(bg, R.sbits, R.tm)
        else:
            j = i + R.N + _gw_geometric(bg, R.sbits, R.tm)
        if j >= 0 and j <= n:
            return j


cdef void _gw_idx_chunk(bitgen_t* bg, const gw_rows_t* R, const int64_t* idx,
                               const int64_t* nrow, int c, int64_t* jout) noexcept nogil:
    # c <= GD_LANES output indices of rows with their own grid indices and interval counts
    # (the draw steps of _gw_rows_chunk, the index given)
    cdef int64_t pos[GD_LANES]
    cdef uint64_t tt[GD_LANES]
    cdef int where[GD_LANES]
    cdef int r
    cdef int64_t j, i, nr
    for r in range(c):
        tt[r] = _gw_target(R, idx[r], nrow[r], bg, &where[r])
        tt[r] = tt[r] if where[r] == 0 else 0
    for r in range(c, GD_LANES):
        tt[r] = 0
    _gw_search(R, tt, pos)
    for r in range(c):
        i = idx[r]
        j = pos[r] - R.N + i
        if where[r] != 0:          # a tail block: probability about 2^-24 at most
            nr = nrow[r]
            if where[r] == 1:
                j = i - R.N - _gw_geometric(bg, R.sbits, R.tm)
            else:
                j = i + R.N + _gw_geometric(bg, R.sbits, R.tm)
            if j < 0 or j > nr:
                j = _gw_draw_one(bg, R, i, nr)
        jout[r] = j


cdef inline void _gw_rows_chunk(bitgen_t* bg, const gw_rows_t* R, double inv_g, double gamma,
                                const double* q, const double* lo, const double* hi,
                                const int64_t* nrow, int c, double* out) noexcept nogil:
    # c <= GD_LANES draws of rows with their own bounds and interval counts
    cdef int64_t idx[GD_LANES]
    cdef int64_t j[GD_LANES]
    cdef double nd[GD_LANES]
    cdef double fi[GD_LANES]
    cdef int r
    for r in range(c):
        nd[r] = <double> nrow[r]
    bndp_gw_index_rows(q, lo, hi, nd, c, inv_g, fi)      # vectorised; the integers of _gw_index
    for r in range(c):
        idx[r] = <int64_t> fi[r]
    _gw_idx_chunk(bg, R, idx, nrow, c, j)
    for r in range(c):
        out[r] = lo[r] + (<double> j[r]) * gamma


cdef int _gw_rows_law(gw_rows_t* R, const uint64_t[::1] tree, int levels, int64_t N,
                      uint64_t tailw, int sbits, uint64_t tm, int e) except -1:
    _gd_check_tree(tree, levels, N)
    _gd_check_exponent(e)
    if tailw > 0 and not (1 <= sbits <= 53 and 0 < tm < ((<uint64_t> 1) << sbits)):
        raise ValueError("grid law: inconsistent tail")
    R[0] = gw_rows_t(cum=&tree[0], levels=levels, N=N, tailw=tailw, sbits=sbits, tm=tm,
                     guide=NULL, gshift=0)
    return 0


cdef int _gw_row_law(gw_rows_t* R, const uint64_t[::1] tree, int levels, int64_t N,
                     uint64_t tailw, int sbits, uint64_t tm, int e, double lo, double hi,
                     int64_t nrow) except -1:
    # _gw_rows_law for one row [lo, hi] of nrow intervals, which the table must serve
    _gw_rows_law(R, tree, levels, N, tailw, sbits, tm, e)
    if nrow < 1 or nrow > GW_MAX_ROW or (tailw == 0 and nrow > N) or not (lo < hi):
        raise ValueError("grid law: a row the table does not serve")
    return 0


def gw_fill(object gen, const uint64_t[::1] tree, int levels, int64_t N, uint64_t tailw,
            int sbits, uint64_t tm, int e, const double[::1] q, const double[::1] lo,
            const double[::1] hi, const int64_t[::1] nrow, double[::1] out):
    """Windowed grid draws, one per row: true value ``q``, bounds ``lo``/``hi`` and ``nrow``
    grid intervals per row (all of the output's length)."""
    bit_gen = gen.bit_generator
    cdef bitgen_t* bg = _borrow(bit_gen)
    cdef Py_ssize_t a, total = out.shape[0]
    if q.shape[0] != total or lo.shape[0] != total or hi.shape[0] != total or nrow.shape[0] != total:
        raise ValueError("grid law: per-row arrays of different lengths")
    cdef gw_rows_t R
    _gw_rows_law(&R, tree, levels, N, tailw, sbits, tm, e)
    cdef int c
    cdef double inv_g = ldexp(1.0, -e), gamma = ldexp(1.0, e)
    for a in range(total):
        if nrow[a] < 1 or nrow[a] > GW_MAX_ROW or (tailw == 0 and nrow[a] > N):
            raise ValueError("grid law: a row the table does not serve")
    with bit_gen.lock, nogil:
        a = 0
        while a < total:
            c = GD_LANES if total - a >= GD_LANES else <int> (total - a)
            _gw_rows_chunk(bg, &R, inv_g, gamma, &q[a], &lo[a], &hi[a], &nrow[a], c, &out[a])
            a += c


cdef object _gw_per_row(str name, const double[::1] q, const double[::1] lo,
                        const double[::1] hi, const int64_t[::1] nrow, int e):
    # one int64 per row: the grid index of q in the row (nrow given), else the row's count
    # of intervals (q and nrow None)
    cdef Py_ssize_t a, m = lo.shape[0]
    cdef bint index = nrow is not None
    if hi.shape[0] != m or (index and (q.shape[0] != m or nrow.shape[0] != m)):
        raise ValueError(name + ": arrays of different lengths")
    _gd_check_exponent(e)
    out = _np.empty(m, dtype=_np.int64)
    cdef int64_t[::1] o = out
    cdef double inv_g = ldexp(1.0, -e)
    for a in range(m):
        o[a] = _gw_index(q[a], lo[a], hi[a], inv_g, nrow[a]) if index else \
            _gw_count(lo[a], hi[a], inv_g)
    return out


def gw_index(const double[::1] q not None, const double[::1] lo, const double[::1] hi, int e,
             const int64_t[::1] nrow not None):
    """Grid indices (int64) of true values in their rows, as gw_fill computes them."""
    return _gw_per_row("gw_index", q, lo, hi, nrow, e)


# the vectorised pass of a lattice step (bndp_gs_index_pass) serves rows narrower than 2^49
# and steps below 2^40; others round every value in integers
cdef int64_t GS_FAST_K = (<int64_t> 1) << 40
cdef double GS_FAST_WIDTH = 562949953421312.0


cdef inline int64_t _gs_floordiv(int64_t d, int64_t k, double inv_k) noexcept nogil:
    # floor(d / k) exactly (inv_k ~ 1/k): estimated in doubles, corrected in integers (the
    # loops run only where the estimate's rounding crossed a multiple of k)
    cdef int64_t a = <int64_t> (<double> d * inv_k)
    cdef int64_t r = d - a * k
    while r < 0:
        r += k
        a -= 1
    while r >= k:
        r -= k
        a += 1
    return a


cdef inline int64_t _gs_nearest(double q, double lo, double hi, int64_t k, double inv_tk,
                                int64_t n) noexcept nogil:
    # the integer law on a step k that is not a power of two (bndp._laws.step): q clipped
    # into [lo, hi], then floor((q - lo)/k + 1/2) exactly, at most n. With q = f + frac
    # (f = floor(q), both exact doubles) and F = f - lo (an integer below 2^54 in
    # magnitude): floor((2F + k + 2 frac) / 2k) = a + [r = 2k - 1 and frac >= 1/2], where
    # 2F + k = 2k a + r, 0 <= r < 2k. The quotient a is estimated in doubles (inv_tk =
    # 1/(2k); off by a few units at most) and corrected in integers, so that r is exact
    # (truncations instead of floor(), a library call on the baseline x86-64 target)
    cdef double c = q if q > lo else lo
    if c > hi:
        c = hi
    cdef int64_t fi = <int64_t> c
    if <double> fi > c:
        fi -= 1                                  # floor(c), exactly (|c| <= 2^52)
    cdef int64_t num = 2 * (fi - <int64_t> lo) + k
    cdef int64_t tk = 2 * k
    cdef int64_t a = _gs_floordiv(num, tk, inv_tk)
    cdef int64_t r = num - a * tk
    if r == tk - 1 and c - <double> fi >= 0.5:
        a += 1
    return a if a < n else n


def gs_index(const double[:] q, const double[:] lo, const double[:] hi, int64_t k,
             const int64_t[:] nrow):
    """Lattice indices (int64) of true values in their rows ``[lo, hi]`` on the lattice
    ``lo + j k`` (integral bounds below 2^52 in magnitude, ``k >= 1``, ``nrow`` the rows'
    intervals): clipped, nearest point (ties up), exactly, at most ``nrow``. The arrays
    may be broadcast views (stride 0)."""
    cdef Py_ssize_t a, m = q.shape[0]
    if lo.shape[0] != m or hi.shape[0] != m or nrow.shape[0] != m:
        raise ValueError("gs_index: arrays of different lengths")
    if k < 1:
        raise ValueError("gs_index: k must be at least 1")
    out = _np.empty(m, dtype=_np.int64)
    cdef int64_t[::1] o = out
    cdef double inv_tk = 0.5 / <double> k
    with nogil:
        for a in range(m):
            o[a] = _gs_nearest(q[a], lo[a], hi[a], k, inv_tk, nrow[a])
    return out


def gs_index_row(const double[::1] q, double lo, double hi, int64_t k, int64_t n):
    """:func:`gs_index` for one row (scalar bounds, broadcast): the indices as float64
    (exact integers), the unit law's true values."""
    m = (q.shape[0],)
    return gs_index(q, _np.broadcast_to(lo, m), _np.broadcast_to(hi, m), k,
                    _np.broadcast_to(_np.int64(n), m)).astype(_np.float64)


def gs_rows(const double[::1] q, const double[::1] lo, const double[::1] hi, int64_t k):
    """Per-row bounds on the lattice ``lo + j k`` (integral bounds below 2^52 in magnitude,
    ``k >= 1``): ``(index, n)``, float64 arrays of exact integers: each row's intervals
    ``n = floor((hi - lo)/k)`` and the lattice index of its true value (:func:`gs_index`)."""
    cdef Py_ssize_t a, m = q.shape[0]
    if lo.shape[0] != m or hi.shape[0] != m:
        raise ValueError("gs_rows: arrays of different lengths")
    if k < 1:
        raise ValueError("gs_rows: k must be at least 1")
    idx = _np.empty(m, dtype=_np.float64)
    nrow = _np.empty(m, dtype=_np.float64)
    cdef double[::1] oi = idx, on = nrow
    cdef double inv_k = 1.0 / <double> k, inv_tk = 0.5 / <double> k
    cdef int64_t n
    cdef Py_ssize_t b0, c
    with nogil:
        b0 = 0
        while b0 < m:
            c = m - b0 if m - b0 < 256 else 256
            # integral values: the vectorised pass; any other block: integer arithmetic
            if (k >= GS_FAST_K or bndp_gs_rows_pass(&q[b0], &lo[b0], &hi[b0], c, <double> k,
                                                    inv_k, inv_tk, &oi[b0], &on[b0])):
                for a in range(b0, b0 + c):
                    n = _gs_floordiv(<int64_t> hi[a] - <int64_t> lo[a], k, inv_k)
                    on[a] = <double> n
                    oi[a] = <double> _gs_nearest(q[a], lo[a], hi[a], k, inv_tk, n)
            b0 += c
    return idx, nrow


def gw_intervals(const double[::1] lo, const double[::1] hi, int e):
    """n = floor((hi - lo) / 2^e) per row, exactly (int64; -1 where hi < lo)."""
    return _gw_per_row("gw_intervals", None, lo, hi, None, e)


def gw_search_tree(const uint64_t[::1] cum):
    """The table the sampler searches (as ``exact.search_tree``): ``cum`` padded with
    2^63 - 1 to 4^levels entries, then the upper levels; 64-byte aligned. Returns
    ``(tree, levels)``."""
    cdef Py_ssize_t m = cum.shape[0], size = 4, k, j, step, off
    cdef int levels = 1, lvl
    while size < m:
        size *= 4
        levels += 1
    cdef size_t total = bndp_gd_table_size(levels)
    buf = _np.empty(total + 8, dtype=_np.uint64)
    cdef Py_ssize_t skip = ((-buf.ctypes.data) % 64) // 8
    out = buf[skip: skip + total]
    cdef uint64_t[::1] o = out
    with nogil:
        memcpy(&o[0], &cum[0], m * sizeof(uint64_t))
        for k in range(m, size):
            o[k] = 0x7FFFFFFFFFFFFFFF
        for lvl in range(levels - 1):
            step = 1
            for j in range(levels - 1 - lvl):
                step *= 4
            off = <Py_ssize_t> bndp_gd_level_offset(levels, lvl)
            j = 1
            for k in range(lvl + 1):
                j *= 4
            for k in range(j):
                o[off + k] = o[k * step]
    return out, levels


cdef void _gw_block(bitgen_t* bg, const gw_rows_t* R, const double* q, Py_ssize_t qstride,
                    int c, double lo, double hi, int64_t nr, double inv_g, double gamma,
                    double* out, int64_t k=0) noexcept nogil:
    # c <= GD_LANES draws of one row [lo, hi] (n = nr intervals) for the values q[r * qstride];
    # k > 0: the lattice lo + j k of a step that is not a power of two (_gs_nearest's index;
    # gamma is then k)
    cdef int64_t idx[GD_LANES]
    cdef int64_t pos[GD_LANES]
    cdef uint64_t tt[GD_LANES]
    cdef double qb[GD_LANES]
    cdef double fi[GD_LANES]
    cdef int where[GD_LANES]
    cdef int r
    cdef int64_t j
    cdef const double* qp = q
    if qstride != 1:
        for r in range(c):
            qb[r] = q[r * qstride]
        qp = qb
    cdef double inv_tk
    if k > 0:
        inv_tk = 0.5 / <double> k
        if (k < GS_FAST_K and hi - lo < GS_FAST_WIDTH
                and not bndp_gs_index_pass(qp, c, lo, hi, <double> k, inv_tk, <double> nr,
                                           fi)):
            for r in range(c):
                idx[r] = <int64_t> fi[r]
        else:
            for r in range(c):
                idx[r] = _gs_nearest(qp[r], lo, hi, k, inv_tk, nr)
    else:
        bndp_gw_index_pass(qp, c, lo, hi, inv_g, <double> nr, fi)      # vectorised
        for r in range(c):
            idx[r] = <int64_t> fi[r]
    for r in range(c):
        tt[r] = _gw_target(R, idx[r], nr, bg, &where[r])
        tt[r] = tt[r] if where[r] == 0 else 0
    for r in range(c, GD_LANES):
        tt[r] = 0
    _gw_search(R, tt, pos)
    for r in range(c):
        j = pos[r] - R.N + idx[r]
        if where[r] != 0:
            if where[r] == 1:
                j = idx[r] - R.N - _gw_geometric(bg, R.sbits, R.tm)
            else:
                j = idx[r] + R.N + _gw_geometric(bg, R.sbits, R.tm)
            if j < 0 or j > nr:
                j = _gw_draw_one(bg, R, idx[r], nr)
        out[r] = lo + (<double> j) * gamma


cdef object _gw_float64 = _np.float64
cdef object _gw_ndarray = _np.ndarray
cdef object _gw_Generator = _np.random.Generator


cdef inline bint _gw_all_inside(const double* q, Py_ssize_t m, double lo, double hi) noexcept nogil:
    cdef Py_ssize_t k
    for k in range(m):
        if not (q[k] >= lo and q[k] <= hi):
            return False
    return True


cdef class GwRow:
    """One row ``[lo, hi]`` of the windowed grid law bound to its search table, checked once
    (the checks of :func:`gw_fill_row`, at construction): the short path of
    ``RowPlan.sample`` for one value or a small 1-D array. Draws are those of
    :func:`gw_fill_row` (the same blocks of ``_gw_block``, in the same order)."""

    cdef object _tree           # keeps the table alive (R.cum points into it)
    cdef gw_rows_t R
    cdef readonly double lo, hi
    cdef double inv_g, gamma
    cdef readonly int64_t nrow

    def __cinit__(self, object tree, int levels, int64_t N, uint64_t tailw, int sbits,
                  uint64_t tm, int e, double lo, double hi, int64_t nrow):
        _gw_row_law(&self.R, tree, levels, N, tailw, sbits, tm, e, lo, hi, nrow)
        self._tree = tree
        self.lo = lo
        self.hi = hi
        self.nrow = nrow
        self.inv_g = ldexp(1.0, -e)
        self.gamma = ldexp(1.0, e)

    def one(self, object gen, double q):
        """One draw for the true value ``q`` (any double: clipped as by ``gw_fill_row``;
        callers pass values in ``[lo, hi]``), as a Python float."""
        return self._one(gen, q)

    cdef object _one(self, object gen, double q):
        bit_gen = gen.bit_generator
        cdef bitgen_t* bg = _borrow(bit_gen)
        cdef double out
        lock = bit_gen.lock
        lock.acquire()
        try:
            _gw_block(bg, &self.R, &q, 1, 1, self.lo, self.hi, self.nrow, self.inv_g,
                      self.gamma, &out)
        finally:
            lock.release()
        return out

    def sample(self, object value, object size, object rng, object on_outside,
               object workers, object resolve):
        """The short path of ``RowPlan.sample`` for a mechanism's ``sample`` arguments: one
        value (``float``, ``numpy.float64``, an ``int`` of at most 2^53 in magnitude) or a
        1-D aligned C-contiguous float64 array of at most 4096 values, every value in
        ``[lo, hi]``, ``size=None``, ``workers=1``, ``on_outside`` "clip" or "raise";
        ``rng`` a Generator or resolved by ``resolve`` (``bndp._random.as_generator``).
        Returns ``NotImplemented`` (nothing drawn, nothing resolved) for any other call:
        the caller takes the general path, which checks, clips or refuses."""
        cdef double x
        cdef _cnp.ndarray a
        cdef Py_ssize_t m
        if size is not None or type(workers) is not int or workers != 1:
            return NotImplemented
        if not (on_outside == "clip" or on_outside == "raise"):
            return NotImplemented
        tv = type(value)
        if tv is float or tv is _gw_float64:
            x = value
        elif tv is int:
            if not (-9007199254740992 <= value <= 9007199254740992):
                return NotImplemented
            x = value                     # exact: |value| <= 2^53
        elif tv is _gw_ndarray:
            a = value
            if (_cnp.PyArray_NDIM(a) != 1 or _cnp.PyArray_TYPE(a) != _cnp.NPY_DOUBLE
                    or not _cnp.PyArray_ISNOTSWAPPED(a) or not _cnp.PyArray_ISALIGNED(a)
                    or not _cnp.PyArray_IS_C_CONTIGUOUS(a)):
                return NotImplemented
            m = _cnp.PyArray_DIM(a, 0)
            if m > 4096 or not _gw_all_inside(<const double*> _cnp.PyArray_DATA(a), m,
                                              self.lo, self.hi):
                return NotImplemented
            gen = rng if type(rng) is _gw_Generator else resolve(rng)
            return self._fill(gen, <const double*> _cnp.PyArray_DATA(a), m, a)
        else:
            return NotImplemented
        if not (x >= self.lo and x <= self.hi):      # NaN fails
            return NotImplemented
        gen = rng if type(rng) is _gw_Generator else resolve(rng)
        return self._one(gen, x)

    cdef object _fill(self, object gen, const double* q, Py_ssize_t m, object keep):
        # draws for m values already checked to lie in [lo, hi] (``keep`` owns ``q``)
        cdef _cnp.npy_intp dim = m
        cdef Py_ssize_t b
        cdef int c
        out = _cnp.PyArray_EMPTY(1, &dim, _cnp.NPY_DOUBLE, 0)
        if m == 0:
            return out
        cdef double* o = <double*> _cnp.PyArray_DATA(out)
        bit_gen = gen.bit_generator
        cdef bitgen_t* bg = _borrow(bit_gen)
        lock = bit_gen.lock
        lock.acquire()
        try:
            b = 0
            while b < m:
                c = GD_LANES if m - b >= GD_LANES else <int> (m - b)
                _gw_block(bg, &self.R, q + b, 1, c, self.lo, self.hi, self.nrow, self.inv_g,
                          self.gamma, o + b)
                b += c
        finally:
            lock.release()
        return out


cdef int _search_variant(int v) noexcept:
    # this module's choice of table search: set to v (v >= 0), returns the previous one
    cdef int old = bndp_gd_variant
    if v >= 0:
        _search_variant_swap(v)
    return old
