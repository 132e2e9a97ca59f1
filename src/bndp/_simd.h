/*
 * Branch-free loops of bndp's compiled core, written so that the compiler vectorises them.
 *
 * On x86-64 ELF targets (Linux wheels) each loop is compiled three times, for AVX-512,
 * AVX2 and the baseline instruction set, and the loader picks the widest one the CPU runs
 * (GCC/Clang `target_clones`). Elsewhere the baseline loop is used. The extension is built
 * with -ffp-contract=off, so no clone fuses a multiply and an add: every clone performs the
 * same IEEE operations in the same order and returns bit-identical results, and a seed
 * gives the same draws on every CPU.
 *
 * Reference: M. J. Wichura, Algorithm AS 241: The Percentage Points of the Normal
 * Distribution. Applied Statistics 37(3), 477-484, 1988 (first rational approximation).
 */
#ifndef BNDP_SIMD_H
#define BNDP_SIMD_H

#include <math.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

/* BNDP_NO_CLONES: compile each loop once, for the instruction set the compiler is given
 * (tests/test_special.py builds the loops that way to compare instruction sets) */
#if !defined(BNDP_NO_CLONES) && defined(__x86_64__) && defined(__ELF__) && defined(__GNUC__) \
    && defined(__has_attribute)
#  if __has_attribute(target_clones)
#    define BNDP_CLONES __attribute__((target_clones("avx512f", "avx2", "default")))
#  endif
#endif
#ifndef BNDP_CLONES
#  define BNDP_CLONES
#else
   /* with the clones, a few data-movement steps also have a hand-written AVX-512 version,
    * picked at run time (bndp_avx512 below); they move values and compute nothing */
#  define BNDP_X86_DISPATCH 1
#  include <immintrin.h>
#endif
#if defined(_MSC_VER)
#  define BNDP_RESTRICT __restrict
#else
#  define BNDP_RESTRICT restrict
#endif

/* Phi^-1(1/2 + q) for |q| <= 0.425: AS 241's first rational approximation, both degree-7
 * polynomials in r = 0.180625 - q^2 by Estrin's scheme (short dependency chains; tested
 * against mpmath to a few ulps in tests/test_special.py). */
static inline double bndp_ppnd_central(double q)
{
    double r = 0.180625 - q * q;
    double r2 = r * r;
    double r4 = r2 * r2;
    double num = ((3.3871328727963666080e+0 + 1.3314166789178437745e+2 * r)
                  + (1.9715909503065514427e+3 + 1.3731693765509461125e+4 * r) * r2
                  + ((4.5921953931549871457e+4 + 6.7265770927008700853e+4 * r)
                     + (3.3430575583588128105e+4 + 2.5090809287301226727e+3 * r) * r2) * r4);
    double den = ((1.0 + 4.2313330701600911252e+1 * r)
                  + (6.8718700749205790830e+2 + 5.3941960214247511077e+3 * r) * r2
                  + ((2.1213794301586595867e+4 + 3.9307895800092710610e+4 * r)
                     + (2.8729085735721942674e+4 + 5.2264952788528545610e+3 * r) * r2) * r4);
    return q * num / den;
}

/* -Phi^-1(t) for a tail mass t <= 0.075 given r = sqrt(-log t), 1.6 <= r <= ~27.2 (AS 241,
 * second and third rational approximations; positive result). Both are evaluated and one
 * is selected, so that a loop over this function has no branch. */
static inline double bndp_ppnd_tail_r(double r)
{
    /* both numerator/denominator pairs by Estrin's scheme; the selected pair is divided */
    double a = r - 1.6, a2 = a * a, a4 = a2 * a2;
    double b = r - 5.0, b2 = b * b, b4 = b2 * b2;
    double na = ((1.42343711074968357734e+0 + 4.63033784615654529590e+0 * a)
                 + (5.76949722146069140550e+0 + 3.64784832476320460504e+0 * a) * a2)
                + ((1.27045825245236838258e+0 + 2.41780725177450611770e-1 * a)
                   + (2.27238449892691845833e-2 + 7.74545014278341407640e-4 * a) * a2) * a4;
    double da = ((1.0 + 2.05319162663775882187e+0 * a)
                 + (1.67638483018380384940e+0 + 6.89767334985100004550e-1 * a) * a2)
                + ((1.48103976427480074590e-1 + 1.51986665636164571966e-2 * a)
                   + (5.47593808499534494600e-4 + 1.05075007164441684324e-9 * a) * a2) * a4;
    double nb = ((6.65790464350110377720e+0 + 5.46378491116411436990e+0 * b)
                 + (1.78482653991729133580e+0 + 2.96560571828504891230e-1 * b) * b2)
                + ((2.65321895265761230930e-2 + 1.24266094738807843860e-3 * b)
                   + (2.71155556874348757815e-5 + 2.01033439929228813265e-7 * b) * b2) * b4;
    double db = ((1.0 + 5.99832206555887937690e-1 * b)
                 + (1.36929880922735805310e-1 + 1.48753612908506148525e-2 * b) * b2)
                + ((7.86869131145613259100e-4 + 1.84631831751005468180e-5 * b)
                   + (1.42151175831644588870e-7 + 2.04426310338993978564e-15 * b) * b2) * b4;
    int first = r <= 5.0;
    return (first ? na : nb) / (first ? da : db);
}

