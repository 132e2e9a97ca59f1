# Kernels of the windowed grid law (mechanisms/window.py): the default release of the
# bounded Laplace and the univariate bounded Gaussian, one table for every row whose width
# it serves, per-row bounds without limit.
#
# The law. A row is an interval [lo, hi] with n = floor((hi - lo) / gamma) grid intervals,
# gamma = 2^e; its outputs are fl(lo + j gamma), j = 0..n (lo is public, so the attainable
# set does not depend on the true value). The kernel w(d), d in Z, is the integer table
# W[d + N] = rint(2^K kernel(d)), |d| <= N (kernel exp(-|d|/t) or exp(-d^2/(2 t^2))), and,
# when the table does not cover the row, a geometric tail on each side:
# w(+-(N + k)) = B (m 2^-s) p^(k - 1), k >= 1, p = 1 - m 2^-s, of integer total B per side.
# For input index i, P(j | i) = w(j - i) / S(i), S(i) = sum_{j=0..n} w(j - i).
#
# A draw: U uniform below the mass of the table window [max(-i, -N), min(n - i, N)] plus a
# whole tail block B on each side that the window does not reach (Lemire), then the table
# search of _grid_search.h, or (probability about 2^-24 at most) the geometric offset of a
# tail block; a tail offset beyond the row's end is refused and the row drawn again
# (rejection: the conditional law is exactly P(j | i)). Nothing but integer comparisons
# decides a draw that stays in the table.
#
# The certificate (_gw_eval) bounds the loss of that law for every pair of input indices at
# most dk apart; the proof is in mechanisms/window.py (module docstring).

from libc.math cimport log2 as _gw_log2, floor as _gw_floorf
from libc.stdlib cimport realloc
from libc.string cimport memcpy
cimport numpy as _cnp

_cnp.import_array()

DEF GW_MBITS = 20                 # the tail's success probability m 2^-s, 2^20 <= m < 2^21
cdef double GW_LN2 = 0.6931471805599453
cdef double GW_REL = 9.094947017729282e-13      # 2^-40: relative slack of computed tail sums
cdef int64_t GW_MAX_N = (<int64_t> 1) << 20     # table half-width limit
cdef int64_t GW_MAX_ROW = (<int64_t> 1) << 51   # grid intervals of a row


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


cdef int _gw_shape(int fam, double t, int64_t n, int tail_bits, gw_law_t* L) noexcept nogil:
    # table half-width, tail parameters and K for scale t (grid steps); 0 on success,
    # -1 if the table would exceed GW_MAX_N, -2 for a scale out of range
    cdef double neff, slope, x, z, avail, fN
    cdef int64_t N
    if not (t > 0.0) or t > 1e12 or t != t:
        return -2
    if fam == 0:
        neff = _ex_ceil(tail_bits * GW_LN2 * t)
    else:
        neff = _ex_ceil(t * sqrt(2.0 * tail_bits * GW_LN2))
    if neff < 1.0:
        neff = 1.0
    if neff > <double> GW_MAX_N and <double> n > <double> GW_MAX_N:
        return -1
    L.fam = fam
    L.t = t
    if <double> n <= neff:
        N = n
        L.tail = 0
    else:
        N = <int64_t> neff
        L.tail = 1
    L.N = N
    L.tailw = 0
    L.sbits = 0
    L.tm = 0
    L.lnp = 0.0
    if fam == 0:
        z = 1.0 + 2.0 * t
        fN = -(<double> N) / t
    else:
        z = 1.0 + 2.5066282746310002 * t
        fN = -0.5 * ((<double> N) / t) * ((<double> N) / t)
    if L.tail:
        # the tail decays at least as fast as the kernel's last step (the model kernel stays
        # log-concave) and within a relative 2^-20 of the kernel's next step
        if fam == 0:
            slope = 1.0 / t
        else:
            slope = (2.0 * N + 1.0) / (2.0 * t * t)
        x = -expm1(-slope)
        L.sbits = GW_MBITS - <int> _gw_floorf(_gw_log2(x))
        if L.sbits > 53 or L.sbits < 1:
            return -2
        L.tm = (<uint64_t> _ex_ceil(_gd_ldexp(x, L.sbits))) + 1
        L.lnp = log1p(-_gd_ldexp(<double> L.tm, -L.sbits))
        z += 2.0 * exp(fN) / _gd_ldexp(<double> L.tm, -L.sbits)
    avail = 18446744073709551616.0 / 64.0 - (2.0 * N + 1.0) - 8.0    # 2^58 - rounding slack
    L.kexp = <int> _gw_floorf(_gw_log2(avail / (z * (1.0 + 1e-9))))
    if L.kexp > 62:
        L.kexp = 62
    if L.kexp < 8:
        return -2
    return 0


