# cython: language_level=3, boundscheck=False, wraparound=False, cdivision=True, initializedcheck=False
"""Windowed grid-law draws for per-row bounds , without sorting. gw_rows_first: one pass, chunk by chunk in
cache, finds every row's granularity exponent, interval count and grid index
(window.grid_exponent, gw_intervals and gw_index: the same IEEE operations row by row,
bndp_gw_rows_grid in _window.h) and draws the rows of one kernel, the wide kernel of the
grid of rows near 0, in row order, leaving the others. The rows left: gw_rows_kernels gives
every row's kernel, the wide kernel of its exponent or the narrow kernel of its
(exponent, n), found in a small hash table; gw_fill_groups draws them kernel by kernel in
the order exponent, wide before narrow, n ascending, and the rows of a kernel in row
order, in blocks of GD_LANES from the kernel's first row: the draws and the stream of a
loop that calls gw_fill once per kernel on the selected rows. (gw_rows_grid is the grid
pass alone, for every row.)
"""

import numpy as _np

cimport numpy as _cnp
from bndp._core.common cimport *
from bndp._core.grid cimport *
from bndp._core.window cimport *

_cnp.import_array()

def gw_rows_grid(double target, double dq, const double[::1] lo, const double[::1] hi,
                 double scale_steps, double width_steps, double sens_steps, q=None):
    """Per row: the granularity exponent ``e`` and the coarse flag of
    ``window.grid_exponent`` (gamma <= min(dq / target / scale_steps, dq, width /
    width_steps), refined until min(dq, width) / gamma is an integer or >= sens_steps,
    coarsened to 2 ulp of the row's largest bound), and ``n = floor(width / 2^e)`` exactly
    (``gw_intervals``; computed where -1022 <= e <= 1000, else 0). Returns
    ``(e, coarse, n, evals, nmax)``: int64, bool, int64 per row, and the distinct exponents
    in that range (ascending) with the largest ``n`` of their rows. With true values ``q``
    (float64, one per row), also their grid indices in their rows (int64, as
    :func:`gw_index`; 0 in rows without intervals) as a sixth item, and a seventh:
    ``(min e, max e, any coarse row, min n)`` (Python ints and a bool; None without rows)."""
    cdef Py_ssize_t m = lo.shape[0]
    if hi.shape[0] != m:
        raise ValueError("gw_rows_grid: arrays of different lengths")
    cdef const double[::1] qv
    cdef int64_t[::1] iv
    cdef const double* qp = NULL
    cdef int64_t* ip = NULL
    i_arr = None
    if q is not None:
        qv = q
        if qv.shape[0] != m:
            raise ValueError("gw_rows_grid: arrays of different lengths")
        i_arr = _np.empty(m, dtype=_np.int64)
        iv = i_arr
        if m:
            qp = &qv[0]
            ip = &iv[0]
    e_arr = _np.empty(m, dtype=_np.int64)
    c_arr = _np.empty(m, dtype=_np.bool_)
    n_arr = _np.empty(m, dtype=_np.int64)
    cdef int64_t nmx[2023]           # by e + 1022, -1022 <= e <= 1000
    cdef int64_t agg[4]
    cdef Py_ssize_t k
    for k in range(2023):
        nmx[k] = -2
    cdef int64_t[::1] eo = e_arr
    cdef int64_t[::1] no = n_arr
    cdef unsigned char[::1] co = c_arr.view(_np.uint8)
    if m:
        with nogil:
            bndp_gw_rows_grid(&lo[0], &hi[0], qp, m, dq / target / scale_steps, dq,
                              width_steps, sens_steps, GW_MAX_ROW, &eo[0], &co[0], &no[0],
                              ip, nmx, agg)
    evals = [k - 1022 for k in range(2023) if nmx[k] != -2]
    nmax = [nmx[k] for k in range(2023) if nmx[k] != -2]
    res = (e_arr, c_arr, n_arr, _np.array(evals, dtype=_np.int64),
           _np.array(nmax, dtype=_np.int64))
    if q is None:
        return res
    summary = (agg[0], agg[1], bool(agg[2]), agg[3]) if m else None
    return res + (i_arr, summary)


cdef inline uint64_t _gw_mix(uint64_t x) noexcept nogil:
    x ^= x >> 33
    x *= <uint64_t> 0xff51afd7ed558ccd
    x ^= x >> 33
    return x


