"""The command line's own errors: one line on stderr for every argparse error (with the
nearest valid choice or option), and a broken pipe on stdout ending any command quietly
with status 141."""

import os
import subprocess
import sys

import numpy as np
import pytest

import bndp
from bndp import cli

from .conftest import bndp_import_root

SRC = bndp_import_root()
PRIV = ["--epsilon", "1", "--sensitivity", "1"]


def env():
    e = dict(os.environ)
    e["PYTHONPATH"] = SRC + os.pathsep + e.get("PYTHONPATH", "")
    e.pop("BNDP_DEBUG", None)
    return e


def usage_error(capsys, *argv):
    """Run the command line in-process on a usage error: its exit status, stdout, stderr."""
    with pytest.raises(SystemExit) as e:
        cli.main(list(argv))
    out, err = capsys.readouterr()
    return e.value.code, out, err


# ---------------------------------------------------------------------------------------
# argparse errors: one line, exit 2, the nearest choice or option
# ---------------------------------------------------------------------------------------
@pytest.mark.parametrize("argv,line", [
    (["privatize", "in.csv", "-o", "o.csv", "--epsilon", "abc"],
     "bndp: error: --epsilon: expected a number; got 'abc'"),
    (["privatize", "in.csv", "-o", "o.csv", "--mechanism", "lapalce"],
     "bndp: error: --mechanism: invalid choice 'lapalce' (did you mean 'laplace'?)"),
    (["privatize", "in.csv", "-o", "o.csv", "--mechanism", "gausian"],
     "bndp: error: --mechanism: invalid choice 'gausian' (did you mean 'gaussian'?)"),
    (["privatize", "in.csv", "-o", "o.csv", "--on-outside", "clamp"],
     "bndp: error: --on-outside: invalid choice 'clamp' (did you mean 'clip'?)"),
    (["privatize", "in.csv", "-o", "o.csv", "--epsilonn", "1"],
     "bndp: error: unrecognized option '--epsilonn' (did you mean '--epsilon'?)"),
    (["privatize", "in.csv", "-o", "o.csv", "--budget-nmae=nightly"],
     "bndp: error: unrecognized option '--budget-nmae' (did you mean '--budget-name'?)"),
    (["privatize", "in.csv", "-o", "o.csv", "--seed", "1.5"],
     "bndp: error: --seed: expected an integer; got '1.5'"),
    (["privatize", "in.csv", "-o", "o.csv", "--workers", "0"],
     "bndp: error: --workers: expected a positive integer or -1; got 0"),
    # an unknown option is named before the missing required ones
    (["calibrate", "--epsilonn", "1"],
     "bndp: error: unrecognized option '--epsilonn' (did you mean '--epsilon'?)"),
    (["calibrate", *PRIV, "--lower", "0", "--upper", "1", "--mode", "grid"],
     "bndp: error: --mode: invalid choice 'grid' (choose from 'exact', 'continuous')"),
    (["calibrate", *PRIV, "--lower", "0", "--upper", "1", "--mode", "exatc"],
     "bndp: error: --mode: invalid choice 'exatc' (did you mean 'exact'?)"),
    (["estimate", "r.csv", "--spec", "r.toml", "--target", "populaton"],
     "bndp: error: --target: invalid choice 'populaton' (did you mean 'population'?)"),
    (["estimate", "r.csv", "--spec", "r.toml", "--level", "2"],
     "bndp: error: --level: expected a number in (0, 1); got '2'"),
    (["estimate", "r.csv"], "bndp: error: the following arguments are required: --spec"),
    (["estimate", "r.csv", "--spec", "r.toml", "--zzz"],
     "bndp: error: unrecognized option '--zzz' (see 'bndp estimate --help')"),
    (["privatze", "in.csv"],
     "bndp: error: COMMAND: invalid choice 'privatze' (did you mean 'privatize'?)"),
    (["budget", "shwo", "nightly"],
     "bndp: error: ACTION: invalid choice 'shwo' (did you mean 'show'?)"),
    (["budget", "show", "nightly", "--stroe", "b.db"],
     "bndp: error: unrecognized option '--stroe' (did you mean '--store'?)"),
    (["demo", "--epsilon", "x"], "bndp: error: --epsilon: expected a number; got 'x'"),
    (["reproduce", "--jsno"],
     "bndp: error: unrecognized option '--jsno' (did you mean '--json'?)"),
])
def test_usage_errors_are_one_line_with_the_nearest_valid_word(tmp_path, capsys, monkeypatch,
                                                                argv, line):
    monkeypatch.chdir(tmp_path)
    code, out, err = usage_error(capsys, *argv)
    assert code == 2
    assert out == ""
    assert err == line + "\n"
    assert os.listdir(tmp_path) == []


