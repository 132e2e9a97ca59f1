"""Input kinds and API consistency: masked arrays, tables, bools, the column kind of every
sampler, argument-naming errors, ``nulls`` for type checkers, the bounded Laplace half-line,
numeric ``scale`` everywhere, and ``bndp.verify`` as function and module."""

import inspect
import math
import os
import subprocess
import sys
import textwrap

import numpy as np
import pytest

import bndp
from bndp import accounting

from .conftest import bndp_import_root

pd = pytest.importorskip("pandas")
pa = pytest.importorskip("pyarrow")

INF = math.inf
# mechanisms whose law does not depend on the default mode (or that have no mode)
NO_MODE = {
    "ConstrainedLaplace": lambda: bndp.ConstrainedLaplace(1.0, sensitivity=1.0, lower=0.0,
                                                          upper=10.0),
    "Laplace": lambda: bndp.Laplace(1.0, sensitivity=1.0),
    "Gaussian": lambda: bndp.Gaussian(1.0, delta=1e-5, sensitivity=1.0),
    "TruncatedGaussian": lambda: bndp.TruncatedGaussian(1.0, lower=0.0, upper=10.0),
    "RectifiedGaussian": lambda: bndp.RectifiedGaussian(1.0, lower=0.0, upper=10.0),
    "StochasticSign": lambda: bndp.StochasticSign(1.0),
}
ALL = dict(NO_MODE,
           BoundedLaplace=lambda: bndp.BoundedLaplace(1.0, sensitivity=1.0, lower=0.0, upper=10.0,
                                                      mode="continuous"),
           BoundedGaussian=lambda: bndp.BoundedGaussian(1.0, sensitivity=1.0, lower=0.0, upper=10.0,
                                                        mode="continuous"))
LAP = ALL["BoundedLaplace"]()


# ---------------------------------------------------------------------------------------
# masked arrays: masked entries are missing values; nothing about them is released
# ---------------------------------------------------------------------------------------
def test_masked_array_refused_by_default_naming_the_mask():
    x = np.ma.array([1.0, 2.0, 3.0], mask=[False, True, False])
    with pytest.raises(ValueError, match=r"1 missing value.*position 1 \(masked entries"):
        LAP.sample(x, rng=0)
    with pytest.raises(ValueError, match="masked"):
        bndp.sample(x, mechanism="laplace", epsilon=1, sensitivity=1, lower=0, upper=10, rng=0)


@pytest.mark.parametrize("name", sorted(ALL))
def test_masked_array_keep_returns_the_mask_and_hides_the_values(name):
    m = ALL[name]()
    mask = [False, True, False, True]
    a = np.ma.array([1.0, 2.0, 3.0, 4.0], mask=mask)
    b = np.ma.array([1.0, 9.0, 3.0, 7.5], mask=mask)  # differs only under the mask
    out_a = m.sample(a, rng=11, nulls="keep")
    out_b = m.sample(b, rng=11, nulls="keep")
    assert isinstance(out_a, np.ma.MaskedArray)
    assert out_a.mask.tolist() == mask
    # no noise drawn for masked entries, and their data is NaN, not the hidden value
    assert np.isnan(out_a.data[[1, 3]]).all()
    np.testing.assert_array_equal(out_a.data, out_b.data, strict=True)
    np.testing.assert_array_equal(out_a.compressed(), m.sample(np.array([1.0, 3.0]), rng=11))


def test_masked_array_without_masked_entries_stays_a_masked_array():
    x = np.ma.array([1.0, 5.0])
    out = LAP.sample(x, rng=3)
    assert isinstance(out, np.ma.MaskedArray) and not out.mask.any()
    np.testing.assert_array_equal(out.data, LAP.sample(np.array([1.0, 5.0]), rng=3))
    out = bndp.sample(x, mechanism="laplace", epsilon=1, sensitivity=1, lower=0, upper=10,
                      rng=3, nulls="keep")
    assert isinstance(out, np.ma.MaskedArray)
    # a masked scalar broadcast against per-row bounds: the mask follows the output's shape
    out = bndp.sample(np.ma.array(5.0), mechanism="laplace", epsilon=1, sensitivity=1,
                      lower=np.zeros(3), upper=10, rng=3)
    assert isinstance(out, np.ma.MaskedArray) and out.shape == (3,) and not out.mask.any()