cdef int _gw_hash_grow(uint64_t** table, int32_t** gid, Py_ssize_t* cap) noexcept nogil:
    # rehash the open-addressing table into twice the slots (-1: out of memory)
    cdef Py_ssize_t i, j, c = cap[0]
    cdef uint64_t* nt = <uint64_t*> malloc(2 * c * sizeof(uint64_t))
    cdef int32_t* ng = <int32_t*> malloc(2 * c * sizeof(int32_t))
    if nt == NULL or ng == NULL:
        free(nt)
        free(ng)
        return -1
    for i in range(2 * c):
        nt[i] = 0
    for i in range(c):
        if table[0][i] != 0:
            j = <Py_ssize_t> (_gw_mix(table[0][i]) & <uint64_t> (2 * c - 1))
            while nt[j] != 0:
                j = (j + 1) & (2 * c - 1)
            nt[j] = table[0][i]
            ng[j] = gid[0][i]
    free(table[0])
    free(gid[0])
    table[0] = nt
    gid[0] = ng
    cap[0] = 2 * c
    return 0


def gw_rows_kernels(const int64_t[::1] e, const int64_t[::1] n, const int64_t[::1] evals,
                    const int64_t[::1] nmin):
    """The kernel of every row: rows of exponent ``evals[k]`` with ``n >= nmin[k]`` share
    the wide kernel of that exponent, the others the narrow kernel of their ``(e, n)``.
    Returns ``(group, keys, counts)``: ``keys`` (int64, ``(k, n)`` pairs, n = 0 for a wide
    kernel) sorted by exponent, wide first, then n; ``group[a]`` the index of row a's
    kernel; ``counts[k]`` the rows of kernel k (int64)."""
    cdef Py_ssize_t a, m = e.shape[0], ne = evals.shape[0], i, cap = 1024, used = 0, slot
    if n.shape[0] != m or nmin.shape[0] != ne or ne < 1:
        raise ValueError("gw_rows_kernels: inconsistent arrays")
    cdef int64_t e0 = evals[0], span = evals[ne - 1] - evals[0] + 1
    if span > 4096:
        raise ValueError("gw_rows_kernels: exponents too far apart")
    cdef int64_t* eidx = <int64_t*> malloc(span * sizeof(int64_t))
    cdef int32_t* wgid = <int32_t*> malloc(ne * sizeof(int32_t))    # wide kernel's group
    cdef uint64_t* table = <uint64_t*> malloc(cap * sizeof(uint64_t))
    cdef int32_t* gid = <int32_t*> malloc(cap * sizeof(int32_t))
    cdef int64_t* cnt = <int64_t*> malloc((m + 1) * sizeof(int64_t))     # by group, unranked
    cdef uint64_t key
    cdef int64_t ei, nn, ea, run = 0
    cdef int32_t wg, rg = -1
    cdef int err = 0
    group_arr = _np.empty(m, dtype=_np.int32)
    cdef int32_t[::1] go = group_arr
    try:
        if eidx == NULL or wgid == NULL or table == NULL or gid == NULL or cnt == NULL:
            raise MemoryError()
        for i in range(span):
            eidx[i] = -1
        for i in range(ne):
            eidx[evals[i] - e0] = i
            wgid[i] = -1
        for i in range(cap):
            table[i] = 0
        with nogil:
            for a in range(m):
                ea = e[a] - e0
                nn = n[a]
                if ea < 0 or ea >= span or eidx[ea] < 0:
                    err = 1
                    break
                if nn < 1 or nn >= ((<int64_t> 1) << 53):
                    err = 2
                    break
                ei = eidx[ea]
                if nn >= nmin[ei]:
                    # the wide kernel of the exponent: one group, no hashing; counted in
                    # runs of rows of one wide kernel (no store per row)
                    wg = wgid[ei]
                    if wg >= 0:
                        go[a] = wg
                        if wg == rg:
                            run += 1
                        else:
                            if rg >= 0:
                                cnt[rg] += run
                            rg = wg
                            run = 1
                        continue
                    nn = 0
                # stored keys are key + 1 (0 marks an empty slot)
                key = ((<uint64_t> ei) << 53 | <uint64_t> nn) + 1
                slot = <Py_ssize_t> (_gw_mix(key) & <uint64_t> (cap - 1))
                while table[slot] != 0 and table[slot] != key:
                    slot = (slot + 1) & (cap - 1)
                if table[slot] == 0:
                    if 2 * (used + 1) > cap:
                        if _gw_hash_grow(&table, &gid, &cap) < 0:
                            err = 3
                            break
                        slot = <Py_ssize_t> (_gw_mix(key) & <uint64_t> (cap - 1))
                        while table[slot] != 0:
                            slot = (slot + 1) & (cap - 1)
                    table[slot] = key
                    gid[slot] = <int32_t> used
                    cnt[used] = 0
                    if nn == 0:
                        wgid[ei] = <int32_t> used
                    used += 1
                go[a] = gid[slot]
                cnt[gid[slot]] += 1
            if rg >= 0:
                cnt[rg] += run
        if err == 1:
            raise ValueError("gw_rows_kernels: a row's exponent is not listed")
        if err == 2:
            raise ValueError("gw_rows_kernels: a row without grid intervals")
        if err == 3:
            raise MemoryError()
        # rank the kernels by key and renumber the rows' groups
        keys_arr = _np.empty(used, dtype=_np.int64)
        for i in range(cap):
            if table[i] != 0:
                keys_arr[gid[i]] = <int64_t> (table[i] - 1)
        order = _np.argsort(keys_arr, kind="stable")
        rank = _np.empty(used, dtype=_np.int32)
        rank[order] = _np.arange(used, dtype=_np.int32)
        keys_arr = keys_arr[order]
        counts = _np.empty(used, dtype=_np.int64)
        for i in range(used):
            counts[rank[i]] = cnt[i]
        rank_v = rank
        if used > 1:            # one kernel: every row's group is already 0
            _gw_renumber(go, rank_v)
    finally:
        free(eidx)
        free(wgid)
        free(table)
        free(gid)
        free(cnt)
    keys = _np.empty((used, 2), dtype=_np.int64)
    keys[:, 0] = keys_arr >> 53
    keys[:, 1] = keys_arr & ((1 << 53) - 1)
    return group_arr, keys, counts


