"""Command-line interface: ``bndp`` / ``python -m bndp``.

Commands
--------
``bndp privatize``  release numeric columns of a CSV or Parquet file, streamed in chunks;
``bndp calibrate``  print the calibrated scale beside the unbounded mechanism's;
``bndp plot``       draw the output density beside the clamped unbounded mechanism;
``bndp demo``       the main job on a small example column shipped with the package;
``bndp reproduce``  a table or figure of the papers, recomputed next to the printed numbers.

``bndp privatize`` takes a release spec (``--spec release.toml`` or ``.json``: one
``[columns.NAME]`` table per column, an optional ``[budget]``) or ``--column`` options; ``-``
reads stdin / writes stdout; the summary goes to stderr (``-q`` silences it). It releases the
certified grid law (mode ``exact``) unless told otherwise: ``--mode continuous`` for the
``--column`` columns, ``mode = "continuous"`` in a spec column (``--mode`` with ``--spec`` is a
usage error); a continuous release prints a one-line warning with the summary.

Errors are reported as one line on stderr (``bndp: error: ...``). Exit status: 0 success;
2 usage error (command line, spec file, arguments); 3 data error (a cell, the input's format
or schema, such as a column not found); 4 the release would exceed the spec's budget; 1
other errors (I/O, such as an input file or an output directory that does not exist); 130
(SIGINT) or 143 (SIGTERM) when interrupted. ``BNDP_DEBUG=1`` shows tracebacks.
"""

from __future__ import annotations

import argparse
import csv
import math
import os
import shutil
import signal
import stat
import sys
import tempfile
import time
from importlib import resources
from typing import Any, Callable, Sequence

import numpy as np

from . import __version__
from ._columns import to_numpy
from ._random import default_rng
from ._release import charge_release, plan_release
from .budget import Budget
from .calibrate import bounded_laplace_scale, gaussian_sigma
from .exceptions import BudgetError
from .mechanisms import BoundedGaussian, BoundedLaplace
from .mechanisms.registry import SAMPLE_MECHANISMS, build_mechanism
from .reproduce import _add_cli  # `bndp reproduce`: the papers' tables (bndp.reproduce)

__all__ = ["main"]


EXIT_IO = 1
EXIT_USAGE = 2
EXIT_DATA = 3
EXIT_BUDGET = 4
_EXIT_CODES = ("Exit status: 0 success; 2 usage error (command line, spec file, arguments); "
               "3 data error (a cell, the input's format or schema, such as a column not "
               "found); 4 the release would exceed the spec's [budget] (nothing written); 1 "
               "other errors (I/O, such as a missing input file or output directory); 130/143 "
               "interrupted (SIGINT/SIGTERM; nothing written). Errors are one line on stderr.")


class CLIError(Exception):
    """A usage error (command line, spec file, arguments): one line on stderr, exit 2."""

    code = EXIT_USAGE


class DataError(CLIError):
    """An error in the input data (a cell, the file's format or schema): exit 3."""

    code = EXIT_DATA


class FileError(CLIError):
    """An I/O error (an input file or an output directory that does not exist): exit 1."""

    code = EXIT_IO


class _Terminated(BaseException):
    """Raised from the SIGTERM handler so that cleanup runs (exit status 143)."""


def _need(module: str, extra: str, what: str) -> Any:
    import importlib

    try:
        return importlib.import_module(module)
    except ImportError:
        raise CLIError(f"{what} needs {module.split('.')[0]}; install it with: "
                       f"pip install 'bndp[{extra}]'") from None


# ------------------------------------------------------------------------------------------
# progress bar
# ------------------------------------------------------------------------------------------
class _Progress:
    """A one-line progress bar on stderr by rows written, redrawn at most 5 times a second.

    ``total`` is the number of data rows (0 when unknown: no percentage is shown). Each
    redraw pads to the previous line's width, so no stale characters remain."""

    def __init__(self, total: float, unit: str, enabled: bool) -> None:
        self.total = float(total) if total else 0.0
        self.unit = unit
        self.enabled = enabled
        self.t0 = time.monotonic()
        self.last = 0.0
        self.drawn = False
        self.width = 0

    def update(self, done: float, rows: int, force: bool = False) -> None:
        if not self.enabled:
            return
        now = time.monotonic()
        if not force and now - self.last < 0.2:
            return
        self.last = now
        el = now - self.t0
        rate = rows / el if el > 0 else 0.0
        if self.total > 0:
            frac = min(1.0, rows / self.total)
            if not force:
                frac = min(frac, 0.999)  # 100 % only once the output is complete
            fill = int(frac * 30)
            bar = f"[{'#' * fill}{'.' * (30 - fill)}] {100 * frac:5.1f}% "
        else:
            bar = ""
        text = f"bndp: {bar}{rows:,} rows, {el:6.1f} s, {rate:,.0f} rows/s"
        pad = max(0, self.width - len(text))
        sys.stderr.write("\r" + text + " " * pad)
        sys.stderr.flush()
        self.width = len(text)
        self.drawn = True

    def close(self, done: float, rows: int) -> None:
        if self.enabled:
            if self.total <= 0 or rows >= self.total:
                self.total = float(rows)
            self.update(rows, rows, force=True)
            sys.stderr.write("\n")
            sys.stderr.flush()


def _progress_enabled(mode: str) -> bool:
    if mode == "always":
        return True
    if mode == "never":
        return False
    return sys.stderr.isatty()


def _count_lines(path: str) -> int:
    """Line breaks in a file (a fast count of the data rows of a CSV, plus the header)."""
    n = 0
    last = b"\n"
    with open(path, "rb") as f:
        while True:
            chunk = f.read(1 << 22)
            if not chunk:
                break
            n += chunk.count(b"\n")
            last = chunk[-1:]
    return n + (last != b"\n")


# ------------------------------------------------------------------------------------------
# privatize
# ------------------------------------------------------------------------------------------
_FORMATS = {".csv": "csv", ".tsv": "csv", ".txt": "csv", ".parquet": "parquet",
            ".pq": "parquet", ".parq": "parquet"}


def _guess_format(path: str) -> str | None:
    return _FORMATS.get(os.path.splitext(path)[1].lower())


class _Spec:
    """One released column of the CLI: its plan (bndp._release.ColumnPlan) and
    the counters of the summary."""

    __slots__ = ("plan", "rows", "missing", "clipped")

    def __init__(self, plan: Any) -> None:
        self.plan = plan
        self.rows = 0
        self.missing = 0
        self.clipped = 0

    @property
    def name(self) -> str:
        return self.plan.name

    @property
    def mech(self) -> Any:
        return self.plan.mech


