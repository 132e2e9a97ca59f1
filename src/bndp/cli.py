"""Command-line interface: ``bndp`` / ``python -m bndp``.

Commands
--------
``bndp privatize``  release numeric columns of a CSV or Parquet file, streamed in chunks;
``bndp calibrate``  print the calibrated scale beside the unbounded mechanism's;
``bndp plot``       draw the output density beside the clamped unbounded mechanism;
``bndp demo``       the main job on a small example column shipped with the package.

Errors are reported as one line on stderr (``bndp: error: ...``) with exit status 2; an
interrupted run exits with 130 (SIGINT) or 143 (SIGTERM). ``BNDP_DEBUG=1`` shows tracebacks.
"""

from __future__ import annotations

import argparse
import csv
import math
import os
import signal
import sys
import tempfile
import time
from importlib import resources
from typing import Any, Callable, Sequence

import numpy as np

__all__ = ["main"]


class CLIError(Exception):
    """An error reported as one line on stderr with exit status 2."""


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
    """A one-line progress bar on stderr, redrawn at most 5 times a second."""

    def __init__(self, total: float, unit: str, enabled: bool) -> None:
        self.total = float(total) if total else 0.0
        self.unit = unit
        self.enabled = enabled
        self.t0 = time.monotonic()
        self.last = 0.0
        self.drawn = False

    def update(self, done: float, rows: int, force: bool = False) -> None:
        if not self.enabled:
            return
        now = time.monotonic()
        if not force and now - self.last < 0.2:
            return
        self.last = now
        frac = min(1.0, done / self.total) if self.total > 0 else 1.0
        width = 30
        fill = int(round(frac * width))
        el = now - self.t0
        rate = rows / el if el > 0 else 0.0
        sys.stderr.write(f"\rbndp: [{'#' * fill}{'.' * (width - fill)}] {100 * frac:5.1f}% "
                         f"{rows:,} rows, {el:6.1f} s, {rate:,.0f} rows/s ")
        sys.stderr.flush()
        self.drawn = True

    def close(self, done: float, rows: int) -> None:
        if self.enabled:
            self.update(done, rows, force=True)
            sys.stderr.write("\n")
            sys.stderr.flush()


def _progress_enabled(mode: str) -> bool:
    if mode == "always":
        return True
    if mode == "never":
        return False
    return sys.stderr.isatty()


# ------------------------------------------------------------------------------------------
# privatize
# ------------------------------------------------------------------------------------------
_FORMATS = {".csv": "csv", ".tsv": "csv", ".txt": "csv", ".parquet": "parquet",
            ".pq": "parquet", ".parq": "parquet"}


def _guess_format(path: str) -> str | None:
    return _FORMATS.get(os.path.splitext(path)[1].lower())


class _Spec:
    __slots__ = ("name", "lower", "upper", "mech", "rows", "missing", "clipped")

    def __init__(self, name: str, lower: float, upper: float) -> None:
        self.name = name
        self.lower = lower
        self.upper = upper
        self.mech: Any = None
        self.rows = 0
        self.missing = 0
        self.clipped = 0


def _parse_specs(args: argparse.Namespace) -> list[_Spec]:
    specs: list[_Spec] = []
    for raw in args.column:
        name, lo, hi = raw, args.lower, args.upper
        parts = raw.rsplit(":", 2)
        if len(parts) == 3:
            try:
                lo, hi = float(parts[1]), float(parts[2])
                name = parts[0]
            except ValueError:
                pass  # a column name that happens to contain ':'
        if lo is None or hi is None:
            raise CLIError(f"column {name!r} has no bounds: give --lower and --upper, or "
                           f"--column {name}:LOWER:UPPER")
        if any(s.name == name for s in specs):
            raise CLIError(f"column {name!r} is given twice")
        specs.append(_Spec(name, float(lo), float(hi)))
    return specs


def _mechanism_label(mech: Any) -> str:
    from .mechanisms import BoundedLaplace

    if isinstance(mech, BoundedLaplace):
        return f"bounded Laplace scale b = {mech.scale:.6g} (unbounded Laplace: {mech.sensitivity / mech.epsilon:.6g})"
    return f"bounded Gaussian sigma = {mech.sigma:.6g}"


