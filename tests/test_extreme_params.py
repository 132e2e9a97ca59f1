"""Extreme but valid parameters (issue 14): a calibration either returns a finite, positive
scale whose certified loss is <= epsilon (samples finite and in bounds), or raises a
ValueError naming the argument and the representable range. Never NaN, inf or 0."""

import math
from fractions import Fraction

import numpy as np
import pytest

import bndp
from bndp import cli
from bndp.calibrate import bounded_gaussian_sigma, bounded_laplace_scale
from bndp.verify import bounded_gaussian_loss, bounded_laplace_loss


# ---------------------------------------------------------------------------------------
# Bounded Laplace
# ---------------------------------------------------------------------------------------

@pytest.mark.parametrize("eps, dq, name", [
    (1e-320, 1.0, "epsilon"),        # was NaN
    (1e308, 1.0, "sensitivity"),      # was inf
    (1e300, 1e-300, "sensitivity"),   # was 0
])
def test_bounded_laplace_unrepresentable_scale_is_refused(eps, dq, name):
    with pytest.raises(ValueError, match=f"`epsilon`.*{'' if name == 'epsilon' else '`sensitivity`'}"
                       ".*(range|at least)"):
        bounded_laplace_scale(eps, dq, 0.0, 10.0)
    with pytest.raises(ValueError, match="`epsilon`"):
        bounded_laplace_scale(np.array([1.0, eps]), dq, 0.0, 10.0)      # array path too
    with pytest.raises(ValueError, match="`epsilon`"):
        bndp.BoundedLaplace(eps, sensitivity=dq, lower=0.0, upper=10.0, mode="continuous")


@pytest.mark.parametrize("eps, dq, lo, hi", [
    (1e-300, 1e-10, 0.0, 10.0),
    (1e-290, 1.0, 0.0, 1e300),
    (1e280, 1.0, 0.0, 10.0),
    (1e10, 1e-280, -1e-270, 1e-270),
    (1.0, 1e-300, 0.0, 1e-290),
])
def test_bounded_laplace_extreme_but_representable(eps, dq, lo, hi):
    m = bndp.BoundedLaplace(eps, sensitivity=dq, lower=lo, upper=hi, mode="continuous")
    assert math.isfinite(m.scale) and m.scale > 0
    assert m.privacy_loss() <= eps * (1 + 1e-12)
    assert bounded_laplace_loss(m.scale, dq, lo, hi) <= eps * (1 + 1e-12)
    x = m.sample(np.array([lo, 0.5 * lo + 0.5 * hi, hi]), rng=0)
    assert np.isfinite(x).all() and (x >= lo).all() and (x <= hi).all()


def test_cli_calibrate_refuses_epsilon_1e_320(capsys):
    code = cli.main(["calibrate", "--epsilon", "1e-320", "--sensitivity", "1",
                     "--lower", "0", "--upper", "10"])
    out, err = capsys.readouterr()
    assert code != 0
    assert "nan" not in out.lower()
    assert "epsilon" in err


def test_cli_privatize_refuses_epsilon_1e_320(tmp_path, capsys):
    src = tmp_path / "in.csv"
    src.write_text("x\n1\n2\n")
    dst = tmp_path / "out.csv"
    for mech in ("laplace", "gaussian"):
        code = cli.main(["privatize", str(src), "-o", str(dst), "--column", "x",
                         "--mechanism", mech, "--epsilon", "1e-320", "--sensitivity", "1",
                         "--lower", "0", "--upper", "10"])
        err = capsys.readouterr().err
        assert code != 0
        assert "epsilon" in err
        assert not dst.exists()


# ---------------------------------------------------------------------------------------
# Bounded Gaussian
# ---------------------------------------------------------------------------------------

