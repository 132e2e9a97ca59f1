"""Inputs at the edges of the doubles, and malformed costs: each gets the result the
mathematics gives, or a ValueError/TypeError naming the argument (never another exception, a
NaN, or a release that gives the true value away). Found by fuzzing the public API."""

import math
import os

import numpy as np
import pytest

import bndp

INF = math.inf


# ConstrainedLaplace, mode="continuous": the calibration at a tiny epsilon, the sampler's
# resolution -------------------------------------------------------------------------------

@pytest.mark.parametrize("eps", [1e-13, 1e-15, 1e-300])
@pytest.mark.parametrize("guarantee", ["dp", "metric"])
def test_constrained_scale_is_at_most_the_bound_that_needs_no_evaluation(eps, guarantee):
    # any constant scale s is private at 2 dF / s: where the loss evaluations' rounding
    # margin (about 1e-13) leaves no scale that passes them, the calibration is that bound
    # (it searched up to 1e128 and beyond, or returned inf, before)
    for kw in ({"lower": 0.0}, {"lower": -INF, "upper": INF}):
        m = bndp.ConstrainedLaplace(eps, sensitivity=1.0, mode="continuous",
                                    guarantee=guarantee, **kw)
        assert math.isfinite(m.scale) and 0 < m.scale <= 2.0 / eps * (1 + 1e-12)
        y = m.sample(np.full(64, 5.0), rng=1)
        assert np.isfinite(y).all() and np.unique(y).size == 64


@pytest.mark.parametrize("eps", [1e-6, 1e-3, 0.1, 1.0, 3.0])
def test_constrained_scale_never_above_twice_the_bound(eps):
    for kw in ({"upper": 10.0}, {}, {"upper": 10.0, "forbidden": [(2.0, 3.0)]}):
        for g in ("dp", "metric"):
            m = bndp.ConstrainedLaplace(eps, sensitivity=1.0, lower=0.0, mode="continuous",
                                        guarantee=g, **kw)
            assert m.scale <= 2 * 2.0 / eps
            if g == "dp":
                assert bndp.verify(m) <= eps


@pytest.mark.parametrize("kw", [
    {"epsilon": 1e-13, "sensitivity": 1.0},       # scale 2e13 on a width of 10
    {"epsilon": 1e-300, "sensitivity": 1.0},
    {"epsilon": 1.0, "sensitivity": 1e308},        # scale inf
    {"epsilon": 1.0, "sensitivity": 5e-324},       # scale 1e-323: 1/scale overflows
])
def test_continuous_constrained_refuses_a_scale_its_sampler_cannot_draw(kw):
    # the quantile mu + s ln(2r + a) resolves outputs near mu to about s 2^-53: at s = 2e13
    # on [0, 10] every draw was mu itself (the true value released), at 1e-323 NaN
    for forbidden in ((), [(2.0, 3.0)]):
        with pytest.raises(ValueError, match="cannot be sampled in mode='continuous'"):
            bndp.ConstrainedLaplace(**kw, lower=0.0, upper=10.0, forbidden=forbidden,
                                    mode="continuous")


def test_continuous_constrained_draws_spread_at_the_largest_scale_it_takes():
    eps = 2.0 / (bndp.mechanisms.range.CONTINUOUS_MAX_SCALE_WIDTHS * 10.0) * 1.01
    m = bndp.ConstrainedLaplace(eps, sensitivity=1.0, lower=0.0, upper=10.0, mode="continuous")
    y = m.sample(np.full(20000, 5.0), rng=3)
    # nearly uniform on [0, 10], resolved to about 2^-27 of the width near the true value
    assert np.unique(y).size >= 0.999 * y.size
    assert abs(np.mean(y < 5.0) - 0.5) < 0.02 and abs(np.mean(np.abs(y - 5.0) < 0.5) - 0.1) < 0.01


# values and parameters beyond the doubles, infinite values on a half-line ----------------