def _cell_error(path: str, row: int, column: str, what: str) -> CLIError:
    return CLIError(f"{path}: row {row:,} (data rows counted from 1 after the header), "
                    f"column {column!r}: {what}")


def _release_block(spec: _Spec, vals: np.ndarray, missing: np.ndarray | None, row0: int,
                   path: str, args: argparse.Namespace, gen: np.random.Generator,
                   cells: Callable[[int], str] | None = None) -> np.ndarray:
    """Check a block of one column and release it. ``row0`` is the 1-based row of vals[0]."""
    if missing is not None and missing.any():
        if args.nulls == "raise":
            i = int(np.flatnonzero(missing)[0])
            raise _cell_error(path, row0 + i, spec.name,
                              "missing value (empty cell or null); pass --nulls keep to leave "
                              "missing values untouched")
        spec.missing += int(missing.sum())
    present = vals if missing is None else vals[~missing]
    bad = ~np.isfinite(present)
    if bad.any():
        idx = np.flatnonzero(~missing)[np.flatnonzero(bad)[0]] if missing is not None \
            else int(np.flatnonzero(bad)[0])
        shown = cells(int(idx)) if cells is not None else repr(float(vals[idx]))
        raise _cell_error(path, row0 + int(idx), spec.name, f"{shown} is not a finite number")
    outside = (present < spec.lower) | (present > spec.upper)
    if outside.any():
        if args.on_outside == "raise":
            j = int(np.flatnonzero(outside)[0])
            idx = int(np.flatnonzero(~missing)[j]) if missing is not None else j
            raise _cell_error(path, row0 + idx, spec.name,
                              f"{float(vals[idx])!r} lies outside [{spec.lower:g}, {spec.upper:g}] "
                              "(--on-outside raise)")
        spec.clipped += int(outside.sum())
    noisy = spec.mech.sample(present, rng=gen, workers=args.workers)
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


def _read_header(path: str, delimiter: str) -> list[str]:
    with open(path, "r", newline="", encoding="utf-8-sig") as f:
        try:
            header = next(csv.reader(f, delimiter=delimiter), None)
        except (csv.Error, UnicodeDecodeError) as exc:
            raise CLIError(f"{path}: cannot read the CSV header: {exc}") from None
    if not header:
        raise CLIError(f"{path}: empty file (no header line)")
    dup = sorted({h for h in header if header.count(h) > 1})
    if dup:
        raise CLIError(f"{path}: duplicate column name(s) in the header: {', '.join(dup)}")
    return header


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