cdef inline double _gw_phi(const gw_law_t* L, int64_t d) noexcept nogil:
    # ln kernel(d) of the model, d >= 0 (core), including the model tail
    cdef double x
    if d <= L.N:
        if L.fam == 0:
            return -(<double> d) / L.t
        x = (<double> d) / L.t
        return -0.5 * x * x
    if L.fam == 0:
        x = -(<double> L.N) / L.t
    else:
        x = (<double> L.N) / L.t
        x = -0.5 * x * x
    return x + (<double> (d - L.N)) * L.lnp


cdef int _gw_fill_table(gw_law_t* L, uint64_t* cum) noexcept nogil:
    # cum[0..2N+1]: cumulative weights of offsets -N..N (symmetric bit for bit); and B.
    # 0, or -1 if the total exceeds 2^58 or a weight is out of range
    cdef int64_t k, d, N = L.N
    cdef uint64_t acc = 0, w
    cdef double b
    # the half table goes to cum[N + 1 + d], d = 0..N, first; the cumulative pass below reads
    # position N + 1 + |k - N| before it writes position k + 1 <= that position... except
    # when k + 1 > N + 1 + |k - N|, which never happens for k <= 2N (k - N <= |k - N|)
    for d in range(N + 1):
        cum[N + 1 + d] = <uint64_t> _gd_rint(_gd_ldexp(exp(_gw_phi(L, d)), L.kexp))
    # offsets -N..-1 (k = 0..N-1) read the weights of N..1, which live at 2N+1..N+2: above
    # every position written so far (k + 1 <= N); offsets 0..N (k = N..2N) read N + 1 + k - N
    # = k + 1 ... which is the position written at step k: read before writing
    cum[0] = 0
    for k in range(2 * N + 1):
        d = k - N if k >= N else N - k
        w = cum[N + 1 + d]
        acc += w
        cum[k + 1] = acc
    if L.tail:
        b = _gd_rint(exp(_gw_phi(L, N)) * (1.0 - _gd_ldexp(<double> L.tm, -L.sbits))
                     * _gd_ldexp(1.0, L.kexp + L.sbits) / (<double> L.tm))
        if not (b >= 1.0) or b > 1.0e18:
            return -1
        L.tailw = <uint64_t> b
    if acc + 2 * L.tailw > ((<uint64_t> 1) << 58) or acc < 1:
        return -1
    return 0


cdef double _gw_cert(const gw_law_t* L, const uint64_t* cum, int64_t n, int64_t dk, int wide,
                     double* qlo, double* qhi, int64_t* dq) noexcept nogil:
    # certified loss of the law for every pair of input indices at most dk apart, for the row
    # of n intervals (wide = 0) or for every row of at least 2N + dk intervals (wide = 1)
    cdef int64_t N = L.N, nn, kmax, imax, k, lo_d, hi_d, head, tail_, i
    cdef double eta, wmin, lnk, sl, sh, tab, part, up_lo, up_hi, best, v, inter, wn1, hhalf
    cdef double B = <double> L.tailw, vmax = 0.0
    wmin = <double> (cum[1] - cum[0])             # the weight of offset -N (the least)
    if wmin < 2.0:
        return 1e300
    eta = 1.0 / (wmin - 1.0)
    if L.tail:
        if B < 2.0:
            return 1e300
        if 1.0 / (B - 1.0) > eta:
            eta = 1.0 / (B - 1.0)
    eta += 2.9e-14                                   # 2^-45: the computed exponentials
    lnk = (<double> L.kexp) * GW_LN2
    if wide:
        nn = 2 * N + dk
        kmax = N + dk - 1
        imax = N - 1
    else:
        nn = n
        kmax = n
        imax = n - 1
    for k in range(kmax + 1):
        lo_d = -k if k < N else -N
        hi_d = nn - k if nn - k < N else N
        tab = <double> (cum[hi_d + N + 1] - cum[lo_d + N])
        part = 0.0
        if k > N:
            part = B * (-expm1((<double> (k - N)) * L.lnp))
        up_lo = 0.0
        up_hi = 0.0
        if nn - k > N:
            up_lo = B * (-expm1((<double> (nn - k - N)) * L.lnp))
            up_hi = B if wide else up_lo
        sl = tab + (part + up_lo) * (1.0 - GW_REL)
        sh = tab + (part + up_hi) * (1.0 + GW_REL)
        v = lnk + _gw_phi(L, k)
        if fabs(v) > vmax:
            vmax = fabs(v)
        qlo[k] = log(sl) - v
        # ln(sh) <= ln(sl) + (sh - sl)/sl (ln(1 + x) <= x); the division rounds by at most
        # half an ulp, covered by the 2^-40 slack of the result
        qhi[k] = qlo[k] + ((sh - sl) / sl) * (1.0 + 1e-15)
    # max over i < k <= i + dk, i <= imax, of qhi[k] - qlo[i]: a sliding-window minimum
    best = -1e300
    head = 0
    tail_ = 0
    for k in range(1, kmax + 1):
        i = k - 1
        if i <= imax:
            while tail_ > head and qlo[dq[tail_ - 1]] >= qlo[i]:
                tail_ -= 1
            dq[tail_] = i
            tail_ += 1
        while tail_ > head and dq[head] < k - dk:
            head += 1
        if tail_ > head:
            v = qhi[k] - qlo[dq[head]]
            if v > best:
                best = v
    if wide:
        # inputs i >= N: the kernel ratio is dk (-ln p) (model), and S(i + dk) - S(i) is at
        # most dk w(N + 1) while S(i) >= the half table
        wn1 = B * _gd_ldexp(<double> L.tm, -L.sbits)
        hhalf = <double> (cum[2 * N + 1] - cum[N])
        inter = (<double> dk) * (-L.lnp) * (1.0 + 1e-15) + log1p((<double> dk) * wn1 / hhalf) * (1.0 + 1e-15)
        if inter > best:
            best = inter
    # GD_ERR covers the rounding of terms below 2^10 in magnitude; a steep tail can make
    # psi larger: a few ulps of it more
    return best + 2.0 * eta + GD_ERR + 8.0 * 2.220446049250313e-16 * vmax


