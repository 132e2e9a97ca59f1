"""Integer data stays integer: columns, frames, the spec, the command line, Dask and Spark.

An integer column (NumPy, pandas numpy and nullable, Polars, Arrow, masked) released with
the integer law comes back with its own integer type, on the lattice ``lower + j*k``,
within its bounds, its missing entries kept; a column on the grid law comes back float64.
"""

import json
import math

import numpy as np
import pytest

import bndp
from bndp import cli

pd = pytest.importorskip("pandas")
pa = pytest.importorskip("pyarrow")

LO, HI = 0, 120
KW = dict(mechanism="laplace", epsilon=1.0, sensitivity=1, lower=LO, upper=HI)
AGES = [3, 17, 45, 45, 68, 90, 119]


def on_lattice(vals, lo=LO, hi=HI, step=1):
    v = np.asarray(vals, dtype=np.float64)
    return bool(np.all((v >= lo) & (v <= hi) & ((v - lo) % step == 0)))


# --- columns --------------------------------------------------------------------------------


@pytest.mark.parametrize("dtype", ["int8", "int16", "int32", "int64", "uint8", "uint16",
                                   "uint32", "uint64"])
def test_pandas_numpy_int_keeps_dtype(dtype):
    s = pd.Series(np.array(AGES, dtype=dtype), index=list("abcdefg"), name="age")
    out = bndp.sample(s, rng=1, **KW)
    assert isinstance(out, pd.Series)
    assert out.dtype == np.dtype(dtype)
    assert list(out.index) == list("abcdefg") and out.name == "age"
    assert on_lattice(out)


@pytest.mark.parametrize("dtype", ["Int8", "Int32", "Int64", "UInt16", "UInt64"])
def test_pandas_nullable_int_keeps_dtype_and_na(dtype):
    s = pd.Series([3, None, 45, 119, None], dtype=dtype)
    out = bndp.sample(s, rng=2, nulls="keep", **KW)
    assert str(out.dtype) == dtype
    assert out.isna().tolist() == [False, True, False, False, True]
    assert on_lattice(out.dropna().to_numpy())


def test_all_missing_integer_columns_keep_their_type():
    # no entry to draw for: the type is still the integer law's (0.9.0 gave Float64)
    pl = pytest.importorskip("polars")
    out = bndp.sample(pd.Series([None, None], dtype="Int32"), nulls="keep", **KW)
    assert str(out.dtype) == "Int32" and out.isna().all()
    out = bndp.sample(pl.Series([None, None], dtype=pl.Int16), nulls="keep", **KW)
    assert out.dtype == pl.Int16 and out.null_count() == 2
    out = bndp.sample(pa.array([None, None], type=pa.int32()), nulls="keep", **KW)
    assert out.type == pa.int32() and out.null_count == 2
    out = bndp.sample(np.ma.masked_array([1, 2], mask=[True, True]), nulls="keep", **KW)
    assert out.dtype.kind == "i" and out.mask.all()
    # the grid law (floats) and float columns stay floats
    out = bndp.sample(pd.Series([None, None], dtype="Int32"), nulls="keep", integer=False,
                      **KW)
    assert str(out.dtype) == "Float64"
    out = bndp.sample(pd.Series([None, None], dtype="Float32"), nulls="keep", **KW)
    assert str(out.dtype).startswith("Float")


def test_pandas_nullable_without_missing_keeps_dtype():
    out = bndp.sample(pd.Series([3, 4, 5], dtype="Int16"), rng=3, **KW)
    assert str(out.dtype) == "Int16"


def test_narrow_dtype_widened_where_the_lattice_does_not_fit():
    # bounds [0, 300] do not fit uint8: the result is 64-bit (as the sampler widens)
    s = pd.Series(np.array([3, 200, 255], dtype=np.uint8))
    out = bndp.sample(s, rng=4, mechanism="laplace", epsilon=1.0, sensitivity=1,
                      lower=0, upper=300)
    assert out.dtype == np.dtype(np.int64)
    assert on_lattice(out, 0, 300)


def test_grid_law_still_float64():
    s = pd.Series(np.array(AGES, dtype=np.int32))
    out = bndp.sample(s, rng=5, integer=False, **KW)
    assert out.dtype == np.float64
    n = pd.Series([3, None], dtype="Int32")
    assert str(bndp.sample(n, rng=5, integer=False, nulls="keep", **KW).dtype) == "Float64"


