"""bndp: differentially private noise for values that must stay inside a valid range.

Bounded Laplace and bounded (truncated) Gaussian mechanisms with exact, conservative noise
calibration and a compiled sampling core over NumPy's BitGenerators; the unbounded Gaussian
calibration family; range-constraint mechanisms; bounded-support Gaussian mechanisms with
per-instance accounting for private training; exact privacy verification.
"""

import logging as _logging
from typing import TYPE_CHECKING

from . import accounting, calibrate, special
from ._random import default_rng
from .api import sample
from .budget import Budget
from .distributions import truncated_normal
from .estimation import Estimate, estimate
from .exceptions import (BudgetError, ColumnDataError, NegligibleNoiseWarning, PrivacyLeakWarning,
                         ReleaseRecorded, ScaledModelWarning, SpecError, SpecTypeError,
                         StoreNotFound)
from .frames import privatize
from .mechanisms import BoundedGaussian
from .mechanisms import BoundedLaplace
from .mechanisms import ClampedLaplace
from .mechanisms import ConstrainedLaplace
from .mechanisms import Gaussian
from .mechanisms import GeneralizedGaussian
from .mechanisms import Laplace
from .mechanisms import Mechanism
from .mechanisms import RectifiedGaussian
from .mechanisms import StochasticSign
from .mechanisms import TruncatedGaussian
from .verify import audit

if TYPE_CHECKING:  # checkers see the function: the documented use is bndp.verify(m)
    from .verify import verify as verify
else:  # the module itself, callable: bndp.verify(m) is bndp.verify.verify(m)
    from . import verify

__version__ = "0.17.0"


def __getattr__(name: str):
    # bndp.spark, bndp.dask and bndp.torch import their engines: load them only when asked.
    if name in ("spark", "dask", "torch"):
        import importlib

        return importlib.import_module(f"{__name__}.{name}")
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


__all__ = [
    "BoundedGaussian",
    "BoundedLaplace",
    "Budget",
    "BudgetError",
    "ClampedLaplace",
    "ColumnDataError",
    "ConstrainedLaplace",
    "Estimate",
    "Gaussian",
    "GeneralizedGaussian",
    "Laplace",
    "Mechanism",
    "NegligibleNoiseWarning",
    "PrivacyLeakWarning",
    "RectifiedGaussian",
    "ReleaseRecorded",
    "ScaledModelWarning",
    "SpecError",
    "SpecTypeError",
    "StochasticSign",
    "StoreNotFound",
    "TruncatedGaussian",
    "accounting",
    "audit",
    "calibrate",
    "default_rng",
    "estimate",
    "privatize",
    "sample",
    "special",
    "truncated_normal",
    "verify",
    "__version__",
]

# the library logs releases on the "bndp" logger and prints nothing: an application that
# configures logging sees them (one INFO record per release, a WARNING for raw doubles)
_logging.getLogger("bndp").addHandler(_logging.NullHandler())