@pytest.mark.parametrize("mode", ["exact", "continuous"])
def test_infinite_value_refused_on_a_half_line(mode):
    # the scalar-bounds fast path compared min and max with the bounds only: inf <= inf
    # passed, and the continuous law returned NaN (the default release clipped it)
    m = bndp.BoundedLaplace(1.0, sensitivity=1.0, lower=0.0, upper=INF, mode=mode)
    for bad in ([INF], [1.0, INF]):
        for on_outside in ("clip", "raise"):
            with pytest.raises(ValueError, match="`value` must be finite"):
                m.sample(bad, rng=0, on_outside=on_outside)
    with pytest.raises(ValueError, match="`value` must be finite"):
        bndp.sample([-INF, 1.0], mechanism="laplace", epsilon=1.0, sensitivity=1.0,
                     lower=-INF, upper=3.0, mode=mode, rng=0)


def test_integers_beyond_the_doubles_are_refused_as_not_finite():
    big = 2 ** 1100
    with pytest.raises(ValueError, match="`epsilon` must be finite"):
        bndp.BoundedLaplace(big, sensitivity=1.0, lower=0.0, upper=10.0)
    with pytest.raises(ValueError, match="`lower` must hold finite numbers"):
        bndp.BoundedGaussian(1.0, sensitivity=1.0, lower=-big, upper=10.0)
    with pytest.raises(ValueError, match="`epsilon` must be finite"):
        bndp.Budget(big)
    # a true value beyond the doubles is a number above the range: clipped, as any other
    m = bndp.BoundedLaplace(1.0, sensitivity=1.0, lower=0.0, upper=10.0)
    np.testing.assert_array_equal(m.sample([big, -big], rng=4), m.sample([10.0, 0.0], rng=4))


def test_sensitivity_beyond_the_range_takes_the_rows_width():
    # two true values of a row are at most its width apart: a sensitivity of 1e308 (whose
    # grid steps overflowed a double) draws as any sensitivity wider than the row
    rows = dict(lower=[0.0, 0.0], upper=[10.0, 11.0])
    fixed = dict(lower=0.0, upper=10.0)
    for mech, bounds in (("laplace", rows), ("laplace", fixed), ("gaussian", rows)):
        kw = dict(mechanism=mech, epsilon=1.0, rng=0, **bounds)
        np.testing.assert_array_equal(bndp.sample([1.0, 5.0], sensitivity=1e308, **kw),
                                      bndp.sample([1.0, 5.0], sensitivity=1e3, **kw))
    # the Gaussian's continuous calibration (its fixed-bounds search start) refuses a
    # sensitivity 2^1000 times the width, with the reason
    with pytest.raises(ValueError, match="differ by a factor above 2"):
        bndp.sample([1.0, 5.0], mechanism="gaussian", epsilon=1.0, sensitivity=1e308,
                    rng=0, **fixed)


# budgets: costs are checked before anything is spent ---------------------------------------

def _budgets(tmp_path):
    yield bndp.Budget(1.0)
    yield bndp.Budget.create(os.path.join(tmp_path, "l.db"), "b", epsilon=1.0)


@pytest.mark.parametrize("costs,err,msg", [
    ({"col": (-5.0, 0.0)}, ValueError, r"`costs\['col'\] epsilon` must be finite and >= 0"),
    ({"col": (0.1, -1e-9)}, ValueError, r"`costs\['col'\] delta` must be finite and >= 0"),
    ({"col": (INF, 0.0)}, ValueError, "must be finite"),
    ({"col": (float("nan"), 0.0)}, ValueError, "must be finite"),
    ({"col": (0.1,)}, TypeError, "must be a pair"),
    ({"col": "ab"}, TypeError, "must be a pair"),
    ({"col": (np.bool_(True), 0.0)}, TypeError, "must be a real number"),
    ([("col", (0.1, 0.0))], TypeError, "must be a mapping"),
    (None, TypeError, "must be a mapping"),
])
def test_charge_refuses_malformed_or_negative_costs(tmp_path, costs, err, msg):
    # a negative cost refunded the in-memory budget (remaining grew past the cap)
    for b in _budgets(tmp_path):
        with pytest.raises(err, match=msg):
            b.charge(costs)
        with pytest.raises(err, match=msg):
            b._check_charge(costs)
        assert b.remaining.epsilon == 1.0 and b.remaining.delta == 0.0