def test_masked_array_elsewhere_is_a_type_error():
    lo = np.ma.array([0.0, 0.0], mask=[False, True])
    with pytest.raises(TypeError, match="`lower` is a NumPy masked array"):
        bndp.sample(np.ones(2), mechanism="laplace", epsilon=1, sensitivity=1, lower=lo,
                    upper=10)
    with pytest.raises(TypeError, match="`value` is a NumPy masked array"):
        LAP.mean(np.ma.array([1.0], mask=[True]))


# ---------------------------------------------------------------------------------------
# tables are not columns
# ---------------------------------------------------------------------------------------
def _tables():
    yield "pandas DataFrame", pd.DataFrame({"a": [1.0, 2.0], "b": [3.0, 4.0]})
    yield "pyarrow Table", pa.table({"a": [1.0, 2.0]})
    yield "pyarrow RecordBatch", pa.record_batch({"a": [1.0, 2.0]})
    try:
        import polars as pl
    except ImportError:
        return
    yield "Polars DataFrame", pl.DataFrame({"a": [1.0, 2.0]})


@pytest.mark.parametrize("what,table", list(_tables()), ids=lambda v: v if isinstance(v, str) else "")
def test_tables_are_refused_pointing_to_the_frame_api(what, table):
    msg = (rf"`value` is an? {what}.*bndp\.privatize\(frame, spec\).*bndp\.spark\.privatize"
           rf".*bndp\.dask\.privatize")
    with pytest.raises(TypeError, match=msg):
        LAP.sample(table, rng=0)
    with pytest.raises(TypeError, match=msg):
        bndp.sample(table, mechanism="gaussian", epsilon=1, sensitivity=1, lower=0, upper=10)
    with pytest.raises(TypeError, match=msg):
        bndp.Laplace(1.0, sensitivity=1.0).sample(table, rng=0)
    with pytest.raises(TypeError, match=msg):
        bndp.TruncatedGaussian(1.0, lower=0.0, upper=10.0).sample(table, rng=0)


def test_a_dataframe_as_bounds_is_refused():
    df = pd.DataFrame({"lo": [0.0, 0.0]})
    with pytest.raises(TypeError, match="`lower` is a pandas DataFrame"):
        bndp.sample(np.ones(2), mechanism="laplace", epsilon=1, sensitivity=1, lower=df,
                    upper=10)


# ---------------------------------------------------------------------------------------
# booleans, wherever they hide
# ---------------------------------------------------------------------------------------
@pytest.mark.parametrize("bad", [[0, True, 5.0], (1.0, False), [[0.0, 1.0], [np.True_, 2.0]],
                                 np.array([True]), [np.array([True, False])]],
                         ids=["list", "tuple", "nested", "array", "list-of-array"])
def test_booleans_are_refused_in_lists_as_in_arrays(bad):
    with pytest.raises(TypeError, match="`value` must hold real numbers, not booleans"):
        LAP.sample(bad, rng=0)
    with pytest.raises(TypeError, match="not booleans"):
        bndp.sample(bad, mechanism="laplace", epsilon=1, sensitivity=1, lower=0, upper=10)
    with pytest.raises(TypeError, match="`upper` must hold real numbers, not booleans"):
        bndp.sample([1.0, 1.0], mechanism="laplace", epsilon=1, sensitivity=1, lower=0,
                    upper=[5.0, True])


def test_lists_of_numbers_still_work():
    out = LAP.sample([0, 5, 7.5, np.float32(2.0), np.int64(3)], rng=1)
    assert out.shape == (5,) and ((out >= 0) & (out <= 10)).all()


# ---------------------------------------------------------------------------------------
# every mechanism's sample keeps the column kind
# ---------------------------------------------------------------------------------------
@pytest.mark.parametrize("name", sorted(ALL))
def test_every_sampler_keeps_the_column_kind(name):
    m = ALL[name]()
    vals = np.array([0.5, 2.0, 7.0, 9.5])
    ref = m.sample(vals, rng=5)
    s = pd.Series(vals, index=["a", "b", "c", "d"], name="x")
    out = m.sample(s, rng=5)
    assert isinstance(out, pd.Series) and out.name == "x"
    assert list(out.index) == ["a", "b", "c", "d"]
    np.testing.assert_array_equal(out.to_numpy(), ref)
    out = m.sample(pa.array(vals), rng=5)
    assert isinstance(out, pa.Array) and out.type == pa.float64()
    np.testing.assert_array_equal(out.to_numpy(), ref)
    out = m.sample(pa.chunked_array([vals[:1], vals[1:]]), rng=5)
    assert isinstance(out, pa.ChunkedArray) and [len(c) for c in out.chunks] == [1, 3]
    np.testing.assert_array_equal(out.to_numpy(), ref)
    # nulls="keep" through a Series, by keyword name of the data argument
    s2 = pd.Series([0.5, None, 7.0])
    out = m.sample(value=s2, rng=5, nulls="keep")
    assert out.isna().tolist() == [False, True, False]
    np.testing.assert_array_equal(out.dropna().to_numpy(), m.sample(np.array([0.5, 7.0]), rng=5))


