"""bndp: differentially private noise for values that must stay inside a valid range.

Bounded Laplace and bounded (truncated) Gaussian mechanisms with exact, conservative noise
calibration and a compiled sampling core over NumPy's BitGenerators.
"""

from . import accounting, calibrate
from ._random import default_rng
from .api import sample
from .distributions import truncated_normal
from .exceptions import BudgetError, PrivacyLeakWarning
from .mechanisms import (
    BoundedGaussian,
    BoundedLaplace,
    Mechanism,
    RectifiedGaussian,
    StochasticSign,
    TruncatedGaussian,
)

__version__ = "0.1.0"

__all__ = [
    "BoundedGaussian",
    "BoundedLaplace",
    "BudgetError",
    "Mechanism",
    "PrivacyLeakWarning",
    "RectifiedGaussian",
    "StochasticSign",
    "TruncatedGaussian",
    "accounting",
    "calibrate",
    "default_rng",
    "sample",
    "truncated_normal",
    "__version__",
]
