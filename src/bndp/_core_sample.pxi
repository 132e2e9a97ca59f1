# Continuous samplers (included by _core.pyx): parameter setup and inverse-CDF quantiles
# of the truncated normal, the bounded Laplace [HABM20], the unbounded Gaussian and Laplace,
# NumPy's normal kernel for gradient noise, and the constrained ("truncated and normalised")
# Laplace across its allowed pieces. The locked fill loop that drives them is _core_fill.pxi.

# ---------------------------------------------------------------------------------------
# Truncated normal N(loc, scale^2) restricted to [lo, hi], by inverse CDF.
#
# Standardise: a = (lo - loc)/scale, b = (hi - loc)/scale. Three regimes:
#   * a <= 0 <= b ("straddle"): the masses on each side of the parent median,
#     mL = Phi(0) - Phi(a) = erf(-a/sqrt2)/2 and mR = erf(b/sqrt2)/2, are sums of nothing and
#     carry full relative precision even when the interval is tiny against scale. With
#     s = U*Z - mL (Z = mL + mR), the draw is Phi^-1(1/2 + s), taken from the central branch
#     with s itself when |s| <= 0.425, or from the tail with the tail mass written as a sum
#     of non-negative terms (Phi(a) + U*Z on the left, Phi(-b) + (1-U)*Z on the right).
#   * b < 0 (the interval lies in the left tail): log space. With la = log Phi(a),
#     lb = log Phi(b), the target is log(Phi(a) + U*Z) = lb + log1p(-(1-U)(1-e^(la-lb))),
#     inverted by _ndtri_lower_log. Exact in far tails such as [-1001, -1000].
#   * a > 0: mirror image of the previous case.
# ---------------------------------------------------------------------------------------

cdef inline void _tn_setup_draw(TNParams* p, double loc, double scale, double lo, double hi) noexcept nogil:
    # Everything the sampler needs (logZ is left NaN in the straddle case: see _tn_setup).
    cdef double inv = 1.0 / scale
    cdef double a = (lo - loc) * inv
    cdef double b = (hi - loc) * inv
    cdef double t
    p.loc = loc
    p.scale = scale
    p.lo = lo
    p.hi = hi
    cdef double mR
    p.far = 0
    if a <= 0.0 and b >= 0.0:
        p.mode = 0
        _phi_split(-a, &p.mL, &p.tlo)        # Phi(0) - Phi(a), Phi(a)
        _phi_split(b, &mR, &p.thi)           # Phi(b) - Phi(0), Phi(-b)
        p.Z = p.mL + mR
        p.logZ = NAN                         # not needed to sample; _tn_setup fills it
        p.lb = 0.0                           # unused in this mode
        p.la = 0.0
        p.om = 0.0
    else:
        p.mL = 0.0                           # unused in the tail modes
        p.Z = 0.0
        p.tlo = 0.0
        p.thi = 0.0
        if b < 0.0:
            p.mode = 1
        else:
            p.mode = 2
            t = a
            a = -b
            b = -t
        p.far = b < -TN_FAR
        if p.far:
            # beta = |b| and 1 - e^(-beta W) (W the standardised width): see _tn_quantile
            p.tlo = -b
            p.thi = -expm1(-p.tlo * ((hi - lo) * inv))
        p.lb = _log_ndtr(b)
        p.la = _log_ndtr(a)
        p.om = -expm1(p.la - p.lb)          # 1 - Phi(a)/Phi(b)
        p.logZ = p.lb + log(p.om)


cdef inline double _tn_quantile_std(const TNParams* p, double u) noexcept nogil:
    # Standardised quantile z of the truncated law at probability u in (0, 1).
    if p.mode == 0:
        return _tn_straddle_std(u, p.Z, p.mL, p.tlo, p.thi)
    if p.mode == 1:
        return _ndtri_lower_log(p.lb + log1p(-(1.0 - u) * p.om))
    # mirrored right tail: draw -z from the left tail with probability 1 - u
    return -_ndtri_lower_log(p.lb + log1p(-u * p.om))


cdef inline double _clip(double x, double lo, double hi) noexcept nogil:
    # Guard against last-ulp excursions of loc + scale*z only: the law already lies in [lo, hi].
    if x < lo:
        return lo
    if x > hi:
        return hi
    return x