def _load_spec_file(path: str) -> tuple[dict[str, Any], dict[str, Any] | None]:
    """Read a release spec (TOML or JSON): ``[columns.NAME]`` tables (or a ``"columns"``
    object) and an optional ``[budget]`` (``epsilon``, ``delta``)."""
    import json

    try:
        with open(path, "rb") as f:
            raw = f.read()
    except OSError as exc:
        raise CLIError(f"--spec {path}: cannot read: {exc.strerror or exc}") from None
    text = raw.decode("utf-8-sig", errors="replace")
    if path.lower().endswith(".json") or text.lstrip().startswith("{"):
        try:
            doc = json.loads(text)
        except ValueError as exc:
            raise CLIError(f"--spec {path}: not valid JSON: {exc}") from None
    else:
        if sys.version_info >= (3, 11):
            import tomllib
        else:  # pragma: no cover - Python 3.10
            tomllib = _need("tomli", "cli", "--spec in TOML on Python 3.10")
        try:
            doc = tomllib.loads(text)
        except tomllib.TOMLDecodeError as exc:
            raise CLIError(f"--spec {path}: not valid TOML: {exc}") from None
    if not isinstance(doc, dict):
        raise CLIError(f"--spec {path}: expected a table with [columns.NAME] entries")
    unknown = [k for k in doc if k not in ("columns", "budget")]
    if unknown:
        raise CLIError(f"--spec {path}: unknown top-level key {unknown[0]!r}; expected "
                       "'columns' and optionally 'budget'")
    cols = doc.get("columns")
    if not isinstance(cols, dict) or not cols:
        raise CLIError(f"--spec {path}: no columns; give one [columns.NAME] table per "
                       "released column")
    budget = doc.get("budget")
    if budget is not None:
        if not isinstance(budget, dict) or "epsilon" not in budget or \
                any(k not in ("epsilon", "delta") for k in budget):
            raise CLIError(f"--spec {path}: [budget] takes epsilon (required) and delta")
    return cols, budget


def _parse_specs(args: argparse.Namespace, label: str = "") -> tuple[list[_Spec], Any]:
    """The released columns (validated, calibrated and planned) and the budget (checked,
    not charged), from --spec or --column; usage errors name the column and key."""
    budget = None
    if args.spec is not None:
        if args.column:
            raise CLIError("give either --spec or --column, not both")
        if args.mode is not None:
            raise CLIError("--mode applies to --column; with --spec set each column's mode in "
                           "the spec file (mode = \"continuous\" in its [columns.NAME] table)")
        given = [f"--{opt}" for opt in _COLUMN_OPTIONS if getattr(args, opt) is not None]
        if given:
            raise CLIError(f"{', '.join(given)} appl{'ies' if len(given) == 1 else 'y'} to "
                           "--column; with --spec set each column's settings in the spec file")
        cols, bspec = _load_spec_file(args.spec)
        spec: dict[str, Any] = {}
        for name, entry in cols.items():
            if not isinstance(entry, dict):
                raise CLIError(f"--spec {args.spec}: column {name!r}: expected a table of "
                               "settings")
            e = dict(entry)
            e.setdefault("nulls", args.nulls)
            e.setdefault("on_outside", args.on_outside)
            if e.get("mechanism", "laplace") in ("laplace", "gaussian"):
                e.setdefault("workers", args.workers)
            spec[name] = e
        if bspec is not None:
            try:
                budget = Budget(bspec["epsilon"], bspec.get("delta", 0.0))
            except (TypeError, ValueError) as exc:
                raise CLIError(f"--spec {args.spec}: [budget]: {exc}") from None
        where = f"--spec {args.spec}: "
    else:
        if not args.column:
            raise CLIError("give the columns to release: --spec FILE, or --column "
                           "NAME[:LOWER:UPPER] with --epsilon and --sensitivity")
        for opt in ("epsilon", "sensitivity"):
            if getattr(args, opt) is None:
                raise CLIError(f"--column needs --{opt} (or give a --spec file)")
        spec = {}
        for raw in args.column:
            name, lo, hi = raw, args.lower, args.upper
            parts = raw.rsplit(":", 2)
            if len(parts) == 3:
                name = parts[0]
                try:
                    lo, hi = float(parts[1]), float(parts[2])
                except ValueError:
                    bad = next(x for x in parts[1:] if not _is_float(x))
                    raise CLIError(f"--column {raw}: {bad!r} is not a number (expected "
                                   "NAME:LOWER:UPPER; for a column name with ':' use --spec)"
                                   ) from None
            if lo is None or hi is None:
                raise CLIError(f"column {name!r} has no bounds: give --lower and --upper, or "
                               f"--column {name}:LOWER:UPPER")
            if name in spec:
                raise CLIError(f"column {name!r} is given twice")
            mechanism = args.mechanism or "laplace"
            e = {"mechanism": mechanism, "lower": float(lo), "upper": float(hi),
                 "epsilon": args.epsilon, "sensitivity": args.sensitivity,
                 "nulls": args.nulls, "on_outside": args.on_outside, "workers": args.workers,
                 "mode": args.mode or "exact"}
            if args.delta or mechanism != "gaussian":
                e["delta"] = args.delta or 0.0
            spec[name] = e
        where = ""
    try:
        # calibrates and plans every column and checks the budget, before reading anything
        plans = plan_release(spec, budget, label=label)
    except BudgetError:
        raise
    except (ValueError, TypeError) as exc:
        msg = " ".join(str(exc).split())
        if args.spec is None:
            msg = _column_flags(_mode_as_flag(msg))
        raise CLIError(where + msg) from None
    return [_Spec(p) for p in plans], budget


# the privatize options that set the --column columns' settings (refused with --spec)
_COLUMN_OPTIONS = ("mechanism", "epsilon", "sensitivity", "delta", "lower", "upper")


def _column_flags(msg: str) -> str:
    """A spec error about a --column column, in this command's words: ``spec column 'age',
    key 'epsilon'`` becomes ``--column 'age', --epsilon``."""
    import re

    def flag(m: "re.Match[str]") -> str:
        key = m.group(2)
        return f"--column {m.group(1)}" + ("" if key is None else
                                            ", --" + key.replace("_", "-"))

    return re.sub(r"spec column ('(?:[^'\\]|\\.)*'|\"[^\"]*\")(?:, key '(\w+)')?", flag, msg)


def _mode_as_flag(msg: str) -> str:
    """A mechanism's message with its ``mode=`` keyword written as this command's flag."""
    for mode in ("exact", "continuous"):
        msg = msg.replace(f"mode='{mode}'", f"--mode {mode}")
    return msg


def _continuous_warning(specs: list[_Spec]) -> str | None:
    """The one-line warning for the columns released in continuous mode (None if none):
    their raw doubles are attackable when published (docs/threat_model.md)."""
    names = [s.name for s in specs if getattr(s.mech, "mode", "exact") == "continuous"]
    if not names:
        return None
    cols = ", ".join(repr(n) for n in names)
    return (f"bndp: warning: column{'s' if len(names) > 1 else ''} {cols} released in mode "
            "continuous: raw doubles, attackable when published (see docs/threat_model.md; "
            "the default mode exact is not)")


def _is_float(text: str) -> bool:
    try:
        float(text)
    except ValueError:
        return False
    return True


def _mechanism_label(plan: Any) -> str:
    mech = plan.mech
    if plan.mechanism == "laplace" and mech is not None:
        return (f"bounded Laplace scale b = {mech.scale:.6g} (unbounded Laplace: "
                f"{mech.sensitivity / mech.epsilon:.6g})")
    return plan.describe()


def _cell_error(path: str, row: int, column: str, what: str) -> CLIError:
    return DataError(f"{path}: row {row:,} (data rows counted from 1 after the header), "
                     f"column {column!r}: {what}")


def _num(x: Any) -> str:
    """A number as Python writes a float (``9.0``), never as a NumPy scalar's repr."""
    return repr(float(x))


def _fmt_bound(b: Any) -> str:
    return repr(b) if isinstance(b, str) else f"{b:g}"


