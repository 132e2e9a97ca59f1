"""The default (grid) mode calibrates once: the continuous calibrations (Holohan's b*, Chen
and Hale's sigma*) are not run when the grid law does not need them; their input checks
still run."""

import math

import numpy as np
import pytest

import bndp
import bndp.calibrate
from bndp._laws import search_start, window
from bndp.mechanisms import gaussian, laplace


def _forbid(monkeypatch, calls):
    def boom(name):
        def f(*a, **k):
            calls.append(name)
            raise AssertionError(f"{name} called")
        return f

    for mod in (laplace, gaussian, bndp.calibrate):
        for name in ("bounded_laplace_scale", "bounded_gaussian_sigma"):
            if hasattr(mod, name):
                monkeypatch.setattr(mod, name, boom(name))
    # the mechanism calibrates a checked box from its widths (the same compiled searches)
    monkeypatch.setattr(gaussian, "_bg_sigma_one", boom("bounded_gaussian_sigma"))
    monkeypatch.setattr(gaussian, "_tight_sigma", boom("tight"))


@pytest.mark.parametrize("hi", [1.0, 120.0, 1e5])
def test_laplace_default_mode_runs_no_continuous_calibration(monkeypatch, hi):
    calls = []
    _forbid(monkeypatch, calls)
    m = bndp.BoundedLaplace(0.7310203, sensitivity=1.0, lower=0.0, upper=hi, delta=1e-7)
    x = m.sample(np.linspace(0.0, hi, 5), rng=1)
    assert calls == [] and ((x >= 0) & (x <= hi)).all()
    assert m.privacy_loss() <= 0.7310203 - math.log1p(-1e-7)


@pytest.mark.parametrize("calibration", ["paper", "tight"])
def test_gaussian_wide_row_runs_no_continuous_calibration(monkeypatch, calibration):
    calls = []
    _forbid(monkeypatch, calls)
    m = bndp.BoundedGaussian(0.8123457, sensitivity=1.0, lower=0.0, upper=1e5,
                             sigma_rule=calibration)
    m.sample([0.0, 5e4], rng=2)
    assert calls == [] and m.privacy_loss() <= 0.8123457


def test_gaussian_narrow_row_runs_no_calibration_of_its_bounds(monkeypatch):
    # a narrow kernel's search starts at the continuous sigma of the kernel's own grid width
    # and sensitivity (window._narrow_gaussian_start), not at that of the mechanism's bounds
    calls = []
    _forbid(monkeypatch, calls)
    for calibration in ("paper", "tight"):
        m = bndp.BoundedGaussian(0.9134567, sensitivity=1.0, lower=0.0, upper=1.0,
                                 sigma_rule=calibration)
        assert m.exact_plan.kernel.n_max is not None                      # a narrow kernel
        m.sample([0.0, 0.5], rng=2)
    assert calls == [] and m.privacy_loss() <= 0.9134567


def _kernels(fn):
    """The kernels (cache key -> grid scale) a call plans, from an empty cache."""
    window._LAWS.clear()
    fn()
    return {k: v.scale_grid for k, v in window._LAWS.items()}


def test_gaussian_narrow_kernel_is_the_same_whoever_plans_it_first():
    """The narrow Gaussian kernel of a (target, sensitivity, grid, width) is one law: the
    mechanism on [0, 1] or on a slightly wider row of the same grid width, either
    calibration, and per-row bounds, planned in any order, get it bit for bit (its search
    start depends on the cache key only)."""
    eps = 0.7134561
    calls = [
        lambda: bndp.BoundedGaussian(eps, sensitivity=1.0, lower=0.0, upper=1.0),
        lambda: bndp.BoundedGaussian(eps, sensitivity=1.0, lower=2.0, upper=3.003),
        lambda: bndp.BoundedGaussian(eps, sensitivity=1.0, lower=0.0, upper=1.0,
                                     sigma_rule="tight"),
        lambda: bndp.sample(np.array([0.5, 2.5]), mechanism="gaussian", epsilon=eps,
                            sensitivity=1.0, lower=np.array([0.0, 2.0]),
                            upper=np.array([1.0, 3.003]), rng=1),
    ]
    alone = [_kernels(c) for c in calls]
    keys = set(alone[0])
    assert len(keys) == 1 and all(set(k) == keys for k in alone)   # one narrow kernel
    (key,) = keys
    assert key[-1] is not None
    scale = alone[0][key]
    assert all(k[key] == scale for k in alone)
    for order in (calls, calls[::-1]):
        window._LAWS.clear()
        for c in order:
            c()
        assert window._LAWS[key].scale_grid == scale
    # and the start is the scale at which the discrete Gaussian on the whole row loses the
    # target between its extreme inputs: here (the window covers the row) the kernel's
    # scale to 1e-7, where the continuous bounded Gaussian's sigma is 80 % larger
    _, target, dk, e, n = key
    start = search_start._narrow_gaussian_start(target, dk, n)
    assert search_start._gaussian_row_loss(start, n, min(dk, n)) == pytest.approx(target, rel=1e-12)
    assert start == pytest.approx(scale, rel=1e-7)
    sigma = bndp.calibrate.bounded_gaussian_sigma(target, float(dk), 0.0, float(n))
    assert sigma > 1.5 * scale


def test_gaussian_row_loss_matches_the_exact_sums():
    # the Euler-Maclaurin normalisers of _gaussian_row_loss against the sums themselves
    for t, n, dk in ((3.0, 40, 1), (3.0, 40, 5), (12.5, 128, 128), (107.0, 128, 128),
                     (60.0, 900, 32), (400.0, 2000, 7)):
        j = np.arange(n + 1)

        def z(i):
            return np.exp(-(j - i) ** 2 / (2.0 * t * t)).sum()

        want = dk * (2 * (n - dk) + dk) / (2 * t * t) + np.log(z(n) / z(n - dk))
        assert search_start._gaussian_row_loss(t, n, dk) == pytest.approx(want, rel=1e-7)


def test_narrow_gaussian_start_is_a_scale_where_its_secant_steps_fail():
    # steps that run off to a scale where the model's terms overflow or divide by zero
    # start the search at the continuous sigma (a positive finite scale), never raise
    for target, dk, n in ((7.844179105746903, 180, 12), (0.3661820444506941, 262, 12),
                          (0.7124870377725186, 212, 11)):
        t = search_start._narrow_gaussian_start(target, dk, n)
        assert math.isfinite(t) and t > 0


@pytest.mark.parametrize("mech, kw", [
    (bndp.BoundedLaplace, dict(epsilon=1e-320, sensitivity=1.0)),
    (bndp.BoundedLaplace, dict(epsilon=1e300, sensitivity=1e-300)),
    (bndp.BoundedLaplace, dict(epsilon=1.0, sensitivity=1.0, delta=1.0)),
    (bndp.BoundedLaplace, dict(epsilon=0.0, sensitivity=1.0)),
    (bndp.BoundedGaussian, dict(epsilon=1e-320, sensitivity=1.0)),
    (bndp.BoundedGaussian, dict(epsilon=1.0, sensitivity=1e-310)),
    (bndp.BoundedGaussian, dict(epsilon=1.0, sensitivity=1e308, upper=1e160)),
])
def test_default_mode_keeps_the_refusals_of_the_continuous_calibration(mech, kw):
    kw = {"lower": 0.0, "upper": 10.0, **kw}
    with pytest.raises(ValueError) as grid:
        mech(**kw)
    with pytest.raises(ValueError) as cont:
        mech(**kw, mode="continuous")
    assert str(grid.value) == str(cont.value)