cdef void _gw_renumber(int32_t[::1] g, const int32_t[::1] rank) noexcept:
    cdef Py_ssize_t a
    with nogil:
        for a in range(g.shape[0]):
            g[a] = rank[g[a]]


ctypedef struct gw_row_in_t:
    int64_t i           # the grid index of the true value; the drawn index once drawn
    int64_t n
    Py_ssize_t a        # the row's position


cdef inline Py_ssize_t _gw_at(const int64_t* pp, Py_ssize_t a) noexcept nogil:
    # where row a is written: pos[a], or a without positions
    return <Py_ssize_t> pp[a] if pp != NULL else a


cdef inline void _gw_block_out(bitgen_t* bg, const gw_rows_t* R, const int64_t* ib,
                               const int64_t* nb, int c, const Py_ssize_t* pb,
                               const int64_t* pp, const double* lo, double* out,
                               double gm) noexcept nogil:
    # c <= GD_LANES draws of one kernel for the rows pb (written at _gw_at(pp, pb[r]))
    cdef int64_t jb[GD_LANES]
    cdef int r
    cdef Py_ssize_t d
    _gw_idx_chunk(bg, R, ib, nb, c, jb)
    for r in range(c):
        d = _gw_at(pp, pb[r])
        out[d] = lo[d] + (<double> jb[r]) * gm


