# Declarations of bndp._core.gaussian (cimported by the modules that use them)

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

cdef inline double _gf_c_mech2(double delta) noexcept nogil:
    # c of Eq. (9): sqrt(ln(2/(sqrt(16 delta+1) - 1))) = sqrt(ln(sqrt(16 delta+1)+1) - ln(8 delta))
    return sqrt(log(sqrt(16.0 * delta + 1.0) + 1.0) - log(8.0 * delta))


cdef inline double _gf_g_mech4(double delta) noexcept nogil:
    # g of Eq. (15a), rationalised like c
    return sqrt(log(sqrt(8.0 * delta + 1.0) + 1.0) - log(4.0 * delta))

cdef double _gf_b_mech1(double eps, double delta) noexcept nogil
cdef double _gf_a_opt(double eps, double delta) noexcept nogil
cdef double _gf_d_pdp(double eps, double delta) noexcept nogil
