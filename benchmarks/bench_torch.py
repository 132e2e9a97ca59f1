"""asv benchmarks: torch-tensor input against NumPy input (CPU) for one release mechanism
and one gradient mechanism, 10**6 values. Skipped when torch is not installed."""

import numpy as np

import bndp


class TensorInput:
    params = (["bounded_laplace", "truncated"], ["numpy", "torch64", "torch32"])
    param_names = ["mechanism", "input"]

    def setup(self, mechanism, kind):
        try:
            import torch
        except ImportError:
            raise NotImplementedError("torch is not installed") from None
        x = np.random.default_rng(0).uniform(0.0, 10.0, 10**6)
        if mechanism == "bounded_laplace":
            self.m = bndp.BoundedLaplace(1.0, sensitivity=1.0, lower=0.0, upper=10.0,
                                         mode="continuous")
        else:
            self.m = bndp.TruncatedGaussian(1.0, lower=0.0, upper=10.0)
        self.x = {"numpy": x, "torch64": torch.from_numpy(x),
                  "torch32": torch.from_numpy(x).float()}[kind]
        self.gen = np.random.default_rng(1)

    def time_sample(self, mechanism, kind):
        self.m.sample(self.x, rng=self.gen)