def test_per_coordinate_bounds_refuse_nulls_keep_with_missing_values():
    m = bndp.TruncatedGaussian(1.0, lower=np.zeros(3), upper=np.ones(3))
    with pytest.raises(ValueError, match="per-coordinate bounds"):
        m.sample(pd.Series([0.5, None, 0.5]), nulls="keep")
    out = m.sample(pd.Series([0.5, 0.2, 0.5]), rng=0)  # nothing missing: fine
    assert isinstance(out, pd.Series)


# ---------------------------------------------------------------------------------------
# errors name the argument
# ---------------------------------------------------------------------------------------
@pytest.mark.parametrize("size", [(2 ** 63,), 2 ** 62, (2 ** 32, 2 ** 32)])
def test_huge_size_names_size(size):
    with pytest.raises(ValueError, match=r"`size` .* more than an array can hold"):
        LAP.sample(1.0, size=size)
    with pytest.raises(ValueError, match=r"`size`"):
        bndp.truncated_normal(0.0, 1.0, 0.0, 1.0, size=size)


def test_misbroadcast_bounds_name_the_arguments():
    kw = dict(mechanism="laplace", epsilon=1, sensitivity=1)
    with pytest.raises(ValueError, match=r"`value` \(3,\), `lower` \(2,\), `upper` \(\)"):
        bndp.sample(np.zeros(3), lower=np.zeros(2), upper=5, **kw)
    with pytest.raises(ValueError, match=r"`lower` \(2,\), `upper` \(3,\)"):
        bndp.sample(np.zeros(3), lower=np.zeros(2), upper=np.ones(3), **kw)


def test_accounting_errors_name_the_argument():
    with pytest.raises(ValueError, match="`alphas` must be finite and > 1"):
        accounting.rdp_to_dp([1.0], [0.5], 1e-5)
    m = bndp.TruncatedGaussian(1.0, lower=-np.ones(3), upper=np.ones(3))
    acc = accounting.PerInstanceAccountant(m, 1.0)
    with pytest.raises(ValueError, match="`summed_gradient` must be finite"):
        acc.step([np.nan, 0.0, 0.0])
    with pytest.raises(ValueError, match=r"`summed_gradient` of shape \(2,\)"):
        acc.step([0.0, 0.0])
    with pytest.raises(ValueError, match="`alphas`"):
        accounting.PerInstanceAccountant(m, 1.0, alphas=[2.0, 1.0])


def test_gaussian_rdp_extreme_sigma_is_finite_and_conservative():
    # exact value alpha C^2/(2 sigma^2) = 1e-616 > 0: below the doubles, reported as the
    # smallest positive double (an upper bound), never OverflowError, never 0
    r = accounting.gaussian_rdp(1e308, 1.0, 2.0)
    assert r == 5e-324
    assert accounting.gaussian_rdp(1e154, 1e154, 2.0) == pytest.approx(1.0, rel=1e-15)
    assert accounting.gaussian_rdp(1.0, 1e200, 2.0) == INF      # above the float range
    assert accounting.gaussian_rdp(2.0, 1.0, 3.0) == pytest.approx(3.0 / 8.0, rel=1e-15)
    np.testing.assert_allclose(accounting.gaussian_rdp(1e300, [1e300, 2e300], [2.0, 4.0]),
                               [5.0, 10.0], rtol=1e-15)


# ---------------------------------------------------------------------------------------
# nulls: in every sampler's signature, Parameters section, and for type checkers
# ---------------------------------------------------------------------------------------
SAMPLERS = [bndp.sample] + [ALL[n]().sample for n in sorted(ALL)]


@pytest.mark.parametrize("fn", SAMPLERS, ids=lambda f: f.__qualname__)
def test_nulls_is_declared_and_documented(fn):
    p = inspect.signature(fn).parameters["nulls"]
    assert p.default == "raise"
    assert "Literal" in str(p.annotation) or "Nulls" in str(p.annotation)
    doc = inspect.getdoc(fn)
    assert "Parameters\n----------\n" in doc, doc
    section = doc.split("Parameters\n----------\n", 1)[1].split("\nReturns\n", 1)[0]
    assert 'nulls : {"raise", "keep"}, default "raise"' in section, doc