static inline uint64_t bndp_bits(double x) { uint64_t b; memcpy(&b, &x, 8); return b; }
static inline double bndp_double(uint64_t b) { double x; memcpy(&x, &b, 8); return x; }

/* Natural logarithm of a positive normal finite x, branch-free (vectorisable) and accurate to
 * about one ulp (within 1.5, tested against mpmath in tests/test_special.py; the truncated
 * normal's tail and the windowed certificate, _certify.h, take it). Zero, subnormals, inf and
 * NaN give meaningless values: the callers never pass them where the value is used.
 * x = 2^k m with m in [sqrt(1/2), sqrt(2)); with f = m - 1 (exact) and s = f / (2 + f),
 * log m = 2 atanh s = f - s (f - T), T = sum_{j=1..10} 2 s^(2j) / (2j + 1) (the atanh series;
 * |s| <= 0.1716, so the first omitted term is below 2^-60 relative), and
 * log x = k ln2_hi + (log m + k ln2_lo), ln2_hi having 32 significant bits (k ln2_hi exact). */
static inline double bndp_log(double x)
{
    const uint64_t off = 0x3fe6a09e667f3bcdULL;           /* bits of sqrt(1/2) */
    uint64_t ix = bndp_bits(x);
    uint64_t top = (ix - off) >> 52;                       /* k mod 2^12 */
    double m = bndp_double(ix - (top << 52));              /* x / 2^k */
    /* k as a double without a 64-bit integer conversion: 2^52 + j is exact for
     * 0 <= j < 2^52, and j = (k + 2048) mod 2^12 = k + 2048 for |k| <= 1024 */
    double k = bndp_double(0x4330000000000000ULL | ((top + 2048) & 0xfffULL))
               - 4503599627372544.0;                       /* 2^52 + 2048 */
    double f = m - 1.0;
    double s = f / (2.0 + f);
    double w = s * s, w2 = w * w, w4 = w2 * w2, w8 = w4 * w4;
    double t = w * (((6.6666666666666666667e-1 + 4.0000000000000000000e-1 * w)
                     + (2.8571428571428571429e-1 + 2.2222222222222222222e-1 * w) * w2)
                    + ((1.8181818181818181818e-1 + 1.5384615384615384615e-1 * w)
                       + (1.3333333333333333333e-1 + 1.1764705882352941176e-1 * w) * w2) * w4
                    + (1.0526315789473684211e-1 + 9.5238095238095238095e-2 * w) * w8);
    return k * 6.9314718036912381649e-1 + ((f - s * (f - t)) + k * 1.9082149292705877000e-10);
}

/* The reduction shared by exp and expm1 on x <= 0: x = k ln2 + r with k = round(x / ln2)
 * (the 1.5 * 2^52 shift rounds, and the low bits of the shifted value are k), |r| <= ln2/2
 * + tiny; k ln2_hi is exact (ln2_hi has 32 significant bits, |k| <= 1022) and so is
 * x - k ln2_hi. Returns e^r - 1 = r + r^2 P(r), P the Taylor series of (e^r - 1 - r)/r^2 to
 * r^11 (the first omitted term is below 5e-18 relative), and sets *two = 2^k, built in the
 * exponent field. Inline: callers' loops vectorise through it. */
static inline double bndp_exp_reduced(double x, double *two)
{
    const double shift = 6755399441055744.0;              /* 1.5 * 2^52 */
    double t = x * 1.4426950408889634074 + shift;
    double kd = t - shift;
    uint64_t k = bndp_bits(t) - bndp_bits(shift);          /* k mod 2^64 */
    double r = (x - kd * 6.93147180369123816490e-01) - kd * 1.90821492927058770002e-10;
    double r2 = r * r, r4 = r2 * r2, r8 = r4 * r4;
    double p = ((5.0000000000000000000e-01 + 1.6666666666666666667e-01 * r)
                + (4.1666666666666666667e-02 + 8.3333333333333333333e-03 * r) * r2)
             + ((1.3888888888888888889e-03 + 1.9841269841269841270e-04 * r)
                + (2.4801587301587301587e-05 + 2.7557319223985890653e-06 * r) * r2) * r4
             + ((2.7557319223985890653e-07 + 2.5052108385441718775e-08 * r)
                + (2.0876756987868098979e-09 + 1.6059043836821614599e-10 * r) * r2) * r8;
    *two = bndp_double((k + 1023) << 52);
    return r + r2 * p;
}

