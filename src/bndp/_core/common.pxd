# Declarations shared by every module of the compiled core (bndp._core), in the manner of
# numpy/random's _common.pxd: the C helpers and SIMD kernels it links (_simd.h,
# _grid_search.h, _window.h, _certify.h), the constants shared by several modules, the
# parameter structs of every family, the kernel type of the generic fill loop (fill.pyx)
# and the hot inline helpers shared by every layer (BitGenerator borrowing, open-interval
# uniform, Lemire's bounded integer). Each module's own cdef functions are declared in its
# .pxd (special.pxd, sample.pxd, ...), which the modules using them cimport.

# the C library and numpy names every module uses, declared once: a module's
# `from bndp._core.common cimport *` brings them in with the rest of this file
from libc.math cimport (INFINITY, M_PI, NAN, ceil, erf, erfc, exp, expm1, fabs, floor, fma,
                        fmax, fmin, hypot, isfinite, isnan, ldexp, log, log1p, log2,
                        nearbyint, nextafter, pow, sqrt)
from libc.stdlib cimport calloc, free, malloc, realloc
from libc.stdint cimport int32_t, int64_t, uint32_t, uint64_t
from libc.string cimport memcpy
from cpython.pycapsule cimport PyCapsule_IsValid, PyCapsule_GetPointer
from numpy.random cimport bitgen_t
cimport numpy as _cnp


# ---------------------------------------------------------------------------------------
# C helpers (verbatim) and the SIMD kernels of _simd.h, _grid_search.h, _window.h,
# _certify.h
# ---------------------------------------------------------------------------------------

cdef extern from *:
    """
    #ifndef BNDP_COMMON_BLOCK_1
    #define BNDP_COMMON_BLOCK_1
    #include <stdint.h>
    #define BNDP_TWO_M52 2.220446049250313080847263336181640625e-16
    #endif
    """
    double BNDP_TWO_M52

cdef extern from *:
    """
    #ifndef BNDP_COMMON_BLOCK_2
    #define BNDP_COMMON_BLOCK_2
    #include <stdint.h>
    /* 64x64 -> 128-bit product (high word returned, low word stored) and the quotient and
       remainder of a 128-bit number by a 64-bit one: native 128-bit integers on GCC/Clang,
       compiler intrinsics on MSVC x64, a portable schoolbook version elsewhere. */
    #if defined(__SIZEOF_INT128__)
    static inline uint64_t bndp_mul128(uint64_t a, uint64_t b, uint64_t *lo) {
        unsigned __int128 m = (unsigned __int128)a * b;
        *lo = (uint64_t)m;
        return (uint64_t)(m >> 64);
    }
    static inline void bndp_divmod128(uint64_t hi, uint64_t lo, uint64_t d,
                                      uint64_t *qhi, uint64_t *qlo, uint64_t *r) {
        unsigned __int128 n = ((unsigned __int128)hi << 64) | lo;
        unsigned __int128 q = n / d;
        *qhi = (uint64_t)(q >> 64);
        *qlo = (uint64_t)q;
        *r = (uint64_t)(n - q * d);
    }
    #else
    #if defined(_MSC_VER) && defined(_M_X64)
    #include <intrin.h>
    static __inline uint64_t bndp_mul128(uint64_t a, uint64_t b, uint64_t *lo) {
        uint64_t hi;
        *lo = _umul128(a, b, &hi);
        return hi;
    }
    #else
    static inline uint64_t bndp_mul128(uint64_t a, uint64_t b, uint64_t *lo) {
        uint64_t a0 = a & 0xFFFFFFFFu, a1 = a >> 32, b0 = b & 0xFFFFFFFFu, b1 = b >> 32;
        uint64_t p00 = a0 * b0, p01 = a0 * b1, p10 = a1 * b0, p11 = a1 * b1;
        uint64_t mid = (p00 >> 32) + (p01 & 0xFFFFFFFFu) + (p10 & 0xFFFFFFFFu);
        *lo = (mid << 32) | (p00 & 0xFFFFFFFFu);
        return p11 + (p01 >> 32) + (p10 >> 32) + (mid >> 32);
    }
    #endif
    static inline void bndp_divmod128(uint64_t hi, uint64_t lo, uint64_t d,
                                      uint64_t *qhi, uint64_t *qlo, uint64_t *r) {
        /* long division: high word first, then the low word bit by bit (remainder < d) */
        uint64_t rem = hi % d, q = 0, top;
        int k;
        *qhi = hi / d;
        for (k = 63; k >= 0; k--) {
            top = rem >> 63;
            rem = (rem << 1) | ((lo >> k) & 1u);
            q <<= 1;
            if (top || rem >= d) {
                rem -= d;
                q |= 1u;
            }
        }
        *qlo = q;
        *r = rem;
    }
    #endif
    #endif
    """
    uint64_t bndp_mul128(uint64_t a, uint64_t b, uint64_t* lo) nogil
    void bndp_divmod128(uint64_t hi, uint64_t lo, uint64_t d, uint64_t* qhi, uint64_t* qlo,
                        uint64_t* r) nogil