def test_mypy_strict_accepts_nulls_and_checks_its_values(tmp_path):
    pytest.importorskip("mypy")
    script = tmp_path / "user.py"
    script.write_text(textwrap.dedent('''\
        import numpy as np
        import bndp

        x = np.array([1.0, np.nan, 3.0])
        a = bndp.sample(x, mechanism="laplace", epsilon=1.0, sensitivity=1.0, lower=0.0,
                        upper=10.0, nulls="keep")
        b = bndp.BoundedLaplace(1.0, sensitivity=1.0, lower=0.0, upper=10.0).sample(x, nulls="keep")
        c = bndp.BoundedGaussian(1.0, sensitivity=1.0, lower=0.0, upper=10.0).sample(x, nulls="raise")
        d = bndp.ConstrainedLaplace(1.0, sensitivity=1.0, lower=0.0).sample(x, nulls="keep")
        e = bndp.Laplace(1.0, sensitivity=1.0).sample(x, nulls="keep")
        f = bndp.Gaussian(1.0, delta=1e-5, sensitivity=1.0).sample(x, nulls="keep")
        g = bndp.TruncatedGaussian(1.0, lower=0.0, upper=10.0).sample(x, nulls="keep")
        h = bndp.StochasticSign(1.0).sample(x, nulls="keep")
        v: float = bndp.verify(bndp.BoundedLaplace(1.0, sensitivity=1.0, lower=0.0, upper=10.0))
        bad = bndp.BoundedLaplace(1.0, sensitivity=1.0, lower=0.0, upper=10.0).sample(x, nulls="drop")
        '''))
    env = dict(os.environ, PYTHONPATH=bndp_import_root())
    r = subprocess.run([sys.executable, "-m", "mypy", "--strict", "--no-incremental",
                        "--cache-dir", os.devnull, str(script)], capture_output=True,
                       text=True, cwd=tmp_path, env=env, timeout=600)
    errors = [ln for ln in r.stdout.splitlines() if ": error:" in ln]
    # exactly one error: the invalid value on the last line (so the check is real)
    assert len(errors) == 1, r.stdout + r.stderr
    assert "user.py:15:" in errors[0] and "nulls" in errors[0], errors


# ---------------------------------------------------------------------------------------
# BoundedLaplace on a half-line
# ---------------------------------------------------------------------------------------
@pytest.mark.parametrize("eps,dq", [(1.0, 1.0), (0.1, 3.0), (5.0, 0.5)])
def test_half_line_scale_is_the_closed_form_and_loss_is_at_most_epsilon(eps, dq):
    up = bndp.BoundedLaplace(eps, sensitivity=dq, lower=0.0, upper=INF, mode="continuous")
    down = bndp.BoundedLaplace(eps, sensitivity=dq, lower=-INF, upper=0.0, mode="continuous")
    b = dq / math.log((1.0 + math.exp(eps)) / 2.0)
    assert up.scale == pytest.approx(b, rel=1e-14) and up.scale >= b * (1 - 1e-15)
    assert down.scale == up.scale
    assert up.privacy_loss() <= eps and down.privacy_loss() <= eps
    assert up.privacy_loss() == pytest.approx(eps, rel=1e-13)
    assert bndp.verify(up) <= eps


def test_half_line_law_cdf_and_samples():
    m = bndp.BoundedLaplace(1.0, sensitivity=1.0, lower=0.0, upper=INF, mode="continuous")
    b = m.scale
    # closed form on [0, inf): C_q = 1 - exp(-q/b)/2; F(x) for x <= q and x >= q
    for q in (0.0, 0.7, 4.0):
        C = 1.0 - 0.5 * math.exp(-q / b)
        for x in (0.0, 0.3, q, q + 0.5, q + 10.0):
            if x <= q:
                F = 0.5 * (math.exp(-(q - x) / b) - math.exp(-q / b)) / C
            else:
                F = (0.5 - 0.5 * math.exp(-q / b) + 0.5 * (1.0 - math.exp(-(x - q) / b))) / C
            assert m.cdf(x, q) == pytest.approx(F, rel=1e-13, abs=1e-300)
        assert m.ppf(m.cdf(q + 1.0, q), q) == pytest.approx(q + 1.0, rel=1e-12)
    draws = m.sample(np.full(20000, 0.7), rng=123)
    assert (draws >= 0).all() and np.isfinite(draws).all()
    # Kolmogorov-Smirnov distance to the exact CDF (critical value 1.63/sqrt(n) at 1%)
    xs = np.sort(draws)
    F = m.cdf(xs, 0.7)
    n = len(xs)
    ks = max(np.max(np.arange(1, n + 1) / n - F), np.max(F - np.arange(n) / n))
    assert ks < 1.63 / math.sqrt(n)
    assert np.mean(draws) == pytest.approx(m.mean(0.7), rel=0.03)
    # a huge true value is fine on the half-line (no clipping from above)
    assert m.sample(1e6, rng=1) > 1e6 - 100