# Near end b beyond 2^28 scales from the mean (b < -2^28 in the left-tail coordinates): with
# t = b - z, the density is proportional to exp(-beta t - t^2/2) on [0, W], beta = |b|, and
# t <= 37/beta for every draw (u >= 2^-53), so t^2/2 <= 37/(2 beta^2) < 3e-16 relative to
# beta t: t is a truncated exponential of rate beta to rounding,
# t = -log1p(-v (1 - e^(-beta W)))/beta, and the draw is the end minus scale*t. Working from
# the end avoids loc + scale*z, which cancels (loc = 1e200 on [-1, 1] gave NaN), and
# log Phi(b), which overflows beyond |b| ~ 1e154.
cdef double TN_FAR = 268435456.0


cdef inline double _tn_quantile(const TNParams* p, double u) noexcept nogil:
    if p.far:
        if p.mode == 1:
            return _clip(p.hi + p.scale * (log1p(-(1.0 - u) * p.thi) / p.tlo), p.lo, p.hi)
        return _clip(p.lo - p.scale * (log1p(-u * p.thi) / p.tlo), p.lo, p.hi)
    return _clip(p.loc + p.scale * _tn_quantile_std(p, u), p.lo, p.hi)

cdef double _tn_ppf(const TNParams* p, double u) noexcept nogil:
    # Quantile for evaluation (ppf), u in (0, 1). In a tail mode the log target mass
    # log(Phi(a) + v Z) (left-tail coordinates, v the probability counted from the far end)
    # is lb + log1p(-(1 - v) om) when v > 1/2, as the sampler has it, and
    # logaddexp(log Phi(a), log v + log Z) when v <= 1/2: the former loses everything once
    # v Z falls below ulp(Phi(a)) (NaN or the far end for u <= 1e-30 on [-40, -39]).
    # The sampler draws through this function (a draw is tn_eval_rows(5)'s quantile at u,
    # bit for bit); ppf (tn_eval_rows(2), _tn_ppf_eval) refines the lower end's offset where
    # loc + scale z cancels.
    cdef double v, lt, W
    if p.mode == 0:
        return _tn_quantile(p, u)
    v = u if p.mode == 1 else 1.0 - u           # exact: 1 - u for u >= 1/2 only is used
    if v > 0.5:
        return _tn_quantile(p, u)
    if p.far:
        # truncated exponential from the near end: t = -log(e^(-beta W) + v (1 - e^(-beta W)))/beta
        W = (p.hi - p.lo) / p.scale
        lt = _logaddexp(-p.tlo * W, log(v) + log(p.thi))
        if p.mode == 1:
            return _clip(p.hi + p.scale * (lt / p.tlo), p.lo, p.hi)
        return _clip(p.lo - p.scale * (lt / p.tlo), p.lo, p.hi)
    lt = _logaddexp(p.la, log(v) + p.logZ)
    if p.mode == 1:
        return _clip(p.loc + p.scale * _ndtri_lower_log(lt), p.lo, p.hi)
    return _clip(p.loc - p.scale * _ndtri_lower_log(lt), p.lo, p.hi)


cdef inline double _tn_draw(bitgen_t* bg, const TNParams* p) noexcept nogil:
    return _tn_ppf(p, _u_open(bg))


cdef inline void _tn_setup(TNParams* p, double loc, double scale, double lo, double hi) noexcept nogil:
    # Full parameter set (sampling, CDF, density, moments).
    _tn_setup_draw(p, loc, scale, lo, hi)
    if p.mode == 0:
        p.logZ = log(p.Z)

# Draws come in blocks: the uniforms of a block are drawn first (in stream order); then the
# straddling rows go through _simd.h's vectorised loops (the central branch over the whole
# block, the tail branch over the entries that need it, packed), and the rows in one tail
# through the scalar path above. Each entry is the same IEEE computation as _tn_draw (which
# calls the same inline straddle quantile), so the stream and the values are those of a
# draw-by-draw loop.