def _release_block(spec: _Spec, vals: np.ndarray, missing: np.ndarray | None, row0: int,
                   path: str, args: argparse.Namespace, gen: np.random.Generator,
                   cells: Callable[[int], str] | None = None,
                   lo: np.ndarray | None = None, hi: np.ndarray | None = None) -> np.ndarray:
    """Check a block of one column and release it. ``row0`` is the 1-based row of vals[0];
    ``lo``/``hi``: the block's per-row bounds (when the spec names bound columns)."""
    plan = spec.plan
    if missing is not None and missing.any():
        if plan.nulls == "raise":
            i = int(np.flatnonzero(missing)[0])
            raise _cell_error(path, row0 + i, spec.name,
                              "missing value (empty cell or null); pass --nulls keep to leave "
                              "missing values untouched")
        spec.missing += int(missing.sum())
    keep = None if missing is None else ~missing
    present = vals if keep is None else vals[keep]

    def row_of(j: int) -> int:
        return int(np.flatnonzero(keep)[j]) if keep is not None else j

    bad = ~np.isfinite(present)
    if bad.any():
        idx = row_of(int(np.flatnonzero(bad)[0]))
        shown = cells(int(idx)) if cells is not None else repr(float(vals[idx]))
        raise _cell_error(path, row0 + int(idx), spec.name, f"{shown} is not a finite number")
    lo_p: Any = plan.lower if lo is None else (lo if keep is None else lo[keep])
    hi_p: Any = plan.upper if hi is None else (hi if keep is None else hi[keep])
    if lo is not None or hi is not None:
        lo_a = np.broadcast_to(np.asarray(lo_p, dtype=np.float64), present.shape)
        hi_a = np.broadcast_to(np.asarray(hi_p, dtype=np.float64), present.shape)
        for b, arr in ((plan.lower, lo_a), (plan.upper, hi_a)):
            nb = ~np.isfinite(arr)
            if nb.any() and isinstance(b, str):
                raise _cell_error(path, row0 + row_of(int(np.flatnonzero(nb)[0])), b,
                                  f"per-row bound of column {spec.name!r} is not a finite "
                                  "number")
        order = ~(lo_a < hi_a)
        if order.any():
            j = int(np.flatnonzero(order)[0])
            raise _cell_error(path, row0 + row_of(j), spec.name,
                              f"per-row bounds need lower < upper; got "
                              f"[{_num(lo_a[j])}, {_num(hi_a[j])}]")
        if present.size:
            w = hi_a - lo_a
            try:  # the scale is monotone in the width: the block's extreme widths decide
                bounded_laplace_scale(plan.epsilon, plan.sensitivity, 0.0,
                                      np.array([w.min(), w.max()]), plan.delta)
            except (ValueError, OverflowError) as exc:
                raise DataError(f"{path}: rows {row0:,}-{row0 + vals.size - 1:,}, column "
                                f"{spec.name!r}: {exc}") from None
    lo_c = -np.inf if lo_p is None else lo_p
    hi_c = np.inf if hi_p is None else hi_p
    outside = (present < lo_c) | (present > hi_c)
    if outside.any():
        if plan.on_outside == "raise":
            j = int(np.flatnonzero(outside)[0])
            idx = row_of(j)
            if lo is None and hi is None:
                where = f"[{_fmt_bound(lo_c)}, {_fmt_bound(hi_c)}]"
            else:
                where = f"its per-row bounds [{_num(lo_a[j])}, {_num(hi_a[j])}]"
            raise _cell_error(path, row0 + idx, spec.name,
                              f"{float(vals[idx])!r} lies outside {where} (--on-outside raise)")
        spec.clipped += int(outside.sum())
    try:
        noisy = plan.draw(present, gen, None if lo is None else lo_a, None if hi is None else hi_a)
    except ValueError as exc:
        raise DataError(f"{path}: column {spec.name!r}: {exc}") from None
    spec.rows += present.size
    if missing is None:
        return np.asarray(noisy, dtype=np.float64)
    out = np.full(vals.shape, np.nan)
    out[~missing] = noisy
    return out


def _arrow_f64(pa: Any, values: np.ndarray, missing: np.ndarray | None) -> Any:
    """A NumPy float64 (or uint8) array as an Arrow array, nulls where ``missing``, built from
    buffers (``pa.array`` on NumPy input loads pandas when it is installed, which alone
    costs more memory than a chunk)."""
    values = np.ascontiguousarray(values)
    typ = pa.float64() if values.dtype == np.float64 else pa.uint8()
    validity = None
    nulls = 0
    if missing is not None and missing.any():
        validity = pa.py_buffer(np.packbits(~missing, bitorder="little"))
        nulls = int(missing.sum())
    return pa.Array.from_buffers(typ, len(values), [validity, pa.py_buffer(values)],
                                 null_count=nulls)


def _cell_text(arr: Any) -> Callable[[int], str]:
    def show(i: int) -> str:
        return repr(arr[i].as_py())

    return show


def _first_unparsable(arr: Any, pc: Any, pa: Any) -> int:
    """Index of the first cell of a string array that does not parse as a float (bisection
    on slices: O(log n) casts, only on the error path)."""
    lo, hi = 0, len(arr)
    while hi - lo > 1:
        mid = (lo + hi) // 2
        try:
            pc.cast(arr.slice(lo, mid - lo), pa.float64())
        except (pa.ArrowInvalid, ValueError):
            hi = mid
        else:
            lo = mid
    return lo


def _read_header(path: str, delimiter: str, shown: str | None = None
                 ) -> tuple[list[str], int, bool]:
    """The header, an upper bound of its length in bytes, and whether the file has no
    line after it (a header-only file, with or without a final newline)."""
    shown = shown or path
    with open(path, "r", newline="", encoding="utf-8-sig") as f:
        reader = csv.reader(f, delimiter=delimiter)
        try:
            header = next(reader, None)
            only_header = header is not None and next(reader, None) is None
        except (csv.Error, UnicodeDecodeError) as exc:
            raise DataError(f"{shown}: cannot read the CSV header: {exc}") from None
    if not header:
        raise DataError(f"{shown}: empty file (no header line)")
    dup = sorted({h for h in header if header.count(h) > 1})
    if dup:
        raise DataError(f"{shown}: duplicate column name(s) in the header: {', '.join(dup)}")
    return header, 2 * len(_csv_header(header, delimiter)) + 64, only_header


def _csv_header(header: list[str], delimiter: str) -> bytes:
    import io

    buf = io.StringIO()
    csv.writer(buf, delimiter=delimiter, lineterminator="\n").writerow(header)
    return buf.getvalue().encode("utf-8")


def _csv_lines(cols: list[Any], delimiter: str, pa: Any, pc: Any) -> bytes | memoryview:
    """Rows of string columns as CSV bytes, quoting only the cells that need it (those with
    the delimiter, a quote or a line break), as the csv module's QUOTE_MINIMAL does."""
    special = "[" + "".join("\\" + c if c in "\\^]-[" else c
                            for c in (delimiter, '"')) + "\r\n]"
    quoted = []
    for c in cols:
        need = pc.match_substring_regex(c, special)
        if pc.any(need).as_py():
            esc = pc.binary_join_element_wise('"', pc.replace_substring(c, '"', '""'), '"', "")
            c = pc.if_else(need, esc, c)
        quoted.append(c)
    lines = pc.binary_join_element_wise(*quoted, delimiter)
    lines = pc.binary_join_element_wise(lines, "", "\n")
    if len(lines) == 0:
        return b""
    width = np.int64 if lines.type == pa.large_string() else np.int32
    offsets = np.frombuffer(lines.buffers()[1], dtype=width)
    a, b = int(offsets[lines.offset]), int(offsets[lines.offset + len(lines)])
    return memoryview(lines.buffers()[2])[a:b]


