# cython: language_level=3, boundscheck=False, wraparound=False, cdivision=True, initializedcheck=False
"""The generic fill loop of the samplers, in the manner of
numpy/random's one locked, broadcasting loop: every `*_one` / `*_fill` / `*_fill_rows`
wrapper borrows the BitGenerator's bitgen_t, takes its lock, releases the GIL and hands
blocks of at most TN_BLOCK elements to its family's kernel (fill_kernel_t, declared in
common.pxd). A block carries, for each parameter, either one value (stride 0) or a
contiguous run (strided inputs are gathered first), and says whether its single values
are those of the previous block, so a kernel sets up a shared parameter set once. Blocks
start at every row of the (outer, inner) output and every TN_BLOCK elements along it;
the kernels consume the stream element by element in output order, so a fill, a per-row
fill and a loop of one-value draws give the same bits.
"""

import numpy as _np

from bndp._core.common cimport *
from bndp._core.special cimport *
from bndp._core.sample cimport *
from bndp._core.grid cimport *
from bndp._core.window cimport *

cdef void _fill_loop(bitgen_t* bg, fill_kernel_t kern, void* state, int npar,
                     const double** base, const Py_ssize_t* s0, const Py_ssize_t* s1,
                     Py_ssize_t n0, Py_ssize_t n1, double* out) noexcept nogil:
    # out[i, j] (C-contiguous n0 x n1) from the parameters base[k][i s0[k] + j s1[k]]
    cdef fill_block_t b
    cdef double gather[4][TN_BLOCK]
    cdef const double* row
    cdef Py_ssize_t i, j, k, r, m
    cdef bint prev_const = False, const_now, same
    for k in range(4):
        b.p[k] = NULL
        b.s[k] = 0
    for i in range(n0):
        j = 0
        while j < n1:
            m = n1 - j if n1 - j < TN_BLOCK else TN_BLOCK
            const_now = True
            same = prev_const
            for k in range(npar):
                row = base[k] + i * s0[k] + j * s1[k]
                if s1[k] == 0:
                    same = same and row == b.p[k]
                    b.p[k] = row
                    b.s[k] = 0
                else:
                    const_now = False
                    if s1[k] != 1:
                        for r in range(m):
                            gather[k][r] = row[r * s1[k]]
                        row = gather[k]
                    b.p[k] = row
                    b.s[k] = 1
            b.m = m
            b.same = same and const_now
            kern(bg, state, &b, out + i * n1 + j)
            prev_const = const_now
            j += m


cdef Py_ssize_t _elem_stride(Py_ssize_t nbytes) except? -1:
    if nbytes % <Py_ssize_t> sizeof(double):
        raise ValueError("sampler: parameter views must have strides that are multiples of 8 bytes")
    return nbytes // <Py_ssize_t> sizeof(double)


cdef int _fill_rows(object gen, fill_kernel_t kern, void* state, int npar,
                    const double[:, :] p0, const double[:, :] p1, const double[:, :] p2,
                    const double[:, :] p3, double[:, ::1] out) except -1:
    # the wrappers' common body: parameters broadcast to out's shape (stride 0 welcome);
    # views past npar are ignored
    cdef const double* base[4]
    cdef Py_ssize_t s0[4]
    cdef Py_ssize_t s1[4]
    cdef Py_ssize_t n0 = out.shape[0], n1 = out.shape[1]
    cdef int k
    if n0 == 0 or n1 == 0:
        return 0
    cdef const double[:, :] v
    for k in range(npar):
        v = p0 if k == 0 else p1 if k == 1 else p2 if k == 2 else p3
        if v.shape[0] != n0 or v.shape[1] != n1:
            raise ValueError("sampler: parameters must have the output's shape (broadcast them)")
        base[k] = &v[0, 0]
        s0[k] = _elem_stride(v.strides[0])
        s1[k] = _elem_stride(v.strides[1])
    bit_gen = gen.bit_generator
    cdef bitgen_t* bg = _borrow(bit_gen)
    with bit_gen.lock, nogil:
        _fill_loop(bg, kern, state, npar, base, s0, s1, n0, n1, &out[0, 0])
    return 0


