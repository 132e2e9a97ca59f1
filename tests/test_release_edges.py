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