cdef extern from *:
    """
    #ifndef BNDP_COMMON_BLOCK_3
    #define BNDP_COMMON_BLOCK_3
    /* Grid index of a clipped true value: round q * 2^-e (inv_gamma = 2^-e, so the product
       is exact or a correctly rounded subnormal, monotone in q) to the nearest integer, ties
       up, clip to [kl, kl + n], subtract kl. Written with selects and comparisons turned
       into 0/1 (minsd/maxsd, setcc), so that no branch depends on q: a branch on the
       rounding direction would be mispredicted half the time on real columns, a timing
       signal of the true value. The first clip keeps the integer conversion in range. */
    static inline int64_t bndp_gd_index(double q, double inv_gamma, int64_t kl, int64_t n) {
        double lo = (double)kl, hi = (double)(kl + n);
        double z = q * inv_gamma, f, k;
        z = z < lo - 1.0 ? lo - 1.0 : z;
        z = z > hi + 1.0 ? hi + 1.0 : z;
        f = (double)(int64_t)z;
        f -= (double)(f > z);
        k = f + (double)((z - f) >= 0.5);
        k = k < lo ? lo : k;
        k = k > hi ? hi : k;
        return (int64_t)k - kl;
    }
    #endif
    """
    int64_t _gd_index "bndp_gd_index" (double q, double inv_gamma, int64_t kl, int64_t n) nogil

cdef extern from "_simd.h":
    # Phi^-1(1/2 + q) for |q| <= 0.425 (AS 241, first rational approximation), shared with
    # the vectorised block loop below
    double _ppnd_central "bndp_ppnd_central"(double q) noexcept nogil
    # -Phi^-1(t) from r = sqrt(-log t) for t <= 0.075 (AS 241, tail approximations)
    double _ppnd_tail_r "bndp_ppnd_tail_r"(double r) noexcept nogil
    # log of a positive normal number, branch-free (about 1 ulp; tests/test_special.py)
    double _log_fast "bndp_log"(double x) noexcept nogil
    # standardised truncated-normal quantile for a row with a <= 0 <= b (see TNParams)
    double _tn_straddle_std "bndp_tn_straddle_std"(double u, double Z, double mL, double tlo,
                                                   double thi) noexcept nogil
    void _tn_straddle_block "bndp_tn_straddle_block"(
        const double* u, double* out, Py_ssize_t n, const double* Z, const double* mL,
        const double* tlo, const double* thi, const double* loc, const double* scale,
        const double* lo, const double* hi, Py_ssize_t stride) noexcept nogil

