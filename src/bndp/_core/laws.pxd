# Declarations of bndp._core.laws (cimported by the modules that use them)

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

cdef double _tn_cdf(const TNParams* p, double x) noexcept nogil
cdef void _tn_tail_moments(double loc, double scale, double e, double f, double* mean,
                           double* var) noexcept nogil
cdef void _tn_moments(const TNParams* p, double* mean, double* var) noexcept nogil
cdef double _cl_cdf(const CLPieces* P, double x) noexcept nogil
cdef void _cl_moments(const CLPieces* P, double* mean, double* var) noexcept nogil
cdef void _gr_rect_moments(double t, double l, double u, double* mean,
                           double* var) noexcept nogil
cdef void _gauss_legendre(const double** x, const double** w, const double** xr,
                          const double** wr) noexcept
