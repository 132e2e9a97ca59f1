"""Spellings deprecated in 0.4 and 0.5 are removed in 0.6.0: each old spelling raises
Python's own ``TypeError`` or ``AttributeError``, and the new one works without a warning."""

from __future__ import annotations

import inspect

import numpy as np
import pytest

import bndp
from bndp import accounting, calibrate, verify

# one case per constructor family: (class, epsilon/sigma, the other arguments by name in
# the positional order 0.5 still accepted with a warning)
KEYWORD_ONLY = [
    (bndp.BoundedLaplace, 1.0, dict(sensitivity=1.0, lower=0.0, upper=10.0, delta=0.0,
                                    mode="continuous")),
    (bndp.BoundedGaussian, 1.0, dict(sensitivity=1.0, lower=0.0, upper=10.0,
                                     sigma_rule="tight", mode="continuous")),
    (bndp.ConstrainedLaplace, 1.0, dict(sensitivity=1.0, forbidden=[(2.0, 3.0)], lower=0.0,
                                        upper=10.0, guarantee="dp", scale_rule="constant",
                                        mode="continuous")),
    (bndp.Laplace, 1.0, dict(sensitivity=2.0)),
    (bndp.Gaussian, 1.0, dict(delta=1e-5, sensitivity=1.0, calibration="zhao3",
                              allow_unproven=False)),
    (bndp.ClampedLaplace, 1.0, dict(sensitivity=1.0, lower=0.0, upper=10.0)),
    (bndp.GeneralizedGaussian, 1.0, dict(sensitivity=1.0, lower=0.0, upper=10.0)),
    (bndp.RectifiedGaussian, 0.5, dict(lower=-1.0, upper=1.0)),
    (bndp.TruncatedGaussian, 0.5, dict(lower=-1.0, upper=1.0)),
]


@pytest.mark.parametrize("cls, first, kwargs", KEYWORD_ONLY,
                         ids=lambda c: getattr(c, "__name__", ""))
def test_positional_constructor_arguments_are_refused(cls, first, kwargs, recwarn):
    new = cls(first, **kwargs)
    names = list(kwargs)
    with pytest.raises(TypeError, match="positional argument"):
        cls(first, kwargs[names[0]], **{n: kwargs[n] for n in names[1:]})
    assert eval("bndp." + repr(new)) == new
    assert not [w for w in recwarn if issubclass(w.category, DeprecationWarning)]


@pytest.mark.parametrize("cls, first, kwargs", KEYWORD_ONLY,
                         ids=lambda c: getattr(c, "__name__", ""))
def test_constructors_are_keyword_only_after_the_first_argument(cls, first, kwargs):
    params = list(inspect.signature(cls).parameters.values())
    assert params[0].kind is inspect.Parameter.POSITIONAL_OR_KEYWORD
    assert all(p.kind is inspect.Parameter.KEYWORD_ONLY for p in params[1:])
    # no wrapper taking positional arguments; BoundedGaussian's only refuses the removed
    # keyword calibration= (now sigma_rule=), which the signature check above covers
    assert not hasattr(cls.__init__, "__wrapped__") or cls is bndp.BoundedGaussian


def test_the_keyword_form_does_not_warn(recwarn):
    bndp.BoundedLaplace(1.0, sensitivity=1.0, lower=0.0, upper=10.0)
    bndp.Gaussian(1.0, delta=1e-5, sensitivity=1.0, calibration="dwork2014")
    bndp.StochasticSign(1.0)
    calibrate.gaussian_sigma(1.0, 1.0, delta=1e-5, calibration="zhao1")
    assert not [w for w in recwarn if issubclass(w.category, DeprecationWarning)]


def test_gaussian_method_is_removed():
    new = bndp.Gaussian(1.0, delta=1e-5, sensitivity=1.0, calibration="zhao3")
    assert new.calibration == "zhao3" and new.notion == "pDP"
    with pytest.raises(TypeError, match="method"):
        bndp.Gaussian(1.0, delta=1e-5, sensitivity=1.0, method="zhao3")
    with pytest.raises(AttributeError, match="method"):
        new.method


def test_calibrate_method_keyword_is_removed():
    assert calibrate.gaussian_sigma(1.0, 1.0, delta=1e-5, calibration="dwork2014") == \
        calibrate.gaussian_sigma(1.0, sensitivity=1.0, delta=1e-5, calibration="dwork2014")
    with pytest.raises(TypeError, match="method"):
        calibrate.gaussian_sigma(1.0, 1.0, delta=1e-5, method="dwork2014")
    with pytest.raises(TypeError, match="method"):
        calibrate.classical_failure_threshold(1e-5, method="dwork2006")
    for f in (calibrate.gaussian_sigma, calibrate.classical_failure_threshold):
        assert "method" not in inspect.signature(f).parameters


def test_constrained_laplace_scale_keyword_is_removed():
    with pytest.raises(TypeError, match="scale"):
        bndp.ConstrainedLaplace(1.0, sensitivity=1.0, lower=0.0, scale="distance_dependent",
                                mode="continuous")
    m = bndp.ConstrainedLaplace(1.0, sensitivity=1.0, lower=0.0,
                                scale_rule="distance_dependent", mode="continuous")
    assert m.scale_rule == "distance_dependent" and isinstance(m.scale, float)


