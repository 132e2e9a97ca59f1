# cython: language_level=3, boundscheck=False, wraparound=False, cdivision=True, initializedcheck=False
"""Kernels of the estimation layer (``bndp.estimation``): the scaled model of per-row bounds
places positions in ``[0, 1]`` on rows ``[lower, upper]`` and reads the values on an equally
spaced grid, each value shared between its two nearest grid values by linear interpolation
(``bndp.estimation._scaled``). These loops do that placement without the ``(rows x
positions)`` temporaries of the NumPy expression it replaces (10^6 rows, 200 positions:
2 x 10^8 values a call).

Every function takes inputs validated by its caller (float64 buffers, finite, indices in
range) and adds into a caller-allocated C-contiguous output. The arithmetic is that of the
NumPy expression ``f = clip((lower + u * (upper - lower) - x0) / step, 0, X - 1)``,
``k = min(floor(f), X - 2)``, ``t = f - k``, the weight ``w (1 - t)`` at ``k`` and ``w t``
at ``k + 1``, operation for operation (the extension is built without contraction into
fused multiply-adds); only the order in which the shares are summed into a grid value
differs (rounding of the last bits of a sum).

The EM's two products with the binned law of a two-sided geometric kernel (the Laplace
mechanism's, ``bndp.estimation._law._Geometric``) run in O(support) per row instead of
O(support x band): the law is semiseparable (its entries off the diagonal are a product of
a factor of the bin and one of the support point), so each product is two running sums."""

from libc.math cimport sqrt
from libc.stdint cimport int64_t
from libc.stdlib cimport free, malloc
from libc.string cimport memcpy


from bndp._core.common cimport _em_ratio_pass

cdef enum:
    # rows placed per block (their bounds and weights stay in cache while every position
    # is placed on them)
    ROW_BLOCK = 2048


cdef inline void _share(double x, double x0, double step, double top, Py_ssize_t X,
                        double w, double* out) noexcept nogil:
    # the weight w of the value x, shared between its two nearest grid values
    cdef double f = (x - x0) / step
    cdef Py_ssize_t k
    cdef double t
    if not f >= 0.0:             # (a NaN too: never an index outside the grid)
        f = 0.0
    elif f > top:
        f = top
    k = <Py_ssize_t>f            # f >= 0: truncation is floor
    if k > X - 2:
        k = X - 2
    t = f - <double>k
    out[k] += w * (1.0 - t)
    out[k + 1] += w * t


def place_positions(const double[::1] u, const double[::1] lower, const double[::1] upper,
                    const double[::1] weight, double x0, double step, double[:, ::1] out):
    """``out[m, k] +=`` the weight of every row ``(lower[r], upper[r])`` (``weight[r]``)
    whose position ``u[m]`` falls at the grid value ``x0 + k step``: each row's value
    ``lower + u[m] (upper - lower)`` shared between its two nearest grid values by linear
    interpolation (``out``: positions x grid values, at least 2 grid values)."""
    cdef Py_ssize_t M = u.shape[0], X = out.shape[1], n = lower.shape[0]
    cdef Py_ssize_t a, b, r, m
    cdef double top = <double>(X - 1)
    cdef double um
    cdef double* row
    if out.shape[0] != M or upper.shape[0] != n or weight.shape[0] != n or X < 2:
        raise ValueError("place_positions: inconsistent shapes")
    with nogil:
        a = 0
        while a < n:
            b = a + ROW_BLOCK if a + ROW_BLOCK < n else n
            for m in range(M):
                um = u[m]
                row = &out[m, 0]
                for r in range(a, b):
                    _share(lower[r] + um * (upper[r] - lower[r]), x0, step, top, X,
                           weight[r], row)
            a = b


def place_rows(const double[::1] u, const int64_t[::1] pos, const double[::1] lower,
               const double[::1] width, double x0, double step, double[::1] out):
    """``out[k] +=`` one unit for each row ``r``, whose value ``lower[r] + u[pos[r]]
    width[r]`` is shared between its two nearest grid values ``x0 + k step`` by linear
    interpolation (``out``: the grid, at least 2 values; ``pos`` indices into ``u``)."""
    cdef Py_ssize_t X = out.shape[0], n = lower.shape[0], M = u.shape[0], r
    cdef double top = <double>(X - 1)
    cdef bint bad = False
    if pos.shape[0] != n or width.shape[0] != n or X < 2:
        raise ValueError("place_rows: inconsistent shapes")
    with nogil:
        for r in range(n):
            if pos[r] < 0 or pos[r] >= M:
                bad = True
    if bad:
        raise ValueError("place_rows: a position index outside u")
    with nogil:
        for r in range(n):
            _share(lower[r] + u[pos[r]] * width[r], x0, step, top, X, 1.0, &out[0])