@pytest.mark.parametrize("dq, lo, hi", [
    (1e160, 0.0, 10.0),                    # sensitivity >= 1e160: NaN sigma before
    (1e200, 0.0, 1.0),
    (1.0, 0.0, 1e160),                     # upper >= 1e160: NaN sigma before
    (1.0, -1e300, 1e300),
    (1e-20, [0.0, 0.0], [1.0, 1.0]),       # m >= 2, dq/w <= 1e-20: NaN sigma before
    (1e-25, [0.0] * 3, [1.0, 2.0, 3.0]),
    (1e-300, [0.0, 0.0], [1.0, 1.0]),      # verify was 1.406 (m = 2)
    (1e-300, [0.0] * 5, [1.0] * 5),        # verify was 2.236 (m = 5)
    (1e160, [0.0, 0.0], [1.0, 1.0]),
    (1.0, [0.0, 0.0], [1e160, 1e160]),
])
def test_bounded_gaussian_extreme_but_representable(dq, lo, hi):
    eps = 1.0
    for calibration in ("paper", "tight"):
        m = bndp.BoundedGaussian(eps, sensitivity=dq, lower=lo, upper=hi, sigma_rule=calibration,
                                 mode="continuous")
        assert math.isfinite(m.sigma) and m.sigma > 0
        loss = bounded_gaussian_loss(m.sigma, dq, lo, hi)
        assert 0 <= loss <= eps
        q = np.asarray(lo, dtype=float)
        x = m.sample(q, size=(50,) if m.dim is None else (50,), rng=1)
        lo_a, hi_a = np.asarray(lo, float), np.asarray(hi, float)
        assert np.isfinite(x).all() and (x >= lo_a).all() and (x <= hi_a).all()
    # the paper's sigma is homogeneous: scaling (dq, bounds) by 2**k scales sigma by 2**k
    # exactly (the computation is done in units of a power of two)
    s1 = bounded_gaussian_sigma(eps, dq, lo, hi)
    s2 = bounded_gaussian_sigma(eps, dq * 2.0 ** 20, np.asarray(lo, float) * 2.0 ** 20,
                                np.asarray(hi, float) * 2.0 ** 20)
    assert s2 == s1 * 2.0 ** 20


def test_bounded_gaussian_multivariate_tiny_sensitivity_is_tight():
    # at dq/w -> 0 the paper's condition tends to (W dq)/sigma^2 <= eps and the exact loss
    # to dq W / sigma^2: the certified loss must approach eps from below, not sqrt(m) eps
    for m in (2, 5):
        mech = bndp.BoundedGaussian(1.0, sensitivity=1e-300, lower=[0.0] * m, upper=[1.0] * m,
                                    mode="continuous")
        assert mech.sigma ** 2 == pytest.approx(math.sqrt(m) * 1e-300, rel=1e-12)
        loss = mech.privacy_loss()
        assert 1 - 1e-12 < loss <= 1.0


@pytest.mark.parametrize("eps, dq, lo, hi, name", [
    (1e-320, 1.0, 0.0, 10.0, "epsilon"),
    (1e308, 1.0, 0.0, 10.0, "epsilon"),
    (1.0, 1e-310, 0.0, 10.0, "sensitivity"),
    (1.0, 1e300, 0.0, 1e-300, "sensitivity"),
])
def test_bounded_gaussian_unrepresentable_is_refused(eps, dq, lo, hi, name):
    with pytest.raises(ValueError, match=f"`{name}`.*(range|2\\*\\*1000)"):
        bounded_gaussian_sigma(eps, dq, lo, hi)
    with pytest.raises(ValueError, match=f"`{name}`"):
        bounded_gaussian_sigma(np.array([1.0, eps]), dq, lo, hi)


# ---------------------------------------------------------------------------------------
# Constrained (truncated and normalised) Laplace
# ---------------------------------------------------------------------------------------

