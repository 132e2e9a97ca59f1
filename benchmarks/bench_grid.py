"""asv benchmarks of the default (floating-point-safe) grid law against the continuous mode:
per-row values in [0, 120], the value at a bound against the middle (the kernel must take
the same time), the cost of planning (calibration + certificate) for n = 2^20 grid
points and for the m = 2 Gaussian, and a wide kernel's certificate on narrow rows."""

import itertools

import numpy as np

import bndp

# parameters never seen before in this process (asv repeats setup: a per-instance counter
# would reuse cached plans)
_FRESH = itertools.count(1)

N = 10**6


class GridVersusContinuous:
    params = (["laplace", "gaussian"], ["exact", "continuous"])
    param_names = ["mechanism", "mode"]

    def setup(self, mechanism, mode):
        cls = bndp.BoundedLaplace if mechanism == "laplace" else bndp.BoundedGaussian
        self.mech = cls(1.0, sensitivity=1.0, lower=0.0, upper=120.0, mode=mode)
        self.values = np.random.default_rng(1).uniform(0.0, 120.0, N)
        self.gen = np.random.default_rng(0)

    def time_per_row_values(self, mechanism, mode):
        self.mech.sample(self.values, rng=self.gen)


class GridHalfLine:
    """Counts on [0, inf): the grid law with its geometric tail against the continuous law,
    a value at the bound against one far from it (the same kernel work)."""

    params = (["exact", "continuous"], ["bound", "far"])
    param_names = ["mode", "where"]

    def setup(self, mode, where):
        self.mech = bndp.BoundedLaplace(1.0, sensitivity=1.0, lower=0.0, upper=np.inf, mode=mode)
        self.values = np.full(N, 0.0 if where == "bound" else 1e4)
        self.gen = np.random.default_rng(0)

    def time_half_line(self, mode, where):
        self.mech.sample(self.values, rng=self.gen)


class GridValueIndependence:
    params = (["laplace", "gaussian"], ["bound", "middle"])
    param_names = ["mechanism", "where"]

    def setup(self, mechanism, where):
        cls = bndp.BoundedLaplace if mechanism == "laplace" else bndp.BoundedGaussian
        self.mech = cls(1.0, sensitivity=1.0, lower=0.0, upper=120.0)
        self.values = np.full(N, 0.0 if where == "bound" else 60.0)
        self.gen = np.random.default_rng(0)

    def time_constant_value(self, mechanism, where):
        self.mech.sample(self.values, rng=self.gen)


class GridPlanning:
    timeout = 120

    def time_plan_laplace_ages(self):
        # a range not seen before (the plans are cached per configuration)
        self._w = getattr(self, "_w", 120.0) + 2.0 ** -20
        bndp.BoundedLaplace(1.0, sensitivity=1.0, lower=0.0, upper=self._w)

    def time_plan_gaussian_m2(self):
        self._g = getattr(self, "_g", 10.0) + 2.0 ** -20
        bndp.BoundedGaussian(1.0, sensitivity=1.0, lower=[0.0, 0.0], upper=[10.0, self._g])

    def time_plan_laplace_n_2_20(self):
        # 0..65536 at granularity 1/16: n = 2^20 grid intervals, d_k = 16
        self._h = getattr(self, "_h", 65536.0) + 2.0 ** -20
        bndp.BoundedLaplace(1.0, sensitivity=1.0, lower=0.0, upper=self._h)

    time_plan_laplace_n_2_20.number = 1
    time_plan_laplace_n_2_20.repeat = 1


class NewParameters:
    """A mechanism with parameters not seen before, plus one draw: the default law's plan
    (calibration and certificate) against the continuous law's."""

    params = (["laplace", "gaussian"], ["exact", "continuous"])
    param_names = ["mechanism", "mode"]

    def setup(self, mechanism, mode):
        self.cls = bndp.BoundedLaplace if mechanism == "laplace" else bndp.BoundedGaussian

    def time_new_plan_and_draw(self, mechanism, mode):
        k = next(_FRESH)
        m = self.cls(epsilon=1.0 + k * 1e-9, sensitivity=1.0, lower=0.0, upper=120.0,
                     mode=mode)
        m.sample(3.0, rng=k)


class ManyDistinctPairs:
    """Per-row bounds with 10^4 distinct (lower, upper) pairs over 10^6 rows (plausible
    per-record ranges), new parameters each call."""

    params = (["laplace", "gaussian"], ["exact", "continuous"])
    param_names = ["mechanism", "mode"]
    timeout = 120

    def setup(self, mechanism, mode):
        r = np.random.default_rng(3)
        centre = np.round(r.uniform(0.0, 1e4, 10**4), 1)
        half = np.round(r.uniform(5.0, 200.0, 10**4), 1)
        pick = r.integers(0, 10**4, N)
        self.lo, self.hi = centre[pick] - half[pick], centre[pick] + half[pick]
        self.values = r.uniform(self.lo, self.hi)
        self.gen = np.random.default_rng(0)

    def time_per_row_distinct_pairs(self, mechanism, mode):
        bndp.sample(self.values, mechanism=mechanism, epsilon=1.0 + next(_FRESH) * 1e-9,
                    sensitivity=1.0, lower=self.lo, upper=self.hi, rng=self.gen, mode=mode)


class RowCertificates:
    """The windowed certificate of a grid's wide kernel on the narrow rows below it (what a
    new per-row plan scans to find the rows that kernel serves): every row from 150
    intervals to n_wide - 1 at epsilon 1 (about 1.5 million row intervals for the Laplace),
    with the kernel's terms of one offset computed once."""

    params = (["laplace", "gaussian"],)
    param_names = ["mechanism"]

    def setup(self, mechanism):
        from bndp._core import certify_rows as _certify_rows
        from bndp._laws import window

        self.fam = window.LAPLACE if mechanism == "laplace" else window.GAUSSIAN
        self.wide = window._law(self.fam, 1.0, 32, -5, None)
        self.ns = np.arange(self.wide.n_min - 1, 149, -1, dtype=np.int64)
        w = self.wide
        self.terms = _certify_rows.gw_cert_terms(self.fam, w.scale_grid, 24, w.tailw, w.n_min - 1)
        self.core = _certify_rows

    def time_certify_rows(self, mechanism):
        w = self.wide
        self.core.gw_certify_rows(self.fam, w.scale_grid, 24, w.tailw, w.cum, self.ns, 32,
                                  self.terms)


class PerRowBounds:
    def setup(self):
        r = np.random.default_rng(2)
        self.values = r.uniform(0.0, 100.0, N)
        self.upper = r.choice([100.0, 120.0, 150.0], N)
        self.gen = np.random.default_rng(0)

    def time_sample_per_row_bounds_default(self):
        bndp.sample(self.values, mechanism="laplace", epsilon=1.0, sensitivity=1.0, lower=0.0,
                    upper=self.upper, rng=self.gen)

    def time_sample_per_row_bounds_continuous(self):
        bndp.sample(self.values, mechanism="laplace", epsilon=1.0, sensitivity=1.0, lower=0.0,
                    upper=self.upper, rng=self.gen, mode="continuous")