def gw_eval(int fam, double t, int64_t n, int64_t dk, bint wide, int tail_bits=24,
            bint table=False):
    """Certify the windowed grid law of scale ``t`` (grid steps) for a row of ``n`` intervals
    (or, ``wide``, every row of at least ``2N + dk``); returns ``(cert, shape)`` with
    ``shape = (N, tail, kexp, tailw, sbits, m, n_wide)``, and the cumulative table when
    ``table``. ``cert`` is ``inf`` when the scale is out of range; a ValueError when the
    table would be too large."""
    cdef gw_law_t L
    cdef int rc
    if n < 1 or dk < 1 or n > GW_MAX_ROW or tail_bits < 4 or tail_bits > 40:
        raise ValueError("gw_eval: inconsistent row")
    if wide:
        n = GW_MAX_ROW
    rc = _gw_shape(fam, t, n, tail_bits, &L)
    if rc == -1:
        raise ValueError("grid law: the kernel table would exceed 2^20 entries")
    if rc != 0:
        return math_inf, None, None
    if wide and not L.tail:
        return math_inf, None, None
    cum = _np.empty(2 * L.N + 2, dtype=_np.uint64)
    cdef uint64_t[::1] c = cum
    cdef int64_t m = (L.N + dk + 1) if wide else (n + 1)
    ql = _np.empty(m)
    qh = _np.empty(m)
    dqa = _np.empty(m, dtype=_np.int64)
    cdef double[::1] vql = ql, vqh = qh
    cdef int64_t[::1] vdq = dqa
    cdef double cert
    with nogil:
        rc = _gw_fill_table(&L, &c[0])
        if rc == 0:
            cert = _gw_cert(&L, &c[0], n, dk, wide, &vql[0], &vqh[0], &vdq[0])
    if rc != 0:
        return math_inf, None, None
    shape = (int(L.N), int(L.tail), int(L.kexp), int(L.tailw), int(L.sbits), int(L.tm),
             int(2 * L.N + dk))
    if table:
        cum.setflags(write=False)
        return cert, shape, cum
    return cert, shape, None


cdef double math_inf = float("inf")


cdef inline int64_t _gw_geometric(bitgen_t* bg, int sbits, uint64_t m) noexcept nogil:
    # k >= 1 with P(k) = (1 - m 2^-s)^(k - 1) m 2^-s: the index of the first s-bit word < m
    cdef uint64_t mask = ((<uint64_t> 1) << sbits) - 1
    cdef int64_t k = 1
    while (bg.next_uint64(bg.state) & mask) >= m and k < GD_EXACT:
        k += 1
    return k


cdef inline int64_t _gw_index(double q, double lo, double hi, double inv_g,
                              int64_t n) noexcept nogil:
    # round-half-up of (clip(q) - lo) / gamma, exactly, clipped to [0, n]: z and zl are exact
    # (scaling by a power of two), d + err == z - zl exactly (TwoSum), 0 <= d <= n + 1 <
    # 2^52 makes |err| <= ulp(d)/2 <= 1/4 and fr = d - floor(d) exact; fr - 1/2 is exact
    # when fr >= 1/4 or d >= 1, and otherwise below -1/4 < -err: the comparison
    # fr - 1/2 >= -err decides fr + err >= 1/2 exactly (see window.py). Selects only; the
    # floor of d >= 0 is its truncation (an integer conversion, no libm call).
    cdef double z, zl, d, bb, err, fd, fr
    cdef int64_t i
    q = lo if q != q else q
    q = lo if q < lo else q
    q = hi if q > hi else q
    z = q * inv_g
    zl = lo * inv_g
    d = z - zl
    bb = d - z
    err = (z - (d - bb)) + (-zl - bb)
    d = 0.0 if d < 0.0 else d
    i = <int64_t> d
    fd = <double> i
    fr = d - fd
    i = i + <int64_t> ((fr - 0.5) >= -err)
    i = 0 if i < 0 else i
    i = n if i > n else i
    return i