/* exp(x) for -708 <= x <= 0, branch-free, to about 0.6 ulp (tests/test_special.py):
 * 2^k (1 + (e^r - 1)) with the reduction of bndp_exp_reduced. Outside [-708, 0] the result
 * is meaningless (callers never pass such an x where the value is used). */
static inline double bndp_exp_nonpos(double x)
{
    double two;
    double em1 = bndp_exp_reduced(x, &two);
    return (1.0 + em1) * two;
}

/* The standard normal mass on each side of y >= 0, branch-free, both to full relative
 * precision: *mass0 = Phi(y) - 1/2 and *tail = Phi(-y) (a few ulps against mpmath,
 * tests/test_special.py). The rational approximations are W. J. Cody's (ACM TOMS Algorithm
 * 715, function ANORM; from Cody, Math. Comp. 23, 1969):
 *   y <= 0.66291:          Phi(y) - 1/2 = y N1(y^2) / D1(y^2), and tail = 1/2 - mass0;
 *   0.66291 < y <= sqrt 32: Phi(-y) = e^(-y^2/2) N2(y) / D2(y),  and mass0 = 1/2 - tail;
 *   y > sqrt 32:           Phi(-y) = e^(-y^2/2) (1/sqrt(2 pi) - w N3(w)/D3(w)) / y, w = 1/y^2
 *                          (evaluated as polynomials in y^2 multiplied through by y^10).
 * (The subtractions from 1/2 lose nothing: the other side is below 0.255 of 1/2.) All three
 * are evaluated and the selected numerator/denominator pair divided once. e^(-y^2/2) is
 * taken at the rounded square s = fl(y^2) and corrected by the rounding error e = y^2 - s,
 * exact by Dekker's product: e^(-y^2/2) = e^(-s/2) (1 - e/2) (|e| < 2^-43 here).
 * y > 37 (tail below 6e-300; infinity included) gives mass0 = 1/2 and tail = 0: the
 * sampler's straddle quantile adds such a tail to at least 2^-54, where it cannot change a
 * bit; bndp's scalar setup uses erfc there instead. y < 0 gives meaningless values (the
 * setup pass computes them for rows in one tail and discards them). */
/* the three ranges' numerators and denominators (shared by both versions below, so that
 * they return the same bits) */
static inline void bndp_phi_r1(double y, double s, double s2, double s4, double *num, double *den)
{
    *num = y * ((1.8154981253343561249e+04 + 1.0676894854603709582e+03 * s)
                + (1.6102823106855587881e+02 + 2.2352520354606839287e+00 * s) * s2
                + 6.5682337918207449113e-02 * s4);
    *den = (4.5507789335026729956e+04 + 1.0260932208618978205e+04 * s)
         + (9.7609855173777669322e+02 + 4.7202581904688241870e+01 * s) * s2
         + s4;
}

static inline double bndp_phi_gauss(double y, double s)
{
    /* e^(-y^2/2) with y^2 = s + e exactly (Dekker's product; y = yh + yl, 26 bits each) */
    double c = 134217729.0 * y, yh = c - (c - y), yl = y - yh;
    double e = ((yh * yh - s) + 2.0 * yh * yl) + yl * yl;
    double g = bndp_exp_nonpos(-0.5 * s);
    return g - g * (0.5 * e);
}

static inline void bndp_phi_r2(double y, double s, double s2, double s4, double E, double *num,
                               double *den)
{
    *num = E * (((9.8427148383839780218e+03 + 1.1602651437647350124e+04 * y)
                 + (6.8481904505362823326e+03 + 2.4945375852903726711e+03 * y) * s)
                + ((5.9727027639480026226e+02 + 9.3506656132177855979e+01 * y)
                   + (8.8831497943883759412e+00 + 3.9894151208813466764e-01 * y) * s) * s2
                + 1.0765576773720192317e-08 * s4);
    *den = ((1.9685429676859990727e+04 + 3.8912003286093271411e+04 * y)
            + (3.4900952721145977266e+04 + 1.8615571640885098091e+04 * y) * s)
         + ((6.4855582982667607550e+03 + 1.5193775994075548050e+03 * y)
            + (2.3538790178262499861e+02 + 2.2266688044328115691e+01 * y) * s) * s2
         + s4;
}

static inline void bndp_phi_r3(double y, double s, double s2, double s4, double E, double *num,
                               double *den)
{
    /* n3, d3 multiplied through by s^5, so that w N3(w)/D3(w) = m3 / (s d3) */
    double m3 = (2.307344176494017303e-02 + 2.1589853405795699e-01 * s)
              + (1.274011611602473639e-01 + 2.2235277870649807e-02 * s) * s2
              + (1.421619193227893466e-03 + 2.9112874951168792e-05 * s) * s4;
    double d3 = (1.0 + 1.28426009614491121e+00 * s)
              + (4.68238212480865118e-01 + 6.59881378689285515e-02 * s) * s2
              + (3.78239633202758244e-03 + 7.29751555083966205e-05 * s) * s4;
    *num = E * ((3.9894228040143267794e-01 * s) * d3 - m3);
    *den = (y * s) * d3;
}

