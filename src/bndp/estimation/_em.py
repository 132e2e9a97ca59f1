"""Maximum likelihood of the true distribution: EM (Richardson-Lucy) with SQUAREM, batched
over bootstrap replicates."""

from __future__ import annotations

import numpy as np

from ._law import _BinnedLaw


def _em(G: np.ndarray, P: np.ndarray, law: _BinnedLaw
        ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """One EM step for every row of ``G`` (distributions) against the bin proportions
    ``P``: the next iterate, the log-likelihood per observation of ``G`` and the largest
    EM multiplier ``max_m d_m`` of ``G``, ``d = A^T (P / AG)`` (the gradient of the
    log-likelihood per observation; ``max_m d_m - 1`` bounds what is left to gain)."""
    F = law.forward(G)
    np.maximum(F, 1e-300, out=F)
    with np.errstate(divide="ignore", invalid="ignore"):
        R = np.where(P > 0, P / F, 0.0)
        L = np.sum(np.where(P > 0, P * np.log(F), 0.0), axis=1)
    d = law.backward(R)
    return G * d, L, d.max(axis=1)


def _start(P: np.ndarray) -> np.ndarray:
    M = P.shape[1]
    return 0.5 / M + 0.5 * P


def _fit(P: np.ndarray, N: float, law: _BinnedLaw, tol: float, max_iter: int,
         gap_tol: float | None = None) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    r"""Maximum likelihood for each row of bin proportions ``P`` (replicates x bins):
    the distributions, the log-likelihoods per observation and the converged flags. A row
    stops when one cycle gains less than ``tol`` (nats, whole column) and, with
    ``gap_tol``, when also the duality bound of its cycle's start, ``N (max_m d_m - 1)``,
    is below ``gap_tol``: the log-likelihood is concave, so
    :math:`\ell(\hat g) - \ell(g) \le \nabla\ell(g) \cdot (\hat g - g) \le N(\max_m d_m - 1)`
    (``sum_m g_m d_m = 1``), and a cycle never lowers it."""
    G = _start(P)
    R = P.shape[0]
    L = np.full(R, -np.inf)
    done = np.zeros(R, dtype=bool)
    thr = tol / max(N, 1.0)
    gthr = 0.0 if gap_tol is None else gap_tol / max(N, 1.0)
    act = np.arange(R)
    for _ in range(max_iter):
        if act.size == 0:
            break
        g0, p = G[act], P[act]
        g1, l0, d0 = _em(g0, p, law)
        g2, l1, _ = _em(g1, p, law)
        r = g1 - g0
        v = g2 - g1 - r
        sr = np.sqrt(np.einsum("ij,ij->i", r, r))
        sv = np.sqrt(np.einsum("ij,ij->i", v, v))
        with np.errstate(divide="ignore", invalid="ignore"):
            alpha = np.where(sv > 0, -sr / sv, -1.0)
        alpha = np.minimum(alpha, -1.0)
        gp = g0 - 2.0 * alpha[:, None] * r + (alpha * alpha)[:, None] * v
        for _ in range(6):   # shorten the step toward -1 (g2) until non-negative
            bad = (gp < 0).any(axis=1)
            if not bad.any():
                break
            alpha = np.where(bad, (alpha - 1.0) / 2.0, alpha)
            gp = g0 - 2.0 * alpha[:, None] * r + (alpha * alpha)[:, None] * v
        bad = (gp < 0).any(axis=1)
        gp[bad] = g2[bad]
        gp /= gp.sum(axis=1, keepdims=True)
        gn, lp, _ = _em(gp, p, law)
        worse = lp < l1
        if worse.any():   # the extrapolation lost likelihood: keep the double EM step
            gn[worse] = _em(g2[worse], p[worse], law)[0]
            lp = np.where(worse, l1, lp)
        G[act] = gn
        L[act] = lp
        stop = (lp - l0) < thr
        if gap_tol is not None:
            stop &= (d0 - 1.0) < gthr
        done[act[stop]] = True
        act = act[~stop]
    # the log-likelihood of the returned iterate
    L = _em(G, P, law)[1]
    return G, L, done