ctypedef struct gw_rows_t:
    const uint64_t* cum
    int levels
    int64_t N
    uint64_t tailw
    int sbits
    uint64_t tm


cdef inline uint64_t _gw_target(const gw_rows_t* R, int64_t i, int64_t n, bitgen_t* bg,
                                int* where) noexcept nogil:
    # the table position for input i of a row of n intervals, or a tail block (where 1, 2)
    cdef int64_t N = R.N, a, b
    cdef uint64_t left, right, mid, u, c0
    a = (-i if -i > -N else -N) + N
    b = (n - i if n - i < N else N) + N + 1
    c0 = R.cum[a]
    mid = R.cum[b] - c0
    left = R.tailw * (<uint64_t> (i > N))
    right = R.tailw * (<uint64_t> (n - i > N))
    u = _ex_below(bg, left + mid + right)
    where[0] = (<int> (u < left)) + 2 * (<int> (u >= left + mid))
    # u - left wraps when u < left; the entry is then ignored (where != 0)
    return c0 + (u - left)


cdef int64_t _gw_draw_one(bitgen_t* bg, const gw_rows_t* R, int64_t i, int64_t n) noexcept nogil:
    cdef int where
    cdef uint64_t t
    cdef int64_t j
    while True:
        t = _gw_target(R, i, n, bg, &where)
        if where == 0:
            return _gd_search_one(R.cum, R.levels, t) - R.N + i
        if where == 1:
            j = i - R.N - _gw_geometric(bg, R.sbits, R.tm)
        else:
            j = i + R.N + _gw_geometric(bg, R.sbits, R.tm)
        if j >= 0 and j <= n:
            return j


def gw_fill(object gen, const uint64_t[::1] tree, int levels, int64_t N, uint64_t tailw,
            int sbits, uint64_t tm, int e, const double[::1] q, const double[::1] lo,
            const double[::1] hi, const int64_t[::1] nrow, double[::1] out):
    """Windowed grid draws, one per row: true value ``q``, bounds ``lo``/``hi`` and ``nrow``
    grid intervals per row (all of the output's length)."""
    bit_gen = gen.bit_generator
    cdef bitgen_t* bg = _borrow(bit_gen)
    cdef Py_ssize_t a, total = out.shape[0]
    if q.shape[0] != total or lo.shape[0] != total or hi.shape[0] != total or nrow.shape[0] != total:
        raise ValueError("grid law: per-row arrays of different lengths")
    _gd_check_tree(tree, levels, N)
    _gd_check_exponent(e)
    if tailw > 0 and not (1 <= sbits <= 53 and 0 < tm < ((<uint64_t> 1) << sbits)):
        raise ValueError("grid law: inconsistent tail")
    cdef gw_rows_t R
    R.cum = &tree[0]
    R.levels = levels
    R.N = N
    R.tailw = tailw
    R.sbits = sbits
    R.tm = tm
    cdef int64_t idx[GD_LANES]
    cdef int64_t pos[GD_LANES]
    cdef uint64_t tt[GD_LANES]
    cdef int where[GD_LANES]
    cdef int r, c
    cdef int64_t j, nr
    cdef double inv_g = _gd_ldexp(1.0, -e), gamma = _gd_ldexp(1.0, e)
    for a in range(total):
        if nrow[a] < 1 or nrow[a] > GW_MAX_ROW or (tailw == 0 and nrow[a] > N):
            raise ValueError("grid law: a row the table does not serve")
    with bit_gen.lock, nogil:
        a = 0
        while a < total:
            c = GD_LANES if total - a >= GD_LANES else <int> (total - a)
            for r in range(c):
                idx[r] = _gw_index(q[a + r], lo[a + r], hi[a + r], inv_g, nrow[a + r])
            for r in range(c):
                tt[r] = _gw_target(&R, idx[r], nrow[a + r], bg, &where[r])
                tt[r] = tt[r] if where[r] == 0 else 0
            for r in range(c, GD_LANES):
                tt[r] = 0
            bndp_gd_search(R.cum, levels, tt, pos)
            for r in range(c):
                nr = nrow[a + r]
                j = pos[r] - N + idx[r]
                if where[r] != 0:          # a tail block: probability about 2^-24 at most
                    if where[r] == 1:
                        j = idx[r] - N - _gw_geometric(bg, sbits, tm)
                    else:
                        j = idx[r] + N + _gw_geometric(bg, sbits, tm)
                    if j < 0 or j > nr:
                        j = _gw_draw_one(bg, &R, idx[r], nr)
                out[a + r] = lo[a + r] + (<double> j) * gamma
            a += c