/* branch-free: all three evaluated, the selected pair divided once (for vectorised loops) */
static inline void bndp_phi_split(double z, double *mass0, double *tail)
{
    double y = z < 37.0 ? z : 37.0;
    double s = y * y, s2 = s * s, s4 = s2 * s2;
    double E = bndp_phi_gauss(y, s);
    double n1, d1, n2, d2, n3, d3;
    bndp_phi_r1(y, s, s2, s4, &n1, &d1);
    bndp_phi_r2(y, s, s2, s4, E, &n2, &d2);
    bndp_phi_r3(y, s, s2, s4, E, &n3, &d3);
    int r1 = y <= 0.66291, r2 = y <= 5.656854248;
    double q = (r1 ? n1 : r2 ? n2 : n3) / (r1 ? d1 : r2 ? d2 : d3);
    *mass0 = r1 ? q : 0.5 - q;
    *tail = r1 ? 0.5 - q : (z <= 37.0 ? q : 0.0);
}

/* the same values with branches, evaluating only the range needed (for scalar code) */
static inline void bndp_phi_split_branchy(double z, double *mass0, double *tail)
{
    double y = z < 37.0 ? z : 37.0;
    double s = y * y, s2 = s * s, s4 = s2 * s2, num, den;
    if (y <= 0.66291) {
        bndp_phi_r1(y, s, s2, s4, &num, &den);
        *mass0 = num / den;
        *tail = 0.5 - *mass0;
        return;
    }
    if (y <= 5.656854248)
        bndp_phi_r2(y, s, s2, s4, bndp_phi_gauss(y, s), &num, &den);
    else
        bndp_phi_r3(y, s, s2, s4, bndp_phi_gauss(y, s), &num, &den);
    *tail = num / den;
    *mass0 = 0.5 - *tail;
    if (!(z <= 37.0))
        *tail = 0.0;
}

/* The truncated-normal quantile for a row that straddles its parent median (a <= 0 <= b),
 * standardised, at probability u in (0, 1). mL = Phi(0) - Phi(a), Z = Phi(b) - Phi(a),
 * tlo = Phi(a), thi = Phi(-b). With s = u Z - mL the draw is Phi^-1(1/2 + s): the central
 * branch of AS 241 for |s| <= 0.425, otherwise its tail branch on the tail mass, written as a
 * sum of non-negative terms (tlo + u Z on the left, thi + (1 - u) Z on the right) so that it
 * never cancels. That mass is at least (1 - u) Z >= 2^-53 * 0.425 there: log is used far from
 * its special cases. */
static inline double bndp_tn_straddle_std(double u, double Z, double mL, double tlo, double thi)
{
    double s = u * Z - mL;
    int right = s > 0.0;
    double t = right ? thi + (1.0 - u) * Z : tlo + u * Z;
    double xt = bndp_ppnd_tail_r(sqrt(-bndp_log(t)));
    double xc = bndp_ppnd_central(s);
    return fabs(s) <= 0.425 ? xc : (right ? 1.0 : -1.0) * xt;
}

/* Block size of the samplers (the callers' buffers hold this many rows). */
#define BNDP_TN_BLOCK 128

/* The per-row setup of a block, branch-free: for rows k < n, a = (lo - loc)/scale and
 * b = (hi - loc)/scale as the scalar setup forms them, then for a row that straddles
 * (a <= 0 <= b) mL = Phi(0) - Phi(a), tlo = Phi(a), thi = Phi(-b), Z = mL + Phi(b) - Phi(0)
 * from bndp_phi_split. onetail[k] = 1 marks a row in one tail: its outputs are meaningless
 * and the caller sets it up with the scalar (log-space) code. Returns the number of such
 * rows. */
static BNDP_CLONES ptrdiff_t bndp_tn_setup_pass(
    const double *BNDP_RESTRICT loc, const double *BNDP_RESTRICT scale,
    const double *BNDP_RESTRICT lo, const double *BNDP_RESTRICT hi, ptrdiff_t n,
    double *BNDP_RESTRICT Z, double *BNDP_RESTRICT mL, double *BNDP_RESTRICT tlo,
    double *BNDP_RESTRICT thi, int64_t *BNDP_RESTRICT onetail)
{
    ptrdiff_t count = 0;
    for (ptrdiff_t k = 0; k < n; k++) {
        double inv = 1.0 / scale[k];
        double a = (lo[k] - loc[k]) * inv;
        double b = (hi[k] - loc[k]) * inv;
        double ml, tl, mr, tr;
#ifdef BNDP_X86_DISPATCH
        bndp_phi_split(-a, &ml, &tl);
        bndp_phi_split(b, &mr, &tr);
#else
        /* builds without the vector clones: the branches are cheaper than three ranges */
        bndp_phi_split_branchy(-a, &ml, &tl);
        bndp_phi_split_branchy(b, &mr, &tr);
#endif
        mL[k] = ml;
        tlo[k] = tl;
        thi[k] = tr;
        Z[k] = ml + mr;
        onetail[k] = !(a <= 0.0 && b >= 0.0);
        count += onetail[k];
    }
    return count;
}