cdef extern from "_simd.h":
    # Phi(y) - 1/2 and Phi(-y) for 0 <= y <= 37 (Cody's rational approximations; see
    # _simd.h): branch-free, as the vectorised block setup uses it, and with branches, as the
    # scalar setup below uses it (the same bits; tests/test_special.py)
    double _exp_nonpos_fast "bndp_exp_nonpos"(double x) noexcept nogil
    void _phi_split_fast "bndp_phi_split"(double y, double* mass0, double* tail) noexcept nogil
    void _phi_split_branchy "bndp_phi_split_branchy"(double y, double* mass0, double* tail) noexcept nogil
    Py_ssize_t _tn_setup_pass "bndp_tn_setup_pass"(
        const double* loc, const double* scale, const double* lo, const double* hi, Py_ssize_t n,
        double* Z, double* mL, double* tlo, double* thi, int64_t* onetail) noexcept nogil

cdef extern from "_simd.h":
    enum: TN_BLOCK "BNDP_TN_BLOCK"

cdef extern from "_simd.h":
    double _expm1_nonpos "bndp_expm1_nonpos"(double x) noexcept nogil
    double _log1m2t "bndp_log1m2t"(double t) noexcept nogil
    void _bl_setup_one "bndp_bl_setup_one"(double q, double b, double lo, double hi,
                                           double* mL, double* C) noexcept nogil
    double _bl_draw "bndp_bl_draw"(double u, double q, double b, double lo, double hi,
                                   double mL, double C) noexcept nogil
    void _bl_setup_pass "bndp_bl_setup_pass"(
        const double* q, const double* b, const double* lo, const double* hi, Py_ssize_t n,
        double* mL, double* C) noexcept nogil
    void _bl_setup_pass_q "bndp_bl_setup_pass_q"(
        const double* q, double b, double lo, double hi, Py_ssize_t n, double* mL,
        double* C) noexcept nogil
    void _bl_draw_pass "bndp_bl_draw_pass"(
        const double* u, double* out, Py_ssize_t n, const double* q, const double* b,
        const double* lo, const double* hi, const double* mL, const double* C) noexcept nogil
    void _bl_draw_pass_q "bndp_bl_draw_pass_q"(
        const double* u, double* out, Py_ssize_t n, const double* q, double b, double lo,
        double hi, const double* mL, const double* C) noexcept nogil
    void _bl_draw_pass1 "bndp_bl_draw_pass1"(
        const double* u, double* out, Py_ssize_t n, double q, double b, double lo, double hi,
        double mL, double C) noexcept nogil

cdef extern from *:
    """
    #ifndef BNDP_COMMON_BLOCK_4
    #define BNDP_COMMON_BLOCK_4
    #include "_grid_search.h"
    static inline int bndp_gd_variant_swap(int v) {
        int old = bndp_gd_variant;
        bndp_gd_variant = v;
        return old;
    }
    #endif
    """
    # the table search (layout, implementations and their run-time choice: see the header)
    enum: GD_LANES "BNDP_GD_LANES"     # draws per table search
    size_t bndp_gd_table_size(int levels) nogil
    size_t bndp_gd_level_offset(int levels, int l) nogil
    void bndp_gd_search(const uint64_t* tree, int levels, const uint64_t* t, int64_t* pos) nogil
    int bndp_gd_variant
    # the table search in use, set to v (every module that searches keeps its own copy of
    # the choice: bndp._core.testing sets them together); returns the previous one
    int _search_variant_swap "bndp_gd_variant_swap"(int v) nogil
    int bndp_gd_variant_ok(int v) nogil
    # the guide of a table searched many times (see the header)
    int bndp_gd_guide_shift(uint64_t total, int bits) nogil
    void bndp_gd_guide_build(const uint64_t* cum, int64_t m, int shift, uint32_t* g) nogil
    void bndp_gd_search_guide(const uint64_t* cum, const uint32_t* g, int shift,
                              const uint64_t* t, int64_t* pos) nogil

