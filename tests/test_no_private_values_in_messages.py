"""Errors, warnings and log records of a release name the row (or index) and the column of a
bad entry, never its value: the released values, cells that are not numbers and per-row
bounds (read from data columns) are private, and messages end up in logs, terminals and
bug reports. Public parameters (epsilon, scalar bounds, the sensitivity) may be quoted.

Each path is fed distinctive values, and every text it produces (the exception with its
chained causes, warnings, log records, stdout and stderr) is searched for the value in the
forms Python, NumPy and printf would write it."""

from __future__ import annotations

import logging
import math
import warnings

import numpy as np
import pytest

import bndp
from bndp import cli

pd = pytest.importorskip("pandas")

SECRET = 123.456789          # a released value outside [0, 100]
SECRET_LO = 987654.321       # a per-row lower bound above its upper bound
SECRET_HI = 77.7777          # a per-row upper bound (the value 80 lies above it)
SECRET_TEXT = "S3CR3T-42"    # a cell that is not a number

LAPLACE = dict(mechanism="laplace", epsilon=1.0, sensitivity=1.0)


def forms(x) -> list[str]:
    """The ways a message could show ``x``: repr, str, %g at several precisions, the
    integer part with two decimals (truncated and rounded), and the integer part."""
    if isinstance(x, str):
        return [x, x.split("-")[0]]
    out = {repr(x), str(x), repr(np.float64(x)), f"{x:g}", f"{x:.3g}", f"{x:.4g}", f"{x:.6g}",
           f"{x:e}", f"{x:.3e}"}
    if abs(x) >= 10:
        out |= {f"{x:.2f}", f"{math.floor(x * 100) / 100:.2f}", f"{x:.1f}"}
    whole = str(int(x))
    if len(whole) >= 3:
        out.add(whole)
    return sorted(out)


def texts_of(exc: BaseException | None) -> str:
    """An exception's message with those of its causes and contexts (the chain a traceback
    prints: not a context suppressed by ``raise ... from None``), and its attributes'
    values."""
    parts = []
    seen = set()
    while exc is not None and id(exc) not in seen:
        seen.add(id(exc))
        parts.append(f"{type(exc).__name__}: {exc}")
        parts.extend(repr(v) for v in vars(exc).values())
        exc = exc.__cause__ or (None if exc.__suppress_context__ else exc.__context__)
    return "\n".join(parts)


def assert_private(text: str, *secrets) -> None:
    for s in secrets:
        for f in forms(s):
            assert f not in text, f"{f!r} (a private value) appears in:\n{text}"


class Capture:
    """Runs a call, keeping its exception, warnings and the ``bndp`` logger's records."""

    def __init__(self, caplog):
        self.caplog = caplog

    def __call__(self, func, *args, **kwargs):
        self.caplog.clear()
        with self.caplog.at_level(logging.DEBUG, logger="bndp"), \
                warnings.catch_warnings(record=True) as w:
            warnings.simplefilter("always")
            try:
                func(*args, **kwargs)
            except Exception as e:   # noqa: BLE001 - every error is inspected
                exc = e
            else:
                exc = None
        self.exc = exc
        self.text = "\n".join([texts_of(exc)] + [str(x.message) for x in w]
                              + [r.getMessage() for r in self.caplog.records])
        return self


@pytest.fixture
def capture(caplog):
    return Capture(caplog)


# ---------------------------------------------------------------------------------------
# bndp.sample and the mechanisms' sample
# ---------------------------------------------------------------------------------------
@pytest.mark.parametrize("mechanism", ["laplace", "gaussian"])
@pytest.mark.parametrize("mode", ["exact", "continuous"])
def test_sample_on_outside_raise_names_the_index(capture, mechanism, mode):
    v = np.array([1.0, SECRET, 3.0])
    c = capture(bndp.sample, v, mechanism=mechanism, epsilon=1.0, sensitivity=1.0, lower=0,
                upper=100, on_outside="raise", mode=mode)
    assert isinstance(c.exc, ValueError)
    assert "at index (1,)" in str(c.exc) and "above `upper`" in str(c.exc)
    assert_private(c.text, SECRET)
    c = capture(bndp.sample, -SECRET, **LAPLACE, lower=0, upper=100, on_outside="raise")
    assert isinstance(c.exc, ValueError) and "below `lower`" in str(c.exc)
    assert_private(c.text, SECRET)