# [0, w] with w >> dF is a half-line for all practical purposes: sigma* tends to
# dF/ln((e^eps + 1)/2) = 1.6126053959... (eps = 1). It grew with w before (2.02 at 1e14,
# 37.5 at 1e16, 355273 at 1e20: a rounding margin proportional to |endpoint|/sigma).
HALF_LINE_1 = 1.0 / math.log((math.e + 1) / 2)


@pytest.mark.parametrize("w", [1e12, 1e14, 1e16, 1e20, 1e100, 1e200])
def test_constrained_laplace_sigma_independent_of_the_width(w):
    m = bndp.ConstrainedLaplace(1.0, sensitivity=1.0, lower=0.0, upper=w, mode="continuous")
    assert HALF_LINE_1 <= m.scale <= HALF_LINE_1 * (1 + 1e-12)
    assert m.privacy_loss() <= 1.0           # was 2.5e70 at w = 1e200
    y = m.sample(np.array([0.0, 0.5 * w, w]), rng=2)
    assert np.isfinite(y).all() and (y >= 0).all() and (y <= w).all()


@pytest.mark.parametrize("dF, lo, hi, forbidden", [
    (1e-300, 0.0, 1.0, ()),                  # verify was 2.5e171
    (1e-300, 0.0, 1e-299, ()),
    (1.0, 1e20, 1e20 + 1e6, ()),             # far from the origin
    (1.0, -math.inf, math.inf, [(1e20, 1e20 + 1e6)]),
    (1e-3, 0.0, 1e12, [(1.0, 2.0), (1e11, 1e11 + 1.0)]),
])
def test_constrained_laplace_is_scale_and_translation_invariant(dF, lo, hi, forbidden):
    if lo == 1e20:
        # doubles there are 16384 apart, the scale about 1.6: every draw of the continuous
        # law would round to its true value, so it is refused (as the default mode refuses
        # these bounds); the calibration's invariance is checked on the compiled scale
        with pytest.raises(ValueError, match="would round to the true values"):
            bndp.ConstrainedLaplace(1.0, sensitivity=dF, lower=lo, upper=hi,
                                    mode="continuous")
        L, R = np.array([lo]), np.array([hi])
        s = bndp._core.calibrate.cl_scale(L, R, -R[::-1].copy(), -L[::-1].copy(), 1.0, dF, False)
        s0 = bndp._core.calibrate.cl_scale(np.array([0.0]), np.array([hi - lo]), np.array([lo - hi]),
                            np.array([0.0]), 1.0, 1.0, False)
        assert s / dF == pytest.approx(s0, rel=1e-9)
        return
    m = bndp.ConstrainedLaplace(1.0, sensitivity=dF, forbidden=forbidden, lower=lo, upper=hi,
                                mode="continuous")
    assert math.isfinite(m.scale) and m.scale > 0
    assert m.privacy_loss() <= 1.0
    # the same problem in units of dF, translated to the origin, gives the same sigma/dF
    c = lo if math.isfinite(lo) else forbidden[0][0]
    f1 = [((a - c) / dF, (b - c) / dF) for a, b in forbidden]
    ref = bndp.ConstrainedLaplace(1.0, sensitivity=1.0, forbidden=f1, lower=(lo - c) / dF,
                                  upper=(hi - c) / dF, mode="continuous")
    assert m.scale / dF == pytest.approx(ref.scale, rel=1e-9)


# ---------------------------------------------------------------------------------------
# Truncated normal sampler (the docstring promises never inf/nan)
# ---------------------------------------------------------------------------------------

from bndp.distributions import truncated_normal  # noqa: E402

TN_EXTREME = [
    # loc, scale, lower, upper (all NaN before)
    (0.0, 1.0, 1e150, np.inf),
    (0.0, 1.0, 1e160, np.inf),
    (0.0, 1.0, -np.inf, -1e200),
    (1e200, 1.0, -1.0, 1.0),
    (-1e200, 1.0, -1.0, 1.0),
    (2.0, 1e-300, -1.0, 1.0),
    (0.0, 1e-300, 1.0, 2.0),
    (0.0, 1.0, 1e11, np.inf),          # was 3e11 above the bound (tail quantile start)
    (1e13, 1.0, -1.0, 0.0),
]


