"""bndp: differentially private noise for values that must stay inside a valid range.

Bounded Laplace and bounded (truncated) Gaussian mechanisms with exact, conservative noise
calibration and a compiled sampling core over NumPy's BitGenerators.
"""

from . import calibrate, special
from ._random import default_rng
from .api import sample
from .distributions import truncated_normal
from .exceptions import BudgetError, PrivacyLeakWarning
from .mechanisms import BoundedGaussian, BoundedLaplace, ConstrainedLaplace, Mechanism

__version__ = "0.1.0"

__all__ = [
    "BoundedGaussian",
    "BoundedLaplace",
    "BudgetError",
    "ConstrainedLaplace",
    "Mechanism",
    "PrivacyLeakWarning",
    "calibrate",
    "default_rng",
    "sample",
    "special",
    "truncated_normal",
    "__version__",
]
