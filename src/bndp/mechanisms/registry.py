"""The mechanism registry: the one mapping from a mechanism's name (in a release spec, in
:func:`bndp.sample`, on the command line) to its class.

``MECHANISMS`` lists every name a release spec accepts (frames, Spark, Dask, the CLI's
spec files); ``SAMPLE_MECHANISMS`` the names :func:`bndp.sample` and the keyword forms
accept (a column with lower and upper bounds, drawn by one mechanism).
"""

from __future__ import annotations

from typing import Any

from .gaussian import BoundedGaussian
from .laplace import BoundedLaplace
from .range import ConstrainedLaplace

__all__ = ["REGISTRY", "MECHANISMS", "SAMPLE_MECHANISMS", "mechanism_class", "build_mechanism"]

#: Name -> mechanism class.
REGISTRY: dict[str, type] = {
    "laplace": BoundedLaplace,
    "gaussian": BoundedGaussian,
    "constrained_laplace": ConstrainedLaplace,
}

#: Every name a release spec accepts.
MECHANISMS: tuple[str, ...] = tuple(REGISTRY)

#: The names :func:`bndp.sample` (and the engines' and CLI's keyword forms) accept.
SAMPLE_MECHANISMS: tuple[str, ...] = ("laplace", "gaussian")


def mechanism_class(name: Any, allowed: tuple[str, ...] = MECHANISMS) -> type:
    """The class registered under ``name``; ``ValueError`` for a name not in ``allowed``."""
    if not isinstance(name, str) or name not in allowed:
        raise ValueError(f"`mechanism` must be one of {allowed}; got {name!r}")
    return REGISTRY[name]


def build_mechanism(mechanism: str, epsilon: float, sensitivity: float, lower: float,
                    upper: float, delta: float, mode: str | None = "exact") -> Any:
    """The scalar-bounds mechanism of the keyword form (``"laplace"`` or ``"gaussian"``),
    calibrated once."""
    cls = mechanism_class(mechanism, SAMPLE_MECHANISMS)
    if cls is BoundedLaplace:
        return BoundedLaplace(epsilon, sensitivity=sensitivity, lower=lower, upper=upper,
                              delta=delta, mode=mode)
    if delta != 0:
        raise ValueError("the bounded Gaussian mechanism is pure epsilon-DP: `delta` must be 0; "
                         f"got {delta!r}")
    m = BoundedGaussian(epsilon, sensitivity=sensitivity, lower=lower, upper=upper, mode=mode)
    if m.dim is not None:
        raise ValueError("`lower` and `upper` must be scalars for a DataFrame column")
    return m
