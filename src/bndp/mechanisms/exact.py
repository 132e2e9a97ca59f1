r"""The default release law: a table of integer weights on a power-of-two grid, sampled by an
integer inverse CDF, with its privacy loss certified from the same table.

The univariate bounded mechanisms and per-row bounds release the windowed law
(:mod:`bndp._laws.window`); the multivariate Gaussian (:class:`ProductPlan`) and
:class:`ConstrainedPlan` release the whole-range law. The design, the certificate and the
calibration are in the documentation's page "The grid laws: design and proofs"
(``docs/grid_laws.rst``). This module is the public facade of the laws; their code lives in
:mod:`bndp._laws`, and the grid constants in :mod:`bndp._laws.constants`, read at call
time: patch them there, not here.
"""

from __future__ import annotations

from .._laws.constants import (  # noqa: F401 - re-exported
    LAPLACE, GAUSSIAN, FAMILY_NAMES, MODES, GRID_STEPS, SENS_STEPS, MULTI_STEPS,
    WHOLE_RANGE_WIDTH_STEPS, WINDOW_WIDTH_STEPS, SCALE_STEPS, METRIC_STEPS, GAP_STEPS,
    MAX_INTERVALS, MAX_PAIRS, MAX_INDEX, FLOOR_BITS, TOTAL_BITS, MIN_PEAK_BITS, REL_TOL)
from .._laws.whole_range import (  # noqa: F401 - re-exported
    _gceil, _gfloor, check_mode, ExactPlan, _exact_cdf, _law_from, _tail_sums, search_tree,
    _log_ratio, _certify, _kexp, _table, grid_law)
from .._laws.calibration import (  # noqa: F401 - re-exported
    _choose_grid, _search, plan_bounded_laplace)
from .._laws.product import (  # noqa: F401 - re-exported
    _dual_bound, ProductPlan, _plan_product, _choose_grid_at, plan_bounded_gaussian)
from .._laws.constrained import (  # noqa: F401 - re-exported
    GD_INF, TAIL_BITS, LAW_TAIL, ConstrainedPlan, _up, _add_up, _metric_bound, _tail_bits,
    _set_table, _set_grid, _spans, _plan_constrained, plan_constrained_laplace)

__all__ = ["ExactPlan", "ProductPlan", "ConstrainedPlan", "plan_bounded_laplace",
           "plan_bounded_gaussian", "plan_constrained_laplace", "check_mode", "grid_law",
           "MODES"]
