"""asv benchmarks for the public entry points the other suites do not time: ``bndp.sample``,
the multivariate bounded Gaussian, ``StochasticSign``, the remaining calibration functions,
``bndp.verify`` on each pure-epsilon mechanism, and the accounting functions.

Sizes are small (10^5 rows, 10^4 coordinates) so that ``asv run --quick`` stays short."""

import math

import numpy as np

import bndp
from bndp import accounting, calibrate
from bndp.verify import bounded_laplace_loss, privacy_profile
from bndp.verify import verify as verify_loss

N = 10**5


class Sample:
    """``bndp.sample``: calibration and release in one call."""

    params = ["laplace", "gaussian"]
    param_names = ["mechanism"]

    def setup(self, mechanism):
        self.values = np.random.default_rng(1).uniform(0.0, 120.0, N)
        self.gen = np.random.default_rng(0)

    def time_scalar_bounds(self, mechanism):
        bndp.sample(self.values, mechanism=mechanism, epsilon=1.0, sensitivity=1.0,
                    lower=0.0, upper=120.0, rng=self.gen)


class InputKinds:
    """The true values' input kinds through ``BoundedLaplace.sample`` (10^5 values in
    [0, 120]): float64 (the fast path), int64 within 2^53 (converted exactly), int64 beyond
    2^53 and an object array of Decimal (each rounded onto the grid from its exact value,
    :mod:`bndp._values`). The first two should cost the same."""

    params = ["float64", "int64", "int64_wide", "decimal"]
    param_names = ["kind"]

    def setup(self, kind):
        from decimal import Decimal
        rng = np.random.default_rng(1)
        ages = rng.integers(0, 121, N)
        lo = 0.0
        if kind == "float64":
            self.values = ages.astype(np.float64)
        elif kind == "int64":
            self.values = ages
        elif kind == "int64_wide":       # near 2^60, bounds there (gamma 2^12)
            lo = float(2 ** 60)
            self.values = ages * 4096 + 2 ** 60 + rng.integers(-2047, 2048, N)
        else:
            self.values = np.array([Decimal(int(a)) / 7 for a in ages[:2000]], dtype=object)
        if kind == "int64_wide":
            self.mech = bndp.BoundedLaplace(epsilon=0.05, sensitivity=4096.0, lower=lo,
                                            upper=lo + 120 * 4096.0)
        else:
            self.mech = bndp.BoundedLaplace(epsilon=1.0, sensitivity=1.0, lower=0.0,
                                            upper=120.0)
        self.gen = np.random.default_rng(0)

    def time_sample(self, kind):
        self.mech.sample(self.values, rng=self.gen)


class OneValue:
    """One record at a time (issue 23): ``m.sample(x)`` and ``bndp.sample(x, ...)`` for one
    value, ``m.sample`` for five values, with the secure default generator (``rng=None``)
    and the plan already built. Goals, against :class:`OneValueNumPy`: one value <= 3x
    NumPy's one-value ``Generator.laplace``, ``bndp.sample`` <= 5x, five values <= 2x
    (``benchmarks/compare.py --one-value-only`` prints the ratios side by side)."""

    params = ["laplace", "gaussian"]
    param_names = ["mechanism"]

    def setup(self, mechanism):
        self.kw = dict(epsilon=1.0, sensitivity=1.0, lower=0.0, upper=120.0)
        cls = bndp.BoundedLaplace if mechanism == "laplace" else bndp.BoundedGaussian
        self.mech = cls(**self.kw)
        self.five = np.array([3.0, 10.0, 50.0, 100.0, 119.0])
        self.mech.sample(3.0)
        bndp.sample(3.0, mechanism=mechanism, **self.kw)

    def time_mechanism_one_value(self, mechanism):
        self.mech.sample(3.0)

    def time_sample_one_value(self, mechanism):
        bndp.sample(3.0, mechanism=mechanism, **self.kw)

    def time_mechanism_five_values(self, mechanism):
        self.mech.sample(self.five)


class OneValueNumPy:
    """The baseline of :class:`OneValue`: NumPy's ``Generator.laplace`` for one value and
    for five."""

    def setup(self):
        self.gen = np.random.default_rng()

    def time_laplace_one_value(self):
        self.gen.laplace(3.0, 1.0)

    def time_laplace_five_values(self):
        self.gen.laplace(3.0, 1.0, size=5)


class SamplePerRowBounds:
    """``bndp.sample(mechanism="laplace")`` with per-row bounds (one calibration per
    distinct width, then one kernel pass)."""

    def setup(self):
        rng = np.random.default_rng(1)
        self.values = rng.uniform(0.0, 120.0, N)
        self.lower = np.floor(self.values / 10.0) * 10.0
        self.upper = self.lower + rng.integers(1, 20, N)
        self.gen = np.random.default_rng(0)

    def time_laplace(self):
        bndp.sample(self.values, mechanism="laplace", epsilon=1.0, sensitivity=1.0,
                    lower=self.lower, upper=self.upper, rng=self.gen)


