"""Deprecated spellings (issue 23): each still works for this release, warns with
``DeprecationWarning`` naming its replacement, and gives the same result as the new one."""

from __future__ import annotations

import inspect

import numpy as np
import pytest

import bndp
from bndp import accounting, calibrate, verify

# one case per constructor family: (class, epsilon/sigma, the other arguments in their old
# positional order, by name)
POSITIONAL = [
    (bndp.BoundedLaplace, 1.0, dict(sensitivity=1.0, lower=0.0, upper=10.0, delta=0.0,
                                    mode="continuous")),
    (bndp.BoundedGaussian, 1.0, dict(sensitivity=1.0, lower=0.0, upper=10.0,
                                     calibration="tight", mode="continuous")),
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


@pytest.mark.parametrize("cls, first, kwargs", POSITIONAL, ids=lambda c: getattr(c, "__name__", ""))
def test_positional_constructor_warns_and_gives_the_same_mechanism(cls, first, kwargs):
    new = cls(first, **kwargs)
    names = list(kwargs)
    for k in range(1, len(names) + 1):     # every prefix of the old positional order
        args = [kwargs[n] for n in names[:k]]
        rest = {n: kwargs[n] for n in names[k:]}
        with pytest.warns(DeprecationWarning, match=f"{cls.__name__}\\(") as rec:
            old = cls(first, *args, **rest)
        assert old == new
        msg = str(rec[0].message)
        assert all(f"{n}=..." in msg for n in names[:k]) and "by position" in msg
        assert rec[0].filename == __file__          # points at the caller
    assert eval("bndp." + repr(new)) == new


@pytest.mark.parametrize("cls, first, kwargs", POSITIONAL, ids=lambda c: getattr(c, "__name__", ""))
def test_constructors_are_keyword_only_after_the_first_argument(cls, first, kwargs):
    params = list(inspect.signature(cls).parameters.values())
    assert params[0].kind is inspect.Parameter.POSITIONAL_OR_KEYWORD
    assert all(p.kind is inspect.Parameter.KEYWORD_ONLY for p in params[1:])


def test_positional_constructor_errors():
    with pytest.raises(TypeError, match="multiple values for argument 'sensitivity'"):
        bndp.Laplace(1.0, 1.0, sensitivity=1.0)
    with pytest.raises(TypeError, match="at most"):
        bndp.Laplace(1.0, 1.0, 2.0)


def test_the_keyword_form_does_not_warn(recwarn):
    bndp.BoundedLaplace(1.0, sensitivity=1.0, lower=0.0, upper=10.0)
    bndp.Gaussian(1.0, delta=1e-5, sensitivity=1.0, calibration="dwork2014")
    bndp.StochasticSign(1.0)
    calibrate.gaussian_sigma(1.0, 1e-5, 1.0, "zhao1")
    calibrate.gaussian_sigma(1.0, 1e-5, 1.0, calibration="zhao1")
    assert not [w for w in recwarn if issubclass(w.category, DeprecationWarning)]


def test_gaussian_method_is_calibration():
    new = bndp.Gaussian(1.0, delta=1e-5, sensitivity=1.0, calibration="zhao3")
    with pytest.warns(DeprecationWarning, match="calibration"):
        old = bndp.Gaussian(1.0, delta=1e-5, sensitivity=1.0, method="zhao3")
    assert old == new and old.calibration == "zhao3" and old.notion == "pDP"
    with pytest.warns(DeprecationWarning, match="Gaussian.calibration"):
        assert new.method == "zhao3"
    with pytest.raises(TypeError, match="give `calibration` only"):
        bndp.Gaussian(1.0, delta=1e-5, sensitivity=1.0, method="zhao3", calibration="zhao1")


def test_gaussian_sigma_method_is_calibration():
    new = calibrate.gaussian_sigma(1.0, 1e-5, 1.0, calibration="dwork2014")
    with pytest.warns(DeprecationWarning, match="calibration="):
        assert calibrate.gaussian_sigma(1.0, 1e-5, 1.0, method="dwork2014") == new
    assert calibrate.gaussian_sigma(1.0, 1e-5, 1.0, "dwork2014") == new
    t = calibrate.classical_failure_threshold(1e-5, calibration="dwork2006")
    with pytest.warns(DeprecationWarning, match="calibration="):
        assert calibrate.classical_failure_threshold(1e-5, method="dwork2006") == t


def test_verify_bounded_laplace_delta_is_the_profile():
    args = (1.5, 0.5, 1.0, 0.0, 10.0)
    with pytest.warns(DeprecationWarning, match="bounded_laplace_profile"):
        old = verify.bounded_laplace_delta
    assert old is verify.bounded_laplace_profile
    # the two names now mean two numbers: the exact profile and the paper's sufficient delta
    assert verify.bounded_laplace_profile(*args) < calibrate.bounded_laplace_delta(*args)
    assert "bounded_laplace_delta" not in verify.__all__
    with pytest.raises(AttributeError):
        verify.no_such_name


def test_accounting_modes_is_rdp_conventions():
    with pytest.warns(DeprecationWarning, match="RDP_CONVENTIONS"):
        assert accounting.MODES == accounting.RDP_CONVENTIONS == ("alg1", "text", "sup", "rev")
    assert bndp.mechanisms.exact.MODES == ("exact", "continuous")
    with pytest.raises(AttributeError):
        accounting.NO_SUCH_NAME


@pytest.mark.parametrize("m", [bndp.RectifiedGaussian(1.0, lower=-1.0, upper=2.0),
                               bndp.TruncatedGaussian(1.0, lower=-1.0, upper=2.0),
                               bndp.StochasticSign(1.0)], ids=lambda m: type(m).__name__)
def test_gradient_var_is_variance(m):
    th = np.array([-0.5, 0.0, 1.5])
    with pytest.warns(DeprecationWarning, match="variance"):
        old = m.var(th)
    np.testing.assert_array_equal(old, m.variance(th))


# ``theta`` -> ``value``: the true value has one name in every mechanism and accounting call
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
    (accounting.per_instance_rdp, (_TRUNC,), dict(sensitivity=1.0, alpha=2.0, mode="alg1")),
    (accounting.per_instance_rdp, (_RECT,), dict(sensitivity=0.5, alpha=[2.0, 4.0])),
    (accounting.fisher_information_loss, (_RECT,), {}),
    (accounting.fisher_information_loss_squared, (_SIGN,), {}),
]