def band_counts(const int64_t[:, ::1] draws, const int64_t[::1] rows, Py_ssize_t K,
                double[::1] out):
    """Adds ``draws[i, j]`` into ``out[rows[i] + j - K]`` wherever that index lies in
    ``out`` (``draws``: one row of counts over the offsets ``-K..K`` per entry of ``rows``):
    the bootstrap's bin counts of a column from each support point's released values
    (``bndp.estimation._law._release_counts``). Counts below 2^53: every sum is exact, in
    any order."""
    cdef Py_ssize_t n = draws.shape[0], W = draws.shape[1], M = out.shape[0], i, j, lo, hi
    cdef int64_t r
    cdef bint bad = False
    if not (rows.shape[0] == n and K >= 0 and W == 2 * K + 1):
        raise ValueError("band_counts: inconsistent shapes")
    with nogil:
        for i in range(n):
            if rows[i] < 0 or rows[i] >= M:
                bad = True
    if bad:
        raise ValueError("band_counts: a row index outside out")
    with nogil:
        for i in range(n):
            r = rows[i] - K
            lo = -r if r < 0 else 0
            hi = M - r if M - r < W else W
            for j in range(lo, hi):
                out[r + j] += <double>draws[i, j]


#: rows of the coefficient matrix of the geometric products (``_law._Geometric``): with
#: ``q^k`` the kernel's weight at offset ``k``, ``lo``/``hi`` the bins' first and last fine
#: indices and ``s`` the support's
cdef enum:
    C_DIAG = 0      # the mass of point m's own bin, relative to the kernel's centre
    C_INVZ = 1      # 1 / (the mass of point m's column on the whole row)
    C_E = 2         # (1 - q^width_b) / (1 - q): a bin's mass, relative to its nearest index
    C_UP = 3        # q^(lo_b - lo_{b-1})
    C_UPIN = 4      # q^(lo_b - s_{b-1})
    C_DN = 5        # q^(hi_{b+1} - hi_b)
    C_DNIN = 6      # q^(s_{b+1} - hi_b)
    C_SS = 7        # q^(s_{m+1} - s_m)
    C_ROWS = 8


cdef inline void _fwd(const double* g, const double[:, ::1] c, double* f, double* t,
                      Py_ssize_t M) noexcept nogil:
    # f <- A g (one row; t: scratch of M): F_b = g'_b diag_b + e_b (U_b + V_b), g' = g / Z,
    # U_b = sum_{m<b} g'_m q^(lo_b - s_m) = q^(lo_b - lo_{b-1}) U_{b-1} + q^(lo_b - s_{b-1}) g'_{b-1},
    # V_b = sum_{m>b} g'_m q^(s_m - hi_b) = q^(hi_{b+1} - hi_b) V_{b+1} + q^(s_{b+1} - hi_b) g'_{b+1};
    # the two running sums in one loop (independent: the loop is bound by a sum's latency)
    cdef Py_ssize_t i, b, a
    cdef double u = 0.0, v = 0.0
    f[0] = 0.0
    t[M - 1] = 0.0
    for i in range(1, M):
        b = i
        a = M - 1 - i
        u = c[C_UP, b] * u + c[C_UPIN, b] * (g[b - 1] * c[C_INVZ, b - 1])
        v = c[C_DN, a] * v + c[C_DNIN, a] * (g[a + 1] * c[C_INVZ, a + 1])
        f[b] = u
        t[a] = v
    for b in range(M):
        f[b] = g[b] * c[C_INVZ, b] * c[C_DIAG, b] + c[C_E, b] * (f[b] + t[b])