@pytest.mark.parametrize("n", [3, 70])     # (70 rows: the per-row checks' one-pass path)
def test_sample_per_row_bounds_are_not_quoted(capture, n):
    v = np.ones(n)
    lo = np.zeros(n)
    hi = np.full(n, 100.0)
    v[1], hi[1] = 80.0, SECRET_HI
    c = capture(bndp.sample, v, **LAPLACE, lower=lo, upper=hi, on_outside="raise")
    assert isinstance(c.exc, ValueError) and "at index (1,)" in str(c.exc)
    assert_private(c.text, SECRET_HI, 80.0)
    lo[1] = SECRET_LO
    c = capture(bndp.sample, np.ones(n), **LAPLACE, lower=lo, upper=hi)
    assert isinstance(c.exc, ValueError)
    assert "lower >= upper at index (1,)" in str(c.exc)
    assert_private(c.text, SECRET_LO, SECRET_HI)


@pytest.mark.parametrize("mechanism", ["laplace", "gaussian"])
def test_sample_per_row_calibration_and_grid_do_not_quote_the_bounds(capture, mechanism):
    # a width no continuous calibration covers, bounds too far from 0 for the grid law, and
    # bounds far enough out to coarsen the grid (a warning): none quotes a bound or a width
    tiny = 7.7777e-310
    c = capture(bndp.sample, [1.0, tiny / 2], mechanism=mechanism, epsilon=1.0,
                sensitivity=1e-3, lower=[0.0, 0.0], upper=[100.0, tiny], mode="continuous")
    assert isinstance(c.exc, ValueError) and "per-row bounds" in str(c.exc)
    assert_private(c.text, tiny)
    far = 1e16 + 4.0
    c = capture(bndp.sample, [far - 1, far - 1], mechanism=mechanism, epsilon=1.0,
                sensitivity=1e-3, lower=[far - 2, far - 2], upper=[far, far])
    assert isinstance(c.exc, ValueError) and "row index 0" in str(c.exc)
    assert "spaced 2^" not in str(c.exc)     # no spacing of doubles at the bounds
    assert_private(c.text, far)
    near = 100000.0 + SECRET_HI
    c = capture(bndp.sample, [near - 1, 5.0], mechanism=mechanism, epsilon=1.0,
                sensitivity=1e-10, lower=[near - 2, 0.0], upper=[near, 10.0])
    assert c.exc is None and "row index 0" in c.text   # the coarse grid's warning
    assert "granularity 2^" not in c.text and "spaced 2^" not in c.text
    assert_private(c.text, near, near - 2)


def test_mechanism_sample_does_not_quote_the_value(capture):
    for mech in (bndp.BoundedLaplace(1.0, sensitivity=1.0, lower=0, upper=100),
                 bndp.BoundedLaplace(1.0, sensitivity=1.0, lower=0, upper=100,
                                     mode="continuous"),
                 bndp.BoundedGaussian(1.0, sensitivity=1.0, lower=0, upper=100),
                 bndp.ConstrainedLaplace(1.0, sensitivity=1.0, lower=0, upper=100)):
        c = capture(mech.sample, np.array([1.0, SECRET]), on_outside="raise")
        assert isinstance(c.exc, ValueError) and "at index (1,)" in str(c.exc)
        assert_private(c.text, SECRET)
    gap = bndp.ConstrainedLaplace(1.0, sensitivity=1.0, lower=0, upper=100,
                                  forbidden=[(10, 20)])
    c = capture(gap.sample, np.array([1.0, 12.3456]))
    assert isinstance(c.exc, ValueError)
    assert "`value` at index (1,) lies in the forbidden interval (10.0, 20.0)" in str(c.exc)
    assert_private(c.text, 12.3456)


def test_entries_that_are_not_numbers_are_not_quoted(capture):
    m = bndp.BoundedLaplace(1.0, sensitivity=1.0, lower=0, upper=100)
    for call in (lambda: bndp.sample(np.array([1.0, SECRET_TEXT], dtype=object), **LAPLACE,
                                     lower=0, upper=100),
                 lambda: m.sample(np.array([[1.0, 2.0], [3.0, SECRET_TEXT]], dtype=object)),
                 lambda: bndp.sample([1.0, SECRET_TEXT], **LAPLACE, lower=0, upper=100)):
        c = capture(call)
        assert isinstance(c.exc, TypeError) and "`value` must hold real numbers" in str(c.exc)
        assert_private(c.text, SECRET_TEXT)
    c = capture(lambda: m.sample(np.array([[1.0, 2.0], [3.0, SECRET_TEXT]], dtype=object)))
    assert "found a str at index (1, 1)" in str(c.exc)
    c = capture(lambda: bndp.sample([SECRET, True], **LAPLACE, lower=0, upper=200))
    assert isinstance(c.exc, TypeError) and "not booleans" in str(c.exc)
    assert_private(c.text, SECRET)


def test_non_finite_values_are_named_by_index(capture):
    # NaN and infinities carry no information on the data's numbers: they may be named
    for bad in (np.nan, np.inf):
        c = capture(bndp.sample, np.array([SECRET - 100, bad]), **LAPLACE, lower=0, upper=100)
        assert isinstance(c.exc, ValueError) and "at index (1,)" in str(c.exc)
        assert_private(c.text, SECRET - 100)