/* The branch-free part of one entry: *out = clip(loc + scale Phi^-1(1/2 + s), lo, hi) with
 * s = u Z - mL (the central branch, right where |s| <= 0.425), and for the tail branch the
 * tail mass *t, its side *sign and whether it is needed, *tail = |s| > 0.425. */
static inline void bndp_tn_central_one(double u, double Z, double mL, double tlo, double thi,
                                       double loc, double scale, double lo, double hi,
                                       double *out, double *t, double *sign, int64_t *tail)
{
    double s = u * Z - mL;
    double x = loc + scale * bndp_ppnd_central(s);
    x = x < lo ? lo : x;
    *out = x > hi ? hi : x;
    *t = s > 0.0 ? thi + (1.0 - u) * Z : tlo + u * Z;
    *sign = s > 0.0 ? 1.0 : -1.0;
    *tail = fabs(s) > 0.425;
}

/* bndp_tn_central_one over a block, per-row parameters */
static BNDP_CLONES void bndp_tn_central_pass(
    const double *BNDP_RESTRICT u, double *BNDP_RESTRICT out, ptrdiff_t n,
    const double *BNDP_RESTRICT Z, const double *BNDP_RESTRICT mL,
    const double *BNDP_RESTRICT tlo, const double *BNDP_RESTRICT thi,
    const double *BNDP_RESTRICT loc, const double *BNDP_RESTRICT scale,
    const double *BNDP_RESTRICT lo, const double *BNDP_RESTRICT hi,
    double *BNDP_RESTRICT t, double *BNDP_RESTRICT sign, int64_t *BNDP_RESTRICT tail)
{
    for (ptrdiff_t k = 0; k < n; k++)
        bndp_tn_central_one(u[k], Z[k], mL[k], tlo[k], thi[k], loc[k], scale[k], lo[k], hi[k],
                            &out[k], &t[k], &sign[k], &tail[k]);
}

/* bndp_tn_central_one over a block, one parameter set (no per-row loads) */
static BNDP_CLONES void bndp_tn_central_pass1(
    const double *BNDP_RESTRICT u, double *BNDP_RESTRICT out, ptrdiff_t n, double Z,
    double mL, double tlo, double thi, double loc, double scale, double lo, double hi,
    double *BNDP_RESTRICT t, double *BNDP_RESTRICT sign, int64_t *BNDP_RESTRICT tail)
{
    for (ptrdiff_t k = 0; k < n; k++)
        bndp_tn_central_one(u[k], Z, mL, tlo, thi, loc, scale, lo, hi, &out[k], &t[k], &sign[k],
                            &tail[k]);
}

/* x[j] = -sign[j] Phi^-1(t[j]) for tail masses t[j] <= 0.075 (positive normal numbers) and
 * signs +-1 (the multiplication is exact). */
static BNDP_CLONES void bndp_tail_pass(const double *BNDP_RESTRICT t,
                                       const double *BNDP_RESTRICT sign,
                                       double *BNDP_RESTRICT x, ptrdiff_t n)
{
    for (ptrdiff_t j = 0; j < n; j++)
        x[j] = sign[j] * bndp_ppnd_tail_r(sqrt(-bndp_log(t[j])));
}

#ifdef BNDP_X86_DISPATCH
static int bndp_avx512(void)
{
    static int have = -1;
    if (have < 0) {
        __builtin_cpu_init();
        have = __builtin_cpu_supports("avx512f") ? 1 : 0;
    }
    return have;
}

/* The packing step of bndp_tn_straddle_block with AVX-512 compresses (to a register, then a
 * whole-vector store: the buffers have 8 entries of slack). Returns the count. */
