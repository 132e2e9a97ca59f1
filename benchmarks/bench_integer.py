"""asv benchmarks of the integer law (``integer=True``: the bounded law on the integer lattice
of [l, u]) against the default grid law (``integer=False``): 10^6 int64 values released by
:func:`bndp.sample` with fixed bounds [0, 120] and with per-row bounds [0, u], u in
{100, 120, 150} (``benchmarks/compare_integer.py --speed`` prints the same releases side by
side, with their ratio)."""

import numpy as np

import bndp

N = 10**6


def _column(bench, bounds):
    """The benchmarks' column: 10^6 int64 values in [0, 100], fixed bounds [0, 120] or
    per-row bounds [0, u], u in {100, 120, 150}; a seeded generator for the draws."""
    r = np.random.default_rng(4)
    bench.values = r.integers(0, 101, N)
    if bounds == "fixed":
        bench.lower, bench.upper = 0, 120
    else:
        bench.lower = np.zeros(N, dtype=np.int64)
        bench.upper = r.choice(np.array([100, 120, 150], dtype=np.int64), N)
    bench.gen = np.random.default_rng(0)


class IntegerVersusGrid:
    params = (["laplace", "gaussian"], ["integer", "grid"], ["fixed", "rows"])
    param_names = ["mechanism", "law", "bounds"]

    def setup(self, mechanism, law, bounds):
        _column(self, bounds)
        self.integer = law == "integer"
        # the plan is built (and cached) outside the timing
        self.time_release_int64(mechanism, law, bounds)

    def time_release_int64(self, mechanism, law, bounds):
        bndp.sample(self.values, mechanism=mechanism, epsilon=1.0, sensitivity=1,
                    lower=self.lower, upper=self.upper, integer=self.integer, rng=self.gen)


class IntegerMechanism:
    """One integer-law mechanism built once: its ``sample`` on 10^6 int64 values in [0, 120]
    (int64 out), a value at a bound against one in the middle (the same kernel work)."""

    params = (["laplace", "gaussian"], ["bound", "middle"])
    param_names = ["mechanism", "where"]

    def setup(self, mechanism, where):
        cls = bndp.BoundedLaplace if mechanism == "laplace" else bndp.BoundedGaussian
        self.mech = cls(1.0, sensitivity=1, lower=0, upper=120, integer=True)
        self.values = np.full(N, 0 if where == "bound" else 60, dtype=np.int64)
        self.gen = np.random.default_rng(0)

    def time_sample_int64(self, mechanism, where):
        self.mech.sample(self.values, rng=self.gen)


class IntegerStep:
    """The integer law on a lattice step that is not a power of two (``integer=5``: the law
    of step 1 on the lattice's indices, mapped) against the grid law at the same
    sensitivity 5: 10^6 int64 values, fixed bounds [0, 120] and per-row bounds [0, u]."""

    params = (["laplace", "gaussian"], ["step5", "grid"], ["fixed", "rows"])
    param_names = ["mechanism", "law", "bounds"]

    def setup(self, mechanism, law, bounds):
        _column(self, bounds)
        self.integer = 5 if law == "step5" else False
        self.time_release_int64(mechanism, law, bounds)

    def time_release_int64(self, mechanism, law, bounds):
        bndp.sample(self.values, mechanism=mechanism, epsilon=1.0, sensitivity=5,
                    lower=self.lower, upper=self.upper, integer=self.integer, rng=self.gen)
