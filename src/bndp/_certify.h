/* The loops of the windowed certificate on a row of n intervals (_gw_cert_narrow in
 * _core/certify_rows.pyx; the certificate and its proof are in docs/grid_laws.rst), written
 * without branches that depend on the data so that the compiler vectorises them (target
 * clones as in _simd.h). Each performs the IEEE operations of the certificate's definition
 * in the same order (the build contracts no expression), so every clone gives the same
 * doubles; the logarithm is bndp_log (_simd.h). */
#ifndef BNDP_CERTIFY_H
#define BNDP_CERTIFY_H

#include <math.h>
#include <stddef.h>
#include <stdint.h>
#include "_simd.h"

/* the nearest double to an unsigned 64-bit integer: its high 12 and low 52 bits are exact
 * doubles (2^52 + j is exact for j < 2^52), so the sum rounds once, as a conversion does */
static inline double bndp_u64_double(uint64_t x)
{
    double h = bndp_double(0x4330000000000000ULL | (x >> 52)) - 4503599627370496.0;
    double l = bndp_double(0x4330000000000000ULL | (x & 0xfffffffffffffULL))
               - 4503599627370496.0;
    return h * 4503599627370496.0 + l;
}

/* One stretch k0 <= k < k1 of bndp_gw_cert_norms on which the table's indices a(k) and b(k)
 * move by -sa and -sb per step (0 or 1, constants where it is inlined: contiguous loads):
 * ca = cum + a(k0), cb = cum + b(k0). */
static inline void bndp_gw_norms_run(const uint64_t *BNDP_RESTRICT ca,
                                     const uint64_t *BNDP_RESTRICT cb, int sa, int sb,
                                     const double *BNDP_RESTRICT T, int64_t n, int64_t k0,
                                     int64_t k1, double rl, double rh,
                                     double *BNDP_RESTRICT sl, double *BNDP_RESTRICT sh)
{
    for (int64_t k = k0; k < k1; k++) {
        int64_t j = k - k0;
        double tab = bndp_u64_double(cb[-sb * j] - ca[-sa * j]);
        double s = T[k] + T[n - k];
        sl[k] = tab + s * rl;
        sh[k] = tab + s * rh;
    }
}

/* The bounds of the normalisers, k = 0..n/2 (they are symmetric in k <-> n - k): the table's
 * mass on the row, tab = cum[b(k)] - cum[a(k)] with a(k) = max(-k, -N) + N and
 * b(k) = min(n - k, N) + N + 1, plus the tails beyond the table T[k] + T[n - k], scaled by
 * rl into sl[k] (lower bound) and by rh into sh[k] (upper). a falls by one a step until
 * k = N, b from k = n - N + 1 on: the loop runs by stretches on which each is a constant
 * or falls by one. */
static BNDP_CLONES void bndp_gw_cert_norms(const uint64_t *BNDP_RESTRICT cum, int64_t N,
                                           int64_t n, const double *BNDP_RESTRICT T,
                                           double rl, double rh, double *BNDP_RESTRICT sl,
                                           double *BNDP_RESTRICT sh)
{
    int64_t h = n / 2, ka = N < h + 1 ? N : h + 1, kb = n - N + 1, cut[4], s, e;
    int r;
    kb = kb < 0 ? 0 : (kb > h + 1 ? h + 1 : kb);
    cut[0] = 0;
    cut[1] = ka < kb ? ka : kb;
    cut[2] = ka < kb ? kb : ka;
    cut[3] = h + 1;
    for (r = 0; r < 3; r++) {
        s = cut[r];
        e = cut[r + 1];
        if (s >= e)
            continue;
        const uint64_t *ca = cum + (s < N ? N - s : 0);
        const uint64_t *cb = cum + (n - s < N ? n - s + N + 1 : 2 * N + 1);
        /* b falls only where a does: k >= n - N + 1 and k <= n/2 give k <= N - 1 */
        if (s < ka && s >= kb)
            bndp_gw_norms_run(ca, cb, 1, 1, T, n, s, e, rl, rh, sl, sh);
        else if (s < ka)
            bndp_gw_norms_run(ca, cb, 1, 0, T, n, s, e, rl, rh, sl, sh);
        else
            bndp_gw_norms_run(ca, cb, 0, 0, T, n, s, e, rl, rh, sl, sh);
    }
}

/* In place for k < m: from lo[k] = sl >= 2 and hi[k] = sh, lo[k] = ln sl (bndp_log: within
 * 1.5 ulps) and hi[k] = ((sh - sl) / sl) (1 + 1e-15), an upper bound on ln sh - ln sl
 * (ln(1 + x) <= x; the division rounds by at most half an ulp). */
static BNDP_CLONES void bndp_gw_cert_logs(double *BNDP_RESTRICT lo, double *BNDP_RESTRICT hi,
                                          ptrdiff_t m)
{
    for (ptrdiff_t k = 0; k < m; k++) {
        double sl = lo[k];
        hi[k] = ((hi[k] - sl) / sl) * (1.0 + 1e-15);
        lo[k] = bndp_log(sl);
    }
}

/* The model kernel psi(k) = K ln 2 + ln kernel(k), k = 0..n, into V (as _gw_phi: -k/t for the
 * Laplace, -(k/t)^2/2 for the Gaussian within the table's N, continued by ln p a step beyond;
 * lnk = K ln 2). V decreases with k (every operation rounds monotonically), so the largest
 * |V[k]| is at an end: returned. */