def _parse_numbers(text: Any, name: str, row0: int, path: str, pa: Any, pc: Any,
                   allow_empty: bool, nulls: str) -> tuple[np.ndarray, np.ndarray]:
    """A block of CSV cells (strings) as float64 and the mask of empty cells."""
    trimmed = pc.utf8_trim_whitespace(text)
    empty = np.asarray(pc.equal(trimmed, ""))
    filled = (pc.if_else(_arrow_f64(pa, empty.view(np.uint8), None).cast(pa.bool_()),
                         "0", trimmed) if empty.any() else trimmed)
    try:
        nums = pc.cast(filled, pa.float64())
    except (pa.ArrowInvalid, ValueError):
        i = _first_unparsable(filled, pc, pa)
        if (not allow_empty or nulls == "raise") and empty[:i].any():
            i = int(np.flatnonzero(empty)[0])
            raise _cell_error(path, row0 + i, name, "missing value (empty cell); pass --nulls "
                              "keep to leave missing values untouched") from None
        raise _cell_error(path, row0 + i, name, f"{text[i].as_py()!r} is not a number") from None
    vals = np.asarray(nums.to_numpy(zero_copy_only=False), dtype=np.float64)
    if not allow_empty and empty.any():
        i = int(np.flatnonzero(empty)[0])
        raise _cell_error(path, row0 + i, name, "empty cell in a column of per-row bounds")
    return vals, empty


def _privatize_csv(args: argparse.Namespace, specs: list[_Spec], tmp: str,
                   gen: np.random.Generator, progress: _Progress, path: str,
                   shown: str) -> int:
    pa = _need("pyarrow", "arrow", "bndp privatize")
    pc = _need("pyarrow.compute", "arrow", "bndp privatize")
    pcsv = _need("pyarrow.csv", "arrow", "bndp privatize")
    header, header_bytes, only_header = _read_header(path, args.delimiter, shown)
    for s in specs:
        for c in [s.name] + s.plan.bound_columns():
            if c not in header:
                raise DataError(f"{shown}: column {c!r} not found; columns are: "
                                f"{', '.join(header)}")
    if progress.enabled:
        progress.total = float(max(0, _count_lines(path) - 1))
    # the first block must hold the header line: a smaller block cannot be parsed
    block = max(args.block_size, header_bytes + 1)
    ropts = pcsv.ReadOptions(block_size=block, use_threads=True)
    # a blank line in a one-column CSV is a row with an empty (missing) cell
    popts = pcsv.ParseOptions(delimiter=args.delimiter, ignore_empty_lines=len(header) > 1)
    copts = pcsv.ConvertOptions(column_types={h: pa.string() for h in header},
                                strings_can_be_null=False, quoted_strings_can_be_null=False)
    rows = 0
    with open(path, "rb") as raw, open(tmp, "wb") as out_f:
        out_f.write(_csv_header(header, args.delimiter))
        if not only_header:
            try:
                reader = pcsv.open_csv(raw, read_options=ropts, parse_options=popts,
                                       convert_options=copts)
            except pa.ArrowInvalid as exc:
                raise DataError(f"{shown}: cannot parse as CSV: {_arrow_msg(exc, block)}") from None
            while True:
                try:
                    batch = reader.read_next_batch()
                except StopIteration:
                    break
                except pa.ArrowInvalid as exc:
                    raise DataError(f"{shown}: malformed CSV after data row {rows:,}: "
                                    f"{_arrow_msg(exc, block)}") from None
                cols = list(batch.columns)
                for s in specs:
                    k = header.index(s.name)
                    text = cols[k]
                    vals, empty = _parse_numbers(text, s.name, rows + 1, shown, pa, pc, True,
                                                 s.plan.nulls)
                    bnd = {}
                    for key in ("lower", "upper"):
                        b = getattr(s.plan, key)
                        if isinstance(b, str):
                            bnd[key], _ = _parse_numbers(cols[header.index(b)], b, rows + 1,
                                                         shown, pa, pc, False, "raise")
                    noisy = _release_block(s, vals, empty if empty.any() else None, rows + 1,
                                           shown, args, gen, cells=_cell_text(text),
                                           lo=bnd.get("lower"), hi=bnd.get("upper"))
                    released = pc.cast(_arrow_f64(pa, noisy, empty if empty.any() else None),
                                       pa.string())
                    cols[k] = pc.fill_null(released, "")
                out_f.write(_csv_lines(cols, args.delimiter, pa, pc))
                rows += batch.num_rows
                progress.update(rows, rows)
        out_f.flush()
        os.fsync(out_f.fileno())
    progress.close(rows, rows)
    return rows


def _arrow_msg(exc: BaseException, block: int) -> str:
    msg = " ".join(str(exc).split())
    if "straddl" in msg:
        return (f"a row is longer than the block of {block:,} bytes parsed at a time; pass a "
                "larger --block-size")
    return msg


def _privatize_parquet(args: argparse.Namespace, specs: list[_Spec], tmp: str,
                       gen: np.random.Generator, progress: _Progress, path: str,
                       shown: str) -> int:
    pa = _need("pyarrow", "arrow", "bndp privatize")
    pq = _need("pyarrow.parquet", "arrow", "bndp privatize")
    try:
        pf = pq.ParquetFile(path)
    except (pa.ArrowInvalid, OSError) as exc:
        raise DataError(f"{shown}: cannot read as Parquet: {exc}") from None
    schema = pf.schema_arrow
    names = schema.names
    for s in specs:
        for c in [s.name] + s.plan.bound_columns():
            if c not in names:
                raise DataError(f"{shown}: column {c!r} not found; columns are: "
                                f"{', '.join(names)}")
    bound_cols = {c for s in specs for c in s.plan.bound_columns()}
    fields = []
    for f in schema:
        sp = next((x for x in specs if x.name == f.name), None)
        t = f.type
        numeric = pa.types.is_integer(t) or pa.types.is_floating(t) or pa.types.is_decimal(t)
        if (sp is not None or f.name in bound_cols) and not numeric:
            raise DataError(f"{shown}: column {f.name!r} must be numeric; got {t}")
        if sp is not None:
            f = pa.field(f.name, pa.float64(), nullable=f.nullable, metadata=f.metadata)
        fields.append(f)
    out_schema = pa.schema(fields, metadata=schema.metadata)
    total = pf.metadata.num_rows
    progress.total = float(total)
    rows = 0
    with pq.ParquetWriter(tmp, out_schema, compression=args.compression) as writer:
        for batch in pf.iter_batches(batch_size=args.batch_rows):
            cols = list(batch.columns)
            for s in specs:
                k = names.index(s.name)
                col = to_numpy(cols[k], s.name)
                bnd = {}
                for key in ("lower", "upper"):
                    b = getattr(s.plan, key)
                    if isinstance(b, str):
                        bc = to_numpy(cols[names.index(b)], b)
                        if bc.missing is not None:
                            i = int(np.flatnonzero(bc.missing)[0])
                            raise _cell_error(shown, rows + 1 + i, b, "missing value in a "
                                              "column of per-row bounds")
                        bnd[key] = bc.values
                noisy = _release_block(s, col.values, col.missing, rows + 1, shown, args, gen,
                                       lo=bnd.get("lower"), hi=bnd.get("upper"))
                null = col.missing if col.missing is not None and col.missing.any() else None
                cols[k] = _arrow_f64(pa, noisy, null)
            writer.write_batch(pa.RecordBatch.from_arrays(cols, schema=out_schema))
            rows += batch.num_rows
            progress.update(rows, rows)
    progress.close(rows, rows)
    return rows


