# cython: language_level=3, boundscheck=False, wraparound=False, cdivision=True, initializedcheck=False
"""Continuous samplers: parameter setup and inverse-CDF quantiles
of the truncated normal, the bounded Laplace [HABM20], the unbounded Gaussian and Laplace,
NumPy's normal kernel for gradient noise, and the constrained ("truncated and normalised")
Laplace across its allowed pieces. The locked fill loop that drives them is _core/fill.pyx.
"""

import numpy as _np

from numpy.random.c_distributions cimport random_standard_normal
from bndp._core.common cimport *
from bndp._core.special cimport *

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





# Draws come in blocks: the uniforms of a block are drawn first (in stream order); then the
# straddling rows go through _simd.h's vectorised loops (the central branch over the whole
# block, the tail branch over the entries that need it, packed), and the rows in one tail
# through the scalar path above. Each entry is the same IEEE computation as _tn_draw (which
# calls the same inline straddle quantile), so the stream and the values are those of a
# draw-by-draw loop.







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





# ---------------------------------------------------------------------------------------
# Unbounded Gaussian and Laplace samplers (inverse CDF from one open-interval uniform;
# 1 - u is exact, so both tails are computed from the small tail mass).
# ---------------------------------------------------------------------------------------




# ---------------------------------------------------------------------------------------
# Standard normal draws: NumPy's own kernel (`random_standard_normal`, a 256-layer ziggurat
# in numpy/random/src/distributions), called on the borrowed bitgen_t. For the same
# BitGenerator state it draws exactly what Generator.standard_normal draws (tested).
# ---------------------------------------------------------------------------------------


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


cdef class _CLBuf:
    # workspace for the recursions of one orientation (4 m doubles) and the pieces (8 (m+1))

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
