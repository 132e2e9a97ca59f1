"""The ``bndp`` command line: privatize (CSV, Parquet), calibrate, plot, errors, atomicity."""

import csv
import math
import io
import os
import signal
import struct
import subprocess
import sys
import textwrap
import time

import numpy as np
import pytest

import bndp
from bndp import cli

pa = pytest.importorskip("pyarrow")
pq = pytest.importorskip("pyarrow.parquet")

from ._helpers import assert_independent_streams, grid_counts  # noqa: E402
from .conftest import bndp_import_root  # noqa: E402

SRC = bndp_import_root()  # where this run imports bndp from (src/ or site-packages)
LAP = bndp.BoundedLaplace(1.0, sensitivity=1.0, lower=0.0, upper=120.0)

PRIV = ["--epsilon", "1", "--sensitivity", "1"]


def run(capsys, *argv):
    code = cli.main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def env():
    e = dict(os.environ)
    e["PYTHONPATH"] = SRC + os.pathsep + e.get("PYTHONPATH", "")
    return e


def write(path, text):
    with open(path, "w", newline="") as f:
        f.write(text)
    return str(path)


def listing(d):
    return sorted(os.listdir(d))


# ---------------------------------------------------------------------------------------
# help
# ---------------------------------------------------------------------------------------
def test_help_is_complete(capsys):
    with pytest.raises(SystemExit) as e:
        cli.main(["privatize", "--help"])
    assert e.value.code == 0
    out = capsys.readouterr().out
    for opt in ("--output", "--column", "--lower", "--upper", "--epsilon", "--sensitivity",
                "--mechanism", "--delta", "--nulls", "--on-outside", "--format", "--progress",
                "--workers", "--seed", "--block-size", "--batch-rows", "--delimiter", "--mode"):
        assert opt in out, opt
    for sub, opts in (("calibrate", ("--value", "--reference-delta", "--mode")),
                      ("plot", ("--output", "--value", "--dpi")), ("demo", ("--seed",))):
        with pytest.raises(SystemExit):
            cli.main([sub, "--help"])
        text = capsys.readouterr().out
        assert all(o in text for o in opts)
    code, out, _ = run(capsys)
    assert code == 2 and all(c in out for c in ("privatize", "calibrate", "plot", "demo"))


# ---------------------------------------------------------------------------------------
# privatize: CSV
# ---------------------------------------------------------------------------------------
CSV_IN = textwrap.dedent('''\
    id,age,name,note
    1,30,"Smith, J","said ""hi"""
    2,44.5,Doe,
    3,200,Roe,x
    4,-3,"Line, two",y
    ''')


def test_csv_released_column_in_bounds_other_cells_verbatim(tmp_path, capsys):
    src = write(tmp_path / "in.csv", CSV_IN)
    dst = str(tmp_path / "out.csv")
    code, out, err = run(capsys, "privatize", src, "-o", dst, "--column", "age", "--lower", "0",
                         "--upper", "120", *PRIV, "--seed", "1")
    assert code == 0, err
    with open(dst, newline="") as f:
        got = list(csv.reader(f))
    want = list(csv.reader(io.StringIO(CSV_IN)))
    assert got[0] == want[0]
    assert [[r[0], r[2], r[3]] for r in got[1:]] == [[r[0], r[2], r[3]] for r in want[1:]]
    ages = np.array([float(r[1]) for r in got[1:]])
    assert ((ages >= 0) & (ages <= 120)).all()
    # a CSV column (no types) with integral bounds and sensitivity: the integer law, its
    # cells never consulted (44.5 is rounded to the lattice like every true value); the
    # written values are lattice points, written as integers
    lap = bndp.BoundedLaplace(float(PRIV[1]), sensitivity=float(PRIV[3]), lower=0.0,
                              upper=120.0, integer=True)
    grid_counts(lap.exact_plan, ages)
    assert all(r[1].lstrip("-").isdigit() for r in got[1:])
    # the cells that need no quoting are written bare, as the csv module does
    assert open(dst).read().splitlines()[2].startswith("2,") and ",Doe," in open(dst).read()
    # one-line summary with the calibrated scale; how many values were clipped is a count
    # of the private data, left out
    assert f"scale b = {lap.scale:.6g}" in err and "integer law" in err
    assert "clipped" not in err
    assert "wrote 4 rows" in err and out == ""
    assert listing(tmp_path) == ["in.csv", "out.csv"]


def test_csv_seed_reproducible_and_matches_the_mechanism(tmp_path, capsys):
    n = 20000
    src = write(tmp_path / "in.csv", "v\n" + "60\n" * n)
    outs = []
    for k in range(2):
        dst = str(tmp_path / f"o{k}.csv")
        assert run(capsys, "privatize", src, "-o", dst, "--column", "v:0:120", *PRIV,
                   "--seed", "5")[0] == 0
        outs.append(np.loadtxt(dst, skiprows=1))
    np.testing.assert_array_equal(outs[0], outs[1])
    x = outs[0]
    # cells of integers, integral bounds and sensitivity: the integer law
    lap = bndp.BoundedLaplace(1.0, sensitivity=1.0, lower=0.0, upper=120.0, integer=True)
    v = lap.variance(60.0)
    assert abs(x.mean() - 60.0) < 5 * np.sqrt(v / n)
    # Laplace sample variance: sd of s^2 is ~ v*sqrt(5/n) (kurtosis 6): 5 sd ~ 0.079 v
    assert abs(x.var() - v) < 0.08 * v
    # the values written are the mechanism's draws for the same seed (shortest round-trip text)
    np.testing.assert_array_equal(x, lap.sample(np.full(n, 60.0), rng=5))


def test_csv_several_columns_in_one_pass(tmp_path, capsys):
    src = write(tmp_path / "in.csv", "a,b,c\n1,100,x\n2,200,y\n3,300,z\n")
    dst = str(tmp_path / "out.csv")
    code, out, err = run(capsys, "privatize", src, "-o", dst, "--column", "a:0:5",
                         "--column", "b:0:1000", *PRIV, "--mechanism", "gaussian")
    assert code == 0, err
    rows = list(csv.DictReader(open(dst)))
    a = np.array([float(r["a"]) for r in rows])
    b = np.array([float(r["b"]) for r in rows])
    assert ((a >= 0) & (a <= 5)).all() and ((b >= 0) & (b <= 1000)).all()
    assert [r["c"] for r in rows] == ["x", "y", "z"]
    assert err.count("bounded Gaussian sigma") == 2 and "up to epsilon = 2" in err
    # (integer cells, integral bounds and sensitivity: the integer law's sigma)
    s5 = bndp.BoundedGaussian(1, sensitivity=1, lower=0, upper=5, integer=True).sigma
    assert f"sigma = {s5:.6g}" in err and err.count("integer law") == 2


def test_csv_nulls_keep_and_tab_delimiter(tmp_path, capsys):
    src = write(tmp_path / "in.tsv", "k\tv\na\t1\nb\t\nc\t3\n")
    dst = str(tmp_path / "out.tsv")
    code, out, err = run(capsys, "privatize", src, "-o", dst, "--column", "v:0:10", *PRIV,
                         "--delimiter", "tab", "--nulls", "keep")
    assert code == 0, err
    lines = open(dst).read().splitlines()
    assert lines[0] == "k\tv" and lines[2] == "b\t" and lines[1].startswith("a\t")
    assert "missing" not in err and "clipped" not in err   # counts of the private data
    code, out, err = run(capsys, "privatize", src, "-o", dst, "--column", "v:0:10", *PRIV,
                         "--delimiter", "tab", "--nulls", "keep", "--show-data-counts")
    assert code == 0, err
    assert "not private" in err and "1 missing kept" in err


