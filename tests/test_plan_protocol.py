"""The plans of the grid laws share one interface (:class:`bndp._laws.base.Plan`), callers
outside the laws package use it instead of testing plan types, the public facade
``bndp.mechanisms.exact`` re-exports no private name, and per-row bounds have one path:
the mechanisms' ``sample_rows`` (what :func:`bndp.sample` and release specs call), drawn by
one sampler."""

from __future__ import annotations

import ast
import math
import pathlib
from decimal import Decimal
from fractions import Fraction

import numpy as np
import pandas as pd
import pytest

import bndp
from bndp._laws.base import Plan
from bndp._laws.constrained import ConstrainedPlan
from bndp._laws.product import ProductPlan
from bndp._laws.whole_range import ExactPlan
from bndp._laws.window import RowPlan
from bndp.mechanisms import exact

SRC = pathlib.Path(bndp.__file__).parent
PLAN_TYPES = {"RowPlan", "ExactPlan", "ProductPlan", "ConstrainedPlan"}


def _plans():
    """One plan of each type, with a true value inside its range."""
    row = bndp.BoundedLaplace(1.0, sensitivity=1.0, lower=0.0, upper=10.0).exact_plan
    box = bndp.BoundedGaussian(1.0, sensitivity=1.0, lower=[0.0, -2.0],
                               upper=[4.0, 3.0]).exact_plan
    whole = box.coords[0]
    gaps = bndp.ConstrainedLaplace(1.0, sensitivity=1.0, lower=0.0, upper=20.0,
                                   forbidden=[(5.0, 8.0)]).exact_plan
    return [(row, 3.3, RowPlan), (whole, 1.7, ExactPlan), (box, np.array([1.7, 0.4]), ProductPlan),
            (gaps, 12.2, ConstrainedPlan)]


@pytest.mark.parametrize("plan, value, cls", _plans(),
                         ids=["RowPlan", "ExactPlan", "ProductPlan", "ConstrainedPlan"])
def test_every_plan_type_implements_the_plan_protocol(plan, value, cls):
    assert type(plan) is cls
    assert isinstance(plan, Plan)
    assert plan.family in ("laplace", "gaussian")
    assert plan.gamma == math.ldexp(1.0, plan.exponent)
    assert 0.0 < plan.certified_epsilon <= plan.target
    assert plan.bounded is True
    assert plan.supports_rows is (cls is RowPlan)
    gen = np.random.default_rng(1)
    draws = np.asarray(plan.sample(value, 200, gen))
    if cls is ProductPlan:
        grids, pmfs = plan.grid(), plan.pmf(value)
        idx = plan.index(value)
        assert idx.shape == (plan.dim,)
        assert plan.exact_index([Fraction(float(v)) for v in value]) == tuple(int(i) for i in idx)
        for c in range(plan.dim):
            assert math.isclose(float(np.sum(pmfs[c])), 1.0, rel_tol=1e-12)
            assert np.isin(draws[:, c], grids[c]).all()
            assert grids[c][0] <= value[c] <= grids[c][-1]
        means = plan.law(0.0, value, "mean")
        assert len(means) == plan.dim
        assert all(math.isclose(m, c.law(0.0, float(v), "mean"))
                   for m, c, v in zip(means, plan.coords, value))
        cdfs = plan.law(np.array([1.0, 0.0]), value, "cdf")
        assert cdfs[0] == plan.coords[0].law(1.0, float(value[0]), "cdf")
        assert cdfs[1] == plan.coords[1].law(0.0, float(value[1]), "cdf")
    else:
        g = plan.grid()
        p = plan.pmf(value)
        assert p.shape == g.shape and math.isclose(float(p.sum()), 1.0, rel_tol=1e-12)
        i = int(plan.index(value))
        assert 0 <= i and plan.exact_index(Fraction(value)) == i
        assert np.isin(draws, g).all()
        assert plan.law(g[-1], value, "cdf") == 1.0
        assert math.isclose(plan.law(0.0, value, "mean"), float(np.dot(p, g)), rel_tol=1e-12)
    inside = plan.sample_inside(np.float64(value) if cls is not ProductPlan else value, None,
                                np.random.default_rng(2), "clip", 1)
    if cls is RowPlan:
        assert inside == plan.sample(np.float64(value), None, np.random.default_rng(2))
    else:
        assert inside is NotImplemented
    ends = plan.ends_loss(0.0, 10.0)
    if cls is RowPlan or cls is ConstrainedPlan:
        assert ends is not None and math.isfinite(ends) and ends > plan.certified_epsilon
    else:
        assert ends is None


def test_a_constrained_plan_on_an_unbounded_set_says_so():
    plan = bndp.ConstrainedLaplace(1.0, sensitivity=1.0, lower=0.0, upper=math.inf,
                                   forbidden=[(5.0, 8.0)]).exact_plan
    assert isinstance(plan, Plan)
    assert plan.bounded is False and plan.supports_rows is False
    assert plan.ends_loss(0.0, 10.0) == math.inf


