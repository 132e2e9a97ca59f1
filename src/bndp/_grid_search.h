/*
 * The table search of the grid law (see _core/grid.pyx): for BNDP_GD_LANES targets t[r],
 * the index k with cum[k] <= t[r] < cum[k + 1] in the non-decreasing cumulative table cum
 * (cum[0] = 0, entries < 2^58, padded with BNDP_GD_PAD = 2^63 - 1 to 4^levels entries).
 *
 * Layout ("levels" L, leaf size 4^L): the search table holds the padded cum itself at offset
 * 0 (the leaf level; the draw also reads its bounds there), followed by the upper levels
 * l = 0..L-2, level l at offset 4^L + 4 (4^l - 1) / 3 with 4^(l+1) entries, entry j being
 * cum[j 4^(L-1-l)]. A 4-ary search keeps, per target, the element offset e = 4 m of its node
 * m at the current level: the node's four entries A[e..e+3] are contiguous (32 bytes, 32-byte
 * aligned when the table is), A[e] <= t being known (it is the lower bound the search has
 * established; A[0] = cum[0] = 0) and A[e+1..e+3] the three quarter points. The count c of
 * those three that are <= t gives the child, 4 (e + c) at the next level, e + c = k at the
 * leaf. Every level of every target performs the same loads and comparisons, whatever the
 * target: no branch depends on it and the number of steps depends on L only.
 *
 * Two implementations, which return the same k for every target (integer comparisons only):
 *   - the portable one, three scalar comparisons per level;
 *   - on x86-64 with GCC/Clang, an AVX2 one picked at run time when the CPU has AVX2: one
 *     256-bit load and compare of a node per level (compare-greater of t + 1 against the
 *     entries: signed, exact since every entry and t + 1 are below 2^63), movemask and
 *     popcount; the first two levels are merged into one comparison of t with the 15 keys
 *     cum[j 4^(L-2)], j = 1..15, held in registers (the table being non-decreasing, the number
 *     of them <= t is the node reached after two 4-ary steps).
 * Tests (tests/test_exact.py) compare both with NumPy's searchsorted and with each other.
 */
#ifndef BNDP_GRID_SEARCH_H
#define BNDP_GRID_SEARCH_H

#include <stddef.h>
#include <stdint.h>

#define BNDP_GD_LANES 32
#define BNDP_GD_PAD INT64_MAX

#if !defined(BNDP_NO_CLONES) && defined(__x86_64__) && defined(__GNUC__) \
    && defined(__has_attribute)
#  if __has_attribute(target)
#    define BNDP_GD_X86 1
#    include <immintrin.h>
#  endif
#endif

/* offset of level l (0 <= l < levels) in the search table */
static inline size_t bndp_gd_level_offset(int levels, int l)
{
    size_t leaf = (size_t)1 << (2 * levels);
    if (l == levels - 1)
        return 0;
    return leaf + 4 * ((((size_t)1 << (2 * l)) - 1) / 3);
}

/* total length of the search table (levels >= 1) */
static inline size_t bndp_gd_table_size(int levels)
{
    return ((size_t)1 << (2 * levels)) + 4 * ((((size_t)1 << (2 * (levels - 1))) - 1) / 3);
}

static void bndp_gd_search_portable(const uint64_t *tree, int levels, const uint64_t *t,
                                    int64_t *pos)
{
    int64_t e[BNDP_GD_LANES];
    int r, l;
    for (r = 0; r < BNDP_GD_LANES; r++)
        e[r] = 0;
    for (l = 0; l < levels - 1; l++) {
        const uint64_t *a = tree + bndp_gd_level_offset(levels, l);
        for (r = 0; r < BNDP_GD_LANES; r++) {
            const uint64_t *nd = a + e[r];
            uint64_t tt = t[r];
            e[r] = 4 * (e[r] + (int64_t)(nd[1] <= tt) + (int64_t)(nd[2] <= tt)
                        + (int64_t)(nd[3] <= tt));
        }
    }
    for (r = 0; r < BNDP_GD_LANES; r++) {
        const uint64_t *nd = tree + e[r];
        uint64_t tt = t[r];
        pos[r] = e[r] + (int64_t)(nd[1] <= tt) + (int64_t)(nd[2] <= tt) + (int64_t)(nd[3] <= tt);
    }
}

#ifdef BNDP_GD_X86
static int bndp_gd_have_avx2(void)
{
    static int have = -1;
    if (have < 0) {
        __builtin_cpu_init();
        have = (__builtin_cpu_supports("avx2") && __builtin_cpu_supports("popcnt")) ? 1 : 0;
    }
    return have;
}

/* count of the three quarter points A[e+1..e+3] <= t (t1 = t + 1 broadcast) */
__attribute__((target("avx2,popcnt")))
static inline int64_t bndp_gd_node_avx2(const uint64_t *nd, __m256i t1)
{
    __m256i k = _mm256_loadu_si256((const __m256i *)nd);
    unsigned m = (unsigned)_mm256_movemask_pd(_mm256_castsi256_pd(_mm256_cmpgt_epi64(t1, k)));
    return (int64_t)__builtin_popcount(m & 14u);
}