def test_an_option_prefix_still_abbreviates_and_an_ambiguous_one_is_one_line(capsys):
    code = cli.main(["calibrate", "--eps", "1", "--sens", "1", "--lower", "0", "--upper", "1"])
    assert code == 0 and "bounded Laplace" in capsys.readouterr().out
    code, out, err = usage_error(capsys, "calibrate", "--m", "laplace")
    assert code == 2 and out == "" and err.count("\n") == 1
    assert err.startswith("bndp: error: ambiguous option: --m could match")


def test_help_and_version_still_print_in_full(capsys):
    code, out, err = usage_error(capsys, "estimate", "--help")
    assert code == 0 and err == "" and "--quantiles" in out and "--bins" in out
    code, out, err = usage_error(capsys, "--version")
    assert code == 0 and out.strip() == f"bndp {bndp.__version__}"


def test_usage_errors_of_the_console_script_are_one_line():
    r = subprocess.run([sys.executable, "-m", "bndp", "privatize", "x.csv", "-o", "y.csv",
                        "--mechanism", "lapalce"], capture_output=True, text=True, env=env(),
                       timeout=120)
    assert r.returncode == 2 and r.stdout == ""
    assert r.stderr == ("bndp: error: --mechanism: invalid choice 'lapalce' (did you mean "
                        "'laplace'?)\n")


# ---------------------------------------------------------------------------------------
# a broken pipe on stdout: quiet, status 141
# ---------------------------------------------------------------------------------------
def read_one_line_then_close(argv):
    """Run ``python -m bndp ARGV`` with stdout a pipe that is closed after its first line
    (as ``| head -1`` does); its first line, stderr and exit status."""
    p = subprocess.Popen([sys.executable, "-m", "bndp", *argv], stdout=subprocess.PIPE,
                         stderr=subprocess.PIPE, env=env())
    try:
        first = p.stdout.readline()
        p.stdout.close()
        err = p.stderr.read()
        code = p.wait(timeout=300)
    finally:
        if p.poll() is None:
            p.kill()
            p.wait()
    return first.decode(), err.decode(), code


@pytest.fixture(scope="module")
def long_budget(tmp_path_factory):
    """An SQLite budget whose history prints far more than a pipe holds (64 KiB)."""
    store = str(tmp_path_factory.mktemp("pipe") / "ledger.db")
    b = bndp.Budget.create(store, "nightly", epsilon=1000.0)
    for i in range(150):
        b.spend(0.5, label=f"night {i}: " + "x" * 1000)
    return store


@pytest.mark.parametrize("json_flag", [["--json"], []])
def test_budget_show_into_a_closed_pipe_is_quiet(long_budget, json_flag):
    first, err, code = read_one_line_then_close(["budget", "show", "nightly", "--store",
                                                 long_budget, *json_flag])
    assert first.startswith("{" if json_flag else "budget 'nightly'")
    assert err == ""
    assert code == 141


def test_estimate_json_into_a_closed_pipe_is_quiet(tmp_path):
    m = bndp.BoundedLaplace(1.0, sensitivity=1.0, lower=0.0, upper=10.0)
    released = m.sample(np.random.default_rng(0).uniform(0, 10, 2000), rng=1)
    path = tmp_path / "released.csv"
    path.write_text("v\n" + "".join(f"{float(x)!r}\n" for x in released))
    spec = tmp_path / "r.toml"
    spec.write_text("[columns.v]\nmechanism = 'laplace'\nepsilon = 1.0\nsensitivity = 1.0\n"
                    "lower = 0.0\nupper = 10.0\n")
    levels = [f"{q / 1000:g}" for q in range(1, 1000)]     # about 100 kB of JSON
    first, err, code = read_one_line_then_close(["estimate", str(path), "--spec", str(spec),
                                                 "--json", "--n-boot", "10", "--seed", "1",
                                                 "--quantiles", *levels])
    assert first == "{\n"
    assert err == ""
    assert code == 141


def test_calibrate_into_a_closed_pipe_is_quiet():
    values = [f"{v / 100:g}" for v in range(3000)]      # about 200 kB of table
    first, err, code = read_one_line_then_close(["calibrate", *PRIV, "--lower", "0",
                                                 "--upper", "120", "--value", *values])
    assert first.startswith("bounded Laplace")
    assert err == ""
    assert code == 141


def test_a_reader_that_reads_everything_sees_status_0(long_budget):
    r = subprocess.run([sys.executable, "-m", "bndp", "budget", "show", "nightly", "--store",
                        long_budget, "--json"], capture_output=True, text=True, env=env(),
                       timeout=120)
    assert r.returncode == 0 and r.stderr == "" and len(r.stdout) > 1 << 17


def test_exit_status_141_is_documented(capsys):
    code, out, _ = usage_error(capsys, "--help")
    assert code == 0
    assert "141 the reader of stdout closed it early" in " ".join(out.split())