def test_mechanism_sample_keeps_dtype():
    mech = bndp.BoundedLaplace(1.0, sensitivity=1, lower=LO, upper=HI, integer=True)
    out = mech.sample(pd.Series(np.array(AGES, dtype=np.int16)), rng=6)
    assert out.dtype == np.int16 and on_lattice(out)
    off = bndp.BoundedLaplace(1.0, sensitivity=1, lower=LO, upper=HI)
    assert off.sample(pd.Series(np.array(AGES, dtype=np.int16)), rng=6).dtype == np.float64


def test_lattice_step():
    s = pd.Series(np.array(AGES, dtype=np.int32))
    out = bndp.sample(s, rng=7, integer=4, mechanism="laplace", epsilon=1.0, sensitivity=4,
                      lower=0, upper=120)
    assert out.dtype == np.int32 and on_lattice(out, step=4)


def test_per_row_bound_columns_as_their_numpy_arrays():
    v = np.array([3, 7, 12, 40], dtype=np.int32)
    lo, hi = np.array([0, 0, 10, 30]), np.array([10, 10, 20, 50])
    want = bndp.sample(v, mechanism="laplace", epsilon=1.0, sensitivity=1, lower=lo,
                       upper=hi, rng=13)
    got = bndp.sample(pd.Series(v), mechanism="laplace", epsilon=1.0, sensitivity=1,
                      lower=pd.Series(lo), upper=pd.Series(hi), rng=13)
    assert got.dtype == want.dtype
    np.testing.assert_array_equal(got.to_numpy(), want)


def test_numpy_int_with_nulls_keep():
    out = bndp.sample(np.array(AGES, dtype=np.int32), rng=8, nulls="keep", **KW)
    assert isinstance(out, np.ndarray) and out.dtype == np.int32 and on_lattice(out)


def test_masked_int_array():
    x = np.ma.MaskedArray(np.array(AGES, dtype=np.int32),
                          mask=[False, True, False, False, False, True, False])
    out = bndp.sample(x, rng=9, nulls="keep", **KW)
    assert isinstance(out, np.ma.MaskedArray) and out.dtype == np.int32
    assert np.ma.getmaskarray(out).tolist() == np.ma.getmaskarray(x).tolist()
    assert (np.ma.getdata(out)[np.ma.getmaskarray(x)] == 0).all()   # not the hidden values
    assert on_lattice(out.compressed())


@pytest.mark.parametrize("t", ["int8", "int32", "uint32", "int64"])
def test_arrow_array_keeps_type(t):
    arr = pa.array([3, None, 45, 119], type=getattr(pa, t)())
    out = bndp.sample(arr, rng=10, nulls="keep", **KW)
    assert isinstance(out, pa.Array) and out.type == getattr(pa, t)()
    assert out.is_null().to_pylist() == [False, True, False, False]
    assert on_lattice([v for v in out.to_pylist() if v is not None])


def test_arrow_chunked_array_keeps_type_and_chunks():
    arr = pa.chunked_array([pa.array([3, 4], pa.int32()), pa.array([None, 119, 60], pa.int32())])
    out = bndp.sample(arr, rng=11, nulls="keep", **KW)
    assert isinstance(out, pa.ChunkedArray) and out.type == pa.int32()
    assert [len(c) for c in out.chunks] == [2, 3]
    assert out.is_null().to_pylist() == [False, False, True, False, False]


def test_polars_series_keeps_type_and_nulls():
    pl = pytest.importorskip("polars")
    s = pl.Series("age", [3, None, 45, 119], dtype=pl.Int32)
    out = bndp.sample(s, rng=12, nulls="keep", **KW)
    assert isinstance(out, pl.Series) and out.dtype == pl.Int32 and out.name == "age"
    assert out.is_null().to_list() == [False, True, False, False]
    assert on_lattice(out.drop_nulls().to_numpy())
    f = bndp.sample(s, rng=12, nulls="keep", integer=False, **KW)
    assert f.dtype == pl.Float64


# --- frames and the spec ------------------------------------------------------------------

SPEC = {"age": {"lower": 0, "upper": 120, "sensitivity": 1, "epsilon": 1.0}}