cdef inline void _bwd(const double* p, const double[:, ::1] c, double* d, double* t,
                      Py_ssize_t M) noexcept nogil:
    # d <- A^T p (one row; t: scratch of M): d_m = (p_m diag_m + Y_m + X_m) / Z_m, r' = p e,
    # Y_m = sum_{b<m} r'_b q^(s_m - hi_b) = q^(s_m - s_{m-1}) Y_{m-1} + q^(s_m - hi_{m-1}) r'_{m-1},
    # X_m = sum_{b>m} r'_b q^(lo_b - s_m) = q^(s_{m+1} - s_m) X_{m+1} + q^(lo_{m+1} - s_m) r'_{m+1}
    cdef Py_ssize_t i, m, a
    cdef double x = 0.0, y = 0.0
    d[0] = 0.0
    t[M - 1] = 0.0
    for i in range(1, M):
        m = i
        a = M - 1 - i
        y = c[C_SS, m - 1] * y + c[C_DNIN, m - 1] * (p[m - 1] * c[C_E, m - 1])
        x = c[C_SS, a] * x + c[C_UPIN, a + 1] * (p[a + 1] * c[C_E, a + 1])
        d[m] = y
        t[a] = x
    for m in range(M):
        d[m] = (p[m] * c[C_DIAG, m] + d[m] + t[m]) * c[C_INVZ, m]


cdef inline double _em1(const double* g, const double* p, const double[:, ::1] c,
                        Py_ssize_t M, double* f, double* t, double* out,
                        double* dmax) noexcept nogil:
    # one EM step of one row (f, t: scratch of M): out <- g d, d = A^T (p / max(Ag, 1e-300)),
    # *dmax <- max_m d_m; returns the log-likelihood sum_b p_b log max((Ag)_b, 1e-300) (a
    # bin with p_b = 0 adds nothing: its term is 0 x a finite log)
    cdef Py_ssize_t m
    cdef double L, x
    _fwd(g, c, f, t, M)
    L = _em_ratio_pass(p, f, M)       # the floor, the logarithms, the ratio: vectorised
    _bwd(f, c, out, t, M)
    x = out[0]
    for m in range(M):
        x = out[m] if out[m] > x else x
    dmax[0] = x
    for m in range(M):
        out[m] = g[m] * out[m]
    return L


cdef _products(const double[:, ::1] X, const double[:, ::1] c, double[:, ::1] out,
               bint forward, str name):
    # geometric_forward / geometric_backward: each row of X through _fwd or _bwd
    cdef Py_ssize_t R = X.shape[0], M = X.shape[1], r
    cdef double* t
    if not (c.shape[0] == C_ROWS and c.shape[1] == M and out.shape[0] == R
            and out.shape[1] == M):
        raise ValueError(f"{name}: inconsistent shapes")
    if R == 0 or M == 0:
        return
    t = <double*>malloc(M * sizeof(double))
    if t == NULL:
        raise MemoryError()
    with nogil:
        for r in range(R):
            if forward:
                _fwd(&X[r, 0], c, &out[r, 0], t, M)
            else:
                _bwd(&X[r, 0], c, &out[r, 0], t, M)
    free(t)


def geometric_forward(const double[:, ::1] G, const double[:, ::1] c, double[:, ::1] out):
    """``out = G @ A.T`` (rows x bins) for the binned law ``A`` of a two-sided geometric
    kernel, from its coefficients ``c`` (``C_ROWS`` x support; ``_law._Geometric``): two
    running sums per row (every factor a power ``q^k``, ``k >= 0``, of ``q < 1``: nothing
    overflows)."""
    _products(G, c, out, True, "geometric_forward")


def geometric_backward(const double[:, ::1] R_, const double[:, ::1] c, double[:, ::1] out):
    """``out = R @ A`` (rows x support) for the binned law ``A`` of a two-sided geometric
    kernel (coefficients ``c`` as :func:`geometric_forward`'s): two running sums per row."""
    _products(R_, c, out, False, "geometric_backward")


