"""asv benchmarks of bndp.estimate: 10^6 released values with fixed bounds (the fit and its
bootstrap intervals; the cost does not grow with the number of values once they are
binned), per-row bounds with three row classes, per-row bounds that differ on every row
(the scaled model), and a flat likelihood with and without gap_tol."""

import numpy as np

import bndp

N = 10**6


class EstimateFixedBounds:
    params = (["laplace", "gaussian"], [0.5, 4.0])
    param_names = ["mechanism", "epsilon"]

    def setup(self, mechanism, epsilon):
        cls = bndp.BoundedLaplace if mechanism == "laplace" else bndp.BoundedGaussian
        self.mech = cls(epsilon, sensitivity=1.0, lower=0.0, upper=120.0)
        g = np.random.default_rng(0)
        x = np.clip(g.exponential(10.0, N), 0.0, 120.0)
        self.released = self.mech.sample(x, rng=g)
        bndp.estimate(self.released[:1000], self.mech, n_boot=2)   # the law, planned once

    def time_estimate(self, mechanism, epsilon):
        bndp.estimate(self.released, self.mech, rng=1)

    def time_estimate_no_intervals(self, mechanism, epsilon):
        bndp.estimate(self.released, self.mech, n_boot=0)


class EstimatePerRowBounds:
    def setup(self):
        g = np.random.default_rng(0)
        k = g.integers(0, 3, 10**5)
        self.lo = np.array([0.0, 0.0, 20.0])[k]
        self.hi = np.array([120.0, 60.0, 100.0])[k]
        x = g.uniform(self.lo, self.hi)
        self.released = bndp.sample(x, mechanism="laplace", epsilon=1.0, sensitivity=1.0,
                                    lower=self.lo, upper=self.hi, rng=g)
        self.spec = {"mechanism": "laplace", "epsilon": 1.0, "sensitivity": 1.0}

    def time_estimate_per_row(self):
        bndp.estimate(self.released, self.spec, lower=self.lo, upper=self.hi, rng=1)


class EstimateScaled:
    """Per-row bounds that differ on every row (the scaled model; the coverage battery's
    per-row shape: lower bounds in [0, 20), widths in [10, 90), positions Beta(0.6, 5)),
    2 x 10^5 rows: above the rows where the estimate is fitted on the finer support and
    the references' row term is read from drawn rows; the estimate and the mean's
    interval (about 5 s a call: three samples)."""

    number = 1
    repeat = 3
    timeout = 120

    def setup(self):
        g = np.random.default_rng(0)
        n = 2 * 10**5
        self.lo = g.uniform(0.0, 20.0, n)
        self.hi = self.lo + g.uniform(10.0, 90.0, n)
        x = self.lo + (self.hi - self.lo) * g.beta(0.6, 5.0, n)
        self.spec = {"mechanism": "laplace", "epsilon": 0.5, "sensitivity": 1.0}
        self.released = bndp.sample(x, lower=self.lo, upper=self.hi, rng=g, **self.spec)

    def time_estimate_scaled(self):
        bndp.estimate(self.released, self.spec, lower=self.lo, upper=self.hi, rng=1,
                      bounds_model="scaled").mean_interval


class EstimateFlatRidge:
    """A column the noise is wider than (the Gaussian at epsilon 0.1, bimodal, 10^4 values):
    the default fit, and the fit certified within 0.1 nats of the maximum (``gap_tol``)."""

    params = ([None, 0.1],)
    param_names = ["gap_tol"]

    def setup(self, gap_tol):
        self.mech = bndp.BoundedGaussian(0.1, sensitivity=1.0, lower=0.0, upper=120.0)
        g = np.random.default_rng(0)
        n = 10**4
        x = np.clip(np.where(g.random(n) < 0.4, g.normal(30, 5, n), g.normal(90, 7, n)),
                    0.0, 120.0)
        self.released = self.mech.sample(x, rng=g)
        # the law planned once; the gap_tol steps' solvers (imported on first use) and
        # threadpoolctl's library scan warmed, so that a quick pass times the fit alone
        bndp.estimate(self.released[:1000], self.mech, n_boot=2, gap_tol=gap_tol)

    def time_estimate(self, gap_tol):
        bndp.estimate(self.released, self.mech, rng=1, gap_tol=gap_tol)