__attribute__((target("avx2,popcnt")))
static void bndp_gd_search_avx2(const uint64_t *tree, int levels, const uint64_t *t,
                                int64_t *pos)
{
    int64_t e[BNDP_GD_LANES], t1[BNDP_GD_LANES];
    int r, l = 0;
    for (r = 0; r < BNDP_GD_LANES; r++) {
        t1[r] = (int64_t)t[r] + 1;
        e[r] = 0;
    }
    if (levels >= 3) {
        /* the first two levels: the 15 keys cum[j 4^(L-2)], j = 1..15 (level 1's entries;
           its entry 0, cum[0], is replaced by the padding, which no target reaches) */
        const uint64_t *a1 = tree + bndp_gd_level_offset(levels, 1);
        __m256i k0 = _mm256_blend_epi32(_mm256_loadu_si256((const __m256i *)a1),
                                        _mm256_set1_epi64x(BNDP_GD_PAD), 0x03);
        __m256i k1 = _mm256_loadu_si256((const __m256i *)(a1 + 4));
        __m256i k2 = _mm256_loadu_si256((const __m256i *)(a1 + 8));
        __m256i k3 = _mm256_loadu_si256((const __m256i *)(a1 + 12));
        for (r = 0; r < BNDP_GD_LANES; r++) {
            __m256i tb = _mm256_set1_epi64x(t1[r]);
            __m256i c01 = _mm256_packs_epi32(_mm256_cmpgt_epi64(tb, k0),
                                             _mm256_cmpgt_epi64(tb, k1));
            __m256i c23 = _mm256_packs_epi32(_mm256_cmpgt_epi64(tb, k2),
                                             _mm256_cmpgt_epi64(tb, k3));
            unsigned m = (unsigned)_mm256_movemask_epi8(_mm256_packs_epi32(c01, c23));
            /* each true comparison sets two adjacent bits of m */
            e[r] = 2 * (int64_t)__builtin_popcount(m);
        }
        l = 2;
    }
    for (; l < levels - 1; l++) {
        const uint64_t *a = tree + bndp_gd_level_offset(levels, l);
        for (r = 0; r < BNDP_GD_LANES; r++)
            e[r] = 4 * (e[r] + bndp_gd_node_avx2(a + e[r], _mm256_set1_epi64x(t1[r])));
    }
    for (r = 0; r < BNDP_GD_LANES; r++)
        pos[r] = e[r] + bndp_gd_node_avx2(tree + e[r], _mm256_set1_epi64x(t1[r]));
}
#endif

/* which implementation: 0 the best the CPU runs, 1 the portable one, 2 AVX2 (tests) */
static int bndp_gd_variant = 0;

/* 1 if the variant can run here */
static int bndp_gd_variant_ok(int v)
{
    if (v == 0 || v == 1)
        return 1;
#ifdef BNDP_GD_X86
    if (v == 2)
        return bndp_gd_have_avx2();
#endif
    return 0;
}

static inline void bndp_gd_search(const uint64_t *tree, int levels, const uint64_t *t,
                                  int64_t *pos)
{
#ifdef BNDP_GD_X86
    if (bndp_gd_variant == 2 || (bndp_gd_variant == 0 && bndp_gd_have_avx2())) {
        bndp_gd_search_avx2(tree, levels, t, pos);
        return;
    }
#endif
    bndp_gd_search_portable(tree, levels, t, pos);
}

/* A guide to the same search for tables searched many times (the windowed law's large
 * fills): g[b] is the index k of the target b 2^shift (the number of entries
 * cum[1..] <= b 2^shift), for the buckets b = 0..(total - 1) >> shift of the targets
 * 0 <= t < total = cum[m - 1] (m the unpadded entries). The index of a target t is then
 * g[t >> shift] plus the entries cum[k + 1] <= t that follow: two steps without branches,
 * then a loop, taken only where a bucket holds more than two entries (in the light tails
 * of a kernel: as likely as the mass of those buckets). The same k as bndp_gd_search for
 * every target below total. bndp_gd_guide_shift gives the shift for at most 2^bits
 * buckets. */
static inline int bndp_gd_guide_shift(uint64_t total, int bits)
{
    int len = 0;
    uint64_t x = total - 1;
    while (x) {
        len++;
        x >>= 1;
    }
    return len > bits ? len - bits : 0;
}

static void bndp_gd_guide_build(const uint64_t *cum, int64_t m, int shift, uint32_t *g)
{
    uint64_t total = cum[m - 1], b, nb = ((total - 1) >> shift) + 1;
    int64_t k = 0;
    for (b = 0; b < nb; b++) {
        uint64_t t0 = b << shift;
        while (cum[k + 1] <= t0)
            k++;
        g[b] = (uint32_t)k;
    }
}

static inline void bndp_gd_search_guide(const uint64_t *cum, const uint32_t *g, int shift,
                                        const uint64_t *t, int64_t *pos)
{
    int r;
    for (r = 0; r < BNDP_GD_LANES; r++) {
        uint64_t tt = t[r];
        int64_t k = (int64_t)g[tt >> shift];
        k += (int64_t)(cum[k + 1] <= tt);
        k += (int64_t)(cum[k + 1] <= tt);
        while (cum[k + 1] <= tt)
            k++;
        pos[r] = k;
    }
}

#endif /* BNDP_GRID_SEARCH_H */
