"""Spellings deprecated in 0.7.0 are removed in 0.8.0: each old spelling fails with a clear
error that names its replacement (and the version that removed it), and the new spelling
works without a warning."""

from __future__ import annotations

import inspect
import warnings

import numpy as np
import pytest

import bndp
import bndp.api
from bndp import _deprecate
from bndp.mechanisms.registry import MECHANISMS, SAMPLE_MECHANISMS


def test_api_mechanisms_is_removed_for_sample_mechanisms():
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert bndp.api.SAMPLE_MECHANISMS is SAMPLE_MECHANISMS
    assert "SAMPLE_MECHANISMS" in bndp.api.__all__ and "MECHANISMS" not in bndp.api.__all__
    with pytest.raises(AttributeError, match=r"^bndp\.api\.MECHANISMS was removed in bndp "
                       r"0\.8\.0: use bndp\.api\.SAMPLE_MECHANISMS"):
        bndp.api.MECHANISMS  # noqa: B018
    assert not hasattr(bndp.api, "MECHANISMS")
    # the registry is the one source: every sample name is a spec name
    assert set(SAMPLE_MECHANISMS) < set(MECHANISMS)
    with pytest.raises(AttributeError, match=r"^module 'bndp\.api' has no attribute "
                       r"'NOT_THERE'$"):
        bndp.api.NOT_THERE  # noqa: B018


@pytest.mark.parametrize("engine, old", [("spark", "df"), ("dask", "ddf")])
def test_engines_refuse_the_old_frame_keyword(engine, old):
    mod = pytest.importorskip(f"bndp.integrations.{engine}")
    assert list(inspect.signature(mod.privatize).parameters)[:2] == \
        list(inspect.signature(bndp.privatize).parameters)[:2] == ["frame", "spec"]
    assert old not in inspect.signature(mod.privatize).parameters
    # refused before any engine work, alone or beside the frame
    with pytest.raises(TypeError, match=rf"^privatize\(\) takes no `{old}` \(removed in "
                       r"bndp 0\.8\.0\): pass frame="):
        mod.privatize(**{old: None}, spec={})
    with pytest.raises(TypeError, match=rf"takes no `{old}`"):
        mod.privatize(None, {}, **{old: None})
    # the frame keyword itself reaches the function (an empty spec is refused by the spec
    # check, before any engine work)
    with pytest.raises(ValueError, match="spec"):
        mod.privatize(frame=None, spec={})


CALLS = [  # (function, the former positional call, the keyword call, positional count)
    ("gaussian_sigma", (1.0, 1e-5, 2.0), dict(sensitivity=2.0, delta=1e-5), 2),
    ("gaussian_sigma", (1.0, 1e-5, 2.0, "zhao3"),
     dict(sensitivity=2.0, delta=1e-5, calibration="zhao3"), 2),
    ("gaussian_epsilon", (4.0, 1e-5, 2.0), dict(sensitivity=2.0, delta=1e-5), 2),
    ("zcdp_sigma", (1.0, 1e-5, 2.0), dict(sensitivity=2.0, delta=1e-5), 2),
    ("mcdp_sigma", (1.0, 1e-5, 2.0), dict(sensitivity=2.0, delta=1e-5), 2),
    ("bounded_laplace_scale", (1.0, 1.0, 0.0, 10.0, 1e-3),
     dict(sensitivity=1.0, lower=0.0, upper=10.0, delta=1e-3), 4),
]


@pytest.mark.parametrize("name, old, new, npos", CALLS)
def test_delta_by_position_is_refused(name, old, new, npos):
    from bndp import calibrate

    f = getattr(calibrate, name)
    params = inspect.signature(f).parameters
    assert params["delta"].kind is inspect.Parameter.KEYWORD_ONLY
    # the one order: epsilon (or sigma), then sensitivity, then the bounds; the rest by name
    first = [p for p in params if params[p].kind is inspect.Parameter.POSITIONAL_OR_KEYWORD]
    assert len(first) == npos and first[1] == "sensitivity"
    assert not hasattr(f, "__wrapped__")
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        want = f(old[0], **new)
        assert want > 0
    # the former order: too many positional arguments, never read in another order
    with pytest.raises(TypeError, match=rf"^{name}\(\) takes {npos} positional arguments but "
                       rf"{len(old)} were given"):
        f(*old)
    if name != "bounded_laplace_scale":
        # delta by position and the sensitivity by name: the sensitivity comes twice
        with pytest.raises(TypeError, match="multiple values for argument 'sensitivity'"):
            f(old[0], old[1], sensitivity=old[2])


def test_bounded_gaussian_calibration_is_removed_for_sigma_rule():
    kw = dict(sensitivity=1.0, lower=0.0, upper=10.0, mode="continuous")
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        new = bndp.BoundedGaussian(1.0, sigma_rule="tight", **kw)
    assert new.sigma_rule == "tight" and new.sigma < bndp.BoundedGaussian(1.0, **kw).sigma
    with pytest.raises(TypeError, match=r"^BoundedGaussian\(\) takes no `calibration` "
                       r"\(removed in bndp 0\.8\.0\): pass sigma_rule="):
        bndp.BoundedGaussian(1.0, calibration="tight", **kw)
    with pytest.raises(TypeError, match="takes no `calibration`"):
        bndp.BoundedGaussian(1.0, calibration="tight", sigma_rule="tight", **kw)
    with pytest.raises(AttributeError, match=r"^BoundedGaussian\.calibration was removed in "
                       r"bndp 0\.8\.0: use BoundedGaussian\.sigma_rule$"):
        new.calibration  # noqa: B018
    assert not hasattr(new, "calibration")
    # the unbounded Gaussian's own `calibration` (its formula) is untouched
    g = bndp.Gaussian(1.0, delta=1e-5, sensitivity=1.0, calibration="zhao3")
    assert g.calibration == "zhao3"
    # the spec and the CLI take the constructor's keywords: the new one is offered
    from bndp._release.spec import mechanism_options
    assert "sigma_rule" in mechanism_options("gaussian")
    assert "calibration" not in mechanism_options("gaussian")