def test_spend_checks_its_columns_and_refuses_numpy_bools(tmp_path):
    for b in _budgets(tmp_path):
        with pytest.raises(ValueError, match=r"`costs\['a'\] epsilon`"):
            b.spend(0.1, columns={"a": (-1.0, 0.0), "b": (1.1, 0.0)})
        with pytest.raises(TypeError, match="must be a real number"):
            b.spend(np.bool_(True))
        assert b.remaining.epsilon == 1.0
        b.spend(0.25, columns={"a": (0.25, 0.0)})
        assert b.remaining.epsilon == 0.75
    with pytest.raises(TypeError, match="must be a real number"):
        bndp.Budget(np.bool_(True))


def test_budget_store_that_is_a_directory_is_refused_with_the_reason(tmp_path):
    # sqlite3.OperationalError "unable to open database file" before
    with pytest.raises(ValueError, match="is a directory"):
        bndp.Budget.open(str(tmp_path), "b", epsilon=1.0)


# laws and samplers -------------------------------------------------------------------------

@pytest.mark.parametrize("what", ["cdf", "logcdf", "sf", "logsf", "logpdf", "pdf", "ppf",
                                  "isf"])
def test_law_methods_refuse_none_for_their_argument(what):
    # ConstrainedLaplace's continuous law handed None on to the compiled kernel
    # (AttributeError); every mechanism refuses it alike
    for m in (bndp.ConstrainedLaplace(1.0, sensitivity=1.0, lower=0.0, upper=10.0,
                                      mode="continuous"),
              bndp.BoundedLaplace(1.0, sensitivity=1.0, lower=0.0, upper=10.0,
                                  mode="continuous")):
        with pytest.raises(TypeError):
            getattr(m, what)(None, 5.0)


def test_sparse_pandas_column_is_released_as_its_dense_values():
    pd = pytest.importorskip("pandas")
    kw = dict(mechanism="laplace", epsilon=1.0, sensitivity=1.0, lower=0.0, upper=10.0)
    dense = pd.Series([1.0, 0.0, 2.0, None], name="a", index=[5, 6, 7, 8])
    sparse = dense.astype(pd.SparseDtype("float64"))
    got = bndp.sample(sparse, rng=0, nulls="keep", **kw)
    want = bndp.sample(dense, rng=0, nulls="keep", **kw)
    pd.testing.assert_series_equal(got, want)


@pytest.mark.parametrize("scale", [1e-310, 5e-324])
def test_truncated_normal_refuses_a_subnormal_scale(scale):
    # 1 / scale overflows: the draws were NaN
    with pytest.raises(ValueError, match="`scale` must be a normal double"):
        bndp.truncated_normal(0.0, scale, 0.0, 10.0, size=3, rng=0)
    y = bndp.truncated_normal(0.0, 1e-300, 0.0, 10.0, size=3, rng=0)
    assert np.all((y >= 0.0) & (y < 1e-298))


# continuous mode: noise the doubles of the range cannot carry ------------------------------

