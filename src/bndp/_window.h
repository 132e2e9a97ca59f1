/* The windowed grid law's index pass (see _core/window.pyx): the grid index of a block of
 * true values in one row [lo, hi] of n intervals, computed exactly and without branches, so
 * that the compiler vectorises it (target clones as in _simd.h). */
#ifndef BNDP_WINDOW_H
#define BNDP_WINDOW_H

#include <math.h>
#include <stdint.h>
#include <string.h>
#include "_simd.h"

/* round-half-up of (clip(q) - lo) / gamma, clipped to [0, n], as a double (an integer):
 * z and zl are exact (scaling by a power of two), d + err == z - zl exactly (TwoSum;
 * the build contracts no floating-point expression), 0 <= d < 2^52 makes the floor of d
 * exact by the 2^52 trick and fr = d - floor(d) exact, and the comparison
 * fr - 1/2 >= -err decides fr + err >= 1/2 exactly (proof in _core/window.pyx, _gw_index). */
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

/* The integer law on a lattice step k that is not a power of two (bndp._laws.step): the
 * lattice index floor((clip(q) - lo)/k + 1/2), at most n, of one true value, for a row
 * narrower than 2^49 and k below 2^40. d = clip(q) - lo is split by TwoSum (d + err
 * exact); where d is an integer and err is 0 (integral values and bounds), t = 2d + k + 1/2
 * is exact (below 2^50) and no multiple of 2k, so floor(t / 2k) is floor(t * (1/2k)): the
 * product's relative error (a few units of 2^-53) is below t's distance to the next multiple
 * of 2k over t. *slow is set where the value is not such an integer (or the row is too
 * wide): the caller then takes the exact integer rounding (_gs_nearest) for the block. */
static inline double bndp_gs_index_one(double x, double l, double h, double kd,
                                       double inv_tk, double n, int *slow)
{
    const double two52 = 4503599627370496.0;
    double d, bb, err, fd, y, a;
    x = x != x ? l : x;
    x = x < l ? l : x;
    x = x > h ? h : x;
    d = x - l;
    bb = d - x;
    err = (x - (d - bb)) + (-l - bb);
    fd = (d + two52) - two52;
    fd = fd > d ? fd - 1.0 : fd;
    y = (2.0 * fd + kd + 0.5) * inv_tk;
    a = (y + two52) - two52;
    a = a > y ? a - 1.0 : a;
    *slow |= (d != fd) | (err != 0.0) | (h - l >= 562949953421312.0);
    return a > n ? n : a;
}

/* bndp_gs_index_one over a block of one row; nonzero where some value needs the exact
 * rounding. Branch-free: vectorised. */
static BNDP_CLONES int bndp_gs_index_pass(const double *BNDP_RESTRICT q, ptrdiff_t m,
                                          double lo, double hi, double kd, double inv_tk,
                                          double n, double *BNDP_RESTRICT idx)
{
    int slow = 0;
    for (ptrdiff_t r = 0; r < m; r++)
        idx[r] = bndp_gs_index_one(q[r], lo, hi, kd, inv_tk, n, &slow);
    return slow;
}

/* The same for rows with their own integral bounds: each row's intervals
 * n = floor((hi - lo)/k) (the width w = hi - lo is exact, below 2^49; w + 1/2 is no multiple
 * of k, so the floor of (w + 1/2)(1/k) is exact as above) and its value's index. */