cdef extern from "_simd.h":
    # grid indices of a block of contiguous clipped true values (vectorised; the same
    # integers as _gd_index, tests/test_exact.py)
    void bndp_gd_index_pass(const double* q, Py_ssize_t m, double inv_gamma, double lo,
                            double hi, int32_t* j) nogil
    # released values (kl + pos - n + idx) 2^e of a block of draws
    void bndp_gd_out_pass(const int64_t* pos, const int32_t* idx, Py_ssize_t m, int64_t n,
                          double kl, double gamma, double* out) nogil

cdef extern from "_simd.h":
    # the middle of an EM step of one row (bndp._core.estimate): f <- p / max(f, 1e-300);
    # returns sum_b p_b log max(f_b, 1e-300) over p_b != 0 (bndp_log, four partial sums);
    # vectorised
    double _em_ratio_pass "bndp_em_ratio_pass"(const double* p, double* f,
                                               Py_ssize_t n) noexcept nogil

cdef extern from "_window.h":
    void bndp_gw_index_pass(const double* q, Py_ssize_t m, double lo, double hi,
                            double inv_g, double n, double* idx) nogil
    void bndp_gw_index_rows(const double* q, const double* lo, const double* hi,
                            const double* n, Py_ssize_t m, double inv_g, double* idx) nogil
    int bndp_gs_index_pass(const double* q, Py_ssize_t m, double lo, double hi, double kd,
                           double inv_tk, double n, double* idx) nogil
    int bndp_gs_rows_pass(const double* q, const double* lo, const double* hi, Py_ssize_t m,
                          double kd, double inv_k, double inv_tk, double* idx,
                          double* nrow) nogil
    double _gw_ldexp "bndp_ldexp"(double x, int64_t k) noexcept nogil
    int64_t _gw_frexp_exp "bndp_frexp_exp"(double x) noexcept nogil
    bint _gw_is_integer "bndp_is_integer"(double r) noexcept nogil
    int64_t bndp_gw_count(double lo, double hi, double inv_g, int64_t maxrow) noexcept nogil
    # the per-row grid pass of gw_rows_grid (q and io NULL: no grid indices)
    void bndp_gw_rows_grid(const double* lo, const double* hi, const double* q, Py_ssize_t m,
                           double a0, double dq, double ws, double ss, int64_t maxrow,
                           int64_t* eo, unsigned char* co, int64_t* no, int64_t* io,
                           int64_t* nmx, int64_t* agg) noexcept nogil
    int bndp_rows_bounds_ok(const double* lo, const double* hi, Py_ssize_t m) noexcept nogil
    int bndp_rows_inside(const double* q, const double* lo, const double* hi,
                         Py_ssize_t m, int strict) noexcept nogil
    int bndp_any_width(const double* lo, const double* hi, Py_ssize_t m, double w) noexcept nogil

cdef extern from "_certify.h":
    # the loops of the windowed certificate on a row (_gw_cert_narrow)
    void bndp_gw_cert_norms(const uint64_t* cum, int64_t N, int64_t n, const double* T,
                            double rl, double rh, double* sl, double* sh) noexcept nogil
    void bndp_gw_cert_logs(double* lo, double* hi, Py_ssize_t m) noexcept nogil
    double bndp_gw_cert_model(int fam, double t, int64_t N, double lnp, double lnk, int64_t n,
                              double* V) noexcept nogil
    void bndp_gw_cert_seq(const double* lnsl, const double* V, double* qlo, double* qhi,
                          Py_ssize_t n) noexcept nogil
    double bndp_gw_window_best(double* lo, const double* hi, Py_ssize_t n, Py_ssize_t dk,
                               double* w) noexcept nogil

# ---------------------------------------------------------------------------------------
# Constants
# ---------------------------------------------------------------------------------------

cdef enum:
    GW_MBITS = 20                 # the window law's tail success probability m 2^-s, 2^20 <= m < 2^21