def gw_fill_groups(object gen, list laws, const int32_t[::1] group, const int64_t[::1] idx,
                   const double[::1] lo, const int64_t[::1] nrow, double[::1] out,
                   const int64_t[::1] counts, pos=None, remap=None):
    """Windowed grid draws for rows of several kernels: ``laws[k]`` the kernel of group k,
    ``(tree, levels, N, tailw, sbits, tm, e)`` as for :func:`gw_fill`; ``group[a]`` row a's
    kernel and ``counts[k]`` the rows of kernel k (:func:`gw_rows_kernels`), ``idx[a]`` the
    grid index of row a's true value (:func:`gw_rows_grid`), ``lo[a]`` its lower bound,
    ``nrow[a]`` its intervals. Draws kernel by kernel, each kernel's rows in row order
    (blocks of GD_LANES from its first row): the draws of one :func:`gw_fill` per kernel on
    its rows. Kernel 0's rows are drawn in the pass that checks every row and copies the
    other rows' (index, n, position) kernel by kernel (one sequential write stream per
    kernel); those are drawn next and written back by position. With ``pos`` (int64, one
    per row, distinct), row a is a row of the column: its lower bound ``lo[pos[a]]``, its
    draw written to ``out[pos[a]]`` (``lo`` and ``out`` of the column's length). With
    ``remap`` (int32), row a's kernel is ``remap[group[a]]``: groups of one table drawn as
    one (``laws`` and ``counts`` then of the merged groups)."""
    cdef Py_ssize_t a, k, total = group.shape[0], ng = len(laws), c, p, d, mo = out.shape[0]
    cdef const int64_t[::1] pv
    cdef const int64_t* pp = NULL
    cdef const int32_t[::1] rmv
    cdef const int32_t* rm = NULL
    cdef Py_ssize_t nr0 = ng
    if remap is not None:
        rmv = remap
        nr0 = rmv.shape[0]
        for k in range(nr0):
            if rmv[k] < 0 or rmv[k] >= ng:
                raise ValueError("grid law: a merged kernel out of range")
        if nr0:
            rm = &rmv[0]
    if pos is None:
        if mo != total:
            raise ValueError("grid law: per-row arrays of different lengths")
    else:
        pv = pos
        if pv.shape[0] != total:
            raise ValueError("grid law: per-row arrays of different lengths")
        if total:
            pp = &pv[0]
    if (idx.shape[0] != total or lo.shape[0] != mo or nrow.shape[0] != total
            or counts.shape[0] != ng):
        raise ValueError("grid law: per-row arrays of different lengths")
    if total == 0:
        return
    cdef int bad = 0
    if pp != NULL:
        with nogil:
            for a in range(total):
                if pp[a] < 0 or pp[a] >= mo:
                    bad = 1
                    break
        if bad:
            raise ValueError("grid law: a row position outside the column")
    bit_gen = gen.bit_generator
    cdef bitgen_t* bg = _borrow(bit_gen)
    cdef gw_rows_t* R = <gw_rows_t*> calloc(ng + 1, sizeof(gw_rows_t))
    cdef double* gam = <double*> malloc(ng * sizeof(double) + 1)
    cdef Py_ssize_t* start = <Py_ssize_t*> malloc((ng + 1) * sizeof(Py_ssize_t))
    cdef Py_ssize_t* ptr = <Py_ssize_t*> malloc((ng + 1) * sizeof(Py_ssize_t))
    cdef gw_row_in_t* rows = NULL
    cdef double* jv = NULL
    cdef int64_t ib[GD_LANES]
    cdef int64_t nb[GD_LANES]
    cdef int64_t jb[GD_LANES]
    cdef Py_ssize_t pb[GD_LANES]
    cdef Py_ssize_t rest, seen = 0
    cdef int r, lev, sb, err = 0
    cdef int64_t g, nr, ia
    cdef double gm
    keep = []
    try:
        if R == NULL or gam == NULL or start == NULL or ptr == NULL:
            raise MemoryError()
        start[0] = 0
        for k in range(ng):
            tree, lev, N, tailw, sb, tm, e = laws[k]
            keep.append(tree)
            _gw_rows_law(&R[k], tree, lev, N, tailw, sb, tm, e)
            gam[k] = ldexp(1.0, e)
            if counts[k] < 0:
                raise ValueError("grid law: inconsistent kernel counts")
            start[k + 1] = start[k] + counts[k]
        if start[ng] != total:
            raise ValueError("grid law: inconsistent kernel counts")
        for k in range(ng):
            _gw_guide(&R[k], counts[k])      # kernels drawn often enough: a guide
        if ng == 1:
            # one kernel: its rows are all the rows, in row order
            with nogil:
                for a in range(total):
                    nr = nrow[a]
                    g = group[a]
                    if rm != NULL:
                        g = rm[g] if 0 <= g < nr0 else -1
                    if (g != 0 or nr < 1 or nr > GW_MAX_ROW
                            or (R[0].tailw == 0 and nr > R[0].N) or idx[a] < 0 or idx[a] > nr):
                        err = 1
                        break
            if err:
                raise ValueError("grid law: a row the table does not serve")
            gm = gam[0]
            with bit_gen.lock, nogil:
                p = 0
                while p < total:
                    c = GD_LANES if total - p >= GD_LANES else total - p
                    _gw_idx_chunk(bg, &R[0], &idx[p], &nrow[p], <int> c, jb)
                    for r in range(c):
                        d = _gw_at(pp, p + r)
                        out[d] = lo[d] + (<double> jb[r]) * gm
                    p += c
            return
        # kernel 0 is drawn first: its rows are drawn in row order (blocks of GD_LANES)
        # in the pass that checks every row and copies the other kernels' rows, kernel by
        # kernel with their positions; those are drawn next and written back by position.
        # A failed check (arrays inconsistent with counts) ends the pass: nothing is
        # returned, though the generator may have advanced.
        rest = total - counts[0]
        rows = <gw_row_in_t*> malloc((rest + 1) * sizeof(gw_row_in_t))
        if rows == NULL:
            raise MemoryError()
        with bit_gen.lock, nogil:
            for k in range(ng + 1):
                ptr[k] = start[k] - counts[0]
            gm = gam[0]
            c = 0
            for a in range(total):
                g = group[a]
                if rm != NULL:
                    g = rm[g] if 0 <= g < nr0 else -1
                nr = nrow[a]
                ia = idx[a]
                if g < 0 or g >= ng:
                    err = 1
                    break
                if (nr < 1 or nr > GW_MAX_ROW or (R[g].tailw == 0 and nr > R[g].N)
                        or ia < 0 or ia > nr):
                    err = 1
                    break
                if g == 0:
                    pb[c] = a
                    ib[c] = ia
                    nb[c] = nr
                    c += 1
                    seen += 1
                    if c == GD_LANES:
                        _gw_block_out(bg, &R[0], ib, nb, <int> c, pb, pp, &lo[0], &out[0], gm)
                        c = 0
                    continue
                d = ptr[g]
                if d >= start[g + 1] - counts[0]:
                    err = 1
                    break
                ptr[g] = d + 1
                rows[d].i = ia
                rows[d].n = nr
                rows[d].a = a
            if err == 0 and seen != counts[0]:
                err = 1
            if err == 0:
                if c:
                    _gw_block_out(bg, &R[0], ib, nb, <int> c, pb, pp, &lo[0], &out[0], gm)
                for k in range(1, ng):
                    p = start[k] - counts[0]
                    while p < start[k + 1] - counts[0]:
                        c = (GD_LANES if start[k + 1] - counts[0] - p >= GD_LANES
                             else start[k + 1] - counts[0] - p)
                        for r in range(c):
                            ib[r] = rows[p + r].i
                            nb[r] = rows[p + r].n
                        _gw_idx_chunk(bg, &R[k], ib, nb, <int> c, jb)
                        for r in range(c):
                            rows[p + r].i = jb[r]
                        p += c
        if err:
            raise ValueError("grid law: a row the table does not serve")
        # written back in row order, not kernel by kernel: the offsets j * gamma are put
        # at their rows' places in a buffer of the rows' length (in cache), then added to
        # the rows' lower bounds in one ascending pass over the column, so that a row of
        # the column is read and written in address order whatever its kernel
        jv = <double*> malloc(total * sizeof(double) + 1)
        if jv == NULL:
            raise MemoryError()
        with nogil:
            for k in range(1, ng):
                gm = gam[k]
                for d in range(start[k] - counts[0], start[k + 1] - counts[0]):
                    jv[rows[d].a] = (<double> rows[d].i) * gm
            for a in range(total):
                g = group[a] if rm == NULL else rm[group[a]]
                if g != 0:
                    d = _gw_at(pp, a)
                    out[d] = lo[d] + jv[a]
    finally:
        free(jv)
        if R != NULL:
            for k in range(ng):
                free(<void*> R[k].guide)
        free(R)
        free(gam)
        free(start)
        free(ptr)
        free(rows)


