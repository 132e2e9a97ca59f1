"""``bndp privatize``'s files: the input's format and compression, a directory or glob of
Parquet files, and the released file converted to the other format (``--output-format``)."""

from __future__ import annotations

import argparse
import os
from typing import Any

from ._errors import DataError, FileError, _need
from ._io import Staged


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


def _convert(staged: Staged, fmt: str, out_fmt: str, args: argparse.Namespace) -> Staged:
    """The released file ``staged`` (in ``fmt``) rewritten as ``out_fmt``, batch by batch,
    into a new staged file of the same directory."""
    pa, pcsv, pq = _arrow("pyarrow", "pyarrow.csv", "pyarrow.parquet")
    out = Staged(staged.directory, ".bndp-convert.")
    try:
        if fmt == "csv":     # CSV -> Parquet: released columns float64, others inferred
            reader = pcsv.open_csv(staged.path, parse_options=pcsv.ParseOptions(
                delimiter=args.delimiter))
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