# ---------------------------------------------------------------------------------------
# bndp.privatize on data frames
# ---------------------------------------------------------------------------------------
def _frames(d):
    out = [pd.DataFrame(d)]
    try:
        import polars as pl
        out.append(pl.DataFrame(d))
    except ImportError:
        pass
    try:
        import pyarrow as pa
        out.append(pa.table(d))
    except ImportError:
        pass
    return out


def test_privatize_outside_names_row_and_column(capture):
    spec = {"age": dict(LAPLACE, lower=0, upper=100, on_outside="raise")}
    for frame in _frames({"age": [1.0, SECRET, 3.0]}):
        c = capture(bndp.privatize, frame, spec, rng=1)
        assert isinstance(c.exc, ValueError), type(frame)
        msg = str(c.exc)
        assert "column 'age'" in msg and "row 2 (data rows counted from 1)" in msg
        assert "above its upper bound" in msg
        assert_private(c.text, SECRET)


def test_privatize_per_row_bounds_are_not_quoted(capture):
    spec = {"age": dict(LAPLACE, lower="lo", upper="hi", on_outside="raise")}
    d = {"age": [1.0, 80.0, 3.0], "lo": [0.0, 0.0, 0.0], "hi": [100.0, SECRET_HI, 100.0]}
    for frame in _frames(d):
        c = capture(bndp.privatize, frame, spec, rng=1)
        assert isinstance(c.exc, ValueError) and "row 2" in str(c.exc)
        assert c.exc.lower is None and c.exc.upper is None and c.exc.value is None
        assert_private(c.text, SECRET_HI, 80.0)
    d = {"age": [1.0, 2.0, 3.0], "lo": [0.0, SECRET_LO, 0.0], "hi": [100.0, SECRET_HI, 100.0]}
    for frame in _frames(d):
        c = capture(bndp.privatize, frame, spec, rng=1)
        assert isinstance(c.exc, ValueError)
        assert "row 2 (data rows counted from 1) has lower >= upper" in str(c.exc)
        assert_private(c.text, SECRET_LO, SECRET_HI)
    # rows whose widths no scale covers: the calibration's refusal, without the widths
    tiny = 7.7777e-310
    c = capture(bndp.privatize, pd.DataFrame({"age": [1.0, tiny / 2], "hi": [100.0, tiny]}),
                {"age": dict(LAPLACE, lower=0, upper="hi")}, rng=1)
    assert isinstance(c.exc, ValueError) and "no bounded Laplace scale" in str(c.exc)
    assert_private(c.text, tiny)


def test_privatize_infinite_value_is_named_not_quoted(capture):
    spec = {"age": dict(LAPLACE, lower=0, upper=100)}
    c = capture(bndp.privatize, pd.DataFrame({"age": [SECRET - 100, np.inf]}), spec, rng=1)
    assert isinstance(c.exc, ValueError) and "row 2" in str(c.exc) and "+inf" in str(c.exc)
    assert_private(c.text, SECRET - 100)


# ---------------------------------------------------------------------------------------
# the command line
# ---------------------------------------------------------------------------------------
def _write(path, text):
    with open(path, "w", newline="") as f:
        f.write(text)
    return str(path)


def _cli(capsys, *argv):
    code = cli.main([str(a) for a in argv])
    out, err = capsys.readouterr()
    return code, out + err


def _as(fmt, tmp_path, csv_path):
    if fmt == "csv":
        return csv_path
    pa_csv = pytest.importorskip("pyarrow.csv")
    pq = pytest.importorskip("pyarrow.parquet")
    dst = str(tmp_path / "in.parquet")
    pq.write_table(pa_csv.read_csv(csv_path), dst)
    return dst


ROWS_SPEC = ("[columns.age]\nmechanism = 'laplace'\nepsilon = 1\nsensitivity = 1\n"
             "lower = 'lo'\nupper = 'hi'\non_outside = 'raise'\n")