def test_frame_pandas_keeps_integer_columns():
    df = pd.DataFrame({"age": np.array(AGES, dtype=np.int32), "x": np.arange(7.0),
                       "n": pd.array([1, None, 3, 4, 5, 6, 7], dtype="Int16")})
    spec = {**SPEC, "x": {"lower": 0, "upper": 10, "sensitivity": 1, "epsilon": 1.0},
            "n": {"lower": 0, "upper": 10, "sensitivity": 1, "epsilon": 1.0, "nulls": "keep"}}
    out = bndp.privatize(df, spec, rng=1)
    assert out["age"].dtype == np.int32 and on_lattice(out["age"])
    assert out["x"].dtype == np.float64
    assert str(out["n"].dtype) == "Int16" and out["n"].isna().tolist()[1]
    assert on_lattice(out["n"].dropna().to_numpy(), 0, 10)


def test_frame_spec_integer_key():
    df = pd.DataFrame({"age": np.array(AGES, dtype=np.int32), "x": np.arange(7.0) * 10})
    off = bndp.privatize(df, {"age": {**SPEC["age"], "integer": False}}, rng=2)
    assert off["age"].dtype == np.float64
    on = bndp.privatize(df, {"x": {**SPEC["age"], "integer": True}}, rng=2)
    assert on["x"].dtype == np.float64 and on_lattice(on["x"])   # float data: integral floats
    step = bndp.privatize(df, {"age": {**SPEC["age"], "sensitivity": 2, "integer": 2}}, rng=2)
    assert step["age"].dtype == np.int32 and on_lattice(step["age"], step=2)


def test_frame_auto_needs_integral_bounds_and_sensitivity():
    df = pd.DataFrame({"age": np.array(AGES, dtype=np.int32)})
    for entry in ({"upper": 120.5}, {"sensitivity": 0.5}, {"mode": "continuous"}):
        out = bndp.privatize(df, {"age": {**SPEC["age"], **entry}}, rng=3)
        assert out["age"].dtype == np.float64


def test_frame_auto_falls_back_to_the_grid_where_the_lattice_cannot_be_planned():
    df = pd.DataFrame({"inc": np.array([3, 7, 12, 40], dtype=np.int64),
                       "big": np.full(4, 2 ** 60, dtype=np.int64)})
    spec = {"inc": {"lower": 0, "upper": 10 ** 9, "sensitivity": 10 ** 6, "epsilon": 1.0},
            "big": {"lower": 2 ** 60, "upper": 2 ** 60 + 2 ** 22, "sensitivity": 4096,
                    "epsilon": 0.05}}
    # a lattice of step 1 far too fine for the noise; bounds beyond 2^52: the grid law
    out = bndp.privatize(df, spec, rng=9)
    assert out["inc"].dtype == np.float64 and out["big"].dtype == np.float64
    with pytest.raises(ValueError, match="too fine"):     # asked for: refused, not replaced
        bndp.privatize(df, {"inc": {**spec["inc"], "integer": True}}, rng=9)


@pytest.mark.parametrize("bad, exc", [("yes", TypeError), (1.0, TypeError), (2 ** 53, ValueError),
                                      (0, ValueError), (-2, ValueError)])
def test_spec_integer_key_validated(bad, exc):
    df = pd.DataFrame({"age": np.array(AGES, dtype=np.int32)})
    with pytest.raises(exc, match="integer"):
        bndp.privatize(df, {"age": {**SPEC["age"], "integer": bad}}, rng=4)


def test_spec_integer_true_needs_integral_bounds():
    df = pd.DataFrame({"age": np.array(AGES, dtype=np.int32)})
    with pytest.raises(ValueError, match="age"):
        bndp.privatize(df, {"age": {**SPEC["age"], "upper": 120.5, "integer": True}}, rng=5)


def test_frame_per_row_bounds_integer_by_their_type():
    df = pd.DataFrame({"v": np.array([3, 7, 12, 40], dtype=np.int32),
                       "lo": [0, 0, 10, 30], "hi": [10, 10, 20, 50]})
    spec = {"v": {"lower": "lo", "upper": "hi", "sensitivity": 1, "epsilon": 1.0}}
    # per-row bounds are data: their type decides, never their values (integral floats
    # do not choose the integer law)
    out = bndp.privatize(df, spec, rng=1)["v"]
    assert out.dtype == np.int64        # (per-row bounds: the lattice's width is the data's)
    assert ((out >= df["lo"]) & (out <= df["hi"])).all()
    dff = df.astype({"lo": np.float64, "hi": np.float64})
    assert bndp.privatize(dff, spec, rng=1)["v"].dtype == np.float64
    out = bndp.privatize(dff, {"v": {**spec["v"], "integer": True}}, rng=1)["v"]
    assert out.dtype == np.int64
    assert bndp.privatize(df, {"v": {**spec["v"], "integer": False}},
                          rng=1)["v"].dtype == np.float64


