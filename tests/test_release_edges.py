"""Edges of a release job: an empty input (refused unless allowed, nothing charged or
written), negative numbers as option values, the Parquet types of a converted CSV, and
per-row bounds on rows whose value is missing (one rule for the API and the command line)."""

import json
import os

import numpy as np
import pytest

import bndp
from bndp import cli

pa = pytest.importorskip("pyarrow")
pq = pytest.importorskip("pyarrow.parquet")

PRIV = ["--epsilon", "1", "--sensitivity", "1"]


def run(capsys, *argv):
    code = cli.main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def write(path, text):
    with open(path, "w", newline="") as f:
        f.write(text)
    return str(path)


# ---------------------------------------------------------------------------------------
# negative numbers as the values of options
# ---------------------------------------------------------------------------------------
@pytest.mark.parametrize("lower,upper", [("-inf", "-1e-3"), ("-1e3", "-1"), ("-1000", "-.5"),
                                         ("-INF", "-1E-3")])
def test_negative_bounds_as_separate_words(tmp_path, capsys, lower, upper):
    src = write(tmp_path / "in.csv", "id,t\n1,-3\n2,-7\n")
    dst = str(tmp_path / "out.csv")
    code, _, err = run(capsys, "privatize", src, "-o", dst, "--column", "t", "--lower", lower,
                       "--upper", upper, *PRIV, "--seed", "1", "-q")
    assert code == 0, err
    got = np.array([float(line.split(",")[1]) for line in open(dst).read().split()[1:]])
    assert got.shape == (2,) and (got >= float(lower)).all() and (got <= float(upper)).all()
    # the same as the '=' spelling, which argparse always read
    dst2 = str(tmp_path / "out2.csv")
    code, _, err = run(capsys, "privatize", src, "-o", dst2, "--column", "t",
                       f"--lower={lower}", f"--upper={upper}", *PRIV, "--seed", "1", "-q")
    assert code == 0, err
    assert open(dst).read() == open(dst2).read()


def test_negative_numbers_for_calibrate_values(capsys):
    code, out, err = run(capsys, "calibrate", "--epsilon", "1", "--sensitivity", "1",
                         "--lower", "-inf", "--upper", "-2", "--value", "-5", "-1e1")
    assert code == 0, err
    assert "domain [-inf, -2]" in out
    assert any(line.split()[:1] == ["-10"] for line in out.splitlines())


def test_an_unknown_option_is_still_refused(capsys):
    # a word that is not a number stays an option (and an unknown one is an error)
    with pytest.raises(SystemExit) as e:
        cli.main(["calibrate", "--epsilon", "1", "--sensitivity", "1", "--lower", "-x",
                  "--upper", "1"])
    assert e.value.code == 2
    assert "--lower" in capsys.readouterr().err


# ---------------------------------------------------------------------------------------
# an empty input: refused (exit 3, nothing charged or written) unless --allow-empty
# ---------------------------------------------------------------------------------------
def _persistent(tmp_path, epsilon=10.0):
    store = str(tmp_path / "ledger.sqlite")
    bndp.Budget.create(store, "nightly", epsilon=epsilon)
    return store, ["--budget-store", store, "--budget-name", "nightly"]


def _spent(store):
    b = bndp.Budget.open(store, "nightly")
    return b.spent.epsilon, len(b.history)


def _empty_inputs(tmp_path):
    yield "header-only CSV", write(tmp_path / "h.csv", "id,age\n"), "o.csv"
    yield "header-only CSV, no newline", write(tmp_path / "n.csv", "id,age"), "o.csv"
    yield "header and blank lines", write(tmp_path / "b.csv", "id,age\n\n\n"), "o.csv"
    yield "header-only CSV to Parquet", str(tmp_path / "h.csv"), "o.parquet"
    src = str(tmp_path / "z.parquet")
    pq.write_table(pa.table({"id": pa.array([], pa.int64()), "age": pa.array([], pa.float64())}),
                   src)
    yield "zero-row Parquet", src, "o.parquet"
    yield "zero-row Parquet to CSV", src, "o.csv"


