"""``bndp privatize``: release columns of a CSV or Parquet file, streamed in blocks."""

from __future__ import annotations

import argparse
import math
import os
import shutil
import signal
import sys
import time
from typing import Any

import numpy as np

from .._columns import to_numpy
from .._values import approx
from .._random import default_rng
from .._release import (ColumnDataError, charge_release, plan_release, release_record,
                        seeded_release, unit_text)
from .._release.spec import nonfinite_word
from .._testhooks import crash_point
from ..budget import Budget
from .budget import create_budget, open_budget
from ._run_record import outcome, run_state, same_file as _same_file, with_run_record, write_json
from ..exceptions import BudgetError
from ._errors import (CLIError, DataError, FileError, _COLUMN_OPTIONS, _cell_error, _column_flags,
                      _fmt_bound, _need)
from ._io import (Staged, _Progress, _arrow_f64, _arrow_msg, _count_lines,
                  _csv_header, _csv_lines, _guess_format, _is_float, _main_thread,
                  _on_sigterm, _output_kind, _parse_numbers, _progress_enabled, _read_header,
                  _spool_input)
from ._privatize_files import (_arrow, _compression, _convert, _decompress, _magic,
                               _parquet_parts, _strip_compression, parquet_types)
from ._integer import input_integer_columns, integer_cells


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
    object) and an optional ``[budget]`` (``epsilon``, ``delta``; for a persistent budget
    ``store`` and ``name``, ``composition`` and ``create``)."""
    import json

    try:
        with open(path, "rb") as f:
            raw = f.read()
    except OSError as exc:
        raise CLIError(f"--spec {path}: cannot read: {exc.strerror or exc}") from None
    try:
        text = raw.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        raise CLIError(f"--spec {path}: not UTF-8 text: {exc}") from None

    def no_duplicates(pairs: list) -> dict:
        # a repeated key would silently override the first (an epsilon, a budget's cap)
        keys = [k for k, _ in pairs]
        dup = sorted({k for k in keys if keys.count(k) > 1})
        if dup:
            raise ValueError(f"duplicate key(s) {', '.join(map(repr, dup))}")
        return dict(pairs)

    if path.lower().endswith(".json") or text.lstrip().startswith("{"):
        try:
            doc = json.loads(text, object_pairs_hook=no_duplicates)
        except RecursionError:
            raise CLIError(f"--spec {path}: nested too deeply") from None
        except ValueError as exc:
            raise CLIError(f"--spec {path}: not valid JSON: {exc}") from None
    else:
        if sys.version_info >= (3, 11):
            import tomllib
        else:  # pragma: no cover - Python 3.10
            tomllib = _need("tomli", "cli", "--spec in TOML on Python 3.10")
        try:
            doc = tomllib.loads(text)
        except RecursionError:
            raise CLIError(f"--spec {path}: nested too deeply") from None
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
    if "budget" in doc and budget is None:      # JSON null: not "no budget" by accident
        raise CLIError(f"--spec {path}: budget is null; give its epsilon (and delta), or "
                       "store and name, or leave the key out")
    if budget is not None:
        keys = ("epsilon", "delta", "store", "name", "composition", "create")
        if not isinstance(budget, dict) or any(k not in keys for k in budget):
            raise CLIError(f"--spec {path}: [budget] takes epsilon and delta (the cap), and "
                           "for a persistent budget store, name, composition and create")
        for k in ("store", "name", "composition"):
            if k in budget and not isinstance(budget[k], str):
                raise CLIError(f"--spec {path}: [budget] {k} must be a string")
        if "create" in budget and not isinstance(budget["create"], bool):
            raise CLIError(f"--spec {path}: [budget] create must be true or false")
        if "store" in budget and "://" not in budget["store"] and \
                not os.path.isabs(budget["store"]):
            # a relative SQLite path: relative to the spec file
            budget = dict(budget, store=os.path.join(os.path.dirname(os.path.abspath(path)),
                                                     budget["store"]))
    return cols, budget


def _open_budget(args: argparse.Namespace, bspec: dict[str, Any] | None) -> Any:
    """The release's budget: persistent (--budget-store/--budget-name, or store and name in
    [budget]), in memory ([budget] with epsilon only), or None."""
    where = f"--spec {args.spec}: [budget]" if args.spec is not None else "--spec"
    b = dict(bspec or {})
    store = args.budget_store if args.budget_store is not None else b.get("store")
    name = args.budget_name if args.budget_name is not None else b.get("name")
    if store is None and name is None:
        if args.release_id is not None:
            raise CLIError("--release-id needs a persistent budget to record it under: "
                           "--budget-store and --budget-name (or store and name in the "
                           "spec's [budget])")
        if not b:
            if bspec is not None:       # an empty [budget]: refused, not read as no budget
                raise CLIError(f"{where}: empty; give its epsilon (and delta), or store and "
                               "name for a persistent budget")
            return None
        if "epsilon" not in b:
            raise CLIError(f"{where}: epsilon is required (or give store and name for a "
                           "persistent budget)")
        for k in ("composition", "create"):
            if k in b:
                raise CLIError(f"{where}: {k} applies to a persistent budget (store and "
                               "name)")
        try:
            return Budget(b["epsilon"], b.get("delta", 0.0))
        except (TypeError, ValueError) as exc:
            raise CLIError(f"{where}: {exc}") from None
    if store is None or name is None:
        raise CLIError("a persistent budget needs both a store and a name: --budget-store "
                       "and --budget-name (or store and name in the spec's [budget])")
    if getattr(args, "seed", None) is not None and not getattr(args, "allow_seeded", False):
        raise CLIError(f"--seed with the persistent budget {name!r}: whoever knows the seed can "
                       "subtract the noise from the released values; nothing was read, drawn "
                       "or charged. Leave out --seed for a real release, or add --allow-seeded "
                       "to record a seeded release (tests only)")
    if b.get("create") and "epsilon" not in b:
        raise CLIError(f"{where}: create = true needs the cap's epsilon (and delta)")
    # create = true: created with this cap if missing, else opened (its cap checked)
    return (create_budget if b.get("create") else open_budget)(
        store, name, epsilon=b.get("epsilon"), delta=b.get("delta"),
        composition=b.get("composition"))


def _parse_specs(args: argparse.Namespace, label: str = "",
                 integer_columns: Any = None) -> tuple[list[_Spec], Any]:
    """The released columns (validated, calibrated and planned) and the budget (checked,
    not charged, and the release id checked), from --spec or --column; usage errors name
    the column and key. ``integer_columns``: the input's integer-typed columns (their law
    by default: :func:`bndp._release.spec.parse_spec`)."""
    bspec = None
    step = getattr(args, "integer", None)
    if args.spec is not None:
        if args.column:
            raise CLIError("give either --spec or --column, not both")
        if args.mode is not None:
            raise CLIError("--mode applies to --column; with --spec set each column's mode in "
                           "the spec file (mode = \"continuous\" in its [columns.NAME] table)")
        if step is not None:
            raise CLIError("--integer, --integer-step and --no-integer apply to --column; with "
                           "--spec set integer in each column's table (integer = true, false "
                           "or a lattice step)")
        given = [f"--{opt}" for opt in _COLUMN_OPTIONS if getattr(args, opt) is not None]
        if given:
            raise CLIError(f"{', '.join(given)} appl{'ies' if len(given) == 1 else 'y'} to "
                           "--column; with --spec set each column's settings in the spec file")
        cols, bspec = _load_spec_file(args.spec)
        run_state(args).spec_budget = bspec     # its store: never the run record's path
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
            if step is not None:
                e["integer"] = bool(step) if step in (0, 1) else step
            spec[name] = e
        where = ""
    args.release_spec = spec        # (planned again if the input's types are read late)
    budget = run_state(args).budget = _open_budget(args, bspec)
    try:
        # calibrates and plans every column and checks the budget and the release id,
        # before reading anything
        plans = plan_release(spec, budget, label=label, release_id=args.release_id,
                             integer_columns=integer_columns)
    except BudgetError:
        raise
    except (ValueError, TypeError) as exc:
        msg = " ".join(str(exc).split()) if args.spec is not None else _column_flags(exc)
        raise CLIError(where + msg) from None
    return [_Spec(p) for p in plans], budget


def _replan(args: argparse.Namespace, specs: list[_Spec], budget: Any, label: str,
            ints: Any) -> list[_Spec]:
    """The columns planned again with the input's integer-typed columns ``ints`` when they
    are read only once the input is spooled or decompressed (the same spec, so the law of
    every column is that of the same file read directly); ``specs`` where none is
    released."""
    if ints is None or not any(s.name in ints for s in specs):
        return specs
    plans = plan_release(args.release_spec, budget, label=label, release_id=args.release_id,
                         integer_columns=ints)
    return [_Spec(p) for p in plans]


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


def _mechanism_label(plan: Any) -> str:
    mech = plan.mech
    if plan.mechanism == "laplace" and mech is not None:
        text = (f"bounded Laplace scale b = {mech.scale:.6g} (unbounded Laplace: "
                f"{mech.sensitivity / mech.epsilon:.6g})")
    else:
        text = plan.describe()
    law = plan.law
    if law == "integer":
        step = "" if plan.integer == 1 else f"*{plan.integer}"
        return f"{text}; integer law (values lower + j{step})"
    return f"{text}; {law} law"


def _data_error(exc: ColumnDataError, spec: _Spec, vals: np.ndarray, row0: int, path: str,
                per_row: bool) -> CLIError:
    """A failed data check (:meth:`ColumnPlan.check`) in this command's words: the file row
    counted from 1 and the column, never the cell's value (a message may be logged or shown
    where the data must not be)."""
    name, k = spec.name, exc.kind
    if k == "calibration":
        return DataError(f"{path}: rows {row0:,}-{row0 + vals.size - 1:,}, column {name!r}: "
                         f"{exc.detail}")
    assert exc.row is not None
    row = row0 + exc.row
    if k == "missing":
        what = ("missing value (empty cell, null or NaN); pass --nulls keep to leave missing "
                "values untouched")
    elif k == "not_finite":
        what = f"{nonfinite_word(float(vals[exc.row]))} is not a finite number"
    elif k == "bound_not_finite":
        if exc.value is not None and math.isnan(exc.value):
            return _cell_error(path, row, exc.column, f"missing per-row bound (empty cell, "
                               f"null or NaN) of column {name!r}, whose value on this row is "
                               "released")
        return _cell_error(path, row, exc.column, f"per-row bound of column {name!r} is not a "
                           "finite number")
    elif k == "bound_order":
        what = "per-row bounds need lower < upper; this row has lower >= upper"
    elif k == "outside":
        side = ("below its lower bound" if exc.detail == "below" else
                "above its upper bound")
        where = ("its per-row bounds" if per_row else
                 f"[{_fmt_bound(exc.lower)}, {_fmt_bound(exc.upper)}]")
        what = f"the value lies outside {where}, {side} (--on-outside raise)"
    else:  # pragma: no cover - a new kind of check: its library message, still exit 3
        return DataError(f"{path}: rows {row0:,}-{row0 + vals.size - 1:,}: {exc}")
    return _cell_error(path, row, name, what)


def _release_block(spec: _Spec, vals: np.ndarray, missing: np.ndarray | None, row0: int,
                   path: str, args: argparse.Namespace, gen: np.random.Generator,
                   lo: np.ndarray | None = None, hi: np.ndarray | None = None) -> np.ndarray:
    """Check a block of one column (:meth:`ColumnPlan.check`, the checks of every release
    path) and release it. ``row0`` is the 1-based row of vals[0]; ``lo``/``hi``: the block's
    per-row bounds (when the spec names bound columns)."""
    plan = spec.plan
    per_row = lo is not None or hi is not None
    try:
        plan.check(vals, missing, lo, hi)
    except ColumnDataError as exc:
        raise _data_error(exc, spec, approx(vals), row0, path, per_row) from None
    keep = None if missing is None else ~missing
    if keep is not None:
        spec.missing += int(missing.sum())  # type: ignore[union-attr]
    present = vals if keep is None else vals[keep]
    lo_p = None if lo is None else (lo if keep is None else lo[keep])
    hi_p = None if hi is None else (hi if keep is None else hi[keep])
    # the summary's count of values clipped into their bounds (checked above)
    lo_c = (-np.inf if plan.lower is None else plan.lower) if lo_p is None else lo_p
    hi_c = (np.inf if plan.upper is None else plan.upper) if hi_p is None else hi_p
    spec.clipped += int(((approx(present) < lo_c) | (approx(present) > hi_c)).sum())
    try:
        noisy = plan.draw(present, gen, lo_p, hi_p)
    except ValueError as exc:
        raise DataError(f"{path}: column {spec.name!r}: {exc}") from None
    spec.rows += present.size
    noisy = np.asarray(noisy)
    ints = noisy.dtype.kind in "iu"        # the integer law on integers
    if missing is None:
        return noisy if ints else np.asarray(noisy, dtype=np.float64)
    out = np.zeros(vals.shape, dtype=noisy.dtype) if ints else np.full(vals.shape, np.nan)
    out[~missing] = noisy
    return out


def _privatize_csv(args: argparse.Namespace, specs: list[_Spec], tmp: str,
                   gen: np.random.Generator, progress: _Progress, path: str,
                   shown: str) -> int:
    pa, pc, pcsv = _arrow("pyarrow", "pyarrow.compute", "pyarrow.csv")
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
                                                 s.plan.nulls, exact=True)
                    bnd = {}
                    for key in ("lower", "upper"):
                        b = getattr(s.plan, key)
                        if isinstance(b, str):
                            # an empty cell is a missing bound (NaN): refused by the check
                            # on a row whose value is released, unread on a missing one
                            bv, bempty = _parse_numbers(cols[header.index(b)], b, rows + 1,
                                                        shown, pa, pc, True, "keep")
                            bnd[key] = np.where(bempty, np.nan, bv)
                    # missing: empty cells (null) and NaN cells, as a NaN is missing in
                    # every other input; both are written back as they were
                    nan = np.isnan(approx(vals)) & ~empty
                    missing = empty | nan
                    noisy = _release_block(s, vals, missing if missing.any() else None,
                                           rows + 1, shown, args, gen,
                                           lo=bnd.get("lower"), hi=bnd.get("upper"))
                    released = pc.cast(
                        integer_cells(noisy, empty, pa) if s.plan.integer else
                        _arrow_f64(pa, noisy, empty if empty.any() else None), pa.string())
                    if nan.any():
                        released = pc.if_else(_arrow_f64(pa, nan.view(np.uint8), None)
                                              .cast(pa.bool_()), text, released)
                    cols[k] = pc.fill_null(released, "")
                out_f.write(_csv_lines(cols, args.delimiter, pa, pc))
                crash_point("writing")
                rows += batch.num_rows
                progress.update(rows, rows)
        out_f.flush()
        os.fsync(out_f.fileno())
    progress.close(rows, rows)
    return rows


def _privatize_parquet(args: argparse.Namespace, specs: list[_Spec], tmp: str,
                       gen: np.random.Generator, progress: _Progress, path: str | list[str],
                       shown: str) -> int:
    """Release a Parquet file, or the files of a directory or glob (``path`` a list, read in
    order into one output file; they must share one schema)."""
    pa, pq = _arrow("pyarrow", "pyarrow.parquet")
    paths = [path] if isinstance(path, str) else list(path)
    files = []
    for one in paths:
        try:
            files.append(pq.ParquetFile(one))
        except (pa.ArrowInvalid, OSError) as exc:
            where = shown if len(paths) == 1 else f"{shown}: {one}"
            raise DataError(f"{where}: cannot read as Parquet: {exc}") from None
    pf = files[0]
    schema = pf.schema_arrow
    for one, f in zip(paths[1:], files[1:]):
        if not f.schema_arrow.equals(schema, check_metadata=False):
            raise DataError(f"{shown}: {one} has another schema than {paths[0]}: "
                            f"{f.schema_arrow} against {schema}")
    names = schema.names
    dup = sorted({c for c in names if names.count(c) > 1})
    if dup:     # a column released by name would leave its namesakes with true values
        raise DataError(f"{shown}: duplicate column name(s) in the schema: {', '.join(dup)}")
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
            # the integer law keeps an integer type (int64 where the lattice needs it)
            out_t = (pa.from_numpy_dtype(sp.plan.output_dtype(t.to_pandas_dtype()))
                     if sp.plan.integer and pa.types.is_integer(t) else pa.float64())
            f = pa.field(f.name, out_t, nullable=f.nullable, metadata=f.metadata)
        fields.append(f)
    out_schema = pa.schema(fields, metadata=schema.metadata)
    total = sum(f.metadata.num_rows for f in files)
    progress.total = float(total)
    rows = 0
    batches = (b for f in files for b in f.iter_batches(batch_size=args.batch_rows))
    with pq.ParquetWriter(tmp, out_schema, compression=args.compression) as writer:
        for batch in batches:
            cols = list(batch.columns)
            for s in specs:
                k = names.index(s.name)
                col = to_numpy(cols[k], s.name)
                bnd = {}
                for key in ("lower", "upper"):
                    b = getattr(s.plan, key)
                    if isinstance(b, str):
                        bc = to_numpy(cols[names.index(b)], b)
                        # public bounds: nearest doubles; a missing bound NaN (as in CSV)
                        bv = np.asarray(approx(bc.values), dtype=np.float64)
                        bnd[key] = bv if bc.missing is None else np.where(bc.missing,
                                                                          np.nan, bv)
                noisy = _release_block(s, col.values, col.missing, rows + 1, shown, args, gen,
                                       lo=bnd.get("lower"), hi=bnd.get("upper"))
                # missing values stay as they were: nulls null, NaN NaN
                t_out = out_schema.field(k).type
                cols[k] = (_arrow_f64(pa, noisy, col.null) if pa.types.is_floating(t_out) else
                           pa.array(noisy.astype(t_out.to_pandas_dtype()), type=t_out,
                                    mask=col.null if col.null is not None else None))
            writer.write_batch(pa.RecordBatch.from_arrays(cols, schema=out_schema))
            crash_point("writing")
            rows += batch.num_rows
            progress.update(rows, rows)
    progress.close(rows, rows)
    return rows


def _check_output_paths(args: argparse.Namespace, src: str | None, final: str | None,
                        budget: Any) -> None:
    """Before anything is drawn: the files the run writes (the output, ``--summary-json``)
    are none of the files it reads or keeps (the input, the spec, the budget's SQLite
    store) nor each other, and the summary's directory exists (a summary that could not be
    written after the release is committed would fail a run whose release was charged)."""
    store = getattr(budget, "store", None)
    kept = [("the input file", src), ("the spec", getattr(args, "spec", None)),
            ("the budget store", store if isinstance(store, str) and "://" not in store
             else None)]
    written = [("the output", final), ("--summary-json", args.summary_json)]
    for what, path in written:
        if path is None:
            continue
        for which, other in kept:
            if other is not None and _same_file(path, other):
                raise CLIError(f"refusing to write {what} over {which} {other}")
    summary = args.summary_json
    if summary is not None:
        if final is not None and _same_file(summary, final):
            raise CLIError("--summary-json and the output are the same file; choose another")
        if os.path.isdir(summary):
            raise CLIError(f"--summary-json {summary}: is a directory")
        where = os.path.dirname(os.path.abspath(summary))
        if not os.path.isdir(where):
            raise FileError(f"--summary-json {summary}: directory {where} does not exist")


@with_run_record        # --summary-json: a failed run's record too
def _cmd_privatize(args: argparse.Namespace) -> int:
    src, dst = args.input, args.output
    shown_src = "<stdin>" if src == "-" else src
    shown_dst = "<stdout>" if dst == "-" else dst
    parts = _parquet_parts(src)          # a directory or glob of Parquet files, or None
    spooled = parts is None and (src == "-" or (os.path.exists(src)
                                               and not os.path.isfile(src)))
    if parts is None and not spooled and not os.path.isfile(src):
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
    compressed = _compression(src) if parts is None and not spooled else None
    fmt = args.format if args.format != "auto" else (
        "parquet" if parts is not None else
        None if src == "-" else _guess_format(_strip_compression(src)))
    if fmt is None and src != "-" and not spooled and compressed is None:
        fmt = "parquet" if _magic(src) == "parquet" else None
        if fmt is None:
            raise CLIError(f"{src}: cannot tell the format from the file name; pass "
                           "--format csv or --format parquet")
    out_fmt = args.output_format if args.output_format != "auto" else (
        _guess_format(dst) if dst != "-" else None)
    label = "bndp privatize " + shown_src
    t_start = time.perf_counter()
    # validates, calibrates and plans; the budget is checked now, charged once every row
    # is drawn (before the output is put in place)
    # the input's integer-typed columns (schema, or a CSV file's first block), read before
    # the plan: their law by default
    ints = input_integer_columns(args, src, parts, spooled, compressed, fmt)
    specs, budget = _parse_specs(args, label, ints)
    seeded = seeded_release(budget, args.seed, args.allow_seeded, opt_in="--allow-seeded",
                            what="--seed makes the noise reproducible")
    _check_output_paths(args, src if parts is None and not spooled else None, final, budget)
    t_planned = time.perf_counter()
    gen = default_rng(args.seed)
    progress = _Progress(0, "rows", _progress_enabled(args.progress) and not args.quiet)
    # the output is written into an unnamed file (where the system has them), named only
    # once its charge is committed: a crash before leaves no drawn value on disk
    staged = Staged(out_dir, f".{os.path.basename(final or 'stdout')}.")
    tmp = staged.path
    in_path = None
    spool: Staged | None = None            # a temporary copy of the input
    old = signal.signal(signal.SIGTERM, _on_sigterm) if _main_thread() else None
    try:
        if parts is not None:
            in_path = None
        else:
            if spooled:
                spool = _spool_input(src)
            in_path = spool.path if spool is not None else src
            if compressed is None and spooled:
                compressed = _magic(in_path) if _magic(in_path) in ("gzip", "zstd") else None
            if compressed is not None:     # decompressed into a temporary file first
                plain = _decompress(in_path, compressed, shown_src)
                if spool is not None:
                    spool.discard()
                spool, in_path = plain, plain.path
            if fmt is None:                # stdin or a pipe: Parquet by its magic bytes
                fmt = "parquet" if _magic(in_path) == "parquet" else "csv"
            if os.path.getsize(in_path) == 0:
                raise DataError(f"{shown_src}: empty file")
            if ints is None:               # stdin, a pipe, a compressed file: types read now
                specs = _replan(args, specs, budget, label,
                                input_integer_columns(args, in_path, None, False, None, fmt))
        assert fmt is not None
        out_fmt = out_fmt or fmt
        if fmt == "csv":
            if in_path is None:    # a directory or glob of Parquet files
                raise CLIError(f"{shown_src}: a directory or glob of input files is read as "
                               "Parquet; --format csv needs one file")
            # converted to Parquet: every column's type settled (and checked) first
            types = (parquet_types(in_path, [s.name for s in specs], args, shown_src,
                                   {s.name for s in specs if s.plan.integer})
                     if out_fmt == "parquet" else None)
            rows = _privatize_csv(args, specs, tmp, gen, progress, in_path, shown_src)
        else:
            source = parts if parts is not None else in_path
            assert source is not None
            rows = _privatize_parquet(args, specs, tmp, gen, progress, source, shown_src)
        if rows == 0 and not args.allow_empty:
            # (no row: nothing was drawn) refused before the charge, nothing written
            raise DataError(f"{shown_src}: no data rows; nothing was charged or written "
                            "(pass --allow-empty to release an empty input)")
        if out_fmt != fmt:                 # --output-format: the written file converted
            converted = _convert(staged, fmt, out_fmt, args, types if fmt == "csv" else None)
            staged.discard()
            staged, tmp = converted, converted.path
        # committed before the output is put in place: a crash after this leaves the
        # charge recorded (and no output), never output without its charge
        run_state(args).charged = charge_release(budget, [s.plan for s in specs], label,
                                                 args.release_id, seeded=seeded)
        if kind == "file":
            staged.put_in_place(final)  # type: ignore[arg-type]
        else:  # a stream: written into, never replaced
            with open(tmp, "rb") as f:
                if final is None:
                    sys.stdout.flush()
                    shutil.copyfileobj(f, sys.stdout.buffer, 1 << 20)
                    sys.stdout.buffer.flush()
                else:
                    with open(final, "wb") as out:
                        shutil.copyfileobj(f, out, 1 << 20)
            staged.discard()
    except BaseException:
        if progress.drawn:
            sys.stderr.write("\n")
        staged.discard()
        raise
    finally:
        if spool is not None:
            spool.discard()
        if old is not None:
            signal.signal(signal.SIGTERM, old)
    finally_t = time.perf_counter()
    record = release_record([s.plan for s in specs], label, args.release_id, budget, seeded)
    if args.summary_json is not None:
        for s in specs:     # the law each column was released with
            record["columns"][s.name]["law"] = s.plan.law
        record.update(**outcome(args), input=shown_src, output=shown_dst, format=fmt,
                      output_format=out_fmt, rows=rows,
                      seconds={"plan": t_planned - t_start, "draw_and_write":
                               finally_t - t_planned, "total": finally_t - t_start})
        write_json(args.summary_json, record)
    if args.quiet:
        return 0

    def say(text: str) -> None:
        print(text, file=sys.stderr)

    warning = _continuous_warning(specs)
    if warning is not None:
        say(warning)
    for s in specs:
        p = s.plan
        # counts of the private data (values present, missing, clipped) are not protected:
        # printed only on request, and labelled so
        more = (f"; not private (--show-data-counts): {s.rows:,} values released, "
                f"{s.missing:,} missing kept, {s.clipped:,} clipped into the domain"
                if args.show_data_counts else "")
        lo = -math.inf if p.lower is None else p.lower
        hi = math.inf if p.upper is None else p.upper
        where = (f"in per-row bounds [{_fmt_bound(lo)}, {_fmt_bound(hi)}]" if p.per_row
                 else f"in [{_fmt_bound(lo)}, {_fmt_bound(hi)}]")
        eps, delta = p.cost()
        dtxt = f", delta = {delta:g}" if delta else ""
        say(f"bndp: {s.name}: released {where} with epsilon = {eps:g}{dtxt}, "
            f"sensitivity = {p.sensitivity:g}: {_mechanism_label(p)}{more}")
        say(f"bndp: {s.name}: {unit_text(record['columns'][s.name])}")
        noise = record["columns"][s.name]["noise"]
        if noise is not None:
            at = " / ".join(f"{x:g}" for x in noise["at"])
            tiny = 1e-9 * max(abs(x) for x in noise["at"]) or 1e-300
            say(f"bndp: {s.name}: noise at {at}: bias "
                + " / ".join(f"{b:+.3g}" if abs(b) > tiny else "0" for b in noise["bias"])
                + ", sd "
                + " / ".join(f"{d:.3g}" for d in noise["sd"])
                + " (a bounded release pulls values toward the middle of the range)")
    if len(specs) > 1:
        costs = [s.plan.cost() for s in specs]
        te, td = sum(c[0] for c in costs), sum(c[1] for c in costs)
        say(f"bndp: {len(specs)} columns released: by sequential composition a record's total "
            f"privacy loss adds up over its columns (up to epsilon = {te:g}"
            + (f", delta = {td:g})" if td else ")"))
    if budget is not None:
        sp, rem = budget.spent, budget.remaining
        if getattr(budget, "name", None):
            say(f"bndp: recorded under budget {budget.name!r} ({budget.store})"
                + (f" as release {args.release_id!r}" if args.release_id else "")
                + (", seeded (--seed, --allow-seeded: reproducible)" if seeded else ""))
        say(f"bndp: budget epsilon = {budget.epsilon:g}, delta = {budget.delta:g}: spent "
            f"epsilon = {sp.epsilon:g}, delta = {sp.delta:g}; remaining epsilon = "
            f"{rem.epsilon:g}, delta = {rem.delta:g}")
    if rows == 0:
        say(f"bndp: {shown_src} has no data rows (--allow-empty); wrote an empty "
            f"{out_fmt} file")
    say(f"bndp: wrote {rows:,} rows to {shown_dst}")
    if args.verbose:
        say(f"bndp: format {fmt}; randomness: "
            + ("seeded (--seed: for tests only)" if args.seed is not None
               else "fresh OS entropy (cryptographically secure stream)"))
    return 0