def test_header_only_csv_gives_header_only_output(tmp_path, capsys):
    src = write(tmp_path / "in.csv", "id,age\n")
    dst = str(tmp_path / "out.csv")
    code, _, err = run(capsys, "privatize", src, "-o", dst, "--column", "age:0:1", *PRIV,
                       "--allow-empty")    # (refused without it: a data error)
    assert code == 0 and open(dst).read() == "id,age\n" and "no data rows" in err


# ---------------------------------------------------------------------------------------
# privatize: Parquet
# ---------------------------------------------------------------------------------------
def test_parquet_schema_preserved(tmp_path, capsys):
    t = pa.table({
        "id": pa.array(range(1000), pa.int32()),
        "age": pa.array([float(i % 100) if i % 7 else None for i in range(1000)], pa.float32()),
        "n": pa.array(range(1000), pa.int16()),
        "city": pa.array(["p", "b"] * 500, pa.string()),
        "when": pa.array(np.arange(1000).astype("datetime64[s]")),
    }, metadata={b"owner": b"me"})
    src = str(tmp_path / "in.parquet")
    pq.write_table(t, src, row_group_size=300)
    dst = str(tmp_path / "out.parquet")
    code, out, err = run(capsys, "privatize", src, "-o", dst, "--column", "age:0:100",
                         "--column", "n:0:1000", *PRIV, "--nulls", "keep", "--batch-rows", "128")
    assert code == 0, err
    t = pq.read_table(src)  # as stored (Parquet keeps timestamps in ms at least)
    r = pq.read_table(dst)
    assert r.schema.names == t.schema.names and r.schema.metadata == t.schema.metadata
    for name in ("id", "city", "when"):
        assert r.schema.field(name) == t.schema.field(name)
        assert r.column(name).equals(t.column(name))
    assert r.schema.field("age").type == pa.float64()
    # an int16 column with integral bounds and sensitivity: the integer law keeps its type
    assert r.schema.field("n").type == pa.int16()
    age = r.column("age").to_numpy(zero_copy_only=False)
    assert r.column("age").null_count == t.column("age").null_count == 143
    assert np.array_equal(np.isnan(age), t.column("age").is_null().to_numpy(zero_copy_only=False))
    assert np.nanmin(age) >= 0 and np.nanmax(age) <= 100
    assert "143" not in err


def test_parquet_null_raises_naming_row(tmp_path, capsys):
    src = str(tmp_path / "in.parquet")
    pq.write_table(pa.table({"x": pa.array([1.0, 2.0, None, 4.0])}), src)
    code, _, err = run(capsys, "privatize", src, "-o", str(tmp_path / "o.parquet"),
                       "--column", "x:0:5", *PRIV)
    assert code == 3 and "row 3" in err and "'x'" in err and "missing" in err
    assert listing(tmp_path) == ["in.parquet"]


def test_parquet_string_column_refused(tmp_path, capsys):
    src = str(tmp_path / "in.parquet")
    pq.write_table(pa.table({"x": ["a"]}), src)
    code, _, err = run(capsys, "privatize", src, "-o", str(tmp_path / "o.parquet"),
                       "--column", "x:0:5", *PRIV)
    assert code == 3 and "must be numeric" in err


# ---------------------------------------------------------------------------------------
# errors: one line, non-zero exit, nothing written
# ---------------------------------------------------------------------------------------
@pytest.mark.parametrize("text,argv,needle,status", [
    ("id,age\n1,30\n2,3x\n3,4\n", [], "row 2 (data rows counted from 1), column 'age': the cell is not a number", 3),
    ("id,age\n1,30\n2,\n", [], "row 2 (data rows counted from 1), column 'age': missing value", 3),
    ("id,age\n1,inf\n", [], "row 1 (data rows counted from 1), column 'age': +inf is not a finite number", 3),
    ("id,age\n1,30\n2,130\n", ["--on-outside", "raise"], "row 2 (data rows counted from 1), column 'age': the value lies outside [0, 120], above its upper bound", 3),
    ("", [], "empty file", 3),
    ("id,height\n1,2\n", [], "column 'age' not found; columns are: id, height", 3),
    ("id,age\n1,2\n", ["--mechanism", "gaussian", "--delta", "0.1"], "delta must be 0", 2),
    ("id,age\n1,2\n", ["--epsilon", "-1"], "`epsilon`", 2),
    ("id,age,age\n1,2,3\n", [], "duplicate column", 3),
])
def test_errors_are_one_line(tmp_path, capsys, text, argv, needle, status):
    src = write(tmp_path / "in.csv", text)
    code, out, err = run(capsys, "privatize", src, "-o", str(tmp_path / "out.csv"),
                         "--column", "age", "--lower", "0", "--upper", "120", *PRIV, *argv)
    assert code == status  # 2: usage error, 3: data error (a cell, the format, the schema)
    assert err.count("\n") == 1 and err.startswith("bndp: error: ") and "Traceback" not in err
    assert needle in err
    assert listing(tmp_path) == ["in.csv"]  # no output, no temporary file


def test_malformed_cell_found_in_a_later_chunk(tmp_path, capsys):
    rows = [f"{i},{i % 100}" for i in range(50000)]
    rows[43210] = "43210,forty"
    src = write(tmp_path / "in.csv", "id,age\n" + "\n".join(rows) + "\n")
    code, _, err = run(capsys, "privatize", src, "-o", str(tmp_path / "out.csv"),
                       "--column", "age:0:120", *PRIV, "--block-size", "65536")
    # the row and column are named, the cell's text is not (it is data)
    assert code == 3 and "row 43,211" in err and "column 'age': the cell is not a number" in err
    assert "forty" not in err


def test_refuses_to_write_over_the_input(tmp_path, capsys):
    src = write(tmp_path / "in.csv", "age\n1\n")
    before = open(src).read()
    os.link(src, tmp_path / "hard.csv")
    os.symlink(src, tmp_path / "sym.csv")
    for dst in (src, str(tmp_path / "." / "in.csv"), str(tmp_path / "hard.csv"),
                str(tmp_path / "sym.csv")):
        code, _, err = run(capsys, "privatize", src, "-o", dst, "--column", "age:0:2", *PRIV)
        assert code == 2 and "refusing to write over the input" in err
    assert open(src).read() == before
    assert listing(tmp_path) == ["hard.csv", "in.csv", "sym.csv"]


def test_format_errors(tmp_path, capsys):
    src = write(tmp_path / "in.data", "age\n1\n")
    code, _, err = run(capsys, "privatize", src, "-o", str(tmp_path / "o.data"),
                       "--column", "age:0:2", *PRIV)
    assert code == 2 and "--format" in err
    src = write(tmp_path / "in.csv", "age\n1\n")
    # an output named .parquet is written as Parquet (tests/test_cli_inputs.py)
    code, _, err = run(capsys, "privatize", str(tmp_path / "nope.csv"), "-o",
                       str(tmp_path / "o.csv"), "--column", "age:0:2", *PRIV)
    assert code == 1 and "no such file" in err  # an I/O error
    code, _, err = run(capsys, "privatize", src, "-o", str(tmp_path / "o.csv"),
                       "--column", "age", *PRIV)
    assert code == 2 and "has no bounds" in err
    pq_bad = write(tmp_path / "bad.parquet", "not parquet at all")
    code, _, err = run(capsys, "privatize", pq_bad, "-o", str(tmp_path / "o2.parquet"),
                       "--column", "age:0:2", *PRIV)
    assert code == 3 and "cannot read as Parquet" in err and err.count("\n") == 1