def test_frame_arrow_and_polars():
    t = pa.table({"age": pa.array(AGES, pa.int32()), "id": pa.array(range(7), pa.int64())})
    out = bndp.privatize(t, SPEC, rng=6)
    assert out.schema.field("age").type == pa.int32()
    assert out.column("id").to_pylist() == list(range(7))
    assert on_lattice(out.column("age").to_numpy())
    pl = pytest.importorskip("polars")
    df = pl.DataFrame({"age": pl.Series([3, None, 45, 119], dtype=pl.UInt16)})
    spec = {"age": {**SPEC["age"], "nulls": "keep"}}
    for frame in (df, df.lazy()):
        res = bndp.privatize(frame, spec, rng=7)
        res = res.collect() if isinstance(res, pl.LazyFrame) else res
        assert res["age"].dtype == pl.UInt16
        assert res["age"].is_null().to_list() == [False, True, False, False]


def test_frame_budget_charges_at_most_epsilon():
    df = pd.DataFrame({"age": np.array(AGES, dtype=np.int32)})
    budget = bndp.Budget(epsilon=2.0)
    bndp.privatize(df, SPEC, budget=budget, rng=8, allow_seeded=True)
    assert budget.spent.epsilon <= 1.0 + 1e-12


def test_dask_keeps_integer_columns():
    dd = pytest.importorskip("dask.dataframe")
    import bndp.dask

    pdf = pd.DataFrame({"age": np.array(AGES, dtype=np.int32),
                        "n": pd.array([1, None, 3, 4, 5, 6, 7], dtype="Int16")})
    ddf = dd.from_pandas(pdf, npartitions=2)
    spec = {**SPEC, "n": {"lower": 0, "upper": 10, "sensitivity": 1, "epsilon": 1.0,
                          "nulls": "keep"}}
    out = bndp.dask.privatize(ddf, spec)
    assert out.dtypes["age"] == np.int32 and str(out.dtypes["n"]) == "Int16"
    res = out.compute()
    assert res["age"].dtype == np.int32 and on_lattice(res["age"])
    assert str(res["n"].dtype) == "Int16" and res["n"].isna().tolist()[1]


# --- the command line -----------------------------------------------------------------------


def run(capsys, *argv):
    code = cli.main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def test_cli_parquet_int32_ages_stay_int32(tmp_path, capsys):
    pq = pytest.importorskip("pyarrow.parquet")
    src, dst, summ = tmp_path / "in.parquet", tmp_path / "out.parquet", tmp_path / "s.json"
    ages = np.array([0, 7, 18, 33, 33, 50, 64, 81, 99, 120] * 20, dtype=np.int32)
    pq.write_table(pa.table({"age": ages, "name": [f"p{i}" for i in range(ages.size)]}), src)
    code, _, err = run(capsys, "privatize", str(src), "-o", str(dst), "--column", "age:0:120",
                       "--epsilon", "1", "--sensitivity", "1", "--summary-json", str(summ))
    assert code == 0, err
    out = pq.read_table(dst)
    assert out.schema.field("age").type == pa.int32()
    assert out.column("name").to_pylist() == [f"p{i}" for i in range(ages.size)]
    assert on_lattice(out.column("age").to_numpy())
    rec = json.loads(summ.read_text())
    col = rec["columns"]["age"]
    assert col["law"] == "integer"
    assert col["certified_loss"] is not None and col["certified_loss"] <= 1.0 + 1e-12
    assert "integer law" in err


def test_cli_parquet_no_integer_is_float(tmp_path, capsys):
    pq = pytest.importorskip("pyarrow.parquet")
    src, dst = tmp_path / "in.parquet", tmp_path / "out.parquet"
    pq.write_table(pa.table({"age": pa.array(AGES, pa.int32())}), src)
    code, _, err = run(capsys, "privatize", str(src), "-o", str(dst), "--column", "age:0:120",
                       "--epsilon", "1", "--sensitivity", "1", "--no-integer")
    assert code == 0, err
    assert pq.read_table(dst).schema.field("age").type == pa.float64()
    assert "grid law" in err