cdef int _fill_1d(object gen, fill_kernel_t kern, void* state, int npar, const double* par,
                  double[::1] out) except -1:
    # one parameter set par[0..npar) for every element of out
    cdef const double* base[4]
    cdef Py_ssize_t s[4]
    cdef int k
    if out.shape[0] == 0:
        return 0
    for k in range(npar):
        base[k] = par + k
        s[k] = 0
    bit_gen = gen.bit_generator
    cdef bitgen_t* bg = _borrow(bit_gen)
    with bit_gen.lock, nogil:
        _fill_loop(bg, kern, state, npar, base, s, s, 1, out.shape[0], &out[0])
    return 0


cdef object _sample_one(object gen, fill_kernel_t kern, void* state, int npar,
                        const double* par):
    # one draw for the parameter set par[0..npar), as a Python float
    cdef fill_block_t b
    cdef double x
    cdef int k
    for k in range(4):
        b.p[k] = par + (k if k < npar else 0)
        b.s[k] = 0
    b.m = 1
    b.same = False
    bit_gen = gen.bit_generator
    cdef bitgen_t* bg = _borrow(bit_gen)
    with bit_gen.lock:
        kern(bg, state, &b, &x)
    return x


# ---------------------------------------------------------------------------------------
# Kernels (parameters in the order of the wrappers' arguments)
# ---------------------------------------------------------------------------------------

cdef inline void _gather4(const fill_block_t* b, double* p0, double* p1, double* p2,
                         double* p3) noexcept nogil:
    # the block's four parameters, per element, into contiguous arrays
    cdef Py_ssize_t k
    for k in range(b.m):
        p0[k] = b.p[0][k * b.s[0]]
        p1[k] = b.p[1][k * b.s[1]]
        p2[k] = b.p[2][k * b.s[2]]
        p3[k] = b.p[3][k * b.s[3]]


ctypedef struct tn_state_t:
    TNBlock blk
    Py_ssize_t tail         # single-parameter blocks: the row lies in one tail


cdef void _tn_kernel(bitgen_t* bg, void* state, const fill_block_t* b,
                     double* out) noexcept nogil:
    # truncated normal (loc, scale, lo, hi): one shared setup (row 0 of the block, stride-0
    # draws) or the block setup pass
    cdef tn_state_t* st = <tn_state_t*> state
    cdef TNBlock* blk = &st.blk
    cdef Py_ssize_t k, m = b.m
    if b.s[0] == 0 and b.s[1] == 0 and b.s[2] == 0 and b.s[3] == 0:
        if not b.same:
            st.tail = _tn_block_set(blk, 0, b.p[0][0], b.p[1][0], b.p[2][0], b.p[3][0])
        _tn_block_draw(bg, blk, m, out, m if st.tail else 0, 0)
        return
    _gather4(b, blk.loc, blk.scale, blk.lo, blk.hi)
    _tn_block_draw(bg, blk, m, out, _tn_block_setup(blk, m), 1)


ctypedef struct bl_state_t:
    BLBlock blk
    double mL, C            # single-parameter blocks