def test_console_script_entry_point_and_progress_bar(tmp_path):
    src = write(tmp_path / "in.csv", "age\n" + "5\n" * 1000)
    r = subprocess.run([sys.executable, "-m", "bndp", "privatize", src, "-o",
                        str(tmp_path / "o.csv"), "--column", "age:0:10", *PRIV, "--progress",
                        "always"], capture_output=True, text=True, env=env(), timeout=120)
    assert r.returncode == 0, r.stderr
    assert "100.0%" in r.stderr and "1,000 rows" in r.stderr and "rows/s" in r.stderr
    r = subprocess.run([sys.executable, "-m", "bndp", "privatize", src, "-o",
                        str(tmp_path / "o.csv"), "--column", "nope:0:1", *PRIV],
                       capture_output=True, text=True, env=env(), timeout=120)
    assert r.returncode == 3 and r.stderr.count("\n") == 1 and "Traceback" not in r.stderr


# ---------------------------------------------------------------------------------------
# big file: bounded memory, and killing a run midway
# ---------------------------------------------------------------------------------------
N_ROWS = 2_000_000
CHUNK = 100_000


@pytest.fixture(scope="module")
def big_csv(tmp_path_factory):
    """2 million rows, ~270 bytes a row (~540 MB), written as 20 copies of one chunk."""
    rng = np.random.default_rng(0)
    ages = rng.integers(0, 121, CHUNK)
    pad = "p" * 240
    body = "".join(f"{i},{a},{pad}\n" for i, a in enumerate(ages)).encode()
    path = tmp_path_factory.mktemp("big") / "big.csv"
    with open(path, "wb") as f:
        f.write(b"id,age,pad\n")
        for _ in range(N_ROWS // CHUNK):
            f.write(body)
    yield str(path)
    os.unlink(path)


PEAK = textwrap.dedent('''\
    import resource, subprocess, sys
    r = subprocess.run(sys.argv[1:], stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    print(r.returncode, resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss * 1024)
    sys.stderr.write(r.stderr.decode())
    ''')


def peak_rss(argv):
    r = subprocess.run([sys.executable, "-c", PEAK, *argv], capture_output=True, text=True,
                       env=env(), timeout=600)
    code, peak = map(int, r.stdout.split())
    return code, peak, r.stderr


def test_two_million_rows_in_bounded_memory(big_csv, tmp_path):
    size = os.path.getsize(big_csv)
    assert size > 450e6
    base = [sys.executable, "-m", "bndp", "privatize"]
    small = write(tmp_path / "small.csv", "id,age,pad\n1,2,x\n")
    code, peak_small, err = peak_rss(base + [small, "-o", str(tmp_path / "s.csv"),
                                             "--column", "age:0:120", *PRIV])
    assert code == 0, err
    dst = str(tmp_path / "big_out.csv")
    code, peak, err = peak_rss(base + [big_csv, "-o", dst, "--column", "age:0:120", *PRIV,
                                       "--no-integer"])
    assert code == 0, err
    # the whole process (interpreter, NumPy, SciPy, Arrow) stays well below the file size,
    # and what the data adds on top of a 1-row run is a small fraction of it
    assert peak < 0.5 * size, (peak, size)
    assert peak - peak_small < 0.25 * size, (peak, peak_small, size)
    with open(dst, "rb") as f:
        f.seek(-4096, os.SEEK_END)
        last = f.read().splitlines()[-1].split(b",")
    assert last[0] == str(CHUNK - 1).encode() and 0 <= float(last[1]) <= 120
    assert os.path.getsize(dst) > size  # every row written (released ages are longer text)
    os.unlink(dst)


def _staged_output(pid, directory):
    """The file a running ``bndp privatize`` writes its output into, in ``directory``: an
    unnamed file (``/proc/PID/fd/N``, where the system has them) or a hidden one."""
    named = [n for n in os.listdir(directory) if n.endswith(".bndp-partial")]
    if named:
        return os.path.join(directory, named[0])
    try:
        fds = os.listdir(f"/proc/{pid}/fd")
    except OSError:
        return None
    for fd in fds:
        try:
            target = os.readlink(f"/proc/{pid}/fd/{fd}")
        except OSError:
            continue
        if target.startswith(str(directory) + "/#"):  # an O_TMPFILE file: "dir/#inode"
            return f"/proc/{pid}/fd/{fd}"
    return None


@pytest.mark.parametrize("sig,code", [(signal.SIGTERM, 143), (signal.SIGINT, 130),
                                      (signal.SIGKILL, -9)])
def test_killed_midway_leaves_no_output(big_csv, tmp_path, sig, code):
    st = os.stat(big_csv)
    dst = tmp_path / "out.csv"
    # a shell runs background jobs with SIGINT ignored, and the child inherits that: give
    # the CLI the default disposition, as in a terminal where Ctrl-C is pressed
    p = subprocess.Popen([sys.executable, "-m", "bndp", "privatize", big_csv, "-o", str(dst),
                          "--column", "age:0:120", *PRIV], env=env(),
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                         preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL))
    deadline = time.monotonic() + 120
    staged = None
    while time.monotonic() < deadline and p.poll() is None:
        staged = _staged_output(p.pid, tmp_path)
        if staged is not None and os.path.getsize(staged) > 20_000_000:
            break
        time.sleep(0.05)
    assert p.poll() is None, "the run finished before it could be interrupted"
    assert staged is not None
    unnamed = staged.startswith("/proc/")
    assert unnamed or os.path.basename(staged).startswith(".out.csv.")
    p.send_signal(sig)
    _, err = p.communicate(timeout=60)
    assert p.returncode == code
    assert not dst.exists()  # never a half-written output under the final name
    if sig != signal.SIGKILL or unnamed:
        assert os.listdir(tmp_path) == []  # nothing of the drawn values is left
    if sig != signal.SIGKILL:
        assert b"no output was written" in err and b"Traceback" not in err
    st2 = os.stat(big_csv)
    assert (st2.st_size, st2.st_mtime_ns) == (st.st_size, st.st_mtime_ns)


# ---------------------------------------------------------------------------------------
# calibrate, plot, demo
# ---------------------------------------------------------------------------------------
def test_calibrate_prints_scales_and_variances(capsys):
    code, out, _ = run(capsys, "calibrate", *PRIV, "--lower", "0", "--upper", "120",
                       "--value", "0", "60")
    assert code == 0
    assert f"calibrated b = {LAP.scale:.10g}" in out
    assert "unbounded  b = 1 " in out
    lines = out.strip().splitlines()
    row0 = lines[-2].split()
    assert float(row0[0]) == 0 and abs(float(row0[1]) - LAP.variance(0.0)) < 1e-5 * LAP.variance(0.0)
    assert float(row0[2]) == 2.0  # 2 b^2 of the unbounded Laplace
    g = bndp.BoundedGaussian(0.5, sensitivity=1.0, lower=0.0, upper=120.0)
    code, out, _ = run(capsys, "calibrate", "--mechanism", "gaussian", "--epsilon", "0.5",
                       "--sensitivity", "1", "--lower", "0", "--upper", "120")
    assert code == 0 and f"calibrated sigma = {g.sigma:.10g}" in out
    # classical Gaussian mechanism at delta = 1e-5: sqrt(2 ln(1.25e5))/0.5 = 9.689610525
    assert "unbounded  sigma = 9.68961052" in out
    code, _, err = run(capsys, "calibrate", *PRIV, "--lower", "1", "--upper", "0")
    assert code == 2 and "`lower` must be < `upper`" in err


