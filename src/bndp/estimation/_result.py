"""The result of :func:`bndp.estimate`: :class:`Estimate`, its statistics and bootstrap
intervals."""

from __future__ import annotations

import functools
import math
from dataclasses import dataclass
from statistics import NormalDist
from typing import Any, Callable, Sequence

import numpy as np

from ._smooth import cell_edges


#: the mean's likelihood-ratio excess over its normal interval (in its standard
#: deviations, both sides together) beyond which the data are taken not to identify the
#: distribution, and every histogram bin's interval is widened to its range
UNIDENTIFIED_SD = 1.0
#: how far (in its standard deviations, beyond its normal interval raised by two standard
#: errors) the likelihood-ratio range of the cumulative probability at one point must
#: reach for a quantile's interval to be extended by it: the noise's blur of the point
#: alone takes it up to about 1.4 where the column is identified (an exponential column
#: under Laplace noise of scale 1/60 of its range)
CDF_UNIDENTIFIED_SD = 2.0


def _quantile(x: np.ndarray, g: np.ndarray, q: Any) -> np.ndarray:
    """Inverse CDF (the smallest support point whose cumulative probability reaches ``q``),
    rows of ``g`` over sorted ``x``."""
    c = np.cumsum(g, axis=-1)
    c /= c[..., -1:]
    qa = np.asarray(q, dtype=np.float64)
    if c.ndim == 1:
        idx = np.searchsorted(c, qa - 1e-12, side="left")
        return x[np.minimum(idx, len(x) - 1)]
    out = np.empty(c.shape[:1] + qa.shape)
    for r in range(c.shape[0]):
        idx = np.searchsorted(c[r], qa - 1e-12, side="left")
        out[r] = x[np.minimum(idx, len(x) - 1)]
    return out


def _hist(x: np.ndarray, g: np.ndarray, edges: np.ndarray, cells: bool = False
          ) -> np.ndarray:
    """Probability per bin ``[e_k, e_k+1)`` (the last bin closed), rows of ``g``: the mass
    of the points ``x`` in each bin, or with ``cells`` (:func:`_cell_shares`) the mass of
    their cells."""
    return g @ _bin_matrix(x, edges, cells)


def _bin_matrix(x: np.ndarray, edges: np.ndarray, cells: bool) -> np.ndarray:
    """``B[m, k]`` (points x bins): the share of the point ``x[m]``
    (:func:`_point_bins`) or, with ``cells``, of its cell (:func:`_cell_shares`) in the
    bin ``[e_k, e_k+1)``."""
    return _cell_shares(x, edges) if cells else _point_bins(x, edges)


def _point_bins(x: np.ndarray, edges: np.ndarray) -> np.ndarray:
    """``B[m, k]``: 1 where the point ``x[m]`` lies in the bin ``[e_k, e_k+1)`` (the last
    bin closed), else 0."""
    b = np.searchsorted(edges, x, side="right") - 1
    b[x == edges[-1]] = len(edges) - 2
    ok = (b >= 0) & (b < len(edges) - 1)
    onehot = np.zeros((len(x), len(edges) - 1))
    onehot[np.flatnonzero(ok), b[ok]] = 1.0
    return onehot


def _cell_shares(x: np.ndarray, edges: np.ndarray) -> np.ndarray:
    r"""``B[m, k]``: the share of the cell of the grid value ``x[m]`` (equally spaced) in
    the bin ``[e_k, e_k+1)``. The scaled model places a value between two grid values by
    linear interpolation (:func:`._scaled._place`), and the interpolated masses are read
    as spread evenly over their cells, :math:`[x_m - s/2, x_m + s/2]` (``s`` the grid
    spacing; half cells at the ends): for a density that is linear over a cell this
    gives each bin exactly the mass of the values in it, where counting a grid value
    wholly in the bin holding it moves about half a cell of density across every edge
    (8 bins over the battery's per-row column at :math:`10^6` rows: -0.0012, +0.0009 and
    +0.0002 in the first three bins' masses, against a sampling noise of 0.0005 to
    0.0003)."""
    x = np.asarray(x, dtype=np.float64)
    c = np.concatenate(([x[0]], (x[:-1] + x[1:]) / 2.0, [x[-1]]))
    a, b = c[:-1, None], c[1:, None]
    left, right = edges[None, :-1], edges[None, 1:]
    over = np.maximum(np.minimum(b, right) - np.maximum(a, left), 0.0)
    return over / (b - a)


