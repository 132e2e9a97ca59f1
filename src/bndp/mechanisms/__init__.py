"""bndp's mechanisms (flat re-exports)."""

from ._base import Mechanism
from .baselines import ClampedLaplace, GeneralizedGaussian
from .gaussian import BoundedGaussian
from .gradients import RectifiedGaussian, StochasticSign, TruncatedGaussian
from .laplace import BoundedLaplace
from .range import ConstrainedLaplace
from .unbounded import Gaussian, Laplace
from .registry import mechanism_names, register, unregister

__all__ = [
    "Mechanism",
    "BoundedLaplace",
    "BoundedGaussian",
    "ConstrainedLaplace",
    "ClampedLaplace",
    "GeneralizedGaussian",
    "Gaussian",
    "Laplace",
    "RectifiedGaussian",
    "TruncatedGaussian",
    "StochasticSign",
    "register",
    "unregister",
    "mechanism_names",
]

# the windowed grid law is importable as bndp.mechanisms.window (its home is bndp._laws)
import sys as _sys

from .._laws import window

_sys.modules[__name__ + ".window"] = window