def _png_size(path):
    with open(path, "rb") as f:
        head = f.read(24)
    assert head[:8] == b"\x89PNG\r\n\x1a\n" and head[12:16] == b"IHDR"
    return struct.unpack(">II", head[16:24])


@pytest.mark.parametrize("mech", ["laplace", "gaussian"])
def test_plot_writes_a_png(tmp_path, capsys, mech):
    pytest.importorskip("matplotlib")
    out = str(tmp_path / "density.png")
    code, text, err = run(capsys, "plot", "--mechanism", mech, *PRIV, "--lower", "0",
                          "--upper", "10", "-o", out, "--width", "8", "--height", "4",
                          "--dpi", "80")
    assert code == 0, err
    assert _png_size(out) == (640, 320)
    assert os.path.getsize(out) > 20_000  # curves and labels, not a blank canvas
    import matplotlib.image as mpimg

    img = mpimg.imread(out)
    assert img.shape[:2] == (320, 640) and img[..., :3].std() > 0.05
    assert listing(tmp_path) == ["density.png"]
    code, _, err = run(capsys, "plot", *PRIV, "--lower", "0", "--upper", "10", "-o",
                       str(tmp_path / "x.txt"))
    assert code == 2 and ".png" in err


def test_demo_runs(capsys):
    code, out, _ = run(capsys, "demo", "--seed", "1")
    assert code == 0 and "bounded Laplace" in out and "bounded Gaussian" in out


def test_csv_cells_with_spaces_parse_and_workers_option(tmp_path, capsys):
    src = write(tmp_path / "in.csv", "a,b\n 1 ,x\n2\t,y\n")
    dst = str(tmp_path / "out.csv")
    code, _, err = run(capsys, "privatize", src, "-o", dst, "--column", "a:0:5", *PRIV,
                       "--workers", "2", "--seed", "3")
    assert code == 0, err
    got = np.loadtxt(dst, delimiter=",", skiprows=1, usecols=0)
    # (integer cells: the integer law)
    np.testing.assert_array_equal(got, bndp.BoundedLaplace(1, sensitivity=1, lower=0, upper=5,
                                                           integer=True).sample([1.0, 2.0],
                                                                                rng=3))


# ---------------------------------------------------------------------------------------
# release spec (TOML, JSON), budget, stdin/stdout, exit codes
# ---------------------------------------------------------------------------------------
SPEC_CSV = "id,age,income,lo,hi,score\n" + "".join(
    f"{i},{20 + i % 60},{1000 * i},{(i % 3) * 10},{(i % 3) * 10 + 5},{(i % 3) * 10 + 1}\n"
    for i in range(300))
SPEC_TOML = textwrap.dedent("""\
    [budget]
    epsilon = 1.0

    [columns.age]
    lower = 0
    upper = 120
    sensitivity = 1
    epsilon = 0.25

    [columns.income]
    mechanism = "gaussian"
    lower = 0
    upper = 500000
    sensitivity = 1000
    epsilon = 0.5

    [columns.score]
    lower = "lo"
    upper = "hi"
    sensitivity = 1
    epsilon = 0.25
    """)
SPEC_JSON = """{"budget": {"epsilon": 1.0},
 "columns": {"age": {"lower": 0, "upper": 120, "sensitivity": 1, "epsilon": 0.25},
             "income": {"mechanism": "gaussian", "lower": 0, "upper": 500000,
                        "sensitivity": 1000, "epsilon": 0.5},
             "score": {"lower": "lo", "upper": "hi", "sensitivity": 1, "epsilon": 0.25}}}"""


_SPEC_LAWS = []


def spec_laws():
    """``{column: [(plan, true value) per row]}`` of the release SPEC_TOML/SPEC_JSON make
    of SPEC_CSV (every column of a CSV counts as integer-typed, so with integral bounds
    (or bound columns) and sensitivity each takes the integer law; score's per-row bounds
    planned per (lo, hi) pair)."""
    if not _SPEC_LAWS:
        i = np.arange(300)
        age = bndp.BoundedLaplace(0.25, sensitivity=1.0, lower=0.0, upper=120.0,
                                  integer=True).exact_plan
        inc = bndp.BoundedGaussian(0.5, sensitivity=1000.0, lower=0.0, upper=500000.0,
                                   integer=True).exact_plan
        bands = [bndp.BoundedLaplace(0.25, sensitivity=1.0, lower=10.0 * k,
                                     upper=10.0 * k + 5, integer=True).exact_plan
                 for k in range(3)]
        _SPEC_LAWS.append({"age": [(age, 20.0 + k % 60) for k in i],
                           "income": [(inc, 1000.0 * k) for k in i],
                           "score": [(bands[k % 3], 10.0 * (k % 3) + 1) for k in i]})
    return _SPEC_LAWS[0]


def check_spec_output(text):
    """Check a release of SPEC_CSV by SPEC_TOML; return its released columns."""
    rows = list(csv.reader(io.StringIO(text)))
    assert rows[0] == ["id", "age", "income", "lo", "hi", "score"] and len(rows) == 301
    src = list(csv.reader(io.StringIO(SPEC_CSV)))
    for r, s in zip(rows[1:], src[1:]):
        assert [r[0], r[3], r[4]] == [s[0], s[3], s[4]]  # untouched cells verbatim
        assert 0 <= float(r[1]) <= 120
        assert 0 <= float(r[2]) <= 500000  # its own bounds, not age's
        assert float(s[3]) <= float(r[5]) <= float(s[4])  # per-row bounds
    assert max(float(r[2]) for r in rows[1:]) > 1000
    # each cell parses back to a point of its column's grid (written without rounding);
    # the grid law repeats values, so what must not repeat is the noise: rows i and i + 120
    # (same true age, same score bounds) agree only as often as independent draws do
    laws = spec_laws()
    got = {c: np.array([float(r[j]) for r in rows[1:]])
           for j, c in ((1, "age"), (2, "income"), (5, "score"))}
    for c, x in got.items():
        for plan in {id(p): p for p, _ in laws[c]}.values():
            grid_counts(plan, x[[p is plan for p, _ in laws[c]]])
    for c in ("age", "score"):
        assert_independent_streams(got[c][:120], got[c][120:240], laws[c][:120],
                                   laws[c][120:240])
    return got


@pytest.mark.parametrize("fmt", ["toml", "json"])
def test_spec_file_toml_and_json(tmp_path, capsys, fmt):
    src = write(tmp_path / "in.csv", SPEC_CSV)
    spec = write(tmp_path / f"release.{fmt}", SPEC_TOML if fmt == "toml" else SPEC_JSON)
    dst = str(tmp_path / "out.csv")
    code, out, err = run(capsys, "privatize", src, "-o", dst, "--spec", spec)
    assert code == 0, err
    assert out == ""  # the summary goes to stderr
    first = check_spec_output(open(dst).read())
    assert "age: released in [0, 120] with epsilon = 0.25" in err
    assert "income: released in [0, 500000] with epsilon = 0.5" in err
    assert "score: released in per-row bounds ['lo', 'hi']" in err
    assert "up to epsilon = 1)" in err and "remaining epsilon = 0," in err
    code, out, err = run(capsys, "privatize", src, "-o", str(tmp_path / "q.csv"), "--spec", spec,
                         "-q")
    assert code == 0 and out == "" and err == ""
    # a second run (no --seed) is a new release: its own stream, not the first one's again
    second = check_spec_output(open(tmp_path / "q.csv").read())
    laws = spec_laws()
    for c in ("age", "income", "score"):
        assert_independent_streams(first[c], second[c], laws[c], laws[c])


