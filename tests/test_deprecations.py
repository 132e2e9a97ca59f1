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