__attribute__((target("avx512f")))
static ptrdiff_t bndp_pack_avx512(const double *BNDP_RESTRICT t, const double *BNDP_RESTRICT sign,
                                  const int64_t *BNDP_RESTRICT tail, ptrdiff_t n,
                                  double *BNDP_RESTRICT tp, double *BNDP_RESTRICT sp,
                                  int64_t *BNDP_RESTRICT idx)
{
    ptrdiff_t c = 0, k = 0;
    __m512i iota = _mm512_set_epi64(7, 6, 5, 4, 3, 2, 1, 0);
    for (; k + 8 <= n; k += 8) {
        __m512i tl = _mm512_loadu_si512((const void *)(tail + k));
        __mmask8 m = _mm512_test_epi64_mask(tl, tl);
        _mm512_storeu_pd(tp + c, _mm512_maskz_compress_pd(m, _mm512_loadu_pd(t + k)));
        _mm512_storeu_pd(sp + c, _mm512_maskz_compress_pd(m, _mm512_loadu_pd(sign + k)));
        _mm512_storeu_si512((void *)(idx + c),
                            _mm512_maskz_compress_epi64(m, _mm512_add_epi64(iota, _mm512_set1_epi64(k))));
        c += __builtin_popcount((unsigned)m);
    }
    for (; k < n; k++) {
        tp[c] = t[k];
        sp[c] = sign[k];
        idx[c] = k;
        c += tail[k];
    }
    return c;
}
#endif

/* A block of n <= BNDP_TN_BLOCK truncated-normal draws from straddling rows, each equal to
 *   clip(loc[k] + scale[k] * bndp_tn_straddle_std(u[k], Z[k], mL[k], tlo[k], thi[k]),
 *        lo[k], hi[k])
 * (the same operations in the same order). The central branch runs over the whole block;
 * the tail masses of the entries in a tail (|s| > 0.425, at most 15 % of the draws) are
 * packed without a branch, sent through the tail pass together and the results put back.
 * Rows in one tail (Z = 0 here) get a meaningless value that the caller overwrites.
 * stride 1: per-row parameters; stride 0: every row has the parameters of row 0 (only row 0
 * of the parameter arrays is read). */
static void bndp_tn_straddle_block(
    const double *BNDP_RESTRICT u, double *BNDP_RESTRICT out, ptrdiff_t n,
    const double *BNDP_RESTRICT Z, const double *BNDP_RESTRICT mL,
    const double *BNDP_RESTRICT tlo, const double *BNDP_RESTRICT thi,
    const double *BNDP_RESTRICT loc, const double *BNDP_RESTRICT scale,
    const double *BNDP_RESTRICT lo, const double *BNDP_RESTRICT hi, ptrdiff_t stride)
{
    /* the packed arrays are padded to a multiple of 8 entries with a harmless mass, so that
     * the tail pass runs whole vectors only */
    double t[BNDP_TN_BLOCK], sign[BNDP_TN_BLOCK];
    double tp[BNDP_TN_BLOCK + 8], sp[BNDP_TN_BLOCK + 8], xt[BNDP_TN_BLOCK + 8];
    int64_t tail[BNDP_TN_BLOCK], idx[BNDP_TN_BLOCK + 8];
    ptrdiff_t c = 0, j;
    if (stride)
        bndp_tn_central_pass(u, out, n, Z, mL, tlo, thi, loc, scale, lo, hi, t, sign, tail);
    else
        bndp_tn_central_pass1(u, out, n, Z[0], mL[0], tlo[0], thi[0], loc[0], scale[0], lo[0],
                              hi[0], t, sign, tail);
#ifdef BNDP_X86_DISPATCH
    if (bndp_avx512())
        c = bndp_pack_avx512(t, sign, tail, n, tp, sp, idx);
    else
#endif
    for (ptrdiff_t k = 0; k < n; k++) {
        tp[c] = t[k];
        sp[c] = sign[k];
        idx[c] = k;
        c += tail[k];
    }
    for (j = c; j < ((c + 7) & ~(ptrdiff_t)7); j++) {
        tp[j] = 0.05;
        sp[j] = 1.0;
    }
    bndp_tail_pass(tp, sp, xt, j);
    for (j = 0; j < c; j++) {
        ptrdiff_t k = (ptrdiff_t)idx[j], r = k * stride;
        double x = loc[r] + scale[r] * xt[j];
        x = x < lo[r] ? lo[r] : x;
        out[k] = x > hi[r] ? hi[r] : x;
    }
}

/* ---------------------------------------------------------------------------------------
 * Bounded Laplace [HABM20]: Laplace(q, b) restricted to [lo, hi] (one end may be infinite),
 * by the closed-form inverse CDF. Per row: mL = -expm1(-(q - lo)/b)/2 (the parent mass
 * between lo and q) and C = mL - expm1(-(hi - q)/b)/2 (the mass of [lo, hi]). Per draw, with
 * s = u C - mL: x = clip(q + sign(s) b log(1 - 2|s|), lo, hi). The scalar setup and draw of
 * the core use these same functions, so the block loops give the scalar path's bits.
 * --------------------------------------------------------------------------------------- */