def test_spec_budget_exceeded_exit_4_nothing_written(tmp_path, capsys):
    src = write(tmp_path / "in.csv", SPEC_CSV)
    spec = write(tmp_path / "r.toml", SPEC_TOML.replace("epsilon = 1.0", "epsilon = 0.9"))
    code, out, err = run(capsys, "privatize", src, "-o", str(tmp_path / "out.csv"), "--spec", spec)
    assert code == 4 and "exceed the privacy budget" in err and err.count("\n") == 1
    assert listing(tmp_path) == ["in.csv", "r.toml"]


@pytest.mark.parametrize("fmt", ["csv", "parquet"])
@pytest.mark.parametrize("where", ["draw", "per-row planning"])
def test_failure_after_the_data_checks_charges_nothing(tmp_path, capsys, monkeypatch, fmt, where):
    # the budget is checked before reading and charged only once every row is drawn (issue
    # 21, item 7): a release that fails while planning or drawing charges nothing
    import bndp.mechanisms.rows
    from bndp._release import ColumnPlan

    src = write(tmp_path / "in.csv", SPEC_CSV)
    if fmt == "parquet":
        import pyarrow.csv as pcsv

        pq.write_table(pcsv.read_csv(src), str(tmp_path / "in.parquet"))
        os.unlink(src)
        src = str(tmp_path / "in.parquet")
    spec = write(tmp_path / "r.toml", SPEC_TOML)
    charges = []
    real_charge = bndp.Budget.charge

    def spy(self, *a, **k):
        charges.append(k.get("label"))
        return real_charge(self, *a, **k)

    monkeypatch.setattr(bndp.Budget, "charge", spy)

    def boom(*a, **k):
        raise ValueError("planted failure")

    if where == "draw":
        real_draw = ColumnPlan.draw
        monkeypatch.setattr(ColumnPlan, "draw", lambda self, *a, **k: boom() if
                            self.name == "income" else real_draw(self, *a, **k))
    else:
        monkeypatch.setattr(bndp.mechanisms.rows, "_grid_rows", boom)
    dst = str(tmp_path / f"out.{fmt}")
    code, out, err = run(capsys, "privatize", src, "-o", dst, "--spec", spec)
    assert code == 3 and "planted failure" in err and err.count("\n") == 1
    assert charges == [] and not os.path.exists(dst)
    monkeypatch.undo()
    monkeypatch.setattr(bndp.Budget, "charge", spy)
    code, out, err = run(capsys, "privatize", src, "-o", dst, "--spec", spec)
    assert code == 0, err
    assert charges == [f"bndp privatize {src}"] and os.path.exists(dst)


@pytest.mark.parametrize("text,needle", [
    ("[columns.age]\nlower = 0\nupper = 120\nsensitivity = 1\n", "column 'age', key 'epsilon'"),
    ("[columns.age]\nlower = 0\nupper = 120\nsensitivity = 1\nepsilon = 1\nbogus = 2\n",
     "column 'age', key 'bogus'"),
    ("[colums.age]\nlower = 0\n", "unknown top-level key 'colums'"),
    ("[columns.age\n", "not valid TOML"),
])
def test_spec_errors_are_usage_errors(tmp_path, capsys, text, needle):
    src = write(tmp_path / "in.csv", SPEC_CSV)
    spec = write(tmp_path / "r.toml", text)
    code, _, err = run(capsys, "privatize", src, "-o", str(tmp_path / "out.csv"), "--spec", spec)
    assert code == 2 and needle in err and err.count("\n") == 1
    assert listing(tmp_path) == ["in.csv", "r.toml"]


def test_stdin_to_stdout_pipeline(tmp_path):
    src = write(tmp_path / "in.csv", SPEC_CSV)
    spec = write(tmp_path / "release.toml", SPEC_TOML)
    cmd = (f"cat {src} | {sys.executable} -m bndp privatize - -o - --spec {spec} "
           f"> {tmp_path / 'out.csv'}")
    r = subprocess.run(cmd, shell=True, capture_output=True, text=True, env=env(), timeout=120)
    assert r.returncode == 0, r.stderr
    check_spec_output(open(tmp_path / "out.csv").read())
    assert "wrote 300 rows to <stdout>" in r.stderr
    r = subprocess.run([sys.executable, "-m", "bndp", "privatize", "-", "-o", "-", "--column",
                        "age:0:120", *PRIV], input=SPEC_CSV, capture_output=True, text=True,
                       env=env(), timeout=120)
    assert r.returncode == 0, r.stderr
    assert len(list(csv.reader(io.StringIO(r.stdout)))) == 301


def test_version_and_exit_codes_in_help(capsys):
    with pytest.raises(SystemExit) as e:
        cli.main(["--version"])
    assert e.value.code == 0 and capsys.readouterr().out.strip() == f"bndp {bndp.__version__}"
    with pytest.raises(SystemExit):
        cli.main(["privatize", "--help"])
    text = " ".join(capsys.readouterr().out.split())
    for needle in ("--spec", "-q", "-v", "2 usage error", "3 data error", "'-' reads stdin"):
        assert needle in text, needle


# ---------------------------------------------------------------------------------------
# --mode: the grid law by default, the continuous law as an explicit opt-in
# ---------------------------------------------------------------------------------------
MODE_CSV = "id,v\n" + "".join(f"{i},{(7 * i) % 120}\n" for i in range(400))
MODE_TRUE = np.array([(7.0 * i) % 120 for i in range(400)])


def _mode_mech(mechanism, mode):
    cls = bndp.BoundedLaplace if mechanism == "laplace" else bndp.BoundedGaussian
    return cls(1.0, sensitivity=1.0, lower=0.0, upper=120.0, mode=mode)


def _released(path):
    return np.array([float(r["v"]) for r in csv.DictReader(open(path, newline=""))])


@pytest.mark.parametrize("mechanism", ["laplace", "gaussian"])
def test_mode_flag_grid_by_default_continuous_on_request(tmp_path, capsys, mechanism):
    src = write(tmp_path / "in.csv", MODE_CSV)
    # (--no-integer: integer cells would take the integer law by default)
    base = ["privatize", src, "--column", "v:0:120", *PRIV, "--mechanism", mechanism,
            "--seed", "11", "--no-integer"]
    exact, cont = _mode_mech(mechanism, "exact"), _mode_mech(mechanism, "continuous")
    plan = exact.exact_plan
    got = {}
    for mode in (None, "exact", "continuous"):
        dst = str(tmp_path / f"out-{mode}.csv")
        code, out, err = run(capsys, *base, "-o", dst, *(["--mode", mode] if mode else []))
        assert code == 0, err
        got[mode] = _released(dst)
        assert ((got[mode] >= 0) & (got[mode] <= 120)).all()
        # the summary gives the scale of the law released
        scale = (cont if mode == "continuous" else exact).scale
        assert f"= {scale:.6g}" in err
        warned = [ln for ln in err.splitlines() if "warning" in ln]
        if mode == "continuous":
            assert warned == ["bndp: warning: column 'v' released in mode continuous: raw "
                              "doubles, attackable when published (see docs/threat_model.md; "
                              "the default mode exact is not)"]
        else:
            assert warned == []
    # the default and --mode exact: the grid law, every value a multiple of 2^e read back
    # exactly, and the mechanism's own draws for the same seed
    grid_counts(plan, got[None])
    np.testing.assert_array_equal(got[None], got["exact"])
    np.testing.assert_array_equal(got[None], exact.sample(MODE_TRUE, rng=11))
    # --mode continuous: the continuous law's draws, not restricted to the grid (nor to any
    # coarse power of two)
    np.testing.assert_array_equal(got["continuous"], cont.sample(MODE_TRUE, rng=11))
    with pytest.raises(AssertionError):
        grid_counts(plan, got["continuous"])
    on_grid = np.ldexp(got["continuous"], -plan.exponent) % 1 == 0
    assert on_grid.sum() <= 2
    assert len(np.unique(got["continuous"])) == got["continuous"].size
    assert (np.ldexp(got["continuous"], 20) % 1 != 0).mean() > 0.99
    # -q silences the warning with the rest of the summary
    code, out, err = run(capsys, *base, "-o", str(tmp_path / "q.csv"), "--mode", "continuous",
                         "-q")
    assert code == 0 and out == "" and err == ""