def test_an_empty_input_is_refused_and_charges_nothing(tmp_path, capsys):
    store, budget = _persistent(tmp_path)
    outdir = tmp_path / "out"
    outdir.mkdir()
    summary = str(tmp_path / "run.json")
    for what, src, name in _empty_inputs(tmp_path):
        dst = str(outdir / name)
        code, out, err = run(capsys, "privatize", src, "-o", dst, "--column", "age:0:120",
                             *PRIV, *budget, "--release-id", "2024-06-01")
        assert code == 3, (what, err)     # a data error
        assert err.count("\n") == 1 and err.startswith("bndp: error: "), what
        assert "no data rows" in err and "--allow-empty" in err, what
        assert os.listdir(outdir) == [], what          # nothing written
        assert _spent(store) == (0.0, 0), what         # nothing charged
    # with --allow-empty: released (an empty output) and charged once
    src = str(tmp_path / "h.csv")
    code, _, err = run(capsys, "privatize", src, "-o", str(outdir / "o.csv"), "--column",
                       "age:0:120", *PRIV, *budget, "--release-id", "2024-06-01",
                       "--allow-empty", "--summary-json", summary)
    assert code == 0, err
    assert open(outdir / "o.csv").read() == "id,age\n" and "no data rows" in err
    assert _spent(store) == (1.0, 1)
    assert json.load(open(summary))["rows"] == 0


def test_allow_empty_changes_nothing_for_an_input_with_rows(tmp_path, capsys):
    src = write(tmp_path / "in.csv", "id,age\n1,30\n")
    for extra in ([], ["--allow-empty"]):
        dst = str(tmp_path / f"o{len(extra)}.csv")
        code, _, err = run(capsys, "privatize", src, "-o", dst, "--column", "age:0:120",
                           *PRIV, "--seed", "3", *extra)
        assert code == 0, err
    assert open(tmp_path / "o0.csv").read() == open(tmp_path / "o1.csv").read()


# ---------------------------------------------------------------------------------------
# CSV to Parquet: the types of the columns, settled before anything is drawn
# ---------------------------------------------------------------------------------------
def test_header_only_csv_to_parquet_types(tmp_path, capsys):
    src = write(tmp_path / "h.csv", "id,age,lo,hi\n")
    dst = str(tmp_path / "o.parquet")
    spec = write(tmp_path / "s.toml", "[columns.age]\nlower = 'lo'\nupper = 'hi'\n"
                 "sensitivity = 1\nepsilon = 1\n")
    code, _, err = run(capsys, "privatize", src, "-o", dst, "--spec", spec, "--allow-empty")
    assert code == 0, err
    t = pq.read_table(dst)
    assert t.num_rows == 0
    # the released column as from a file with rows: the integer law's int64 (a CSV column,
    # integral sensitivity and bound columns); the copied ones text, not null
    assert t.schema.field("age").type == pa.int64()
    assert [t.schema.field(c).type for c in ("id", "lo", "hi")] == [pa.string()] * 3


def test_csv_to_parquet_types_follow_the_first_block(tmp_path, capsys):
    rows = "".join(f"{i},{i % 100},a{i}\n" for i in range(3000))
    src = write(tmp_path / "in.csv", "id,age,name\n" + rows)
    dst = str(tmp_path / "o.parquet")
    code, _, err = run(capsys, "privatize", src, "-o", dst, "--column", "age:0:120", *PRIV,
                       "--block-size", "4096")
    assert code == 0, err
    t = pq.read_table(dst)
    # (age: integer cells, integral bounds and sensitivity: the integer law, int64)
    assert [f.type for f in t.schema] == [pa.int64(), pa.int64(), pa.string()]
    assert t.column("id").to_pylist() == list(range(3000))


