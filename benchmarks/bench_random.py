"""asv benchmarks: cost of the secure default generator (AES-CTR / ChaCha20) against PCG64
on bndp's samplers, and the throughput of the exact mode."""

import numpy as np

import bndp
from bndp._random import secure_bit_generator

N = 10**6

GENERATORS = ["pcg64", "aes", "chacha"]


def _gen(name):
    if name == "pcg64":
        return np.random.Generator(np.random.PCG64(0))
    return np.random.Generator(secure_bit_generator(name))


class Samplers:
    params = [GENERATORS]
    param_names = ["generator"]

    def setup(self, name):
        self.gen = _gen(name)
        self.lap = bndp.BoundedLaplace(1.0, sensitivity=1.0, lower=0.0, upper=10.0,
                                       mode="continuous")
        self.gau = bndp.BoundedGaussian(1.0, sensitivity=1.0, lower=0.0, upper=10.0,
                                        mode="continuous")
        self.values = np.random.default_rng(1).uniform(0.0, 10.0, N)

    def time_raw_uint64(self, name):
        self.gen.integers(0, 2**64, size=N, dtype=np.uint64)

    def time_bounded_laplace(self, name):
        self.lap.sample(self.values, rng=self.gen)

    def time_bounded_gaussian(self, name):
        self.gau.sample(self.values, rng=self.gen)

    def time_truncated_normal(self, name):
        bndp.truncated_normal(5.0, 2.0, 0.0, 10.0, size=N, rng=self.gen)


class ExactMode:
    params = [GENERATORS]
    param_names = ["generator"]

    def setup(self, name):
        self.gen = _gen(name)
        self.lap = bndp.BoundedLaplace(1.0, sensitivity=1.0, lower=0.0, upper=10.0, mode="exact")
        self.gau = bndp.BoundedGaussian(1.0, sensitivity=1.0, lower=0.0, upper=10.0, mode="exact")
        self.values = np.random.default_rng(1).uniform(0.0, 10.0, N)

    def time_exact_bounded_laplace(self, name):
        self.lap.sample(self.values, rng=self.gen)

    def time_exact_bounded_gaussian(self, name):
        self.gau.sample(self.values, rng=self.gen)


class ExactCalibration:
    def time_exact_laplace_plan(self):
        bndp.BoundedLaplace(1.0, sensitivity=1.0, lower=0.0, upper=10.0, mode="exact")

    def time_exact_gaussian_plan(self):
        bndp.BoundedGaussian(1.0, sensitivity=1.0, lower=0.0, upper=10.0, mode="exact")
