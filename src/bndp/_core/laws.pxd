# Declarations of bndp._core.laws (cimported by the modules that use them)

from bndp._core.common cimport *

cdef double _tn_cdf(const TNParams* p, double x) noexcept nogil
cdef void _tn_tail_moments(double loc, double scale, double e, double f, double* mean,
                           double* var) noexcept nogil
cdef void _tn_moments(const TNParams* p, double* mean, double* var) noexcept nogil
cdef double _cl_cdf(const CLPieces* P, double x) noexcept nogil
cdef void _cl_moments(const CLPieces* P, double* mean, double* var) noexcept nogil
cdef void _gr_rect_moments(double t, double l, double u, double* mean,
                           double* var) noexcept nogil
ctypedef struct gl_nodes_t:
    const double* x             # the GL_N Gauss-Legendre nodes on [-1, 1] and their weights
    const double* w
    const double* xr            # the GL_R nodes and weights
    const double* wr
cdef gl_nodes_t gauss_legendre() noexcept