/* expm1(x) for x <= 0 (-inf included), branch-free, to about 1 ulp (tests/test_special.py).
 * Below -60 the result rounds to -1 (e^-60 < 2^-86), so x is clamped there (then
 * -87 <= k <= 0). With the reduction of bndp_exp_reduced, e^r - 1 keeps full relative
 * precision (for |x| <= ln2/2, k = 0 and r = x exactly), and
 * expm1(x) = 2^k (e^r - 1) + (2^k - 1): for k < 0 both terms are exact scalings/differences
 * and |result| >= 0.29, one rounding. */
static inline double bndp_expm1_nonpos(double x)
{
    double two;
    double em1 = bndp_exp_reduced(x < -60.0 ? -60.0 : x, &two);
    return two * em1 + (two - 1.0);
}

/* log(1 - 2t) for 0 <= t <= 1/2, branch-free; keeps full relative precision for tiny t (as
 * log1p(-2t) does). y = fl(1 - 2t) and its rounding error e = (1 - 2t) - y are formed exactly
 * (Fast2Sum; 2t is exact), and log(1 - 2t) = log(y) + log1p(e/y), where |e/y| <= 2^-53 and
 * e/y is taken as e (2 - y) (relative error (1 - y)^2 <= 1/4 in a term below half an ulp).
 * y = 0 (t = 1/2; never for the sampler's uniforms, which keep y >= 2^-54) is raised to the
 * smallest normal number, so the result is finite (about -708). */
static inline double bndp_log1m2t(double t)
{
    double t2 = 2.0 * t;
    double y = 1.0 - t2;
    double e = (-t2) - (y - 1.0);
    y = y < 2.2250738585072014e-308 ? 2.2250738585072014e-308 : y;
    return bndp_log(y) + e * (2.0 - y);
}

/* the setup of one row: mL and C (see above) */
static inline void bndp_bl_setup_one(double q, double b, double lo, double hi, double *mL,
                                     double *C)
{
    double ml = -0.5 * bndp_expm1_nonpos(-((q - lo) / b));
    *mL = ml;
    *C = ml - 0.5 * bndp_expm1_nonpos(-((hi - q) / b));
}

/* one draw at probability u in (0, 1) (also the quantile function) */
static inline double bndp_bl_draw(double u, double q, double b, double lo, double hi, double mL,
                                  double C)
{
    double s = u * C - mL;
    double x = q + copysign(b * bndp_log1m2t(fabs(s)), s);
    x = x < lo ? lo : x;
    return x > hi ? hi : x;
}

/* bndp_bl_setup_one over a block of n rows */
static BNDP_CLONES void bndp_bl_setup_pass(
    const double *BNDP_RESTRICT q, const double *BNDP_RESTRICT b,
    const double *BNDP_RESTRICT lo, const double *BNDP_RESTRICT hi, ptrdiff_t n,
    double *BNDP_RESTRICT mL, double *BNDP_RESTRICT C)
{
    for (ptrdiff_t k = 0; k < n; k++)
        bndp_bl_setup_one(q[k], b[k], lo[k], hi[k], &mL[k], &C[k]);
}

/* the same with one scale and one pair of bounds for every row (per-row true values) */
static BNDP_CLONES void bndp_bl_setup_pass_q(
    const double *BNDP_RESTRICT q, double b, double lo, double hi, ptrdiff_t n,
    double *BNDP_RESTRICT mL, double *BNDP_RESTRICT C)
{
    for (ptrdiff_t k = 0; k < n; k++)
        bndp_bl_setup_one(q[k], b, lo, hi, &mL[k], &C[k]);
}

/* bndp_bl_draw over a block: per-row parameters */
static BNDP_CLONES void bndp_bl_draw_pass(
    const double *BNDP_RESTRICT u, double *BNDP_RESTRICT out, ptrdiff_t n,
    const double *BNDP_RESTRICT q, const double *BNDP_RESTRICT b,
    const double *BNDP_RESTRICT lo, const double *BNDP_RESTRICT hi,
    const double *BNDP_RESTRICT mL, const double *BNDP_RESTRICT C)
{
    for (ptrdiff_t k = 0; k < n; k++)
        out[k] = bndp_bl_draw(u[k], q[k], b[k], lo[k], hi[k], mL[k], C[k]);
}

/* per-row true values, one scale and one pair of bounds */
static BNDP_CLONES void bndp_bl_draw_pass_q(
    const double *BNDP_RESTRICT u, double *BNDP_RESTRICT out, ptrdiff_t n,
    const double *BNDP_RESTRICT q, double b, double lo, double hi,
    const double *BNDP_RESTRICT mL, const double *BNDP_RESTRICT C)
{
    for (ptrdiff_t k = 0; k < n; k++)
        out[k] = bndp_bl_draw(u[k], q[k], b, lo, hi, mL[k], C[k]);
}

