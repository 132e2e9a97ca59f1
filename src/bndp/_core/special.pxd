# Declarations of bndp._core.special (cimported by the modules that use them)

from scipy.special.cython_special cimport log_ndtr as _sc_log_ndtr, erfcx as _sc_erfcx
from scipy.special.cython_special cimport erfcinv as _sc_erfcinv
from bndp._core.common cimport *

cdef inline double _log_ndtr(double x) noexcept nogil:
    return _sc_log_ndtr(x)


cdef inline void _phi_split(double z, double* mass0, double* tail) noexcept nogil:
    # For z >= 0: mass0 = Phi(z) - 1/2 and tail = Phi(-z), both to full relative precision
    # (a few ulps, tests/test_special.py). Beyond z = 37 the tail (below 6e-300) comes from
    # libm's erfc, which follows it into the subnormals; mass0 is then exactly 1/2.
    if z <= 37.0:
        _phi_split_branchy(z, mass0, tail)
    else:
        tail[0] = 0.5 * erfc(z * SQRT1_2)
        mass0[0] = 0.5 - tail[0]


cdef inline double _ndtr_lower(double x) noexcept nogil:
    # Phi(x) for x <= 0 to a few ulps (relative)
    cdef double m, t
    _phi_split(-x, &m, &t)
    return t


cdef inline double _half_mass(double z) noexcept nogil:
    # Phi(z) - 1/2 for z >= 0, to full relative precision
    cdef double m, t
    _phi_split(z, &m, &t)
    return m


cdef inline double _logaddexp(double x, double y) noexcept nogil:
    # log(e^x + e^y), y finite
    if x > y:
        return x + log1p(exp(y - x))
    return y + log1p(exp(x - y))


cdef inline double _gf_erfcx(double x) noexcept nogil:
    return _sc_erfcx(x)


cdef inline double _gf_erfcinv(double y) noexcept nogil:
    return _sc_erfcinv(y)


cdef inline double _gr_log1mexp(double x) noexcept nogil:
    # log(1 - e^x) for x <= 0 (Maechler's switch at -log 2)
    if x > -0.6931471805599453:
        return log(-expm1(x))
    return log1p(-exp(x))


cdef inline double _gr_lndtr(double x) noexcept nogil:
    # log Phi(x). Right of 0: log1p(-Phi(-x)) keeps the tiny distance to 0 (it carries the
    # rectified divergence far above the support). Down to -20 Phi does not underflow
    # (_ndtr_lower: Cody's rational approximations, then erfc); below, SciPy's asymptotic log_ndtr.
    if x > 0.0:
        return log1p(-_ndtr_lower(-x))
    if x > -20.0:
        return log(_ndtr_lower(x))
    return _log_ndtr(x)


cdef inline double _gr_log_ndtr_diff(double U, double L) noexcept nogil:
    # log(Phi(U) - Phi(L)) for U > L. Straddling 0: a sum of two erf of positive arguments
    # (no cancellation, no log needed before the end). Both in the right tail: mirrored to
    # the left tail, Phi(U) - Phi(L) = Phi(-L) - Phi(-U). Left tail above -20: difference of
    # erfc values (no underflow); further out: log Phi(U) + log1mexp(log Phi(L) - log Phi(U)).
    cdef double t
    if L >= 0.0:
        t = U
        U = -L
        L = -t
    if U > 0.0:
        return log(_half_mass(U) + _half_mass(-L))
    if U > -20.0:
        return log(_ndtr_lower(U) - _ndtr_lower(L))
    t = _log_ndtr(U)
    return t + _gr_log1mexp(_log_ndtr(L) - t)


cdef inline double _gr_ld(double y, double l, double u) noexcept nogil:
    # log Delta(y) = log P(y + Z in [l, u])
    return _gr_log_ndtr_diff(u - y, l - y)


cdef inline double _gr_q_right(double y, double l, double u) noexcept nogil:
    # log Delta(y) + (y - u)^2/2 + log(2) for y >= u, without the Gaussian factor:
    # Delta(y) = e^{-(y-u)^2/2}/2 [erfcx((y-u)/sqrt2) - e^{-w(2y-l-u)/2} erfcx((y-l)/sqrt2)]
    cdef double w = u - l
    return log(_sc_erfcx((y - u) * SQRT1_2)
               - exp(-0.5 * w * (2.0 * y - l - u)) * _sc_erfcx((y - l) * SQRT1_2))


cdef inline double _gr_lse3(double a, double b, double c) noexcept nogil:
    # log(e^a + e^b + e^c), pivoting on the largest term so that a dominant term close to
    # 0 keeps its full relative precision (log1p of the others)
    if a >= b and a >= c:
        return a + log1p(exp(b - a) + exp(c - a))
    if b >= c:
        return b + log1p(exp(a - b) + exp(c - b))
    return c + log1p(exp(a - c) + exp(b - c))


cdef inline double _gr_atom_bound(double d, double s, double am1) noexcept nogil:
    # Upper bound on alpha log Phi(-d) - (alpha-1) log Phi(-d-s) (the log of a rectified atom
    # term) for d >= 1, from log Phi(-d) <= -d^2/2 and the Mills bound
    # phi(y)/Phi(-y) <= y + 1/y: the atom term is e^{bound} or less. No transcendental call.
    cdef double sp = s if s > 0.0 else 0.0
    return -0.5 * d * d + am1 * (d * sp + 0.5 * sp * sp + sp / d)


cdef inline double _lw_g(double v) noexcept nogil:
    cdef double pk, term, s
    cdef int k
    if fabs(v) <= 1.0:
        pk = 0.5 * v * v
        s = pk
        for k in range(3, 40):
            pk *= v / k
            term = (k - 1) * pk
            s += term
            if fabs(term) <= 1e-17 * fabs(s):
                break
        return s
    return 1.0 + (v - 1.0) * exp(v)

cdef double _ndtri_lower_log(double logt) noexcept nogil
cdef double _lw_branch(double q, int branch) noexcept nogil
cdef double _lw0_direct(double x) noexcept nogil
cdef double _lwm1_log(double lmx) noexcept nogil
cdef double _lambertw(double x, int branch) noexcept nogil