def gw_index(const double[::1] q, const double[::1] lo, const double[::1] hi, int e,
             const int64_t[::1] nrow):
    """Grid indices (int64) of true values in their rows, as gw_fill computes them."""
    cdef Py_ssize_t a, m = q.shape[0]
    if lo.shape[0] != m or hi.shape[0] != m or nrow.shape[0] != m:
        raise ValueError("gw_index: arrays of different lengths")
    _gd_check_exponent(e)
    out = _np.empty(m, dtype=_np.int64)
    cdef int64_t[::1] o = out
    cdef double inv_g = _gd_ldexp(1.0, -e)
    for a in range(m):
        o[a] = _gw_index(q[a], lo[a], hi[a], inv_g, nrow[a])
    return out


def gw_intervals(const double[::1] lo, const double[::1] hi, int e):
    """n = floor((hi - lo) / 2^e) per row, exactly (int64; -1 where hi < lo)."""
    cdef Py_ssize_t a, m = lo.shape[0]
    if hi.shape[0] != m:
        raise ValueError("gw_intervals: arrays of different lengths")
    _gd_check_exponent(e)
    out = _np.empty(m, dtype=_np.int64)
    cdef int64_t[::1] o = out
    cdef double inv_g = _gd_ldexp(1.0, -e), z, zl, d, bb, err, fd, fr
    for a in range(m):
        z = hi[a] * inv_g
        zl = lo[a] * inv_g
        d = z - zl
        bb = d - z
        err = (z - (d - bb)) + (-zl - bb)
        if d < 0.0 or d != d or d >= 2.0 * <double> GW_MAX_ROW:
            o[a] = -1 if (d < 0.0 or d != d) else 2 * GW_MAX_ROW
            continue
        fd = _gw_floorf(d)
        fr = d - fd
        # floor(d + err): fd - 1 when fr + err < 0
        o[a] = (<int64_t> fd) - <int64_t> (fr < -err)
    return out


cdef double _gw_try(int fam, double t, int64_t n, int64_t dk, int wide, int tail_bits,
                    gw_law_t* L, uint64_t** cum, int64_t* cap, double** qlo, double** qhi,
                    int64_t** dq, int64_t* qcap) noexcept nogil:
    # the certificate of scale t (inf when out of range or out of memory); the buffers
    # grow as needed
    cdef int rc = _gw_shape(fam, t, n, tail_bits, L)
    cdef int64_t need, m
    cdef void* p
    if rc != 0 or (wide and not L.tail):
        return 1e300
    need = 2 * L.N + 2
    if need > cap[0]:
        p = realloc(cum[0], need * sizeof(uint64_t))
        if p == NULL:
            return 1e300
        cum[0] = <uint64_t*> p
        cap[0] = need
    m = (L.N + dk + 1) if wide else (n + 1)
    if m > qcap[0]:
        p = realloc(qlo[0], m * sizeof(double))
        if p == NULL:
            return 1e300
        qlo[0] = <double*> p
        p = realloc(qhi[0], m * sizeof(double))
        if p == NULL:
            return 1e300
        qhi[0] = <double*> p
        p = realloc(dq[0], m * sizeof(int64_t))
        if p == NULL:
            return 1e300
        dq[0] = <int64_t*> p
        qcap[0] = m
    if _gw_fill_table(L, cum[0]) != 0:
        return 1e300
    return _gw_cert(L, cum[0], n, dk, wide, qlo[0], qhi[0], dq[0])