def _normal_mode(path: str) -> None:
    """Give a temporary file (created 0600) the mode a newly created file would have."""
    if os.name == "posix":
        mask = os.umask(0)
        os.umask(mask)
        os.chmod(path, 0o666 & ~mask)


def _on_sigterm(signum: int, frame: Any) -> None:
    raise _Terminated()


def _output_kind(dst: str) -> tuple[str, str | None]:
    """How to write ``dst``: ``("file", path)`` (a temporary file renamed onto ``path``; a
    symbolic link is followed, so the link stays and its target gets the data) or
    ``("stream", path)`` (``-``, a FIFO, a character device such as /dev/stdout: written
    into at the end, never replaced)."""
    if dst == "-":
        return "stream", None
    special = ("/dev/", "/proc/")
    if os.path.abspath(dst).startswith(special) or os.path.realpath(dst).startswith(special):
        return "stream", dst  # /dev/stdout, /dev/fd/N, /proc/self/fd/N: the process's files
    if os.path.lexists(dst):
        try:
            st = os.stat(dst)  # follows links
        except OSError:
            st = None  # a dangling link: create its target
        if st is not None and stat.S_ISDIR(st.st_mode):
            raise CLIError(f"{dst}: is a directory; give the output file name")
        if st is not None and not stat.S_ISREG(st.st_mode):
            return "stream", dst
        return "file", os.path.realpath(dst)
    return "file", dst


def _spool_input(src: str) -> str:
    """Copy stdin (``-``) or a non-regular input (a pipe) to a temporary file."""
    fd, tmp = tempfile.mkstemp(prefix=".bndp-input.", suffix=".bndp-partial")
    try:
        with os.fdopen(fd, "wb") as out:
            if src == "-":
                shutil.copyfileobj(sys.stdin.buffer, out, 1 << 20)
            else:
                with open(src, "rb") as f:
                    shutil.copyfileobj(f, out, 1 << 20)
    except BaseException:
        os.unlink(tmp)
        raise
    return tmp


def _cmd_privatize(args: argparse.Namespace) -> int:
    src, dst = args.input, args.output
    shown_src = "<stdin>" if src == "-" else src
    shown_dst = "<stdout>" if dst == "-" else dst
    spooled = src == "-" or (os.path.exists(src) and not os.path.isfile(src))
    if not spooled and not os.path.isfile(src):
        raise FileError(f"{src}: no such file")
    kind, final = _output_kind(dst)
    if kind == "file":
        assert final is not None
        if not spooled and (os.path.abspath(src) == os.path.abspath(final) or (
                os.path.exists(final) and os.path.samefile(src, final))):
            raise CLIError(f"refusing to write over the input file {src}; choose another output")
        out_dir = os.path.dirname(os.path.abspath(final))
        if not os.path.isdir(out_dir):
            raise FileError(f"{dst}: directory {out_dir} does not exist")
    else:
        out_dir = None
    fmt = args.format if args.format != "auto" else (
        "csv" if src == "-" else _guess_format(src))
    if fmt is None:
        raise CLIError(f"{src}: cannot tell the format from the file name; pass --format csv "
                       "or --format parquet")
    out_fmt = _guess_format(dst) if dst != "-" else None
    if out_fmt is not None and out_fmt != fmt:
        raise CLIError(f"the output is written as {fmt} (like the input) but {dst} names "
                       f"a {out_fmt} file")
    label = "bndp privatize " + shown_src
    # validates, calibrates and plans; the budget is checked now, charged once every row
    # is drawn (before the output is put in place)
    specs, budget = _parse_specs(args, label)
    gen = default_rng(args.seed)
    progress = _Progress(0, "rows", _progress_enabled(args.progress) and not args.quiet)
    fd, tmp = tempfile.mkstemp(prefix=f".{os.path.basename(final or 'stdout')}.",
                               suffix=".bndp-partial", dir=out_dir)
    os.close(fd)
    in_path = None
    old = signal.signal(signal.SIGTERM, _on_sigterm) if _main_thread() else None
    try:
        in_path = _spool_input(src) if spooled else src
        if os.path.getsize(in_path) == 0:
            raise DataError(f"{shown_src}: empty file")
        if fmt == "csv":
            rows = _privatize_csv(args, specs, tmp, gen, progress, in_path, shown_src)
        else:
            rows = _privatize_parquet(args, specs, tmp, gen, progress, in_path, shown_src)
        charge_release(budget, [s.plan for s in specs], label)
        if kind == "file":
            _normal_mode(tmp)
            os.replace(tmp, final)  # type: ignore[arg-type]
        else:  # a stream: written into, never replaced
            with open(tmp, "rb") as f:
                if final is None:
                    sys.stdout.flush()
                    shutil.copyfileobj(f, sys.stdout.buffer, 1 << 20)
                    sys.stdout.buffer.flush()
                else:
                    with open(final, "wb") as out:
                        shutil.copyfileobj(f, out, 1 << 20)
            os.unlink(tmp)
    except BaseException:
        if progress.drawn:
            sys.stderr.write("\n")
        try:
            os.unlink(tmp)
        except OSError:
            pass
        raise
    finally:
        if spooled and in_path is not None:
            try:
                os.unlink(in_path)
            except OSError:
                pass
        if old is not None:
            signal.signal(signal.SIGTERM, old)
    if args.quiet:
        return 0

    def say(text: str) -> None:
        print(text, file=sys.stderr)

    warning = _continuous_warning(specs)
    if warning is not None:
        say(warning)
    for s in specs:
        p = s.plan
        extra = []
        if s.missing:
            extra.append(f"{s.missing:,} missing kept")
        if s.clipped:
            extra.append(f"{s.clipped:,} clipped into the domain")
        more = f"; {', '.join(extra)}" if extra else ""
        lo = -math.inf if p.lower is None else p.lower
        hi = math.inf if p.upper is None else p.upper
        where = (f"in per-row bounds [{_fmt_bound(lo)}, {_fmt_bound(hi)}]" if p.per_row
                 else f"in [{_fmt_bound(lo)}, {_fmt_bound(hi)}]")
        eps, delta = p.cost()
        dtxt = f", delta = {delta:g}" if delta else ""
        say(f"bndp: {s.name}: {s.rows:,} values released {where} with epsilon = {eps:g}{dtxt}, "
            f"sensitivity = {p.sensitivity:g}: {_mechanism_label(p)}{more}")
    if len(specs) > 1:
        costs = [s.plan.cost() for s in specs]
        te, td = sum(c[0] for c in costs), sum(c[1] for c in costs)
        say(f"bndp: {len(specs)} columns released: by sequential composition a record's total "
            f"privacy loss adds up over its columns (up to epsilon = {te:g}"
            + (f", delta = {td:g})" if td else ")"))
    if budget is not None:
        sp, rem = budget.spent, budget.remaining
        say(f"bndp: budget epsilon = {budget.epsilon:g}, delta = {budget.delta:g}: spent "
            f"epsilon = {sp.epsilon:g}, delta = {sp.delta:g}; remaining epsilon = "
            f"{rem.epsilon:g}, delta = {rem.delta:g}")
    if rows == 0:
        say(f"bndp: {shown_src} has a header but no data rows; wrote an empty {fmt} file")
    say(f"bndp: wrote {rows:,} rows to {shown_dst}")
    if args.verbose:
        say(f"bndp: format {fmt}; randomness: "
            + ("seeded (--seed: for tests only)" if args.seed is not None
               else "fresh OS entropy (cryptographically secure stream)"))
    return 0