cdef enum:
    GW_FIRST_CHUNK = 2048           # rows per chunk of gw_rows_first (its buffers: 50 KB)

cdef int64_t _GW_I64_MAX = 0x7fffffffffffffff


cdef int _gw_grow(int64_t** arrs, int k, Py_ssize_t* cap) noexcept nogil:
    # double the capacity of k int64 arrays (-1: out of memory; the arrays stay valid)
    cdef Py_ssize_t c = 2 * cap[0]
    cdef int i
    cdef int64_t* p
    for i in range(k):
        p = <int64_t*> realloc(arrs[i], c * sizeof(int64_t))
        if p == NULL:
            return -1
        arrs[i] = p
    cap[0] = c
    return 0


def gw_rows_first(object gen, tuple law, int64_t e0, int64_t nmin0, double target, double dq,
                  const double[::1] lo, const double[::1] hi, const double[::1] q,
                  double scale_steps, double width_steps, double sens_steps, double[::1] out,
                  const unsigned char[::1] served=None):
    """The first kernel of a per-row release, drawn in the pass that finds every row's
    grid: the rows of exponent ``e0`` with at least ``nmin0`` intervals, and those of
    ``n < nmin0`` intervals where ``served[n]`` is nonzero (``served``: None, or uint8 of
    length ``nmin0``), whose kernel
    ``law`` (``(tree, levels, N, tailw, sbits, tm, e)`` as for :func:`gw_fill`) is drawn
    first, are drawn in row order in blocks of GD_LANES (the draws of :func:`gw_fill` on
    those rows) into ``out``; every other row is left to the caller. Chunk by chunk, in
    cache: the grid pass of :func:`gw_rows_grid` with true values ``q``, then the rows.

    Returns ``(pos, e, n, idx, evals, nmax, summary)``: the rows left (positions, int64)
    with their exponents, interval counts and grid indices, and over all rows the items
    of :func:`gw_rows_grid`: the distinct exponents in [-1022, 1000] with their rows'
    largest ``n``, and ``(min e, max e, any coarse row, min n)`` (None without rows). A
    row whose exponent or intervals the release refuses is always left to the caller; the
    rows drawn before the caller refuses it have advanced the generator."""
    cdef Py_ssize_t m = out.shape[0]
    if lo.shape[0] != m or hi.shape[0] != m or q.shape[0] != m:
        raise ValueError("gw_rows_first: arrays of different lengths")
    cdef int64_t nmx[2023]
    cdef int64_t agg[4]
    cdef int64_t tot[4]
    cdef Py_ssize_t k, s, a, c, cap = max(1024, m // 8), used = 0
    for k in range(2023):
        nmx[k] = -2
    cdef gw_rows_t R
    tree, lev, N, tailw, sb, tm, e = law
    if e != e0:
        raise ValueError("gw_rows_first: the kernel's exponent is not e0")
    _gw_rows_law(&R, tree, lev, N, tailw, sb, tm, e)
    cdef double gm = ldexp(1.0, e)
    cdef int64_t eb[GW_FIRST_CHUNK]
    cdef int64_t nbk[GW_FIRST_CHUNK]
    cdef int64_t ibk[GW_FIRST_CHUNK]
    cdef unsigned char cb[GW_FIRST_CHUNK]
    cdef int64_t ib[GD_LANES]
    cdef int64_t nb[GD_LANES]
    cdef Py_ssize_t pb[GD_LANES]
    cdef int nl = 0, err = 0
    cdef int64_t nr, ia
    cdef int64_t* left[4]            # positions, e, n, idx of the rows left
    cdef double a0 = dq / target / scale_steps
    cdef const unsigned char* sv = NULL
    if served is not None:
        if served.shape[0] != nmin0:
            raise ValueError("gw_rows_first: the served rows' map is not of length nmin0")
        if nmin0 > 0:
            sv = &served[0]
    tot[0] = _GW_I64_MAX
    tot[1] = -_GW_I64_MAX - 1
    tot[2] = 0
    tot[3] = _GW_I64_MAX
    for k in range(4):
        left[k] = <int64_t*> malloc(cap * sizeof(int64_t))
    bit_gen = gen.bit_generator
    cdef bitgen_t* bg = _borrow(bit_gen)
    try:
        if left[0] == NULL or left[1] == NULL or left[2] == NULL or left[3] == NULL:
            raise MemoryError()
        _gw_guide(&R, m)
        with bit_gen.lock, nogil:
            s = 0
            while s < m:
                c = GW_FIRST_CHUNK if m - s >= GW_FIRST_CHUNK else m - s
                bndp_gw_rows_grid(&lo[s], &hi[s], &q[s], c, a0, dq, width_steps, sens_steps,
                                  GW_MAX_ROW, eb, cb, nbk, ibk, nmx, agg)
                tot[0] = agg[0] if agg[0] < tot[0] else tot[0]
                tot[1] = agg[1] if agg[1] > tot[1] else tot[1]
                tot[2] |= agg[2]
                tot[3] = agg[3] if agg[3] < tot[3] else tot[3]
                for k in range(c):
                    a = s + k
                    nr = nbk[k]
                    ia = ibk[k]
                    if (eb[k] == e0 and nr <= GW_MAX_ROW and ia >= 0 and ia <= nr
                            and (nr >= nmin0 or (sv != NULL and nr >= 1 and sv[nr] != 0))
                            and (R.tailw != 0 or nr <= R.N)):
                        pb[nl] = a
                        ib[nl] = ia
                        nb[nl] = nr
                        nl += 1
                        if nl == GD_LANES:
                            _gw_block_out(bg, &R, ib, nb, nl, pb, NULL, &lo[0], &out[0], gm)
                            nl = 0
                        continue
                    if used == cap and _gw_grow(left, 4, &cap) < 0:
                        err = 1
                        break
                    left[0][used] = a
                    left[1][used] = eb[k]
                    left[2][used] = nr
                    left[3][used] = ia
                    used += 1
                if err:
                    break
                s += c
            if not err and nl:
                _gw_block_out(bg, &R, ib, nb, nl, pb, NULL, &lo[0], &out[0], gm)
        if err:
            raise MemoryError()
        res = []
        for k in range(4):
            arr = _np.empty(used, dtype=_np.int64)
            if used:
                memcpy(_cnp.PyArray_DATA(arr), left[k], used * sizeof(int64_t))
            res.append(arr)
    finally:
        free(<void*> R.guide)
        for k in range(4):
            free(left[k])
    evals = [k - 1022 for k in range(2023) if nmx[k] != -2]
    nmax = [nmx[k] for k in range(2023) if nmx[k] != -2]
    summary = (tot[0], tot[1], bool(tot[2]), tot[3]) if m else None
    return (res[0], res[1], res[2], res[3], _np.array(evals, dtype=_np.int64),
            _np.array(nmax, dtype=_np.int64), summary)


def rows_bounds_ok(const double[::1] lo, const double[::1] hi):
    """True iff every row has finite bounds with ``lo < hi`` (one pass; the fast path of
    the per-row bounds check, whose slow path words the error)."""
    if hi.shape[0] != lo.shape[0]:
        raise ValueError("rows_bounds_ok: arrays of different lengths")
    cdef int ok = 1
    if lo.shape[0]:
        with nogil:
            ok = bndp_rows_bounds_ok(&lo[0], &hi[0], lo.shape[0])
    return bool(ok)


def rows_inside(const double[::1] q, const double[::1] lo, const double[::1] hi,
                bint strict=False):
    """True iff every row has finite bounds and ``lo <= q <= hi`` (one pass; NaN fails);
    ``strict``: and ``lo < hi`` (both per-row checks of a release at once)."""
    if hi.shape[0] != lo.shape[0] or q.shape[0] != lo.shape[0]:
        raise ValueError("rows_inside: arrays of different lengths")
    cdef int ok = 1
    if lo.shape[0]:
        with nogil:
            ok = bndp_rows_inside(&q[0], &lo[0], &hi[0], lo.shape[0], strict)
    return bool(ok)


def gw_any_width(const double[::1] lo, const double[::1] hi, double w):
    """Whether some row has ``hi - lo >= w`` (rounded; stops at the first block of rows
    that has one)."""
    cdef Py_ssize_t m = lo.shape[0]
    if hi.shape[0] != m:
        raise ValueError("gw_any_width: arrays of different lengths")
    cdef int any = 0
    if m:
        with nogil:
            any = bndp_any_width(&lo[0], &hi[0], m, w)
    return bool(any)


cdef int _search_variant_rows(int v) noexcept:
    # this module's choice of table search: set to v (v >= 0), returns the previous one
    cdef int old = bndp_gd_variant
    if v >= 0:
        _search_variant_swap(v)
    return old
