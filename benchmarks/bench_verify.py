"""asv benchmarks: certified worst-case loss and tight calibration of the bounded Gaussian
mechanism, bounded Laplace privacy profile, empirical audit."""

import math

import numpy as np

import bndp
from bndp.verify import (
    bounded_gaussian_loss,
    bounded_gaussian_tight_sigma,
    bounded_laplace_profile,
)

DQ2 = 2.0 * math.sqrt(5.0)
L2, U2 = np.array([0.0, 1.0]), np.array([10.0, 9.0])


class VerifyGaussian:
    def setup(self):
        self.s1 = bndp.calibrate.bounded_gaussian_sigma(1.0, 1.0, 0.0, 10.0)
        self.s2 = bndp.calibrate.bounded_gaussian_sigma(1.0, DQ2, L2, U2)

    def time_loss_univariate(self):
        bounded_gaussian_loss(self.s1, 1.0, 0.0, 10.0)

    def time_loss_m2(self):
        bounded_gaussian_loss(self.s2, DQ2, L2, U2)

    def time_tight_univariate(self):
        bounded_gaussian_tight_sigma(1.0, 1.0, 0.0, 10.0)

    def time_tight_m2(self):
        bounded_gaussian_tight_sigma(1.0, DQ2, L2, U2)

    def time_mechanism_tight_m2(self):
        bndp.BoundedGaussian(1.0, sensitivity=DQ2, lower=L2, upper=U2, sigma_rule="tight")


class VerifyLaplace:
    def time_profile(self):
        bounded_laplace_profile(1.5, 0.5, 1.0, 0.0, 10.0)


class Audit:
    def setup(self):
        self.m = bndp.BoundedLaplace(1.0, sensitivity=1.0, lower=0.0, upper=10.0)

    def time_audit_200k(self):
        m = self.m
        bndp.audit(lambda k, g: m.sample(0.0, size=k, rng=g),
                   lambda k, g: m.sample(1.0, size=k, rng=g), 1.0, n=200_000, rng=1)
