"""The unit of privacy of a per-record release: epsilon covers a change of at most the
sensitivity in one value; a change of one record across the whole range [lower, upper]
costs the certified loss between the range's two ends. Every release reports that loss per
column (the run summary, ``--summary-json``, the ledger), and an epsilon so large that the
noise is negligible warns."""

from __future__ import annotations

import json
import math
import warnings

import numpy as np
import pytest

import bndp
from bndp import cli
from bndp._release import parse_spec, whole_range_loss

LO, HI = 0.0, 120.0


def _ends_loss_from_pmf(m) -> float:
    """max over outputs of |ln pmf(out | lower) - ln pmf(out | upper)|, from the
    mechanism's own pmf over its whole grid (every output must have mass under both)."""
    grid = m.exact_plan.grid()
    a = np.asarray(m.pmf(grid, LO))
    b = np.asarray(m.pmf(grid, HI))
    assert (a > 0).all() and (b > 0).all()          # the whole law, no output left out
    assert abs(a.sum() - 1.0) < 1e-9 and abs(b.sum() - 1.0) < 1e-9
    return float(np.max(np.abs(np.log(a) - np.log(b))))


def _mech(name: str, eps: float, mode: str = "exact"):
    cls = bndp.BoundedLaplace if name == "laplace" else bndp.BoundedGaussian
    return cls(epsilon=eps, sensitivity=1.0, lower=LO, upper=HI, mode=mode)


def _csv(tmp_path):
    src = tmp_path / "people.csv"
    src.write_text("age,name\n34,a\n51,b\n87,c\n0,d\n120,e\n")
    return src


def _privatize(tmp_path, capsys, *extra):
    pytest.importorskip("pyarrow")
    src = _csv(tmp_path)
    summary = tmp_path / "summary.json"
    code = cli.main(["privatize", str(src), "-o", str(tmp_path / "out.csv"),
                     "--summary-json", str(summary), *extra])
    err = capsys.readouterr().err
    assert code == 0, err
    return json.loads(summary.read_text()), err


# 0.1: the kernel's table covers the row; 0.5: the row reaches the geometric tails
@pytest.mark.parametrize("mechanism", ["laplace", "gaussian"])
@pytest.mark.parametrize("eps", [0.1, 0.5])
def test_summary_json_whole_range_loss_is_the_certified_loss_between_the_ends(
        tmp_path, capsys, mechanism, eps):
    # (--no-integer: the grid law of _mech, not the integer law of the CSV's integer cells)
    rec, _ = _privatize(tmp_path, capsys, "--column", "age:0:120", "--epsilon", str(eps),
                        "--sensitivity", "1", "--mechanism", mechanism, "--no-integer")
    col = rec["columns"]["age"]
    ref = _ends_loss_from_pmf(_mech(mechanism, eps))
    got = col["whole_range_loss"]
    assert got >= ref                                   # a certified upper bound
    assert got == pytest.approx(ref, rel=1e-9)          # and tight
    assert col["whole_range_loss_note"] is None
    assert col["epsilon_per_sensitivity"] == eps
    # the per-sensitivity guarantee is far smaller than the record's whole-range loss
    assert col["certified_loss"] <= eps < got


def test_tailed_row_is_exercised():
    # the case above at epsilon 0.5 draws from a row wider than the kernel's table
    for name in ("laplace", "gaussian"):
        plan = _mech(name, 0.5).exact_plan
        assert plan.n > plan.kernel.N and plan.kernel.tailw > 0


@pytest.mark.parametrize("mechanism", ["laplace", "gaussian"])
def test_continuous_mode_whole_range_loss_from_the_density_ratio(mechanism):
    spec = {"age": {"mechanism": mechanism, "lower": LO, "upper": HI, "sensitivity": 1.0,
                    "epsilon": 1.0, "mode": "continuous"}}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        plan, = parse_spec(spec)
    got, note = whole_range_loss(plan)
    m = _mech(mechanism, 1.0, "continuous")
    x = np.linspace(LO, HI, 240001)
    ref = float(np.max(np.abs(m.logpdf(x, LO) - m.logpdf(x, HI))))
    assert note is None
    assert got >= ref and got == pytest.approx(ref, rel=1e-9)