def test_a_copied_column_turning_to_text_is_a_data_error_before_any_draw(tmp_path, capsys,
                                                                          monkeypatch):
    # a copied integer column whose later cell is text: Parquet needs one type per column
    rows = [f"{i},{i % 100}" for i in range(5000)]
    rows[4321] = "B-17,5"
    src = write(tmp_path / "in.csv", "id,age\n" + "\n".join(rows) + "\n")
    store, budget = _persistent(tmp_path)
    draws = []
    real = bndp._release.ColumnPlan.draw
    monkeypatch.setattr(bndp._release.ColumnPlan, "draw",
                        lambda self, *a, **k: draws.append(1) or real(self, *a, **k))
    outdir = tmp_path / "out"
    outdir.mkdir()
    code, _, err = run(capsys, "privatize", src, "-o", str(outdir / "o.parquet"), "--column",
                       "age:0:120", *PRIV, *budget, "--block-size", "8192")
    assert code == 3, err              # a data error, not a usage error
    assert err.count("\n") == 1 and "column 'id'" in err and "int64" in err
    assert "B-17" not in err           # the cell is data: never quoted
    assert draws == [] and _spent(store) == (0.0, 0) and os.listdir(outdir) == []
    # a larger block sees the text cell: the column is text, and the release goes through
    code, _, err = run(capsys, "privatize", src, "-o", str(outdir / "o.parquet"), "--column",
                       "age:0:120", *PRIV, *budget, "--block-size", str(1 << 20))
    assert code == 0, err
    assert pq.read_table(outdir / "o.parquet").schema.field("id").type == pa.string()
    assert _spent(store) == (1.0, 1)


def test_one_column_csv_to_parquet_keeps_blank_rows(tmp_path, capsys):
    # a blank line of a one-column CSV is a row whose cell is missing: kept as a null
    src = write(tmp_path / "in.csv", "age\n1\n\n3\n")
    dst = str(tmp_path / "o.parquet")
    code, _, err = run(capsys, "privatize", src, "-o", dst, "--column", "age:0:10", *PRIV,
                       "--nulls", "keep")
    assert code == 0, err
    got = pq.read_table(dst).column("age").to_pylist()
    assert len(got) == 3 and got[1] is None and None not in (got[0], got[2])


# ---------------------------------------------------------------------------------------
# an empty frame: refused (ValueError, nothing charged) unless allow_empty=True
# ---------------------------------------------------------------------------------------
SPEC = {"age": {"lower": 0, "upper": 120, "sensitivity": 1, "epsilon": 0.5}}


def _empty_frames():
    pd = pytest.importorskip("pandas")
    yield pd.DataFrame({"age": pd.Series([], dtype="float64"), "id": pd.Series([], dtype="int64")})
    yield pa.table({"age": pa.array([], pa.float64()), "id": pa.array([], pa.int64())})
    try:
        import polars as pl
    except ImportError:
        return
    frame = pl.DataFrame({"age": [], "id": []}, schema={"age": pl.Float64, "id": pl.Int64})
    yield frame
    yield frame.lazy()
    # rows filtered out of a lazy frame: empty once collected
    yield pl.LazyFrame({"age": [30.0], "id": [1]}).filter(pl.col("age") > 200)


def test_an_empty_frame_is_refused_before_the_charge(tmp_path):
    store = str(tmp_path / "ledger.sqlite")
    bndp.Budget.create(store, "nightly", epsilon=10.0)
    budget = bndp.Budget.open(store, "nightly")
    for frame in _empty_frames():
        with pytest.raises(ValueError, match="has no rows; nothing was charged.*allow_empty"):
            bndp.privatize(frame, SPEC, budget=budget, release_id="2024-06-01")
        assert budget.spent.epsilon == 0.0 and budget.history == []
    # allowed: an empty frame of the same kind, the released column float64, charged once
    for k, frame in enumerate(_empty_frames()):
        out = bndp.privatize(frame, SPEC, budget=budget, release_id=f"2024-06-0{k + 1}",
                             allow_empty=True)
        assert type(out) is type(frame)
        assert budget.spent.epsilon == pytest.approx(0.5 * (k + 1))
    assert len(budget.history) == k + 1


def test_allow_empty_must_be_a_bool():
    pd = pytest.importorskip("pandas")
    with pytest.raises(TypeError, match="allow_empty"):
        bndp.privatize(pd.DataFrame({"age": [1.0]}), SPEC, allow_empty="no")


