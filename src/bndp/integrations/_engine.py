"""What every engine adapter shares: the driver-side mechanism (calibrated once)."""

from __future__ import annotations

from typing import Any

__all__ = ["build_mechanism"]


def build_mechanism(mechanism: str, epsilon: float, sensitivity: float, lower: float, upper: float,
                    delta: float, mode: str | None = "exact") -> Any:
    from ..api import MECHANISMS
    from ..mechanisms import BoundedGaussian, BoundedLaplace

    if not isinstance(mechanism, str) or mechanism not in MECHANISMS:
        raise ValueError(f"`mechanism` must be one of {MECHANISMS}; got {mechanism!r}")
    if mechanism == "laplace":
        return BoundedLaplace(epsilon, sensitivity, lower, upper, delta, mode=mode)
    if delta != 0:
        raise ValueError("the bounded Gaussian mechanism is pure epsilon-DP: `delta` must be 0; "
                         f"got {delta!r}")
    m = BoundedGaussian(epsilon, sensitivity, lower, upper, mode=mode)
    if m.dim is not None:
        raise ValueError("`lower` and `upper` must be scalars for a DataFrame column")
    return m
