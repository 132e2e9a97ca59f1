"""The integer law on the command line: which columns of the input are integer-typed, read
before the release is planned, and the integer output of a column released with it.

A column of a Parquet input is integer-typed when its Parquet type (the schema: public) is
an integer type. A CSV file has no types, and the law of a column must not depend on its
cells (they are data: a law chosen from them would tell, by the release's form, whether a
cell held a fraction, which no noise hides), so every column of a CSV input counts as
integer-typed: its public settings decide. A spec column without the key ``integer`` is
released with the integer law when its column is integer-typed and its bounds and
sensitivity are integral and the lattice can be planned
(:func:`bndp._release.spec.parse_spec`); a CSV cell that holds a fraction is then rounded
to the lattice, as every true value is.
"""

from __future__ import annotations

import argparse
from typing import Any

import numpy as np

__all__ = ["input_integer_columns", "integer_cells", "EveryColumn"]


class EveryColumn:
    """The integer-typed columns of a CSV input: every column (a set that holds every
    name)."""

    def __contains__(self, name: object) -> bool:
        return True

    def __repr__(self) -> str:
        return "EveryColumn()"


def input_integer_columns(args: argparse.Namespace, src: str, parts: list[str] | None,
                          spooled: bool, compressed: str | None, fmt: str | None
                          ) -> Any:
    """The names of the integer-typed columns of the input (:class:`EveryColumn` for a CSV
    input, whose cells never decide), or None where the format is not known before the
    release (stdin, a compressed file, an unreadable file: the errors are reported by the
    release itself)."""
    if fmt == "csv" and parts is None:
        return EveryColumn()
    if spooled or compressed is not None or (parts is None and fmt != "parquet"):
        return None
    try:
        import pyarrow as pa
        import pyarrow.parquet as pq

        schema = pq.read_schema(parts[0] if parts else src)
        return {f.name for f in schema if pa.types.is_integer(f.type)}
    except Exception:           # (read again, and reported, by the release)
        return None


def integer_cells(noisy: np.ndarray, null: np.ndarray | None, pa: Any) -> Any:
    """A column's released values (integral: the integer law's) as an Arrow int64 array
    (nulls where ``null``; NaN entries, missing values kept, hold 0 here and are put back
    by the caller)."""
    a = np.asarray(noisy)
    if a.dtype.kind == "f":
        a = np.where(np.isnan(a), 0.0, a)
    return pa.array(a.astype(np.int64), mask=null if null is not None and null.any() else None)