@pytest.mark.parametrize("loc, scale, lo, hi", TN_EXTREME)
def test_truncated_normal_far_tails_finite_and_in_bounds(loc, scale, lo, hi):
    for x in (truncated_normal(loc, scale, lo, hi, size=500, rng=3),              # scalar
              truncated_normal(np.full(300, loc), scale, lo, hi, rng=4),          # rows
              np.array([truncated_normal(loc, scale, lo, hi, rng=5)])):
        assert np.isfinite(x).all() and (x >= lo).all() and (x <= hi).all()


@pytest.mark.parametrize("beta", [3e8, 1e9, 1e11, 2e12, 1e14, 1e200])
def test_truncated_normal_far_tail_law(beta):
    # N(-beta, 1) on [0, inf): x is exponential of rate beta to relative O(1/beta^2)
    for x in (truncated_normal(-beta, 1.0, 0.0, np.inf, size=4000, rng=6),
              truncated_normal(beta, 1.0, -np.inf, 0.0, size=4000, rng=6) * -1.0):
        t = x * beta
        assert abs(t.mean() - 1.0) < 0.08 and abs(np.median(t) - math.log(2)) < 0.06


def test_truncated_gaussian_theta_far_outside():
    m = bndp.TruncatedGaussian(sigma=1.0, lower=-1.0, upper=1.0)
    x = m.sample(np.array([1e200, -1e200, 1e13, 0.0]), rng=7)
    assert np.isfinite(x).all() and (np.abs(x) <= 1).all()
    assert x[0] == 1.0 and x[1] == -1.0


# ---------------------------------------------------------------------------------------
# epsilon from 1e-12 to 1e300: a certified law or a refusal that names `epsilon`
# ---------------------------------------------------------------------------------------

EPS_SWEEP = [1e-12, 1e-9, 2e-9, 1e-6, 1e-5, 5e-5, 1e-4, 3e-4, 1e-3, 1.0, 1e3, 1e5, 1e6, 1e8,
             1e15, 1e100, 1e300]


ONE_D = {
    "laplace": dict(lower=0.0, upper=120.0),
    "laplace-delta": dict(lower=0.0, upper=120.0, delta=1e-6),
    "gaussian": dict(lower=0.0, upper=120.0),
    "gaussian-tight": dict(lower=0.0, upper=120.0, sigma_rule="tight"),
    "half-line": dict(lower=0.0, upper=np.inf),
    "half-line-up": dict(lower=-np.inf, upper=120.0),
    "constrained": dict(lower=0.0, upper=120.0),
    "constrained-gap": dict(lower=0.0, upper=120.0, forbidden=[(10.0, 20.0)]),
    "constrained-gap-metric": dict(lower=0.0, upper=120.0, forbidden=[(10.0, 20.0)],
                                   guarantee="metric"),
    "constrained-half-line": dict(lower=0.0, upper=np.inf),
    "constrained-half-line-gap": dict(lower=0.0, upper=np.inf, forbidden=[(10.0, 20.0)]),
    "constrained-half-line-gap-metric": dict(lower=0.0, upper=np.inf, forbidden=[(10.0, 20.0)],
                                             guarantee="metric"),
    "constrained-line": dict(),
    "constrained-line-gap": dict(forbidden=[(10.0, 20.0)]),
    "constrained-line-gap-metric": dict(forbidden=[(10.0, 20.0)], guarantee="metric"),
}


def _one_d(kind, eps):
    cls = (bndp.BoundedLaplace if kind.startswith(("laplace", "half-line")) else
           bndp.BoundedGaussian if kind.startswith("gaussian") else bndp.ConstrainedLaplace)
    return cls(epsilon=eps, sensitivity=1.0, **ONE_D[kind])


