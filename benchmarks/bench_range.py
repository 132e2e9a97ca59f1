"""asv benchmarks for the range-constraint mechanisms (ConstrainedLaplace)."""

import numpy as np

import bndp


def _intervals(n, seed=0):
    rng = np.random.default_rng(seed)
    return np.cumsum(rng.uniform(0.1, 2.0, 2 * n)).reshape(n, 2)


class TimeCalibration:
    params = ([1, 10, 100], ["dp", "metric"])
    param_names = ["n_forbidden", "guarantee"]

    def setup(self, n, guarantee):
        self.f = _intervals(n)

    def time_calibrate(self, n, guarantee):
        bndp.ConstrainedLaplace(1.0, sensitivity=1.0, forbidden=self.f, guarantee=guarantee)

    def time_calibrate_bounded(self, n, guarantee):
        bndp.ConstrainedLaplace(1.0, sensitivity=1.0, forbidden=self.f, lower=-5.0,
                                upper=float(self.f[-1, 1]) + 5.0, guarantee=guarantee)


PLAN_GAPS = {1: [(10.0, 12.0)], 3: [(10.0, 12.0), (30.0, 31.0), (50.0, 55.0)],
             5: [(10.0, 12.0), (30.0, 31.0), (50.0, 55.0), (70.0, 70.5), (80.0, 90.0)]}


class TimePlanConstrained:
    """Planning the default grid law with new parameters (the plan cache cleared): 1-5 gaps,
    both guarantees, bounded [0, 100] or the half-line [0, inf); the smallest sensitivity
    (0.14) gives the largest tables."""
    params = ([1, 3, 5], ["dp", "metric"], [100.0, float("inf")], [0.14, 1.0])
    param_names = ["n_gaps", "guarantee", "upper", "sensitivity"]

    def time_plan_constrained(self, n, guarantee, upper, sens):
        try:
            from bndp._laws.constrained import _plan_constrained
        except ImportError:      # a release whose facade re-exported it
            from bndp.mechanisms.exact import _plan_constrained
        _plan_constrained.cache_clear()
        bndp.ConstrainedLaplace(1.0, sensitivity=sens, forbidden=PLAN_GAPS[n], lower=0.0,
                                upper=upper,
                                guarantee=guarantee)


class TimeSampling:
    """One forbidden interval; compare with Generator.laplace."""

    def setup(self):
        self.m = bndp.ConstrainedLaplace(1.0, sensitivity=1.0, forbidden=[(0.0, 1.0)])
        self.values = np.linspace(-3.0, -0.1, 1_000_000)
        self.gen = np.random.default_rng(0)

    def time_sample_scalar_value(self):
        self.m.sample(2.0, size=1_000_000, rng=self.gen)

    def time_sample_per_row_values(self):
        self.m.sample(self.values, rng=self.gen)

    def time_numpy_laplace_scalar(self):
        self.gen.laplace(2.0, 1.0, size=1_000_000)

    def time_numpy_laplace_array(self):
        self.gen.laplace(self.values, 1.0)


class TimeSamplingGrid:
    """One forbidden interval on a finite allowed set: the default grid law (mode="exact")
    against the continuous law on the same set."""

    def setup(self):
        kw = dict(forbidden=[(0.0, 1.0)], lower=-10.0, upper=10.0)
        self.m = bndp.ConstrainedLaplace(1.0, sensitivity=1.0, **kw)
        self.c = bndp.ConstrainedLaplace(1.0, sensitivity=1.0, mode="continuous", **kw)
        self.values = np.linspace(-3.0, -0.1, 1_000_000)
        self.gen = np.random.default_rng(0)

    def time_sample_per_row_values(self):
        self.m.sample(self.values, rng=self.gen)

    def time_sample_per_row_values_continuous(self):
        self.c.sample(self.values, rng=self.gen)


class TimeLambertW:
    def setup(self):
        self.x = np.linspace(-0.3678794411714423, 10.0, 100_000)

    def time_lambertw_w0(self):
        bndp.special.lambertw(self.x)