@dataclass(frozen=True, eq=False)
class Estimate:
    r"""The estimated distribution of a column's true values, and bootstrap intervals.

    Returned by :func:`estimate`; see :mod:`bndp.estimation` for the method.

    Attributes
    ----------
    support : ndarray
        The true values the distribution is placed on (sorted; every group's support).
    probabilities : ndarray
        The estimated probability of each support point (sums to 1).
    n : int
        Released values used.
    level : float
        Confidence level of the intervals.
    target : str
        ``"column"`` or ``"population"`` (what the intervals cover; see :func:`estimate`).
    converged : bool
        Whether the fit (and every bootstrap fit) met the stopping rule.
    groups : int
        Row groups (distinct bounds) estimated separately.
    boot : ndarray
        Bootstrap distributions over ``support`` (``n_boot`` x support).
    boot_truth : ndarray
        The replicates' reference distributions: the drawn columns' (``"column"``) or the
        fit's (``"population"``).
    naive_mean : float
        The released values' plain mean (biased toward the middle of the range).
    parts : tuple
        Per row group: what :meth:`histogram` reads (the group's fit, its smoothing
        bandwidth, its released counts and bootstrap; see :mod:`bndp.estimation._smooth`).
    bounds_model : str
        ``"fixed"`` (one pair of bounds), ``"strata"`` (per-row bounds, each distinct pair
        estimated apart) or ``"scaled"`` (per-row bounds, one distribution of the values'
        position in their row; see :mod:`bndp.estimation._scaled`).
    model_check : dict or None
        Under ``"scaled"``: the check of its assumption, the difference in standard errors
        between narrow and wide rows (``"width"``) and between rows of low and high lower
        bounds (``"lower"``); None otherwise.
    profile : object or None
        What the intervals of the mean, the quantiles and the histogram bins read to widen
        where the data do not identify them: the likelihood-ratio range of a linear
        statistic (:mod:`bndp.estimation._profile`); None without bootstrap replicates.

    Examples
    --------
    >>> import bndp, numpy as np
    >>> m = bndp.BoundedLaplace(1.0, sensitivity=1.0, lower=0.0, upper=10.0)
    >>> y = m.sample(np.full(2000, 1.0), rng=1)
    >>> est = bndp.estimate(y, m, rng=2, n_boot=50)
    >>> round(est.mean, 1), round(float(y.mean()), 1)
    (1.0, 1.9)
    """

    support: np.ndarray
    probabilities: np.ndarray
    n: int
    level: float
    target: str
    converged: bool
    groups: int
    boot: np.ndarray
    boot_truth: np.ndarray
    naive_mean: float
    parts: tuple = ()
    bounds_model: str = "fixed"
    model_check: dict | None = None
    profile: Any = None

    # point estimates ------------------------------------------------------------------
    @property
    def distribution(self) -> tuple[np.ndarray, np.ndarray]:
        """``(support, probabilities)``: the estimated distribution of the true values."""
        return self.support, self.probabilities

    @property
    def mean(self) -> float:
        """The estimated mean of the true values."""
        return float(self.probabilities @ self.support)

    @property
    def variance(self) -> float:
        """The estimated variance of the true values (of the column, ``ddof = 0``)."""
        d = self.support - self.mean
        return float(self.probabilities @ (d * d))

    @property
    def sd(self) -> float:
        """The estimated standard deviation of the true values."""
        return math.sqrt(self.variance)

    def quantile(self, q: Any) -> Any:
        """The estimated ``q`` quantile(s) of the true values: the smallest support point
        whose estimated cumulative probability reaches ``q`` (a float for a scalar ``q``)."""
        out = _quantile(self.support, self.probabilities, _check_q(q))
        return float(out) if np.ndim(out) == 0 else out

    def histogram(self, edges: Any) -> np.ndarray:
        """Estimated probability mass of the true values in each bin ``[e_k, e_{k+1})``
        (the last bin closed, as :func:`numpy.histogram`): the released share of each bin
        corrected by the migration between bins expected under the fit smoothed at a
        bandwidth the data cannot reject (see :mod:`bndp.estimation._smooth`); under the
        scaled model of per-row bounds, the fitted distribution placed on the rows, each
        grid value's mass read as spread over its cell (:func:`_cell_shares`). Bins
        narrower than the noise scale are not resolved."""
        e = _check_edges(edges)
        if not self.parts:
            return _hist(self.support, self.probabilities, e, self._cells)
        h = sum(p.w * p.histogram(e) for p in self.parts)
        # a bin's correction may overshoot: bins clipped at 0 and the edges' total mass
        # (kept within [0, 1]) shared out again
        total = min(max(float(h.sum()), 0.0), 1.0)
        h = np.maximum(h, 0.0)
        return h * (total / h.sum()) if h.sum() > 0 else h

    # intervals ------------------------------------------------------------------------
    def _need_boot(self) -> None:
        if self.boot.shape[0] == 0:
            raise ValueError("no bootstrap replicates (n_boot=0): intervals need n_boot >= 2")

    def interval(self, statistic: Callable[[np.ndarray, np.ndarray], Any],
                 level: float | None = None) -> tuple[Any, Any]:
        """Bootstrap interval ``(low, high)`` of any statistic of the distribution:
        ``statistic(support, probabilities)`` (returning a float or an array) evaluated on
        the fit and on every replicate; the standard normal interval centred on the
        statistic of the fit, as for the mean (see :attr:`mean_interval` and
        :mod:`bndp.estimation`)."""
        self._need_boot()
        lev = self.level if level is None else _check_level(level)
        t0 = np.asarray(statistic(self.support, self.probabilities), dtype=np.float64)
        tb = np.array([statistic(self.support, b) for b in self.boot], dtype=np.float64)
        tt = np.array([statistic(self.support, b) for b in self.boot_truth],
                      dtype=np.float64)
        return _normal(t0, tb - tt, lev)

    @property
    def mean_interval(self) -> tuple[float, float]:
        r"""``(low, high)``: the interval of the mean at ``level``: the standard normal
        bootstrap interval ([DH97]_, section 5.2.1, with no bias correction; see
        :mod:`bndp.estimation`)

        .. math:: \hat\mu \pm \big(z_{1-\alpha/2}\, s_e
                  + \max(0, |\bar e| - 2 s_e / \sqrt{B})\big),

        where :math:`s_e` is the standard deviation (``ddof = 1``) of the ``B``
        replicates' errors :math:`e_b = \hat\mu^*_b - \mu^*_b` (replicate :math:`b`'s
        fitted mean less its reference mean, see ``boot_truth``), :math:`\bar e` their
        mean and :math:`\alpha = 1 - \text{level}`; clipped to the support's range. The
        second term widens the interval on both sides where the replicates show a bias
        beyond their own noise (an atom at a bound under wide noise: the fit is biased by
        up to about 0.8 of its standard deviation there, and the plain interval covered
        90 % instead of 95 %). The mean is a linear statistic of the fitted
        distribution: its maximum-likelihood estimate is nearly unbiased (measured within
        0.35 of its standard deviation in every setting of ``docs/estimates.md``), and its
        interval needs only the replicates' second moment, which few replicates estimate
        well.

        The replicates' mean error :math:`\bar e` is not subtracted (the bias-corrected
        interval of [DH97]_): it is the estimator's bias at the fitted distribution, which
        is discrete and spiky where the true one is smooth, not at the truth. It read
        +0.37 standard deviations where the estimate's bias was -0.09, and it varies
        against the estimate's own error, so subtracting it widened the centre's spread
        (by up to 8.5 %) and lowered the coverage (94.4 % against 94.9 % over 48 settings
        at 10^4 values, on the same estimates)."""
        self._need_boot()
        t0 = self.mean
        tb = self.boot @ self.support
        lo, hi = _normal(t0, tb - self.boot_truth @ self.support, self.level)
        below, above = self._mean_excess
        lo, hi = lo - below, hi + above
        a, b = float(self.support[0]), float(self.support[-1])
        return float(min(max(lo, a), b)), float(min(max(hi, a), b))

    @property
    def variance_interval(self) -> tuple[float, float]:
        """``(low, high)``: the interval of the variance at ``level``: the standard normal
        interval, as for the mean, clipped at 0."""
        lo, hi = self.interval(lambda x, g: g @ (x - g @ x) ** 2)
        return float(max(lo, 0.0)), float(hi)

    def quantile_interval(self, q: Any) -> tuple[Any, Any]:
        r"""``(low, high)``: the interval of the ``q`` quantile(s) at ``level``: the
        standard normal interval :math:`\hat x_q \pm z_{1-\alpha/2}\, s_e`, as for the
        mean (:math:`s_e` the standard deviation of the replicates' quantile errors),
        widened by half the support spacing on each side of the estimate and clipped to
        the support's range, then extended to every point :math:`x` whose cumulative
        probability :math:`F(x)` may still be :math:`q`: the likelihood-ratio range of
        :math:`F(x)` wherever it reaches beyond :math:`F(x)`'s own bootstrap interval
        (:meth:`_quantile_unidentified`), where that range shows the data do not
        identify :math:`F` just beyond the interval, whether or not the mean is. An atom
        within a noise scale of the quantile fits the released values as well as the same
        mass spread around it; the fit sits at the smoother one, every replicate with it,
        and the bootstrap interval alone missed the truth (a Gaussian count column at
        epsilon 0.5, 60 % zeros: 10 % coverage of its 0.75 quantile; a column with 30 % at
        one inner value: 23 % of the 0.25 quantile next to it).

        The estimate :math:`\hat x_q` is a support point, and the fit does not place mass
        between support points (spaced about ``resolution`` noise scales apart): the
        column's own quantile may lie anywhere in the estimate's cell, an offset the
        replicates' errors (support point against support point) do not hold. Without the
        widening the intervals lost coverage as the column grew, to 45 % at 10^5 values
        where the quantile's spread fell below the spacing. Not the basic bootstrap
        interval read off the replicates' error quantiles either: those errors take a few
        values, and their 2.5 % and 97.5 % points often coincide with 0 or sit on the
        fit's spikes. Measured (``docs/estimates.md``, 48 settings at 10^4 values, five
        quantiles): 97.7 % coverage (the basic interval 77.2 %), below 92 % only where the
        noise is wider than the column's shape (the Gaussian at epsilon 0.1 on bimodal
        columns: the estimate is biased by more than its spread and no bootstrap interval
        around the fit covers)."""
        self._need_boot()
        qq = _check_q(q)
        s = self.support
        t0 = np.asarray(_quantile(s, self.probabilities, qq))
        err = _quantile(s, self.boot, qq) - _quantile(s, self.boot_truth, qq)
        lo, hi = _normal(t0, err, self.level)
        # the estimate's cell: half the spacing to each neighbouring support point
        k = np.searchsorted(s, t0)
        below = np.where(k > 0, (s[k] - s[np.maximum(k - 1, 0)]) / 2.0, 0.0)
        above = np.where(k < s.size - 1, (s[np.minimum(k + 1, s.size - 1)] - s[k]) / 2.0,
                         0.0)
        lo, hi = np.clip(lo - below, s[0], s[-1]), np.clip(hi + above, s[0], s[-1])
        if self.profile is not None:
            lo, hi = self._quantile_unidentified(np.atleast_1d(qq), np.atleast_1d(lo),
                                                 np.atleast_1d(hi))
            lo, hi = lo.reshape(np.shape(qq)), hi.reshape(np.shape(qq))
        return (float(lo), float(hi)) if np.ndim(lo) == 0 else (lo, hi)

    def _quantile_unidentified(self, qq: np.ndarray, lo: np.ndarray, hi: np.ndarray
                               ) -> tuple[np.ndarray, np.ndarray]:
        r"""The quantiles' intervals reaching as far as the cumulative distribution's
        intervals allow: the ``q`` quantile's interval holds every support point ``x``
        where ``q`` lies between the lowest and highest plausible values of :math:`F(x)`,
        each the normal interval of :math:`F(x)` (the replicates' errors, as for the mean)
        or, where the data do not identify :math:`F(x)`, its likelihood-ratio range less
        the population's sampling part (:meth:`_unidentified`). An end is extended only
        where the data do not identify :math:`F` at the support point just beyond it: its
        likelihood-ratio range reaches beyond its normal interval (raised by two standard
        errors of its standard deviation) by more than ``CDF_UNIDENTIFIED_SD`` of its
        standard deviation. Searched by bisection beyond the interval's ends only."""
        s = self.support
        z = NormalDist().inv_cdf(0.5 + self.level / 2.0)
        kappa = z * z / 2.0
        F0 = np.cumsum(self.probabilities)
        Cb = np.cumsum(self.boot, axis=1)
        sd_col = np.std(Cb - np.cumsum(self.boot_truth, axis=1), axis=0, ddof=1)
        sd_pop = np.sqrt(np.sum((Cb - F0) ** 2, axis=0) / max(Cb.shape[0] - 1, 1))
        gap = z * np.maximum(sd_pop - sd_col, 0.0)
        # the normal half-width of F(x) under sampling of the population, raised by two
        # standard errors of its standard deviation (as in _unidentified)
        half = z * sd_pop * (1.0 + 2.0 / math.sqrt(2.0 * max(Cb.shape[0] - 1, 1)))

        def unidentified(k: int, sign: float) -> bool:
            # whether F(s[k])'s likelihood-ratio range reaches beyond its normal interval
            # (above: sign 1; below: -1) by more than CDF_UNIDENTIFIED_SD of its sd
            t = (s <= s[k]).astype(np.float64)
            need = F0[k] + sign * (half[k] + CDF_UNIDENTIFIED_SD * sd_pop[k])
            return sign * self.profile.bound(t, kappa, sd_pop[k], sign, need) > sign * need

        def reaches(k: int, sign: float, q: float) -> bool:
            # sign 1: the highest plausible F(s[k]) reaches q; -1: the lowest stays below
            t = (s <= s[k]).astype(np.float64)
            if sign > 0:
                if F0[k] + z * sd_col[k] >= q:
                    return True
                need = q + gap[k]
                return self.profile.bound(t, kappa, sd_pop[k], 1.0, need) >= need
            if F0[k] - z * sd_col[k] < q:
                return True
            need = q - gap[k]
            return self.profile.bound(t, kappa, sd_pop[k], -1.0, need) < need

        lo, hi = lo.copy(), hi.copy()
        for i, q in enumerate(qq):
            # the lower end: the first support point whose highest plausible F reaches q
            k = int(np.searchsorted(s, lo[i], side="left"))
            if k > 0 and unidentified(k - 1, 1.0) and reaches(k - 1, 1.0, q):
                a, b = 0, k - 1              # reaches at b; find the first
                while a < b:
                    m = (a + b) // 2
                    if reaches(m, 1.0, q):
                        b = m
                    else:
                        a = m + 1
                lo[i] = s[a]
            # the upper end: the last support point where the lowest plausible F is below q
            k = int(np.searchsorted(s, hi[i], side="right")) - 1
            if k < s.size - 1 and unidentified(k, -1.0) and reaches(k, -1.0, q):
                a, b = k, s.size - 1         # below at a; find the last, then one more
                while a < b:
                    m = (a + b + 1) // 2
                    if reaches(m, -1.0, q):
                        a = m
                    else:
                        b = m - 1
                hi[i] = s[min(a + 1, s.size - 1)]
        return lo, hi

    def histogram_interval(self, edges: Any) -> tuple[np.ndarray, np.ndarray]:
        """``(low, high)`` arrays: the intervals of each bin's mass at ``level``: the
        standard normal intervals, as for the mean, clipped to [0, 1], widened to the
        bin's likelihood-ratio range (:meth:`_unidentified`) where the data do not
        identify its mass: every bin where they do not identify the distribution (the
        mean's range, ``_flat``), and a bin narrower than the noise scale
        (:attr:`_noise_scale`) always. The noise moves a true value across such a bin's
        edges as easily as it keeps it inside: an atom in it and the same mass spread over
        its neighbours fit the released values alike, the fit sits at the smoother one and
        every replicate with it (a Gaussian count column at epsilon 0.5, bins 0.7 noise
        scales wide: 48 % of the bootstrap intervals covered; a column with 30 % at one
        inner value, bins 0.45 scales wide: 45 %)."""
        self._need_boot()
        e = _check_edges(edges)
        t0 = self.histogram(e)
        # each support point's (or cell's) share in each bin
        onehot = _bin_matrix(self.support, e, self._cells)
        tb = (sum(p.w * p.boot_histograms(e) for p in self.parts) if self.parts
              else self.boot @ onehot)
        err = tb - self.boot_truth @ onehot
        lo, hi = _normal(t0, err, self.level)
        scale = self._noise_scale
        widen = (np.ones(t0.size, dtype=bool) if self._flat
                 else np.diff(e) < scale if scale is not None
                 else np.zeros(t0.size, dtype=bool))
        if self.profile is not None and widen.any():
            # the bins' masses in the fitted distribution and its replicates
            ub = self.boot @ onehot
            cells = self._cell_bins(e)
            for k in np.flatnonzero(widen):
                below, above = self._unidentified(onehot[:, k], float(t0[k]), ub[:, k])
                lo[k] -= below
                hi[k] += above
                if cells is not None:
                    c_lo, c_hi = self._cell_range(cells, int(k), ub[:, k])
                    lo[k] = min(lo[k], c_lo)
                    hi[k] = max(hi[k], c_hi)
        return np.clip(lo, 0.0, 1.0), np.clip(hi, 0.0, 1.0)

    def _cell_bins(self, e: np.ndarray) -> list[tuple[np.ndarray, np.ndarray]] | None:
        """Per part (in the profile's order), which support points' cells lie inside each
        bin ``[e_k, e_k+1)`` and which meet it (support x bins, 0/1): a support point
        stands for the true values of its cell (:func:`._smooth.cell_edges`), so where a
        cell straddles a bin's edge the fit cannot say on which side its mass lies. None
        where the parts and the profile do not match."""
        if self.profile is None or len(self.parts) != len(self.profile.parts):
            return None
        out = []
        for p in self.parts:
            ce = cell_edges(p.law)
            a, b = ce[:-1, None], ce[1:, None]
            left, right = e[None, :-1], e[None, 1:]
            inside = (a >= left) & (b <= right)
            meets = (b > left) & (a < right)
            # a point cell (a == b, at a bound) meets the bin that holds its point
            point = (a == b) & (a >= left) & ((a < right) | (right == e[-1]))
            out.append((inside.astype(np.float64), (meets | point).astype(np.float64)))
        return out

    def _cell_range(self, cells: list[tuple[np.ndarray, np.ndarray]], k: int,
                    ub: np.ndarray) -> tuple[float, float]:
        r"""The likelihood-ratio range of bin ``k``'s mass with every support cell that
        straddles its edges taken at its worst: the least mass of the cells inside the bin
        and the largest of the cells that meet it, over the region (radius :math:`z^2/2`
        nats, as :meth:`_unidentified`). ``ub``: the bin's mass in the replicates (its
        spread sets the search's steps)."""
        assert self.profile is not None
        z = NormalDist().inv_cdf(0.5 + self.level / 2.0)
        sd = float(np.std(ub, ddof=1)) if ub.size > 1 else 0.0
        sd = max(sd, 1e-3)
        kappa = z * z / 2.0
        inner = [c[0][:, k] for c in cells]
        outer = [c[1][:, k] for c in cells]
        low = self.profile.bound(None, kappa, sd, -1.0, np.inf, per_part=inner)
        high = self.profile.bound(None, kappa, sd, 1.0, -np.inf, per_part=outer)
        return low, high

    @property
    def _cells(self) -> bool:
        """Whether the support is the scaled model's value grid, whose masses stand for
        their cells (:func:`_cell_shares`), not points."""
        return self.bounds_model == "scaled"

    @property
    def _noise_scale(self) -> float | None:
        """The noise kernel's scale in value units, the largest over the row groups (the
        scale the support's spacing is measured in); None where the fit has no groups'
        laws (the scaled model)."""
        if not self.parts:
            return None
        return max(float(p.law.plan.kernel.scale_grid * p.law.gamma) for p in self.parts)

    @functools.cached_property
    def _mean_excess(self) -> tuple[float, float]:
        """The mean's likelihood-ratio range beyond its normal interval, below and above
        (:meth:`_unidentified`)."""
        return self._unidentified(self.support, self.mean, self.boot @ self.support)

    @functools.cached_property
    def _flat(self) -> bool:
        """Whether the data do not identify the distribution: the mean's likelihood-ratio
        range reaches beyond its normal interval by more than ``UNIDENTIFIED_SD`` of its
        standard deviation (both sides together). Then every bin's interval is widened
        to its likelihood-ratio range; where the mean is
        identified, the ranges of bins at least a noise scale wide are wide by the
        noise's blur of a bin's edge (a statistic no deconvolution estimates at the
        square-root rate), which their bootstrap intervals already cover in the battery
        (narrower bins are widened regardless: :meth:`histogram_interval`; the quantiles
        by their own ranges: :meth:`quantile_interval`)."""
        if self.profile is None:
            return False
        tb = self.boot @ self.support
        sd = float(np.std(tb - self.mean, ddof=1))
        return sum(self._mean_excess) > UNIDENTIFIED_SD * sd

    def _unidentified(self, t: np.ndarray, t0: float, tb: np.ndarray
                      ) -> tuple[float, float]:
        r"""How far below and above ``t0 -/+ z s`` the likelihood-ratio range of the linear
        statistic ``t @ g`` reaches (:mod:`bndp.estimation._profile`): ``s`` the
        statistic's standard deviation under sampling of the population (the replicates'
        statistics ``tb`` about the fit's, ``ddof = 1``), ``z`` the normal quantile of
        ``level`` (raised by two standard errors of ``s``), the region's radius
        :math:`z^2/2` nats. Where the likelihood is as
        curved as the bootstrap sees it, the range is that normal interval and nothing is
        added; where it is flat (the data cannot identify the statistic), the excess is.
        (0, 0) without the profile."""
        if self.profile is None:
            return 0.0, 0.0
        z = NormalDist().inv_cdf(0.5 + self.level / 2.0)
        sd = float(np.sqrt(np.sum((tb - float(t @ self.probabilities)) ** 2)
                           / max(tb.shape[0] - 1, 1)))
        if not sd > 0:
            return 0.0, 0.0
        kappa = z * z / 2.0
        # the normal interval's half-width, raised by two standard errors of the
        # replicates' standard deviation (relative 1 / sqrt(2 (B - 1))): a range beyond it
        # by less is within the bootstrap's own noise
        half = z * sd * (1.0 + 2.0 / math.sqrt(2.0 * max(tb.shape[0] - 1, 1)))
        lo_need, hi_need = t0 - half, t0 + half
        hi = self.profile.bound(t, kappa, sd, 1.0, hi_need)
        lo = self.profile.bound(t, kappa, sd, -1.0, lo_need)
        return max(0.0, lo_need - lo), max(0.0, hi - hi_need)

    def summary(self, quantiles: Sequence[float] = (0.1, 0.25, 0.5, 0.75, 0.9)) -> dict:
        """A plain dictionary of the estimates and their intervals (what ``bndp estimate
        --json`` prints); the intervals are None without bootstrap replicates
        (``n_boot=0``)."""
        q = np.asarray(quantiles, dtype=np.float64)
        qv = np.atleast_1d(self.quantile(q))
        none = np.full(qv.shape, None)
        lo: float | None
        hi: float | None
        slo: float | None
        shi: float | None
        if self.boot.shape[0]:
            lo, hi = self.mean_interval
            vlo, vhi = self.variance_interval
            slo, shi = math.sqrt(vlo), math.sqrt(vhi)
            qlo, qhi = (np.atleast_1d(a).astype(object) for a in self.quantile_interval(q))
        else:
            lo = hi = slo = shi = None
            qlo = qhi = none
        return {
            "n": self.n, "level": self.level, "target": self.target,
            "mean": self.mean, "mean_low": lo, "mean_high": hi,
            "sd": self.sd, "sd_low": slo, "sd_high": shi,
            "naive_mean": self.naive_mean,
            "quantiles": {f"{float(p):g}": {"value": float(v),
                                             "low": None if a is None else float(a),
                                             "high": None if b is None else float(b)}
                          for p, v, a, b in zip(q, qv, qlo, qhi)},
            "converged": self.converged, "groups": self.groups,
            "bounds_model": self.bounds_model,
        }