def test_half_line_default_is_the_grid_law_and_the_whole_line_is_refused():
    m = bndp.BoundedLaplace(1.0, sensitivity=1.0, lower=0.0, upper=INF)
    assert m.mode == "exact" and m.privacy_loss() <= 1.0
    x = m.sample(np.array([0.0, 3.0, 1e6]), rng=4)
    assert (x >= 0).all() and (np.ldexp(x, -m.exact_plan.exponent) % 1 == 0).all()
    with pytest.raises(NotImplementedError, match="pmf"):
        m.pdf(1.0, 0.0)
    md = bndp.BoundedLaplace(1.0, sensitivity=1.0, lower=-INF, upper=0.0, delta=0.01)
    assert md.privacy_loss() <= 1.0 - math.log1p(-0.01)
    assert (md.sample(np.zeros(100), rng=1) <= 0).all()
    with pytest.raises(ValueError, match="both be infinite.*bndp.Laplace"):
        bndp.BoundedLaplace(1.0, sensitivity=1.0, lower=-INF, upper=INF, mode="continuous")
    with pytest.raises(ValueError, match="`upper` must be finite or \\+inf"):
        bndp.BoundedLaplace(1.0, sensitivity=1.0, lower=0.0, upper=-INF, mode="continuous")


# ---------------------------------------------------------------------------------------
# one vocabulary: scale is a number
# ---------------------------------------------------------------------------------------
def test_constrained_laplace_scale_is_numeric():
    m = bndp.ConstrainedLaplace(1.0, sensitivity=1.0, forbidden=[(0.0, 1.0)], guarantee="metric",
                                mode="continuous")
    assert isinstance(m.scale, float) and m.scale == m.scale_at(3.0)
    assert m.scale_rule == "constant"
    assert eval(repr(m), {"ConstrainedLaplace": bndp.ConstrainedLaplace, "inf": INF}) == m
    dd = bndp.ConstrainedLaplace(1.0, sensitivity=2.0, lower=0.0, scale_rule="distance_dependent",
                                 mode="continuous")
    assert dd.scale_rule == "distance_dependent"
    assert isinstance(dd.scale, float)
    # the largest scale it uses, at the bound: sigma(0) = g(0) dF/eps, g(0) = 1/(a e)
    assert dd.scale == pytest.approx(2.0 * 1.585954, rel=1e-6)
    assert dd.scale == pytest.approx(dd.scale_at(0.0), rel=1e-15)
    assert dd.scale >= np.max(dd.scale_at(np.linspace(0.0, 50.0, 101)))
    for name in sorted(ALL):
        assert isinstance(ALL[name]().scale, float), name


# ---------------------------------------------------------------------------------------
# bndp.verify: the function and the module, neither shadowing the other
# ---------------------------------------------------------------------------------------
def test_verify_is_callable_and_the_module():
    code = textwrap.dedent('''\
        import bndp.verify
        import bndp.verify as v
        from bndp.verify import verify, privacy_profile
        import bndp
        m = bndp.BoundedLaplace(1.0, sensitivity=1.0, lower=0.0, upper=10.0, mode="continuous")
        assert bndp.verify(m) == v(m) == verify(m) == m.privacy_loss()
        assert bndp.verify.privacy_profile is privacy_profile is v.privacy_profile
        assert bndp.verify.bounded_laplace_loss(m.scale, 1.0, 0.0, 10.0) <= 1.0
        assert bndp.verify.__name__ == "bndp.verify"
        print("ok")
        ''')
    env = dict(os.environ, PYTHONPATH=bndp_import_root())
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env,
                       timeout=300)
    assert r.returncode == 0 and r.stdout.strip() == "ok", r.stdout + r.stderr
    with pytest.raises(TypeError, match="privacy_loss"):
        bndp.verify(object())


