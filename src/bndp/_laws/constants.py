"""The constants of the grid laws, each defined once.

The modules of :mod:`bndp._laws` read the grid-size constants (``GRID_STEPS``,
``WHOLE_RANGE_WIDTH_STEPS``, ``METRIC_STEPS``, ``GAP_STEPS``, ``MAX_SET_INTERVALS``) from
this module at call time: tests coarsen the grids by patching them here.
"""

from __future__ import annotations

#: Kernel families (the codes the compiled core takes) and their names.
LAPLACE, GAUSSIAN = 0, 1
FAMILY_NAMES = {LAPLACE: "laplace", GAUSSIAN: "gaussian"}
#: Values of ``mode=``: the grid law (default) or the continuous law's raw doubles.
MODES = ("exact", "continuous")

# granularity gamma of the whole-range law (ExactPlan, ProductPlan, ConstrainedPlan)
GRID_STEPS = 16            # gamma <= min(scale, sensitivity) / 16
MULTI_STEPS = 64           # multivariate: gamma <= sensitivity / (64 sqrt(m))
WHOLE_RANGE_WIDTH_STEPS = 1024  # gamma <= (upper - lower) / 1024: at least 1024 intervals
METRIC_STEPS = 512         # metric guarantee: gamma <= scale / 512 ...
GAP_STEPS = 64             # ... and <= (narrowest gap) / 64
# granularity of the windowed law (one kernel for every row wider than its own window)
SCALE_STEPS = 16           # gamma <= (sensitivity / target) / 16
WINDOW_WIDTH_STEPS = 128   # gamma <= width / 128: a row has at least 128 intervals
# both laws: gamma is refined until sensitivity / gamma is an integer or >= SENS_STEPS (the
# rounding then inflates the sensitivity by at most 0.4 %)
SENS_STEPS = 256
MAX_ROW_INTERVALS = 1 << 51  # grid intervals of a row (the compiled core's GW_MAX_ROW)

# sizes of the whole-range tables
MAX_INTERVALS = 1 << 22    # n: grid intervals in [l, u] (table memory: 16 (n + 1) bytes)
MAX_PAIRS = 1 << 28        # n * d_k: work of the certificate
MAX_SET_INTERVALS = 3 << 18  # unbounded allowed sets: table half-width n (each evaluation of
                           # the search builds a table and a bound of about 120 n bytes)
MAX_INDEX = 1 << 53        # |grid index|: (k_l + j) * gamma is then an exact double
FLOOR_BITS = 12            # F = 2^12
TOTAL_BITS = 58            # table total <= 2^58 (a bounded-integer rejection < 2^-6)
MIN_PEAK_BITS = 32         # 2^K >= 2^32: peak / F >= 2^20

#: A scale search stops when its bracket is within this of the scale (relative); the
#: compiled window search also stops when the certified loss is within this of the target.
REL_TOL = 1e-7
