"""asv benchmarks of the baselines the papers compare against (clamped Laplace, Liu's
generalized Gaussian), beside the bounded mechanisms they are compared with, and of the
zCDP/mCDP calibrations."""

import numpy as np

import bndp
from bndp import accounting, calibrate


class BaselineSampling:
    params = [1_000, 1_000_000]
    param_names = ["n"]

    def setup(self, n):
        self.q = np.linspace(0.0, 10.0, n)
        self.q2 = np.column_stack([np.linspace(0.0, 10.0, n), np.linspace(1.0, 9.0, n)])
        self.clamped = bndp.ClampedLaplace(1.0, sensitivity=1.0, lower=0.0, upper=10.0)
        self.bounded = bndp.BoundedLaplace(1.0, sensitivity=1.0, lower=0.0, upper=10.0,
                                           mode="continuous")
        self.gg = bndp.GeneralizedGaussian(1.0, sensitivity=[4.0, 2.0], lower=[0.0, 1.0],
                                           upper=[10.0, 9.0])
        self.bg = bndp.BoundedGaussian(1.0, sensitivity=2 * np.sqrt(5), lower=[0.0, 1.0],
                                       upper=[10.0, 9.0],
                                       mode="continuous")
        self.rng = np.random.default_rng(0)

    def time_clamped_laplace(self, n):
        self.clamped.sample(self.q, rng=self.rng)

    def time_bounded_laplace(self, n):
        self.bounded.sample(self.q, rng=self.rng)

    def time_generalized_gaussian_2d(self, n):
        self.gg.sample(self.q2, rng=self.rng)

    def time_bounded_gaussian_2d(self, n):
        self.bg.sample(self.q2, rng=self.rng)


class ConcentratedCalibration:
    def time_zcdp_sigma(self):
        calibrate.zcdp_sigma(1.0, 1.0, delta=1e-5)

    def time_mcdp_sigma(self):
        calibrate.mcdp_sigma(1.0, 1.0, delta=1e-5)

    def time_generalized_gaussian_sigma(self):
        calibrate.generalized_gaussian_sigma(1.0, [4.0, 2.0], [0.0, 1.0], [10.0, 9.0])


class ConcentratedAccounting:
    def time_gaussian_zcdp_to_dp(self):
        accounting.zcdp_to_dp(accounting.gaussian_zcdp(4.9, 1.0), 1e-5)

    def time_gaussian_mcdp_delta(self):
        accounting.gaussian_mcdp_delta(4.96, 1.0, 1.0)

    def time_gaussian_composition_sigma(self):
        accounting.gaussian_composition_sigma(np.full(1000, 30.0), 1.0)
