"""The guide to adding a mechanism (docs/extending.md), followed from outside the package: a
new bounded law (``tests/_external_law.py``, at most 80 lines) passes the conformance
battery, is registered by name with :func:`bndp.mechanisms.register`, and releases a pandas
column through :func:`bndp.privatize` and ``bndp privatize --spec``, charging a budget; and
:func:`~bndp.mechanisms.register` refuses what a release could not use."""

from __future__ import annotations

import json
import math
import os
from fractions import Fraction

import numpy as np
import pandas as pd
import pytest

import bndp
from bndp import cli
from bndp.mechanisms import mechanism_names, register, unregister
from bndp.mechanisms.registry import MECHANISMS

from . import _external_law
from ._external_law import UniformMixture
from .test_conformance import DEFAULT_PARAMS, check_class

NAME = "uniform_mixture"


@pytest.fixture
def registered():
    """UniformMixture registered as NAME for one test (removed afterwards)."""
    register(NAME, UniformMixture)
    try:
        yield NAME
    finally:
        unregister(NAME)


def test_the_law_is_outside_the_package_and_short():
    path = os.path.abspath(_external_law.__file__)
    package = os.path.abspath(os.path.dirname(bndp.__file__))
    assert not path.startswith(package + os.sep)
    assert UniformMixture.__module__ == "tests._external_law"
    with open(path, encoding="utf-8") as f:
        lines = f.read().splitlines()
    assert len(lines) <= 80, len(lines)


def test_the_law_passes_the_conformance_battery():
    res = check_class(UniformMixture)
    ran = res["ran"]
    # every parameter set ran the law, moments, loss, pickle and repr checks (one law: the
    # class takes no mode; no forbidden intervals)
    for check in ("law", "moments", "loss", "pickle", "repr"):
        assert sum(r.startswith(check + " ") for r in ran) == len(DEFAULT_PARAMS), check
    assert "scan power" in ran
    # what does not apply is skipped with its reason: no per-row release, no bndp grid plan
    assert all(s.startswith(("rows ", "model ")) for s in res["skipped"]), res["skipped"]
    assert any("has no `sample_rows`" in s for s in res["skipped"])


def test_the_certificate_is_the_laws_worst_case():
    # the pmf's ratio between two true values that round to different points is e^L, L just
    # below epsilon; within one point it is 1
    m = UniformMixture(0.7, sensitivity=2.0, lower=0.0, upper=9.0)
    assert len(m.grid()) == 6           # ceil(9 / 2) + 1 points, 1.8 apart
    p0, p1, p0b = m.pmf(m.grid(), 0.0), m.pmf(m.grid(), 2.0), m.pmf(m.grid(), 0.5)
    assert np.max(np.abs(np.log(p0) - np.log(p1))) == pytest.approx(0.7, rel=1e-8)
    assert np.max(np.abs(np.log(p0) - np.log(p1))) <= m.privacy_loss() * (1 + 1e-12)
    assert m.privacy_loss() <= 0.7
    np.testing.assert_array_equal(p0, p0b)
    assert math.fsum(p0) == pytest.approx(1.0, abs=1e-15)


def test_a_spec_sees_a_name_registered_after_import():
    df = pd.DataFrame({"x": [0.0, 2.5, 7.0, 10.0, 4.2], "id": [1, 2, 3, 4, 5]})
    spec = {"x": {"mechanism": NAME, "lower": 0, "upper": 10, "sensitivity": 2.5,
                  "epsilon": 0.5}}
    with pytest.raises(bndp.SpecError, match="key 'mechanism': must be one of"):
        bndp.privatize(df, spec)
    register(NAME, UniformMixture)
    try:
        assert NAME in mechanism_names() and NAME not in MECHANISMS
        b = bndp.Budget(epsilon=1.0)
        out = bndp.privatize(df, spec, budget=b)
        assert b.spent.epsilon == 0.5 and b.remaining.epsilon == 0.5
        assert list(b.log[0].columns) == ["x"] and b.log[0].columns["x"].epsilon == 0.5
        grid = np.linspace(0.0, 10.0, 5)        # ceil(10 / 2.5) + 1 points
        assert np.isin(out["x"].to_numpy(), grid).all()
        assert out["id"].equals(df["id"])
        # a seeded release is reproducible: the mechanism draws from the column's stream
        one, two = (bndp.privatize(df, spec, rng=7)["x"].to_numpy() for _ in range(2))
        np.testing.assert_array_equal(one, two)
    finally:
        unregister(NAME)
    with pytest.raises(bndp.SpecError, match="must be one of"):
        bndp.privatize(df, spec)


def test_the_registered_law_releases_many_rows_by_its_law(registered):
    v = np.repeat([1.0, 8.0], 20_000)
    df = pd.DataFrame({"x": v})
    spec = {"x": {"mechanism": registered, "lower": 0, "upper": 10, "sensitivity": 2.5,
                  "epsilon": 1.0}}
    out = bndp.privatize(df, spec, rng=11)["x"].to_numpy()
    m = UniformMixture(1.0, sensitivity=2.5, lower=0.0, upper=10.0)
    for q, x in ((1.0, out[:20_000]), (8.0, out[20_000:])):
        freq = np.array([np.mean(x == g) for g in m.grid()])
        p = m.pmf(m.grid(), q)
        assert (np.abs(freq - p) <= 5 * np.sqrt(p * (1 - p) / len(x))).all(), (q, freq, p)