static BNDP_CLONES int bndp_gs_rows_pass(const double *BNDP_RESTRICT q,
                                         const double *BNDP_RESTRICT lo,
                                         const double *BNDP_RESTRICT hi, ptrdiff_t m,
                                         double kd, double inv_k, double inv_tk,
                                         double *BNDP_RESTRICT idx,
                                         double *BNDP_RESTRICT nrow)
{
    const double two52 = 4503599627370496.0;
    int slow = 0;
    for (ptrdiff_t r = 0; r < m; r++) {
        double w = (hi[r] - lo[r] + 0.5) * inv_k, nn = (w + two52) - two52;
        nn = nn > w ? nn - 1.0 : nn;
        nrow[r] = nn;
        idx[r] = bndp_gs_index_one(q[r], lo[r], hi[r], kd, inv_tk, nn, &slow);
    }
    return slow;
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

/* floor((hi - lo) inv_g) exactly (TwoSum of the exact scalings; -1 where hi < lo or NaN,
 * 2 maxrow where it reaches 2 maxrow): gw_intervals for one row */
static inline int64_t bndp_gw_count(double lo, double hi, double inv_g, int64_t maxrow)
{
    double z = hi * inv_g, zl = lo * inv_g, d, bb, err, fd, fr;
    d = z - zl;
    bb = d - z;
    err = (z - (d - bb)) + (-zl - bb);
    if (d < 0.0 || d != d || d >= 2.0 * (double)maxrow)
        return (d < 0.0 || d != d) ? -1 : 2 * maxrow;
    fd = (double)(int64_t)d;          /* floor of 0 <= d < 2^52: its truncation */
    fr = d - fd;
    return (int64_t)fd - (int64_t)(fr < -err);
}

#define BNDP_GW_ROWS_BLOCK 256

/* one row of the per-row grid pass (see bndp_gw_rows_grid): e, the coarse flag, n (0 where
 * e is outside [-1022, 1000]) and the grid index of q (0 where n < 1) */
static inline void bndp_gw_row_grid(double l, double h, double q, double base0, double dq,
                                    double ws, double ss, int64_t maxrow, int64_t *eo,
                                    unsigned char *co, int64_t *no, int64_t *io)
{
    double w = h - l, r, base, mm, al = fabs(l), ah = fabs(h);
    int64_t e, eu, emax, n;
    int it;
    r = w / ws;
    base = base0 < r ? base0 : r;
    e = bndp_frexp_exp(base) - 1;
    for (it = 0; it < 8; it++) {
        r = bndp_ldexp(dq < w ? dq : w, -e);
        if (bndp_is_integer(r) || !(r < ss))
            break;
        e -= 1;
    }
    mm = al > ah ? al : ah;
    mm = mm > 1e-300 ? mm : (mm == mm ? 1e-300 : mm);
    eu = bndp_frexp_exp(mm) - 53;
    emax = eu > e ? eu : e;
    eu += !bndp_is_integer(bndp_ldexp(l, -emax));
    *co = (unsigned char)(eu > e);
    e = eu > e ? eu : e;
    *eo = e;
    if (e < -1022 || e > 1000) {
        *no = 0;
        *io = 0;
        return;
    }
    r = bndp_ldexp(1.0, -e);
    n = bndp_gw_count(l, h, r, maxrow);
    *no = n;
    *io = n >= 1 ? (int64_t)bndp_gw_index_one(q, l, h, r, (double)n) : 0;
}

static inline double bndp_from_bits(uint64_t u)
{
    double x;
    memcpy(&x, &u, sizeof x);
    return x;
}

/* bndp_gw_row_grid for the rows where every step takes its common branch, without
 * branches (vectorised): base a normal double below 2^1023, the first refinement test
 * passes, the larger bound a finite double above 1e-300, -1022 <= e <= 1000 and
 * 0 <= (hi - lo) 2^-e < 2 maxrow. Exponents and powers of two are read from and built into
 * the bits of normal doubles (the values of bndp_frexp_exp and bndp_ldexp there); floors
 * of 0 <= d < 2^52 are (d + 2^52) - 2^52, less 1 where that rounded up, and an integer
 * 0 <= x < 2^52 held in a double is the bits of x + 2^52 less those of 2^52; r is an
 * integer iff |r| >= 2^52 or (|r| + 2^52) - 2^52 == |r|. slow[k] = 1 marks the other rows
 * (their outputs are then meaningless). */
static BNDP_CLONES void bndp_gw_rows_fast(const double *BNDP_RESTRICT lo,
                                          const double *BNDP_RESTRICT hi,
                                          const double *BNDP_RESTRICT q, ptrdiff_t m,
                                          double base0, double dq, double ws, double ss,
                                          int64_t maxrow, int64_t *BNDP_RESTRICT eo,
                                          int64_t *BNDP_RESTRICT co,
                                          int64_t *BNDP_RESTRICT no, int64_t *BNDP_RESTRICT io,
                                          int64_t *BNDP_RESTRICT slow)
{
    const double two52 = 4503599627370496.0;
    const uint64_t b52 = 0x4330000000000000ULL;
    const double top = 2.0 * (double)maxrow;
    const int64_t ef0 = (int64_t)((bndp_bits(base0) >> 52) & 0x7ff);
    for (ptrdiff_t k = 0; k < m; k++) {
        double l = lo[k], h = hi[k], w = h - l, r, mm, al = fabs(l), ah = fabs(h), x,
               ar, ir, z, zl, d, bb, err, fd, fr, nd, fi;
        int64_t ef, e, efm, eu, emax, bad, integer;
        r = w / ws;
        /* the exponent of base = min(base0, r): the smaller exponent (r > 0) */
        ef = (int64_t)((bndp_bits(r) >> 52) & 0x7ff);
        ef = ef < ef0 ? ef : ef0;
        bad = !(r > 0.0) | (ef < 1) | (ef > 2045);
        e = ef - 1023;                                   /* frexp_exp(base) - 1 */
        x = dq < w ? dq : w;
        r = x * bndp_from_bits((uint64_t)(1023 - e) << 52);
        ar = fabs(r);
        ir = (ar + two52) - two52;
        integer = (ar >= two52) | (ir == ar);
        bad |= !(integer | !(r < ss));
        mm = al > ah ? al : ah;
        bad |= !(mm > 1e-300) | !(mm <= 1.7976931348623157e308);
        efm = (int64_t)((bndp_bits(mm) >> 52) & 0x7ff);
        eu = efm - 1022 - 53;
        emax = eu > e ? eu : e;
        r = l * bndp_from_bits((uint64_t)(1023 - emax) << 52);
        ar = fabs(r);
        ir = (ar + two52) - two52;
        integer = (ar >= two52) | (ir == ar);
        eu += !integer;
        co[k] = eu > e;
        e = eu > e ? eu : e;
        eo[k] = e;
        bad |= (e < -1022) | (e > 1000);
        ir = bndp_from_bits((uint64_t)(1023 - e) << 52);  /* 2^-e */
        z = h * ir;
        zl = l * ir;
        d = z - zl;
        bb = d - z;
        err = (z - (d - bb)) + (-zl - bb);
        bad |= !(d >= 0.0) | !(d < top);
        fd = (d + two52) - two52;
        fd = fd > d ? fd - 1.0 : fd;
        fr = d - fd;
        nd = fd - (fr < -err ? 1.0 : 0.0);
        bad |= !(nd >= 0.0);
        no[k] = (int64_t)(bndp_bits(nd + two52) - b52);
        fi = bndp_gw_index_one(q[k], l, h, ir, nd);
        fi = nd >= 1.0 ? fi : 0.0;
        io[k] = (int64_t)(bndp_bits(fi + two52) - b52);
        slow[k] = bad;
    }
}

/* The per-row grid pass (gw_rows_grid): for each row [lo[a], hi[a]] the granularity
 * exponent e (gamma = 2^e <= min(a0, dq, width / ws) with a0 = dq / target / scale_steps,
 * refined at most 8 times until min(dq, width) / gamma is an integer or >= ss, coarsened to
 * 2 ulp of the larger bound, or 1 ulp when lo is then on the grid), the coarse flag, the
 * interval count n (0 where e is outside [-1022, 1000]) and, when q is not NULL, the grid
 * index of q[a] in its row (0 where n < 1). nmx[e + 1022] keeps the largest n of each
 * exponent (callers initialise it to -2). The same IEEE operations as
 * window.grid_exponent, row by row: bndp_gw_rows_fast for a block of rows, then
 * bndp_gw_row_grid for the rows it leaves (a block that leaves none, all of one exponent,
 * is summarised at once). agg receives the smallest and largest e,
 * whether any row is coarse (0 or 1) and the smallest n (m >= 1). */
static void bndp_gw_rows_grid(const double *BNDP_RESTRICT lo, const double *BNDP_RESTRICT hi,
                              const double *BNDP_RESTRICT q, ptrdiff_t m, double a0,
                              double dq, double ws, double ss, int64_t maxrow,
                              int64_t *BNDP_RESTRICT eo, unsigned char *BNDP_RESTRICT co,
                              int64_t *BNDP_RESTRICT no, int64_t *BNDP_RESTRICT io,
                              int64_t *BNDP_RESTRICT nmx, int64_t *BNDP_RESTRICT agg)
{
    double base0 = a0 < dq ? a0 : dq;
    int64_t ib[BNDP_GW_ROWS_BLOCK], cb[BNDP_GW_ROWS_BLOCK], slow[BNDP_GW_ROWS_BLOCK];
    int64_t emin = INT64_MAX, emax = INT64_MIN, anyc = 0, nmin = INT64_MAX;
    for (ptrdiff_t s = 0; s < m; s += BNDP_GW_ROWS_BLOCK) {
        ptrdiff_t c = m - s < BNDP_GW_ROWS_BLOCK ? m - s : BNDP_GW_ROWS_BLOCK;
        int64_t *ip = io ? io + s : ib;
        const double *qp = q ? q + s : lo + s;
        bndp_gw_rows_fast(lo + s, hi + s, qp, c, base0, dq, ws, ss, maxrow, eo + s, cb,
                          no + s, ip, slow);
        {
            /* a block of fast rows of one exponent (the usual case): its summary at once */
            int64_t bs = 0, be0 = INT64_MAX, be1 = INT64_MIN, bn0 = INT64_MAX, bn1 = INT64_MIN,
                    bc = 0;
            for (ptrdiff_t k = 0; k < c; k++) {
                int64_t ek = eo[s + k], nk = no[s + k];
                co[s + k] = (unsigned char)cb[k];
                bs |= slow[k];
                bc |= cb[k];
                be0 = ek < be0 ? ek : be0;
                be1 = ek > be1 ? ek : be1;
                bn0 = nk < bn0 ? nk : bn0;
                bn1 = nk > bn1 ? nk : bn1;
            }
            if (!bs && be0 == be1) {
                if (bn1 > nmx[be0 + 1022])
                    nmx[be0 + 1022] = bn1;
                emin = be0 < emin ? be0 : emin;
                emax = be0 > emax ? be0 : emax;
                anyc |= bc;
                nmin = bn0 < nmin ? bn0 : nmin;
                continue;
            }
        }
        for (ptrdiff_t k = 0; k < c; k++) {      /* co[] already holds the fast flags */
            int64_t e;
            if (slow[k])
                bndp_gw_row_grid(lo[s + k], hi[s + k], qp[k], base0, dq, ws, ss, maxrow,
                                 eo + s + k, co + s + k, no + s + k, ip + k);
            e = eo[s + k];
            if (e >= -1022 && e <= 1000 && no[s + k] > nmx[e + 1022])
                nmx[e + 1022] = no[s + k];
            emin = e < emin ? e : emin;
            emax = e > emax ? e : emax;
            anyc |= co[s + k];
            nmin = no[s + k] < nmin ? no[s + k] : nmin;
        }
    }
    agg[0] = emin;
    agg[1] = emax;
    agg[2] = anyc;
    agg[3] = nmin;
}

/* Per-row checks of a release, one branch-free pass each (the validation's fast path):
 * bndp_rows_bounds_ok is 1 iff every row has -inf < lo < hi < inf (so both finite; NaN
 * fails a comparison), bndp_rows_inside 1 iff every row has -inf < lo <= q <= hi < inf
 * (and lo < hi where strict). */
static BNDP_CLONES int bndp_rows_bounds_ok(const double *BNDP_RESTRICT lo,
                                           const double *BNDP_RESTRICT hi, ptrdiff_t m)
{
    const double inf = HUGE_VAL;
    int ok = 1;
    for (ptrdiff_t k = 0; k < m; k++)
        ok &= (lo[k] > -inf) & (lo[k] < hi[k]) & (hi[k] < inf);
    return ok;
}

static BNDP_CLONES int bndp_rows_inside(const double *BNDP_RESTRICT q,
                                        const double *BNDP_RESTRICT lo,
                                        const double *BNDP_RESTRICT hi, ptrdiff_t m,
                                        int strict)
{
    /* strict: also lo < hi (both checks of a per-row release at once) */
    const double inf = HUGE_VAL;
    int ok = 1;
    for (ptrdiff_t k = 0; k < m; k++)
        ok &= (lo[k] > -inf) & (lo[k] <= q[k]) & (q[k] <= hi[k]) & (hi[k] < inf)
              & ((lo[k] < hi[k]) | !strict);
    return ok;
}

/* 1 iff some row has hi[k] - lo[k] >= w (the rounded difference; a NaN is not), 0 if none:
 * blocks of 256 rows compared elementwise, stopping after the first block that has one. */
static BNDP_CLONES int bndp_any_width(const double *BNDP_RESTRICT lo,
                                      const double *BNDP_RESTRICT hi, ptrdiff_t m, double w)
{
    ptrdiff_t k = 0, j;
    int any = 0;
    for (; k + 256 <= m; k += 256) {
        for (j = 0; j < 256; j++)
            any |= (hi[k + j] - lo[k + j]) >= w;
        if (any)
            return 1;
    }
    for (; k < m; k++)
        any |= (hi[k] - lo[k]) >= w;
    return any;
}

#endif /* BNDP_WINDOW_H */