cdef void _bl_kernel(bitgen_t* bg, void* state, const fill_block_t* b,
                     double* out) noexcept nogil:
    # bounded Laplace (q, b, lo, hi): the block's uniforms in stream order, then the
    # vectorised setup and draw passes (_simd.h) for one parameter set, one scale and pair
    # of bounds with per-element values, or per-element everything
    cdef bl_state_t* st = <bl_state_t*> state
    cdef BLBlock* blk = &st.blk
    cdef Py_ssize_t k, m = b.m
    for k in range(m):
        blk.u[k] = _u_open(bg)
    if b.s[1] == 0 and b.s[2] == 0 and b.s[3] == 0:
        if b.s[0] == 0:
            if not b.same:
                _bl_setup_one(b.p[0][0], b.p[1][0], b.p[2][0], b.p[3][0], &st.mL, &st.C)
            _bl_draw_pass1(blk.u, out, m, b.p[0][0], b.p[1][0], b.p[2][0], b.p[3][0], st.mL,
                           st.C)
        else:
            _bl_setup_pass_q(b.p[0], b.p[1][0], b.p[2][0], b.p[3][0], m, blk.mL, blk.C)
            _bl_draw_pass_q(blk.u, out, m, b.p[0], b.p[1][0], b.p[2][0], b.p[3][0], blk.mL,
                            blk.C)
        return
    _gather4(b, blk.q, blk.b, blk.lo, blk.hi)
    _bl_setup_pass(blk.q, blk.b, blk.lo, blk.hi, m, blk.mL, blk.C)
    _bl_draw_pass(blk.u, out, m, blk.q, blk.b, blk.lo, blk.hi, blk.mL, blk.C)


cdef void _gn_kernel(bitgen_t* bg, void* state, const fill_block_t* b,
                     double* out) noexcept nogil:
    # N(loc, scale^2)
    cdef Py_ssize_t r
    for r in range(b.m):
        out[r] = b.p[0][r * b.s[0]] + b.p[1][r * b.s[1]] * _gn_std(_u_open(bg))


cdef void _lp_kernel(bitgen_t* bg, void* state, const fill_block_t* b,
                     double* out) noexcept nogil:
    # Laplace(loc, scale)
    cdef Py_ssize_t r
    for r in range(b.m):
        out[r] = b.p[0][r * b.s[0]] + b.p[1][r * b.s[1]] * _lp_std(_u_open(bg))


ctypedef struct cl_state_t:
    CLPieces* P
    const double* L
    const double* R
    Py_ssize_t m
    double sigma            # the scale of P's constants (NaN: none yet)
    double mu               # the true value of P's pieces (NaN: none yet)


cdef void _cl_kernel(bitgen_t* bg, void* state, const fill_block_t* b,
                     double* out) noexcept nogil:
    # constrained Laplace (mu, sigma) on the allowed set of the state: the constants of a
    # scale and the pieces of a true value are recomputed when they change
    cdef cl_state_t* st = <cl_state_t*> state
    cdef Py_ssize_t r
    cdef double mu, sigma
    for r in range(b.m):
        mu = b.p[0][r * b.s[0]]
        sigma = b.p[1][r * b.s[1]]
        if not (sigma == st.sigma):
            st.sigma = sigma
            _cl_consts(st.P, st.L, st.R, st.m, sigma)
            st.mu = NAN
        if not (mu == st.mu):
            st.mu = mu
            _cl_pieces(st.P, st.L, st.R, mu)
        out[r] = _cl_quantile(st.P, _u_open(bg))


cdef void _gr_kernel(bitgen_t* bg, void* state, const fill_block_t* b,
                     double* out) noexcept nogil:
    # theta + sigma Z (Z NumPy's normal kernel), then rectified to [lo, hi]
    # (clip(theta + sigma Z, lo, hi)) or, with state pointing at a nonzero int, its sign in
    # {-1, +1}
    cdef Py_ssize_t r
    cdef double x
    cdef bint sign = state != NULL and (<int*> state)[0] != 0
    for r in range(b.m):
        x = b.p[0][r * b.s[0]] + b.p[1][r * b.s[1]] * _gr_std_normal(bg)
        if sign:
            out[r] = 1.0 if x > 0.0 else -1.0
        else:
            out[r] = _clip(x, b.p[2][r * b.s[2]], b.p[3][r * b.s[3]])


