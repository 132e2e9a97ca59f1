"""The record of a release: the bndp logger (one INFO record per release, a WARNING for
raw doubles, nothing printed), the command line's --summary-json and its bias line; no
count of the private data anywhere."""

from __future__ import annotations

import json
import logging
import subprocess
import sys

import numpy as np
import pytest

import bndp

pd = pytest.importorskip("pandas")

SPEC = {"age": dict(mechanism="laplace", epsilon=0.25, sensitivity=1.0, lower=0.0,
                    upper=120.0)}


def _frame():
    return pd.DataFrame({"age": [23.0, 41.0, 130.0, np.nan], "id": [1, 2, 3, 4]})


def test_one_info_record_per_release(caplog, capsys):
    spec = {"age": dict(SPEC["age"], nulls="keep")}
    with caplog.at_level(logging.INFO, logger="bndp"):
        bndp.privatize(_frame(), spec, rng=1)
    recs = [r for r in caplog.records if r.name == "bndp"]
    assert len(recs) == 1 and recs[0].levelno == logging.INFO
    rec = recs[0].bndp_release
    col = rec["columns"]["age"]
    assert col["epsilon"] == 0.25 and col["mode"] == "exact"
    assert col["certified_loss"] <= 0.25
    # the noise profile equals the mechanism's own law at the ends and the centre
    m = bndp.BoundedLaplace(epsilon=0.25, sensitivity=1.0, lower=0.0, upper=120.0)
    assert col["noise"]["at"] == [0.0, 60.0, 120.0]
    assert col["noise"]["bias"][0] == pytest.approx(m.bias(0.0))
    assert col["noise"]["sd"][1] == pytest.approx(np.sqrt(m.variance(60.0)))
    # nothing that depends on the data: no counts of missing or clipped values
    text = json.dumps(rec) + recs[0].getMessage()
    assert "missing" not in text and "clipped" not in text
    assert capsys.readouterr() == ("", "")          # the library prints nothing


def test_continuous_release_warns(caplog):
    spec = {"age": dict(SPEC["age"], mode="continuous")}
    with caplog.at_level(logging.INFO, logger="bndp"):
        bndp.privatize(_frame().dropna(), spec, rng=1)
    levels = [r.levelno for r in caplog.records if r.name == "bndp"]
    assert levels.count(logging.WARNING) == 1 and levels.count(logging.INFO) == 1


def test_no_record_below_warning(caplog):
    with caplog.at_level(logging.ERROR, logger="bndp"):
        bndp.privatize(_frame().dropna(), SPEC, rng=1)
    assert not [r for r in caplog.records if r.name == "bndp"]


def test_cli_summary_json_and_bias_line(tmp_path):
    src = tmp_path / "in.csv"
    src.write_text("age\n23\n41\n\n130\n")
    out = tmp_path / "out.csv"
    js = tmp_path / "run.json"
    r = subprocess.run([sys.executable, "-m", "bndp", "privatize", str(src), "-o", str(out),
                        "--column", "age:0:120", "--mechanism", "laplace", "--epsilon", "0.25",
                        "--sensitivity", "1", "--nulls", "keep", "--summary-json", str(js)],
                       capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    rec = json.loads(js.read_text())
    assert rec["rows"] == 4 and rec["format"] == "csv" and rec["version"] == bndp.__version__
    col = rec["columns"]["age"]
    assert (col["mechanism"], col["epsilon"], col["delta"]) == ("laplace", 0.25, 0.0)
    assert col["bounds"] == [0.0, 120.0] and col["certified_loss"] <= 0.25
    # a CSV column of integers: the integer law (the default for integer columns)
    assert col["law"] == "integer"
    m = bndp.BoundedLaplace(epsilon=0.25, sensitivity=1.0, lower=0.0, upper=120.0,
                            integer=True)
    assert col["noise"]["bias"][2] == pytest.approx(m.bias(120.0))
    assert set(rec["seconds"]) == {"plan", "draw_and_write", "total"}
    assert "missing" not in js.read_text() and "clipped" not in js.read_text()
    assert f"bias {m.bias(0.0):+.3g} / 0 / {m.bias(120.0):+.3g}" in r.stderr


def test_privatize_progress_bar(capsys):
    pytest.importorskip("tqdm")
    spec = {"a": dict(SPEC["age"]), "b": dict(SPEC["age"])}
    frame = pd.DataFrame({"a": np.arange(100.0), "b": np.arange(100.0)})
    out = bndp.privatize(frame, spec, rng=1, progress=True)
    err = capsys.readouterr().err
    assert "bndp.privatize" in err and "200/200" in err
    # the bar does not change the draws
    np.testing.assert_array_equal(out.to_numpy(), bndp.privatize(frame, spec, rng=1).to_numpy())
    bndp.privatize(frame, spec, rng=1)
    assert capsys.readouterr().err == ""
