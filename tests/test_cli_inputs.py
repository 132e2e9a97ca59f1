"""Inputs as pipelines produce them: Parquet on stdin told by its magic bytes, gzip and
zstd CSV, a directory or glob of Parquet files (what Spark and Dask write), and an output
format of its own (--output-format)."""

from __future__ import annotations

import gzip
import subprocess
import sys

import numpy as np
import pytest

pa = pytest.importorskip("pyarrow")
pq = pytest.importorskip("pyarrow.parquet")

ARGS = ["--column", "age:0:120", "--mechanism", "laplace", "--epsilon", "1",
        "--sensitivity", "1", "--seed", "7", "-q"]
CSV = "age,id\n23,a\n41,b\n67,c\n"


def run(*args, stdin=None, cwd=None):
    return subprocess.run([sys.executable, "-m", "bndp", "privatize", *args, *ARGS],
                          input=stdin, capture_output=True, cwd=cwd)


def _table():
    return pa.table({"age": [23.0, 41.0, 67.0], "id": ["a", "b", "c"]})


def _released(path):
    if str(path).endswith(".parquet"):
        return pq.read_table(path)["age"].to_numpy()
    return np.loadtxt(path, delimiter=",", skiprows=1, usecols=0)


def test_parquet_on_stdin_without_format(tmp_path):
    pq.write_table(_table(), tmp_path / "in.parquet")
    r = run("-", "-o", str(tmp_path / "out.parquet"),
            stdin=(tmp_path / "in.parquet").read_bytes())
    assert r.returncode == 0, r.stderr
    ref = run(str(tmp_path / "in.parquet"), "-o", str(tmp_path / "ref.parquet"))
    assert ref.returncode == 0
    np.testing.assert_array_equal(_released(tmp_path / "out.parquet"),
                                  _released(tmp_path / "ref.parquet"))


@pytest.mark.parametrize("codec", ["gzip", "zstd"])
def test_compressed_csv(tmp_path, codec):
    (tmp_path / "in.csv").write_text(CSV)
    if codec == "gzip":
        data = gzip.compress(CSV.encode())
        name = "in.csv.gz"
    else:
        with pa.output_stream(str(tmp_path / "in.csv.zst"), compression="zstd") as s:
            s.write(CSV.encode())
        data = (tmp_path / "in.csv.zst").read_bytes()
        name = "in.csv.zst"
    (tmp_path / name).write_bytes(data)
    ref = run(str(tmp_path / "in.csv"), "-o", str(tmp_path / "ref.csv"))
    assert ref.returncode == 0, ref.stderr
    for i, (args, stdin) in enumerate([((str(tmp_path / name),), None), (("-",), data)]):
        r = run(*args, "-o", str(tmp_path / f"out{i}.csv"), stdin=stdin)
        assert r.returncode == 0, r.stderr
        assert (tmp_path / f"out{i}.csv").read_text() == (tmp_path / "ref.csv").read_text()


def test_parquet_directory_and_glob(tmp_path):
    d = tmp_path / "part"
    d.mkdir()
    t = _table()
    pq.write_table(t.slice(0, 2), d / "part-0.parquet")
    pq.write_table(t.slice(2), d / "part-1.parquet")
    (d / "_SUCCESS").write_text("")
    pq.write_table(t, tmp_path / "whole.parquet")
    ref = run(str(tmp_path / "whole.parquet"), "-o", str(tmp_path / "ref.parquet"))
    assert ref.returncode == 0, ref.stderr
    for i, src in enumerate([str(d), str(d / "*.parquet")]):
        r = run(src, "-o", str(tmp_path / f"out{i}.parquet"))
        assert r.returncode == 0, r.stderr
        out = pq.read_table(tmp_path / f"out{i}.parquet")
        assert out["id"].to_pylist() == ["a", "b", "c"]
        np.testing.assert_array_equal(out["age"].to_numpy(),
                                      _released(tmp_path / "ref.parquet"))
    r = run(str(tmp_path / "nothing-*.parquet"), "-o", str(tmp_path / "x.parquet"))
    assert r.returncode != 0 and b"no file matches" in r.stderr


def test_output_format(tmp_path):
    (tmp_path / "in.csv").write_text(CSV)
    ref = run(str(tmp_path / "in.csv"), "-o", str(tmp_path / "ref.csv"))
    assert ref.returncode == 0
    r = run(str(tmp_path / "in.csv"), "-o", str(tmp_path / "out.parquet"))
    assert r.returncode == 0, r.stderr
    out = pq.read_table(tmp_path / "out.parquet")
    # integer cells, integral bounds and sensitivity: the integer law, written as integers
    assert out.schema.field("age").type == pa.int64()
    np.testing.assert_array_equal(out["age"].to_numpy(), _released(tmp_path / "ref.csv"))
    r = run(str(tmp_path / "in.csv"), "-o", str(tmp_path / "out.dat"),
            "--output-format", "parquet")
    assert r.returncode == 0 and (tmp_path / "out.dat").read_bytes()[:4] == b"PAR1"
    # (integer ages in Parquet: the law of the CSV's integer cells)
    pq.write_table(pa.table({"age": pa.array([23, 41, 67], pa.int64()), "id": ["a", "b", "c"]}),
                   tmp_path / "in.parquet")
    r = run(str(tmp_path / "in.parquet"), "-o", str(tmp_path / "back.csv"))
    assert r.returncode == 0, r.stderr
    np.testing.assert_array_equal(_released(tmp_path / "back.csv"),
                                  _released(tmp_path / "ref.csv"))
