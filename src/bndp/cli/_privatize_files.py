"""``bndp privatize``'s files: the input's format and compression, a directory or glob of
Parquet files, and the released file converted to the other format (``--output-format``)."""

from __future__ import annotations

import argparse
import os
from typing import Any

from ._errors import DataError, FileError, _need
from ._io import Staged, _arrow_msg, _read_header


def _arrow(*modules: str) -> list[Any]:
    """The pyarrow ``modules`` that ``bndp privatize`` needs."""
    return [_need(m, "arrow", "bndp privatize") for m in modules]


_MAGIC = ((b"PAR1", "parquet"), (b"\x1f\x8b", "gzip"), (b"\x28\xb5\x2f\xfd", "zstd"))
_COMPRESSED = {".gz": "gzip", ".gzip": "gzip", ".zst": "zstd", ".zstd": "zstd"}


def _magic(path: str) -> str | None:
    """"parquet", "gzip" or "zstd" from a file's first bytes, else None."""
    with open(path, "rb") as f:
        head = f.read(4)
    return next((what for m, what in _MAGIC if head.startswith(m)), None)


def _compression(path: str) -> str | None:
    """The compression of a file named ``*.gz``/``*.zst`` or starting with its magic."""
    ext = os.path.splitext(path)[1].lower()
    if ext in _COMPRESSED:
        return _COMPRESSED[ext]
    m = _magic(path) if os.path.isfile(path) else None
    return m if m in ("gzip", "zstd") else None


def _strip_compression(path: str) -> str:
    root, ext = os.path.splitext(path)
    return root if ext.lower() in _COMPRESSED else path


def _decompress(path: str, codec: str, shown: str) -> Staged:
    """A gzip or zstd file decompressed into a temporary file (pyarrow's codecs; unnamed
    where the system has them)."""
    pa, = _arrow("pyarrow")
    plain = Staged(None, ".bndp-input.")
    try:
        with open(plain.path, "wb") as out, pa.input_stream(path, compression=codec) as f:
            while True:
                chunk = f.read(1 << 20)
                if not chunk:
                    break
                out.write(chunk)
    except (OSError, pa.ArrowInvalid) as exc:
        plain.discard()
        raise DataError(f"{shown}: cannot decompress ({codec}): {exc}") from None
    except BaseException:
        plain.discard()
        raise
    return plain


def _parquet_parts(src: str) -> list[str] | None:
    """The Parquet files of a directory (as Spark and Dask write them: data files in name
    order, skipping ``_``/``.`` files such as ``_SUCCESS``) or of a glob pattern; None for
    anything else."""
    import glob
    if src != "-" and os.path.isdir(src):
        names = sorted(n for n in os.listdir(src) if not n.startswith(("_", "."))
                       and os.path.isfile(os.path.join(src, n)))
        files = [os.path.join(src, n) for n in names]
        if not files:
            raise DataError(f"{src}: a directory with no data files")
        return files
    if src != "-" and not os.path.exists(src) and glob.has_magic(src):
        files = sorted(f for f in glob.glob(src) if os.path.isfile(f))
        if not files:
            raise FileError(f"{src}: no file matches")
        return files
    return None


def parquet_types(path: str, released: list[str], args: argparse.Namespace,
                  shown: str, integers: Any = ()) -> dict[str, Any]:
    """The Parquet type of every column of a CSV file converted to Parquet
    (``--output-format``), settled before anything is drawn: float64 for the ``released``
    columns (int64 for those of them in ``integers``: released with the integer law, their
    cells integers); for the columns copied, the type Arrow infers from the input's first block
    (``--block-size`` bytes), or string for a column with no value there (a header-only
    file: every copied column). Every row of the copied columns is then read with these
    types: a cell that does not fit its column's type (a column of integers that turns to
    text after the first block) is a data error, raised here, before any noise is
    drawn or anything charged."""
    import re

    pa, pcsv = _arrow("pyarrow", "pyarrow.csv")
    header, header_bytes, _ = _read_header(path, args.delimiter, shown)
    types: dict[str, Any] = {h: pa.int64() if h in integers else pa.float64()
                             for h in header if h in released}
    copied = [h for h in header if h not in released]
    if not copied:
        return types
    block = max(args.block_size, header_bytes + 1)
    ropts = pcsv.ReadOptions(block_size=block)
    popts = pcsv.ParseOptions(delimiter=args.delimiter, ignore_empty_lines=len(header) > 1)
    rows = 0

    def read(column_types: dict[str, Any] | None) -> Any:
        return pcsv.open_csv(path, read_options=ropts, parse_options=popts,
                             convert_options=pcsv.ConvertOptions(
                                 include_columns=copied, column_types=column_types))

    try:
        inferred = read(None).schema        # from the first block only
        for f in inferred:
            types[f.name] = pa.string() if pa.types.is_null(f.type) else f.type
        reader = read({c: types[c] for c in copied})
        for batch in reader:
            rows += batch.num_rows
    except pa.ArrowInvalid as exc:
        m = re.match(r"In CSV column #(\d+): CSV conversion error to ([^:]+):", str(exc))
        if m is None or int(m.group(1)) >= len(header):
            raise DataError(f"{shown}: malformed CSV after data row {rows:,}: "
                            f"{_arrow_msg(exc, block)}") from None
        # (the cell's text is data: not quoted)
        raise DataError(
            f"{shown}: column {header[int(m.group(1))]!r} (copied, not released): a cell "
            f"after data row {rows:,} is not of the column's Parquet type {m.group(2)}, "
            f"inferred from the first {block:,} bytes; nothing was drawn or charged (pass "
            "a larger --block-size, or write CSV)") from None
    return types


def _convert(staged: Staged, fmt: str, out_fmt: str, args: argparse.Namespace,
             types: dict[str, Any] | None = None) -> Staged:
    """The released file ``staged`` (in ``fmt``) rewritten as ``out_fmt``, batch by batch,
    into a new staged file of the same directory. CSV to Parquet: ``types`` (from
    :func:`parquet_types`) gives every column's type."""
    pa, pcsv, pq = _arrow("pyarrow", "pyarrow.csv", "pyarrow.parquet")
    out = Staged(staged.directory, ".bndp-convert.")
    try:
        if fmt == "csv":     # CSV -> Parquet: released columns float64, others as settled
            # (a released row is longer than its input row: twice the input's block)
            reader = pcsv.open_csv(
                staged.path,
                read_options=pcsv.ReadOptions(block_size=max(2 * args.block_size, 1 << 20)),
                # a blank line of a one-column file is a row (its cell missing)
                parse_options=pcsv.ParseOptions(delimiter=args.delimiter, ignore_empty_lines=(
                    types is None or len(types) > 1)),
                convert_options=pcsv.ConvertOptions(column_types=types))
            with pq.ParquetWriter(out.path, reader.schema, compression=args.compression) as w:
                for batch in reader:
                    w.write_batch(batch)
        else:                # Parquet -> CSV
            pf = pq.ParquetFile(staged.path)
            with pcsv.CSVWriter(out.path, pf.schema_arrow, write_options=pcsv.WriteOptions(
                    delimiter=args.delimiter)) as w:
                for batch in pf.iter_batches(batch_size=args.batch_rows):
                    w.write_batch(batch)
    except BaseException:
        out.discard()
        raise
    return out
