"""bndp's mechanisms (flat re-exports)."""

from ._base import Mechanism
from .gaussian import BoundedGaussian
from .laplace import BoundedLaplace
from .range import ConstrainedLaplace

__all__ = ["Mechanism", "BoundedLaplace", "BoundedGaussian", "ConstrainedLaplace"]
