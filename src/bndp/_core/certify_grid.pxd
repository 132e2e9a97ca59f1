# Declarations of bndp._core.certify_grid (cimported by the modules that use them)

from libc.math cimport (log, log1p, exp, expm1, sqrt, erf, erfc, fabs, nextafter, isnan, copysign,
                        isfinite, fma, hypot, INFINITY, NAN, M_PI)
from libc.stdlib cimport malloc, calloc, free
from libc.stdint cimport int64_t
from cpython.pycapsule cimport PyCapsule_IsValid, PyCapsule_GetPointer
from numpy.random cimport bitgen_t
from scipy.special.cython_special cimport log_ndtr as _sc_log_ndtr, erfcx as _sc_erfcx
from libc.stdint cimport uint64_t, int64_t, uint32_t, int32_t
from libc.math cimport ceil as _ex_ceil
from libc.math cimport ldexp as _gd_ldexp, nearbyint as _gd_rint, floor as _gd_floor, fmin, fmax
from libc.math cimport hypot
from scipy.special.cython_special cimport erfcx as _sc_erfcx, erfcinv as _sc_erfcinv
from libc.stdint cimport uint64_t
from libc.math cimport pow
from numpy.random.c_distributions cimport random_standard_normal
from scipy.special.cython_special cimport erfcx as _sc_erfcx
from libc.math cimport fma, copysign
from libc.math cimport log2 as _gw_log2, floor as _gw_floorf
from libc.stdlib cimport realloc
from libc.string cimport memcpy
cimport numpy as _cnp
from bndp._core.common cimport *

cdef void _gd_shift_losses(const uint64_t* cum, int64_t n, int64_t dk, double* lnw,
                           double* lns, int64_t* dq, double* lam) noexcept nogil
cdef void _gd_window(const double* g, int64_t i_top, int64_t delta, int64_t a, int64_t b,
                     int64_t last, int64_t* dq, int64_t* dqn, double* wmax,
                     double* wmin) noexcept nogil
cdef uint64_t _gd_near_total(const uint64_t* cum, int64_t N, const int64_t* sa,
                             const int64_t* sb, int64_t m, uint64_t tailw, int64_t i) noexcept nogil
cdef double _gd_lnw_ext(const uint64_t* cum, int64_t N, double lnwn, double lnp,
                        int64_t d) noexcept nogil
cdef void _gd_slide_max(const double* x, const unsigned char* ok, int64_t n, int64_t D, double* out,
                        int64_t* dq) noexcept nogil
cdef int _gw_shape(int fam, double t, int64_t n, int tail_bits, gw_law_t* L) noexcept nogil
cdef int _gw_fill_table(gw_law_t* L, uint64_t* cum) noexcept nogil
cdef double _gw_cert(const gw_law_t* L, const uint64_t* cum, int64_t n, int64_t dk, int wide,
                     double* qlo, double* qhi, double* work) noexcept nogil
