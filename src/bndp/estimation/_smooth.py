r"""The smoothed histogram of :meth:`bndp.Estimate.histogram`.

The maximum-likelihood distribution of a deconvolution is discrete: its mass gathers into
a few points spaced about a noise scale apart, even when the true column is smooth, so a
histogram read off it directly is lumpy. The histogram is instead read off the fitted
distribution smoothed by a Gaussian kernel of standard deviation :math:`h`, folded back
into the row's range at both bounds (mass that would leave the range is reflected, so
every atom keeps its mass inside ``[lower, upper]``):

.. math:: K_h(x, [a, b)) \propto \sum_{x' \in \{x,\, 2l - x,\, 2u - x\}}
          \Phi\Big(\frac{b - x'}{h}\Big) - \Phi\Big(\frac{a - x'}{h}\Big),

normalised to one over ``[l, u]``. This is the EMS estimator of Silverman et al.
[SJWN90]_ with its smoothing applied once, after the EM fit.

*The bandwidth* is the largest :math:`h` the data do not reject against the maximum
likelihood fit: with :math:`\hat g` the fit and :math:`\hat g_h` its smoothed version
(discretised onto the support's cells), the likelihood-ratio statistic
:math:`D(h) = 2 \sum_b c_b \ln\big((A\hat g)_b / (A\hat g_h)_b\big)` must stay below
the 95 % point of the same statistic between a fit and its truth, measured by a parametric
bootstrap from :math:`\hat g` (:func:`lr_limit`: ``CALIBRATION_REPS`` columns, a fixed
seed, so the estimate stays deterministic): :math:`\hat g_h` lies in the 95 %
likelihood-ratio confidence region of the true distribution. :math:`h` is scanned upward
on :math:`t \cdot 2^{k/2}`, from an eighth of the noise scale :math:`t` to a quarter of
the range, and the scan stops at the first rejection. A smooth column is smoothed at about the noise scale (the resolution of
the deconvolution); a pile of values at a bound, or a mode narrower than the noise, is
kept sharp because smoothing it changes the released law visibly; more data allow less
smoothing (the estimate stays consistent).

.. [SJWN90] B. W. Silverman, M. C. Jones, J. D. Wilson, D. W. Nychka. "A Smoothed EM
   Approach to Indirect Estimation Problems, with Particular Reference to Stereology and
   Emission Tomography". Journal of the Royal Statistical Society B 52(2), 271–324, 1990.
"""

from __future__ import annotations

import numpy as np
from scipy.special import ndtr

#: the likelihood-ratio statistic allowed to the smoothing without a calibration: the 95 %
#: point of chi^2_1
LR_LIMIT = 3.841458820694124
#: bandwidths beyond which a normal cdf is exactly 0 or 1 in doubles (0 below -38.5, 1
#: above 8.3)
FAR = 40.0
#: bandwidths tried, in units of the noise scale (each step a factor sqrt 2)
STEPS = 2.0 ** (np.arange(-6, 9) / 2.0)


def kernel_mass(x: np.ndarray, h: float, lower: float, upper: float,
                edges: np.ndarray) -> np.ndarray:
    """``K[m, k]``: the mass of the folded Gaussian around ``x[m]`` (sd ``h``) in the bin
    ``[edges[k], edges[k+1])``; atoms (``h = 0``) fall in the bin holding them, the last
    bin closed."""
    e = np.asarray(edges, dtype=np.float64)
    if h <= 0:
        b = np.searchsorted(e, x, side="right") - 1
        b[x == e[-1]] = len(e) - 2
        ok = (b >= 0) & (b < len(e) - 1)
        out = np.zeros((len(x), len(e) - 1))
        out[np.flatnonzero(ok), b[ok]] = 1.0
        return out
    ec = np.clip(e, lower, upper)
    ends = np.array([lower, upper])

    # the images reflected at the bounds, only for the points within FAR bandwidths of the
    # bound: farther, their normal cdf at every v in [lower, upper] is exactly 1 (lower)
    # or 0 (upper) in doubles
    lo_near = x - lower <= FAR * h
    near_lo, far_lo = np.flatnonzero(lo_near), np.flatnonzero(~lo_near)
    near_hi = np.flatnonzero(upper - x <= FAR * h)

    def cdf(v: np.ndarray) -> np.ndarray:
        c = ndtr((v[None, :] - x[:, None]) / h)
        c[far_lo] += 1.0
        c[near_lo] += ndtr((v[None, :] - (2.0 * lower - x[near_lo])[:, None]) / h)
        c[near_hi] += ndtr((v[None, :] - (2.0 * upper - x[near_hi])[:, None]) / h)
        return c

    total = np.diff(cdf(ends), axis=1)[:, 0]
    return np.diff(cdf(ec), axis=1) / total[:, None]


