r"""Statistics of the true values from released data: :func:`estimate`.

A bounded mechanism keeps every released value in range by pulling it toward the middle of
the range, so the released column's mean, quantiles and histogram are biased estimates of
the true column's. bndp knows the exact law of every released value: in the default release
(:mod:`bndp.mechanisms.window`) the output of a row :math:`[l, u]` is the grid point
:math:`l + j\gamma`, ``j = 0..n``, with probability

.. math:: P(j \mid i) = w(j - i) / S_i

for a true value whose grid index is ``i``. The released counts are therefore a known
mixture of the laws of the true values, and the distribution of the true values is
estimated by maximum likelihood over that exact law (deconvolution). It is
post-processing of the released data alone: it reads no private data and spends no
privacy budget.

The estimator
-------------
*Support and bins.* The true values of a row are estimated on its release grid thinned to
``M`` points :math:`i_0 = 0 < i_1 < \dots < i_{M-1} = n`, evenly spaced every ``k`` grid
steps, ``k`` the largest step at most ``resolution`` times the noise scale (and ``M`` at
most ``max_support``); both bounds are always support points. The released values are
counted in ``M`` bins, each the grid points nearest to one support point. Detail finer
than the noise scale cannot be resolved from the released data (the likelihood is nearly
flat along it), so the thinning loses little: the mean of a true value between two support
points is carried by the mixture of the two. ``resolution=0`` keeps every grid point
(``M = n + 1``).

*The law of the bins.* :math:`A_{bm} = P(\text{bin } b \mid i_m) = \sum_{j \in b}
w(j - i_m) / S_{i_m}`, summed exactly from the mechanism's own integer kernel table and its
geometric tails (to :math:`2^{-60}` of their mass).

*Maximum likelihood* of the true distribution :math:`g` (on the simplex) given the bin
counts :math:`c_b` out of :math:`N`: maximise :math:`\ell(g) = \sum_b c_b \ln (Ag)_b`. The
EM iteration for this mixture is Richardson–Lucy deconvolution [Ric72]_ [Luc74]_,

.. math:: g_m \leftarrow g_m \sum_b \frac{c_b / N}{(Ag)_b} A_{bm},

which never decreases :math:`\ell`; it is accelerated by SQUAREM [VR08]_ (scheme S3: the
step length :math:`\alpha = -\lVert r\rVert / \lVert v\rVert` from two EM steps, shortened
toward :math:`-1` until the extrapolated point is non-negative, followed by one EM step,
and the plain double EM step kept whenever the extrapolation lowers the likelihood). It
starts from an equal mix of the uniform distribution and the released histogram and stops
when one cycle raises :math:`\ell` by less than ``tol`` (in nats, for the whole column), or
after ``max_iter`` cycles (``converged`` says which). The two products of a step, :math:`Ag` and
:math:`A^T r`, are banded (entries below :math:`10^{-16}` of the largest left out) where
the noise is narrow against the range; for a Laplace mechanism, whose kernel is
two-sided geometric (:math:`w(d) \propto q^{|d|}`, checked to :math:`10^{-10}` in total),
the binned law is semiseparable, :math:`A_{bm} = q^{lo_b - s_m} e_b / Z_m` below the
diagonal and :math:`q^{s_m - hi_b} e_b / Z_m` above it, so each product is two running
sums, :math:`O(M)` per replicate instead of :math:`O(M \times \text{band})`, and its
SQUAREM cycles run compiled, replicate by replicate (on ``workers`` threads) (0.16.0). With ``gap_tol`` (by default
``"auto"``: 0.1 nats where the law's noise scale is at least a third of its range's width)
it then goes on until
the duality bound :math:`\ell(\hat g) - \ell(g) \le N(\max_m d_m - 1)` is below
``gap_tol`` (:math:`d_m = \sum_b \frac{c_b/N}{(Ag)_b} A_{bm}`, the multipliers above:
:math:`\ell` is concave and :math:`\sum_m g_m d_m = 1`): on a flat ridge of :math:`\ell`
(noise wider than the shape) ``tol`` alone stops about a nat below the maximum, where EM's
steps are tiny. It goes on by sequential quadratic programming, as mix-SQP [KCSA20]_ does for
this problem: each step maximises the second-order model of
:math:`\phi(g) = \sum_b \frac{c_b}{N} \ln (Ag)_b - \sum_m g_m` (whose maximum over
:math:`g \ge 0` is the likelihood's on the simplex) on the points with mass or with
:math:`d_m > 1`, subject to :math:`g \ge 0` (where the plain Newton step is negative
somewhere: by block principal pivoting from its positive set where that is most of the
points, a large support, else as a non-negative least-squares problem in the Cholesky
factor of the model's Hessian), and is halved until the likelihood does not fall;
one or two steps certify the bound where EM would take thousands of cycles. A fit they do
not certify within 20 steps goes on with EM until the bound of a cycle's start holds.

*Per-row bounds* (``bounds_model``). Under ``"strata"``, rows are grouped by their
bounds: the rows of one group share one law and one grid, each group's true distribution
is estimated on its own grid, and the column's distribution is the mixture of the groups'
weighted by their row counts; no common distribution is assumed across groups, so each
group needs many rows. Under ``"scaled"`` (:mod:`bndp.estimation._scaled`), the position
:math:`u = (x - l)/(h - l)` of a value in its row has one distribution shared by all rows,
whatever their bounds (values depend on their bounds through their range): bounds may
differ on every row, and the assumption is checked between narrow and wide rows and
between low and high lower bounds. ``"auto"`` takes strata where a few pairs of bounds
have many rows each, else the scaled model.

*Intervals* (parametric bootstrap, ``n_boot`` replicates). A replicate draws a column of
true values from the fitted distribution, :math:`N^* \sim \mathrm{Multinomial}(N, \hat g)`,
releases it through the same law (:math:`c^* \mid N^* \sim \sum_m
\mathrm{Multinomial}(N^*_m, A_{\cdot m})`) and estimates it again with the same procedure
(same start, same stopping rule). For a statistic :math:`T` the replicate's error is
:math:`e^* = T(\hat g^*) - T(N^*/N)` (``target="column"``: the statistic of the column that
was released, whose values are fixed) or :math:`T(\hat g^*) - T(\hat g)`
(``target="population"``: the column as a sample of a larger population). The mean's
interval at level :math:`1 - a` is the standard normal interval [DH97]_ (section 5.2.1)
:math:`T(\hat g) \pm z_{1-a/2}\, s(e^*)`, with :math:`s(e^*)` the replicates' standard
deviation (``ddof = 1``), widened on both sides by the replicates' mean error where it
exceeds its own noise, :math:`\max(0, |\bar e^*| - 2 s(e^*)/\sqrt{B})` (see
:attr:`Estimate.mean_interval`): the mean is a linear, nearly normal statistic whose
maximum-likelihood estimate is nearly unbiased, and a second moment is estimated well from
the replicates where the tail quantiles of a few hundred are not. It is not shifted by the
replicates' mean error :math:`\bar e^*`: that is the estimator's bias at :math:`\hat g`,
a discrete, spiky distribution on which the deconvolution behaves otherwise than on a
smooth truth; measured, it read +0.37 standard deviations where the real bias was
-0.09, and it moved against the estimate's own error, so the bias-corrected interval
covered less. The variance's, the quantiles' and the histogram bins' intervals (and
:meth:`Estimate.interval`'s, for any statistic) are the same standard normal intervals
around their estimates. The basic bootstrap interval :math:`[T(\hat g) - e^*_{(1-a/2)},
T(\hat g) - e^*_{(a/2)}]` read off the replicates' error quantiles fails for the
quantiles: a quantile of the fit moves by whole support points, so the replicates'
errors take a few values, whose tail quantiles collapse onto 0 or sit on the fit's
spikes (measured coverage in ``docs/estimates.md``).

*Histogram.* :meth:`Estimate.histogram` is not read off the maximum-likelihood
distribution, which is discrete and lumpy at the noise scale, but from the released
histogram corrected by the migration between bins that the fit, smoothed by a Gaussian
kernel folded at the bounds, predicts: :math:`\hat p_k = r_k + \sum_m \hat g_m
(K_h(x_m, k) - \sum_{m'} K_h(x_m, \mathrm{cell}_{m'}) R_{m'k})`. The bandwidth
:math:`h` is the largest whose smoothed fit stays inside the 95 % likelihood-ratio
confidence region calibrated by a parametric bootstrap (:mod:`bndp.estimation._smooth`,
after the smoothed EM of Silverman et al. [SJWN90]_).

Measured coverage of the column's true mean (``benchmarks/compare.py --estimate-only
--reps N``) is reported in ``docs/estimates.md`` with the number of repetitions run.

References
----------
.. [DH97] A. C. Davison, D. V. Hinkley. *Bootstrap Methods and their Application*.
   Cambridge University Press, 1997.
.. [Ric72] W. H. Richardson. "Bayesian-Based Iterative Method of Image Restoration".
   Journal of the Optical Society of America 62(1), 55–59, 1972.
.. [KCSA20] Y. Kim, P. Carbonetto, M. Stephens, M. Anitescu. "A Fast Algorithm for Maximum
   Likelihood Estimation of Mixture Proportions Using Sequential Quadratic Programming".
   Journal of Computational and Graphical Statistics 29(2), 261–273, 2020.
.. [Luc74] L. B. Lucy. "An iterative technique for the rectification of observed
   distributions". The Astronomical Journal 79(6), 745–754, 1974.
.. [SJWN90] B. W. Silverman, M. C. Jones, J. D. Wilson, D. W. Nychka. "A Smoothed EM
   Approach to Indirect Estimation Problems, with Particular Reference to Stereology and
   Emission Tomography". Journal of the Royal Statistical Society B 52(2), 271–324, 1990.
.. [VR08] R. Varadhan, C. Roland. "Simple and Globally Convergent Methods for Accelerating
   the Convergence of Any EM Algorithm". Scandinavian Journal of Statistics 35(2),
   335–353, 2008.
"""

from __future__ import annotations

from ._estimate import estimate
from ._result import Estimate
from ._scaled import ScaledModelWarning

__all__ = ["estimate", "Estimate", "ScaledModelWarning"]
