"""bndp's mechanisms (flat re-exports)."""

from ._base import Mechanism
from .gaussian import BoundedGaussian
from .laplace import BoundedLaplace
from .unbounded import Gaussian, Laplace

__all__ = ["Mechanism", "BoundedLaplace", "BoundedGaussian", "Gaussian", "Laplace"]
