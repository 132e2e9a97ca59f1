"""bndp's mechanisms (flat re-exports)."""

from ._base import Mechanism
from .gaussian import BoundedGaussian
from .gradients import RectifiedGaussian, StochasticSign, TruncatedGaussian
from .laplace import BoundedLaplace
from .range import ConstrainedLaplace
from .unbounded import Gaussian, Laplace

__all__ = [
    "Mechanism",
    "BoundedLaplace",
    "BoundedGaussian",
    "ConstrainedLaplace",
    "Gaussian",
    "Laplace",
    "RectifiedGaussian",
    "TruncatedGaussian",
    "StochasticSign",
]