def test_continuous_release_refuses_bounds_where_the_noise_rounds_away():
    # doubles near 1e16 are 2 apart; noise of scale about 1e-3 left every value unchanged
    v = np.array([1e16 - 4.0, 1e16, 1e16 + 8.0])
    lo, hi = 1e16 - 1e4, 1e16 + 1e4
    for mech in ("laplace", "gaussian"):
        for bounds in ((lo, hi), (np.full(3, lo), np.full(3, hi))):
            with pytest.raises(ValueError, match="would round to the true values"):
                bndp.sample(v, mechanism=mech, epsilon=1.0, sensitivity=1e-3, lower=bounds[0],
                            upper=bounds[1], mode="continuous", rng=0)
    with pytest.raises(ValueError, match="would round to the true values"):
        bndp.ConstrainedLaplace(1.0, sensitivity=1e-3, lower=lo, upper=hi, mode="continuous")
    with pytest.raises(ValueError, match="would round to the true values"):
        bndp.BoundedLaplace(1e15, sensitivity=1.0, lower=10.0, upper=120.0, mode="continuous")
    # a range whose values near 0 carry the noise is served (its far end is as coarse as the
    # doubles there: the continuous mode's documented caveat)
    m = bndp.BoundedLaplace(1.0, sensitivity=1.0, lower=0.0, upper=1e300, mode="continuous")
    assert np.isfinite(m.sample([1.0], rng=0)).all()
    y = bndp.sample(np.array([30.0, 50.0]), mechanism="gaussian", epsilon=1.0,
                    sensitivity=1.0, lower=0.0, upper=120.0, mode="continuous", rng=0)
    assert np.all(y != np.array([30.0, 50.0]))


# the command line: files it writes, specs it reads ------------------------------------------

def _cli(tmp_path, *argv):
    from bndp import cli
    return cli.main([str(a) for a in argv])


def test_cli_refuses_outputs_over_its_own_files_before_drawing(tmp_path, capsys):
    src = tmp_path / "in.csv"
    src.write_text("age\n30\n40\n")
    spec = tmp_path / "ok.toml"
    spec.write_text("[columns.age]\nlower = 0\nupper = 120\nsensitivity = 1\nepsilon = 0.5\n")
    store = tmp_path / "l.db"
    b = bndp.Budget.create(str(store), "b", epsilon=10.0)
    out = tmp_path / "out.csv"
    common = ["privatize", src, "-o", out, "--spec", spec, "--budget-store", store,
              "--budget-name", "b", "-q"]
    cases = [(["--summary-json", tmp_path / "nodir" / "x.json"], 1),
             (["--summary-json", tmp_path], 2), (["--summary-json", src], 2),
             (["--summary-json", out], 2), (["--summary-json", spec], 2)]
    for extra, code in cases:
        assert _cli(tmp_path, *common, *extra) == code, extra
    assert _cli(tmp_path, "privatize", src, "-o", store, "--spec", spec, "--budget-store",
                store, "--budget-name", "b", "-q") == 2
    assert _cli(tmp_path, "privatize", src, "-o", spec, "--spec", spec, "-q") == 2
    err = capsys.readouterr().err
    assert "refusing to write --summary-json over the input file" in err
    assert "refusing to write the output over the budget store" in err
    # nothing drawn, written or charged; the input and the spec untouched
    assert not out.exists() and b.remaining.epsilon == 10.0 and b.history == []
    assert src.read_text() == "age\n30\n40\n" and spec.read_text().startswith("[columns.age]")


def test_cli_refuses_duplicate_parquet_columns(tmp_path, capsys):
    pa = pytest.importorskip("pyarrow")
    pq = pytest.importorskip("pyarrow.parquet")
    t = pa.Table.from_arrays([pa.array([30.0, 40.0]), pa.array([31.0, 41.0])],
                             names=["age", "age"])
    src = tmp_path / "in.parquet"
    pq.write_table(t, src)
    out = tmp_path / "out.parquet"
    # the second "age" went out with its true values before
    assert _cli(tmp_path, "privatize", src, "-o", out, "--column", "age", "--lower", "0",
                "--upper", "120", "--sensitivity", "1", "--epsilon", "0.5", "-q") == 3
    assert "duplicate column name(s) in the schema: age" in capsys.readouterr().err
    assert not out.exists()


