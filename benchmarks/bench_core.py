"""asv benchmarks of the compiled core: sampler throughput (scalar and per-row parameters)
and calibration time. Run with `asv run` (or `asv run --python=same` in a dev environment)."""

import numpy as np

import bndp
from bndp import calibrate

N = 10**6


class TruncatedNormal:
    def setup(self):
        self.gen = np.random.default_rng(0)
        self.loc = np.random.default_rng(1).uniform(0.0, 10.0, N)

    def time_scalar_parameters(self):
        bndp.truncated_normal(5.0, 2.0, 0.0, 10.0, size=N, rng=self.gen)

    def time_per_row_values(self):
        bndp.truncated_normal(self.loc, 2.0, 0.0, 10.0, rng=self.gen)

    def time_far_tail(self):
        bndp.truncated_normal(0.0, 1.0, 30.0, 31.0, size=N, rng=self.gen)

    def time_numpy_normal_baseline(self):
        self.gen.normal(5.0, 2.0, size=N)


class BoundedLaplace:
    def setup(self):
        self.gen = np.random.default_rng(0)
        self.mech = bndp.BoundedLaplace(1.0, sensitivity=1.0, lower=0.0, upper=10.0,
                                        mode="continuous")
        self.values = np.random.default_rng(1).uniform(0.0, 10.0, N)
        self.value = np.full(N, 5.0)

    def time_scalar_value(self):
        self.mech.sample(5.0, size=N, rng=self.gen)

    def time_per_row_values(self):
        self.mech.sample(self.values, rng=self.gen)

    def time_numpy_laplace_baseline(self):
        self.gen.laplace(5.0, 1.0, size=N)


class BoundedGaussianSampling:
    def setup(self):
        self.gen = np.random.default_rng(0)
        self.mech = bndp.BoundedGaussian(1.0, sensitivity=1.0, lower=0.0, upper=120.0,
                                         mode="continuous")
        self.values = np.random.default_rng(1).uniform(0.0, 120.0, N)

    def time_per_row_values(self):
        self.mech.sample(self.values, rng=self.gen)


class Calibration:
    def time_bounded_laplace_scale(self):
        calibrate.bounded_laplace_scale(1.0, 1.0, 0.0, 10.0)

    def time_bounded_gaussian_sigma(self):
        calibrate.bounded_gaussian_sigma(1.0, 1.0, 0.0, 10.0)

    def time_bounded_gaussian_sigma_table1(self):
        calibrate.bounded_gaussian_sigma(1.0, 2 * np.sqrt(5), [0.0, 1.0], [10.0, 9.0])

    def time_bounded_laplace_scale_batch_1e4(self):
        calibrate.bounded_laplace_scale(np.linspace(0.1, 5.0, 10**4), 1.0, 0.0, 10.0)