@pytest.mark.parametrize("kind", sorted(ONE_D))
@pytest.mark.parametrize("eps", EPS_SWEEP)
def test_epsilon_sweep_certified_or_refused_by_name(kind, eps):
    """Every epsilon gives a law certified at most epsilon, releasing inside the bounds, or
    a ValueError naming `epsilon`; no other exception, no warning (a 'math domain error', a
    RuntimeError or a 'bounds far from 0' warning on [0, 120] before)."""
    import warnings
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        try:
            m = _one_d(kind, eps)
        except ValueError as exc:
            assert "`epsilon`" in str(exc), str(exc)
            assert "math domain" not in str(exc)
            return
        assert m.privacy_loss() <= eps - math.log1p(-getattr(m, "delta", 0.0))
        x = m.sample(np.array([0.0, 30.0, 120.0]), rng=5)
    assert ((x >= m.lower) & (x <= m.upper)).all()
    for a, b in getattr(m, "forbidden", ()):
        assert ((x <= a) | (x >= b)).all()


@pytest.mark.parametrize("mechanism", ["laplace", "gaussian"])
@pytest.mark.parametrize("eps", EPS_SWEEP)
def test_epsilon_sweep_per_row_bounds(mechanism, eps):
    import warnings
    lo = np.array([0.0, -5.0, 0.0, 10.0])
    hi = np.array([120.0, 5.0, 0.5, 1e6])
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        try:
            x = bndp.sample(np.array([30.0, 0.0, 0.2, 12.0]), mechanism=mechanism, epsilon=eps,
                            sensitivity=1.0, lower=lo, upper=hi, rng=1)
        except ValueError as exc:
            assert "`epsilon`" in str(exc), str(exc)
            return
    assert ((x >= lo) & (x <= hi)).all()


@pytest.mark.parametrize("eps", ["1e-15", "1e-9", "1e300"])
def test_cli_extreme_epsilon_releases_or_names_epsilon(tmp_path, capsys, eps):
    src = tmp_path / "in.csv"
    src.write_text("age\n30\n45\n12\n")
    for mech in ("laplace", "gaussian"):
        dst = tmp_path / f"out-{mech}.csv"
        code = cli.main(["privatize", str(src), "-o", str(dst), "--column", "age",
                         "--mechanism", mech, "--epsilon", eps, "--sensitivity", "1",
                         "--lower", "0", "--upper", "120"])
        err = capsys.readouterr().err
        assert "math domain" not in err and "Warning" not in err and "does not serve" not in err
        if code == 0:
            assert dst.exists()
        else:
            assert code == 2 and "`epsilon`" in err and not dst.exists(), err


@pytest.mark.parametrize("lower, upper", [([0.0, 0.0], [120.0, 10.0]),
                                          ([-5.0, 0.0, 3.0], [5.0, 1.0, 1000.0])])
def test_multivariate_gaussian_large_epsilon_is_served_at_once(lower, upper):
    """From saturation_target(m) on, every scale of the product law is certified (a shift
    loss is below 46 ln 2 per coordinate): the fixed-scale law, its certificate below the
    bound; the scale search failed there after seconds ('did not bracket')."""
    from bndp._laws.product import saturation_target
    m = len(lower)
    for eps in (saturation_target(m), 1e3, 1e300):
        g = bndp.BoundedGaussian(epsilon=eps, sensitivity=1.0, lower=lower, upper=upper)
        assert g.privacy_loss() <= min(eps, 46 * math.log(2.0) * m)
        q = np.array(upper) - 0.3
        x = g.sample(np.tile(q, (50, 1)), rng=2)
        assert ((x >= lower) & (x <= upper)).all()
        gamma = g.exact_plan.gamma
        assert (np.abs(x - q) <= gamma).mean() > 0.99     # noise far below the grid step


