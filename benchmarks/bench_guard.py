"""The core benchmarks that ``benchmarks/guard.py`` compares against the last release (README,
"Benchmarks"): the compiled kernels, the default release with fixed and per-row bounds, one
value at a time, calibration, planning and a 10^6-row ``bndp.privatize``.

Every sample does 10-300 ms of work (a microsecond call is looped), so that a machine shared
with other work still tells a 25 % slowdown from noise. The suite runs against the baseline
release's ``bndp`` too: it uses only the API that release has."""

import itertools
import statistics
import time

import numpy as np

import bndp
from bndp import calibrate

N = 10**6

# parameters never planned before in this process (plans are cached per configuration;
# asv runs setup again for each repeat, so a per-instance counter would reuse plans)
_FRESH = itertools.count(1)


class _Timed:
    # CPU time of the process, not wall time: on a machine shared with other work the time a
    # benchmark waits for a core is not its own (the work timed here is all on the CPU)
    timer = time.process_time
    # several samples of a few tens of milliseconds each; guard.py sets rounds and repeat
    sample_time = 0.05
    warmup_time = 0.1
    timeout = 300


# The one-value benchmarks' time, read against a reference loop. Their processes run in one
# of two states about 1.7x apart (every instruction slower, pure Python and bndp alike),
# each lasting from milliseconds to seconds, so that a commit whose processes mostly drew
# the slow state reads up to 1.7x slower (CI, 0.11.0's first run: ratio 1.741 and shift
# 1.312 on unchanged code). The reference loop, pure Python of the same shape as a
# one-value call, slows alike: the ratio of the two, timed back to back, moved by 1 %
# between the states where each alone moved by 1.7x. The reference calls nothing of bndp,
# and asv runs this file's code for both commits, so only a change of bndp moves the ratio.

#: The reference loop's CPU time in the machine's fast state: samples are given in seconds of
#: a machine on which the reference loop takes this long.
REFERENCE_SECONDS = 1.5e-3
#: Triples (reference, work, reference) timed per sample; the sample is their median ratio.
TRIPLES = 5
_virtual = [0.0]


def _reference_call(x, *, mechanism="laplace", epsilon=1.0, sensitivity=1.0, lower=0.0,
                    upper=1.0, rng=None, **extra):
    options = {"mechanism": mechanism, "rng": rng}
    if extra or options.get("mode") is not None:
        return None
    width = float(upper) - float(lower)
    return min(max(x + sensitivity / (epsilon * width), lower), upper)


def reference_loop():
    """Pure-Python work of the shape of a one-value call (keyword calls, a dict, float
    arithmetic), 1.4-2 ms of CPU."""
    f, kw = _reference_call, dict(epsilon=1.0, sensitivity=1.0, lower=0.0, upper=120.0)
    for _ in range(700):
        f(3.0, mechanism="gaussian", **kw)
        f(3.0, **kw)
        f(3.0)


def relative(work, reference=reference_loop, clock=time.process_time, triples=TRIPLES):
    """Time ``work`` against ``reference``: ``triples`` times the reference, the work and the
    reference again, back to back; advances :func:`virtual_clock` by the median of the work's
    time over the mean of the two reference times around it, times ``REFERENCE_SECONDS``,
    and returns that advance. A state of the machine that slows everything alike cancels;
    a triple that a change of state cuts through is one of ``triples``, which the median
    leaves out."""
    ratios = []
    for _ in range(triples):
        t0 = clock()
        reference()
        t1 = clock()
        work()
        t2 = clock()
        reference()
        t3 = clock()
        ratios.append(2.0 * (t2 - t1) / ((t1 - t0) + (t3 - t2)))
    step = statistics.median(ratios) * REFERENCE_SECONDS
    _virtual[0] += step
    return step


def virtual_clock():
    """The sum of every :func:`relative` time so far: the clock of :class:`_Relative`."""
    return _virtual[0]


class _Relative(_Timed):
    # asv times each call by this clock: one call is one sample (number = 1), its value the
    # work's time relative to the reference loop (relative)
    timer = staticmethod(virtual_clock)
    number = 1
    warmup_time = 0.0


class Kernels(_Timed):
    """The compiled samplers, 10^6 per-row values in [0, 120]: the truncated normal and the
    continuous bounded Laplace and Gaussian laws."""

    def setup(self):
        self.gen = np.random.default_rng(0)
        self.values = np.random.default_rng(1).uniform(0.0, 120.0, N)
        kw = dict(epsilon=1.0, sensitivity=1.0, lower=0.0, upper=120.0, mode="continuous")
        self.laplace = bndp.BoundedLaplace(**kw)
        self.gaussian = bndp.BoundedGaussian(**kw)

    def time_truncated_normal(self):
        bndp.truncated_normal(self.values, 20.0, 0.0, 120.0, rng=self.gen)

    def time_bounded_laplace_continuous(self):
        self.laplace.sample(self.values, rng=self.gen)

    def time_bounded_gaussian_continuous(self):
        self.gaussian.sample(self.values, rng=self.gen)


class DefaultRelease(_Timed):
    """The default (grid) law through ``bndp.sample``, 10^6 values: fixed bounds [0, 120],
    and per-row bounds (about 200 distinct pairs, plans built in setup)."""

    params = ["laplace", "gaussian"]
    param_names = ["mechanism"]

    def setup(self, mechanism):
        rng = np.random.default_rng(1)
        self.values = rng.uniform(0.0, 120.0, N)
        self.lower = np.floor(self.values / 10.0) * 10.0
        self.upper = self.lower + rng.integers(1, 20, N)
        self.values = np.minimum(self.values, self.upper)
        self.gen = np.random.default_rng(0)
        self.time_fixed_bounds(mechanism)
        self.time_per_row_bounds(mechanism)

    def time_fixed_bounds(self, mechanism):
        bndp.sample(self.values, mechanism=mechanism, epsilon=1.0, sensitivity=1.0,
                    lower=0.0, upper=120.0, rng=self.gen)

    def time_per_row_bounds(self, mechanism):
        bndp.sample(self.values, mechanism=mechanism, epsilon=1.0, sensitivity=1.0,
                    lower=self.lower, upper=self.upper, rng=self.gen)


