# Declarations of bndp._core.certify_rows (cimported by the modules that use them)

from bndp._core.common cimport *

cdef inline double _gw_tail(const gw_law_t* L, int64_t j) noexcept nogil:
    # the tail mass beyond the table at distance j from a row's end: B (1 - p^(j - N))
    if j <= L.N:
        return 0.0
    return (<double> L.tailw) * (-expm1((<double> (j - L.N)) * L.lnp))

cdef void _gw_cert_terms(const gw_law_t* L, int64_t nmax, double* T, double* V,
                         double* VM) noexcept nogil
cdef double _gw_window_best(double* qlo, const double* qhi, int64_t kmax, int64_t imax,
                            int64_t dk, double* S) noexcept nogil
cdef double _gw_cert_narrow(const gw_law_t* L, const uint64_t* cum, int64_t n, int64_t dk,
                            double eta, const double* T, const double* V, const double* VM,
                            double* qlo, double* qhi, double* work) noexcept nogil