cdef inline int _tn_block_set(TNBlock* b, Py_ssize_t k, double loc, double scale, double lo,
                              double hi) noexcept nogil:
    # sets row k of the block; returns 1 for a row in one tail (mode 1 or 2), else 0
    _tn_setup_draw(&b.p[k], loc, scale, lo, hi)
    b.Z[k] = b.p[k].Z                 # 0 in the tail modes: those entries are redone below
    b.mL[k] = b.p[k].mL
    b.tlo[k] = b.p[k].tlo
    b.thi[k] = b.p[k].thi
    b.loc[k] = loc
    b.scale[k] = scale
    b.lo[k] = lo
    b.hi[k] = hi
    b.onetail[k] = b.p[k].mode != 0
    return b.onetail[k]


cdef inline Py_ssize_t _tn_block_setup(TNBlock* b, Py_ssize_t m) noexcept nogil:
    # the setup of rows 0..m-1 whose parameters are in b.loc, b.scale, b.lo, b.hi: the
    # branch-free pass (_simd.h) for the rows that straddle their parent median, the scalar
    # log-space setup for rows in one tail; returns the number of the latter. The pass gives
    # the straddling rows the values of the scalar setup (_tn_setup_draw), except a tail
    # mass below 6e-300 (beyond 37 scales), which it sets to 0: the quantile adds it to at
    # least 2^-54, so the draws are bit for bit those of the scalar path
    # (tests/test_special.py).
    cdef Py_ssize_t k, ntail
    ntail = _tn_setup_pass(b.loc, b.scale, b.lo, b.hi, m, b.Z, b.mL, b.tlo, b.thi, b.onetail)
    if ntail > 0:
        for k in range(m):
            if b.onetail[k]:
                _tn_setup_draw(&b.p[k], b.loc[k], b.scale[k], b.lo[k], b.hi[k])
    return ntail


cdef inline void _tn_block_draw(bitgen_t* bg, TNBlock* b, Py_ssize_t m, double* out,
                                Py_ssize_t ntail, Py_ssize_t stride) noexcept nogil:
    # out[k] for k < m from rows 0..m-1 of the block (m <= TN_BLOCK), ntail of them in
    # one tail; stride 0: all rows are row 0 (only the tail rows' p[k] are read per row)
    cdef Py_ssize_t k
    for k in range(m):
        b.u[k] = _u_open(bg)
    if ntail < m:
        _tn_straddle_block(b.u, out, m, b.Z, b.mL, b.tlo, b.thi, b.loc, b.scale, b.lo, b.hi,
                           stride)
    if ntail > 0:
        for k in range(m):
            if b.onetail[k * stride]:
                out[k] = _tn_ppf(&b.p[k * stride], b.u[k])

# ---------------------------------------------------------------------------------------
# Bounded Laplace [HABM20, Def. 3.1]: Laplace(q, b) restricted to [l, u] and renormalised,
# sampled by the closed-form inverse CDF (one uniform, constant work: no timing channel).
# a = (q - l)/b, c = (u - q)/b, mL = -expm1(-a)/2, mR = -expm1(-c)/2, C = mL + mR
# (Lemma 3.2 in cancellation-free form). With s = U*C - mL:
#   x = q + sign(s) * b * (-log(1 - 2|s|)).
# The setup and the draw are the branch-free functions of _simd.h (bndp_bl_setup_one,
# bndp_bl_draw), shared by the scalar calls here and the vectorised block loops, so both
# give the same bits (tests/test_samplers.py). log(1 - 2|s|) keeps full relative precision
# when |s| is tiny (b > u - l: the law is nearly uniform; the textbook
# p = F(l) + U(F(u) - F(l)) is off by ~5e-8 at b = 1e9 on [0, 1]); far from q its relative
# error is of the order of the uniform's own resolution, as for any inverse-CDF Laplace
# sampler. One end may be infinite (a half-line).
# ---------------------------------------------------------------------------------------


cdef inline void _bl_setup(BLParams* p, double q, double b, double lo, double hi) noexcept nogil:
    p.q = q
    p.b = b
    p.lo = lo
    p.hi = hi
    _bl_setup_one(q, b, lo, hi, &p.mL, &p.C)


cdef inline double _bl_quantile(const BLParams* p, double u) noexcept nogil:
    return _bl_draw(u, p.q, p.b, p.lo, p.hi, p.mL, p.C)

