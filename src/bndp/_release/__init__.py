"""The release pipeline: one spec ``{column: {key: value}}`` and one order of steps for
frames (:func:`bndp.privatize`), Spark, Dask and the CLI.

The package holds one concern a module: :mod:`.spec` (the spec and the column plans),
:mod:`.charge` (the budget and the record) and :mod:`.drawing` (the draws on a frame).
:func:`parse_spec` validates a whole spec and calibrates every column with scalar bounds
(building its mechanism once, from :mod:`bndp.mechanisms.registry`), without looking at any
data; :class:`ColumnPlan` then checks a column's data (:meth:`ColumnPlan.check`) and draws
its noise (:meth:`ColumnPlan.draw`) through bndp's mechanisms and :func:`bndp.sample`;
:func:`prepare` and :func:`draw` do both for every column of a narwhals frame. Nothing here
samples by itself.

Every release path (``bndp.privatize`` on frames, Spark, Dask, the CLI) runs the same
order: :func:`plan_release` (spec validated, every fixed-bounds mechanism built and its plan
certified, budget checked without charging), then the data checks and, on the eager paths,
the draws, and only then :func:`charge_release`, the one place a budget is charged. A
release that fails before the charge spends nothing.
"""

from .charge import (
    charge_release,
    check_budget_compatible,
    column_details,
    log_release,
    noise_profile,
    plan_release,
    release_label,
    release_record,
    seeded_release,
)
from .drawing import Prepared, assemble, draw, draw_columns, integer_columns, prepare
from .empty import check_allow_empty, refuse_empty
from .unit import unit_text, whole_range_loss
from .spec import (
    BASE_KEYS,
    MECHANISMS,
    ColumnDataError,
    ColumnPlan,
    SpecError,
    _parse_column,
    keyword_spec,
    mechanism_options,
    parse_spec,
    spec_costs,
)

__all__ = ["ColumnPlan", "parse_spec", "spec_costs", "SpecError", "ColumnDataError", "MECHANISMS",
           "BASE_KEYS",
           "plan_release", "charge_release", "seeded_release", "column_details", "release_label", "Prepared",
           "prepare", "draw", "draw_columns", "assemble", "integer_columns",
           "keyword_spec", "whole_range_loss", "unit_text", "check_allow_empty", "refuse_empty"]
