"""Maximum likelihood of the true distribution: EM (Richardson-Lucy) with SQUAREM, batched
over bootstrap replicates, and Newton steps that certify the maximum (``gap_tol``)."""

from __future__ import annotations

import contextlib
import contextvars
import sys
from concurrent.futures import ThreadPoolExecutor
from typing import Any, Protocol

import numpy as np

from .._core import estimate
from ._law import _c64


class _Law(Protocol):
    """What the EM reads of a law (:class:`._law._BinnedLaw`, or the scaled model's
    stacked groups): ``A`` (bins x support) and its products."""

    A: np.ndarray

    def forward(self, G: np.ndarray) -> np.ndarray: ...

    def backward(self, R: np.ndarray) -> np.ndarray: ...


def _em(G: np.ndarray, P: np.ndarray, law: _Law
        ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """One EM step for every row of ``G`` (distributions) against the bin proportions
    ``P``: the next iterate, the log-likelihood per observation of ``G`` and the largest
    EM multiplier ``max_m d_m`` of ``G``, ``d = A^T (P / AG)`` (the gradient of the
    log-likelihood per observation; ``max_m d_m - 1`` bounds what is left to gain). A law
    with a fused step of its own (``law.em``: :class:`._law._Geometric`'s) takes it."""
    fused = getattr(law, "em", None)
    if fused is not None:
        return fused(G, P)
    F = _c64(law.forward(G))
    # R = P / max(F, 1e-300) and L = sum_b P_b log max(F_b, 1e-300), in one compiled pass
    # (a bin with P_b = 0 gives R_b = 0 and adds nothing to L)
    P = _c64(np.broadcast_to(P, F.shape))
    L = np.empty(F.shape[0])
    estimate.em_ratio(F, P, F, L)
    d = law.backward(F)
    return G * d, L, d.max(axis=1)


def _start(P: np.ndarray) -> np.ndarray:
    M = P.shape[1]
    return 0.5 / M + 0.5 * P


def _fit(P: np.ndarray, N: float, law: _Law, tol: float, max_iter: int,
         gap_tol: float | None = None, start: np.ndarray | None = None
         ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    r"""Maximum likelihood for each row of bin proportions ``P`` (replicates x bins):
    the distributions, the log-likelihoods per observation and the converged flags. A row
    stops when one cycle gains less than ``tol`` (nats, whole column). With ``gap_tol`` it
    then (also after ``max_iter`` cycles) takes Newton steps (:func:`_newton`) until the
    duality bound ``N (max_m d_m - 1)`` is below ``gap_tol``: the log-likelihood is concave, so
    :math:`\ell(\hat g) - \ell(g) \le \nabla\ell(g) \cdot (\hat g - g) \le N(\max_m d_m - 1)`
    (``sum_m g_m d_m = 1``); a row they do not certify goes on with EM until both the cycle
    rule and the bound of its cycle's start hold (a cycle never lowers the likelihood).
    ``start``: the first iterate of every row (a distribution on the support), where the
    bins are not the support's (default: :func:`_start`). On one BLAS thread
    (:func:`_one_blas_thread`)."""
    with _one_blas_thread():
        return _fit_rows(P, N, law, tol, max_iter, gap_tol, start)


def _fit_rows(P: np.ndarray, N: float, law: _Law, tol: float, max_iter: int,
              gap_tol: float | None, start: np.ndarray | None
              ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """:func:`_fit`'s work, on the BLAS threads it is given."""
    G = _start(P) if start is None else np.array(np.broadcast_to(start, (P.shape[0],
                                                                          start.shape[-1])))
    R = P.shape[0]
    done = np.zeros(R, dtype=bool)
    thr = tol / max(N, 1.0)
    left = _squarem(G, P, law, np.arange(R), done, thr, None, max_iter)
    if gap_tol is not None:
        # every row (stopped by the cycle rule or by max_iter): Newton steps to within
        # gap_tol; those they do not certify go on with EM under both rules (from EM's
        # iterate) for the cycles left
        for r in range(R):
            g, ok = _newton(G[r], P[r], law.A, N, gap_tol)
            if ok:
                G[r] = g
            done[r] = ok
        _squarem(G, P, law, np.flatnonzero(~done), done, thr, gap_tol / max(N, 1.0), left)
    # the log-likelihood of the returned iterate
    L = _em(G, P, law)[1]
    return G, L, done


def _squarem(G: np.ndarray, P: np.ndarray, law: _Law, act: np.ndarray,
             done: np.ndarray, thr: float, gthr: float | None, cycles: int) -> int:
    """SQUAREM cycles on the rows ``act`` of ``G`` in place, each until one cycle gains
    less than ``thr`` per observation (and, with ``gthr``, its start's bound ``max_m d_m -
    1`` is below ``gthr``), marking them in ``done``; at most ``cycles``. Returns the
    cycles left. A law with compiled cycles of its own (``law.squarem``:
    :class:`._law._Geometric`'s, the same steps row by row) takes them."""
    fused = getattr(law, "squarem", None)
    if fused is not None:
        w = min(_WORKERS.get(), act.size // MIN_ROWS_PER_WORKER)
        if w <= 1:
            return int(fused(G, P, act, done, thr, gthr, cycles))
        # the rows dealt out in turn (slow rows spread evenly); each thread's kernel runs
        # without the GIL on its own rows of G and done. The same bits as one thread: the
        # rows are independent, and the cycles left are the fewest any part left
        with ThreadPoolExecutor(w) as ex:
            parts = [ex.submit(fused, G, P, act[i::w], done, thr, gthr, cycles)
                     for i in range(w)]
            return min(int(f.result()) for f in parts)
    while cycles > 0 and act.size:
        cycles -= 1
        g0, p = G[act], P[act]
        g1, l0, d0 = _em(g0, p, law)
        g2, l1, _ = _em(g1, p, law)
        # gp = g0 - 2 a r + a^2 v (r = g1 - g0, v = g2 - g1 - r, a = min(-|r|/|v|, -1)),
        # shortened toward -1 (g2) until non-negative, normalised: one compiled pass
        gp = np.empty_like(g0)
        estimate.squarem_extrapolate(_c64(g0), _c64(g1), _c64(g2), gp)
        gn, lp, _ = _em(gp, p, law)
        worse = lp < l1
        if worse.any():   # the extrapolation lost likelihood: keep the double EM step
            gn[worse] = _em(g2[worse], p[worse], law)[0]
            lp = np.where(worse, l1, lp)
        G[act] = gn
        stop = (lp - l0) < thr
        if gthr is not None:
            stop &= (d0 - 1.0) < gthr
        done[act[stop]] = True
        act = act[~stop]
    return cycles


#: threads for the compiled SQUAREM cycles (``bndp.estimate``'s ``workers``; set for the
#: duration of a call by :func:`_workers`), and the fewest rows worth a thread
_WORKERS: contextvars.ContextVar[int] = contextvars.ContextVar("bndp_estimate_workers",
                                                               default=1)
MIN_ROWS_PER_WORKER = 8


@contextlib.contextmanager
def _workers(n: int) -> Any:
    """Fit on up to ``n`` threads (:data:`_WORKERS`) within the block."""
    token = _WORKERS.set(n)
    try:
        yield
    finally:
        _WORKERS.reset(token)


#: ``gap_tol="auto"`` (``bndp.estimate``'s default): a law's fits are certified within
#: AUTO_GAP nats of the maximum where its noise scale is at least AUTO_GAP_NOISE of its
#: range's width. There the likelihood is flat along directions the noise hides, and the
#: cycle rule alone stopped 0.4 to 2.8 nats below the maximum, biasing the mean by up to
#: 1.5 standard errors (docs/estimates.md). Where the noise is narrower the certified fit,
#: spikier, gave a histogram further from the column's than the released values' by more
#: than the histogram's sampling noise (two Gaussian settings of the coverage battery,
#: noise 0.28 and 0.014 of the width), and cost up to twice the time.
AUTO_GAP = 0.1
AUTO_GAP_NOISE = 1.0 / 3.0


def _gap_for(gap_tol: "float | str | None", noise: float) -> float | None:
    """The ``gap_tol`` of a law whose noise scale is ``noise`` times its range's width:
    ``"auto"`` resolved (:data:`AUTO_GAP` from :data:`AUTO_GAP_NOISE` on, else None),
    anything else as given."""
    if isinstance(gap_tol, str):
        return AUTO_GAP if noise >= AUTO_GAP_NOISE else None
    return gap_tol


def _one_blas_thread() -> Any:
    """The fits' matrix products and factorisations (EM's banded products of a few hundred
    rows, the Newton steps' small factorisations) on one BLAS thread: several threads cost
    more in wake-ups than they save (EM: about the same wall time on two cores for a third
    to a half more CPU time; the Newton steps: up to twice the time), and a fit's last
    bits would depend on their number. ``threadpoolctl`` where installed (``pip install 'bndp[estimate]'``),
    else the BLAS's own threads (the same fits to rounding). The libraries are found once
    (:func:`_blas_controller`), not at every fit."""
    ctl = _blas_controller()
    return contextlib.nullcontext() if ctl is None else ctl.limit(limits=1, user_api="blas")


#: threadpoolctl's controllers of the BLAS libraries loaded in this process, keyed by
#: whether ``scipy.linalg`` (the Newton steps', imported on first use) was loaded when
#: the controller was made: finding the libraries reads the process's memory map (2.4 ms
#: on the development VM, paid by every fit and every profile bound before 0.13.1: 0.1 s
#: of a quantile interval's 0.9 s)
_CONTROLLERS: dict[bool, Any] = {}


def _blas_controller() -> Any:
    """The ``threadpoolctl.ThreadpoolController`` of the BLAS libraries loaded now (made
    once, and again once ``scipy.linalg`` is imported, which may load scipy's own BLAS), or
    None without threadpoolctl."""
    key = "scipy.linalg" in sys.modules
    ctl = _CONTROLLERS.get(key)
    if ctl is None:
        try:
            from threadpoolctl import ThreadpoolController
        except ImportError:                 # pragma: no cover
            return None
        ctl = _CONTROLLERS.setdefault(key, ThreadpoolController())
    return ctl


#: Newton steps tried per fit before EM goes on; the steps' ridges (relative to the model
#: Hessian's diagonal), tried in turn until a step raises the likelihood; a mass below
#: NEWTON_MASS is taken as none where d_m <= 1 (EM leaves such masses on points that the
#: maximum leaves empty; in the model they make its Hessian ill-conditioned and its QP
#: larger: 1e-14 took 1.3 times the time of 1e-10 on a Laplace law at epsilon 4, and 1e-6
#: left fits uncertified)
NEWTON_STEPS = 20
NEWTON_RIDGE = (1e-12, 1e-9, 1e-6, 1e-3)
NEWTON_MASS = 1e-10
#: principal pivots tried per QP, and pivots in a row that may leave the number of
#: infeasible indices above its least, before NNLS from scratch takes over
PIVOT_STEPS = 12
PIVOT_STALL = 3
#: pivoting is tried where the unconstrained step is negative on at most this share of
#: the points (more: a small, ill-conditioned support, where NNLS is cheap and pivoting
#: cycles)
PIVOT_SHARE = 0.25


def _newton(g: np.ndarray, p: np.ndarray, A: np.ndarray, N: float, gap_tol: float,
            steps: int | None = None) -> tuple[np.ndarray, bool]:
    r"""Sequential quadratic programming on :math:`\phi(g) = \sum_b p_b \ln (Ag)_b - \sum_m
    g_m` over :math:`g \ge 0` (its maximum is the likelihood's on the simplex: there
    :math:`\sum_m g_m d_m = 1`), from ``g`` until the duality bound ``N (max_m d_m - 1)`` is
    below ``gap_tol``: each step maximises the quadratic model of :math:`\phi` on the
    points with mass or with :math:`d_m > 1` subject to :math:`g \ge 0` (the model's
    Hessian :math:`-A^T \mathrm{diag}(p / (Ag)^2) A = -U^T U`; the plain Newton step where
    it is non-negative, else by principal pivoting (:func:`_pivot`) or a non-negative
    least-squares problem in :math:`U`; a mass below ``NEWTON_MASS`` is none), normalised,
    then halved toward ``g`` until the log-likelihood rises (its gain summed exactly,
    :func:`_halve`), with Marquardt's ridge raised where no halving does, and a vertex
    exchange (:func:`_exchange`) where no ridge does. Where EM leaves a slowly converging
    ridge, one or two steps certify the maximum. At most
    ``steps`` steps (``NEWTON_STEPS``). Returns the last iterate (normalised) and whether
    the bound was met; ``A`` the dense law (bins x support), ``p`` the bin proportions."""
    steps = NEWTON_STEPS if steps is None else steps
    keep = p > 0
    Ap, pp = A[keep], p[keep]
    g = g / g.sum()
    for step in range(steps + 1):
        F = np.maximum(Ap @ g, 1e-300)
        d = Ap.T @ (pp / F)
        if N * (float(d.max()) - 1.0) < gap_tol:
            return g, True
        if step == steps:
            break
        # the points with mass (a mass below NEWTON_MASS is taken as none where d_m <= 1,
        # as at the maximum) or with d_m > 1
        S = np.flatnonzero((g > NEWTON_MASS) | (d > 1.0))
        B = Ap[:, S] * (np.sqrt(pp) / F)[:, None]
        H = B.T @ B
        q = 1.0 - 2.0 * d[S]     # the model: 1/2 x'Hx + q'x, H g = d
        dH = H.diagonal().copy()
        for ridge in NEWTON_RIDGE:
            # Marquardt's ridge (each diagonal entry scaled by 1 + ridge), raised where the
            # step does not raise the likelihood
            H[np.diag_indices_from(H)] = dH * (1.0 + ridge)
            y = _qp_step(H, q, S, g.size)
            if y is None:
                continue
            gt = _halve(g, y, Ap, pp, F)
            if gt is not None:
                break
        else:
            # no model step raises it (a nearly singular model where support points lie
            # close together): a vertex exchange, whose direction ascends wherever the
            # bound is positive
            gt = _exchange(g, d, Ap, pp, F)
            if gt is None:
                break
        g = gt
    return g, False


def _exchange(g: np.ndarray, d: np.ndarray, Ap: np.ndarray, pp: np.ndarray, F: np.ndarray
              ) -> np.ndarray | None:
    """A vertex-exchange step (Bohning): mass ``t g_i`` moved from the support point ``i``
    with the smallest multiplier to the point ``j`` with the largest, ``t`` in [0, 1]
    maximising the (concave) log-likelihood along it by Newton's method in ``t``; the
    directional derivative ``g_i (d_j - d_i)`` is positive wherever the bound is. Returns
    the new point, or None where it does not raise the log-likelihood (its gain summed as
    in :func:`_halve`)."""
    sup = np.flatnonzero(g > 0)
    i = int(sup[np.argmin(d[sup])])
    j = int(np.argmax(d))
    if i == j:
        return None
    v = g[i] * (Ap[:, j] - Ap[:, i])
    t = 1.0
    lo, hi = 0.0, 1.0
    for _ in range(30):
        r = v / np.maximum(F + t * v, 1e-300)
        d1 = float(pp @ r)
        d2 = -float(pp @ (r * r))
        if d1 > 0:
            lo = t
        else:
            hi = t
        if t == 1.0 and d1 >= 0:
            break
        step = t - d1 / d2 if d2 < 0 else hi
        t = step if lo < step < hi else 0.5 * (lo + hi)
        if hi - lo < 1e-12:
            break
    gain = float(pp @ np.log1p(np.maximum(t * v / F, -1.0 + 1e-16)))
    if not gain > 0:
        return None
    gt = g.copy()
    gt[j] += t * g[i]
    gt[i] -= t * g[i]
    return gt


def _qp_step(H: np.ndarray, q: np.ndarray, S: np.ndarray, M: int) -> np.ndarray | None:
    """The maximiser of the model ``-(1/2 x'Hx + q'x)`` over ``x >= 0`` on the points ``S``,
    normalised, as a distribution on the ``M`` points; None where it is not one."""
    # imported here: scipy.linalg and scipy.optimize would add ~20 MB to every ``import
    # bndp`` (the command line's streaming memory), for ``gap_tol`` alone; scipy.optimize
    # (0.2 s to import) only where a step needs NNLS
    from scipy.linalg import cho_factor, cho_solve, solve_triangular
    try:
        c = cho_factor(H, lower=False, check_finite=False)
    except np.linalg.LinAlgError:
        return None
    x = cho_solve(c, -q, check_finite=False)
    neg = int((x < 0).sum())
    if neg:
        # the constrained maximiser: by principal pivoting from the unconstrained step's
        # positive set where that is most of the points (a large support near the maximum:
        # it differs from the solution's in a few points, a few factorisations), else (or
        # where pivoting stalls) by NNLS from scratch (cheap for a small support)
        z = _pivot(H, q, x > 0) if neg <= PIVOT_SHARE * len(S) else None
        if z is None:
            from scipy.optimize import nnls
            U = np.triu(c[0])
            z = nnls(U, -solve_triangular(U, q, trans="T", check_finite=False),
                     maxiter=10 * len(S))[0]
        x = z
    y = np.zeros(M)
    y[S] = x
    total = y.sum()
    if not (np.isfinite(total) and total > 0):
        return None
    return y / total


def _pivot(H: np.ndarray, q: np.ndarray, P: np.ndarray) -> np.ndarray | None:
    r"""The minimiser of ``1/2 x'Hx + q'x`` over ``x >= 0`` by block principal pivoting
    (Judice and Pires' full exchange) from the passive set ``P``: ``x_P`` solves
    :math:`H_{PP} x_P = -q_P`, ``x`` is 0 elsewhere, ``w = Hx + q``; every infeasible index
    (``x_i < 0`` in ``P``, ``w_i < 0`` outside it) changes side. Near the maximum of a
    well-conditioned model it ends in a few pivots; on a nearly singular one (close
    support points) the exchanges cycle: None after ``PIVOT_STALL`` pivots in a row without
    fewer infeasible indices than before, after ``PIVOT_STEPS`` pivots, or where ``H_PP``
    is not numerically positive definite (the caller then solves by NNLS)."""
    from scipy.linalg import cho_factor, cho_solve
    P = P.copy()
    tol = 1e-12 * (1.0 + float(np.abs(q).max()))
    best, stall = P.size + 1, 0
    for _ in range(PIVOT_STEPS):
        x = np.zeros(P.size)
        if P.any():
            try:
                c = cho_factor(H[np.ix_(P, P)], lower=False, check_finite=False)
            except np.linalg.LinAlgError:
                return None
            x[P] = cho_solve(c, -q[P], check_finite=False)
        bad = np.where(P, x < 0, H @ x + q < -tol)
        k = int(bad.sum())
        if k == 0:
            return x if np.isfinite(x).all() else None
        if k < best:
            best, stall = k, 0
        else:
            stall += 1
            if stall >= PIVOT_STALL:
                return None
        P ^= bad
    return None


def _halve(g: np.ndarray, y: np.ndarray, Ap: np.ndarray, pp: np.ndarray, F: np.ndarray
           ) -> np.ndarray | None:
    """``g + t (y - g)`` for the first t = 1, 1/2, 1/4, ... (down to 2^-20) that raises the
    log-likelihood, judged by the gain ``sum_b p_b log1p(t (A(y - g))_b / F_b)`` (``F =
    Ag``), exact where the gain is far below the log-likelihood's rounding (near the maximum
    a step's gain per value can be 1e-15 of it while the bound it lowers is a nat); None
    where no t does."""
    v = (Ap @ (y - g)) / F
    t = 1.0
    for _ in range(21):
        if float(pp @ np.log1p(np.maximum(t * v, -1.0 + 1e-16))) > 0:
            return g + t * (y - g)
        t *= 0.5
    return None
