r"""The default release law: a table of integer weights on a power-of-two grid, sampled by an
integer inverse CDF, with its privacy loss certified from the same table.

The univariate bounded mechanisms and per-row bounds release the windowed law
(:mod:`bndp._laws.window`); the multivariate Gaussian (:class:`ProductPlan`) and
:class:`ConstrainedPlan` release the whole-range law. The design, the certificate and the
calibration are in the documentation's page "The grid laws: design and proofs"
(``docs/grid_laws.rst``). This module is the public facade of the laws: the plan types and
their interface (:class:`Plan`), the planners and the mode check; their code, and every
private helper, lives in :mod:`bndp._laws`, and the grid constants in
:mod:`bndp._laws.constants`, read at call time: patch them there.
"""

from __future__ import annotations

from .._laws.base import Plan
from .._laws.constants import MODES
from .._laws.whole_range import check_mode, ExactPlan, search_tree, grid_law
from .._laws.calibration import plan_bounded_laplace
from .._laws.product import ProductPlan, plan_bounded_gaussian
from .._laws.constrained import ConstrainedPlan, plan_constrained_laplace

__all__ = ["Plan", "ExactPlan", "ProductPlan", "ConstrainedPlan", "plan_bounded_laplace",
           "plan_bounded_gaussian", "plan_constrained_laplace", "check_mode", "grid_law",
           "search_tree", "MODES"]
