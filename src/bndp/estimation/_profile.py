r"""The likelihood-ratio range of a linear statistic: what the data cannot tell apart.

The bootstrap intervals hold the spread of the estimator around its fit, not a bias the fit
cannot show. Where the data do not identify a statistic (an atom at a bound under noise as
wide as the range, a flat likelihood), distributions whose statistic differs by several
bootstrap standard deviations fit the released counts equally well, and the fit, and with
it every replicate, sits at one of them. What the data do say is the likelihood-ratio
confidence region of the true distribution,

.. math:: \{g : \ell(\hat g) - \ell(g) \le \kappa\}, \qquad \kappa = z_{1-\alpha/2}^2 / 2,

and the range of a linear statistic :math:`t \cdot g` over it (the profile-likelihood
interval of :math:`t \cdot g`). Where the likelihood is curved as the bootstrap sees it, that
range is the normal interval :math:`t \cdot \hat g \pm z\, s` with :math:`s` the
statistic's standard deviation under sampling of the population (the bootstrap's
replicates against the fit); where it is flat, the range is wider, and the excess is what
the intervals of :class:`bndp.Estimate` add on each side.

*The range* is found on the frontier of the region: for :math:`\lambda \ge 0` the
maximiser of :math:`\ell(g)/N - \ln(1 - \lambda t'\cdot g)` (:math:`t' = t - \max t \le 0`)
over the simplex maximises the likelihood among the distributions with its value of
:math:`t \cdot g` (the objective rises with both), and is the maximum likelihood of the law
whose columns are scaled by :math:`1 / (1 - \lambda t'_m)` (the tilted law, fitted by the
same sequential quadratic programming steps as ``gap_tol``); :math:`\lambda` is searched
(starting where a quadratic likelihood with the bootstrap's spread would reach the
region's edge, then doubled until a fit leaves the region, then interpolated in the square
root of the likelihood drop) for the largest statistic whose fit stays inside the region. Every point kept lies inside the region, so the range found is
never wider than the region's.
"""

from __future__ import annotations

import numpy as np

from ._em import _newton, _one_blas_thread

#: the certificate of the maximum the region is measured from (nats, whole column), and
#: of every tilted fit
PROFILE_GAP = 0.01
TILT_GAP = 0.05
#: the most tilted fits per side of a statistic
PROFILE_FITS = 14


def _loglik(A: np.ndarray, p: np.ndarray, g: np.ndarray) -> float:
    F = np.maximum(A @ g, 1e-300)
    k = p > 0
    return float(p[k] @ np.log(F[k]))


class _ProfilePart:
    """One fitted law: ``A`` (bins x support), the bin proportions ``p`` of ``N`` values,
    the certified maximum ``g`` and its log-likelihood per value, the group's weight in
    the column and ``T`` (support x the column's support: where the group's support
    points fall in the column's)."""

    __slots__ = ("A", "p", "N", "fit", "w", "T", "_g", "_l0")

    def __init__(self, A: np.ndarray, p: np.ndarray, N: float, fit: np.ndarray,
                 w: float, T: np.ndarray) -> None:
        self.A, self.p, self.N, self.fit, self.w, self.T = A, p, N, fit, w, T
        self._g: np.ndarray | None = None
        self._l0 = 0.0

    @property
    def g(self) -> np.ndarray:
        """The maximum, certified within ``PROFILE_GAP`` nats from the fit (on first use)."""
        if self._g is None:
            with _one_blas_thread():
                gc, _ = _newton(self.fit, self.p, self.A, self.N, PROFILE_GAP)
            self._g, self._l0 = gc, _loglik(self.A, self.p, gc)
        return self._g

    @property
    def l0(self) -> float:
        """The log-likelihood per value of :attr:`g`."""
        self.g
        return self._l0

    def tilted(self, t: np.ndarray, lam: float, start: np.ndarray) -> np.ndarray:
        """The maximum of ``l(g)/N - ln(1 - lam t'.g)`` from ``start`` (``t'`` = ``t -
        max t``)."""
        w = 1.0 - lam * (t - t.max())
        mu = start * w
        mu, _ = _newton(mu / mu.sum(), self.p, self.A / w[None, :], self.N, TILT_GAP)
        g = mu / w
        return g / g.sum()


class Profile:
    """The likelihood-ratio ranges of linear statistics of a column's distribution, over
    its fitted groups (see the module docstring); a statistic of the column is ``t @
    probabilities`` for ``t`` over the column's support."""

    def __init__(self, parts: list[_ProfilePart]) -> None:
        self.parts = parts
        self.N = float(sum(q.N for q in parts))

    def bound(self, t: np.ndarray | None, kappa: float, sd: float, sign: float,
              need: float, per_part: list[np.ndarray] | None = None) -> float:
        """The largest (``sign`` 1) or least (``sign`` -1) ``t @ g`` found inside the
        region ``l(g_hat) - l(g) <= kappa`` (nats, whole column), searched only as far as
        it matters: the search stops once the region is seen to end before ``need`` (then
        the value returned is at most ``need`` in the direction ``sign``) or the edge is
        bracketed to a tenth of ``sd``, the statistic's bootstrap standard deviation.
        ``per_part``: the statistic given over each part's own support instead (one
        vector a part, in the parts' order; ``t`` is then ignored)."""
        if per_part is not None:
            ts = [sign * np.asarray(tp, dtype=np.float64) for tp in per_part]
        else:
            ts = [sign * (q.T @ t) for q in self.parts]
        t0 = sum(q.w * float(tq @ q.g) for q, tq in zip(self.parts, ts))
        if not (np.isfinite(sd) and sd > 0):
            return sign * t0
        with _one_blas_thread():
            return sign * self._side(ts, t0, kappa, sd, sign * need)

    def _side(self, ts: list[np.ndarray], t0: float, kappa: float, sd: float,
              need: float) -> float:
        best, d_lo, lam_lo = t0, 0.0, 0.0
        lam_hi, d_hi, t_hi = np.inf, np.inf, np.inf
        # where a quadratic likelihood with the bootstrap's spread reaches the edge
        lam = float(np.sqrt(2.0 * kappa)) / (self.N * sd)
        starts = [q.g for q in self.parts]
        for _ in range(PROFILE_FITS):
            gs = [q.tilted(tq, lam, s) for q, tq, s in zip(self.parts, ts, starts)]
            drop = sum(q.N * (q.l0 - _loglik(q.A, q.p, g)) for q, g in zip(self.parts, gs))
            val = sum(q.w * float(tq @ g) for q, tq, g in zip(self.parts, ts, gs))
            if drop <= kappa:
                if val > best:
                    best = val
                lam_lo, d_lo, starts = lam, max(drop, 0.0), gs
            else:
                lam_hi, d_hi, t_hi = lam, drop, val
                if val <= need:
                    break
            if t_hi - best < 0.1 * sd:
                break
            if not np.isfinite(lam_hi):
                lam *= 2.0
            else:
                # sqrt(drop) grows about linearly in the tilt: interpolate, kept inside
                # the bracket's middle 80 %
                a, b = np.sqrt(d_lo), np.sqrt(d_hi)
                f = (np.sqrt(kappa) - a) / (b - a) if b > a else 0.5
                f = min(max(f, 0.1), 0.9)
                lam = lam_lo + f * (lam_hi - lam_lo)
        return best