def test_gaussian_privacy_delta_is_removed_for_privacy_profile():
    m = bndp.Gaussian(1.0, delta=1e-5, sensitivity=1.0)
    assert 0.0 < m.privacy_profile(1.0) <= 1e-5 < m.privacy_profile(0.5)   # calibrated at 1
    with pytest.raises(AttributeError, match=r"^Gaussian\.privacy_delta was removed in bndp "
                       r"0\.8\.0: use Gaussian\.privacy_profile$"):
        m.privacy_delta(0.5)
    assert "privacy_delta" not in dir(m)


def test_constrained_laplace_sigma_is_removed_for_scale():
    kw = dict(sensitivity=1.0, forbidden=[(0.0, 1.0)], guarantee="metric", mode="continuous")
    m = bndp.ConstrainedLaplace(1.0, **kw)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert m.scale_at(0.0) == m.scale > 0 and "sigma" not in repr(m)
    with pytest.raises(AttributeError, match=r"^ConstrainedLaplace\.sigma was removed in bndp "
                       r"0\.8\.0: use ConstrainedLaplace\.scale \(or scale_at"):
        m.sigma  # noqa: B018
    with pytest.raises(AttributeError, match=r"^ConstrainedLaplace\.sigma_at was removed in "
                       r"bndp 0\.8\.0: use ConstrainedLaplace\.scale_at$"):
        m.sigma_at(3.0)
    dd = bndp.ConstrainedLaplace(1.0, sensitivity=2.0, lower=0.0, scale_rule="distance_dependent",
                                 mode="continuous")
    with pytest.raises(AttributeError, match="ConstrainedLaplace.sigma was removed"):
        dd.sigma  # noqa: B018
    assert dd.scale_at(4.0) < dd.scale_at(0.0) == pytest.approx(dd.scale)


def test_other_missing_attributes_keep_pythons_message():
    m = bndp.ConstrainedLaplace(1.0, sensitivity=1.0, lower=0.0, mode="continuous")
    with pytest.raises(AttributeError, match=r"^'ConstrainedLaplace' object has no attribute "
                       r"'sigmas'$") as info:
        m.sigmas  # noqa: B018
    assert info.value.name == "sigmas" and info.value.obj is m
    assert getattr(m, "sigmas", 7) == 7
    # a removed name of one class is an ordinary missing name on another
    with pytest.raises(AttributeError, match=r"^'BoundedLaplace' object has no attribute "
                       r"'sigma_at'$"):
        bndp.BoundedLaplace(1.0, sensitivity=1.0, lower=0.0, upper=1.0).sigma_at  # noqa: B018


def test_calibrate_bounded_laplace_delta_is_removed_for_the_bound():
    from bndp import calibrate, verify
    args = (1.5, 0.5, 1.0, 0.0, 10.0)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        bound = calibrate.bounded_laplace_delta_bound(*args)
    with pytest.raises(AttributeError, match=r"^bndp\.calibrate\.bounded_laplace_delta was "
                       r"removed in bndp 0\.8\.0: use bndp\.calibrate\."
                       r"bounded_laplace_delta_bound"):
        calibrate.bounded_laplace_delta  # noqa: B018
    with pytest.raises(ImportError, match="bounded_laplace_delta"):
        from bndp.calibrate import bounded_laplace_delta  # noqa: F401
    assert not hasattr(calibrate.bounded, "bounded_laplace_delta")
    assert "bounded_laplace_delta_bound" in calibrate.__all__
    assert "bounded_laplace_delta" not in calibrate.__all__
    assert verify.bounded_laplace_profile(*args) < bound


def test_truncated_isf_q_is_removed_for_p():
    t = bndp.TruncatedGaussian(0.5, lower=-1.0, upper=1.0)
    assert list(inspect.signature(t.isf).parameters) == ["p", "value"]
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert t.isf(p=0.25, value=0.1) == t.isf(0.25, 0.1)
    with pytest.raises(TypeError, match=r"^TruncatedGaussian\.isf\(\) takes no `q` \(removed "
                       r"in bndp 0\.8\.0\): pass p="):
        t.isf(q=0.25, value=0.1)


def test_spec_key_calibration_is_a_spec_error_naming_sigma_rule():
    from bndp._release.spec import SpecError, parse_spec
    base = dict(mechanism="gaussian", epsilon=1.0, sensitivity=1.0, lower=0.0, upper=10.0,
                mode="continuous")
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        new = parse_spec({"x": {**base, "sigma_rule": "tight"}})[0]
    assert new.mech.sigma_rule == "tight"
    with pytest.raises(SpecError, match=r"^spec column 'x', key 'calibration': the key "
                       r"'calibration' was removed in bndp 0\.8\.0: use 'sigma_rule'$"):
        parse_spec({"x": {**base, "calibration": "tight"}})
    with pytest.raises(SpecError, match="was removed"):
        parse_spec({"x": {**base, "calibration": "tight", "sigma_rule": "tight"}})
    with pytest.raises(SpecError, match="unknown key"):   # only the Gaussian had it
        parse_spec({"x": {**base, "mechanism": "laplace", "calibration": "tight"}})


def test_the_deprecation_machinery_is_gone():
    assert set(_deprecate.__all__) == {"removed_attribute", "removed_parameter"}
    for name in ("renamed_parameter", "positional_delta"):
        assert not hasattr(_deprecate, name)