def test_mode_flag_bad_value_is_a_usage_error(tmp_path, capsys):
    src = write(tmp_path / "in.csv", MODE_CSV)
    choices = "(choose from 'exact', 'continuous')"
    for bad, hint in (("grid", choices), ("Exact", "(did you mean 'exact'?)"), ("", choices)):
        with pytest.raises(SystemExit) as e:
            cli.main(["privatize", src, "-o", str(tmp_path / "o.csv"), "--column", "v:0:120",
                      *PRIV, "--mode", bad])
        assert e.value.code == 2
        err = capsys.readouterr().err
        assert err == f"bndp: error: --mode: invalid choice {bad!r} {hint}\n"
    with pytest.raises(SystemExit) as e:
        cli.main(["calibrate", *PRIV, "--lower", "0", "--upper", "1", "--mode", "grid"])
    assert e.value.code == 2
    assert capsys.readouterr().err == f"bndp: error: --mode: invalid choice 'grid' {choices}\n"
    assert listing(tmp_path) == ["in.csv"]


@pytest.mark.parametrize("mode", ["exact", "continuous"])
def test_mode_flag_with_spec_is_refused(tmp_path, capsys, mode):
    src = write(tmp_path / "in.csv", SPEC_CSV)
    spec = write(tmp_path / "r.toml", SPEC_TOML)
    code, out, err = run(capsys, "privatize", src, "-o", str(tmp_path / "out.csv"), "--spec",
                         spec, "--mode", mode)
    assert code == 2 and out == "" and err.count("\n") == 1
    assert err.startswith("bndp: error: --mode applies to --column; with --spec set each "
                          "column's mode in the spec file")
    assert listing(tmp_path) == ["in.csv", "r.toml"]


def test_spec_mode_continuous_warns_too(tmp_path, capsys):
    src = write(tmp_path / "in.csv", MODE_CSV)
    spec = write(tmp_path / "r.toml", '[columns.v]\nlower = 0\nupper = 120\nsensitivity = 1\n'
                 'epsilon = 1\nmode = "continuous"\n\n[columns.id]\nlower = 0\n'
                 'upper = 400\nsensitivity = 1\nepsilon = 1\n')
    dst = str(tmp_path / "out.csv")
    code, _, err = run(capsys, "privatize", src, "-o", dst, "--spec", spec, "--seed", "3")
    assert code == 0, err
    assert "bndp: warning: column 'v' released in mode continuous" in err  # not 'id'
    assert err.count("warning") == 1
    x = _released(dst)
    with pytest.raises(AssertionError):
        grid_counts(_mode_mech("laplace", "exact").exact_plan, x)
    code, _, err = run(capsys, "privatize", src, "-o", dst, "--spec", spec, "-q")
    assert code == 0 and err == ""


def test_half_line_column_is_released_on_the_grid_by_default(tmp_path, capsys):
    src = write(tmp_path / "in.csv", MODE_CSV)
    argv = ["privatize", src, "-o", str(tmp_path / "o.csv"), "--column", "v:0:inf", *PRIV]
    code, _, err = run(capsys, *argv, "--seed", "2")
    assert code == 0, err
    x = _released(tmp_path / "o.csv")
    plan = bndp.BoundedLaplace(1.0, sensitivity=1.0, lower=0.0, upper=math.inf).exact_plan
    assert (x >= 0).all() and (np.ldexp(x, -plan.exponent) % 1 == 0).all()
    code, _, err = run(capsys, *argv, "--mode", "continuous", "--seed", "2")
    assert code == 0, err
    assert "released in [0, inf]" in err and "mode continuous" in err
    assert (_released(tmp_path / "o.csv") >= 0).all()


def test_calibrate_reports_the_law_of_the_mode(capsys):
    for mech in ("laplace", "gaussian"):
        sym = "b" if mech == "laplace" else "sigma"
        exact, cont = _mode_mech(mech, "exact"), _mode_mech(mech, "continuous")
        assert exact.scale != cont.scale
        base = ["calibrate", *PRIV, "--lower", "0", "--upper", "120", "--mechanism", mech,
                "--value", "0"]
        for argv, m, law in ((base, exact, "grid law"),
                             (base + ["--mode", "exact"], exact, "grid law"),
                             (base + ["--mode", "continuous"], cont, "continuous law")):
            code, out, _ = run(capsys, *argv)
            assert code == 0
            assert f"calibrated {sym} = {m.scale:.10g}   ({law}" in out
            row = out.strip().splitlines()[-1].split()
            assert abs(float(row[1]) - m.variance(0.0)) < 1e-5 * m.variance(0.0)
    # a half-line, in both modes: the default values are its end and points inside
    for extra in ([], ["--mode", "continuous"]):
        code, out, _ = run(capsys, "calibrate", *PRIV, "--lower", "0", "--upper", "inf", *extra)
        assert code == 0 and "nan" not in out and "inf  " not in out
        assert [float(r.split()[0]) for r in out.strip().splitlines()[-3:]] == [0.0, 1.0, 10.0]


# ---------------------------------------------------------------------------------------
# defects: outputs that are links or streams, CSV edge cases, argument errors
# ---------------------------------------------------------------------------------------
def test_output_symlink_is_written_through(tmp_path, capsys):
    src = write(tmp_path / "in.csv", "age\n5\n6\n")
    target = write(tmp_path / "target.csv", "")
    link = tmp_path / "link.csv"
    os.symlink(target, link)
    code, _, err = run(capsys, "privatize", src, "-o", str(link), "--column", "age:0:10", *PRIV)
    assert code == 0, err
    assert os.path.islink(link) and os.readlink(link) == target  # still a link
    assert open(target).read().startswith("age\n") and len(open(target).read().split()) == 3


def test_output_fifo_is_a_stream(tmp_path, capsys):
    import threading

    src = write(tmp_path / "in.csv", "age\n5\n6\n")
    fifo = tmp_path / "out.fifo"
    os.mkfifo(fifo)
    got = []
    t = threading.Thread(target=lambda: got.append(open(fifo).read()), daemon=True)
    t.start()
    code, _, err = run(capsys, "privatize", src, "-o", str(fifo), "--format", "csv",
                       "--column", "age:0:10", *PRIV)
    t.join(30)
    assert code == 0, err
    import stat as st

    assert st.S_ISFIFO(os.stat(fifo).st_mode)  # never replaced by a regular file
    assert got and got[0].startswith("age\n") and len(got[0].split()) == 3


def test_dev_stdout_is_treated_as_a_stream():
    # never renamed onto: /dev/stdout (a link to the process's fd 1) is a stream
    if os.path.exists("/dev/stdout"):
        assert cli._io._output_kind("/dev/stdout")[0] == "stream"
    assert cli._io._output_kind("-") == ("stream", None)


