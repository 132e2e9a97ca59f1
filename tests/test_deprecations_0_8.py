"""Spellings deprecated in 0.7.0 work with a DeprecationWarning that names their removal in
0.8.0 and the spelling to use; the new spelling works without a warning."""

from __future__ import annotations

import inspect
import warnings

import numpy as np
import pytest

import bndp
import bndp.api
from bndp.mechanisms.registry import MECHANISMS, SAMPLE_MECHANISMS


def test_api_mechanisms_is_the_sample_mechanisms_with_a_warning():
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert bndp.api.SAMPLE_MECHANISMS is SAMPLE_MECHANISMS
    assert "SAMPLE_MECHANISMS" in bndp.api.__all__ and "MECHANISMS" not in bndp.api.__all__
    with pytest.warns(DeprecationWarning, match=r"^bndp\.api\.MECHANISMS is deprecated and "
                      r"will be removed in bndp 0\.8\.0: use bndp\.api\.SAMPLE_MECHANISMS") as rec:
        assert bndp.api.MECHANISMS == SAMPLE_MECHANISMS
    assert rec[0].filename == __file__
    # the registry is the one source: every sample name is a spec name
    assert set(SAMPLE_MECHANISMS) < set(MECHANISMS)
    with pytest.raises(AttributeError, match="no attribute 'NOT_THERE'"):
        bndp.api.NOT_THERE  # noqa: B018


@pytest.mark.parametrize("engine, old", [("spark", "df"), ("dask", "ddf")])
def test_engines_take_the_frame_first_as_bndp_privatize(engine, old):
    mod = pytest.importorskip(f"bndp.integrations.{engine}")
    assert list(inspect.signature(mod.privatize).parameters)[:2] == \
        list(inspect.signature(bndp.privatize).parameters)[:2] == ["frame", "spec"]
    # the old keyword reaches the function as `frame` (an empty spec is then refused by the
    # spec check, before any engine work)
    with pytest.warns(DeprecationWarning, match=rf"^privatize\({old}=\.\.\.\) is deprecated "
                      r"and will be removed in bndp 0\.8\.0: pass frame="):
        with pytest.raises(ValueError, match="spec"):
            mod.privatize(**{old: None}, spec={})
    with pytest.raises(TypeError, match="give `frame` only"):
        mod.privatize(None, {}, **{old: None})


CALLS = [  # (function, the former positional call, the keyword call)
    ("gaussian_sigma", (1.0, 1e-5, 2.0), dict(sensitivity=2.0, delta=1e-5)),
    ("gaussian_sigma", (1.0, 1e-5, 2.0, "zhao3"),
     dict(sensitivity=2.0, delta=1e-5, calibration="zhao3")),
    ("gaussian_epsilon", (4.0, 1e-5, 2.0), dict(sensitivity=2.0, delta=1e-5)),
    ("zcdp_sigma", (1.0, 1e-5, 2.0), dict(sensitivity=2.0, delta=1e-5)),
    ("mcdp_sigma", (1.0, 1e-5, 2.0), dict(sensitivity=2.0, delta=1e-5)),
    ("bounded_laplace_scale", (1.0, 1.0, 0.0, 10.0, 1e-3),
     dict(sensitivity=1.0, lower=0.0, upper=10.0, delta=1e-3)),
]


@pytest.mark.parametrize("name, old, new", CALLS)
def test_delta_is_keyword_only_and_its_position_deprecated(name, old, new):
    from bndp import calibrate

    f = getattr(calibrate, name)
    params = inspect.signature(f).parameters
    assert params["delta"].kind is inspect.Parameter.KEYWORD_ONLY
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        want = f(old[0], **new)
    with pytest.warns(DeprecationWarning, match=rf"^{name}\(.*\) with `delta` by position is "
                      rf"deprecated and will be removed in bndp 0\.8\.0: call {name}\(") as rec:
        got = f(*old)
    assert rec[0].filename == __file__
    assert got == want
    # the former order with the sensitivity by keyword is recognised too
    if name != "bounded_laplace_scale":
        with pytest.warns(DeprecationWarning):
            assert f(old[0], old[1], sensitivity=old[2], **({"calibration": old[3]}
                                                              if len(old) > 3 else {})) == want
        with pytest.raises(TypeError, match="twice"):
            f(*old[:3], sensitivity=old[2])
    # the one order: epsilon (or sigma), then sensitivity, then the bounds
    first = [p for p in params if params[p].kind is inspect.Parameter.POSITIONAL_OR_KEYWORD]
    assert first[1] == "sensitivity"