def _main_thread() -> bool:
    import threading

    return threading.current_thread() is threading.main_thread()


# ------------------------------------------------------------------------------------------
# calibrate and plot
# ------------------------------------------------------------------------------------------
def _mech_from_args(args: argparse.Namespace) -> Any:
    try:
        return build_mechanism(args.mechanism, args.epsilon, args.sensitivity, args.lower,
                               args.upper, args.delta, mode=args.mode)
    except ValueError as exc:
        raise CLIError(_mode_as_flag(" ".join(str(exc).split()))) from None


def _unbounded(args: argparse.Namespace) -> tuple[str, float, float]:
    """(description, scale, variance) of the unbounded mechanism being compared."""
    if args.mechanism == "laplace":
        b = args.sensitivity / (args.epsilon - math.log1p(-args.delta))
        desc = ("Laplace b = sensitivity/(epsilon - ln(1 - delta))" if args.delta
                else "Laplace b = sensitivity/epsilon")
        return desc, b, 2 * b * b
    rd = args.reference_delta
    if not 0.0 < rd < 1.0:
        raise CLIError(f"--reference-delta must be in (0, 1); got {rd!r}")
    try:  # the classical Gaussian mechanism (Definition 1.4 of [CH24], Eq. (2) of [ZWB19])
        s = float(gaussian_sigma(args.epsilon, rd, args.sensitivity, method="dwork2014",
                                 allow_unproven=True))
    except ValueError:  # above its failure threshold it is not DP: the exact calibration
        s = float(gaussian_sigma(args.epsilon, rd, args.sensitivity, method="optimal"))
        return (f"Gaussian sigma = optimal (Balle-Wang) at delta = {rd:g}; the classical "
                "sqrt(2 ln(1.25/delta)) rule is not DP here", s, s * s)
    note = "" if args.epsilon < 1 else ", stated for epsilon < 1"
    return f"Gaussian sigma = sensitivity*sqrt(2 ln(1.25/delta))/epsilon at delta = {rd:g}{note}", s, s * s


def _values(args: argparse.Namespace) -> list[float]:
    if args.value:
        return list(args.value)
    lo, hi = args.lower, args.upper
    if math.isinf(hi - lo) and math.isfinite(lo) != math.isfinite(hi):
        # a half-line: its finite end and 1 and 10 sensitivities inside
        end, step = (lo, args.sensitivity) if math.isfinite(lo) else (hi, -args.sensitivity)
        return [end, end + step, end + 10 * step]
    return [lo, lo + 0.1 * (hi - lo), 0.5 * (lo + hi)]


def _cmd_calibrate(args: argparse.Namespace) -> int:
    # everything is computed before the first line is printed: an error prints no table
    mech = _mech_from_args(args)
    desc, ub_scale, ub_var = _unbounded(args)
    name = "bounded Laplace" if args.mechanism == "laplace" else "bounded Gaussian"
    sym = "b" if args.mechanism == "laplace" else "sigma"
    table = [(q, mech.variance(q), mech.bias(q)) for q in _values(args)]
    lines = [f"{name}: epsilon = {args.epsilon:g}, delta = {args.delta:g}, sensitivity = "
             f"{args.sensitivity:g}, domain [{args.lower:g}, {args.upper:g}]",
             f"calibrated {sym} = {mech.scale:.10g}   ("
             + ("grid law, --mode exact: what bndp privatize releases by default)"
                if args.mode == "exact" else "continuous law, --mode continuous: raw doubles, "
                "attackable when published)"),
             f"unbounded  {sym} = {ub_scale:.10g}   ({desc})",
             f"{'true value':>14}{'variance (bounded)':>22}{'variance (unbounded)':>24}"
             f"{'bias (bounded)':>18}"]
    lines += [f"{q:14.6g}{v:22.6g}{ub_var:24.6g}{b:18.6g}" for q, v, b in table]
    print("\n".join(lines))
    return 0


def _cmd_plot(args: argparse.Namespace) -> int:
    matplotlib = _need("matplotlib", "plot", "bndp plot")
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    from scipy import stats

    if not args.output.lower().endswith((".png", ".svg", ".pdf")):
        raise CLIError(f"{args.output}: the plot is written as .png, .svg or .pdf")
    if not (math.isfinite(args.lower) and math.isfinite(args.upper)):
        raise CLIError(f"bndp plot draws the density over [--lower, --upper]: both must be "
                       f"finite; got [{args.lower!r}, {args.upper!r}] (bndp calibrate takes "
                       "a half-line)")
    out_dir = os.path.dirname(os.path.abspath(args.output))
    if not os.path.isdir(out_dir):
        raise FileError(f"{args.output}: directory {out_dir} does not exist")
    # the densities drawn are those of the continuous law; the default release is its
    # floating-point-safe discretisation on a fine power-of-two grid
    mech = build_mechanism(args.mechanism, args.epsilon, args.sensitivity, args.lower,
                           args.upper, args.delta, mode="continuous")
    desc, ub_scale, _ = _unbounded(args)
    lo, hi = args.lower, args.upper
    vals = _values(args)
    x = np.linspace(lo, hi, 801)
    unb = stats.laplace if args.mechanism == "laplace" else stats.norm
    fig, axes = plt.subplots(1, 2, figsize=(args.width, args.height), sharey=False,
                             constrained_layout=True)
    name = "bounded Laplace" if args.mechanism == "laplace" else "bounded Gaussian"
    colors = plt.rcParams["axes.prop_cycle"].by_key()["color"]
    top = 0.0
    ax2 = axes[1].twinx()
    ax2.set_ylim(0, 1.05)
    ax2.set_ylabel("probability piled on a bound (stems)")
    for i, q in enumerate(vals):
        c = colors[i % len(colors)]
        d = mech.pdf(x, q)
        axes[0].plot(x, d, color=c, label=f"true value {q:g}")
        top = max(top, float(np.max(d)))
        dens = unb.pdf(x, loc=q, scale=ub_scale)
        axes[1].plot(x[1:-1], dens[1:-1], color=c, label=f"true value {q:g}")
        for end, mass in ((lo, unb.cdf(lo, loc=q, scale=ub_scale)),
                          (hi, unb.sf(hi, loc=q, scale=ub_scale))):
            if mass > 1e-4:  # point mass of the clamped law at a bound: a stem on ax2
                xs = end + (0.006 * (i - 1)) * (hi - lo)
                ax2.vlines(xs, 0, mass, color=c, lw=2.5)
                ax2.plot([xs], [mass], "o", color=c, ms=6)
    axes[0].set_title(f"{name}: {'b' if args.mechanism == 'laplace' else 'sigma'} = {mech.scale:.3g}")
    axes[1].set_title(f"unbounded, clamped to the domain: scale {ub_scale:.3g}")
    for ax in axes:
        ax.set_xlabel("released value")
        ax.set_xlim(lo - 0.02 * (hi - lo), hi + 0.02 * (hi - lo))
        ax.axvline(lo, color="0.6", lw=0.8, ls=":")
        ax.axvline(hi, color="0.6", lw=0.8, ls=":")
        ax.legend(fontsize="small")
    axes[0].set_ylabel("density")
    fig.suptitle(f"epsilon = {args.epsilon:g}, sensitivity = {args.sensitivity:g}, "
                 f"domain [{lo:g}, {hi:g}]")
    fd, tmp = tempfile.mkstemp(prefix=".bndp-plot.", suffix=os.path.splitext(args.output)[1],
                               dir=out_dir)
    os.close(fd)
    try:
        fig.savefig(tmp, dpi=args.dpi)
        _normal_mode(tmp)
        os.replace(tmp, args.output)
    except BaseException:
        try:
            os.unlink(tmp)
        except OSError:
            pass
        raise
    finally:
        plt.close(fig)
    print(f"bndp: wrote {args.output}")
    return 0


