# cython: language_level=3, boundscheck=False, wraparound=False, cdivision=True, initializedcheck=False
"""Wrappers of the compiled core for its tests: the C helpers and kernels that no public code
path calls directly (fast special functions, the table search and its variants, the block
index pass, the windowed certificate of one table, the root of a Gaussian calibration, the
gradient normal kernel), each a thin ``def`` over the same ``cdef`` function the samplers and
calibrations use."""

import numpy as _np

from bndp._core.common cimport *
from bndp._core.special cimport *
from bndp._core.sample cimport *
cimport bndp._core.grid as _grid
cimport bndp._core.window as _window
from bndp._core.calibrate cimport *
from bndp._core.certify_grid cimport *
from bndp._core.gaussian cimport *
from bndp._core.grid cimport *
cimport bndp._core.rows as _rows


def normal_split(double z, bint vectorised=False):
    """(Phi(z) - 1/2, Phi(-z)) for z >= 0 as the sampler's setup computes them: the scalar
    setup, or with ``vectorised`` the branch-free function of the block setup pass (which
    returns (1/2, 0) beyond z = 37). Exposed for tests."""
    cdef double m0, t
    if vectorised:
        _phi_split_fast(z, &m0, &t)
    else:
        _phi_split(z, &m0, &t)
    return m0, t


def normal_tail(double z):
    """Phi(-z) for z >= 0 as the sampler's per-row setup computes it (exposed for tests)."""
    cdef double m0, t
    _phi_split(z, &m0, &t)
    return t


def expm1_nonpos_fast(double x):
    """expm1(x) for x <= 0, the branch-free version of _simd.h (exposed for tests)."""
    return _expm1_nonpos(x)


def log1m2t_fast(double t):
    """log(1 - 2t) for 0 <= t <= 1/2, the branch-free version of _simd.h (for tests)."""
    return _log1m2t(t)


def ndtri_central(double q):
    """Phi^-1(1/2 + q) for |q| <= 0.425 (exposed for tests)."""
    return _ppnd_central(q)


def log_fast(double x):
    """The branch-free logarithm of the sampler's tail branch (exposed for tests)."""
    return _log_fast(x)


def exp_nonpos_fast(double x):
    """The branch-free exponential of the sampler's setup, for -708 <= x <= 0 (exposed for
    tests)."""
    return _exp_nonpos_fast(x)


def gr_log_ndtr_diff(double U, double L):
    """log(Phi(U) - Phi(L)) for U > L (exposed for tests)."""
    return _gr_log_ndtr_diff(U, L)


def gr_lndtr(double x):
    """log Phi(x) (exposed for tests)."""
    return _gr_lndtr(x)


def bg_rho(double c, double w, double s):
    """rho(c; w, sigma): the per-coordinate log normaliser ratio of [CH24]."""
    return _bg_rho(c, w, s)


def gd_search_variant(int v=-1):
    """The table search in use (0 the best the CPU runs, 1 portable, 2 AVX2); with v >= 0,
    select it first in every module that searches (grid, window, rows and this one): every
    variant returns the same index. Returns the previous choice; raises if v cannot run on
    this CPU or build."""
    cdef int old = bndp_gd_variant
    if v >= 0:
        if not bndp_gd_variant_ok(v):
            raise ValueError("grid search variant %d not available here" % v)
        _search_variant_swap(v)
        _grid._search_variant(v)
        _window._search_variant(v)
        _rows._search_variant_rows(v)
    return old


def gd_search(const uint64_t[::1] tree, int levels, const uint64_t[::1] t):
    """The table search for targets ``t`` (int64 indices k, cum[k] <= t < cum[k + 1]); for
    tests. Every target must be below the table's last entry."""
    cdef Py_ssize_t a, m = t.shape[0]
    cdef int r, w
    cdef uint64_t tt[GD_LANES]
    cdef int64_t pp[GD_LANES]
    if levels < 1 or levels > 30 or <size_t> tree.shape[0] != bndp_gd_table_size(levels):
        raise ValueError("grid law: inconsistent search table")
    out = _np.empty(m, dtype=_np.int64)
    cdef int64_t[::1] o = out
    a = 0
    while a < m:
        w = GD_LANES if m - a >= GD_LANES else <int> (m - a)
        for r in range(GD_LANES):
            tt[r] = t[a + r] if r < w else 0
        bndp_gd_search(&tree[0], levels, tt, pp)
        for r in range(w):
            o[a + r] = pp[r]
        a += w
    return out