cdef enum:
    GL_N = 24
    GL_R = 12

cdef enum:
    GF_DWORK2006 = 0
    GF_DWORK2014 = 1
    GF_OPTIMAL = 2
    GF_ZHAO1 = 3
    GF_ZHAO2 = 4
    GF_PDP_OPTIMAL = 5
    GF_ZHAO3 = 6
    GF_ZHAO4 = 7

cdef enum:
    GF_NOTION_DP = 0
    GF_NOTION_PDP = 1

# ---------------------------------------------------------------------------------------
# Parameter structs
# ---------------------------------------------------------------------------------------

cdef struct TNParams:
    int mode            # 0 straddle, 1 left tail, 2 right tail (mirrored)
    int far             # tail mode with the near end beyond TN_FAR scales: see _tn_quantile
    double loc, scale, lo, hi
    double mL, Z, tlo, thi          # straddle
    double lb, la, om, logZ         # tails (in mirrored coordinates for mode 2)

cdef struct TNBlock:
    TNParams p[TN_BLOCK]
    double u[TN_BLOCK]
    double Z[TN_BLOCK]
    double mL[TN_BLOCK]
    double tlo[TN_BLOCK]
    double thi[TN_BLOCK]
    double loc[TN_BLOCK]
    double scale[TN_BLOCK]
    double lo[TN_BLOCK]
    double hi[TN_BLOCK]
    int64_t onetail[TN_BLOCK]       # 1: a row in one tail, set up in p[k] (scalar, log space)

cdef struct BLParams:
    double q, b, lo, hi, mL, C

cdef struct BLBlock:
    double u[TN_BLOCK]
    double q[TN_BLOCK]
    double b[TN_BLOCK]
    double lo[TN_BLOCK]
    double hi[TN_BLOCK]
    double mL[TN_BLOCK]
    double C[TN_BLOCK]

ctypedef double (*monotone_fn)(double, void*) noexcept nogil

cdef struct BLCal:
    double dq, w, L

cdef struct BGCal:
    double eps, A, dq
    const double* w
    Py_ssize_t m
    double* cbuf

ctypedef struct gd_set_t:
    const uint64_t* cum
    int levels
    int64_t N
    const int64_t* sa
    const int64_t* sb
    int64_t m
    uint64_t tailw
    int sbits
    int64_t c_lo
    int64_t c_hi
    int64_t kl

cdef struct GFArgs:
    double eps, log2d, s1, F

cdef struct CLWork:
    Py_ssize_t m
    const double* L
    const double* R
    double s
    double* lcL
    double* fL
    double* rcR
    double* fR

cdef struct CLCal:
    CLWork* w1          # the allowed set
    CLWork* w2          # its reflection x -> -x
    double dF, eps
    int metric

cdef struct CLPieces:
    Py_ssize_t nl, nr, m
    int depth
    double mu, s, inv_s, Lc, N
    double* cl
    double* al
    double* lol
    double* hil
    double* cr
    double* ar
    double* lor
    double* hir
    double* ew          # e^{-w_k/s} per span (0 for an unbounded span)
    double* omw         # 1 - e^{-w_k/s} (1 for an unbounded span)
    double* eg          # e^{-g_k/s} for the gap after span k

cdef struct VTight:
    double eps, dq
    const double* w
    Py_ssize_t m
    double* cbuf

ctypedef struct gw_law_t:
    int fam
    double t
    int64_t N          # table half-width
    int tail           # 1: geometric tails beyond the table
    int kexp
    uint64_t tailw     # B
    int sbits          # s
    uint64_t tm        # m
    double lnp         # ln p (p = 1 - m 2^-s)

ctypedef struct gw_rows_t:
    const uint64_t* cum
    int levels
    int64_t N
    uint64_t tailw
    int sbits
    uint64_t tm
    const uint32_t* guide   # NULL, or the guide of cum (bndp_gd_guide_build) ...
    int gshift              # ... and its shift