def test_blank_line_in_one_column_csv_is_a_missing_value(tmp_path, capsys):
    src = write(tmp_path / "in.csv", "age\n5\n\n7\n")
    dst = str(tmp_path / "out.csv")
    code, _, err = run(capsys, "privatize", src, "-o", dst, "--column", "age:0:10", *PRIV,
                       "--nulls", "keep", "--show-data-counts")
    assert code == 0, err
    lines = open(dst).read().split("\n")
    assert lines[0] == "age" and lines[2] == "" and len(lines) == 5  # 3 rows + final newline
    assert "1 missing kept" in err and "2 values released" in err
    code, _, err = run(capsys, "privatize", src, "-o", dst + "2", "--column", "age:0:10", *PRIV)
    assert code == 3 and "row 2" in err and "missing value" in err


def test_header_only_csv_without_final_newline(tmp_path, capsys):
    src = write(tmp_path / "in.csv", "id,age")
    dst = str(tmp_path / "out.csv")
    code, _, err = run(capsys, "privatize", src, "-o", dst, "--column", "age:0:1", *PRIV,
                       "--allow-empty")
    assert code == 0, err
    assert open(dst).read() == "id,age\n" and "no data rows" in err


def test_tiny_block_size_works_and_long_rows_give_a_clear_error(tmp_path, capsys):
    src = write(tmp_path / "in.csv", "id,age\n" + "".join(f"{i},{i % 10}\n" for i in range(50)))
    dst = str(tmp_path / "out.csv")
    code, _, err = run(capsys, "privatize", src, "-o", dst, "--column", "age:0:10", *PRIV,
                       "--block-size", "1")
    assert code == 0, err
    assert len(open(dst).read().splitlines()) == 51
    src = write(tmp_path / "long.csv", "id,age\n" + "1,2\n" * 200 + "3," + "9" * 400 + "\n")
    code, _, err = run(capsys, "privatize", src, "-o", str(tmp_path / "o2.csv"),
                       "--column", "age:0:10", *PRIV, "--block-size", "64")
    assert code == 3 and "--block-size" in err and err.count("\n") == 1


def test_column_with_bad_bound_is_an_error_not_a_name(tmp_path, capsys):
    src = write(tmp_path / "in.csv", "age\n5\n")
    code, _, err = run(capsys, "privatize", src, "-o", str(tmp_path / "o.csv"),
                       "--column", "age:zero:120", *PRIV)
    assert code == 2 and "'zero' is not a number" in err


def test_demo_and_calibrate_fail_before_printing(capsys):
    code, out, err = run(capsys, "demo", "--epsilon", "0")
    assert code == 2 and out == "" and "epsilon" in err
    code, out, err = run(capsys, "calibrate", *PRIV, "--lower", "0", "--upper", "10",
                         "--value", "1e400")
    assert code == 2 and out == "" and "`value`" in err
    code, out, err = run(capsys, "calibrate", *PRIV, "--lower", "0", "--upper", "10",
                         "--mechanism", "gaussian", "--reference-delta", "0")
    assert code == 2 and out == "" and "--reference-delta" in err


def test_progress_percentage_follows_rows(tmp_path, capsys, monkeypatch):
    n = 20000
    src = write(tmp_path / "in.csv", "id,age\n" + "".join(f"{i},{i % 100}\n" for i in range(n)))
    clock = iter(range(10**6))
    monkeypatch.setattr(cli._io.time, "monotonic", lambda: float(next(clock)))  # redraw each time
    code, _, err = run(capsys, "privatize", src, "-o", str(tmp_path / "o.csv"),
                       "--column", "age:0:120", *PRIV, "--progress", "always",
                       "--block-size", "16384")
    assert code == 0, err
    bar = err.split("\n")[0]
    draws = [d for d in bar.split("\r") if d]
    assert len(draws) > 5
    width = 0
    for d in draws:
        pct = float(d.split("]")[1].split("%")[0])
        rows = int(d.split("%")[1].split("rows")[0].replace(",", ""))
        assert abs(pct - min(100 * rows / n, 99.9 if d is not draws[-1] else 100)) < 0.11, d
        assert len(d) >= width  # each redraw covers the previous one: no stale characters
        width = len(d.rstrip())
    assert "100.0%" in draws[-1] and f"{n:,} rows" in draws[-1]


# ---------------------------------------------------------------------------------------
# exit codes and messages as the README gives them
# ---------------------------------------------------------------------------------------
@pytest.mark.parametrize("fmt", ["csv", "parquet"])
def test_missing_column_is_a_schema_error_exit_3(tmp_path, capsys, fmt):
    src = write(tmp_path / "in.csv", SPEC_CSV)
    if fmt == "parquet":
        import pyarrow.csv as pcsv

        pq.write_table(pcsv.read_csv(src), str(tmp_path / "in.parquet"))
        os.unlink(src)
        src = str(tmp_path / "in.parquet")
    spec = write(tmp_path / "r.toml", "[columns.age]\nlower = 0\nupper = 'zz'\nsensitivity = 1\n"
                                      "epsilon = 1\n")
    code, _, err = run(capsys, "privatize", src, "-o", str(tmp_path / f"o.{fmt}"), "--spec", spec)
    assert code == 3 and "column 'zz' not found" in err and err.count("\n") == 1
    code, _, err = run(capsys, "privatize", src, "-o", str(tmp_path / f"o.{fmt}"),
                       "--column", "nope:0:1", *PRIV)
    assert code == 3 and "column 'nope' not found" in err
    assert listing(tmp_path) == sorted([os.path.basename(src), "r.toml"])


def test_missing_output_directory_is_an_io_error_exit_1(tmp_path, capsys):
    src = write(tmp_path / "in.csv", "age\n1\n")
    code, _, err = run(capsys, "privatize", src, "-o", str(tmp_path / "nodir" / "o.csv"),
                       "--column", "age:0:2", *PRIV)
    assert code == 1 and "does not exist" in err and err.count("\n") == 1
    pytest.importorskip("matplotlib")
    code, _, err = run(capsys, "plot", *PRIV, "--lower", "0", "--upper", "1", "-o",
                       str(tmp_path / "nodir" / "x.png"))
    assert code == 1 and "does not exist" in err
    assert listing(tmp_path) == ["in.csv"]


def test_column_errors_name_the_flags_not_a_spec(tmp_path, capsys):
    src = write(tmp_path / "in.csv", "age\n1\n")
    code, _, err = run(capsys, "privatize", src, "-o", str(tmp_path / "o.csv"),
                       "--column", "age:0:2", "--epsilon", "-1", "--sensitivity", "1")
    assert code == 2 and "spec" not in err and "--column 'age'" in err and "epsilon" in err
    code, _, err = run(capsys, "privatize", src, "-o", str(tmp_path / "o.csv"),
                       "--column", "age:0:2", *PRIV, "--mechanism", "gaussian", "--delta", "0.1")
    assert code == 2 and "spec" not in err and "--column 'age', --delta" in err
    assert listing(tmp_path) == ["in.csv"]