def test_cli_csv_integer_cells_come_back_integers(tmp_path, capsys):
    src, dst = tmp_path / "in.csv", tmp_path / "out.csv"
    src.write_text("age,score\n" + "".join(f"{a},{a / 4}\n" for a in AGES) + ",1.5\n")
    code, _, err = run(capsys, "privatize", str(src), "-o", str(dst), "--column", "age:0:120",
                       "--column", "score:0:120", "--epsilon", "1", "--sensitivity", "1",
                       "--nulls", "keep")
    assert code == 0, err
    lines = dst.read_text().splitlines()[1:]
    ages = [ln.split(",")[0] for ln in lines]
    assert ages[-1] == ""                                   # the missing cell stays empty
    assert all(a.lstrip("-").isdigit() for a in ages[:-1])  # integer text, no ".0"
    assert on_lattice([int(a) for a in ages[:-1]])
    # a CSV has no types and its cells never choose the law (a law chosen from them would
    # show whether a cell held a fraction): the column of fractions takes the integer law
    # too, its values rounded to the lattice, its cells integers
    scores = [ln.split(",")[1] for ln in lines]
    assert all(c.lstrip("-").isdigit() for c in scores)
    assert err.count("integer law") == 2 and "grid law" not in err
    # one cell changed from an integer to a fraction: the same law, the same form
    src.write_text("age,score\n" + "".join(f"{a},{a}\n" for a in AGES) + ",1.5\n")
    code, _, err2 = run(capsys, "privatize", str(src), "-o", str(dst), "--column",
                        "age:0:120", "--column", "score:0:120", "--epsilon", "1",
                        "--sensitivity", "1", "--nulls", "keep")
    assert code == 0 and err2.count("integer law") == 2
    # the grid law on request
    code, _, err3 = run(capsys, "privatize", str(src), "-o", str(dst), "--column",
                        "score:0:120", "--epsilon", "1", "--sensitivity", "1", "--nulls", "keep",
                        "--no-integer")
    assert code == 0 and "grid law" in err3


def test_cli_spec_file_integer_key(tmp_path, capsys):
    src, dst, spec = tmp_path / "in.csv", tmp_path / "out.csv", tmp_path / "spec.toml"
    src.write_text("age\n" + "".join(f"{a}\n" for a in AGES))
    spec.write_text('[columns.age]\nlower = 0\nupper = 120\nsensitivity = 1\nepsilon = 1\n'
                    'integer = false\n')
    code, _, err = run(capsys, "privatize", str(src), "-o", str(dst), "--spec", str(spec))
    assert code == 0, err
    assert "grid law" in err
    code, _, err = run(capsys, "privatize", str(src), "-o", str(dst), "--spec", str(spec),
                       "--integer")
    assert code != 0 and "--integer" in err


def test_cli_integer_step(tmp_path, capsys):
    src, dst = tmp_path / "in.csv", tmp_path / "out.csv"
    src.write_text("x\n" + "".join(f"{a / 3}\n" for a in AGES))    # not integers
    code, _, err = run(capsys, "privatize", str(src), "-o", str(dst), "--column", "x:0:120",
                       "--epsilon", "1", "--sensitivity", "2", "--integer-step", "2")
    assert code == 0, err
    vals = [int(v) for v in dst.read_text().splitlines()[1:]]
    assert on_lattice(vals, step=2)
    code, _, err = run(capsys, "privatize", str(src), "-o", str(dst), "--column", "x:0:120",
                       "--epsilon", "1", "--sensitivity", "3", "--integer-step", "3")
    assert code == 0, err
    vals = [int(v) for v in dst.read_text().splitlines()[1:]]
    assert on_lattice(vals, step=3)
    for bad in ("0", "-3", "2.5"):
        with pytest.raises(SystemExit):
            cli.main(["privatize", str(src), "-o", str(dst), "--column", "x:0:120",
                      "--epsilon", "1", "--sensitivity", "1", "--integer-step", bad])


def test_spark_keeps_integer_columns(monkeypatch):
    pytest.importorskip("pyspark")
    from .conftest import worker_env

    worker_env(monkeypatch.setenv)    # (the executors must import this bndp)
    from pyspark.sql import SparkSession
    from pyspark.sql.types import IntegerType, LongType, StructField, StructType

    import bndp.spark

    spark = SparkSession.builder.master("local[1]").getOrCreate()
    schema = StructType([StructField("id", LongType()), StructField("age", IntegerType())])
    sdf = spark.createDataFrame([(i, a) for i, a in enumerate(AGES)], schema)
    out = bndp.spark.privatize(sdf, SPEC)
    assert dict(out.dtypes)["age"] == "int"
    rows = out.orderBy("id").collect()
    assert [r.id for r in rows] == list(range(len(AGES)))
    assert on_lattice([r.age for r in rows])
    assert math.isfinite(float(rows[0].age))