# ---------------------------------------------------------------------------------------
# The generic fill loop (_core/fill.pyx): a block of at most TN_BLOCK elements
# ---------------------------------------------------------------------------------------

ctypedef struct fill_block_t:
    const double* p[4]      # parameter k of element r: p[k][r * s[k]]
    Py_ssize_t s[4]         # 0: one value for the whole block; 1: contiguous
    Py_ssize_t m            # elements in the block (1 <= m <= TN_BLOCK)
    bint same               # every parameter is the previous block's single value

# a family's kernel: the m draws of a block, in stream order, into out[0..m)
ctypedef void (*fill_kernel_t)(bitgen_t* bg, void* state, const fill_block_t* b,
                               double* out) noexcept nogil

# ---------------------------------------------------------------------------------------
# Hot inline helpers shared by the samplers
# ---------------------------------------------------------------------------------------

cdef inline double _u_open(bitgen_t* bg) noexcept nogil:
    # Uniform on the open interval (0, 1): (2k + 1) * 2^-53 for a 52-bit k. Never 0 or 1,
    # so inverse CDFs with an infinite end never return +-inf, and 1 - u is exact (both u
    # and 1 - u are odd multiples of 2^-53 below 1), which the two-sided samplers rely on.
    return (<double>(bg.next_uint64(bg.state) >> 12) + 0.5) * BNDP_TWO_M52

cdef inline uint64_t _ex_below(bitgen_t* bg, uint64_t n) noexcept nogil:
    # Uniform integer on {0, ..., n-1}, n >= 1, exactly [L19]: the high word of x*n for a
    # uniform 64-bit x, rejecting the (2^64 mod n) values of the low word that would bias it.
    # For n < 2^32 the same with a 32-bit x (half the random bits: BitGenerators buffer the
    # other half of a 64-bit word for the next 32-bit draw).
    cdef uint32_t x32, low32, thr32
    cdef uint64_t m32
    if n <= 0xFFFFFFFFu:
        x32 = bg.next_uint32(bg.state)
        m32 = (<uint64_t> x32) * n
        low32 = <uint32_t> m32
        if low32 < <uint32_t> n:
            thr32 = (<uint32_t> 0 - <uint32_t> n) % (<uint32_t> n)
            while low32 < thr32:
                x32 = bg.next_uint32(bg.state)
                m32 = (<uint64_t> x32) * n
                low32 = <uint32_t> m32
        return m32 >> 32
    cdef uint64_t x = bg.next_uint64(bg.state)
    cdef uint64_t low
    cdef uint64_t high = bndp_mul128(x, n, &low)
    cdef uint64_t thr
    if low < n:
        thr = (<uint64_t> 0 - n) % n
        while low < thr:
            x = bg.next_uint64(bg.state)
            high = bndp_mul128(x, n, &low)
    return high

# ---------------------------------------------------------------------------------------
# Constants shared by several modules
# ---------------------------------------------------------------------------------------