def _privatize_csv(args: argparse.Namespace, specs: list[_Spec], tmp: str,
                   gen: np.random.Generator, progress: _Progress) -> int:
    pa = _need("pyarrow", "arrow", "bndp privatize")
    pc = _need("pyarrow.compute", "arrow", "bndp privatize")
    pcsv = _need("pyarrow.csv", "arrow", "bndp privatize")
    path = args.input
    header = _read_header(path, args.delimiter)
    for s in specs:
        if s.name not in header:
            raise CLIError(f"{path}: column {s.name!r} not found; columns are: {', '.join(header)}")
    ropts = pcsv.ReadOptions(block_size=args.block_size, use_threads=True)
    popts = pcsv.ParseOptions(delimiter=args.delimiter)
    copts = pcsv.ConvertOptions(column_types={h: pa.string() for h in header},
                                strings_can_be_null=False, quoted_strings_can_be_null=False)
    rows = 0
    with open(path, "rb") as raw, open(tmp, "wb") as out_f:
        try:
            reader = pcsv.open_csv(raw, read_options=ropts, parse_options=popts,
                                   convert_options=copts)
        except pa.ArrowInvalid as exc:
            raise CLIError(f"{path}: cannot parse as CSV: {exc}") from None
        out_f.write(_csv_header(header, args.delimiter))
        while True:
            try:
                batch = reader.read_next_batch()
            except StopIteration:
                break
            except pa.ArrowInvalid as exc:
                raise CLIError(f"{path}: malformed CSV after data row {rows:,}: {exc}") from None
            cols = list(batch.columns)
            for s in specs:
                k = header.index(s.name)
                text = cols[k]
                trimmed = pc.utf8_trim_whitespace(text)
                empty = np.asarray(pc.equal(trimmed, ""))
                filled = (pc.if_else(_arrow_f64(pa, empty.view(np.uint8), None).cast(pa.bool_()),
                                     "0", trimmed) if empty.any() else trimmed)
                try:
                    nums = pc.cast(filled, pa.float64())
                except (pa.ArrowInvalid, ValueError):
                    i = _first_unparsable(filled, pc, pa)
                    if args.nulls == "raise" and empty[:i].any():
                        i = int(np.flatnonzero(empty)[0])
                        raise _cell_error(path, rows + 1 + i, s.name, "missing value (empty "
                                          "cell); pass --nulls keep to leave missing values "
                                          "untouched") from None
                    raise _cell_error(path, rows + 1 + i, s.name,
                                      f"{text[i].as_py()!r} is not a number") from None
                vals = np.asarray(nums.to_numpy(zero_copy_only=False), dtype=np.float64)
                noisy = _release_block(s, vals, empty if empty.any() else None, rows + 1,
                                       path, args, gen, cells=_cell_text(text))
                released = pc.cast(_arrow_f64(pa, noisy, empty if empty.any() else None),
                                   pa.string())
                cols[k] = pc.fill_null(released, "")
            out_f.write(_csv_lines(cols, args.delimiter, pa, pc))
            rows += batch.num_rows
            progress.update(raw.tell(), rows)
        out_f.flush()
        os.fsync(out_f.fileno())
    progress.close(os.path.getsize(path), rows)
    return rows


def _privatize_parquet(args: argparse.Namespace, specs: list[_Spec], tmp: str,
                       gen: np.random.Generator, progress: _Progress) -> int:
    pa = _need("pyarrow", "arrow", "bndp privatize")
    pq = _need("pyarrow.parquet", "arrow", "bndp privatize")
    from .integrations._columns import to_numpy

    path = args.input
    try:
        pf = pq.ParquetFile(path)
    except (pa.ArrowInvalid, OSError) as exc:
        raise CLIError(f"{path}: cannot read as Parquet: {exc}") from None
    schema = pf.schema_arrow
    names = schema.names
    fields = []
    for f in schema:
        s = next((s for s in specs if s.name == f.name), None)
        if s is not None:
            t = f.type
            if not (pa.types.is_integer(t) or pa.types.is_floating(t) or pa.types.is_decimal(t)):
                raise CLIError(f"{path}: column {f.name!r} must be numeric; got {t}")
            f = pa.field(f.name, pa.float64(), nullable=f.nullable, metadata=f.metadata)
        fields.append(f)
    for s in specs:
        if s.name not in names:
            raise CLIError(f"{path}: column {s.name!r} not found; columns are: {', '.join(names)}")
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
                noisy = _release_block(s, col.values, col.missing, rows + 1, path, args, gen)
                null = col.missing if col.missing is not None and col.missing.any() else None
                cols[k] = _arrow_f64(pa, noisy, null)
            writer.write_batch(pa.RecordBatch.from_arrays(cols, schema=out_schema))
            rows += batch.num_rows
            progress.update(rows, rows)
    progress.close(total, rows)
    return rows


def _normal_mode(path: str) -> None:
    """Give a temporary file (created 0600) the mode a newly created file would have."""
    if os.name == "posix":
        mask = os.umask(0)
        os.umask(mask)
        os.chmod(path, 0o666 & ~mask)


def _on_sigterm(signum: int, frame: Any) -> None:
    raise _Terminated()