def test_no_module_outside_the_laws_tests_a_plan_type():
    """``type(plan) is RowPlan``, ``isinstance(plan, ConstrainedPlan)`` and the like appear
    only inside ``bndp._laws``: everything else asks the plan (its protocol)."""
    found = []
    for path in SRC.rglob("*.py"):
        rel = path.relative_to(SRC)
        if rel.parts[0] == "_laws":
            continue
        for node in ast.walk(ast.parse(path.read_text())):
            names = []
            if isinstance(node, ast.Call) and getattr(node.func, "id", None) in (
                    "isinstance", "issubclass") and len(node.args) == 2:
                t = node.args[1]
                names = t.elts if isinstance(t, ast.Tuple) else [t]
            elif isinstance(node, ast.Compare) and any(
                    isinstance(op, (ast.Is, ast.IsNot, ast.Eq, ast.NotEq)) for op in node.ops):
                names = node.comparators + [node.left]
            for n in names:
                name = n.attr if isinstance(n, ast.Attribute) else getattr(n, "id", None)
                if name in PLAN_TYPES:
                    found.append(f"{rel}:{node.lineno}")
    assert found == []


def test_the_exact_facade_re_exports_no_private_name():
    private = sorted(n for n in vars(exact) if n.startswith("_") and not n.startswith("__"))
    assert private == []
    assert set(exact.__all__) <= set(vars(exact))
    assert exact.Plan is Plan


@pytest.mark.parametrize("mech", ["laplace", "gaussian"])
@pytest.mark.parametrize("mode", ["exact", "continuous"])
def test_sample_dispatches_per_row_bounds_to_the_mechanism(mech, mode, monkeypatch):
    cls = bndp.BoundedLaplace if mech == "laplace" else bndp.BoundedGaussian
    lo = np.array([0.0, 10.0, -3.0, 0.5])
    hi = np.array([10.0, 100.0, 2.0, 0.75])
    q = np.array([5.0, 50.0, 1.0, 0.6])
    kw = dict(epsilon=1.0, sensitivity=1.0, rng=7, mode=mode)
    want = cls.sample_rows(q, lo, hi, **kw)
    assert want.shape == (4,) and ((lo <= want) & (want <= hi)).all()
    calls = []
    real = cls.sample_rows.__func__

    def spy(c, *a, **k):
        calls.append(c)
        return real(c, *a, **k)

    monkeypatch.setattr(cls, "sample_rows", classmethod(spy))
    got = bndp.sample(q, mechanism=mech, lower=lo, upper=hi, **kw)
    np.testing.assert_array_equal(got, want)
    assert calls == [cls]


def test_a_mechanism_without_a_per_row_release_refuses_sample_rows():
    with pytest.raises(TypeError, match="no per-row release"):
        bndp.ConstrainedLaplace.sample_rows([1.0], [0.0], [2.0], epsilon=1.0, sensitivity=1.0)


def test_release_specs_draw_per_row_bounds_through_the_mechanism(monkeypatch):
    spec = {"score": {"mechanism": "laplace", "lower": "lo", "upper": "hi", "sensitivity": 1,
                      "epsilon": 0.5}}
    i = np.arange(100)
    df = pd.DataFrame({"score": (i % 5) * 10.0 + 2.0, "lo": (i % 5) * 10.0,
                       "hi": (i % 5) * 10.0 + 5.0})
    want = bndp.privatize(df, spec, rng=3)["score"].to_numpy()
    calls = []
    real = bndp.BoundedLaplace.sample_rows.__func__

    def spy(c, *a, **k):
        calls.append(c)
        return real(c, *a, **k)

    monkeypatch.setattr(bndp.BoundedLaplace, "sample_rows", classmethod(spy))
    got = bndp.privatize(df, spec, rng=3)["score"].to_numpy()
    np.testing.assert_array_equal(got, want)
    assert calls == [bndp.BoundedLaplace]


@pytest.mark.parametrize("mech", ["laplace", "gaussian"])
def test_per_row_exact_values_are_drawn_as_doubles_of_their_grid_points(mech):
    """True values that are not doubles (here decimals) are drawn by the one per-row
    sampler: the draws and the generator's state are those of doubles with the same grid
    indices (here the values' nearest doubles), on rows that mix wide rows and narrow
    rows, some of them drawn with the wide kernel."""
    r = np.random.default_rng(5)
    k = 3000
    lo = np.round(r.uniform(-50.0, 50.0, k), 1)
    hi = lo + r.choice([3.0, 8.0, 15.0, 30.0, 45.0, 60.0, 80.0, 200.0], k)
    text = [f"{v:.2f}" for v in r.uniform(lo, hi)]
    dec = np.array([Decimal(t) for t in text], dtype=object)
    near = np.array([float(t) for t in text])
    assert not all(Fraction(d) == Fraction(f) for d, f in zip(dec, near))
    g1, g2 = np.random.default_rng(3), np.random.default_rng(3)
    got = bndp.sample(dec, mechanism=mech, epsilon=1.0, sensitivity=1.0, lower=lo, upper=hi,
                      rng=g1)
    want = bndp.sample(near, mechanism=mech, epsilon=1.0, sensitivity=1.0, lower=lo, upper=hi,
                       rng=g2)
    np.testing.assert_array_equal(got, want)
    assert g1.random() == g2.random()