def gd_index_block(const double[::1] q, int e, int64_t kl, int64_t n):
    """Grid indices (int32) as the per-row sampler computes them (vectorised; for tests)."""
    _gd_check_exponent(e)
    if n < 1 or n >= (<int64_t> 1) << 30:
        raise ValueError("gd_index_block: n out of range")
    out = _np.empty(q.shape[0], dtype=_np.int32)
    cdef int32_t[::1] o = out
    if q.shape[0]:
        bndp_gd_index_pass(&q[0], q.shape[0], ldexp(1.0, -e), <double> kl,
                           <double> (kl + n), &o[0])
    return out


def gf_root(int method, double eps, double delta):
    """The scalar x (a, b, c, d, f or g of [ZWB19]) of ``method``, before rounding (tests)."""
    if method == GF_OPTIMAL:
        return _gf_a_opt(eps, delta)
    if method == GF_ZHAO1:
        return _gf_b_mech1(eps, delta)
    if method == GF_ZHAO2:
        return _gf_c_mech2(delta)
    if method == GF_PDP_OPTIMAL:
        return _gf_d_pdp(eps, delta)
    if method == GF_ZHAO3:
        return _gf_erfcinv(delta)
    if method == GF_ZHAO4:
        return _gf_g_mech4(delta)
    return NAN


def gr_normal_fill(object gen, double[::1] out):
    """Standard normal draws (NumPy's kernel) into ``out``."""
    bit_gen = gen.bit_generator
    cdef bitgen_t* bg = _borrow(bit_gen)
    cdef Py_ssize_t i, n = out.shape[0]
    with bit_gen.lock, nogil:
        for i in range(n):
            out[i] = _gr_std_normal(bg)


def gw_eval(int fam, double t, int64_t n, int64_t dk, bint wide, int tail_bits=24,
            bint table=False):
    """Certify the windowed grid law of scale ``t`` (grid steps) for a row of ``n`` intervals
    (or, ``wide``, every row of at least ``2N + dk``); returns ``(cert, shape)`` with
    ``shape = (N, tail, kexp, tailw, sbits, m, n_wide)``, and the cumulative table when
    ``table``. ``cert`` is ``inf`` when the scale is out of range; a ValueError when the
    table would be too large."""
    cdef gw_law_t L
    cdef int rc
    if n < 1 or dk < 1 or n > GW_MAX_ROW or tail_bits < 4 or tail_bits > 40:
        raise ValueError("gw_eval: inconsistent row")
    if wide:
        n = GW_MAX_ROW
    rc = _gw_shape(fam, t, n, tail_bits, &L)
    if rc == -1:
        raise ValueError("grid law: the kernel table would exceed 2^20 entries")
    if rc != 0:
        return INFINITY, None, None
    if wide and not L.tail:
        return INFINITY, None, None
    cum = _np.empty(2 * L.N + 2, dtype=_np.uint64)
    cdef uint64_t[::1] c = cum
    cdef int64_t m = (L.N + dk + 1) if wide else (n + 1)
    ql = _np.empty(m)
    qh = _np.empty(m)
    wk = _np.empty(m)
    cdef double[::1] vql = ql, vqh = qh, vwk = wk
    cdef double cert
    with nogil:
        rc = _gw_fill_table(&L, &c[0])
        if rc == 0:
            cert = _gw_cert(&L, &c[0], n, dk, wide, &vql[0], &vqh[0], &vwk[0])
    if rc != 0:
        return INFINITY, None, None
    shape = (int(L.N), int(L.tail), int(L.kexp), int(L.tailw), int(L.sbits), int(L.tm),
             int(2 * L.N + dk))
    if table:
        cum.setflags(write=False)
        return cert, shape, cum
    return cert, shape, None


def gw_index_pass(const double[::1] q, double lo, double hi, int e, int64_t nrow):
    """Grid indices of true values in one row by the vectorised pass gw_fill_row uses (for
    tests: the same integers as :func:`gw_index`)."""
    _gd_check_exponent(e)
    out = _np.empty(q.shape[0])
    cdef double[::1] o = out
    if q.shape[0]:
        bndp_gw_index_pass(&q[0], q.shape[0], lo, hi, ldexp(1.0, -e), <double> nrow, &o[0])
    return out.astype(_np.int64)