# ---------------------------------------------------------------------------------------
# Unbounded Gaussian and Laplace samplers (inverse CDF from one open-interval uniform;
# 1 - u is exact, so both tails are computed from the small tail mass).
# ---------------------------------------------------------------------------------------

cdef inline double _gn_std(double u) noexcept nogil:
    # Phi^-1(u) for u in (0, 1)
    cdef double q = u - 0.5
    if fabs(q) <= 0.425:
        return _ppnd_central(q)
    if q < 0.0:
        return _ndtri_lower_log(log(u))
    return -_ndtri_lower_log(log(1.0 - u))


cdef inline double _lp_std(double u) noexcept nogil:
    # standard Laplace quantile: log(2u) for u < 1/2, -log(2(1-u)) otherwise
    if u < 0.5:
        return log(2.0 * u)
    return -log(2.0 * (1.0 - u))

# ---------------------------------------------------------------------------------------
# Standard normal draws: NumPy's own kernel (`random_standard_normal`, a 256-layer ziggurat
# in numpy/random/src/distributions), called on the borrowed bitgen_t. For the same
# BitGenerator state it draws exactly what Generator.standard_normal draws (tested).
# ---------------------------------------------------------------------------------------

cdef inline double _gr_std_normal(bitgen_t* bg) noexcept nogil:
    return random_standard_normal(bg)

# ---------------------------------------------------------------------------------------
# Sampling by inverse CDF across the allowed pieces. Pieces left of mu (spans 0..j-1 and
# [L_j, mu]) are indexed from the far left with cumulative masses cl; pieces right of mu from
# the far right with cr. With t = u N: if t < Lc the output y has mass(A cap (-inf, y]) = t,
# found in piece k as y = mu + s ln(2 r + e^{-(mu - lo_k)/s}), r = t - cl[k-1]; otherwise
# mass(A cap [y, inf)) = (1 - u) N (exact: 1 - u is exact for _u_open), mirrored. In the
# outer unbounded pieces this is y = mu + s ln(2t): exact in the far tails. One uniform and a
# binary search of fixed depth per draw: the work does not depend on the true value.
# ---------------------------------------------------------------------------------------


cdef void _cl_consts(CLPieces* P, const double* L, const double* R, Py_ssize_t m,
                     double s) noexcept nogil:
    # per-scale constants, so that a true value costs two exponentials (distances to the
    # ends of its own span); farther pieces follow by products
    cdef Py_ssize_t k
    cdef double w
    P.s = s
    P.inv_s = 1.0 / s
    P.m = m
    for k in range(m):
        w = R[k] - L[k]
        if w == INFINITY:
            P.ew[k] = 0.0
            P.omw[k] = 1.0
        else:
            P.ew[k] = exp(-w / s)
            P.omw[k] = -expm1(-w / s)
        if k + 1 < m:
            P.eg[k] = exp(-(L[k + 1] - R[k]) / s)
    P.depth = 1
    while (<Py_ssize_t> 1 << P.depth) < m + 1:
        P.depth += 1