@pytest.mark.parametrize("fmt", ["csv", "parquet"])
@pytest.mark.parametrize("text,spec,needle,secrets", [
    (f"id,age\n1,5\n2,{SECRET}\n", None,
     "row 2 (data rows counted from 1), column 'age': the value lies outside [0, 100], above "
     "its upper bound", [SECRET]),
    (f"id,age\n1,5\n2,-{SECRET}\n", None, "below its lower bound", [SECRET]),
    (f"id,age,lo,hi\n1,5,0,100\n2,80,0,{SECRET_HI}\n", ROWS_SPEC,
     "row 2 (data rows counted from 1), column 'age': the value lies outside its per-row "
     "bounds, above its upper bound", [SECRET_HI, 80.0]),
    (f"id,age,lo,hi\n1,5,0,100\n2,5,{SECRET_LO},{SECRET_HI}\n", ROWS_SPEC,
     "row 2 (data rows counted from 1), column 'age': per-row bounds need lower < upper",
     [SECRET_LO, SECRET_HI]),
    (f"id,age\n1,{SECRET}\n2,inf\n", None, "row 2 (data rows counted from 1), column 'age': "
     "+inf is not a finite number", [SECRET]),
], ids=["above", "below", "per-row-outside", "per-row-order", "infinite"])
def test_cli_data_errors_name_row_and_column(tmp_path, capsys, fmt, text, spec, needle,
                                             secrets):
    src = _as(fmt, tmp_path, _write(tmp_path / "in.csv", text))
    if spec is None:
        args = ["--column", "age:0:100", "--epsilon", "1", "--sensitivity", "1",
                "--on-outside", "raise"]
    else:
        args = ["--spec", _write(tmp_path / "s.toml", spec)]
    code, output = _cli(capsys, "privatize", src, "-o", tmp_path / f"out.{fmt}", *args)
    assert code == 3 and needle in output
    assert_private(output.split("row 2")[-1], *secrets)   # (after the file's path)
    assert_private(output.replace(str(tmp_path), ""), *secrets)


def test_cli_cells_that_are_not_numbers_are_not_quoted(tmp_path, capsys):
    src = _write(tmp_path / "in.csv", f"id,age\n1,5\n2,{SECRET_TEXT}\n")
    code, output = _cli(capsys, "privatize", src, "-o", tmp_path / "out.csv",
                        "--column", "age:0:100", "--epsilon", "1", "--sensitivity", "1")
    assert code == 3
    assert "row 2 (data rows counted from 1), column 'age': the cell is not a number" in output
    assert_private(output, SECRET_TEXT)
    # a cell of a per-row bound column
    src = _write(tmp_path / "in2.csv", f"id,age,lo,hi\n1,5,0,100\n2,5,0,{SECRET_TEXT}\n")
    code, output = _cli(capsys, "privatize", src, "-o", tmp_path / "out2.csv",
                        "--spec", _write(tmp_path / "s.toml", ROWS_SPEC))
    assert code == 3 and "row 2 (data rows counted from 1), column 'hi'" in output
    assert_private(output, SECRET_TEXT)


def test_cli_malformed_csv_row_is_not_quoted(tmp_path, capsys):
    # Arrow quotes the whole row of a parse error: the command line leaves it out
    src = _write(tmp_path / "in.csv", f"id,age\n1,5\n2,{SECRET},{SECRET_TEXT}\n")
    code, output = _cli(capsys, "privatize", src, "-o", tmp_path / "out.csv",
                        "--column", "age:0:200", "--epsilon", "1", "--sensitivity", "1")
    assert code == 3 and "Expected 2 columns, got 3" in output
    assert_private(output, SECRET, SECRET_TEXT)


def test_cli_estimate_does_not_quote_cells_or_bounds(tmp_path, capsys):
    spec = _write(tmp_path / "s.toml", "[columns.age]\nmechanism = 'laplace'\nepsilon = 1\n"
                                       "sensitivity = 1\nlower = 0\nupper = 100\n")
    src = _write(tmp_path / "in.csv", f"age\n1\n{SECRET_TEXT}\n")
    code, output = _cli(capsys, "estimate", src, "--spec", spec)
    assert code == 3 and "not a number" in output
    assert_private(output, SECRET_TEXT)
    src = _write(tmp_path / "in2.csv", f"age\n1\n{SECRET},{SECRET_TEXT}\n")
    code, output = _cli(capsys, "estimate", src, "--spec", spec)
    assert code == 3 and "Expected 1 columns, got 2" in output
    assert_private(output, SECRET, SECRET_TEXT)
    spec = _write(tmp_path / "r.toml", "[columns.age]\nmechanism = 'laplace'\nepsilon = 1\n"
                                       "sensitivity = 1\nlower = 'lo'\nupper = 'hi'\n")
    src = _write(tmp_path / "in3.csv", f"age,lo,hi\n1,0,100\n2,{SECRET_LO},{SECRET_HI}\n")
    code, output = _cli(capsys, "estimate", src, "--spec", spec)
    assert code == 3 and "position 1 has lower >= upper" in output
    assert_private(output, SECRET_LO, SECRET_HI)


def test_estimate_per_row_bounds_are_not_quoted(capture):
    released = np.array([5.0, 6.0, 7.0])
    c = capture(bndp.estimate, released, bndp.BoundedLaplace(1.0, sensitivity=1.0, lower=0,
                                                             upper=100),
                lower=np.array([0.0, SECRET_LO, 0.0]), upper=np.array([100.0, SECRET_HI, 100.0]))
    assert isinstance(c.exc, ValueError) and "position 1 has lower >= upper" in str(c.exc)
    assert_private(c.text, SECRET_LO, SECRET_HI)