class OneValue(_Relative):
    """One record at a time, 1000 calls a sample: ``m.sample(x)`` with the secure default
    generator and the plan built, and ``bndp.sample(x, ...)``; timed against the reference
    loop (:class:`_Relative`)."""

    params = ["laplace", "gaussian"]
    param_names = ["mechanism"]

    def setup(self, mechanism):
        self.kw = dict(epsilon=1.0, sensitivity=1.0, lower=0.0, upper=120.0)
        cls = bndp.BoundedLaplace if mechanism == "laplace" else bndp.BoundedGaussian
        self.mech = cls(**self.kw)
        self.mechanism = mechanism
        self.mech.sample(3.0)
        bndp.sample(3.0, mechanism=mechanism, **self.kw)

    def _mechanism(self):
        m = self.mech
        for _ in range(1000):
            m.sample(3.0)

    def _sample(self):
        kw, mechanism = self.kw, self.mechanism
        for _ in range(1000):
            bndp.sample(3.0, mechanism=mechanism, **kw)

    def time_mechanism_relative(self, mechanism):
        relative(self._mechanism)

    def time_sample_relative(self, mechanism):
        relative(self._sample)


class CalibrationCalls(_Relative):
    """The continuous laws' calibrations, 1000 calls a sample (a few microseconds each:
    mostly the Python around the compiled root finder); timed against the reference loop
    (:class:`_Relative`), as the one-value calls: timed raw, their processes' fastest
    samples moved by up to 1.5x between the machine's two states (README, "Benchmarks")."""

    def setup(self):
        self._laplace()
        self._gaussian()

    def _laplace(self):
        f = calibrate.bounded_laplace_scale
        for _ in range(1000):
            f(1.0, 1.0, 0, 10)

    def _gaussian(self):
        f = calibrate.bounded_gaussian_sigma
        for _ in range(1000):
            f(1.0, 1.0, 0, 10)

    def time_bounded_laplace_scale_relative(self):
        relative(self._laplace)

    def time_bounded_gaussian_sigma_relative(self):
        relative(self._gaussian)


class Calibration(_Timed):
    """The continuous laws' calibration of 10^4 parameters in one call (the compiled root
    finder's loop)."""

    def time_bounded_laplace_scale_array_1e4(self):
        calibrate.bounded_laplace_scale(np.linspace(0.1, 5.0, 10**4), 1.0, 0.0, 10.0)


class Planning(_Timed):
    """The default law's plan (calibration and certificate) for parameters never planned
    before, 20 plans a sample."""

    params = ["laplace", "gaussian"]
    param_names = ["mechanism"]

    def setup(self, mechanism):
        self.cls = bndp.BoundedLaplace if mechanism == "laplace" else bndp.BoundedGaussian

    def time_plan_20(self, mechanism):
        cls = self.cls
        for _ in range(20):
            cls(epsilon=1.0 + next(_FRESH) * 1e-9, sensitivity=1.0, lower=0.0, upper=120.0)


class Privatize(_Timed):
    """``bndp.privatize`` of a 10^6-row pandas frame: three columns (Laplace and Gaussian with
    fixed bounds, Laplace with per-row bounds read from two other columns)."""

    spec = {
        "age": {"lower": 0, "upper": 120, "sensitivity": 1, "epsilon": 0.25},
        "income": {"mechanism": "gaussian", "lower": 0, "upper": 500000,
                   "sensitivity": 1000, "epsilon": 0.25},
        "score": {"lower": "score_lo", "upper": "score_hi", "sensitivity": 1,
                  "epsilon": 0.25},
    }

    def setup(self):
        import pandas as pd

        rng = np.random.default_rng(0)
        lo = rng.integers(0, 50, N).astype(np.float64)
        self.frame = pd.DataFrame({
            "id": np.arange(N), "age": rng.integers(0, 121, N),
            "income": rng.uniform(0, 500000, N), "score": lo + rng.uniform(0, 10, N),
            "score_lo": lo, "score_hi": lo + 10.0})
        bndp.privatize(self.frame, self.spec, rng=1)

    def time_privatize_1e6_rows(self):
        bndp.privatize(self.frame, self.spec, rng=1)


class Estimation(_Timed):
    """``bndp.estimate`` with its bootstrap (40 replicates) and the mean's interval, 10^5
    released values with fixed bounds [0, 120], a skewed column: the Laplace law (its fits
    by running sums and compiled cycles) and the Gaussian's (banded products)."""

    def setup(self):
        x = np.clip(np.random.default_rng(0).exponential(10.0, 10**5), 0.0, 120.0)
        self.laws = {}
        for name, cls in (("laplace", bndp.BoundedLaplace), ("gaussian", bndp.BoundedGaussian)):
            m = cls(1.0, sensitivity=1.0, lower=0.0, upper=120.0)
            y = m.sample(x, rng=1)
            bndp.estimate(y[:1000], m, n_boot=2)    # the law, planned once
            self.laws[name] = (m, y)

    def _estimate(self, name):
        m, y = self.laws[name]
        bndp.estimate(y, m, n_boot=40, rng=2).mean_interval

    def time_estimate_laplace(self):
        self._estimate("laplace")

    def time_estimate_gaussian(self):
        self._estimate("gaussian")
