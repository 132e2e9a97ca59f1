"""asv benchmarks of the Gaussian-family calibrations and the unbounded mechanisms."""

import numpy as np

import bndp
from bndp import calibrate


class GaussianCalibration:
    params = ["optimal", "zhao1", "zhao2", "pdp_optimal", "zhao3", "zhao4"]
    param_names = ["method"]

    def setup(self, method):
        rng = np.random.default_rng(0)
        self.eps = 10 ** rng.uniform(-2, 1.5, 100_000)
        self.delta = 10 ** rng.uniform(-12, -2, 100_000)

    def time_scalar(self, method):
        calibrate.gaussian_sigma(1.0, 1.0, delta=1e-5, calibration=method)

    def time_batch_1e5(self, method):
        calibrate.gaussian_sigma(self.eps, 1.0, delta=self.delta, calibration=method)


class GaussianProfile:
    def setup(self):
        self.sigma = calibrate.gaussian_sigma(1.0, 1.0, delta=1e-5)

    def time_delta(self):
        calibrate.gaussian_delta(self.sigma, 1.0, 1.0)

    def time_epsilon(self):
        calibrate.gaussian_epsilon(self.sigma, 1.0, delta=1e-5)

    def time_failure_threshold(self):
        calibrate.classical_failure_threshold(1e-5)


class UnboundedSampling:
    def setup(self):
        self.g = bndp.Gaussian(1.0, delta=1e-5, sensitivity=1.0)
        self.lap = bndp.Laplace(1.0, sensitivity=1.0)
        self.rng = np.random.default_rng(0)
        self.rows = self.rng.uniform(0, 10, 1_000_000)

    def time_gaussian_1e6(self):
        self.g.sample(0.0, size=1_000_000, rng=self.rng)

    def time_gaussian_rows_1e6(self):
        self.g.sample(self.rows, rng=self.rng)

    def time_laplace_1e6(self):
        self.lap.sample(0.0, size=1_000_000, rng=self.rng)
