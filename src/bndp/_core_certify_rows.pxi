# The windowed certificate of a wide kernel on narrow rows (many widths at once): what
# serves a narrow row of a per-row release with its grid's wide kernel (see
# bndp._laws.window._wide_on_row and _served_from).


cdef void _gw_cert_terms(const gw_law_t* L, int64_t nmax, double* T, double* V,
                         double* VM) noexcept nogil:
    # the terms of _gw_cert (wide = 0) that depend on one offset only, for 0..nmax: the tail
    # mass beyond the table T[j] = B (1 - p^(j - N)) (0 for j <= N), V[k] = ln 2^kexp +
    # phi(k) and VM[k] = max |V[0..k]|; the same expressions as _gw_cert's, hence the same
    # doubles
    cdef int64_t j, N = L.N
    cdef double B = <double> L.tailw, lnk = (<double> L.kexp) * GW_LN2, v, vm = 0.0
    for j in range(nmax + 1):
        T[j] = B * (-expm1((<double> (j - N)) * L.lnp)) if j > N else 0.0
        v = lnk + _gw_phi(L, j)
        V[j] = v
        vm = fabs(v) if fabs(v) > vm else vm
        VM[j] = vm


cdef double _gw_cert_row(const gw_law_t* L, const uint64_t* cum, int64_t n, int64_t dk,
                         double eta, const double* T, const double* V, const double* VM,
                         double* A, double* R, double* qlo, double* qhi, double* P,
                         double* S) noexcept nogil:
    # _gw_cert(L, cum, n, dk, 0, ...) bit for bit (``eta`` its rounding term), the terms of
    # _gw_cert_terms read from their tables: the part below the row, k > N, is T[k], the
    # part above it T[n - k], and with one side per row (wide = 0) sh uses the same part.
    # The normaliser's terms are symmetric in k <-> n - k (the table is symmetric bit for
    # bit, so the same integer sums, and the tails' sum is the same two doubles): ln(sl)
    # and the slack term are computed for k <= n/2 (A, R) and read mirrored.
    cdef int64_t N = L.N, k, j, lo_d, hi_d, b, e, h = n // 2
    cdef double tab, s, sl, sh, best = -1e300, v, m
    for k in range(h + 1):
        lo_d = -k if k < N else -N
        hi_d = n - k if n - k < N else N
        tab = <double> (cum[hi_d + N + 1] - cum[lo_d + N])
        s = T[k] + T[n - k]
        sl = tab + s * (1.0 - GW_REL)
        sh = tab + s * (1.0 + GW_REL)
        A[k] = log(sl)
        R[k] = ((sh - sl) / sl) * (1.0 + 1e-15)
    for k in range(n + 1):
        j = k if k <= h else n - k
        qlo[k] = A[j] - V[k]
        qhi[k] = qlo[k] + R[j]
    # max over i < k <= i + dk of qhi[k] - qlo[i]: the minimum of qlo over each window
    # [k - dk, k - 1] (clipped at 0) from its prefix and suffix minima in blocks of dk
    # (exact: a window of dk spans at most two blocks, a shorter one starts at 0)
    b = 0
    while b < n:
        e = b + dk if b + dk < n else n
        P[b] = qlo[b]
        for k in range(b + 1, e):
            P[k] = qlo[k] if qlo[k] < P[k - 1] else P[k - 1]
        S[e - 1] = qlo[e - 1]
        for k in range(e - 2, b - 1, -1):
            S[k] = qlo[k] if qlo[k] < S[k + 1] else S[k + 1]
        b = e
    for k in range(1, n + 1):
        m = P[k - 1]
        if k - dk > 0 and S[k - dk] < m:
            m = S[k - dk]
        v = qhi[k] - m
        best = v if v > best else best
    return best + 2.0 * eta + GD_ERR + 8.0 * 2.220446049250313e-16 * VM[n]


def gw_certify_rows(int fam, double t, int tail_bits, uint64_t tailw,
                    const uint64_t[::1] cum, const int64_t[::1] ns, int64_t dk):
    """The certificates of the kernel of scale ``t`` (grid steps) whose cumulative table is
    ``cum`` (as :func:`gw_calibrate` returns it for a wide kernel: ``tailw`` its tail
    total) on rows of ``ns[r]`` intervals, inputs at most ``min(dk, ns[r])`` grid steps
    apart: ``_gw_cert`` of each row (the same doubles), in one pass of ``O(ns[r])`` a row
    whose terms of one offset are computed once for all rows."""
    cdef gw_law_t L
    cdef Py_ssize_t r, m = ns.shape[0]
    cdef int64_t nmax = 0, d
    if dk < 1 or tail_bits < 4 or tail_bits > 40:
        raise ValueError("gw_certify_rows: inconsistent arguments")
    for r in range(m):
        if ns[r] < 1 or ns[r] > GW_MAX_ROW:
            raise ValueError("gw_certify_rows: inconsistent row")
        if ns[r] > nmax:
            nmax = ns[r]
    if _gw_shape(fam, t, GW_MAX_ROW, tail_bits, &L) != 0 or not L.tail:
        raise ValueError("gw_certify_rows: not a wide kernel's scale")
    if cum.shape[0] != 2 * L.N + 2:
        raise ValueError("gw_certify_rows: the table does not match the scale")
    L.tailw = tailw
    out = _np.empty(m)
    cdef double[::1] vo = out
    # _gw_cert's rounding term (and its refusal of a table it cannot bound)
    cdef double wmin = <double> (cum[1] - cum[0]), B = <double> tailw, eta = 0.0
    cdef int refuse = wmin < 2.0 or B < 2.0
    if not refuse:
        eta = 1.0 / (wmin - 1.0)
        if 1.0 / (B - 1.0) > eta:
            eta = 1.0 / (B - 1.0)
        eta += 2.9e-14
    cdef double* buf = <double*> malloc(9 * (nmax + 1) * sizeof(double))
    if buf == NULL:
        raise MemoryError()
    cdef double* T = buf
    cdef double* V = buf + (nmax + 1)
    cdef double* VM = buf + 2 * (nmax + 1)
    with nogil:
        if refuse:
            for r in range(m):
                vo[r] = 1e300
        else:
            _gw_cert_terms(&L, nmax, T, V, VM)
            for r in range(m):
                d = dk if dk < ns[r] else ns[r]
                vo[r] = _gw_cert_row(&L, &cum[0], ns[r], d, eta, T, V, VM,
                                     buf + 3 * (nmax + 1), buf + 4 * (nmax + 1),
                                     buf + 5 * (nmax + 1), buf + 6 * (nmax + 1),
                                     buf + 7 * (nmax + 1), buf + 8 * (nmax + 1))
    free(buf)
    return out