@pytest.mark.parametrize("text, what", [
    ('{"columns": {"age": {"lower": 0, "upper": 120, "sensitivity": 1, "epsilon": 0.5, '
     '"epsilon": 50}}}', "duplicate key(s) 'epsilon'"),
    ('{"columns": {"age": {"lower": 0, "upper": 120, "sensitivity": 1, "epsilon": 0.5}}, '
     '"budget": {"epsilon": 0.1}, "budget": {"epsilon": 100}}', "duplicate key(s) 'budget'"),
    ('{"columns": {"age": {"lower": 0, "upper": 120, "sensitivity": 1, "epsilon": 1' + "0" * 400
     + '}}}', "an integer of 401 digits"),
    ("[columns.age]\nlower = 'lo'\nupper = 'hi'\nsensitivity = 1\nepsilon = 0.5\n"
     "mode = 'foo'\n", "`mode` must be"),
    # an empty [budget], or a JSON null, meant no budget at all
    ("[columns.age]\nlower = 0\nupper = 120\nsensitivity = 1\nepsilon = 0.5\n[budget]\n",
     "[budget]: empty"),
    ('{"columns": {"age": {"lower": 0, "upper": 120, "sensitivity": 1, "epsilon": 0.5}}, '
     '"budget": null}', "budget is null"),
])
def test_cli_refuses_malformed_specs_before_reading(tmp_path, capsys, text, what):
    # JSON's last duplicate won (an epsilon of 50, a budget of 100); a 401-digit integer
    # raised OverflowError; a bad mode with per-row bounds was found only when drawing (an
    # empty input released and charged)
    src = tmp_path / "in.csv"
    src.write_text("age,lo,hi\n")
    spec = tmp_path / ("s.json" if text.startswith("{") else "s.toml")
    spec.write_text(text)
    out = tmp_path / "out.csv"
    assert _cli(tmp_path, "privatize", src, "-o", out, "--spec", spec, "-q") == 2
    assert what in capsys.readouterr().err
    assert not out.exists()


def test_range_of_more_grid_steps_than_a_kernel_serves_is_refused_when_planned():
    # (upper - lower) / sensitivity of 1e13: the grid needs more than 2^51 steps; the
    # mechanism was built and failed when drawing ("a row the table does not serve")
    for cls in (bndp.BoundedLaplace, bndp.BoundedGaussian):
        with pytest.raises(ValueError, match="more grid steps than the default release"):
            cls(1.0, sensitivity=1e-6, lower=0.0, upper=1e7)
    for mech in ("laplace", "gaussian"):
        for q in (np.array([5e6, 1.0]), np.array([5e6, 1], dtype=object)):
            with pytest.raises(ValueError, match="more grid steps than the default release"):
                bndp.sample(q, mechanism=mech, epsilon=1.0, sensitivity=1e-6,
                            lower=[0.0, 0.0], upper=[1e7, 2.0], rng=0)
    assert bndp.BoundedLaplace(1.0, sensitivity=1e-4, lower=0.0, upper=1e7).sample(
        [5e6], rng=0).shape == (1,)


def test_bounded_laplace_moments_at_a_scale_beyond_the_range_are_the_uniform_ones():
    # the incomplete gamma functions underflow: variance NaN (then 0) and mean 0 at 1e-300
    for eps in (1e-300, 1e-100):
        m = bndp.BoundedLaplace(eps, sensitivity=1.0, lower=0.0, upper=120.0,
                                mode="continuous")
        np.testing.assert_allclose(m.variance([0.0, 60.0]), 1200.0, rtol=1e-12)
        assert m.mean(0.0) == pytest.approx(60.0, rel=1e-12)
        assert m.bias(30.0) == pytest.approx(30.0, rel=1e-12)
    m = bndp.BoundedLaplace(1e-10, sensitivity=1.0, lower=0.0, upper=120.0, mode="continuous")
    assert m.variance(0.0) == pytest.approx(1200.0, rel=1e-9)


