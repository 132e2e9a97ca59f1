# Declarations of bndp._core.calibrate (cimported by the modules that use them)

from bndp._core.common cimport *

cdef inline double _bl_log_dc(double b, double dq, double w) noexcept nogil:
    cdef double dcm1
    if dq >= w:
        return 0.0
    if w == INFINITY:
        dcm1 = -expm1(-dq / b)
    else:
        dcm1 = (-expm1(-dq / b)) * (expm1(-(w - dq) / b) / expm1(-w / b))
    return log1p(dcm1)


cdef inline double _bg_drho(double c, double w, double s) noexcept nogil:
    # d rho / dc = phi(c/s) (1 - exp(-w(w-2c)/(2 s^2))) / (s g(c))   (no cancellation)
    cdef double h = c / s, t = (w - c) / s
    cdef double g = 0.5 * (erf(t * SQRT1_2) + erf(h * SQRT1_2))
    return exp(-0.5 * h * h) / SQRT_2PI * (-expm1(-w * (w - 2.0 * c) / (2.0 * s * s))) / (s * g)

cdef double _bisect_feasible(monotone_fn g, void* args, double lo, double glo,
                             double hi, double ghi, double xtol, double gtol,
                             int* n_eval) noexcept nogil
cdef double _bl_g(double b, void* args) noexcept nogil
cdef double _bl_scale(double eps, double delta, double dq, double lo, double hi) noexcept nogil
cdef double _bg_rho(double c, double w, double s) noexcept nogil
cdef double _bg_log_dc_multi(double s, const double* w, Py_ssize_t m, double dq,
                             double* cstar) noexcept nogil
cdef double _bg_log_dc(double s, BGCal* c) noexcept nogil
cdef double _bg_g(double v, void* args) noexcept nogil
cdef double _bg_sigma(double eps, double dq, const double* w, Py_ssize_t m,
                      double* cstar) noexcept nogil
cdef double _dd_g(double u) noexcept nogil
cdef double _cl_loss(CLCal* c, double s) noexcept nogil
cdef double _cl_g(double s, void* args) noexcept nogil
cdef double _cl_certify(CLCal* c, double s) noexcept nogil
cdef double _cl_scale(CLCal* c) noexcept nogil
cdef double _cl_scale_search(CLCal* c, double top) noexcept nogil
cdef double _cl_solve(const double[::1] L, const double[::1] R, const double[::1] Lr,
                      const double[::1] Rr, double eps, double dF, bint metric,
                      bint loss, double sigma) except? -1.0
cdef double _gw_try(int fam, double t, int64_t n, int64_t dk, int wide, int tail_bits,
                    gw_law_t* L, uint64_t** cum, int64_t* cap, double** qlo, double** qhi,
                    double** work, int64_t* qcap) noexcept nogil
cdef double _gs_z(double t, double r2, double a, double b) noexcept nogil
cdef double _gs_row_loss(double t, int64_t n, int64_t dk) noexcept nogil
