r"""Exact mode: bounded discrete Laplace and Gaussian on a power-of-two grid, sampled with
integer arithmetic only, with an exhaustively certified privacy loss.

Why. A textbook floating-point Laplace sampler ``q + b * log(u)`` does not release a sample
of the Laplace law: it releases one of finitely many doubles, and the set of doubles it can
produce depends on ``q`` (Mironov [Mir12]_). An observer who sees a single output that input
``q`` can produce and the neighbouring input ``q'`` cannot learns which one was used: the
privacy loss is infinite, whatever the formula says. The continuous mode of bndp (inverse
CDF on a 52-bit uniform) has the same kind of structure. Exact mode removes it:

1. the true value ``q`` (clipped into :math:`[l, u]`) is rounded to the grid
   :math:`\gamma\mathbb{Z}` (nearest point, ties up), :math:`\gamma = 2^e` a power of two
   chosen from the scale and the sensitivity, then clipped to the grid points
   :math:`k_l\gamma, \dots, k_u\gamma` of :math:`[l, u]`;
2. the output index is drawn exactly, by comparisons of uniform integers only, from

   .. math:: P(j \mid i) \propto e^{-|j - i|/t} \quad\text{(Laplace)}, \qquad
             P(j \mid i) \propto e^{-(j - i)^2/(2 s)} \quad\text{(Gaussian)},
             \qquad j \in \{0, \dots, n\},

   with integer scale ``t`` or integer variance ``s`` in grid units (discrete Laplace and
   discrete Gaussian of Canonne, Kamath and Steinke [CKS20]_ Algorithms 1-3, truncated by
   rejection, or by a uniform proposal when the grid is narrower than the scale);
3. the released value :math:`(k_l + j)\gamma` is a double computed exactly. Every grid
   point has positive probability under every input, so the support does not depend on
   the input.

Certification. Rounding moves neighbouring inputs at most
:math:`d_k = \lceil \Delta Q/\gamma\rceil` grid steps apart (``floor(x + 1/2)`` is
monotone and ``floor(x + D) - floor(x) <= ceil(D)``; clipping is 1-Lipschitz). The
certified loss is the maximum of :math:`\ln P(j\mid i)/P(j\mid i')` over all pairs of grid
inputs with :math:`|i - i'| \le d_k` and all outputs ``j`` (the maximum over ``j`` is at an
end of the grid: the log ratio is monotone in ``j``), enlarged by a relative
:math:`10^{-12}` and an absolute :math:`10^{-9}`, a bound on the rounding error of its
evaluation (each pair's loss is computed to within :math:`10^{-12}(1 + \text{loss})`).
The integer scale is the smallest (up to a 1/4096 step) for which this certificate is
:math:`\le` the target: :math:`\epsilon` for the Gaussian, and for the Laplace
:math:`L = \epsilon - \ln(1 - \delta)`, the loss bound behind Theorem 3.5 of [HABM20]_ (a
loss bound :math:`L` implies :math:`(\epsilon, \delta)`-DP, since
:math:`P(A) \le \min(1, e^{\epsilon} P'(A)/(1 - \delta)) \le e^{\epsilon} P'(A) + \delta`).

Limits. The grid has at most :math:`2^{24}` intervals and :math:`n\,d_k \le 2^{26}` (the
cost of the certificate); for ranges very wide against the sensitivity the granularity is
coarsened to meet this, which inflates the effective sensitivity to :math:`d_k\gamma`
(at most by :math:`\gamma/\Delta Q`). Grid indices must stay below :math:`2^{53}` in
magnitude. Only the univariate Gaussian mechanism has an exact mode.

Departures from the papers. [CKS20]_ samples the untruncated discrete Laplace/Gaussian;
here they are truncated to the grid by rejection (or drawn by a uniform proposal accepted
with the kernel's weight when the grid is narrower than the scale), which yields the
bounded laws exactly. In Algorithm 1, Bernoulli(:math:`\gamma/K`) is drawn as
Bernoulli(num/den) AND Bernoulli(1/K), which has the same law and avoids the product
den*K. The scales are not those of [HABM20]_ (Theorem 3.5) or of Chen and Hale's sufficient
condition for the bounded Gaussian: they are calibrated directly on the certificate of the
discrete mechanism actually sampled. For the Laplace they come out within 0.5 % of
:math:`b^*` on a fine grid (more when the range forces a coarse one, see Limits); for
the Gaussian they are usually smaller than the continuous :math:`\sigma^*`, whose
condition is sufficient, not tight (and within 0.05 % of ``calibration="tight"``).

.. [Mir12] I. Mironov. "On Significance of the Least Significant Bits for Differential
   Privacy". ACM CCS 2012.
.. [CKS20] C. L. Canonne, G. Kamath, T. Steinke. "The Discrete Gaussian for Differential
   Privacy". NeurIPS 2020.
.. [HABM20] N. Holohan, S. Antonatos, S. Braghin, P. Mac Aonghusa. "The Bounded Laplace
   Mechanism in Differential Privacy". J. Privacy and Confidentiality 10(1), 2020.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import numpy as np

from .. import _core, _dispatch

__all__ = ["ExactPlan", "plan_bounded_laplace", "plan_bounded_gaussian", "certify", "check_mode"]

LAPLACE, GAUSSIAN = 0, 1
_FAMILY = {LAPLACE: "laplace", GAUSSIAN: "gaussian"}

GRID_RESOLUTION = 10        # gamma <= min(scale, sensitivity) / 2^10 before coarsening
MAX_INTERVALS = 1 << 24     # n: grid intervals in [l, u] (memory of the certificate)
MAX_PAIRS = 1 << 26         # n * d_k: work of the exhaustive certificate
MAX_INDEX = 1 << 53         # |grid index|: (k_l + j) * gamma is then an exact double
# Largest integer scale per family: Laplace t (kept far below 2^63 / n); Gaussian s = sigma^2
# in grid units, so that 2 s (floor(sqrt(s)) + 1)^2 < 2^64 in the acceptance test.
SMAX = {LAPLACE: 1 << 40, GAUSSIAN: 1 << 31}
# Largest scale, in grid units, the grid choice aims at (half of SMAX's room).
_SCALE_EXP = {LAPLACE: 30, GAUSSIAN: 15}


def check_mode(mode: Any) -> str:
    """Validate the ``mode=`` argument of the mechanisms."""
    if not isinstance(mode, str) or mode not in ("continuous", "exact"):
        raise ValueError(f"`mode` must be 'continuous' or 'exact'; got {mode!r}")
    return mode


@dataclass(frozen=True)
class ExactPlan:
    """A calibrated exact mechanism: grid, integer scale and certified privacy loss.

    Attributes
    ----------
    family : str
        ``"laplace"`` or ``"gaussian"``.
    exponent : int
        The granularity is :math:`\\gamma = 2^{exponent}`.
    kl, n : int
        The grid points of :math:`[l, u]` are :math:`(k_l + j)\\gamma`, ``j = 0..n``.
    dk : int
        Grid steps between neighbouring rounded inputs (at most).
    scale_int : int
        ``t`` (Laplace scale) or ``s`` (Gaussian variance) in grid units.
    target : float
        The loss the calibration had to certify.
    certified_epsilon : float
        Certified worst-case privacy loss, ``<= target``.
    """

    family: str
    exponent: int
    kl: int
    n: int
    dk: int
    scale_int: int
    target: float
    certified_epsilon: float

    @property
    def gamma(self) -> float:
        """Granularity of the grid (a power of two)."""
        return math.ldexp(1.0, self.exponent)

    @property
    def _fam(self) -> int:
        return LAPLACE if self.family == "laplace" else GAUSSIAN

    @property
    def scale(self) -> float:
        """Scale in value units: ``t * gamma`` (Laplace) or ``sqrt(s) * gamma`` (Gaussian)."""
        if self._fam == LAPLACE:
            return self.scale_int * self.gamma
        return math.sqrt(self.scale_int) * self.gamma

    def grid(self) -> np.ndarray:
        """The ``n + 1`` attainable outputs."""
        return np.ldexp(np.arange(self.kl, self.kl + self.n + 1, dtype=np.float64), self.exponent)

    def index(self, value: np.ndarray) -> np.ndarray:
        """Grid index ``i`` (float64 holding an integer in [0, n]) of clipped true values."""
        z = np.ldexp(np.asarray(value, dtype=np.float64), -self.exponent)   # exact
        f = np.floor(z)
        k = f + ((z - f) >= 0.5)                                              # ties up
        return np.clip(k, self.kl, self.kl + self.n) - self.kl

    def pmf(self, value: Any) -> np.ndarray:
        """Output probabilities over :meth:`grid` for one clipped true value."""
        i = float(self.index(value))
        j = np.arange(self.n + 1, dtype=np.float64)
        if self._fam == LAPLACE:
            lw = -np.abs(j - i) / self.scale_int
        else:
            lw = -((j - i) ** 2) / (2.0 * self.scale_int)
        w = np.exp(lw - lw.max())
        return w / w.sum()

    def sample(self, value: np.ndarray, size: Any, gen: np.random.Generator):
        """Exact draws for clipped true values ``value`` (NumPy's size rule)."""
        fam, n, s, kl, g = self._fam, self.n, self.scale_int, self.kl, self.gamma

        def one(gen, i):
            return _core.ex_one(gen, fam, i, n, s, kl, g)

        def fill(gen, i, out):
            _core.ex_fill(gen, fam, i, n, s, kl, g, out)

        def rows(gen, i, out):
            _core.ex_fill_rows(gen, fam, i, n, s, kl, g, out)

        return _dispatch.sample(one, fill, rows, [self.index(value)], size, gen)


def certify(family: str, scale_int: float, n: int, dk: int) -> float:
    """Certified privacy loss of the bounded discrete law on ``{0..n}`` with integer scale
    ``scale_int`` (``t`` or ``s``) for inputs at most ``dk`` steps apart: the maximum over
    every pair of grid inputs and every output of the log PMF ratio, times (1 + 1e-12),
    plus 1e-9 (a bound on its rounding error)."""
    fam = LAPLACE if family == "laplace" else GAUSSIAN
    if not (1 <= dk <= n):
        raise ValueError(f"need 1 <= dk <= n; got dk = {dk}, n = {n}")
    return float(_core.ex_certify(fam, float(scale_int), int(n), int(dk)))


def _choose_grid(fam: int, hint: float, dq: float, lo: float, hi: float):
    dq_eff = min(dq, hi - lo)
    e = math.frexp(min(hint, dq_eff))[1] - 1 - GRID_RESOLUTION       # floor(log2(.)) - R
    e = max(e, math.frexp(hint)[1] - _SCALE_EXP[fam])
    for _ in range(2100):
        if e < -1021 or e > 1000:
            break
        kl = math.ceil(math.ldexp(lo, -e))
        ku = math.floor(math.ldexp(hi, -e))
        n = ku - kl
        dk = min(math.ceil(math.ldexp(dq_eff, -e)), n)
        if n >= 1 and n <= MAX_INTERVALS and n * dk <= MAX_PAIRS:
            if max(abs(kl), abs(ku)) >= MAX_INDEX:
                raise ValueError(
                    "exact mode: the bounds are too far from 0 for the grid granularity "
                    f"2^{e} (grid indices beyond 2^53); shift the data towards 0"
                )
            return e, kl, n, max(dk, 1)
        e += 1
    raise ValueError("exact mode: no grid fits these bounds, sensitivity and scale")


def _plan(fam: int, target: float, hint: float, dq: float, lo: float, hi: float) -> ExactPlan:
    plan = _plan_on_grid(fam, target, hint, dq, lo, hi)
    # The grid was chosen from the continuous scale. When the certified scale is much
    # smaller (the Gaussian's sufficient condition can be loose by orders of magnitude),
    # choose the grid again from the certified scale, once, and keep the finer plan.
    if plan.scale < 0.25 * hint:
        finer = _plan_on_grid(fam, target, plan.scale, dq, lo, hi)
        if finer.exponent < plan.exponent:
            return finer
    return plan


def _plan_on_grid(fam: int, target: float, hint: float, dq: float, lo: float,
                  hi: float) -> ExactPlan:
    e, kl, n, dk = _choose_grid(fam, hint, dq, lo, hi)
    st, s, cert = _core.ex_calibrate(fam, float(target), n, dk, math.ldexp(hint, -e), SMAX[fam])
    if st == 1:
        raise ValueError(
            "exact mode: the calibrated scale exceeds the integer range of the sampler for "
            "this grid; the bounds are too narrow for this privacy level"
        )
    if st != 0:  # pragma: no cover - defensive: the search always brackets in practice
        raise RuntimeError("exact mode: the scale search did not certify the target loss")
    return ExactPlan(_FAMILY[fam], e, kl, n, dk, int(s), float(target), float(cert))


def plan_bounded_laplace(epsilon: float, sensitivity: float, lower: float, upper: float,
                         delta: float = 0.0, scale_hint: float | None = None) -> ExactPlan:
    """Exact bounded Laplace for validated inputs; target loss ``eps - ln(1 - delta)``."""
    if scale_hint is None:
        from ..calibrate import bounded_laplace_scale
        scale_hint = float(bounded_laplace_scale(epsilon, sensitivity, lower, upper, delta))
    target = epsilon - math.log1p(-delta)
    return _plan(LAPLACE, target, scale_hint, sensitivity, lower, upper)


def plan_bounded_gaussian(epsilon: float, sensitivity: float, lower: float, upper: float,
                          sigma_hint: float | None = None) -> ExactPlan:
    """Exact univariate bounded Gaussian for validated inputs; target loss ``eps``."""
    if sigma_hint is None:
        from ..calibrate import bounded_gaussian_sigma
        sigma_hint = float(bounded_gaussian_sigma(epsilon, sensitivity, lower, upper))
    return _plan(GAUSSIAN, epsilon, sigma_hint, sensitivity, lower, upper)
