# cython: language_level=3, boundscheck=False, wraparound=False, cdivision=True, initializedcheck=False
"""The windowed certificate on a row of n intervals (_gw_cert_narrow: the calibrations'
and a kernel's on many rows at once, gw_certify_rows: what serves a narrow row with its
grid's wide kernel, see bndp._laws.serving).
"""

import numpy as _np

from bndp._core.common cimport *
from bndp._core.certify_grid cimport *

cdef void _gw_cert_terms(const gw_law_t* L, int64_t nmax, double* T, double* V,
                         double* VM) noexcept nogil:
    # the terms of _gw_cert_narrow that depend on one offset only, for 0..nmax: the tail
    # mass beyond the table T[j] = _gw_tail(L, j), V[j] = ln 2^kexp + phi(j) and
    # VM[j] = max |V[0..j]| (V decreases: the larger of |V[0]| and |V[j]|)
    cdef int64_t j
    bndp_gw_cert_model(L.fam, L.t, L.N, L.lnp, (<double> L.kexp) * GW_LN2, nmax, V)
    for j in range(nmax + 1):
        T[j] = _gw_tail(L, j)
        VM[j] = fabs(V[0]) if fabs(V[0]) > fabs(V[j]) else fabs(V[j])




cdef double _gw_window_best(double* qlo, const double* qhi, int64_t kmax, int64_t imax,
                            int64_t dk, double* S) noexcept nogil:
    # max over 1 <= k <= kmax of qhi[k] - min(qlo[i], max(0, k - dk) <= i <= min(k - 1,
    # imax)), empty windows skipped (-1e300 if all are; imax < kmax). Each window's minimum
    # is exact, from the suffix minima S and the prefix minima P (written over qlo) of
    # blocks of dk over [0, imax] (blocks start at multiples of dk; the last ends at imax):
    # a window [a, b] starting at 0 lies in block 0 (P[b]); one of dk entries spans two
    # blocks or is one (min(S[a], P[b])); one cut at imax (b = imax) spans two blocks or
    # lies in the last, ending at its end (S[a]).
    cdef int64_t k, s0, e, kA, kB, last = imax - imax % dk
    cdef double best = -1e300, v, m
    s0 = 0
    while s0 <= imax:
        e = s0 + dk - 1 if s0 + dk - 1 < imax else imax
        S[e] = qlo[e]
        for k in range(e - 1, s0 - 1, -1):
            S[k] = qlo[k] if qlo[k] < S[k + 1] else S[k + 1]
        for k in range(s0 + 1, e + 1):
            qlo[k] = qlo[k] if qlo[k] < qlo[k - 1] else qlo[k - 1]
        s0 = e + 1
    kA = dk if dk < kmax else kmax
    kB = imax + 1 if imax + 1 < kmax else kmax
    for k in range(1, kA + 1):                       # a = 0
        v = qhi[k] - qlo[k - 1 if k - 1 < imax else imax]
        best = v if v > best else best
    for k in range(kA + 1, kB + 1):                  # [k - dk, k - 1]
        m = S[k - dk] if S[k - dk] < qlo[k - 1] else qlo[k - 1]
        v = qhi[k] - m
        best = v if v > best else best
    for k in range((kA if kA > kB else kB) + 1, kmax + 1):     # [k - dk, imax]
        if k - dk > imax:
            break
        m = S[k - dk]
        if k - dk < last and qlo[imax] < m:
            m = qlo[imax]
        v = qhi[k] - m
        best = v if v > best else best
    return best