ctypedef struct gw_row_t:
    gw_rows_t R
    double lo, hi, inv_g, gamma
    int64_t nrow
    int64_t k                   # 0, or gw_fill_row's lattice step k (not a power of two)


cdef void _gw_row_kernel(bitgen_t* bg, void* state, const fill_block_t* b,
                         double* out) noexcept nogil:
    # windowed grid law of one row, true values q: GD_LANES draws per table search
    cdef gw_row_t* st = <gw_row_t*> state
    cdef Py_ssize_t j = 0
    cdef int c
    while j < b.m:
        c = GD_LANES if b.m - j >= GD_LANES else <int> (b.m - j)
        _gw_block(bg, &st.R, b.p[0] + j * b.s[0], b.s[0], c, st.lo, st.hi, st.nrow, st.inv_g,
                  st.gamma, out + j, st.k)
        j += c


# ---------------------------------------------------------------------------------------
# def wrappers (inputs validated and broadcast to (outer, inner) views by the Python layer)
# ---------------------------------------------------------------------------------------

ctypedef union law_state_t:
    tn_state_t tn
    bl_state_t bl


cdef int _scalars(tuple par, int n, double* p) except -1:
    cdef int i
    if len(par) != n:
        raise TypeError(f"the law takes {n} parameters, got {len(par)}")
    for i in range(n):
        p[i] = par[i]
    return 0


cdef class _Law:
    """The samplers of a law of two or four numbers per draw, its kernel set by
    :func:`_law`: ``one(gen, *par)``, a draw as a Python float; ``fill(gen, *par, out)``,
    ``out`` filled sharing one parameter set; ``fill_rows(gen, *par, out)``, per-element
    parameters (already broadcast to ``out``'s shape; stride-0 views welcome). The normal
    and the Laplace take (loc, scale), the truncated normal (loc, scale, lo, hi), the
    bounded Laplace (q, b, lo, hi)."""
    cdef fill_kernel_t kernel
    cdef int npar

    def one(self, object gen, *par):
        cdef law_state_t st
        cdef double p[4]
        _scalars(par, self.npar, p)
        return _sample_one(gen, self.kernel, &st, self.npar, p)

    def fill(self, object gen, *args):
        cdef law_state_t st
        cdef double p[4]
        cdef Py_ssize_t n = len(args)
        if n < 1:
            raise TypeError("fill needs the parameters and out")
        _scalars(args[:n - 1], self.npar, p)
        _fill_1d(gen, self.kernel, &st, self.npar, p, args[n - 1])

    def fill_rows(self, object gen, *args):
        cdef law_state_t st
        cdef int n = self.npar
        if len(args) != n + 1:
            raise TypeError(f"the law takes {n} parameter arrays and out, got {len(args)}")
        _fill_rows(gen, self.kernel, &st, n, args[0], args[1], args[n - 2], args[n - 1],
                   args[n])


cdef _Law _law(fill_kernel_t kernel, int npar):
    cdef _Law law = _Law.__new__(_Law)
    law.kernel = kernel
    law.npar = npar
    return law


_tn, _bl = _law(_tn_kernel, 4), _law(_bl_kernel, 4)
_gn, _lp = _law(_gn_kernel, 2), _law(_lp_kernel, 2)
tn_one, tn_fill, tn_fill_rows = _tn.one, _tn.fill, _tn.fill_rows
bl_one, bl_fill, bl_fill_rows = _bl.one, _bl.fill, _bl.fill_rows
gn_one, gn_fill, gn_fill_rows = _gn.one, _gn.fill, _gn.fill_rows
lp_one, lp_fill, lp_fill_rows = _lp.one, _lp.fill, _lp.fill_rows


cdef inline void _cl_state(cl_state_t* st, _CLBuf buf, const double[::1] L,
                           const double[::1] R) noexcept:
    st.P = &buf.P
    st.L = &L[0]
    st.R = &R[0]
    st.m = L.shape[0]
    st.sigma = NAN
    st.mu = NAN