def test_half_line_and_per_row_bounds_have_no_whole_range_loss():
    spec = {"x": {"mechanism": "constrained_laplace", "lower": 0.0, "sensitivity": 1.0,
                  "epsilon": 1.0},
            "y": {"lower": "lo", "upper": "hi", "sensitivity": 1.0, "epsilon": 1.0}}
    half, rows = parse_spec(spec)
    loss, note = whole_range_loss(half)
    assert loss is None and "half-line" in note and "unbounded" in note
    loss, note = whole_range_loss(rows)
    assert loss is None and "per-row" in note
    details = bndp._release.column_details([half, rows])
    assert details["x"]["whole_range_loss"] is None
    assert details["x"]["whole_range_loss_note"] == whole_range_loss(half)[1]


def test_constrained_laplace_whole_range_loss_against_its_pmf():
    spec = {"x": {"mechanism": "constrained_laplace", "lower": LO, "upper": HI,
                  "forbidden": [[10.0, 20.0]], "sensitivity": 1.0, "epsilon": 0.5}}
    plan, = parse_spec(spec)
    got, note = whole_range_loss(plan)
    ep = plan.mech.exact_plan
    a, b = ep.pmf(LO), ep.pmf(HI)
    assert (a > 0).all() and (b > 0).all()
    ref = float(np.max(np.abs(np.log(a) - np.log(b))))
    assert note is None and got >= ref and got == pytest.approx(ref, rel=1e-9)


def test_cli_summary_states_the_unit_of_privacy(tmp_path, capsys):
    rec, err = _privatize(tmp_path, capsys, "--column", "age:0:120", "--epsilon", "1",
                          "--sensitivity", "1", "--no-integer")   # (the grid law of _mech)
    whole = rec["columns"]["age"]["whole_range_loss"]
    ref = _ends_loss_from_pmf_full(_mech("laplace", 1.0))
    assert whole >= ref and whole == pytest.approx(ref, rel=1e-9)
    line = next(ln for ln in err.splitlines() if "unit of privacy" in ln)
    assert line.startswith("bndp: age: unit of privacy: epsilon = 1 covers a change of at "
                           "most 1 (the sensitivity) in one value")
    assert f"whole range [0, 120] costs a certified loss of {whole:.6g}" in line


def _ends_loss_from_pmf_full(m) -> float:
    """:func:`_ends_loss_from_pmf` for a row wider than the listed part of the tails: the
    law from the kernel's weights (table and geometric tails), normalised exactly."""
    plan = m.exact_plan
    k, n = plan.kernel, plan.n
    w_tab = np.diff(k.cum).astype(np.float64)
    lnp = math.log1p(-math.ldexp(k.tm, -k.sbits))
    w1 = k.tailw * math.ldexp(k.tm, -k.sbits)

    def logw(d):
        a = np.abs(d)
        inside = a <= k.N
        out = np.empty(d.shape)
        out[inside] = np.log(w_tab[d[inside] + k.N])
        out[~inside] = math.log(w1) + (a[~inside] - k.N - 1) * lnp
        return out

    j = np.arange(n + 1)
    la, lb = logw(j - 0), logw(j - n)
    # the normalisers of the two ends are equal (a symmetric kernel)
    sa = np.logaddexp.reduce(la)
    sb = np.logaddexp.reduce(lb)
    return float(np.max(np.abs((la - sa) - (lb - sb))))