cdef double _gw_cert_narrow(const gw_law_t* L, const uint64_t* cum, int64_t n, int64_t dk,
                            double eta, const double* T, const double* V, const double* VM,
                            double* qlo, double* qhi, double* work) noexcept nogil:
    # _gw_cert for the row of n intervals (wide = 0; eta its rounding term): the loss of
    # the pairs of inputs at most dk apart. The normaliser of input k is the table's mass on
    # the row, tab, plus the tails beyond the table below (k > N) and above (n - k > N) the
    # row, T[k] + T[n - k]; sl and sh bound it from below and above. Its terms are symmetric
    # in k <-> n - k (the table is symmetric bit for bit, so the same integer sums, and the
    # tails' sum is the same two doubles): ln(sl) (into work) and the slack term (into
    # qhi) are computed for k <= n/2 and read mirrored (the loops of _certify.h). T, V,
    # VM: the tables of _gw_cert_terms for at least 0..n, or NULL (computed here, the same
    # doubles). qlo, qhi, work: n + 1 entries.
    cdef int64_t k, h = n // 2
    cdef double vmax, best
    if T == NULL:
        T = qlo                     # T[k] into qlo[k], free until V is written there
        for k in range(n + 1):
            qlo[k] = _gw_tail(L, k)
    # sl into work, sh into qhi (k <= n/2); then ln(sl) into work, and the slack
    # ln(sh) - ln(sl) <= (sh - sl)/sl into qhi
    bndp_gw_cert_norms(cum, L.N, n, T, 1.0 - GW_REL, 1.0 + GW_REL, work, qhi)
    bndp_gw_cert_logs(work, qhi, h + 1)
    if V == NULL:                   # the model into qlo
        vmax = bndp_gw_cert_model(L.fam, L.t, L.N, L.lnp, (<double> L.kexp) * GW_LN2, n, qlo)
    else:
        vmax = VM[n]
    bndp_gw_cert_seq(work, V, qlo, qhi, n)
    best = bndp_gw_window_best(qlo, qhi, n, dk, work)
    # GD_ERR covers the rounding of terms below 2^10 in magnitude; a steep tail can make
    # psi larger: a few ulps of it more
    return best + 2.0 * eta + GD_ERR + 8.0 * 2.220446049250313e-16 * vmax


cdef int _gw_rows_eta(const uint64_t* cum, uint64_t tailw, double* eta) noexcept nogil:
    # _gw_cert's rounding term for a wide kernel's table (tail total tailw) on narrow rows
    # into eta; 1 where _gw_cert refuses the table (its least weight or tail total below 2)
    cdef double wmin = <double> (cum[1] - cum[0]), B = <double> tailw
    eta[0] = 0.0
    if wmin < 2.0 or B < 2.0:
        return 1
    eta[0] = 1.0 / (wmin - 1.0)
    if 1.0 / (B - 1.0) > eta[0]:
        eta[0] = 1.0 / (B - 1.0)
    eta[0] += 2.9e-14
    return 0