def _load_example() -> dict[str, np.ndarray]:
    import io

    text = resources.files("bndp").joinpath("data/people.csv").read_text(encoding="utf-8")
    rows = list(csv.DictReader(io.StringIO(text, newline="")))
    return {k: np.array([float(r[k]) for r in rows]) for k in rows[0]}


def _cmd_demo(args: argparse.Namespace) -> int:
    data = _load_example()
    ages = data["age"]
    lo, hi = 0.0, 120.0
    rng = default_rng(args.seed)
    eps, dq = args.epsilon, args.sensitivity
    # calibrate and sample first: an invalid epsilon fails before any line is printed
    mechs = (("bounded Laplace", BoundedLaplace(eps, dq, lo, hi), dq / eps),
             ("bounded Gaussian", BoundedGaussian(eps, dq, lo, hi), None))
    rows = []
    for name, mech, unbounded in mechs:
        noisy = mech.sample(ages, rng=rng)
        ub = f"{unbounded:12.4f}" if unbounded is not None else f"{'-':>12}"
        rows.append(f"{name:<18}{mech.scale:12.4f}{ub}{noisy.min():9.2f}{noisy.max():9.2f}"
                    f"{noisy.mean():9.2f}{np.abs(noisy - ages).mean():9.2f}")
    print(f"bndp demo: {ages.size} ages in [{lo:g}, {hi:g}], epsilon = {eps:g}, "
          f"sensitivity = {dq:g} (per value)")
    print(f"{'mechanism':<18}{'scale':>12}{'unbounded':>12}{'min':>9}{'max':>9}"
          f"{'mean':>9}{'MAE':>9}")
    print("\n".join(rows))
    print(f"true mean age {ages.mean():.2f}; every released value lies in [{lo:g}, {hi:g}]")
    return 0


def _add_privacy_args(p: argparse.ArgumentParser, bounds_required: bool,
                      mode: str | None = None) -> None:
    """The mechanism options; ``mode``: add ``--mode`` ("privatize": the release law of the
    --column columns; "calibrate": the law whose scale is reported; None: no --mode)."""
    g = p.add_argument_group("mechanism")
    # privatize: None when not given, so that --spec can refuse them
    g.add_argument("--mechanism", choices=SAMPLE_MECHANISMS,
                   default="laplace" if bounds_required else None,
                   help="bounded Laplace ((epsilon, delta)-DP; pure for delta = 0) or bounded "
                        "Gaussian (pure epsilon-DP) (default: laplace)")
    g.add_argument("--epsilon", type=float, required=bounds_required,
                   help="privacy budget epsilon > 0" + ("" if bounds_required else
                                                        " (with --column)"))
    g.add_argument("--sensitivity", type=float, required=bounds_required,
                   help="sensitivity of each value: the most one person can change it"
                        + ("" if bounds_required else " (with --column)"))
    g.add_argument("--delta", type=float, default=0.0 if bounds_required else None,
                   help="delta in [0, 1) for the Laplace mechanism (default 0; must be 0 for "
                        "gaussian)")
    g.add_argument("--lower", type=float, required=bounds_required, default=None,
                   help="lower end of the valid range" + ("" if bounds_required else
                                                          " (default for every --column)"))
    g.add_argument("--upper", type=float, required=bounds_required, default=None,
                   help="upper end of the valid range" + ("" if bounds_required else
                                                          " (default for every --column)"))
    if mode == "privatize":
        g.add_argument("--mode", choices=("exact", "continuous"), default=None,
                       help="release law of the --column columns: exact (default), the "
                            "certified law on a power-of-two grid, whose raw doubles are safe "
                            "to publish; continuous, the continuous law in raw doubles, which "
                            "are attackable when published (explicit opt-in for outputs that "
                            "are post-processed before anyone sees them; see "
                            "docs/threat_model.md). With --spec, set mode in each column's "
                            "table instead")
    elif mode == "calibrate":
        g.add_argument("--mode", choices=("exact", "continuous"), default="exact",
                       help="law whose scale, variance and bias are reported: exact (default; "
                            "the grid law bndp privatize releases by default) or continuous "
                            "(the law of bndp privatize --mode continuous)")


def _positive_int(text: str) -> int:
    try:
        v = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a positive integer; got {text!r}") from None
    if v < 1:
        raise argparse.ArgumentTypeError(f"expected a positive integer; got {v}")
    return v


def _workers(text: str) -> int:
    try:
        v = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a positive integer or -1; got {text!r}") from None
    if v < 1 and v != -1:
        raise argparse.ArgumentTypeError(f"expected a positive integer or -1; got {v}")
    return v


def _delimiter(text: str) -> str:
    t = "\t" if text in ("\\t", "tab") else text
    if len(t) != 1:
        raise argparse.ArgumentTypeError(f"the delimiter must be one character; got {text!r}")
    return t