def _unbounded_sets(eps):
    """(half-line?, constructor) for the unbounded allowed sets."""
    inf = math.inf
    return [(True, lambda: bndp.BoundedLaplace(epsilon=eps, sensitivity=1.0, lower=0.0,
                                               upper=inf)),
            (True, lambda: bndp.BoundedLaplace(epsilon=eps, sensitivity=1.0, lower=-inf,
                                               upper=5.0)),
            (False, lambda: bndp.ConstrainedLaplace(epsilon=eps, sensitivity=1.0, lower=0.0,
                                                    upper=inf, forbidden=[(10.0, 20.0)])),
            (False, lambda: bndp.ConstrainedLaplace(epsilon=eps, sensitivity=1.0, lower=-inf,
                                                    upper=inf, forbidden=[(10.0, 20.0)])),
            (False, lambda: bndp.ConstrainedLaplace(epsilon=eps, sensitivity=1.0, lower=0.0,
                                                    upper=inf, forbidden=[(10.0, 20.0)],
                                                    guarantee="metric"))]


def _recording(monkeypatch, module, name, pick):
    """Patch ``module.name`` to record ``pick(*args)`` of every call; the list of records."""
    calls = []
    real = getattr(module, name)

    def recording(*args):
        calls.append(pick(*args))
        return real(*args)

    monkeypatch.setattr(module, name, recording)
    return calls


@pytest.fixture
def set_table_sizes(monkeypatch):
    """The half-widths of the tables the constrained scale search builds, in order (the
    plan cache cleared before and after)."""
    from bndp._laws import constrained
    sizes = _recording(monkeypatch, constrained, "_set_table", lambda u, n, tails: n)
    constrained._plan_constrained.cache_clear()
    yield sizes
    constrained._plan_constrained.cache_clear()


@pytest.mark.parametrize("eps", [3e-3, 1e-3, 3e-4, 1e-4, 5e-5, 1e-5, 1e-7])
def test_unbounded_set_planning_work_is_bounded(set_table_sizes, eps):
    """An unbounded allowed set (half-line, line with gaps) at a small epsilon: every table
    the scale search builds has at most MAX_SET_INTERVALS offsets on a side and the search
    builds few of them (at most SEARCH_WORK times that many offsets in all), or the plan is
    refused naming `epsilon` within that work (a half-line: before any table is built).
    At 1e-4 the search built twenty tables of 2.7 million offsets (9 s, 350 MB); at 5e-5
    it planned for more than 20 s."""
    from bndp._laws import constrained
    from bndp._laws import constants as _grid
    from bndp._laws.constrained import SEARCH_WORK
    sizes = set_table_sizes
    for half_line, make in _unbounded_sets(eps):
        constrained._plan_constrained.cache_clear()
        sizes.clear()
        try:
            m = make()
        except ValueError as exc:
            assert "`epsilon`" in str(exc) and "mode='continuous'" in str(exc), str(exc)
            assert sum(sizes) <= SEARCH_WORK * _grid.MAX_SET_INTERVALS
            if half_line and eps <= 5e-5:
                assert sizes == [], "a half-line's refusal comes before any table is built"
            continue
        assert m.privacy_loss() <= eps
        assert max(sizes) <= _grid.MAX_SET_INTERVALS
        assert sum(sizes) <= SEARCH_WORK * _grid.MAX_SET_INTERVALS, (len(sizes), max(sizes))
        x = m.sample(np.array([0.0, 30.0]), rng=3)
        assert np.isfinite(x).all()


@pytest.mark.parametrize("eps", [1e-3, 1e-4, 5e-5])
@pytest.mark.parametrize("kind", ["half-line", "constrained-half-line-gap", "constrained-line",
                                  "constrained-line-gap", "constrained-line-gap-metric"])