@pytest.mark.parametrize("fmt", ["csv", "parquet"])
def test_per_row_bound_errors_name_the_row_not_the_bounds(tmp_path, capsys, fmt):
    # per-row bounds are read from data: the messages name the row and column, never a bound
    # or a value
    text = "id,v,lo,hi\n1,5,0,10\n2,5,9,3\n"
    src = write(tmp_path / "in.csv", text)
    if fmt == "parquet":
        import pyarrow.csv as pcsv

        pq.write_table(pcsv.read_csv(src), str(tmp_path / "in.parquet"))
        src = str(tmp_path / "in.parquet")
    spec = write(tmp_path / "r.toml", "[columns.v]\nlower = 'lo'\nupper = 'hi'\n"
                                      "sensitivity = 1\nepsilon = 1\n")
    code, _, err = run(capsys, "privatize", src, "-o", str(tmp_path / f"o.{fmt}"), "--spec", spec)
    assert code == 3 and "row 2" in err and "this row has lower >= upper" in err
    msg = err.split("row 2")[1]     # (after the file's path)
    assert "9" not in msg and "3" not in msg and "np." not in err
    write(tmp_path / "in.csv", "id,v,lo,hi\n1,5,0,10\n2,50,0,10\n")
    code, _, err = run(capsys, "privatize", str(tmp_path / "in.csv"), "-o",
                       str(tmp_path / "o.csv"), "--spec", spec, "--on-outside", "raise")
    assert code == 3 and "outside its per-row bounds, above its upper bound" in err
    msg = err.split("row 2")[1]
    assert "10" not in msg and "50" not in msg and "np." not in err


@pytest.mark.parametrize("extra", [["--epsilon", "3"], ["--mechanism", "laplace"],
                                   ["--sensitivity", "2"], ["--delta", "0"],
                                   ["--lower", "0", "--upper", "1"]])
def test_spec_with_column_settings_is_refused(tmp_path, capsys, extra):
    src = write(tmp_path / "in.csv", SPEC_CSV)
    spec = write(tmp_path / "r.toml", SPEC_TOML)
    code, out, err = run(capsys, "privatize", src, "-o", str(tmp_path / "out.csv"), "--spec",
                         spec, *extra)
    assert code == 2 and out == "" and err.count("\n") == 1
    assert extra[0] in err and "with --spec set each column's settings in the spec file" in err
    assert listing(tmp_path) == ["in.csv", "r.toml"]


@pytest.mark.parametrize("bounds", [["0", "inf"], ["-inf", "0"], ["nan", "1"]])
def test_plot_with_a_non_finite_bound_is_a_usage_error(tmp_path, capsys, bounds):
    pytest.importorskip("matplotlib")
    code, _, err = run(capsys, "plot", *PRIV, f"--lower={bounds[0]}", f"--upper={bounds[1]}",
                       "-o", str(tmp_path / "x.png"))
    assert code == 2 and "must be finite" in err and err.count("\n") == 1
    assert listing(tmp_path) == []


@pytest.mark.parametrize("fmt", ["csv", "parquet"])
@pytest.mark.parametrize("text,argv,spec,needle", [
    ("id,age\n1,30\n2,\n", [], None, "row 2 (data rows counted from 1), "
     "column 'age': missing value (empty cell, null or NaN); pass --nulls keep"),
    ("id,age\n1,30\n2,130\n", ["--on-outside", "raise"], None,
     "row 2 (data rows counted from 1), column 'age': the value lies outside "
     "[0, 120], above its upper bound (--on-outside raise)"),
    ("id,age,lo,hi\n1,5,0,10\n2,5,9,3\n", [], "[columns.age]\nlower = 'lo'\nupper = 'hi'\n"
     "sensitivity = 1\nepsilon = 1\n", "row 2 (data rows counted from 1), "
     "column 'age': per-row bounds need lower < upper; this row has lower >= upper"),
    ("id,age,lo,hi\n1,5,0,10\n2,5,0,inf\n", [], "[columns.age]\nlower = 'lo'\nupper = 'hi'\n"
     "sensitivity = 1\nepsilon = 1\n", "row 2 (data rows counted from 1), "
     "column 'hi': per-row bound of column 'age' is not a finite number"),
    ("id,age,lo,hi\n1,5,0,10\n2,5,0,1e-305\n", [], "[columns.age]\nlower = 'lo'\n"
     "upper = 'hi'\nsensitivity = 1\nepsilon = 1\n", "rows 1-2, column 'age': no bounded "
     "Laplace scale can be calibrated at epsilon = 1.0, sensitivity = 1.0"),
])
def test_data_errors_come_from_the_one_column_check(tmp_path, capsys, monkeypatch, fmt, text,
                                                    argv, spec, needle):
    # the command line words the failures of ColumnPlan.check (the data checks of every
    # release path, issue "one release pipeline") per file row; it checks nothing itself
    from bndp._release import ColumnPlan

    calls = []
    real = ColumnPlan.check

    def spy(self, *a, **k):
        calls.append(self.name)
        return real(self, *a, **k)

    monkeypatch.setattr(ColumnPlan, "check", spy)
    src = write(tmp_path / "in.csv", text)
    if fmt == "parquet":
        import pyarrow.csv as pcsv

        pq.write_table(pcsv.read_csv(src), str(tmp_path / "in.parquet"))
        os.unlink(src)
        src = str(tmp_path / "in.parquet")
    cols = (["--spec", write(tmp_path / "r.toml", spec)] if spec is not None
            else ["--column", "age:0:120", *PRIV])
    code, _, err = run(capsys, "privatize", src, "-o", str(tmp_path / f"o.{fmt}"), *cols, *argv)
    assert code == 3 and err.count("\n") == 1 and needle in err, err
    assert calls == ["age"]
    assert not os.path.exists(tmp_path / f"o.{fmt}")


# ---------------------------------------------------------------------------------------
# NaN and null: one rule on every path (docs/frames.md): NaN stays NaN, null stays null
# ---------------------------------------------------------------------------------------

def test_parquet_nulls_keep_leaves_nan_nan_and_null_null(tmp_path, capsys):
    src = str(tmp_path / "in.parquet")
    pq.write_table(pa.table({"age": pa.array([30.0, math.nan, None, 45.0])}), src)
    dst = str(tmp_path / "out.parquet")
    code, _, err = run(capsys, "privatize", src, "-o", dst, "--column", "age:0:120", *PRIV,
                       "--nulls", "keep")
    assert code == 0, err
    got = pq.read_table(dst).column("age").to_pylist()
    assert got[2] is None and math.isnan(got[1])          # null stays null, NaN stays NaN
    assert 0 <= got[0] <= 120 and 0 <= got[3] <= 120
    # the Python API on the same data: the same missing cells
    api = bndp.privatize(pa.table({"age": pa.array([30.0, math.nan, None, 45.0])}),
                         {"age": dict(mechanism="laplace", epsilon=1.0, sensitivity=1.0,
                                      lower=0.0, upper=120.0, nulls="keep")}, rng=0)
    a = api.column("age").to_pylist()
    assert a[2] is None and math.isnan(a[1])


def test_csv_nan_cell_is_a_missing_value(tmp_path, capsys):
    src = write(tmp_path / "in.csv", "age,id\n30,a\nNaN,b\n,c\n45,d\nnan,e\n")
    dst = str(tmp_path / "out.csv")
    code, _, err = run(capsys, "privatize", src, "-o", dst, "--column", "age:0:120", *PRIV,
                       "--nulls", "keep")
    assert code == 0, err
    with open(dst) as f:
        rows = list(csv.reader(f))
    assert [r[1] for r in rows] == ["id", "a", "b", "c", "d", "e"]
    age = [r[0] for r in rows[1:]]
    assert age[1] == "NaN" and age[2] == "" and age[4] == "nan"   # written back as they were
    assert 0 <= float(age[0]) <= 120 and 0 <= float(age[3]) <= 120
    # refused by default, as a missing value (not as an unparsable or infinite number)
    code, _, err = run(capsys, "privatize", src, "-o", str(tmp_path / "o2.csv"), "--column",
                       "age:0:120", *PRIV)
    assert code == 3 and "row 2" in err and "missing value (empty cell, null or NaN)" in err