def _parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        prog="bndp",
        description="Differentially private noise for bounded values.",
        epilog="Run 'bndp COMMAND --help' for a command's options. " + _EXIT_CODES,
    )
    p.add_argument("--version", action="version", version=f"bndp {__version__}")
    sub = p.add_subparsers(dest="command", metavar="COMMAND")

    pr = sub.add_parser(
        "privatize", help="release numeric columns of a CSV or Parquet file",
        description="Release one or more numeric columns of a CSV or Parquet file with a "
                    "bounded mechanism, streaming the file in chunks (memory does not grow "
                    "with the file). Other columns are copied unchanged (CSV cells keep their "
                    "text; Parquet keeps its schema, the released columns becoming float64). "
                    "The columns and their settings come from a release spec (--spec, TOML "
                    "or JSON: one [columns.NAME] table per column with mechanism, lower, "
                    "upper (numbers or names of columns with per-row bounds), sensitivity, "
                    "epsilon, delta, on_outside, nulls, mode; an optional [budget] with "
                    "epsilon and delta that the release must fit in), or from --column with "
                    "the same settings for every column. The law released is the certified "
                    "grid law (mode exact) unless a column's spec says mode = \"continuous\" "
                    "or --mode continuous is given with --column (raw doubles of the "
                    "continuous law, attackable when published: a warning says so). The "
                    "output is written to a "
                    "temporary file in the output's directory and renamed into place only on "
                    "success (a symbolic link is followed; a stream such as '-', a FIFO or "
                    "/dev/stdout is written into at the end, never replaced): an error, "
                    "Ctrl-C or SIGTERM leaves no output and the input is never written. The "
                    "summary goes to stderr.",
        epilog="Examples: bndp privatize people.csv -o released.csv --spec release.toml; "
               "cat people.csv | bndp privatize - -o - --column age:0:120 --epsilon 1 "
               "--sensitivity 1 > released.csv. " + _EXIT_CODES,
    )
    pr.add_argument("input", help="input .csv or .parquet file; '-' reads stdin (CSV unless "
                                  "--format parquet)")
    pr.add_argument("-o", "--output", required=True,
                    help="output file (same format as the input; must differ from it); '-' "
                         "writes stdout")
    pr.add_argument("--spec", metavar="FILE",
                    help="release spec, TOML (.toml) or JSON (.json): [columns.NAME] tables "
                         "and an optional [budget]")
    pr.add_argument("--column", action="append", metavar="NAME[:LOWER:UPPER]",
                    help="column to release, optionally with its own bounds; repeat for several "
                         "columns (one pass; each column is a separate release)")
    pr.add_argument("-q", "--quiet", action="store_true",
                    help="print nothing on success (no summary, no progress bar)")
    pr.add_argument("-v", "--verbose", action="store_true",
                    help="print more details in the summary")
    _add_privacy_args(pr, bounds_required=False, mode="privatize")
    io = pr.add_argument_group("input and output")
    io.add_argument("--format", choices=("auto", "csv", "parquet"), default="auto",
                    help="input format (default: from the file name)")
    io.add_argument("--delimiter", type=_delimiter, default=",",
                    help="CSV delimiter (default ','; 'tab' for tabs)")
    io.add_argument("--nulls", choices=("raise", "keep"), default="raise",
                    help="missing cells (empty CSV cells, Parquet nulls): an error naming the "
                         "row (default) or kept missing")
    io.add_argument("--on-outside", choices=("clip", "raise"), default="clip",
                    help="values outside [lower, upper]: clip them into the range (default; "
                         "the guarantee holds) or stop with an error naming the row")
    io.add_argument("--block-size", type=_positive_int, default=1 << 20, metavar="BYTES",
                    help="CSV bytes parsed per chunk (default 1 MiB; raised to hold the "
                         "header line; a row longer than a block is an error)")
    io.add_argument("--batch-rows", type=_positive_int, default=1 << 17, metavar="ROWS",
                    help="Parquet rows per chunk (default 131072)")
    io.add_argument("--compression", default="snappy",
                    help="Parquet compression codec of the output (default snappy)")
    io.add_argument("--progress", choices=("auto", "always", "never"), default="auto",
                    help="progress bar by rows on stderr (default: when stderr is a terminal)")
    io.add_argument("--workers", type=_workers, default=1,
                    help="threads drawing noise for each chunk (default 1; -1: every CPU)")
    io.add_argument("--seed", type=int, default=None,
                    help="seed for a reproducible run (tests only: a real release must use "
                         "the default, fresh OS entropy)")
    pr.set_defaults(func=_cmd_privatize)

    ca = sub.add_parser(
        "calibrate", help="print the calibrated scale and the released value's variance",
        description="Print the calibrated scale of a bounded mechanism next to the scale of "
                    "the unbounded mechanism, and the variance of the released value for a "
                    "few true values. By default these are the grid law's (--mode exact), "
                    "which bndp privatize releases by default; --mode continuous reports the "
                    "continuous law of bndp privatize --mode continuous.",
        epilog="Example: bndp calibrate --epsilon 1 --sensitivity 1 --lower 0 --upper 120",
    )
    _add_privacy_args(ca, bounds_required=True, mode="calibrate")
    ca.add_argument("--value", type=float, nargs="+", metavar="Q",
                    help="true values to report (default: lower, lower + 10%% of the range, "
                         "midpoint; on a half-line: its finite end and 1 "
                         "and 10 sensitivities inside)")
    ca.add_argument("--reference-delta", type=float, default=1e-5,
                    help="delta of the classical (unbounded) Gaussian mechanism shown for "
                         "comparison with --mechanism gaussian (default 1e-5)")
    ca.set_defaults(func=_cmd_calibrate)

    pl = sub.add_parser(
        "plot", help="plot the output density beside the clamped unbounded mechanism",
        description="Draw the output density of the bounded mechanism for a few true values, "
                    "beside the unbounded mechanism clamped to the range, whose probability "
                    "piles up on the bounds (needs matplotlib: pip install 'bndp[plot]'). The "
                    "densities and the scale in the title are the continuous law's; the "
                    "default release (--mode exact) is its discretisation on a fine "
                    "power-of-two grid, with its own calibrated scale (bndp calibrate).",
        epilog="Example: bndp plot --epsilon 1 --sensitivity 1 --lower 0 --upper 10 "
               "-o density.png",
    )
    _add_privacy_args(pl, bounds_required=True)
    pl.add_argument("-o", "--output", required=True, help="image file (.png, .svg or .pdf)")
    pl.add_argument("--value", type=float, nargs="+", metavar="Q",
                    help="true values to draw (default: lower, lower + 10%% of the range, "
                         "midpoint)")
    pl.add_argument("--reference-delta", type=float, default=1e-5,
                    help="delta of the classical Gaussian mechanism drawn for comparison with "
                         "--mechanism gaussian (default 1e-5)")
    pl.add_argument("--width", type=float, default=10.0, help="figure width, inches (default 10)")
    pl.add_argument("--height", type=float, default=4.5, help="figure height, inches (default 4.5)")
    pl.add_argument("--dpi", type=_positive_int, default=100, help="resolution (default 100)")
    pl.set_defaults(func=_cmd_plot)

    d = sub.add_parser("demo", help="calibrate both mechanisms on a built-in bounded column, "
                                    "sample, and print a summary")
    d.add_argument("--epsilon", type=float, default=1.0, help="privacy budget (default 1)")
    d.add_argument("--sensitivity", type=float, default=1.0,
                   help="sensitivity of each value (default 1)")
    d.add_argument("--seed", type=int, default=None,
                   help="seed for a reproducible demo (default: OS entropy)")
    d.set_defaults(func=_cmd_demo)

    _add_cli(sub)
    return p


def _one_line(exc: BaseException) -> str:
    text = " ".join(str(exc).split())
    return text or type(exc).__name__


def main(argv: Sequence[str] | None = None) -> int:
    parser = _parser()
    args = parser.parse_args(argv)
    if not getattr(args, "func", None):
        parser.print_help()
        return EXIT_USAGE
    try:
        return int(args.func(args))
    except CLIError as exc:
        if os.environ.get("BNDP_DEBUG"):
            raise
        print(f"bndp: error: {_one_line(exc)}", file=sys.stderr)
        return exc.code
    except BudgetError as exc:
        if os.environ.get("BNDP_DEBUG"):
            raise
        print(f"bndp: error: {_one_line(exc)}", file=sys.stderr)
        return EXIT_BUDGET
    except KeyboardInterrupt:
        print("bndp: interrupted; no output was written", file=sys.stderr)
        return 130
    except _Terminated:
        print("bndp: terminated; no output was written", file=sys.stderr)
        return 143
    except (ValueError, TypeError) as exc:  # invalid arguments of calibrate, plot, demo
        if os.environ.get("BNDP_DEBUG"):
            raise
        print(f"bndp: error: {_one_line(exc)}", file=sys.stderr)
        return EXIT_USAGE
    except Exception as exc:
        if os.environ.get("BNDP_DEBUG"):
            raise
        print(f"bndp: error: {_one_line(exc)}", file=sys.stderr)
        return 1


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
