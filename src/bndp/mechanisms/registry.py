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

__all__ = ["REGISTRY", "MECHANISMS", "SAMPLE_MECHANISMS", "ALIASES", "mechanism_key",
           "mechanism_class", "build_mechanism"]

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

#: The explicit spellings of the bounded mechanisms' names, accepted wherever the short
#: ones are: ``"bounded_laplace"`` is :class:`bndp.BoundedLaplace` and
#: ``"bounded_gaussian"`` :class:`bndp.BoundedGaussian` (:class:`bndp.Laplace` and
#: :class:`bndp.Gaussian` are the unbounded mechanisms, which no spec releases). A release
#: records the short name.
ALIASES: dict[str, str] = {"bounded_laplace": "laplace", "bounded_gaussian": "gaussian"}


def mechanism_key(name: Any) -> Any:
    """The registry's name for ``name`` (an :data:`ALIASES` spelling or the name itself)."""
    return ALIASES.get(name, name) if isinstance(name, str) else name


def _accepted(allowed: tuple[str, ...]) -> tuple[str, ...]:
    """``allowed`` with the explicit spellings of its names, for messages."""
    return tuple(a for a, k in ALIASES.items() if k in allowed) + allowed


def mechanism_class(name: Any, allowed: tuple[str, ...] = MECHANISMS) -> type:
    """The class registered under ``name`` (or its :data:`ALIASES` spelling);
    ``ValueError`` for a name not in ``allowed``."""
    key = mechanism_key(name)
    if not isinstance(key, str) or key not in allowed:
        raise ValueError(f"`mechanism` must be one of {_accepted(allowed)}; got {name!r}")
    return REGISTRY[key]


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
