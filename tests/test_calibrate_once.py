"""The default (grid) mode calibrates once: the continuous calibrations (Holohan's b*, Chen
and Hale's sigma*) are not run when the grid law does not need them; their input checks
still run."""

import math

import numpy as np
import pytest

import bndp
import bndp.calibrate
from bndp.mechanisms import gaussian, laplace, window


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
    monkeypatch.setattr(gaussian, "bounded_gaussian_tight_sigma", boom("tight"))


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
                             calibration=calibration)
    m.sample([0.0, 5e4], rng=2)
    assert calls == [] and m.privacy_loss() <= 0.8123457


def test_gaussian_narrow_row_computes_its_start_when_its_search_runs(monkeypatch):
    # a row narrower than the wide kernel starts its search at the continuous sigma (the
    # same start as before: the same law, bit for bit), computed then and only then
    seen = []
    real = gaussian.bounded_gaussian_sigma

    def spy(*a, **k):
        seen.append(a)
        return real(*a, **k)

    monkeypatch.setattr(gaussian, "bounded_gaussian_sigma", spy)
    eps = 0.9134567
    m = bndp.BoundedGaussian(eps, sensitivity=1.0, lower=0.0, upper=1.0)
    assert len(seen) == 1 and m.exact_plan.kernel.n_max is not None   # a narrow kernel
    t0 = real(eps, 1.0, 0.0, 1.0) / m.exact_plan.gamma
    from bndp import _core
    k = m.exact_plan.kernel
    t, *_ = _core.gw_calibrate(1, eps, t0, m.exact_plan.n, k.dk, False, window.REL_TOL)
    assert t == k.scale_grid
    bndp.BoundedGaussian(eps, sensitivity=1.0, lower=3.0, upper=4.0)    # the cached kernel
    assert len(seen) == 1


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
