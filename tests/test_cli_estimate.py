"""``bndp estimate``: the histogram of the true values (--bins) in the table and in the JSON,
over fixed and per-row bounds, and the output without bootstrap replicates (--n-boot 0)."""

import json

import numpy as np
import pytest

import bndp
from bndp import cli

pytest.importorskip("pyarrow")

SPEC = ("[columns.v]\nmechanism = 'laplace'\nepsilon = 1.0\nsensitivity = 1.0\n"
        "lower = 0.0\nupper = 10.0\n")


def run(capsys, *argv):
    code = cli.main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


@pytest.fixture
def released(tmp_path):
    """2000 true values, three quarters in [0, 5) and a quarter in [5, 10], released by
    the spec's law, as a CSV file; and the spec."""
    rng = np.random.default_rng(0)
    true = np.concatenate([rng.uniform(0, 5, 1500), rng.uniform(5, 10, 500)])
    m = bndp.BoundedLaplace(1.0, sensitivity=1.0, lower=0.0, upper=10.0)
    y = m.sample(true, rng=1)
    path = tmp_path / "released.csv"
    path.write_text("v\n" + "".join(f"{float(x)!r}\n" for x in y))
    spec = tmp_path / "r.toml"
    spec.write_text(SPEC)
    return str(path), str(spec), y, m


def test_bins_json_matches_the_python_api(released, capsys):
    path, spec, y, m = released
    code, out, err = run(capsys, "estimate", path, "--spec", spec, "--json", "--bins", "2",
                         "--n-boot", "40", "--seed", "3")
    assert code == 0 and err == ""
    hist = json.loads(out)["columns"]["v"]["histogram"]
    assert [(b["from"], b["to"]) for b in hist] == [(0.0, 5.0), (5.0, 10.0)]
    # the same estimate through the Python API (the bootstrap draws from the same seed)
    est = bndp.estimate(y, m, n_boot=40, rng=np.random.default_rng(3))
    p = est.histogram([0.0, 5.0, 10.0])
    lo, hi = est.histogram_interval([0.0, 5.0, 10.0])
    assert [b["probability"] for b in hist] == pytest.approx(p, rel=1e-12)
    assert [b["low"] for b in hist] == pytest.approx(lo, rel=1e-12)
    assert [b["high"] for b in hist] == pytest.approx(hi, rel=1e-12)
    # each estimate inside its interval, and nearer the true shares (3/4, 1/4) than the
    # released values' shares, which the noise pulls toward the middle of the range
    released_share = float(np.mean(y < 5.0))
    for b, share, naive in zip(hist, (0.75, 0.25), (released_share, 1 - released_share)):
        assert b["low"] <= b["probability"] <= b["high"]
        assert abs(b["probability"] - share) < abs(naive - share)
    assert sum(b["probability"] for b in hist) == pytest.approx(1.0, abs=1e-9)


def test_bins_table_has_one_row_per_bin(released, capsys):
    path, spec, _, _ = released
    code, out, err = run(capsys, "estimate", path, "--spec", spec, "--bins", "4",
                         "--n-boot", "20", "--seed", "1")
    assert code == 0 and err == ""
    rows = [line.split() for line in out.splitlines() if line.startswith("v ")
            and "[" in line.split()[1]]
    assert [r[1] + " " + r[2] for r in rows] == ["[0, 2.5)", "[2.5, 5)", "[5, 7.5)",
                                                  "[7.5, 10]"]
    probs = [float(r[3]) for r in rows]
    assert sum(probs) == pytest.approx(1.0, abs=4e-4)     # 4 significant digits each
    assert "bin" in out and "95% interval" in out


def test_without_bins_no_histogram(released, capsys):
    path, spec, _, _ = released
    code, out, _ = run(capsys, "estimate", path, "--spec", spec, "--json", "--n-boot", "0")
    assert code == 0 and "histogram" not in json.loads(out)["columns"]["v"]


def test_n_boot_0_prints_estimates_without_intervals(released, capsys):
    path, spec, _, _ = released
    code, out, err = run(capsys, "estimate", path, "--spec", spec, "--json", "--n-boot", "0",
                         "--bins", "2")
    assert code == 0 and err == ""
    r = json.loads(out)["columns"]["v"]
    assert r["mean_low"] is None and r["mean_high"] is None and r["sd_low"] is None
    assert all(q["low"] is None and q["high"] is None for q in r["quantiles"].values())
    assert all(b["low"] is None and b["high"] is None for b in r["histogram"])
    assert 0 < r["mean"] < 10 and len(r["histogram"]) == 2
    code, out, err = run(capsys, "estimate", path, "--spec", spec, "--n-boot", "0",
                         "--bins", "2")
    assert code == 0 and err == ""
    assert out.splitlines()[1].split()[3] == "-"       # the mean's interval


def test_bins_over_per_row_bounds_span_the_widest_range(tmp_path, capsys):
    rng = np.random.default_rng(5)
    n = 1200
    lo = np.where(np.arange(n) % 2 == 0, 0.0, 20.0)     # rows in [0, 10] and [20, 30]
    hi = lo + 10.0
    true = lo + rng.uniform(0, 10, n)
    spec = {"v": {"mechanism": "laplace", "epsilon": 1.0, "sensitivity": 1.0,
                  "lower": "lo", "upper": "hi"}}
    y = bndp.sample(true, mechanism="laplace", epsilon=1.0, sensitivity=1.0, lower=lo, upper=hi, rng=2)
    path = tmp_path / "released.csv"
    path.write_text("v,lo,hi\n" + "".join(f"{float(a)!r},{b:g},{c:g}\n"
                                          for a, b, c in zip(y, lo, hi)))
    sp = tmp_path / "r.json"
    sp.write_text(json.dumps({"columns": spec}))
    code, out, err = run(capsys, "estimate", str(path), "--spec", str(sp), "--json",
                         "--bins", "2", "--n-boot", "20", "--seed", "0")
    assert code == 0, err
    hist = json.loads(out)["columns"]["v"]["histogram"]
    assert [(b["from"], b["to"]) for b in hist] == [(0.0, 15.0), (15.0, 30.0)]
    assert [b["probability"] for b in hist] == pytest.approx([0.5, 0.5], abs=1e-9)


@pytest.mark.parametrize("bad", ["1", "0", "10001", "x", "2.5"])
def test_bins_out_of_range_is_a_one_line_usage_error(released, capsys, bad):
    path, spec, _, _ = released
    with pytest.raises(SystemExit) as e:
        cli.main(["estimate", path, "--spec", spec, "--bins", bad])
    out, err = capsys.readouterr()
    assert e.value.code == 2 and out == ""
    assert err == f"bndp: error: --bins: expected an integer from 2 to 10000; got {bad!r}\n"


def test_workers_give_the_same_output(released, capsys):
    # --workers: threads for the Laplace law's bootstrap fits; the same numbers for any
    # number of them
    path, spec, y, m = released
    outs = []
    for w in ("1", "2", "-1"):
        code, out, err = run(capsys, "estimate", path, "--spec", spec, "--json",
                             "--n-boot", "40", "--seed", "3", "--workers", w)
        assert code == 0 and err == ""
        outs.append(json.loads(out)["columns"]["v"])
    assert outs[0] == outs[1] == outs[2]
    for bad in ("0", "-2", "x"):
        with pytest.raises(SystemExit):
            cli.main(["estimate", path, "--spec", spec, "--workers", bad])
        assert "--workers" in capsys.readouterr().err
