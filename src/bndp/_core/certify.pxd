# Declarations of bndp._core.certify (cimported by the modules that use them)

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

cdef double _vf_concave_max(double w, double s, double lam, double cmax,
                            double* carg, double* mag) noexcept nogil
cdef double _vf_bg_loss(double s, double dq, const double* w, Py_ssize_t m,
                        double* cstar, double* lower) noexcept nogil
cdef double _vf_tight_g(double s, void* args) noexcept nogil
cdef double _vf_bg_tight_sigma(double eps, double dq, const double* w, Py_ssize_t m,
                               double s_hi, double* cbuf, int* n_eval) noexcept nogil
cdef double _vf_bl_pair(double b, double w, double eps, double q, double qp) noexcept nogil
cdef double _vf_bl_delta(double b, double dq, double w, double eps, double* lower,
                         double* qarg) noexcept nogil
cdef void _cl_recur(CLWork* w) noexcept nogil
cdef double _cl_loss_dir(const CLWork* w, double dF) noexcept nogil
cdef double _cl_metric_dir(const CLWork* w) noexcept nogil
cdef double _dd_hockey(double l1, double s1, double l2, double s2, double eps) noexcept nogil
