# Declarations of bndp._core.gaussian (cimported by the modules that use them)

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