def _normal(t0: Any, err: np.ndarray, level: float) -> tuple[Any, Any]:
    """The standard normal interval ``t0 -/+ (z * sd(err) + slack)`` (``z`` the normal
    ``(1 + level) / 2`` quantile, ``sd`` over the replicates, axis 0, with ``ddof = 1``),
    widened on both sides by the replicates' mean error beyond its own noise,
    ``slack = max(0, |mean(err)| - 2 sd(err) / sqrt(B))`` for ``B`` replicates; floats
    for a scalar ``t0``, else arrays.

    The interval is not shifted by the mean error (the bootstrap's bias at the fitted
    distribution is no reliable correction of the bias at the truth: its sign can differ),
    but a clear bias at the fit is taken as a sign that the estimator errs by as much at
    the truth, in a direction the interval does not know: where the data cannot resolve
    what is asked (an atom at a bound under wide noise, a flat likelihood), the fit is
    biased by a good part of its standard deviation and the replicates see it."""
    z = NormalDist().inv_cdf(0.5 + level / 2.0)
    sd = np.std(err, axis=0, ddof=1)
    slack = np.maximum(np.abs(np.mean(err, axis=0)) - 2.0 * sd / math.sqrt(err.shape[0]),
                       0.0)
    half = z * sd + slack
    if np.ndim(t0) == 0:
        return float(t0 - half), float(t0 + half)
    return t0 - half, t0 + half


def _check_q(q: Any) -> np.ndarray:
    qa = np.asarray(q, dtype=np.float64)
    if not np.all((qa >= 0) & (qa <= 1)):
        raise ValueError(f"quantile levels must lie in [0, 1]; got {q!r}")
    return qa


def _check_edges(edges: Any) -> np.ndarray:
    e = np.asarray(edges, dtype=np.float64)
    if e.ndim != 1 or e.size < 2 or not np.all(np.diff(e) > 0) or not np.isfinite(e).all():
        raise ValueError("`edges` must be at least two finite, strictly increasing numbers")
    return e


def _check_level(level: Any) -> float:
    if isinstance(level, (bool, np.bool_)) or not isinstance(
            level, (int, float, np.integer, np.floating)) or not 0.0 < float(level) < 1.0:
        raise ValueError(f"`level` must be a number in (0, 1); got {level!r}")
    return float(level)