def gw_calibrate(int fam, double target, double t0, int64_t n, int64_t dk, bint wide,
                 double rel_tol=1e-7, int tail_bits=24):
    """The smallest scale (grid steps) whose certificate is <= target: a bracketed secant
    search on (ln t, ln cert), stopped when the certificate is within ``rel_tol`` of the
    target or the bracket within ``rel_tol`` of the scale. Returns ``(t, cert, shape, cum)``
    as :func:`gw_eval` with ``table=True``; a ValueError when no scale certifies."""
    if n < 1 or dk < 1 or n > GW_MAX_ROW or not (target > 0.0) or not (t0 > 0.0):
        raise ValueError("gw_calibrate: inconsistent arguments")
    if wide:
        n = GW_MAX_ROW
    cdef gw_law_t L
    cdef uint64_t* cum = NULL
    cdef double* qlo = NULL
    cdef double* qhi = NULL
    cdef int64_t* dq = NULL
    cdef int64_t cap = 0, qcap = 0
    cdef double t = t0, c, aim = target * (1.0 - 0.3 * rel_tol), a, slope, nxt
    cdef double good_t = -1.0, good_c = 0.0, bad_t = -1.0, prev_t = -1.0, prev_c = 0.0
    cdef int it, found = 0
    cdef uint64_t[::1] vout
    cdef int rc
    try:
        with nogil:
            c = _gw_try(fam, t, n, dk, wide, tail_bits, &L, &cum, &cap, &qlo, &qhi, &dq, &qcap)
            for it in range(200):
                if c <= target:
                    if good_t < 0.0 or t < good_t:
                        good_t = t
                        good_c = c
                elif bad_t < 0.0 or t > bad_t:
                    bad_t = t
                if good_t > 0.0 and good_c >= target * (1.0 - rel_tol):
                    found = 1
                    break
                if good_t > 0.0 and bad_t > 0.0 and good_t - bad_t <= rel_tol * good_t:
                    found = 1
                    break
                a = 1.0
                if prev_t > 0.0 and prev_t != t and c < 1e299 and prev_c < 1e299:
                    slope = (log(c) - log(prev_c)) / (log(t) - log(prev_t))
                    # a steeper slope (where the table comes to cover the row, the
                    # certificate falls fast) is taken once the root is bracketed: the step
                    # is then kept inside the bracket
                    if -8.0 < slope < -0.05 or (slope < -0.05 and good_t > 0.0
                                                and bad_t > 0.0):
                        a = -slope
                if c < 1e299:
                    nxt = t * exp(log(c / aim) / a)
                else:
                    nxt = t * 2.0
                if good_t > 0.0 and bad_t > 0.0:
                    if not (bad_t < nxt < good_t):
                        nxt = sqrt(bad_t * good_t)
                elif good_t > 0.0:
                    nxt = fmin(nxt, good_t * 0.999999)
                    nxt = fmax(nxt, good_t * 0.25)
                else:
                    nxt = fmax(nxt, t * 1.000001)
                    nxt = fmin(nxt, t * 4.0)
                    if nxt > 1e11:
                        break
                prev_t = t
                prev_c = c
                t = nxt
                c = _gw_try(fam, t, n, dk, wide, tail_bits, &L, &cum, &cap, &qlo, &qhi, &dq,
                            &qcap)
            if good_t > 0.0:
                found = 1
                if t != good_t:            # the buffers hold the last scale tried
                    t = good_t
                    c = _gw_try(fam, t, n, dk, wide, tail_bits, &L, &cum, &cap, &qlo, &qhi,
                                &dq, &qcap)
        if not found or not (c <= target):
            raise ValueError("grid law: no scale certifies the target for these parameters "
                             "(the kernel table would exceed its size limit); pass "
                             "mode='continuous'")
        out = _np.empty(2 * L.N + 2, dtype=_np.uint64)
        vout = out
        memcpy(&vout[0], cum, (2 * L.N + 2) * sizeof(uint64_t))
        out.setflags(write=False)
        shape = (int(L.N), int(L.tail), int(L.kexp), int(L.tailw), int(L.sbits), int(L.tm),
                 int(2 * L.N + dk))
        return t, c, shape, out
    finally:
        free(cum)
        free(qlo)
        free(qhi)
        free(dq)


def gw_search_tree(const uint64_t[::1] cum):
    """The table the sampler searches (as ``exact.search_tree``): ``cum`` padded with
    2^63 - 1 to 4^levels entries, then the upper levels; 64-byte aligned. Returns
    ``(tree, levels)``."""
    cdef Py_ssize_t m = cum.shape[0], size = 4, k, j, step, off
    cdef int levels = 1, lvl
    while size < m:
        size *= 4
        levels += 1
    cdef size_t total = bndp_gd_table_size(levels)
    buf = _np.empty(total + 8, dtype=_np.uint64)
    cdef Py_ssize_t skip = ((-buf.ctypes.data) % 64) // 8
    out = buf[skip: skip + total]
    cdef uint64_t[::1] o = out
    with nogil:
        memcpy(&o[0], &cum[0], m * sizeof(uint64_t))
        for k in range(m, size):
            o[k] = 0x7FFFFFFFFFFFFFFF
        for lvl in range(levels - 1):
            step = 1
            for j in range(levels - 1 - lvl):
                step *= 4
            off = <Py_ssize_t> bndp_gd_level_offset(levels, lvl)
            j = 1
            for k in range(lvl + 1):
                j *= 4
            for k in range(j):
                o[off + k] = o[k * step]
    return out, levels


cdef extern from "_window.h":
    void bndp_gw_index_pass(const double* q, Py_ssize_t m, double lo, double hi,
                            double inv_g, double n, double* idx) nogil


