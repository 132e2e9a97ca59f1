"""The integer law on the command line: which columns of the input are integer-typed, read
before the release is planned, and the integer output of a column released with it.

A column of the input is integer-typed when its Parquet type is an integer type, or, in a
CSV file (which has no types), when every non-empty cell of its first block holds an
integer (the first block is read as a schema would be; a CSV read from stdin or compressed
has no type read in advance: there, ``--integer`` or the spec key ``integer`` asks for
the integer law). A spec column without the key ``integer`` is released with the integer
law when its column is integer-typed and its bounds and sensitivity are integral
(:func:`bndp._release.spec.parse_spec`).
"""

from __future__ import annotations

import argparse
from typing import Any

import numpy as np

__all__ = ["input_integer_columns", "integer_cells", "INT_CELL"]

#: An integer CSV cell: optional sign and decimal digits, optional surrounding blanks.
INT_CELL = r"^\s*[+-]?[0-9]+\s*$"


def input_integer_columns(args: argparse.Namespace, src: str, parts: list[str] | None,
                          spooled: bool, compressed: str | None, fmt: str | None
                          ) -> set[str] | None:
    """The names of the integer-typed columns of the input, or None where no type can be
    read before the release (stdin, a compressed CSV, an unreadable file: the errors are
    reported by the release itself)."""
    if spooled or compressed is not None or (parts is None and fmt not in ("csv", "parquet")):
        return None
    try:
        import pyarrow as pa
        if parts is not None or fmt == "parquet":
            import pyarrow.parquet as pq

            schema = pq.read_schema(parts[0] if parts else src)
            return {f.name for f in schema if pa.types.is_integer(f.type)}
        return _csv_integer_columns(args, src)
    except Exception:           # (read again, and reported, by the release)
        return None


def _csv_integer_columns(args: argparse.Namespace, path: str) -> set[str] | None:
    import pyarrow as pa
    import pyarrow.compute as pc
    import pyarrow.csv as pcsv

    from ._io import _read_header

    header, header_bytes, only_header = _read_header(path, args.delimiter, path)
    if only_header:
        return None
    ropts = pcsv.ReadOptions(block_size=max(args.block_size, header_bytes + 1))
    popts = pcsv.ParseOptions(delimiter=args.delimiter, ignore_empty_lines=len(header) > 1)
    copts = pcsv.ConvertOptions(column_types={h: pa.string() for h in header},
                                strings_can_be_null=False, quoted_strings_can_be_null=False)
    with open(path, "rb") as raw:
        batch = pcsv.open_csv(raw, read_options=ropts, parse_options=popts,
                              convert_options=copts).read_next_batch()
    out = set()
    for name, text in zip(header, batch.columns):
        cells = pc.utf8_trim_whitespace(text)
        present = pc.not_equal(cells, "")
        if not pc.any(present).as_py():
            continue
        ints = pc.match_substring_regex(text, INT_CELL)
        if pc.all(pc.or_(ints, pc.invert(present))).as_py():
            out.add(name)
    return out


def integer_cells(noisy: np.ndarray, null: np.ndarray | None, pa: Any) -> Any:
    """A column's released values (integral: the integer law's) as an Arrow int64 array
    (nulls where ``null``; NaN entries, missing values kept, hold 0 here and are put back
    by the caller)."""
    a = np.asarray(noisy)
    if a.dtype.kind == "f":
        a = np.where(np.isnan(a), 0.0, a)
    return pa.array(a.astype(np.int64), mask=null if null is not None and null.any() else None)