def test_bounded_gaussian_sigma_rule_replaces_calibration():
    kw = dict(sensitivity=1.0, lower=0.0, upper=10.0, mode="continuous")
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        new = bndp.BoundedGaussian(1.0, sigma_rule="tight", **kw)
        assert new.sigma_rule == "tight"
    with pytest.warns(DeprecationWarning, match=r"^BoundedGaussian\(calibration=\.\.\.\) is "
                      r"deprecated and will be removed in bndp 0\.8\.0: pass sigma_rule=") as rec:
        old = bndp.BoundedGaussian(1.0, calibration="tight", **kw)
    assert rec[0].filename == __file__
    assert old == new and old.sigma == new.sigma
    assert old.sigma < bndp.BoundedGaussian(1.0, **kw).sigma  # the rule reached the constructor
    with pytest.warns(DeprecationWarning, match=r"^BoundedGaussian\.calibration is deprecated "
                      r"and will be removed in bndp 0\.8\.0: use BoundedGaussian\.sigma_rule"):
        assert new.calibration == "tight"
    with pytest.raises(TypeError, match="give `sigma_rule` only"):
        bndp.BoundedGaussian(1.0, calibration="tight", sigma_rule="tight", **kw)
    # the spec and the CLI take the constructor's keywords: the new one is offered
    from bndp._release.spec import mechanism_options
    assert "sigma_rule" in mechanism_options("gaussian")
    assert "calibration" not in mechanism_options("gaussian")


def test_constrained_laplace_scale_is_the_one_attribute():
    kw = dict(sensitivity=1.0, forbidden=[(0.0, 1.0)], guarantee="metric", mode="continuous")
    m = bndp.ConstrainedLaplace(1.0, **kw)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        s = m.scale
        assert m.scale_at(0.0) == s and "sigma" not in repr(m)
    with pytest.warns(DeprecationWarning, match=r"^ConstrainedLaplace\.sigma is deprecated and "
                      r"will be removed in bndp 0\.8\.0: use ConstrainedLaplace\.scale") as rec:
        assert m.sigma == s
    assert rec[0].filename == __file__
    with pytest.warns(DeprecationWarning, match=r"^ConstrainedLaplace\.sigma_at is deprecated "
                      r"and will be removed in bndp 0\.8\.0: use ConstrainedLaplace\.scale_at"):
        assert m.sigma_at(3.0) == s
    dd = bndp.ConstrainedLaplace(1.0, sensitivity=2.0, lower=0.0, scale_rule="distance_dependent",
                                 mode="continuous")
    with pytest.warns(DeprecationWarning, match="ConstrainedLaplace.sigma "):
        assert dd.sigma is None
    with pytest.warns(DeprecationWarning, match="sigma_at"):
        assert np.array_equal(dd.sigma_at([0.0, 4.0]), dd.scale_at([0.0, 4.0]))
    assert dd.scale_at(4.0) < dd.scale_at(0.0) == pytest.approx(dd.scale)


def test_bounded_laplace_delta_is_the_theorem_3_5_bound_under_its_old_name():
    from bndp import calibrate, verify
    args = (1.5, 0.5, 1.0, 0.0, 10.0)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        bound = calibrate.bounded_laplace_delta_bound(*args)
    with pytest.warns(DeprecationWarning, match=r"^bndp\.calibrate\.bounded_laplace_delta is "
                      r"deprecated and will be removed in bndp 0\.8\.0: call "
                      r"bndp\.calibrate\.bounded_laplace_delta_bound") as rec:
        assert calibrate.bounded_laplace_delta(*args) == bound
    assert rec[0].filename == __file__
    assert "bounded_laplace_delta_bound" in calibrate.__all__
    assert "bounded_laplace_delta" not in calibrate.__all__
    assert verify.bounded_laplace_profile(*args) < bound


def test_spec_key_calibration_is_sigma_rule_with_a_warning():
    from bndp._release.spec import SpecError, parse_spec
    base = dict(mechanism="gaussian", epsilon=1.0, sensitivity=1.0, lower=0.0, upper=10.0,
                mode="continuous")
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        new = parse_spec({"x": {**base, "sigma_rule": "tight"}})[0]
    with pytest.warns(DeprecationWarning, match=r"spec column 'x', key 'calibration': the key "
                      r"'calibration' is deprecated and will be removed in bndp 0\.8\.0: use "
                      r"'sigma_rule'"):
        old = parse_spec({"x": {**base, "calibration": "tight"}})[0]
    assert old.mech == new.mech and old.mech.sigma_rule == "tight"
    with pytest.raises(SpecError, match="give 'sigma_rule' only"):
        parse_spec({"x": {**base, "calibration": "tight", "sigma_rule": "tight"}})
    with pytest.raises(SpecError, match="unknown key"):   # only the Gaussian had it
        parse_spec({"x": {**base, "mechanism": "laplace", "calibration": "tight"}})