cdef void _gw_block(bitgen_t* bg, const gw_rows_t* R, const double* q, Py_ssize_t qstride,
                    int c, double lo, double hi, int64_t nr, double inv_g, double gamma,
                    double* out) noexcept nogil:
    # c <= GD_LANES draws of one row [lo, hi] (n = nr intervals) for the values q[r * qstride]
    cdef int64_t idx[GD_LANES]
    cdef int64_t pos[GD_LANES]
    cdef uint64_t tt[GD_LANES]
    cdef double qb[GD_LANES]
    cdef double fi[GD_LANES]
    cdef int where[GD_LANES]
    cdef int r
    cdef int64_t j
    cdef const double* qp = q
    if qstride != 1:
        for r in range(c):
            qb[r] = q[r * qstride]
        qp = qb
    bndp_gw_index_pass(qp, c, lo, hi, inv_g, <double> nr, fi)      # vectorised
    for r in range(c):
        idx[r] = <int64_t> fi[r]
    for r in range(c):
        tt[r] = _gw_target(R, idx[r], nr, bg, &where[r])
        tt[r] = tt[r] if where[r] == 0 else 0
    for r in range(c, GD_LANES):
        tt[r] = 0
    bndp_gd_search(R.cum, R.levels, tt, pos)
    for r in range(c):
        j = pos[r] - R.N + idx[r]
        if where[r] != 0:
            if where[r] == 1:
                j = idx[r] - R.N - _gw_geometric(bg, R.sbits, R.tm)
            else:
                j = idx[r] + R.N + _gw_geometric(bg, R.sbits, R.tm)
            if j < 0 or j > nr:
                j = _gw_draw_one(bg, R, idx[r], nr)
        out[r] = lo + (<double> j) * gamma


def gw_fill_row(object gen, const uint64_t[::1] tree, int levels, int64_t N, uint64_t tailw,
                int sbits, uint64_t tm, int e, double lo, double hi, int64_t nrow,
                const double[:, :] q, double[:, ::1] out):
    """Windowed grid draws for one row ``[lo, hi]`` of ``nrow`` intervals: true values ``q``
    (broadcast to ``out``; stride 0 welcome)."""
    bit_gen = gen.bit_generator
    cdef bitgen_t* bg = _borrow(bit_gen)
    cdef Py_ssize_t a, b, n0 = out.shape[0], n1 = out.shape[1]
    if q.shape[0] != n0 or q.shape[1] != n1:
        raise ValueError("grid law: the values must have the output's shape (broadcast them)")
    _gd_check_tree(tree, levels, N)
    _gd_check_exponent(e)
    if tailw > 0 and not (1 <= sbits <= 53 and 0 < tm < ((<uint64_t> 1) << sbits)):
        raise ValueError("grid law: inconsistent tail")
    if nrow < 1 or nrow > GW_MAX_ROW or (tailw == 0 and nrow > N) or not (lo < hi):
        raise ValueError("grid law: a row the table does not serve")
    cdef gw_rows_t R
    R.cum = &tree[0]
    R.levels = levels
    R.N = N
    R.tailw = tailw
    R.sbits = sbits
    R.tm = tm
    cdef int c
    cdef Py_ssize_t qs = q.strides[1] // sizeof(double)
    cdef double inv_g = _gd_ldexp(1.0, -e), gamma = _gd_ldexp(1.0, e)
    with bit_gen.lock, nogil:
        for a in range(n0):
            b = 0
            while b < n1:
                c = GD_LANES if n1 - b >= GD_LANES else <int> (n1 - b)
                _gw_block(bg, &R, &q[a, b], qs, c, lo, hi, nrow, inv_g, gamma, &out[a, b])
                b += c


def gw_index_pass(const double[::1] q, double lo, double hi, int e, int64_t nrow):
    """Grid indices of true values in one row by the vectorised pass gw_fill_row uses (for
    tests: the same integers as :func:`gw_index`)."""
    _gd_check_exponent(e)
    out = _np.empty(q.shape[0])
    cdef double[::1] o = out
    if q.shape[0]:
        bndp_gw_index_pass(&q[0], q.shape[0], lo, hi, _gd_ldexp(1.0, -e), <double> nrow, &o[0])
    return out.astype(_np.int64)


cdef object _gw_float64 = _np.float64
cdef object _gw_ndarray = _np.ndarray
cdef object _gw_Generator = _np.random.Generator


cdef inline bint _gw_all_inside(const double* q, Py_ssize_t m, double lo, double hi) noexcept nogil:
    cdef Py_ssize_t k
    for k in range(m):
        if not (q[k] >= lo and q[k] <= hi):
            return False
    return True