# ---------------------------------------------------------------------------------------
# per-row checks: the one-pass fast path agrees with the worded checks
# ---------------------------------------------------------------------------------------
def test_per_row_fast_checks_agree_with_numpy():
    # _rows.rows_bounds_ok / rows_inside (the validation's one-pass path for long per-row
    # arrays) against the NumPy predicates, with NaN, infinities, signed zeros, equal
    # bounds and values just outside, at every position of a block (the vector lanes)
    from bndp._core import rows as _rows
    r = np.random.default_rng(4)
    specials = [np.nan, INF, -INF, 0.0, -0.0, 5e-324, 1e308]
    for m in (1, 7, 64, 67, 130):
        for _ in range(60):
            lo = np.round(r.uniform(-10.0, 10.0, m), 1)
            hi = lo + np.round(r.uniform(0.1, 5.0, m), 1)
            q = r.uniform(lo, hi)
            for a in (lo, hi, q):
                k = int(r.integers(0, m))
                if r.random() < 0.6:
                    a[k] = specials[int(r.integers(0, len(specials)))]
            if r.random() < 0.3:
                k = int(r.integers(0, m))
                q[k] = np.nextafter(hi[k], INF) if r.random() < 0.5 else np.nextafter(lo[k], -INF)
            if r.random() < 0.2:
                k = int(r.integers(0, m))
                hi[k] = lo[k]
            with np.errstate(invalid="ignore"):
                fin = np.isfinite(lo) & np.isfinite(hi)
                ok_b = bool(np.all(fin & (lo < hi)))
                ok_q = bool(np.all(fin & np.isfinite(q) & (lo <= q) & (q <= hi)))
            assert _rows.rows_bounds_ok(lo, hi) is ok_b
            assert _rows.rows_inside(q, lo, hi) is ok_q
    with pytest.raises(ValueError, match="different lengths"):
        _rows.rows_inside(np.zeros(3), np.zeros(3), np.ones(2))


@pytest.mark.parametrize("where", [0, 63, 500, 999])
def test_long_per_row_inputs_get_the_worded_errors(where):
    # per-row arrays long enough for the one-pass checks: a bad row still gets the error
    # that names it, values outside are clipped (or refused with on_outside="raise")
    m = 1000
    lo, hi = np.zeros(m), np.full(m, 10.0)
    q = np.full(m, 5.0)
    kw = dict(mechanism="laplace", epsilon=1.0, sensitivity=1.0, rng=0)
    for name, arr, bad, msg in (("lower", lo, np.nan, "`lower` must be finite"),
                                ("upper", hi, INF, "`upper` must be finite"),
                                ("lower", lo, 10.0, "`lower` must be < `upper`")):
        a = arr.copy()
        a[where] = bad
        args = {"lower": lo, "upper": hi, name: a}
        with pytest.raises(ValueError, match=msg):
            bndp.sample(q, **args, **kw)
    qn = q.copy()
    qn[where] = np.nan
    with pytest.raises(ValueError, match="`value` must be finite"):
        bndp.sample(qn, lower=lo, upper=hi, **kw)
    qo = q.copy()
    qo[where] = 11.0
    with pytest.raises(ValueError, match=r"must lie in \[lower, upper\]"):
        bndp.sample(qo, lower=lo, upper=hi, on_outside="raise", **kw)
    clipped = q.copy()
    clipped[where] = 10.0
    np.testing.assert_array_equal(bndp.sample(qo, lower=lo, upper=hi, **kw),
                                  bndp.sample(clipped, lower=lo, upper=hi, **kw))
    # a row with lower == upper holding its value: refused (the one-pass check of values
    # and bounds together needs lower < upper too)
    lo2, hi2, q2 = lo.copy(), hi.copy(), q.copy()
    lo2[where], hi2[where], q2[where] = 5.0, 5.0, 5.0
    with pytest.raises(ValueError, match="`lower` must be < `upper`"):
        bndp.sample(q2, lower=lo2, upper=hi2, **kw)
    # good rows still check on_outside, and draw as the same rows given as lists (the
    # checks' slow path)
    with pytest.raises(ValueError, match="on_outside"):
        bndp.sample(q, lower=lo, upper=hi, on_outside="wrap", **kw)
    np.testing.assert_array_equal(bndp.sample(q, lower=lo, upper=hi, **kw),
                                  bndp.sample(q.tolist(), lower=lo, upper=hi, **kw))
