"""bndp's mechanisms (flat re-exports)."""

from ._base import Mechanism
from .gaussian import BoundedGaussian
from .gradients import RectifiedGaussian, StochasticSign, TruncatedGaussian
from .laplace import BoundedLaplace

__all__ = [
    "Mechanism",
    "BoundedLaplace",
    "BoundedGaussian",
    "RectifiedGaussian",
    "TruncatedGaussian",
    "StochasticSign",
]