def geometric_em(const double[:, ::1] G, const double[:, ::1] P, const double[:, ::1] c,
                 double[:, ::1] out, double[::1] L, double[::1] dmax):
    """One EM step for every row of ``G`` (distributions on the support) against the bin
    proportions ``P``, for the binned law of a two-sided geometric kernel (coefficients
    ``c`` as :func:`geometric_forward`'s): ``out = G d`` with ``d = A^T (P / AG)``,
    ``L`` the log-likelihood per observation of ``G`` (``sum_b P_b log (AG)_b``, ``AG``
    floored at 1e-300) and ``dmax`` the largest ``d`` of each row: the NumPy step of
    ``bndp.estimation._em._em`` without its temporaries (its sums in order: rounding of
    their last bits)."""
    cdef Py_ssize_t R = G.shape[0], M = G.shape[1], r
    cdef double* buf
    if not (c.shape[0] == C_ROWS and c.shape[1] == M and P.shape[0] == R
            and P.shape[1] == M and out.shape[0] == R and out.shape[1] == M
            and L.shape[0] == R and dmax.shape[0] == R):
        raise ValueError("geometric_em: inconsistent shapes")
    if R == 0 or M == 0:
        return
    buf = <double*>malloc(2 * M * sizeof(double))
    if buf == NULL:
        raise MemoryError()
    with nogil:
        for r in range(R):
            L[r] = _em1(&G[r, 0], &P[r, 0], c, M, buf, buf + M, &out[r, 0], &dmax[r])
    free(buf)


cdef void _extrapolate(const double* g0, const double* g1, const double* g2, double* r,
                       double* v, double* gp, Py_ssize_t M) noexcept nogil:
    # SQUAREM's extrapolation of one row (r, v: scratch of M): gp = g0 - 2 a r + a^2 v,
    # r = g1 - g0, v = g2 - g1 - r, a = min(-|r| / |v|, -1) (-1 where |v| = 0 or a is
    # NaN), shortened toward -1 (g2) up to 6 times until non-negative, else g2; normalised
    cdef double sr = 0.0, sv = 0.0, alpha, total = 0.0
    cdef Py_ssize_t m
    cdef int k = 0
    cdef bint neg = False
    for m in range(M):
        r[m] = g1[m] - g0[m]
        v[m] = g2[m] - g1[m] - r[m]
        sr += r[m] * r[m]
        sv += v[m] * v[m]
    sr = sqrt(sr)
    sv = sqrt(sv)
    alpha = -sr / sv if sv > 0.0 else -1.0
    if not alpha <= -1.0:
        alpha = -1.0
    for m in range(M):
        gp[m] = g0[m] - 2.0 * alpha * r[m] + (alpha * alpha) * v[m]
        neg = neg or gp[m] < 0.0
    while neg and k < 6:
        k += 1
        alpha = (alpha - 1.0) / 2.0
        neg = False
        for m in range(M):
            gp[m] = g0[m] - 2.0 * alpha * r[m] + (alpha * alpha) * v[m]
            neg = neg or gp[m] < 0.0
    if neg:
        for m in range(M):
            gp[m] = g2[m]
    for m in range(M):
        total += gp[m]
    for m in range(M):
        gp[m] /= total


def squarem_extrapolate(const double[:, ::1] G0, const double[:, ::1] G1,
                        const double[:, ::1] G2, double[:, ::1] out):
    """SQUAREM's extrapolation (``bndp.estimation._em._squarem``) of every row, from its
    iterate ``G0`` and two EM steps ``G1``, ``G2``: ``out = G0 - 2 a r + a^2 v`` with
    ``r = G1 - G0``, ``v = G2 - G1 - r``, ``a = min(-|r| / |v|, -1)`` (-1 where ``|v| =
    0``), shortened toward -1 (``G2``) up to six times until non-negative, else ``G2``;
    normalised. One pass per row, without NumPy's temporaries."""
    cdef Py_ssize_t R = G0.shape[0], M = G0.shape[1], i
    cdef double* w
    if not (G1.shape[0] == R and G2.shape[0] == R and out.shape[0] == R
            and G1.shape[1] == M and G2.shape[1] == M and out.shape[1] == M):
        raise ValueError("squarem_extrapolate: inconsistent shapes")
    if R == 0 or M == 0:
        return
    w = <double*>malloc(2 * M * sizeof(double))
    if w == NULL:
        raise MemoryError()
    with nogil:
        for i in range(R):
            _extrapolate(&G0[i, 0], &G1[i, 0], &G2[i, 0], w, w + M, &out[i, 0], M)
    free(w)