class BoundedGaussianBox:
    """The m-dimensional bounded Gaussian (Chen & Hale, Table 1 box): calibration in the
    constructor, then rows of m = 2 values."""

    def setup(self):
        self.lower, self.upper = np.array([0.0, 1.0]), np.array([10.0, 9.0])
        self.mech = bndp.BoundedGaussian(1.0, sensitivity=2.0 * math.sqrt(5.0), lower=self.lower,
                                         upper=self.upper)
        self.values = np.random.default_rng(1).uniform(self.lower, self.upper, (N, 2))
        self.gen = np.random.default_rng(0)

    def time_sample_m2(self):
        self.mech.sample(self.values, rng=self.gen)


class StochasticSignSampling:
    def setup(self):
        self.mech = bndp.StochasticSign(1.0)
        self.theta = np.random.default_rng(1).normal(0.0, 2.0, 10**6)
        self.gen = np.random.default_rng(0)

    def time_sample(self):
        self.mech.sample(self.theta, rng=self.gen)


class LaplaceProfile:
    """Bounded Laplace: epsilon and delta of a given scale, and ln dC."""

    def setup(self):
        self.scales = np.linspace(0.5, 20.0, 10**4)

    def time_epsilon(self):
        calibrate.bounded_laplace_epsilon(1.6, 1.0, 0.0, 10.0)

    def time_epsilon_batch_1e4(self):
        calibrate.bounded_laplace_epsilon(self.scales, 1.0, 0.0, 10.0)

    def time_delta(self):
        calibrate.bounded_laplace_delta_bound(1.5, 0.5, 1.0, 0.0, 10.0)

    def time_log_delta_c_batch_1e4(self):
        calibrate.bounded_laplace_log_delta_c(self.scales, 1.0, 0.0, 10.0)


class GaussianLogDeltaC:
    def time_univariate(self):
        calibrate.bounded_gaussian_log_delta_c(3.0, 1.0, 0.0, 10.0)

    def time_box_m2(self):
        calibrate.bounded_gaussian_log_delta_c(9.0, 2.0 * math.sqrt(5.0), [0.0, 1.0],
                                               [10.0, 9.0])


class Verify:
    """``bndp.verify(mechanism)``: the certified worst-case loss of each pure-epsilon
    mechanism, and the bounded Laplace loss and privacy profile."""

    params = ["bounded_laplace", "bounded_gaussian", "constrained_laplace"]
    param_names = ["mechanism"]

    def setup(self, mechanism):
        if mechanism == "bounded_laplace":
            self.mech = bndp.BoundedLaplace(1.0, sensitivity=1.0, lower=0.0, upper=10.0)
        elif mechanism == "bounded_gaussian":
            self.mech = bndp.BoundedGaussian(1.0, sensitivity=1.0, lower=0.0, upper=10.0)
        else:
            self.mech = bndp.ConstrainedLaplace(1.0, sensitivity=1.0, forbidden=[(10.0, 20.0)],
                                                lower=0.0)

    def time_verify(self, mechanism):
        verify_loss(self.mech)


class LaplaceLoss:
    def setup(self):
        self.mech = bndp.BoundedLaplace(0.5, sensitivity=1.0, lower=0.0, upper=10.0, delta=0.01)

    def time_bounded_laplace_loss(self):
        bounded_laplace_loss(1.5, 1.0, 0.0, 10.0)

    def time_privacy_profile(self):
        privacy_profile(self.mech, 0.5)


class Accounting:
    """Per-instance accounting over full-batch steps, and the RDP helpers."""

    def setup(self):
        rng = np.random.default_rng(0)
        self.mech = bndp.TruncatedGaussian(1.0, lower=-1.0, upper=1.0)
        self.grads = rng.normal(0.0, 2.0, (5, 2000))
        self.theta = rng.normal(0.0, 2.0, N)
        self.alphas = np.asarray(accounting.DEFAULT_ALPHAS, dtype=float)
        self.curve = accounting.gaussian_rdp(4.0, 1.0, self.alphas) * 100

    def time_fisher_information_loss(self):
        accounting.fisher_information_loss(self.mech, self.theta)

    def time_gaussian_rdp(self):
        accounting.gaussian_rdp(4.0, 1.0, self.alphas)

    def time_rdp_to_dp(self):
        accounting.rdp_to_dp(self.curve, self.alphas, 1e-5)

    def time_accountant_5_steps(self):
        acc = accounting.PerInstanceAccountant(self.mech, 1.0)
        for g in self.grads:
            acc.step(g)
        acc.epsilon(1e-5)