def cell_edges(law) -> np.ndarray:
    """Value edges of the support's cells (the fine indices binned to each point)."""
    lo = law.lower + (law.lo.astype(np.float64) - 0.5) * law.gamma
    e = np.append(lo, law.lower + (law.hi[-1] + 0.5) * law.gamma)
    e[0], e[-1] = law.lower, law.lower + law.n * law.gamma
    return e


def bandwidth(law, counts: np.ndarray, g: np.ndarray, limit: float = LR_LIMIT) -> float:
    """The largest bandwidth on the grid ``t * STEPS`` (``t`` the noise scale in value
    units, at most a quarter of the range) whose smoothed fit the likelihood-ratio test
    does not reject: ``D(h) <= LR_LIMIT``; 0 when even the smallest is rejected."""
    t = float(law.plan.kernel.scale_grid) * law.gamma
    width = law.n * law.gamma
    x = law.values
    edges = cell_edges(law)
    upper = law.lower + width
    pos = counts > 0
    f0 = np.maximum(law.A @ g, 1e-300)
    best = 0.0
    for c in STEPS:
        h = c * t
        if h > width / 4:
            break
        gh = g @ kernel_mass(x, h, law.lower, upper, edges)
        fh = np.maximum(law.A @ gh, 1e-300)
        D = 2.0 * float(np.sum(counts[pos] * np.log(f0[pos] / fh[pos])))
        if D > limit:
            break
        best = h
    return best


#: the quantile of the bootstrap's likelihood-ratio statistic that bounds the smoothing:
#: the smoothed fit stays inside the 95 % likelihood-ratio confidence region of the truth
LR_QUANTILE = 0.95
#: bootstrap replicates that calibrate the likelihood-ratio limit, and their seed (the
#: estimate stays deterministic)
CALIBRATION_REPS = 24
CALIBRATION_SEED = 20260531


def lr_limit(law, g: np.ndarray, N: float, tol: float, max_iter: int,
             quantile: float = LR_QUANTILE, gap_tol: float | None = None) -> float:
    """The likelihood-ratio statistic of the maximum-likelihood fit against the truth,
    :math:`D^* = 2 \\sum_b c^*_b \\ln((A\\hat g^*)_b / (A\\hat g)_b)`, at its ``quantile``
    over ``CALIBRATION_REPS`` parametric-bootstrap columns drawn from ``g``: how far the
    fit of data from a known truth typically sits from that truth."""
    from ._em import _fit
    from ._law import _band, _release_counts

    gen = np.random.default_rng(CALIBRATION_SEED)
    Nn = max(int(round(N)), 1)
    nstar = gen.multinomial(Nn, g / g.sum(), size=CALIBRATION_REPS)
    band = _band(law.spread(), 1e-4 / Nn)
    C = np.stack([_release_counts(law, band, nstar[b], gen)
                  for b in range(CALIBRATION_REPS)])
    gb, _, _ = _fit(C / Nn, N, law, tol, max_iter, gap_tol)
    fb = np.maximum(gb @ law.AT, 1e-300)
    ft = np.maximum(law.A @ g, 1e-300)
    with np.errstate(divide="ignore", invalid="ignore"):
        D = 2.0 * np.sum(np.where(C > 0, C * np.log(fb / ft[None, :]), 0.0), axis=1)
    return float(np.quantile(D, quantile))


def _fine_edges(law, edges: np.ndarray) -> np.ndarray:
    """The first fine grid index at or above every edge (released values are grid points;
    a value on an edge starts the bin above it, the last edge closes the last bin)."""
    j = np.ceil((np.asarray(edges, dtype=np.float64) - law.lower) / law.gamma - 1e-9)
    j = np.clip(j, 0, law.n + 1).astype(np.int64)
    top = law.lower + law.n * law.gamma
    if edges[-1] >= top:
        j[-1] = law.n + 1
    return j