def test_the_command_line_spec_file_sees_a_registered_name(registered, tmp_path, capsys):
    src = tmp_path / "in.csv"
    src.write_text("id,x\n" + "".join(f"{i},{i % 11}\n" for i in range(50)))
    spec = tmp_path / "release.json"
    spec.write_text(json.dumps({"budget": {"epsilon": 1.0}, "columns": {"x": {
        "mechanism": registered, "lower": 0, "upper": 10, "sensitivity": 1, "epsilon": 0.4}}}))
    dst = tmp_path / "out.csv"
    code = cli.main(["privatize", str(src), "-o", str(dst), "--spec", str(spec)])
    err = capsys.readouterr().err
    assert code == 0, err
    assert "UniformMixture (registered mechanism 'uniform_mixture')" in err
    assert "remaining epsilon = 0.6" in err
    rows = dst.read_text().splitlines()[1:]
    assert len(rows) == 50
    assert {float(r.split(",")[1]) for r in rows} <= set(np.linspace(0.0, 10.0, 11))


def test_a_mechanism_that_loses_more_than_its_epsilon_is_refused():
    class Loose(UniformMixture):        # reports a loss above the epsilon it was given
        def privacy_loss(self):
            return 1.5 * self.epsilon

    register("loose_mixture", Loose)
    try:
        df = pd.DataFrame({"x": [1.0, 2.0]})
        b = bndp.Budget(epsilon=2.0)
        # released, it would give the column less privacy than its spec asks for: refused
        # before anything is drawn or charged
        with pytest.raises(bndp.SpecError, match="certifies a loss of 0.75, more than the "
                                                 "column's epsilon 0.5"):
            bndp.privatize(df, {"x": {"mechanism": "loose_mixture", "lower": 0, "upper": 10,
                                      "sensitivity": 1, "epsilon": 0.5}}, budget=b)
        assert Fraction(str(b.spent.epsilon)) == 0
    finally:
        unregister("loose_mixture")


def test_a_mechanism_without_delta_refuses_a_nonzero_delta(registered):
    with pytest.raises(bndp.SpecError, match=r"key 'delta': mechanism 'uniform_mixture' "
                                             r"takes no delta"):
        bndp.privatize(pd.DataFrame({"x": [1.0]}), {"x": {
            "mechanism": registered, "lower": 0, "upper": 10, "sensitivity": 1,
            "epsilon": 0.5, "delta": 1e-6}})
    # an unknown option names the keys the mechanism takes
    with pytest.raises(bndp.SpecError, match="unknown key for mechanism 'uniform_mixture'"):
        bndp.privatize(pd.DataFrame({"x": [1.0]}), {"x": {
            "mechanism": registered, "lower": 0, "upper": 10, "sensitivity": 1,
            "epsilon": 0.5, "mode": "exact"}})


# ---------------------------------------------------------------------------------------
# what register() refuses
# ---------------------------------------------------------------------------------------
class _NoPrivacyLoss(bndp.Mechanism):
    def __init__(self, epsilon, *, sensitivity, lower, upper):
        pass

    def sample(self, value, size=None, rng=None, on_outside="clip"):
        return value


class _NoOnOutside(_NoPrivacyLoss):
    def sample(self, value, size=None, rng=None):  # type: ignore[override]
        return value

    def privacy_loss(self):
        return 0.0


class _NoBounds(_NoOnOutside):
    def __init__(self, epsilon, *, sensitivity):  # type: ignore[override]
        pass


@pytest.mark.parametrize("cls,message", [
    (UniformMixture(1.0, sensitivity=1.0, lower=0.0, upper=1.0), "must be a class"),
    (len, "must be a class"),
    (dict, "must subclass bndp.Mechanism"),
    (_NoBounds, r"constructor must take cls\(epsilon, \*, sensitivity, lower, upper"),
    (_NoOnOutside, "sample\\(\\) must take the keyword\\(s\\) on_outside"),
    (_NoPrivacyLoss, "no privacy_loss\\(\\) method"),
])
def test_register_refuses_a_class_a_release_cannot_use(cls, message):
    with pytest.raises(TypeError, match=message):
        register("some_mechanism", cls)
    assert "some_mechanism" not in mechanism_names()


@pytest.mark.parametrize("name,error,message", [
    ("laplace", ValueError, "'laplace' is already registered \\(to BoundedLaplace\\)"),
    ("bounded_gaussian", ValueError, "an alias of 'gaussian'"),
    ("Uniform", ValueError, "lower case letters, digits and underscores"),
    ("", ValueError, "lower case letters"),
    ("2mix", ValueError, "starting with a letter"),
    ("a-b", ValueError, "lower case letters"),
    (3, TypeError, "`name` must be a string; got int"),
])
def test_register_refuses_a_bad_or_taken_name(name, error, message):
    with pytest.raises(error, match=message):
        register(name, UniformMixture)


def test_a_name_is_registered_once(registered):
    with pytest.raises(ValueError, match="'uniform_mixture' is already registered \\(to "
                                         "UniformMixture\\)"):
        register(registered, UniformMixture)


def test_unregister_removes_only_names_registered_since():
    with pytest.raises(ValueError, match="a built-in mechanism cannot be removed"):
        unregister("gaussian")
    with pytest.raises(ValueError, match="no such mechanism is registered"):
        unregister("never_registered")
    with pytest.raises(TypeError, match="must be a string"):
        unregister(None)
    assert mechanism_names() == MECHANISMS