cdef void _cl_pieces(CLPieces* P, const double* L, const double* R, double mu) noexcept nogil:
    # masses of the pieces for true value mu (in A): left pieces indexed from the far left,
    # right pieces from the far right; every mass is a product of positive factors
    cdef Py_ssize_t m = P.m, j = _cl_locate(L, m, mu), k, idx, nl
    cdef double s = P.s, c, f, a, mass, d
    if j < 0:
        j = 0
    P.mu = mu
    nl = j + 1
    # partial piece [L_j, mu]; 1 - a is exact to a few ulps once a <= e^-1/2, expm1 below
    if L[j] == -INFINITY:
        a = 0.0
        mass = 0.5
    else:
        d = (mu - L[j]) * P.inv_s
        a = exp(-d)
        mass = 0.5 * (1.0 - a) if d > 0.5 else -0.5 * expm1(-d)
    P.cl[j] = mass
    P.al[j] = a
    P.lol[j] = L[j]
    P.hil[j] = mu
    f = a                               # e^{-(mu - R_{k})/s} after stepping over the gap
    k = j - 1
    while k >= 0:
        f *= P.eg[k]                    # now e^{-(mu - R_k)/s}
        P.cl[k] = 0.5 * f * P.omw[k]
        f *= P.ew[k]                    # e^{-(mu - L_k)/s} (0 if L_k = -inf)
        P.al[k] = f
        P.lol[k] = L[k]
        P.hil[k] = R[k]
        k -= 1
    c = 0.0
    for k in range(nl):
        c += P.cl[k]
        P.cl[k] = c
    P.nl = nl
    P.Lc = c
    # right pieces: idx 0 = span m-1, ..., idx m-1-j = partial [mu, R_j]
    P.nr = m - j
    idx = m - 1 - j
    if R[j] == INFINITY:
        a = 0.0
        mass = 0.5
    else:
        d = (R[j] - mu) * P.inv_s
        a = exp(-d)
        mass = 0.5 * (1.0 - a) if d > 0.5 else -0.5 * expm1(-d)
    P.cr[idx] = mass
    P.ar[idx] = a
    P.lor[idx] = mu
    P.hir[idx] = R[j]
    f = a
    for k in range(j + 1, m):
        idx -= 1
        f *= P.eg[k - 1]                # e^{-(L_k - mu)/s}
        P.cr[idx] = 0.5 * f * P.omw[k]
        f *= P.ew[k]                    # e^{-(R_k - mu)/s}
        P.ar[idx] = f
        P.lor[idx] = L[k]
        P.hir[idx] = R[k]
    c = 0.0
    for k in range(P.nr):
        c += P.cr[k]
        P.cr[k] = c
    P.N = P.Lc + c


cdef inline Py_ssize_t _cl_first_above(const double* c, Py_ssize_t n, double t,
                                       int depth) noexcept nogil:
    # first k in [0, n) with c[k] > t (n - 1 if none: rounding), fixed number of steps
    cdef Py_ssize_t lo = 0, hi = n - 1, mid
    cdef int it
    for it in range(depth + 1):
        if lo < hi:
            mid = (lo + hi) >> 1
            if c[mid] > t:
                hi = mid
            else:
                lo = mid + 1
    return lo


cdef inline double _cl_quantile(const CLPieces* P, double u) noexcept nogil:
    cdef double t = u * P.N, r, y
    cdef Py_ssize_t k
    if t < P.Lc:
        k = _cl_first_above(P.cl, P.nl, t, P.depth)
        r = t - (P.cl[k - 1] if k > 0 else 0.0)
        y = P.mu + P.s * log(2.0 * r + P.al[k])
        return _clip(y, P.lol[k], P.hil[k])
    t = (1.0 - u) * P.N
    k = _cl_first_above(P.cr, P.nr, t, P.depth)
    r = t - (P.cr[k - 1] if k > 0 else 0.0)
    y = P.mu - P.s * log(2.0 * r + P.ar[k])
    return _clip(y, P.lor[k], P.hir[k])

cdef class _CLBuf:
    # workspace for the recursions of one orientation (4 m doubles) and the pieces (8 (m+1))
    cdef double* buf
    cdef CLWork w
    cdef CLPieces P
    cdef object keep

    def __cinit__(self, const double[::1] L, const double[::1] R):
        cdef Py_ssize_t m = L.shape[0]
        self.keep = (L, R)
        self.buf = <double*> malloc((15 * m + 8) * sizeof(double))
        if self.buf == NULL:
            raise MemoryError()
        self.w.m = m
        self.w.L = &L[0]
        self.w.R = &R[0]
        self.w.s = 1.0
        self.w.lcL = self.buf
        self.w.fL = self.buf + m
        self.w.rcR = self.buf + 2 * m
        self.w.fR = self.buf + 3 * m
        self.P.cl = self.buf + 4 * m
        self.P.al = self.P.cl + (m + 1)
        self.P.lol = self.P.al + (m + 1)
        self.P.hil = self.P.lol + (m + 1)
        self.P.cr = self.P.hil + (m + 1)
        self.P.ar = self.P.cr + (m + 1)
        self.P.lor = self.P.ar + (m + 1)
        self.P.hir = self.P.lor + (m + 1)
        self.P.ew = self.P.hir + (m + 1)
        self.P.omw = self.P.ew + m
        self.P.eg = self.P.omw + m

    def __dealloc__(self):
        free(self.buf)