def _cmd_privatize(args: argparse.Namespace) -> int:
    from ._random import default_rng
    from .integrations._engine import build_mechanism

    src, dst = args.input, args.output
    if not os.path.isfile(src):
        raise CLIError(f"{src}: no such file")
    if os.path.getsize(src) == 0:
        raise CLIError(f"{src}: empty file")
    if os.path.isdir(dst):
        raise CLIError(f"{dst}: is a directory; give the output file name")
    if os.path.abspath(src) == os.path.abspath(dst) or (
            os.path.exists(dst) and os.path.samefile(src, dst)):
        raise CLIError(f"refusing to write over the input file {src}; choose another output")
    out_dir = os.path.dirname(os.path.abspath(dst))
    if not os.path.isdir(out_dir):
        raise CLIError(f"{dst}: directory {out_dir} does not exist")
    fmt = args.format if args.format != "auto" else _guess_format(src)
    if fmt is None:
        raise CLIError(f"{src}: cannot tell the format from the file name; pass --format csv "
                       "or --format parquet")
    out_fmt = _guess_format(dst)
    if out_fmt is not None and out_fmt != fmt:
        raise CLIError(f"the output is written as {fmt} (like the input) but {dst} names "
                       f"a {out_fmt} file")
    specs = _parse_specs(args)
    for s in specs:  # calibrate once per column, before reading anything
        try:
            s.mech = build_mechanism(args.mechanism, args.epsilon, args.sensitivity,
                                     s.lower, s.upper, args.delta)
        except (ValueError, TypeError) as exc:
            raise CLIError(f"column {s.name!r}: {exc}") from None
    gen = default_rng(args.seed)
    progress = _Progress(os.path.getsize(src) if fmt == "csv" else 0, "bytes",
                         _progress_enabled(args.progress))
    fd, tmp = tempfile.mkstemp(prefix=f".{os.path.basename(dst)}.", suffix=".bndp-partial",
                               dir=out_dir)
    os.close(fd)
    old = signal.signal(signal.SIGTERM, _on_sigterm) if _main_thread() else None
    try:
        if fmt == "csv":
            rows = _privatize_csv(args, specs, tmp, gen, progress)
        else:
            rows = _privatize_parquet(args, specs, tmp, gen, progress)
        _normal_mode(tmp)
        os.replace(tmp, dst)
    except BaseException:
        if progress.drawn:
            sys.stderr.write("\n")
        try:
            os.unlink(tmp)
        except OSError:
            pass
        raise
    finally:
        if old is not None:
            signal.signal(signal.SIGTERM, old)
    for s in specs:
        extra = []
        if s.missing:
            extra.append(f"{s.missing:,} missing kept")
        if s.clipped:
            extra.append(f"{s.clipped:,} clipped into the domain")
        more = f"; {', '.join(extra)}" if extra else ""
        print(f"bndp: {s.name}: {s.rows:,} values released in [{s.lower:g}, {s.upper:g}] with "
              f"epsilon = {args.epsilon:g}, sensitivity = {args.sensitivity:g}: "
              f"{_mechanism_label(s.mech)}{more}")
    if len(specs) > 1:
        print(f"bndp: {len(specs)} columns released, each with epsilon = {args.epsilon:g}: a "
              f"record's total privacy loss adds up over its columns (up to "
              f"{len(specs) * args.epsilon:g})")
    if rows == 0:
        print(f"bndp: {src} has a header but no data rows; wrote an empty {fmt} file")
    print(f"bndp: wrote {rows:,} rows to {dst}")
    return 0


def _main_thread() -> bool:
    import threading

    return threading.current_thread() is threading.main_thread()


# ------------------------------------------------------------------------------------------
# calibrate and plot
# ------------------------------------------------------------------------------------------
def _classical_gaussian_sigma(eps: float, dq: float, delta: float) -> float:
    # Definition 1.4 of [CH24] (the standard Gaussian mechanism; stated for eps, delta in (0,1))
    return dq * math.sqrt(2.0 * math.log(1.25 / delta)) / eps


def _mech_from_args(args: argparse.Namespace) -> Any:
    from .integrations._engine import build_mechanism

    return build_mechanism(args.mechanism, args.epsilon, args.sensitivity, args.lower,
                           args.upper, args.delta)


def _unbounded(args: argparse.Namespace) -> tuple[str, float, float]:
    """(description, scale, variance) of the unbounded mechanism being compared."""
    if args.mechanism == "laplace":
        b = args.sensitivity / (args.epsilon - math.log1p(-args.delta))
        desc = ("Laplace b = sensitivity/(epsilon - ln(1 - delta))" if args.delta
                else "Laplace b = sensitivity/epsilon")
        return desc, b, 2 * b * b
    rd = args.reference_delta
    s = _classical_gaussian_sigma(args.epsilon, args.sensitivity, rd)
    note = "" if args.epsilon < 1 else ", stated for epsilon < 1"
    return f"Gaussian sigma = sensitivity*sqrt(2 ln(1.25/delta))/epsilon at delta = {rd:g}{note}", s, s * s


