"""bndp: differentially private noise for values that must stay inside a valid range.

Bounded Laplace and bounded (truncated) Gaussian mechanisms with exact, conservative noise
calibration and a compiled sampling core over NumPy's BitGenerators.
"""

from . import calibrate
from ._random import default_rng
from .api import sample
from .distributions import truncated_normal
from .exceptions import BudgetError, PrivacyLeakWarning
from .mechanisms import BoundedGaussian, BoundedLaplace, Mechanism

__version__ = "0.1.0"


def __getattr__(name: str):
    # bndp.spark and bndp.dask import their engines: load them only when asked for.
    if name in ("spark", "dask"):
        import importlib

        return importlib.import_module(f"{__name__}.{name}")
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")

__all__ = [
    "BoundedGaussian",
    "BoundedLaplace",
    "BudgetError",
    "Mechanism",
    "PrivacyLeakWarning",
    "calibrate",
    "default_rng",
    "sample",
    "truncated_normal",
    "__version__",
]
