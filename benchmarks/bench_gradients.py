"""asv benchmarks: bounded-support Gaussians for private training (per-instance RDP, FIL,
samplers) on d = 10**6 coordinates."""

import numpy as np

import bndp
from bndp.accounting import fisher_information_loss_squared, per_instance_rdp


class PerInstanceRDP:
    params = (["rectified", "truncated"], ["sup", "alg1"])
    param_names = ["mechanism", "mode"]

    def setup(self, mechanism, mode):
        self.theta = np.random.default_rng(0).normal(0.0, 2.0, 10**6)
        cls = bndp.RectifiedGaussian if mechanism == "rectified" else bndp.TruncatedGaussian
        self.m = cls(1.0, lower=-1.0, upper=1.0)

    def time_rdp(self, mechanism, mode):
        per_instance_rdp(self.m, self.theta, 1.0, 2.0, mode)

    def time_rdp_plus_fil(self, mechanism, mode):
        per_instance_rdp(self.m, self.theta, 1.0, 2.0, mode)
        fisher_information_loss_squared(self.m, self.theta)


class FIL:
    params = ["rectified", "truncated", "sign"]
    param_names = ["mechanism"]

    def setup(self, mechanism):
        self.theta = np.random.default_rng(0).normal(0.0, 2.0, 10**6)
        self.m = {"rectified": bndp.RectifiedGaussian(1.0, lower=-1.0, upper=1.0),
                  "truncated": bndp.TruncatedGaussian(1.0, lower=-1.0, upper=1.0),
                  "sign": bndp.StochasticSign(1.0)}[mechanism]

    def time_fil(self, mechanism):
        fisher_information_loss_squared(self.m, self.theta)


class Sampling:
    params = ["rectified", "truncated", "numpy_normal"]
    param_names = ["sampler"]

    def setup(self, sampler):
        self.theta = np.random.default_rng(0).normal(0.0, 2.0, 10**7)
        self.gen = np.random.default_rng(1)
        self.r = bndp.RectifiedGaussian(1.0, lower=-1.0, upper=1.0)
        self.t = bndp.TruncatedGaussian(1.0, lower=-1.0, upper=1.0)

    def time_sample(self, sampler):
        if sampler == "rectified":
            self.r.sample(self.theta, rng=self.gen)
        elif sampler == "truncated":
            self.t.sample(self.theta, rng=self.gen)
        else:
            self.gen.normal(self.theta, 1.0)
