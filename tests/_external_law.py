"""A mechanism written outside bndp (docs/extending.md): the bounded uniform mixture. The
true value is rounded to the nearest of k evenly spaced points of [lower, upper] (at most a
sensitivity apart), released with probability 1 - t, else one of the k drawn uniformly:
P(x | q) = t / k + (1 - t) [x = round(q)]. Certificate: for any two true values the pmf's
ratio is at most (t/k + 1 - t) / (t/k) = e^L with t = k / (e^L - 1 + k); L = epsilon
(1 - MARGIN) keeps that loss, computed in doubles, at most epsilon."""

import math

import numpy as np

import bndp

MARGIN = 1e-9


def _out(a):
    return a[()] if a.ndim == 0 else a     # a float for scalar arguments


class UniformMixture(bndp.Mechanism):
    _init_args = ("epsilon", "sensitivity", "lower", "upper")

    def __init__(self, epsilon, *, sensitivity, lower, upper):
        eps, dq, lo, hi = (float(a) for a in (epsilon, sensitivity, lower, upper))
        if not (eps > 0 and dq > 0 and -math.inf < lo < hi < math.inf) or math.isinf(eps + dq):
            raise ValueError("need finite epsilon > 0, sensitivity > 0, lower < upper")
        k = math.ceil((hi - lo) / dq) + 1
        t = k / (math.expm1(eps * (1 - MARGIN)) + k)
        self._set(epsilon=eps, sensitivity=dq, lower=lo, upper=hi,
                  points=np.linspace(lo, hi, k), t=t)

    def _index(self, q):
        k = len(self.points)
        return np.rint((q - self.lower) / (self.upper - self.lower) * (k - 1)).astype(np.int64)

    def grid(self):
        return self.points

    def pmf(self, x, value):
        x, q = np.broadcast_arrays(np.asarray(x, float), self._value(value))
        g, k = self.points, len(self.points)
        j = np.minimum(np.searchsorted(g, x), k - 1)
        return _out(np.where(g[j] == x, self.t / k + (1 - self.t) * (j == self._index(q)), 0.0))

    def cdf(self, x, value):
        x, q = np.broadcast_arrays(np.asarray(x, float), self._value(value))
        n, k = np.searchsorted(self.points, x, "right"), len(self.points)
        return _out(np.where(n >= k, 1.0, self.t * n / k + (1 - self.t) * (n > self._index(q))))

    def ppf(self, p, value):
        p, q = np.broadcast_arrays(np.asarray(p, float), self._value(value))
        c = self.cdf(self.points, q[..., None])      # every grid point's cdf, per element
        return _out(self.points[(c < p[..., None]).sum(axis=-1)])

    def _moments(self, value):
        g = self.points - self.lower                 # offsets: no digits lost near 1e6
        at = g[self._index(self._value(value))]
        m = self.t * g.mean() + (1 - self.t) * at
        return m, self.t * np.mean(g * g) + (1 - self.t) * at * at - m * m

    def mean(self, value):
        return self.lower + self._moments(value)[0]

    def variance(self, value):
        return self._moments(value)[1]

    def bias(self, value):
        return self.mean(value) - self._value(value)

    def sample(self, value, size=None, rng=None, on_outside="clip"):
        q = self._value(value, on_outside)
        q = q if size is None else np.broadcast_to(q, size)
        gen = bndp.default_rng(rng)
        uniform = self.points[gen.integers(len(self.points), size=q.shape)]
        return _out(np.where(gen.random(q.shape) < self.t, uniform, self.points[self._index(q)]))

    def privacy_loss(self):
        k = len(self.points)
        return math.log(self.t / k + 1 - self.t) - math.log(self.t / k)