def _rid(case):
    f = case[0] if isinstance(case, tuple) else case
    return getattr(f, "__qualname__", str(f))


@pytest.mark.parametrize("case", RENAMED, ids=_rid)
def test_theta_keyword_is_value(case):
    f, before, after = case
    new = f(*before, value=_TH, **after)
    np.testing.assert_array_equal(f(*before, _TH, **after), new)     # positional: unchanged
    with pytest.warns(DeprecationWarning, match=r"\(theta=\.\.\.\) is deprecated: pass "
                                                r"value=") as rec:
        old = f(*before, theta=_TH, **after)
    np.testing.assert_array_equal(old, new)
    assert len(rec) == 1 and rec[0].filename == __file__              # points at the caller
    with pytest.raises(TypeError, match="give `value` only"):
        f(*before, value=_TH, theta=_TH, **after)
    with pytest.raises(TypeError, match="give `value` only"):
        f(*before, _TH, theta=_TH, **after)
    params = inspect.signature(f).parameters
    assert "value" in params and "theta" not in params


def test_theta_warning_names_the_class_and_the_value_keyword_does_not_warn(recwarn):
    _TRUNC.sample(value=0.5, rng=1)
    accounting.per_instance_rdp(_TRUNC, value=0.5, sensitivity=1.0, alpha=2.0)
    assert not [w for w in recwarn if issubclass(w.category, DeprecationWarning)]
    with pytest.warns(DeprecationWarning, match=r"^TruncatedGaussian\.sf\(theta=\.\.\.\)"):
        _TRUNC.sf(1.0, theta=0.5)
    with pytest.warns(DeprecationWarning, match=r"^fisher_information_loss\(theta="):
        accounting.fisher_information_loss(_TRUNC, theta=0.5)


def test_theta_keyword_with_columns_and_nulls():
    pd = pytest.importorskip("pandas")
    s = pd.Series([0.2, None, 1.5], index=[10, 11, 12], name="g")
    new = _TRUNC.sample(value=s, rng=3, nulls="keep")
    with pytest.warns(DeprecationWarning, match="value="):
        old = _TRUNC.sample(theta=s, rng=3, nulls="keep")
    pd.testing.assert_series_equal(old, new)


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
