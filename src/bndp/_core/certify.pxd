# Declarations of bndp._core.certify (cimported by the modules that use them)

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