def gw_certify_rows(int fam, double t, int tail_bits, uint64_t tailw,
                    const uint64_t[::1] cum, const int64_t[::1] ns, int64_t dk,
                    const double[::1] terms=None):
    """The certificates of the kernel of scale ``t`` (grid steps) whose cumulative table is
    ``cum`` (as :func:`gw_calibrate` returns it for a wide kernel: ``tailw`` its tail
    total) on rows of ``ns[r]`` intervals, inputs at most ``min(dk, ns[r])`` grid steps
    apart: ``_gw_cert`` of each row (the same doubles), in one pass of ``O(ns[r])`` a row
    whose terms of one offset are computed once for all rows, or taken from ``terms``
    (:func:`gw_cert_terms` of the same kernel, for at least the widest row)."""
    cdef gw_law_t L
    cdef Py_ssize_t r, m = ns.shape[0]
    cdef int64_t nmax = 0, d, tn
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
    if terms is not None and (terms.shape[0] % 3 != 0 or terms.shape[0] // 3 <= nmax):
        raise ValueError("gw_certify_rows: the terms do not cover the rows")
    L.tailw = tailw
    out = _np.empty(m)
    cdef double[::1] vo = out
    cdef double eta
    cdef int refuse = _gw_rows_eta(&cum[0], tailw, &eta)
    cdef double* buf = <double*> malloc((6 if terms is None else 3) * (nmax + 1)
                                        * sizeof(double))
    if buf == NULL:
        raise MemoryError()
    cdef const double* T
    cdef const double* V
    cdef const double* VM
    if terms is None:
        tn = nmax
        T = buf + 3 * (nmax + 1)
    else:
        tn = terms.shape[0] // 3 - 1
        T = &terms[0]
    V = T + (tn + 1)
    VM = T + 2 * (tn + 1)
    with nogil:
        if refuse:
            for r in range(m):
                vo[r] = 1e300
        else:
            if terms is None:
                _gw_cert_terms(&L, nmax, <double*> T, <double*> V, <double*> VM)
            for r in range(m):
                d = dk if dk < ns[r] else ns[r]
                vo[r] = _gw_cert_narrow(&L, &cum[0], ns[r], d, eta, T, V, VM, buf,
                                        buf + (nmax + 1), buf + 2 * (nmax + 1))
    free(buf)
    return out


def gw_cert_terms(int fam, double t, int tail_bits, uint64_t tailw, int64_t nmax):
    """The terms of one offset of :func:`gw_certify_rows` for rows of up to ``nmax``
    intervals of the wide kernel of scale ``t`` (tail total ``tailw``): the tail masses,
    the model and its running maximum, one float64 array ``[T | V | VM]`` of
    ``3 (nmax + 1)`` entries, to certify that kernel on several narrow rows one at a time
    without recomputing them."""
    cdef gw_law_t L
    if nmax < 1 or nmax > GW_MAX_ROW or tail_bits < 4 or tail_bits > 40:
        raise ValueError("gw_cert_terms: inconsistent arguments")
    if _gw_shape(fam, t, GW_MAX_ROW, tail_bits, &L) != 0 or not L.tail:
        raise ValueError("gw_cert_terms: not a wide kernel's scale")
    L.tailw = tailw
    out = _np.empty(3 * (nmax + 1))
    cdef double[::1] vo = out
    with nogil:
        _gw_cert_terms(&L, nmax, &vo[0], &vo[nmax + 1], &vo[2 * (nmax + 1)])
    return out


def gw_serve_scan(int fam, double t, int tail_bits, uint64_t tailw, const uint64_t[::1] cum,
                  int64_t dk, double lo_ok, double hi_ok, int64_t top, int64_t low,
                  int64_t down_to, int64_t block, int64_t steps, int64_t max_steps,
                  const double[::1] terms, double[::1] cert, unsigned char[::1] served):
    """The serving scan of a wide kernel (``bndp._laws.serving._scan_served``) continued
    from the row ``top`` down: blocks of ``block`` rows ``top - 1`` down to
    ``max(low, top - block)``, each row ``n`` certified as by :func:`gw_certify_rows`
    (into ``cert[n]``; ``served[n]`` = 1 where ``lo_ok <= cert[n] <= hi_ok``), until the
    block of ``down_to`` is done, a block would bring the certificate steps (the rows'
    intervals, from ``steps``) past ``max_steps``, a block serves none, or ``top`` reaches
    ``low``. ``terms``: :func:`gw_cert_terms` for rows up to ``top - 1`` at least.
    Returns ``(top, steps, done)``."""
    cdef gw_law_t L
    cdef int64_t r, b, n, d, m = cert.shape[0], tn
    cdef int done = top <= low, any
    cdef double c
    if dk < 1 or tail_bits < 4 or tail_bits > 40 or block < 1 or served.shape[0] != m:
        raise ValueError("gw_serve_scan: inconsistent arguments")
    if top > m or top < 1 or low < 1:
        raise ValueError("gw_serve_scan: inconsistent rows")
    if _gw_shape(fam, t, GW_MAX_ROW, tail_bits, &L) != 0 or not L.tail:
        raise ValueError("gw_serve_scan: not a wide kernel's scale")
    if cum.shape[0] != 2 * L.N + 2:
        raise ValueError("gw_serve_scan: the table does not match the scale")
    if terms.shape[0] % 3 != 0 or terms.shape[0] // 3 < top:
        raise ValueError("gw_serve_scan: the terms do not cover the rows")
    L.tailw = tailw
    tn = terms.shape[0] // 3 - 1
    cdef const double* T = &terms[0]
    cdef double eta
    cdef int refuse = _gw_rows_eta(&cum[0], tailw, &eta)
    cdef double* buf = <double*> malloc(3 * (top + 1) * sizeof(double))
    if buf == NULL:
        raise MemoryError()
    with nogil:
        while not done and top > down_to:
            b = low if low > top - block else top - block     # the block's narrowest row
            for n in range(b, top):
                steps += n
            if steps > max_steps:
                done = 1
                break
            any = 0
            for n in range(top - 1, b - 1, -1):
                if refuse:
                    c = 1e300
                else:
                    d = dk if dk < n else n
                    c = _gw_cert_narrow(&L, &cum[0], n, d, eta, T, T + (tn + 1),
                                        T + 2 * (tn + 1), buf, buf + (top + 1),
                                        buf + 2 * (top + 1))
                cert[n] = c
                served[n] = lo_ok <= c and c <= hi_ok
                any = any | served[n]
            top = b
            done = top <= low or not any
    free(buf)
    return top, steps, bool(done)