def test_cli_plot_bins_bounded_and_directory_as_csv_refused(tmp_path, capsys):
    src = tmp_path / "in.csv"
    src.write_text("age\n30\n40\n")
    rel = tmp_path / "rel.csv"
    col = ["--column", "age", "--lower", "0", "--upper", "120", "--sensitivity", "1",
           "--epsilon", "1", "-q"]
    assert _cli(tmp_path, "privatize", src, "-o", rel, *col) == 0
    spec = tmp_path / "ok.toml"
    spec.write_text("[columns.age]\nlower = 0\nupper = 120\nsensitivity = 1\nepsilon = 1\n")
    # a million bins took 79 s and 6.7 GB on a four-row file
    assert _cli(tmp_path, "plot", rel, "--spec", spec, "--column", "age", "--bins",
                1_000_000, "-o", tmp_path / "p.png") == 2
    assert "--bins must be from 2 to 10000" in capsys.readouterr().err
    pa = pytest.importorskip("pyarrow")
    pq = pytest.importorskip("pyarrow.parquet")
    (tmp_path / "pq").mkdir()
    pq.write_table(pa.table({"age": [30.0, 40.0]}), tmp_path / "pq" / "a.parquet")
    # AssertionError (exit 1) before
    assert _cli(tmp_path, "privatize", tmp_path / "pq", "--format", "csv", "-o",
                tmp_path / "o.csv", *col) == 2
    assert "--format csv needs one file" in capsys.readouterr().err


def test_cli_warnings_are_one_line_and_errors_come_before_reading(tmp_path, capsys):
    import warnings as w
    from bndp import cli

    def warns(args):
        w.warn("a coarse grid\n  (detail)", RuntimeWarning)
        return 0

    # a warning of a command is one "bndp: warning:" line, not Python's two with a path
    orig = cli._cmd_demo
    cli._cmd_demo = warns
    try:
        with w.catch_warnings():
            w.simplefilter("always")
            assert cli.main(["demo"]) == 0
    finally:
        cli._cmd_demo = orig
    err = capsys.readouterr().err
    assert "bndp: warning: a coarse grid" in err and "RuntimeWarning" not in err
    # estimate: a spec error names its column and is a usage error, before the data
    spec = tmp_path / "s.toml"
    spec.write_text("[columns.age]\nlower = 0\nupper = 120\nsensitivity = 1\nepsilon = -0.5\n")
    assert cli.main(["estimate", str(tmp_path / "missing.csv"), "--spec", str(spec)]) == 2
    assert "spec column 'age'" in capsys.readouterr().err
    with pytest.raises(SystemExit):
        cli.main(["estimate", str(tmp_path / "x.csv"), "--spec", str(spec), "--n-boot", "-5"])
    with pytest.raises(SystemExit):
        cli.main(["privatize", str(tmp_path / "x.csv"), "-o", str(tmp_path / "o.parquet"),
                  "--column", "age", "--lower", "0", "--upper", "1", "--sensitivity", "1",
                  "--epsilon", "1", "--compression", "bogus"])


def test_cli_io_errors_and_estimate_inputs_get_their_exit_codes(tmp_path, capsys):
    # a budget store in a missing directory is an I/O error (exit 1; it was 2)
    assert _cli(tmp_path, "budget", "create", "b", "--store", tmp_path / "no" / "l.db",
                "--epsilon", "1") == 1
    assert "does not exist" in capsys.readouterr().err
    spec = tmp_path / "ok.toml"
    spec.write_text("[columns.age]\nlower = 0\nupper = 120\nsensitivity = 1\nepsilon = 1\n")
    # estimate: a duplicate CSV header (accepted before) and a list column (exit 1) are
    # data errors, as privatize has them
    dup = tmp_path / "dup.csv"
    dup.write_text("age,age\n1,2\n")
    assert _cli(tmp_path, "estimate", dup, "--spec", spec) == 3
    assert "duplicate column name(s)" in capsys.readouterr().err
    pa = pytest.importorskip("pyarrow")
    pq = pytest.importorskip("pyarrow.parquet")
    lst = tmp_path / "lst.parquet"
    pq.write_table(pa.table({"age": pa.array([[1.0], [2.0]])}), lst)
    assert _cli(tmp_path, "estimate", lst, "--spec", spec) == 3
    assert "must be numeric" in capsys.readouterr().err