def release_mass(law, edges: np.ndarray) -> np.ndarray:
    """``R[m, k]``: the probability that a true value at support point ``m`` is released
    in the bin ``[edges[k], edges[k+1])``, summed exactly from the kernel."""
    j = _fine_edges(law, edges)
    D = law._D
    top = 2 * D + 1
    s = law.s[:, None]
    hi_i = np.clip(j[None, 1:] - 1 - s + D + 1, 0, top)
    lo_i = np.clip(j[None, :-1] - s + D, 0, top)
    R = np.maximum(law._cpad[hi_i] - law._cpad[lo_i], 0.0)
    full = np.maximum(law._cpad[np.clip(law.n - law.s + D + 1, 0, top)]
                      - law._cpad[np.clip(-law.s + D, 0, top)], 1e-300)
    return R / full[:, None]


class Bandwidth:
    """The bandwidth of one group's fit, calibrated (:func:`lr_limit`, :func:`bandwidth`) on
    first use and then kept: an estimate read only for its mean, quantiles or their
    intervals never pays for it. The calibration has its own seed, so the value does not
    depend on when it is computed."""

    __slots__ = ("_args", "_h")

    def __init__(self, law, counts: np.ndarray, g: np.ndarray, N: float, tol: float,
                 max_iter: int, gap_tol: float | None) -> None:
        self._args: tuple | None = (law, counts, g, N, tol, max_iter, gap_tol)
        self._h: float | None = None

    @property
    def value(self) -> float:
        if self._h is None:
            assert self._args is not None
            law, counts, g, N, tol, max_iter, gap_tol = self._args
            self._h = bandwidth(law, counts, g, lr_limit(law, g, N, tol, max_iter,
                                                         gap_tol=gap_tol))
            self._args = None           # the value is kept; the fit's data are not
        return self._h

    def __getstate__(self) -> tuple:
        return (self._args, self._h)

    def __setstate__(self, state: tuple) -> None:
        self._args, self._h = state


class Part:
    r"""One row group's share of the histogram: its fit ``g``, bandwidth ``h`` (a float, or
    a :class:`Bandwidth` read on first use), released fine counts and bootstrap (fits,
    released bin counts).

    The histogram of the group in the bins ``k`` is the released share corrected by the
    fitted law's expected migration between bins:

    .. math:: \hat p_k = r_k + \sum_m \hat g_m \big(K_h(x_m, k)
              - \textstyle\sum_{m'} K_h(x_m, \mathrm{cell}_{m'}) R_{m'k}\big),

    ``r`` the released values' share in bin ``k``, ``K_h`` the smoothing kernel and
    ``R`` the release law summed over the bin. Where the noise is small against the bins
    the correction is small and the estimate keeps the released histogram's precision;
    where it is large the released share cancels the fit's own and the estimate is the
    smoothed fit plus the fit's residual."""

    def __init__(self, law, w: float, g: np.ndarray, h: "float | Bandwidth",
                 fine: np.ndarray, boot: np.ndarray, boot_counts: np.ndarray) -> None:
        self.law, self.w, self.g, self._h = law, w, g, h
        self.fine, self.boot, self.boot_counts = fine, boot, boot_counts

    @property
    def h(self) -> float:
        """The smoothing bandwidth (value units; 0: no smoothing)."""
        if isinstance(self._h, Bandwidth):
            self._h = self._h.value
        return self._h

    def _parts(self, edges: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        law = self.law
        upper = law.lower + law.n * law.gamma
        K = kernel_mass(law.values, self.h, law.lower, upper, edges)
        Kc = kernel_mass(law.values, self.h, law.lower, upper, cell_edges(law))
        return K - Kc @ release_mass(law, edges), _fine_edges(law, edges)

    def histogram(self, edges: np.ndarray) -> np.ndarray:
        C, j = self._parts(edges)
        cs = np.concatenate(([0.0], np.cumsum(self.fine, dtype=np.float64)))
        r = np.diff(cs[j]) / cs[-1]
        return r + self.g @ C

    def boot_histograms(self, edges: np.ndarray) -> np.ndarray:
        """The histograms of the bootstrap fits (their released shares from the support
        bins, each bin's count spread evenly over its fine indices)."""
        C, j = self._parts(edges)
        law = self.law
        lo = law.lo[:, None].astype(np.float64)
        hi = law.hi[:, None].astype(np.float64) + 1.0
        a = np.maximum(lo, j[None, :-1])
        b = np.minimum(hi, j[None, 1:])
        O = np.maximum(b - a, 0.0) / (hi - lo)
        r = self.boot_counts @ O / self.boot_counts.sum(axis=1, keepdims=True)
        return r + self.boot @ C