def test_unbounded_set_small_epsilon_costs_the_continuous_noise(set_table_sizes, kind, eps):
    """On an unbounded allowed set the grid law's scale is the continuous mechanism's (to
    0.1 %) down to the smallest epsilon served, and the scale search builds at most four
    tables. With a weight floor of 2^12 the rounding of the far weights cost about 1/4096 in
    the certificate: at 1e-4 the scale was 1.7 times the continuous one after twelve
    tables, and the line with a gap at 5e-5 was refused after fourteen."""
    sizes = set_table_sizes
    try:
        m = _one_d(kind, eps)
    except ValueError as exc:
        # a half-line at 5e-5 needs more than MAX_SET_INTERVALS offsets: refused at once
        assert "half-line" in kind and eps == 5e-5, str(exc)
        assert sizes == [] and "`epsilon`" in str(exc)
        return
    cls = bndp.BoundedLaplace if kind == "half-line" else bndp.ConstrainedLaplace
    ref = cls(epsilon=eps, sensitivity=1.0, mode="continuous", **ONE_D[kind])
    assert m.privacy_loss() <= eps
    assert m.scale <= 1.001 * ref.scale
    assert len(sizes) <= 4, sizes


def test_half_line_small_epsilon_keeps_its_fine_grid_while_cheap():
    """Where the finest grid's table is within budget (epsilon >= about 1.5e-3 for
    sensitivity 1 on [0, inf)) the law is the one the fine grid gives (gamma = 1/16)."""
    m = bndp.BoundedLaplace(epsilon=2e-3, sensitivity=1.0, lower=0.0, upper=math.inf)
    assert m.exact_plan.exponent == -4
    m = bndp.BoundedLaplace(epsilon=1e-4, sensitivity=1.0, lower=0.0, upper=math.inf)
    assert m.exact_plan.exponent <= 0 and m.privacy_loss() <= 1e-4


def test_multivariate_gaussian_tiny_epsilon_is_refused_at_once(monkeypatch):
    """A multivariate BoundedGaussian whose target is below the flat table's certificate is
    refused after a few tables (its scale search grew the scale 400 times: 6-17 s)."""
    from bndp._laws import product
    calls = _recording(monkeypatch, product, "_table", lambda fam, u, n: n)
    product._plan_product.cache_clear()
    with pytest.raises(ValueError, match="`epsilon`"):
        bndp.BoundedGaussian(epsilon=1e-12, sensitivity=1.0, lower=[0.0, 0.0],
                             upper=[120.0, 120.0])
    assert len(calls) <= 4
    product._plan_product.cache_clear()


@pytest.mark.parametrize("family", ["laplace", "gaussian"])
@pytest.mark.parametrize("eps", [5e-5, 3e-5])
def test_wide_row_small_epsilon_plans_only_its_own_kernel(monkeypatch, family, eps):
    """A row of about 10^6 grid steps at a small epsilon is narrower than any wide kernel
    could serve (the wide kernel's scale is at least the continuous half-line's, about
    2 dk/epsilon grid steps, and it needs 33 scales on each side): only the row's own kernel
    is calibrated. The Laplace calibrated the wide kernel first (1 to 2 s at 5e-5, unused),
    and at 3e-5 that kernel's table limit refused a row its own kernel serves."""
    from bndp._core import calibrate as _calibrate
    from bndp.mechanisms import window
    calls = _recording(monkeypatch, _calibrate, "gw_calibrate",
                       lambda fam, target, t0, n, dk, wide, *rest: bool(wide))
    window._LAWS.clear()
    try:
        cls = bndp.BoundedLaplace if family == "laplace" else bndp.BoundedGaussian
        m = cls(epsilon=eps, sensitivity=1.0, lower=0.0, upper=1e6)
    finally:
        window._LAWS.clear()
    assert calls == [False]
    assert m.privacy_loss() <= eps
    x = m.sample(np.array([0.0, 30.0, 1e6]), rng=4)
    assert ((x >= 0.0) & (x <= 1e6)).all()
