/* The windowed grid law's index pass (see _core_sample_window.pxi): the grid index of a block of
 * true values in one row [lo, hi] of n intervals, computed exactly and without branches, so
 * that the compiler vectorises it (target clones as in _simd.h). */
#ifndef BNDP_WINDOW_H
#define BNDP_WINDOW_H

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

#endif /* BNDP_WINDOW_H */