def cl_one(object gen, double mu, double sigma, const double[::1] L, const double[::1] R):
    cdef _CLBuf buf = _CLBuf(L, R)
    cdef cl_state_t st
    cdef double par[2]
    _cl_state(&st, buf, L, R)
    par[0] = mu; par[1] = sigma
    return _sample_one(gen, _cl_kernel, &st, 2, par)


def cl_fill(object gen, double mu, double sigma, const double[::1] L, const double[::1] R,
            double[::1] out):
    cdef _CLBuf buf = _CLBuf(L, R)
    cdef cl_state_t st
    cdef double par[2]
    _cl_state(&st, buf, L, R)
    par[0] = mu; par[1] = sigma
    _fill_1d(gen, _cl_kernel, &st, 2, par, out)


def cl_fill_rows(object gen, const double[:, :] mu, const double[:, :] sigma,
                 const double[::1] L, const double[::1] R, double[:, ::1] out):
    """Per-element true values and scales (broadcast views; stride 0 welcome)."""
    cdef _CLBuf buf = _CLBuf(L, R)
    cdef cl_state_t st
    _cl_state(&st, buf, L, R)
    _fill_rows(gen, _cl_kernel, &st, 2, mu, sigma, mu, mu, out)


def gr_sample_rows(int mech, object gen, const double[:, :] theta, double sigma,
                   const double[:, :] lo, const double[:, :] hi, double[:, ::1] out):
    """mech 0: clip(theta + sigma Z, lo, hi); 1: truncated normal on [lo, hi] (inverse CDF);
    2: sign(theta + sigma Z) in {-1, +1}."""
    cdef tn_state_t st
    cdef int sign = 1
    cdef const double[:, :] sv = _np.broadcast_to(_np.float64(sigma), (out.shape[0], out.shape[1]))
    if mech == 0:
        _fill_rows(gen, _gr_kernel, NULL, 4, theta, sv, lo, hi, out)
    elif mech == 1:
        _fill_rows(gen, _tn_kernel, &st, 4, theta, sv, lo, hi, out)
    else:
        _fill_rows(gen, _gr_kernel, &sign, 2, theta, sv, lo, hi, out)


def gw_fill_row(object gen, const uint64_t[::1] tree, int levels, int64_t N, uint64_t tailw,
                int sbits, uint64_t tm, int e, double lo, double hi, int64_t nrow,
                const double[:, :] q, double[:, ::1] out, int64_t k=0):
    """Windowed grid draws for one row ``[lo, hi]`` of ``nrow`` intervals: true values ``q``
    (broadcast to ``out``; stride 0 welcome). ``k > 0`` (with ``e = 0``): the integer law
    on the lattice ``lo + j k`` of a step that is not a power of two (integral bounds below
    2^52 in magnitude), each value's index rounded exactly (:func:`gs_index`) and the
    output ``lo + j k``: the draws of the unit row ``[0, nrow]`` for those indices, mapped."""
    if q.shape[0] != out.shape[0] or q.shape[1] != out.shape[1]:
        raise ValueError("grid law: the values must have the output's shape (broadcast them)")
    if k < 0 or (k > 0 and e != 0):
        raise ValueError("grid law: a lattice step k needs the exponent 0")
    cdef gw_row_t st
    _gw_row_law(&st.R, tree, levels, N, tailw, sbits, tm, e, lo, hi, nrow)
    st.lo = lo
    st.hi = hi
    st.nrow = nrow
    st.inv_g = ldexp(1.0, -e)
    st.gamma = ldexp(1.0, e) if k == 0 else <double> k
    st.k = k
    _gw_guide(&st.R, out.shape[0] * out.shape[1])
    try:
        _fill_rows(gen, _gw_row_kernel, &st, 1, q, q, q, q, out)
    finally:
        free(<void*> st.R.guide)