def test_optimizer_refuses_what_the_parameters_dtype_cannot_hold():
    torch = pytest.importorskip("torch")
    pytest.importorskip("opacus")
    from opacus import GradSampleModule
    from bndp.torch import BoundedNoiseOptimizer, linf_clip_sum

    def step(mechanism, clip_bound, dtype=torch.float32):
        torch.manual_seed(0)
        model = GradSampleModule(torch.nn.Linear(3, 1).to(dtype))
        opt = BoundedNoiseOptimizer(torch.optim.SGD(model.parameters(), lr=0.1),
                                    mechanism=mechanism, clip_bound=clip_bound,
                                    loss_reduction="sum", rng=1)
        model(torch.randn(4, 3, dtype=dtype)).sum().backward()
        opt.step()
        return opt, torch.cat([p.grad.reshape(-1) for p in model.parameters()])

    # the Gaussian baseline wrote inf into float32 gradients (sigma 1e39), a clipping bound of
    # 1e39 raised RuntimeError at the clamp: both refused before the step, nothing accounted
    for mech, c in ((1e39, 0.1), (1e300, 0.1), (1.0, 1e39)):
        with pytest.raises(ValueError, match="cannot hold"):
            step(mech, c)
    opt, g = step(1e39, 0.1, torch.float64)          # float64 holds them
    assert bool(torch.isfinite(g).all()) and opt.accountant.steps == 1
    with pytest.raises(TypeError, match="`clip_bound` must be a real number"):
        step(1.0, "0.1")
    with pytest.raises(ValueError, match="`clip_bound` must be >= 0"):
        linf_clip_sum(torch.ones(2, 3), -1.0)


def test_ledger_refuses_nul_characters_and_malformed_urls(tmp_path):
    # PostgreSQL raised psycopg.DataError for a NUL in a name, id or label (SQLite kept
    # them): refused alike on every store, before anything is recorded
    store = str(tmp_path / "l.db")
    with pytest.raises(ValueError, match="NUL"):
        bndp.Budget.open(store, "a\x00b", epsilon=1.0)
    b = bndp.Budget.create(store, "b", epsilon=1.0)
    with pytest.raises(ValueError, match="NUL"):
        b.spend(0.1, release_id="r\x00")
    with pytest.raises(ValueError, match="NUL"):
        b.spend(0.1, label="x\x00y")
    assert b.remaining.epsilon == 1.0 and b.history == []
    pytest.importorskip("psycopg")
    # a malformed URL raised psycopg.ProgrammingError
    with pytest.raises(ValueError, match="not a valid PostgreSQL URL"):
        bndp.Budget.open("postgresql://u@localhost/db?zzz=1", "b", epsilon=1.0)


def test_meta_tensors_are_refused_with_the_reason():
    torch = pytest.importorskip("torch")
    t = torch.empty(3, device="meta")
    # RuntimeError ("Tensor.item() cannot be called on meta tensors") or
    # NotImplementedError before
    for m in (bndp.TruncatedGaussian(1.0, lower=-1.0, upper=1.0),
              bndp.RectifiedGaussian(1.0, lower=-1.0, upper=1.0)):
        with pytest.raises(TypeError, match="'meta' device"):
            m.sample(t)
    with pytest.raises(TypeError, match="'meta' device"):
        bndp.sample(t, mechanism="laplace", epsilon=1.0, sensitivity=1.0, lower=0.0, upper=1.0)