cdef extern from *:
    """
    #ifndef BNDP_COMMON_BLOCK_5
    #define BNDP_COMMON_BLOCK_5
    #define BNDP_C_GD_ERR 9.094947017729282e-13
    #define BNDP_C_GW_LN2 0.6931471805599453
    #define BNDP_C_GW_REL 9.094947017729282e-13
    #define BNDP_C_GW_MAX_N (((int64_t)1) << 20)
    #define BNDP_C_GW_MAX_ROW (((int64_t)1) << 51)
    #define BNDP_C_GD_INF ((int64_t)4611686018427387904LL)
    #define BNDP_C_GD_EXACT ((int64_t)9007199254740992LL)
    #define BNDP_C_DBL_EPS 2.220446049250313e-16
    #define BNDP_C_TN_TAILMOM 2.0
    #define BNDP_C_SQRT1_2 0.70710678118654752440084436210484903928
    #define BNDP_C_LOG_SQRT_2PI 0.91893853320467274178032973640561763986
    #define BNDP_C_SQRT_2PI 2.50662827463100050241576528481104525301
    #define BNDP_C__E_HI 2.718281828459045
    #define BNDP_C__E_LO 1.4456468917292502e-16
    #define BNDP_C__LW_A 0.23196095298653444
    #define BNDP_C_TN_FAR 268435456.0
    #endif
    """
    const double GD_ERR "BNDP_C_GD_ERR"   # 2^-40
    const double GW_LN2 "BNDP_C_GW_LN2"
    const double GW_REL "BNDP_C_GW_REL"   # 2^-40: relative slack of computed tail sums
    const int64_t GW_MAX_N "BNDP_C_GW_MAX_N"   # table half-width limit
    const int64_t GW_MAX_ROW "BNDP_C_GW_MAX_ROW"   # grid intervals of a row
    const int64_t GD_INF "BNDP_C_GD_INF"   # 2^62: an unbounded span end
    const int64_t GD_EXACT "BNDP_C_GD_EXACT"   # 2^53: grid indices whose double is exact
    const double DBL_EPS "BNDP_C_DBL_EPS"
    const double TN_TAILMOM "BNDP_C_TN_TAILMOM"
    const double SQRT1_2 "BNDP_C_SQRT1_2"
    const double LOG_SQRT_2PI "BNDP_C_LOG_SQRT_2PI"
    const double SQRT_2PI "BNDP_C_SQRT_2PI"
    const double _E_HI "BNDP_C__E_HI"   # e rounded to double
    const double _E_LO "BNDP_C__E_LO"   # e - _E_HI
    const double _LW_A "BNDP_C__LW_A"   # a = -W0(-1/(2e)), Thm 1 of [CSS22]
    const double TN_FAR "BNDP_C_TN_FAR"

# ---------------------------------------------------------------------------------------
# The BitGenerator of a numpy.random.Generator
# ---------------------------------------------------------------------------------------

cdef inline bitgen_t* _borrow(object bit_generator) except NULL:
    capsule = bit_generator.capsule
    if not PyCapsule_IsValid(capsule, b"BitGenerator"):
        raise TypeError("rng must be backed by a NumPy BitGenerator (capsule 'BitGenerator')")
    return <bitgen_t*> PyCapsule_GetPointer(capsule, b"BitGenerator")


cdef inline double _nearest_zero(double a, double b) noexcept nogil:
    # the point of [a, b] nearest to 0
    if a <= 0.0 and b >= 0.0:
        return 0.0
    return b if b < 0.0 else a


# A shift vector c(lam) on the ball ||c|| <= dq, from a multiplier lam: the norm that the
# two multivariate worst-case searches (certify: _vf_bg_loss, calibrate: _bg_log_dc_multi)
# bisect on. The callback fills cstar[0..m-1] for lam and returns the squared norm in the
# units the caller compares with its limit.
ctypedef struct ball_t:
    const double* w
    Py_ssize_t m
    double s
    double dq
    double* cstar

ctypedef double (*ball_norm2_t)(const ball_t* b, double lam) noexcept nogil


cdef inline void _log_lambda_bisect(ball_norm2_t norm2, const ball_t* b, double limit,
                                    double tol, double* llo, double* lhi) noexcept nogil:
    # bisection in log lam on [llo, lhi] for norm2(lam) = limit, norm2 non-increasing in
    # lam (lam spans many decades); at most 80 halvings, stops once lhi - llo < tol
    cdef double lmid
    cdef int it
    for it in range(80):
        lmid = 0.5 * (llo[0] + lhi[0])
        if norm2(b, exp(lmid)) > limit:
            llo[0] = lmid
        else:
            lhi[0] = lmid
        if lhi[0] - llo[0] < tol:
            break