def test_ledger_records_the_unit_of_privacy(tmp_path):
    pd = pytest.importorskip("pandas")
    budget = bndp.Budget.create(str(tmp_path / "ledger.db"), "survey", epsilon=5.0)
    spec = {"age": {"lower": LO, "upper": HI, "sensitivity": 1.0, "epsilon": 0.5},
            "score": {"mechanism": "gaussian", "lower": LO, "upper": HI, "sensitivity": 1.0,
                      "epsilon": 0.1}}
    bndp.privatize(pd.DataFrame({"age": [34.0, 51.0], "score": [3.0, 7.0]}), spec,
                   budget=budget)
    entry, = budget.history
    cols = {c["column"]: c for c in entry.columns}
    for name, mech, eps in (("age", "laplace", 0.5), ("score", "gaussian", 0.1)):
        ref = _ends_loss_from_pmf(_mech(mech, eps))
        assert cols[name]["whole_range_loss"] >= ref
        assert cols[name]["whole_range_loss"] == pytest.approx(ref, rel=1e-9)
        assert cols[name]["epsilon_per_sensitivity"] == eps
        assert cols[name]["whole_range_loss_note"] is None


@pytest.mark.parametrize("mechanism", ["laplace", "gaussian"])
def test_huge_epsilon_warns_through_the_api(mechanism):
    pd = pytest.importorskip("pandas")
    spec = {"age": {"mechanism": mechanism, "lower": LO, "upper": HI, "sensitivity": 1.0,
                    "epsilon": 1e300}}
    with pytest.warns(bndp.NegligibleNoiseWarning, match="column 'age'.*negligible"):
        bndp.privatize(pd.DataFrame({"age": [34.0, 51.0]}), spec)
    assert issubclass(bndp.NegligibleNoiseWarning, UserWarning)


@pytest.mark.parametrize("mechanism", ["laplace", "gaussian"])
@pytest.mark.parametrize("eps", [0.1, 0.5, 1.0, 2.0, 5.0, 10.0])
def test_normal_epsilons_do_not_warn(mechanism, eps):
    spec = {"age": {"mechanism": mechanism, "lower": LO, "upper": HI, "sensitivity": 1.0,
                    "epsilon": eps}}
    with warnings.catch_warnings():
        warnings.simplefilter("error", bndp.NegligibleNoiseWarning)
        bndp._release.plan_release(spec)


def test_the_criterion_is_the_noise_sd_against_the_sensitivity():
    # the boundary: sd at the range's centre against 1/100 of the sensitivity
    from bndp._release.unit import NEGLIGIBLE_FRACTION, negligible_noise
    for eps in (50.0, 100.0, 200.0, 1000.0):
        plan, = parse_spec({"age": {"lower": LO, "upper": HI, "sensitivity": 1.0,
                                    "epsilon": eps}})
        sd = math.sqrt(plan.mech.variance(60.0))
        assert (negligible_noise(plan) is not None) == (sd < NEGLIGIBLE_FRACTION * 1.0)
    # per-row bounds: the wide rows' kernel
    plan, = parse_spec({"y": {"lower": "lo", "upper": "hi", "sensitivity": 1.0,
                              "epsilon": 1e300}})
    assert "negligible" in negligible_noise(plan)
    plan, = parse_spec({"y": {"lower": "lo", "upper": "hi", "sensitivity": 1.0,
                              "epsilon": 1.0}})
    assert negligible_noise(plan) is None


def test_huge_epsilon_warns_on_the_command_line(tmp_path, capsys):
    _, err = _privatize(tmp_path, capsys, "--column", "age:0:120", "--epsilon", "1e300",
                        "--sensitivity", "1")
    warns = [ln for ln in err.splitlines() if ln.startswith("bndp: warning:")]
    assert len(warns) == 1
    assert "column 'age': epsilon = 1e+300 makes the noise negligible" in warns[0]
    _, err = _privatize(tmp_path, capsys, "--column", "age:0:120", "--epsilon", "10",
                        "--sensitivity", "1")
    assert "bndp: warning:" not in err


def test_cli_help_states_the_unit_of_privacy(capsys):
    with pytest.raises(SystemExit):
        cli.main(["privatize", "--help"])
    text = " ".join(capsys.readouterr().out.split())
    assert "the most one person can change it" not in text
    assert "epsilon is the guarantee for a change of at most s in one value" in text
    assert "certified loss between the range's two ends" in text