def _values(args: argparse.Namespace) -> list[float]:
    if args.value:
        return list(args.value)
    lo, hi = args.lower, args.upper
    return [lo, lo + 0.1 * (hi - lo), 0.5 * (lo + hi)]


def _cmd_calibrate(args: argparse.Namespace) -> int:
    mech = _mech_from_args(args)
    desc, ub_scale, ub_var = _unbounded(args)
    name = "bounded Laplace" if args.mechanism == "laplace" else "bounded Gaussian"
    sym = "b" if args.mechanism == "laplace" else "sigma"
    print(f"{name}: epsilon = {args.epsilon:g}, delta = {args.delta:g}, sensitivity = "
          f"{args.sensitivity:g}, domain [{args.lower:g}, {args.upper:g}]")
    print(f"calibrated {sym} = {mech.scale:.10g}")
    print(f"unbounded  {sym} = {ub_scale:.10g}   ({desc})")
    print(f"{'true value':>14}{'variance (bounded)':>22}{'variance (unbounded)':>24}"
          f"{'bias (bounded)':>18}")
    for q in _values(args):
        print(f"{q:14.6g}{mech.variance(q):22.6g}{ub_var:24.6g}{mech.bias(q):18.6g}")
    return 0


def _cmd_plot(args: argparse.Namespace) -> int:
    matplotlib = _need("matplotlib", "plot", "bndp plot")
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    from scipy import stats

    if not args.output.lower().endswith((".png", ".svg", ".pdf")):
        raise CLIError(f"{args.output}: the plot is written as .png, .svg or .pdf")
    out_dir = os.path.dirname(os.path.abspath(args.output))
    if not os.path.isdir(out_dir):
        raise CLIError(f"{args.output}: directory {out_dir} does not exist")
    # the densities drawn are those of the continuous law; the default release is its
    # floating-point-safe discretisation on a fine power-of-two grid
    from .integrations._engine import build_mechanism

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
    from . import BoundedGaussian, BoundedLaplace, default_rng

    data = _load_example()
    ages = data["age"]
    lo, hi = 0.0, 120.0
    rng = default_rng(args.seed)
    eps, dq = args.epsilon, args.sensitivity
    print(f"bndp demo: {ages.size} ages in [{lo:g}, {hi:g}], epsilon = {eps:g}, "
          f"sensitivity = {dq:g} (per value)")
    print(f"{'mechanism':<18}{'scale':>12}{'unbounded':>12}{'min':>9}{'max':>9}"
          f"{'mean':>9}{'MAE':>9}")
    for name, mech, unbounded in (
        ("bounded Laplace", BoundedLaplace(eps, dq, lo, hi), dq / eps),
        ("bounded Gaussian", BoundedGaussian(eps, dq, lo, hi), None),
    ):
        noisy = mech.sample(ages, rng=rng)
        ub = f"{unbounded:12.4f}" if unbounded is not None else f"{'-':>12}"
        print(f"{name:<18}{mech.scale:12.4f}{ub}{noisy.min():9.2f}{noisy.max():9.2f}"
              f"{noisy.mean():9.2f}{np.abs(noisy - ages).mean():9.2f}")
    print(f"true mean age {ages.mean():.2f}; every released value lies in [{lo:g}, {hi:g}]")
    return 0