def test_an_empty_dask_frame_is_refused_before_the_charge():
    pd = pytest.importorskip("pandas")
    dd = pytest.importorskip("dask.dataframe")
    import bndp.dask

    b = bndp.Budget(epsilon=5.0)
    full = dd.from_pandas(pd.DataFrame({"age": [30.0, 41.0, 67.0]}), npartitions=2)
    for frame in (dd.from_pandas(pd.DataFrame({"age": pd.Series([], dtype="float64")}),
                                 npartitions=1),
                  full[full.age > 200]):          # every row filtered out (lazily)
        for call in (bndp.dask.privatize, bndp.privatize):
            with pytest.raises(ValueError, match="Dask DataFrame has no rows"):
                call(frame, SPEC, budget=b)
            assert b.spent.epsilon == 0.0 and b.log == []
    out = bndp.dask.privatize(full[full.age > 200], SPEC, budget=b, allow_empty=True)
    assert len(out.compute()) == 0 and b.spent.epsilon == 0.5
    out = bndp.privatize(full, SPEC, budget=b)                       # rows: unaffected
    assert len(out.compute()) == 3 and b.spent.epsilon == 1.0


# ---------------------------------------------------------------------------------------
# a missing per-row bound: read only on a row whose value is released (API and CLI alike)
# ---------------------------------------------------------------------------------------
BOUNDED = {"score": {"lower": "lo", "upper": "hi", "sensitivity": 1, "epsilon": 1,
                     "nulls": "keep"}}


def test_missing_bound_on_a_missing_value_is_accepted_by_the_api():
    pd = pytest.importorskip("pandas")
    frame = pd.DataFrame({"score": [5.0, None, 7.0], "lo": [0.0, None, 0.0],
                          "hi": [10.0, 10.0, 10.0]})
    out = bndp.privatize(frame, BOUNDED, rng=1)
    assert np.isnan(out["score"][1]) and 0 <= out["score"][0] <= 10 and 0 <= out["score"][2] <= 10
    # a missing bound on a row whose value is released: refused, naming the bound column
    frame.loc[1, "score"] = 4.0
    with pytest.raises(ValueError, match=r"bound column 'lo' is missing \(null or NaN\) at "
                                         r"row 2 .*whose value is released"):
        bndp.privatize(frame, BOUNDED, rng=1)


@pytest.mark.parametrize("fmt", ["csv", "parquet"])
def test_missing_bound_on_a_missing_value_is_accepted_by_the_cli(tmp_path, capsys, fmt):
    spec = write(tmp_path / "s.toml", "[columns.score]\nlower = 'lo'\nupper = 'hi'\n"
                 "sensitivity = 1\nepsilon = 1\nnulls = 'keep'\n")

    def source(score):
        if fmt == "csv":
            cell = "" if score is None else str(score)
            return write(tmp_path / "in.csv", f"id,score,lo,hi\n1,5,0,10\n2,{cell},,10\n"
                                              "3,7,0,10\n")
        src = str(tmp_path / "in.parquet")
        pq.write_table(pa.table({"id": [1, 2, 3], "score": [5.0, score, 7.0],
                                 "lo": [0.0, None, 0.0], "hi": [10.0, 10.0, 10.0]}), src)
        return src

    dst = str(tmp_path / f"out.{fmt}")
    code, _, err = run(capsys, "privatize", source(None), "-o", dst, "--spec", spec, "-q")
    assert code == 0, err
    got = (pq.read_table(dst).column("score").to_pylist() if fmt == "parquet" else
           [line.split(",")[1] for line in open(dst).read().split("\n")[1:4]])
    assert got[1] in (None, "") and got[0] not in (None, "") and got[2] not in (None, "")
    # the value of row 2 present: its missing bound is a data error naming the row
    os.remove(dst)
    code, _, err = run(capsys, "privatize", source(4.0), "-o", dst, "--spec", spec)
    assert code == 3 and "row 2 (data rows counted from 1), column 'lo': missing per-row " \
                         "bound" in err
    assert not os.path.exists(dst)