def test_verify_bounded_laplace_delta_is_removed():
    args = (1.5, 0.5, 1.0, 0.0, 10.0)
    with pytest.raises(AttributeError, match="bounded_laplace_delta"):
        verify.bounded_laplace_delta
    # the two numbers keep their own names: the exact profile and the paper's sufficient delta
    assert verify.bounded_laplace_profile(*args) < calibrate.bounded_laplace_delta_bound(*args)
    assert "bounded_laplace_delta" not in verify.__all__


def test_accounting_modes_is_removed():
    with pytest.raises(AttributeError, match="MODES"):
        accounting.MODES
    assert accounting.RDP_CONVENTIONS == ("alg1", "text", "sup", "rev")
    assert bndp.mechanisms.exact.MODES == ("exact", "continuous")


@pytest.mark.parametrize("m", [bndp.RectifiedGaussian(1.0, lower=-1.0, upper=2.0),
                               bndp.TruncatedGaussian(1.0, lower=-1.0, upper=2.0),
                               bndp.StochasticSign(1.0)], ids=lambda m: type(m).__name__)
def test_gradient_var_is_removed(m):
    with pytest.raises(AttributeError, match="var"):
        m.var(np.array([0.0]))
    assert np.all(np.asarray(m.variance(np.array([-0.5, 0.0, 1.5]))) > 0)


_RECT = bndp.RectifiedGaussian(1.0, lower=-1.0, upper=2.0)
_TRUNC = bndp.TruncatedGaussian(1.0, lower=-1.0, upper=2.0)
_SIGN = bndp.StochasticSign(1.0)
_TH = np.array([-3.0, -0.5, 0.0, 1.5, 4.0])

# (function, positional arguments before the value, keyword arguments after it)
RENAMED = [
    (_RECT.sample, (), dict(rng=7)),
    (_TRUNC.sample, (), dict(rng=7)),
    (_SIGN.sample, (), dict(rng=7)),
    (_RECT.logpdf, (np.array([-1.0, 0.0, 0.5, 2.0, 1.9]),), {}),
    (_TRUNC.logpdf, (0.25,), {}),
    (_TRUNC.sf, (1.5,), {}),
    (_SIGN.logpmf, (1.0,), {}),
    (_RECT.mean, (), {}),
    (_TRUNC.variance, (), {}),
    (accounting.per_instance_rdp, (_TRUNC,), dict(sensitivity=1.0, alpha=2.0)),
    (accounting.per_instance_rdp, (_RECT,), dict(sensitivity=0.5, alpha=[2.0, 4.0])),
    (accounting.fisher_information_loss, (_RECT,), {}),
    (accounting.fisher_information_loss_squared, (_SIGN,), {}),
]


def _rid(case):
    f = case[0] if isinstance(case, tuple) else case
    return getattr(f, "__qualname__", str(f))


@pytest.mark.parametrize("case", RENAMED, ids=_rid)
def test_theta_keyword_is_removed(case, recwarn):
    f, before, after = case
    new = f(*before, value=_TH, **after)
    np.testing.assert_array_equal(f(*before, _TH, **after), new)     # positional: unchanged
    with pytest.raises(TypeError, match="theta"):
        f(*before, _TH, theta=_TH, **after)
    params = inspect.signature(f).parameters
    assert "value" in params and "theta" not in params
    assert not [w for w in recwarn if issubclass(w.category, DeprecationWarning)]


def _public_callables():
    """Every public function of bndp.accounting and every public method of its classes and
    of the gradient mechanisms (inherited ones included)."""
    from bndp.mechanisms import gradients

    out = {}
    owners = [getattr(gradients, n) for n in gradients.__all__]
    for name in accounting.__all__:
        obj = getattr(accounting, name)
        if inspect.isclass(obj):
            owners.append(obj)
        elif callable(obj):
            out[f"accounting.{name}"] = obj
    for cls in owners:
        out[cls.__name__] = cls
        for name in dir(cls):
            if name.startswith("_"):
                continue
            member = inspect.getattr_static(cls, name)
            fn = member.fget if isinstance(member, property) else getattr(cls, name)
            if callable(fn):
                out[f"{cls.__name__}.{name}"] = fn
    return out


def test_no_public_parameter_is_called_theta():
    found = _public_callables()
    assert {"RectifiedGaussian.sample", "TruncatedGaussian.isf", "StochasticSign.logpmf",
            "accounting.per_instance_rdp", "PerInstanceAccountant.step"} <= set(found)
    bad = [q for q, f in found.items() if "theta" in inspect.signature(f).parameters]
    assert not bad, f"still taking `theta`: {bad}"
    # and those that take the true value call it `value`
    for q in ("RectifiedGaussian.atoms", "TruncatedGaussian.logcdf", "StochasticSign.bias",
              "accounting.fisher_information_loss_squared"):
        assert "value" in inspect.signature(found[q]).parameters, q