/* one parameter set for every draw */
static BNDP_CLONES void bndp_bl_draw_pass1(
    const double *BNDP_RESTRICT u, double *BNDP_RESTRICT out, ptrdiff_t n, double q, double b,
    double lo, double hi, double mL, double C)
{
    for (ptrdiff_t k = 0; k < n; k++)
        out[k] = bndp_bl_draw(u[k], q, b, lo, hi, mL, C);
}


/* ---------------------------------------------------------------------------------------
 * Grid law (_core/grid.pyx): the grid indices of a block of clipped true values, the same
 * integers as bndp_gd_index there (round q 2^-e to the nearest integer, ties up, clip to
 * [kl, kl + n], subtract kl; lo = kl and hi = kl + n as doubles, |lo|, |hi| < 2^53), by
 * operations that vectorise: floor is taken without an integer conversion (below 2^52 in
 * magnitude, (z + c) - c with c = +-2^52 rounds z to an integer exactly; larger values are
 * integers already) and the result j = k - lo, in [0, n], n < 2^31, is converted to int32.
 * Every step is exact and every choice a select, so every clone gives the same integers, and
 * none of them branches on q. NaN (never passed by the samplers) gives 0, as the scalar does.
 * --------------------------------------------------------------------------------------- */
static inline int32_t bndp_gd_index_one(double q, double inv_gamma, double lo, double hi)
{
    const double two52 = 4503599627370496.0;
    double z = q * inv_gamma, c, r, f, k;
    z = z < lo - 1.0 ? lo - 1.0 : z;
    z = z > hi + 1.0 ? hi + 1.0 : z;
    c = copysign(two52, z);
    r = (z + c) - c;                                  /* an integer within 1/2 of z */
    r = fabs(z) >= two52 ? z : r;
    f = r - (r > z ? 1.0 : 0.0);                      /* floor(z) */
    k = f + ((z - f) >= 0.5 ? 1.0 : 0.0);
    k = k >= lo ? k : lo;                             /* NaN gives lo */
    k = k > hi ? hi : k;
    return (int32_t)(k - lo);
}

/* bndp_gd_index_one over m contiguous values */
static BNDP_CLONES void bndp_gd_index_pass(const double *BNDP_RESTRICT q, ptrdiff_t m,
                                           double inv_gamma, double lo, double hi,
                                           int32_t *BNDP_RESTRICT j)
{
    for (ptrdiff_t k = 0; k < m; k++)
        j[k] = bndp_gd_index_one(q[k], inv_gamma, lo, hi);
}


/* The released values of a block of grid draws: out[r] = (kl + j) 2^e for the output index
 * j = pos[r] - n + idx[r] in [0, n] (n < 2^31), formed as the double kl + j (exact: both are
 * integers below 2^53; j is converted through the bits of 2^52 + j, which vectorises without
 * a 64-bit integer conversion), times gamma = 2^e (exact). */
static BNDP_CLONES void bndp_gd_out_pass(const int64_t *BNDP_RESTRICT pos,
                                         const int32_t *BNDP_RESTRICT idx, ptrdiff_t m,
                                         int64_t n, double kl, double gamma,
                                         double *BNDP_RESTRICT out)
{
    const double two52 = 4503599627370496.0;
    for (ptrdiff_t k = 0; k < m; k++) {
        uint64_t j = (uint64_t)(pos[k] - n + (int64_t)idx[k]);
        double jd = bndp_double(bndp_bits(two52) | j) - two52;
        out[k] = (kl + jd) * gamma;
    }
}

/* The middle of one EM step of one row (bndp._core.estimate): f <- max(f, 1e-300) (a NaN
 * also becomes 1e-300) and then f <- p / f; returns sum_b p_b log f_b over the bins with
 * p_b != 0 (bndp_log: the values are positive normal numbers, bin masses of at most 1 plus
 * rounding), summed in four interleaved parts (b mod 4) added at the end. Branch-free:
 * vectorised. */
static BNDP_CLONES double bndp_em_ratio_pass(const double *BNDP_RESTRICT p,
                                             double *BNDP_RESTRICT f, ptrdiff_t n)
{
    double acc[4] = {0.0, 0.0, 0.0, 0.0};
    ptrdiff_t b = 0;
    for (; b + 4 <= n; b += 4) {
        for (int j = 0; j < 4; j++) {
            double x = f[b + j] >= 1e-300 ? f[b + j] : 1e-300;
            double t = p[b + j] * bndp_log(x);
            acc[j] += p[b + j] != 0.0 ? t : 0.0;
            f[b + j] = p[b + j] / x;
        }
    }
    for (int j = 0; b < n; b++, j++) {
        double x = f[b] >= 1e-300 ? f[b] : 1e-300;
        double t = p[b] * bndp_log(x);
        acc[j] += p[b] != 0.0 ? t : 0.0;
        f[b] = p[b] / x;
    }
    return (acc[0] + acc[1]) + (acc[2] + acc[3]);
}

#endif /* BNDP_SIMD_H */