static BNDP_CLONES double bndp_gw_cert_model(int fam, double t, int64_t N, double lnp,
                                             double lnk, int64_t n, double *BNDP_RESTRICT V)
{
    double xN = (double) N / t, core, d, e, x;
    xN = fam == 0 ? -(double) N / t : -0.5 * xN * xN;
    for (int64_t k = 0; k <= n; k++) {
        /* k and k - N (n < 2^52) converted exactly, through 2^52 + j */
        d = bndp_double(0x4330000000000000ULL | (uint64_t) k) - 4503599627370496.0;
        e = bndp_double(0x4330000000000000ULL | (uint64_t) (k > N ? k - N : 0))
            - 4503599627370496.0;
        x = d / t;
        core = fam == 0 ? -d / t : -0.5 * x * x;
        V[k] = lnk + (k <= N ? core : xN + e * lnp);
    }
    return fabs(V[0]) > fabs(V[n]) ? fabs(V[0]) : fabs(V[n]);
}

/* The certificate's sequences, k = 0..n: qlo[k] = ln sl[j] - V[k] and
 * qhi[k] = qlo[k] + slack[j], j = min(k, n - k), from lnsl (ln sl of k = 0..n/2) and the
 * slack terms in qhi[0..n/2]. The upper half k > n/2 (mirrored, u = n - n/2 entries) is
 * written first, from the slack terms it reads (which the lower half then overwrites in
 * place). */
static inline void bndp_gw_seq_upper(const double *BNDP_RESTRICT lnsl,
                                     const double *BNDP_RESTRICT slack,
                                     const double *BNDP_RESTRICT V, double *BNDP_RESTRICT qlo,
                                     double *BNDP_RESTRICT qhi, ptrdiff_t u)
{
    for (ptrdiff_t j = 0; j < u; j++) {
        qlo[j] = lnsl[u - 1 - j] - V[j];
        qhi[j] = qlo[j] + slack[u - 1 - j];
    }
}

static inline void bndp_gw_seq_upper_inplace(const double *BNDP_RESTRICT lnsl,
                                             const double *BNDP_RESTRICT slack,
                                             double *BNDP_RESTRICT qlo,
                                             double *BNDP_RESTRICT qhi, ptrdiff_t u)
{
    for (ptrdiff_t j = 0; j < u; j++) {
        qlo[j] = lnsl[u - 1 - j] - qlo[j];
        qhi[j] = qlo[j] + slack[u - 1 - j];
    }
}

/* V: the model (n + 1 entries), or NULL where it is already in qlo (overwritten) */
static BNDP_CLONES void bndp_gw_cert_seq(const double *BNDP_RESTRICT lnsl, const double *V,
                                         double *qlo, double *qhi, ptrdiff_t n)
{
    ptrdiff_t h = n / 2, k;
    if (V != NULL) {
        bndp_gw_seq_upper(lnsl, qhi, V + h + 1, qlo + h + 1, qhi + h + 1, n - h);
        for (k = 0; k <= h; k++) {
            qlo[k] = lnsl[k] - V[k];
            qhi[k] = qlo[k] + qhi[k];
        }
    } else {
        bndp_gw_seq_upper_inplace(lnsl, qhi, qlo + h + 1, qhi + h + 1, n - h);
        for (k = 0; k <= h; k++) {
            qlo[k] = lnsl[k] - qlo[k];
            qhi[k] = qlo[k] + qhi[k];
        }
    }
}

/* max over k = 1..n of hi[k] - min(lo[max(0, k - dk) .. k - 1]) (n >= 1, dk >= 1): the
 * sliding-window part of the certificate (_gw_window_best with kmax = n, imax = n - 1), by
 * doubling. A window starting at 0 (k <= dk) is a prefix of lo (its running minimum); a full
 * window [k - dk, k - 1] is covered by two runs of p entries, p the largest power of two
 * <= dk: min(M[k - dk], M[k - p]) with M[i] = min(lo[i .. i + p - 1]), built in log2 p
 * elementwise passes M'[i] = min(M[i], M[i + p']). Their values (hi[k] less the window's
 * minimum) are then reduced by halving, also elementwise. Minima and maxima are exact, so
 * the result is that of _gw_window_best's block minima, bit for bit. lo and w (n entries
 * each) are overwritten. */
static BNDP_CLONES double bndp_gw_window_best(double *BNDP_RESTRICT lo,
                                              const double *BNDP_RESTRICT hi, ptrdiff_t n,
                                              ptrdiff_t dk, double *BNDP_RESTRICT w)
{
    double best = -1e300, m = lo[0], v, a, b;
    ptrdiff_t k, i, p = 1, ka = dk < n ? dk : n, len, half;
    double *src = lo, *dst = w, *t;
    for (k = 1; k <= ka; k++) {
        m = lo[k - 1] < m ? lo[k - 1] : m;
        v = hi[k] - m;
        best = v > best ? v : best;
    }
    if (n <= dk)
        return best;
    while (2 * p <= dk) {
        for (i = 0; i + p < n; i++)
            dst[i] = src[i] < src[i + p] ? src[i] : src[i + p];
        t = src;
        src = dst;
        dst = t;
        p *= 2;
    }
    /* the full windows: dst[i] for k = i + dk + 1, i < n - dk */
    len = n - dk;
    for (i = 0; i < len; i++) {
        a = src[i + 1];
        b = src[i + 1 + dk - p];
        dst[i] = hi[i + dk + 1] - (a < b ? a : b);
    }
    while (len > 1) {
        half = len / 2;
        for (i = 0; i < half; i++)
            dst[i] = dst[i + len - half] > dst[i] ? dst[i + len - half] : dst[i];
        len -= half;
    }
    return dst[0] > best ? dst[0] : best;
}

#endif /* BNDP_CERTIFY_H */
