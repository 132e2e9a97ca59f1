/* The windowed grid law's index pass (see _core_sample_window.pxi): the grid index of a block of
 * true values in one row [lo, hi] of n intervals, computed exactly and without branches, so
 * that the compiler vectorises it (target clones as in _simd.h). */
#ifndef BNDP_WINDOW_H
#define BNDP_WINDOW_H

#include <math.h>
#include <stdint.h>
#include "_simd.h"

/* round-half-up of (clip(q) - lo) / gamma, clipped to [0, n], as a double (an integer):
 * z and zl are exact (scaling by a power of two), d + err == z - zl exactly (TwoSum;
 * the build contracts no floating-point expression), 0 <= d < 2^52 makes the floor of d
 * exact by the 2^52 trick and fr = d - floor(d) exact, and the comparison
 * fr - 1/2 >= -err decides fr + err >= 1/2 exactly (proof in _core_sample_window.pxi, _gw_index). */
static inline double bndp_gw_index_one(double q, double lo, double hi, double inv_g, double n)
{
    const double two52 = 4503599627370496.0;
    double z, zl, d, bb, err, fd, fr, i;
    q = q != q ? lo : q;
    q = q < lo ? lo : q;
    q = q > hi ? hi : q;
    z = q * inv_g;
    zl = lo * inv_g;
    d = z - zl;
    bb = d - z;
    err = (z - (d - bb)) + (-zl - bb);
    d = d < 0.0 ? 0.0 : d;
    fd = (d + two52) - two52;
    fd = fd > d ? fd - 1.0 : fd;
    fr = d - fd;
    i = fd + ((fr - 0.5) >= -err ? 1.0 : 0.0);
    i = i > n ? n : i;
    return i;
}

static BNDP_CLONES void bndp_gw_index_pass(const double *BNDP_RESTRICT q, ptrdiff_t m,
                                           double lo, double hi, double inv_g, double n,
                                           double *BNDP_RESTRICT idx)
{
    for (ptrdiff_t k = 0; k < m; k++)
        idx[k] = bndp_gw_index_one(q[k], lo, hi, inv_g, n);
}

/* the same for rows with their own bounds and interval counts (n[k] < 2^53, exact) */
static BNDP_CLONES void bndp_gw_index_rows(const double *BNDP_RESTRICT q,
                                           const double *BNDP_RESTRICT lo,
                                           const double *BNDP_RESTRICT hi,
                                           const double *BNDP_RESTRICT n, ptrdiff_t m,
                                           double inv_g, double *BNDP_RESTRICT idx)
{
    for (ptrdiff_t k = 0; k < m; k++)
        idx[k] = bndp_gw_index_one(q[k], lo[k], hi[k], inv_g, n[k]);
}

/* Exact power-of-two scaling and exponent extraction for the per-row grid pass
 * (gw_rows_grid), inlined: ldexp(x, k) is x * 2^k rounded once, so for -1022 <= k <= 1023
 * (2^k a normal double) the product is the same double; other k go to libm. The frexp
 * exponent is read from the bits of a normal double; NumPy's convention (0 for 0, +-inf
 * and NaN) holds. */
static inline double bndp_ldexp(double x, int64_t k)
{
    union { uint64_t u; double d; } p;
    if (k < -1022 || k > 1023)
        return ldexp(x, (int)(k < -4000 ? -4000 : k > 4000 ? 4000 : k));
    p.u = (uint64_t)(k + 1023) << 52;
    return x * p.d;
}

static inline int64_t bndp_frexp_exp(double x)
{
    union { uint64_t u; double d; } b;
    int k = 0;
    int64_t ex;
    b.d = x;
    ex = (int64_t)((b.u >> 52) & 0x7ff);
    if (ex == 0x7ff)
        return 0;
    if (ex == 0) {
        if (x != 0.0)
            frexp(x, &k);
        return k;
    }
    return ex - 1022;
}

/* r == floor(r) (false for NaN, true for +-inf) */
static inline int bndp_is_integer(double r)
{
    if (r != r)
        return 0;
    if (fabs(r) >= 4503599627370496.0)
        return 1;
    return (double)(int64_t)r == r;
}

#endif /* BNDP_WINDOW_H */
