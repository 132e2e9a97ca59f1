# Declarations of bndp._core.certify_grid (cimported by the modules that use them)

from bndp._core.common cimport *

# The kernel families of the grid laws: the codes of bndp._laws.constants (LAPLACE, GAUSSIAN),
# which the Python layer passes as `fam`
cdef enum:
    FAM_LAPLACE = 0
    FAM_GAUSSIAN = 1

# The pairs of allowed inputs a set law's certificates (gd_set_losses, gd_set_bound) range
# over, their `which`: every pair, the pairs across a gap (a pair's lower input ends a span
# that is not the last or its upper input starts one that is not the first), the pairs
# inside one span
cdef enum:
    PAIRS_ALL = 0
    PAIRS_GAP = 1
    PAIRS_SPAN = 2

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
