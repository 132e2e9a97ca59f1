"""The interface every plan of a grid law offers (:class:`Plan`): the whole-range law
(:class:`~bndp._laws.whole_range.ExactPlan`), the windowed law of one row
(:class:`~bndp._laws.window.RowPlan`), the multivariate product law
(:class:`~bndp._laws.product.ProductPlan`) and the law on an allowed set
(:class:`~bndp._laws.constrained.ConstrainedPlan`).

Code outside :mod:`bndp._laws` works with a plan through this interface and its capability
attributes, never by testing the plan's type.
"""

from __future__ import annotations

from typing import Any, Protocol, runtime_checkable

import numpy as np

__all__ = ["Plan", "NoRowPath"]


@runtime_checkable
class Plan(Protocol):
    """A calibrated grid law: its grid, its law for a true value, its sampler and its
    certificate.

    Attributes
    ----------
    family : str
        ``"laplace"`` or ``"gaussian"``.
    exponent : int
        The granularity is ``gamma = 2**exponent``.
    gamma : float
        The granularity (a power of two).
    target : float
        The loss the calibration had to certify.
    certified_epsilon : float
        The certified worst-case privacy loss (at most ``target``).
    bounded : bool
        Whether the law has finitely many outputs (every plan but a constrained plan on an
        unbounded allowed set).
    supports_rows : bool
        Whether the plan is the windowed law of one finite row ``[lower, upper]`` (the law
        per-row bounds release row by row): it then has ``lower``, ``upper``, ``n`` and
        ``kernel``, and :meth:`sample_inside` draws with the compiled one-row sampler.
    """

    family: Any
    exponent: Any
    gamma: Any
    target: Any
    certified_epsilon: Any
    bounded: Any
    supports_rows: Any

    def grid(self) -> Any:
        """The attainable outputs (per coordinate for a multivariate law)."""

    def index(self, value: Any) -> np.ndarray:
        """The grid index of clipped true values, as the sampler rounds them."""

    def exact_index(self, value: Any) -> Any:
        """:meth:`index` of an exact (rational) true value, in rational arithmetic."""

    def pmf(self, value: Any) -> Any:
        """Output probabilities over :meth:`grid` for one true value."""

    def law(self, x: Any, value: Any, what: str) -> Any:
        """pmf/cdf/ppf/mean/var or a tail function (sf, logsf, logcdf, isf) of the law for
        one true value."""

    def sample(self, value: Any, size: Any, gen: np.random.Generator, workers: Any = 1) -> Any:
        """Draws for clipped true values (NumPy's size rule; ``workers`` as for
        :func:`bndp.sample`)."""

    def sample_inside(self, value: Any, size: Any, rng: Any, on_outside: Any,
                      workers: Any) -> Any:
        """The draws of :meth:`sample` for one value or a small 1-D float64 array inside
        the bounds (``size=None``, ``workers=1``, a known ``on_outside``) without the
        general path's conversions; ``NotImplemented`` for any other call, or where the plan
        has no such path (``supports_rows`` false): the caller then takes the general
        path."""

    def ends_loss(self, lower: float, upper: float) -> float | None:
        """The certified loss between the true values ``lower`` and ``upper`` (the ends of
        the range), or None where the plan does not certify it."""


class NoRowPath:
    """The part of the :class:`Plan` interface a law without a one-row path offers (the
    whole-range and the product laws): :meth:`sample_inside` declines (the caller takes
    ``sample``) and :meth:`ends_loss` certifies nothing."""

    __slots__ = ()

    def sample_inside(self, value: Any, size: Any, rng: Any, on_outside: Any,
                      workers: Any) -> Any:
        """``NotImplemented``: no one-row path (the caller takes ``sample``)."""
        return NotImplemented

    def ends_loss(self, lower: float, upper: float) -> float | None:
        """None: the loss between the ends of the range (or the corners of the box) is not
        certified."""
        return None