def em_ratio(const double[:, ::1] F, const double[:, ::1] P, double[:, ::1] out,
             double[::1] L):
    """The EM step's middle (``bndp.estimation._em._em``) for every row: ``out = P /
    max(F, 1e-300)`` and ``L = sum_b P_b log max(F_b, 1e-300)`` (a bin with ``P_b = 0``
    adds nothing: its term is 0 x a finite log), one vectorised pass per row: the
    logarithm bndp's branch-free one (within an ulp of libm's), the sum in four
    interleaved parts. ``out`` may be ``F``."""
    cdef Py_ssize_t R = F.shape[0], M = F.shape[1], i
    if not (P.shape[0] == R and P.shape[1] == M and out.shape[0] == R
            and out.shape[1] == M and L.shape[0] == R):
        raise ValueError("em_ratio: inconsistent shapes")
    if R == 0 or M == 0:
        L[:] = 0.0
        return
    with nogil:
        for i in range(R):
            if &out[i, 0] != &F[i, 0]:
                memcpy(&out[i, 0], &F[i, 0], M * sizeof(double))
            L[i] = _em_ratio_pass(&P[i, 0], &out[i, 0], M)


cdef int _squarem1(double* g0, const double* p, const double[:, ::1] c, Py_ssize_t M,
                   double thr, double gthr, bint use_gthr, int cycles, double* w,
                   bint* stopped) noexcept nogil:
    # SQUAREM cycles on one row g0 in place (w: scratch of 7 M), as
    # bndp.estimation._em._squarem does on each of its rows; returns the cycles used and
    # sets *stopped where the row met its rule
    cdef double* g1 = w
    cdef double* g2 = w + M
    cdef double* r = w + 2 * M
    cdef double* v = w + 3 * M
    cdef double* gp = w + 4 * M
    cdef double* f = w + 5 * M
    cdef double* t = w + 6 * M
    cdef double l0, l1, lp, d0, dm
    cdef int used = 0
    stopped[0] = False
    while used < cycles:
        used += 1
        l0 = _em1(g0, p, c, M, f, t, g1, &d0)
        l1 = _em1(g1, p, c, M, f, t, g2, &dm)
        _extrapolate(g0, g1, g2, r, v, gp, M)
        lp = _em1(gp, p, c, M, f, t, g0, &dm)
        if lp < l1:                     # the extrapolation lost likelihood: the double step
            _em1(g2, p, c, M, f, t, g0, &dm)
            lp = l1
        if lp - l0 < thr and (not use_gthr or d0 - 1.0 < gthr):
            stopped[0] = True
            break
    return used


def geometric_squarem(double[:, ::1] G, const double[:, ::1] P, const double[:, ::1] c,
                      const int64_t[::1] act, unsigned char[::1] done, double thr,
                      double gthr, bint use_gthr, int cycles):
    """SQUAREM cycles (``bndp.estimation._em._squarem``, the same steps and rules) on the
    rows ``act`` of ``G`` in place, for the binned law of a two-sided geometric kernel
    (coefficients ``c`` as :func:`geometric_forward`'s), each row until one cycle gains less
    than ``thr`` per observation (and, with ``use_gthr``, its start's bound ``max_m d_m -
    1`` is below ``gthr``), marking it in ``done``; at most ``cycles`` cycles a row. The
    rows are independent, so each runs its cycles alone (NumPy's batch runs them together:
    the same iterates, to the rounding of its sums). Returns the cycles left: ``cycles``
    less the most any row used."""
    cdef Py_ssize_t R = G.shape[0], M = G.shape[1], n = act.shape[0], i, rr
    cdef double* w
    cdef int used, most = 0
    cdef bint stopped
    cdef bint bad = False
    if not (c.shape[0] == C_ROWS and c.shape[1] == M and P.shape[0] == R
            and P.shape[1] == M and done.shape[0] == R):
        raise ValueError("geometric_squarem: inconsistent shapes")
    with nogil:
        for i in range(n):
            if act[i] < 0 or act[i] >= R:
                bad = True
    if bad:
        raise ValueError("geometric_squarem: a row index outside G")
    if n == 0 or cycles <= 0:
        return cycles
    w = <double*>malloc(7 * M * sizeof(double))
    if w == NULL:
        raise MemoryError()
    with nogil:
        for i in range(n):
            rr = act[i]
            used = _squarem1(&G[rr, 0], &P[rr, 0], c, M, thr, gthr, use_gthr, cycles, w,
                             &stopped)
            if stopped:
                done[rr] = 1
            if used > most:
                most = used
    free(w)
    return cycles - most