cdef class GwRow:
    """One row ``[lo, hi]`` of the windowed grid law bound to its search table, checked once
    (the checks of :func:`gw_fill_row`, at construction): the short path of
    ``RowPlan.sample`` for one value or a small 1-D array. Draws are those of
    :func:`gw_fill_row` (the same blocks of ``_gw_block``, in the same order)."""

    cdef object _tree           # keeps the table alive (R.cum points into it)
    cdef gw_rows_t R
    cdef readonly double lo, hi
    cdef double inv_g, gamma
    cdef readonly int64_t nrow

    def __cinit__(self, object tree, int levels, int64_t N, uint64_t tailw, int sbits,
                  uint64_t tm, int e, double lo, double hi, int64_t nrow):
        cdef const uint64_t[::1] t = tree
        _gd_check_tree(t, levels, N)
        _gd_check_exponent(e)
        if tailw > 0 and not (1 <= sbits <= 53 and 0 < tm < ((<uint64_t> 1) << sbits)):
            raise ValueError("grid law: inconsistent tail")
        if nrow < 1 or nrow > GW_MAX_ROW or (tailw == 0 and nrow > N) or not (lo < hi):
            raise ValueError("grid law: a row the table does not serve")
        self._tree = tree
        self.R.cum = &t[0]
        self.R.levels = levels
        self.R.N = N
        self.R.tailw = tailw
        self.R.sbits = sbits
        self.R.tm = tm
        self.lo = lo
        self.hi = hi
        self.nrow = nrow
        self.inv_g = _gd_ldexp(1.0, -e)
        self.gamma = _gd_ldexp(1.0, e)

    def one(self, object gen, double q):
        """One draw for the true value ``q`` (any double: clipped as by ``gw_fill_row``;
        callers pass values in ``[lo, hi]``), as a Python float."""
        return self._one(gen, q)

    cdef object _one(self, object gen, double q):
        bit_gen = gen.bit_generator
        cdef bitgen_t* bg = _borrow(bit_gen)
        cdef double out
        lock = bit_gen.lock
        lock.acquire()
        try:
            _gw_block(bg, &self.R, &q, 1, 1, self.lo, self.hi, self.nrow, self.inv_g,
                      self.gamma, &out)
        finally:
            lock.release()
        return out

    def sample(self, object value, object size, object rng, object on_outside,
               object workers, object resolve):
        """The short path of ``RowPlan.sample`` for a mechanism's ``sample`` arguments: one
        value (``float``, ``numpy.float64``, an ``int`` of at most 2^53 in magnitude) or a
        1-D aligned C-contiguous float64 array of at most 4096 values, every value in
        ``[lo, hi]``, ``size=None``, ``workers=1``, ``on_outside`` "clip" or "raise";
        ``rng`` a Generator or resolved by ``resolve`` (``bndp._random.as_generator``).
        Returns ``NotImplemented`` (nothing drawn, nothing resolved) for any other call:
        the caller takes the general path, which checks, clips or refuses."""
        cdef double x
        cdef _cnp.ndarray a
        cdef Py_ssize_t m
        if size is not None or type(workers) is not int or workers != 1:
            return NotImplemented
        if not (on_outside == "clip" or on_outside == "raise"):
            return NotImplemented
        tv = type(value)
        if tv is float or tv is _gw_float64:
            x = value
        elif tv is int:
            if not (-9007199254740992 <= value <= 9007199254740992):
                return NotImplemented
            x = value                     # exact: |value| <= 2^53
        elif tv is _gw_ndarray:
            a = value
            if (_cnp.PyArray_NDIM(a) != 1 or _cnp.PyArray_TYPE(a) != _cnp.NPY_DOUBLE
                    or not _cnp.PyArray_ISNOTSWAPPED(a) or not _cnp.PyArray_ISALIGNED(a)
                    or not _cnp.PyArray_IS_C_CONTIGUOUS(a)):
                return NotImplemented
            m = _cnp.PyArray_DIM(a, 0)
            if m > 4096 or not _gw_all_inside(<const double*> _cnp.PyArray_DATA(a), m,
                                              self.lo, self.hi):
                return NotImplemented
            gen = rng if type(rng) is _gw_Generator else resolve(rng)
            return self._fill(gen, <const double*> _cnp.PyArray_DATA(a), m, a)
        else:
            return NotImplemented
        if not (x >= self.lo and x <= self.hi):      # NaN fails
            return NotImplemented
        gen = rng if type(rng) is _gw_Generator else resolve(rng)
        return self._one(gen, x)

    cdef object _fill(self, object gen, const double* q, Py_ssize_t m, object keep):
        # draws for m values already checked to lie in [lo, hi] (``keep`` owns ``q``)
        cdef _cnp.npy_intp dim = m
        cdef Py_ssize_t b
        cdef int c
        out = _cnp.PyArray_EMPTY(1, &dim, _cnp.NPY_DOUBLE, 0)
        if m == 0:
            return out
        cdef double* o = <double*> _cnp.PyArray_DATA(out)
        bit_gen = gen.bit_generator
        cdef bitgen_t* bg = _borrow(bit_gen)
        lock = bit_gen.lock
        lock.acquire()
        try:
            b = 0
            while b < m:
                c = GD_LANES if m - b >= GD_LANES else <int> (m - b)
                _gw_block(bg, &self.R, q + b, 1, c, self.lo, self.hi, self.nrow, self.inv_g,
                          self.gamma, o + b)
                b += c
        finally:
            lock.release()
        return out