def _add_privacy_args(p: argparse.ArgumentParser, bounds_required: bool) -> None:
    g = p.add_argument_group("mechanism")
    g.add_argument("--mechanism", choices=("laplace", "gaussian"), default="laplace",
                   help="bounded Laplace ((epsilon, delta)-DP; pure for delta = 0) or bounded "
                        "Gaussian (pure epsilon-DP) (default: laplace)")
    g.add_argument("--epsilon", type=float, required=True, help="privacy budget epsilon > 0")
    g.add_argument("--sensitivity", type=float, required=True,
                   help="sensitivity of each value: the most one person can change it")
    g.add_argument("--delta", type=float, default=0.0,
                   help="delta in [0, 1) for the Laplace mechanism (default 0; must be 0 for "
                        "gaussian)")
    g.add_argument("--lower", type=float, required=bounds_required, default=None,
                   help="lower end of the valid range" + ("" if bounds_required else
                                                          " (default for every --column)"))
    g.add_argument("--upper", type=float, required=bounds_required, default=None,
                   help="upper end of the valid range" + ("" if bounds_required else
                                                          " (default for every --column)"))


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
        epilog="Run 'bndp COMMAND --help' for a command's options. Errors are printed as one "
               "line with exit status 2.",
    )
    sub = p.add_subparsers(dest="command", metavar="COMMAND")

    pr = sub.add_parser(
        "privatize", help="release numeric columns of a CSV or Parquet file",
        description="Release one or more numeric columns of a CSV or Parquet file with a "
                    "bounded mechanism, streaming the file in chunks (memory does not grow "
                    "with the file). Other columns are copied unchanged (CSV cells keep their "
                    "text; Parquet keeps its schema, the released columns becoming float64). "
                    "The output is written to a temporary file in the output's directory and "
                    "renamed into place only on success: an error, Ctrl-C or SIGTERM leaves no "
                    "output and the input is never written.",
        epilog="Example: bndp privatize people.csv -o released.csv --column age:0:120 "
               "--column income:0:500000 --epsilon 1 --sensitivity 1",
    )
    pr.add_argument("input", help="input .csv or .parquet file")
    pr.add_argument("-o", "--output", required=True,
                    help="output file (same format as the input; must differ from it)")
    pr.add_argument("--column", action="append", required=True, metavar="NAME[:LOWER:UPPER]",
                    help="column to release, optionally with its own bounds; repeat for several "
                         "columns (one pass; each column is a separate release)")
    _add_privacy_args(pr, bounds_required=False)
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
                    help="CSV bytes parsed per chunk (default 1 MiB)")
    io.add_argument("--batch-rows", type=_positive_int, default=1 << 17, metavar="ROWS",
                    help="Parquet rows per chunk (default 131072)")
    io.add_argument("--compression", default="snappy",
                    help="Parquet compression codec of the output (default snappy)")
    io.add_argument("--progress", choices=("auto", "always", "never"), default="auto",
                    help="progress bar on stderr (default: when stderr is a terminal)")
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
                    "few true values.",
        epilog="Example: bndp calibrate --epsilon 1 --sensitivity 1 --lower 0 --upper 120",
    )
    _add_privacy_args(ca, bounds_required=True)
    ca.add_argument("--value", type=float, nargs="+", metavar="Q",
                    help="true values to report (default: lower, lower + 10%% of the range, "
                         "midpoint)")
    ca.add_argument("--reference-delta", type=float, default=1e-5,
                    help="delta of the classical (unbounded) Gaussian mechanism shown for "
                         "comparison with --mechanism gaussian (default 1e-5)")
    ca.set_defaults(func=_cmd_calibrate)

    pl = sub.add_parser(
        "plot", help="plot the output density beside the clamped unbounded mechanism",
        description="Draw the output density of the bounded mechanism for a few true values, "
                    "beside the unbounded mechanism clamped to the range, whose probability "
                    "piles up on the bounds (needs matplotlib: pip install 'bndp[plot]').",
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
    return p


def _one_line(exc: BaseException) -> str:
    text = " ".join(str(exc).split())
    return text or type(exc).__name__


def main(argv: Sequence[str] | None = None) -> int:
    parser = _parser()
    args = parser.parse_args(argv)
    if not getattr(args, "func", None):
        parser.print_help()
        return 2
    try:
        return int(args.func(args))
    except KeyboardInterrupt:
        print("bndp: interrupted; no output was written", file=sys.stderr)
        return 130
    except _Terminated:
        print("bndp: terminated; no output was written", file=sys.stderr)
        return 143
    except Exception as exc:
        if os.environ.get("BNDP_DEBUG"):
            raise
        print(f"bndp: error: {_one_line(exc)}", file=sys.stderr)
        return 2


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
