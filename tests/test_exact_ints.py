"""Integers beyond 2^53 reach the grid from their exact value, in every container.

The default release rounds a true value to its grid index once, and its certificate assumes
that two true values one sensitivity apart get indices at most ``dk`` apart. An integer
that is first rounded to its nearest double (NumPy reading ``[x, 0.5]`` as float64, an
engine casting a 128-bit column to Float64) can land one index further on either side.

The oracle here is independent of the library: the grid index of an exact value is
computed in rational arithmetic from the row's public parameters (lower, upper, gamma, n).
Each container is checked twice: the doubles the sampler sees (the library's conversion of
the container) have the oracle's indices, and a seeded release of the container equals,
draw for draw, the release of the oracle's grid points (the same seed).
"""

from __future__ import annotations

import math
import random
import warnings
from decimal import Decimal
from fractions import Fraction

import numpy as np
import pytest

import bndp
from bndp._columns import to_numpy
from bndp._values import WideValues, as_values, snap_plan

pd = pytest.importorskip("pandas")
pa = pytest.importorskip("pyarrow")
pl = pytest.importorskip("polars")

pytestmark = pytest.mark.filterwarnings("ignore:grid law:RuntimeWarning")

EPS = 1.0

# (lower, upper, sensitivity): rows of 80 sensitivities around +-2^61, +-2^62, +-2^63, in
# [2^63, 2^64) and beyond 64 bits (every bound an exact double; the grid is coarser than
# the doubles there)
CASES = {
    "-2^61": (-2 ** 61 - 40 * 2 ** 12, -2 ** 61 + 40 * 2 ** 12, 2 ** 12),
    "+2^61": (2 ** 61 - 40 * 2 ** 12, 2 ** 61 + 40 * 2 ** 12, 2 ** 12),
    "-2^62": (-2 ** 62 - 40 * 2 ** 13, -2 ** 62 + 40 * 2 ** 13, 2 ** 13),
    "+2^62": (2 ** 62 - 40 * 2 ** 13, 2 ** 62 + 40 * 2 ** 13, 2 ** 13),
    "-2^63": (-2 ** 63 - 40 * 2 ** 14, -2 ** 63 + 40 * 2 ** 14, 2 ** 14),
    "+2^63": (2 ** 63 - 40 * 2 ** 14, 2 ** 63 + 40 * 2 ** 14, 2 ** 14),
    "1.5*2^63": (3 * 2 ** 62 - 40 * 2 ** 14, 3 * 2 ** 62 + 40 * 2 ** 14, 2 ** 14),
    "2^64-": (2 ** 64 - 2 ** 22 - 80 * 2 ** 14, 2 ** 64 - 2 ** 22, 2 ** 14),
    "+2^70": (2 ** 70 - 40 * 2 ** 21, 2 ** 70 + 40 * 2 ** 21, 2 ** 21),
    "-2^100": (-2 ** 100 - 40 * 2 ** 51, -2 ** 100 + 40 * 2 ** 51, 2 ** 51),
}

I64 = (-2 ** 63, 2 ** 63 - 1)
U64 = (0, 2 ** 64 - 1)
I128 = (-2 ** 127, 2 ** 127 - 1)
U128 = (0, 2 ** 128 - 1)


def _mechanism(family, lo, hi, dq):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        cls = bndp.BoundedLaplace if family == "laplace" else bndp.BoundedGaussian
        return cls(EPS, sensitivity=dq, lower=lo, upper=hi)


def oracle(v, lo, hi, gamma, n):
    """Grid index of an exact value in the row [lo, hi] of n steps of gamma: clip, nearest
    grid point, ties up (rational arithmetic)."""
    c = min(max(Fraction(v), Fraction(lo)), Fraction(hi))
    k = math.floor((c - Fraction(lo)) / Fraction(gamma) + Fraction(1, 2))
    return min(max(k, 0), n)


def oracle_indices(m, values):
    p = m.exact_plan
    return [oracle(v, p.lower, p.upper, p.gamma, p.n) for v in values]


def grid_points(m, ks):
    p = m.exact_plan
    return np.array([float(Fraction(p.lower) + k * Fraction(p.gamma)) for k in ks])


def pair_loss(m, k1, k2):
    """Largest |log ratio| of the output probabilities of grid indices k1 and k2."""
    p = m.exact_plan
    g = p.grid()
    p1, p2 = p.pmf(g[k1]), p.pmf(g[k2])
    both = (p1 > 0) & (p2 > 0)          # the law functions list outputs down to 2^-60
    return float(np.max(np.abs(np.log(p1[both]) - np.log(p2[both]))))


def sampler_indices(m, container):
    """Grid indices of the doubles the sampler sees for a container's present values."""
    p = m.exact_plan
    col = to_numpy(container, "value")
    v = col.values
    if isinstance(v, np.ndarray) and v.dtype.kind in "iu":
        # an integer column reaches the sampler as its integers (for the integer law), its
        # missing entries in col.missing; the grid law reads them as the mechanism does,
        # exactly (_values.as_values)
        present = np.ravel(~col.missing) if col.missing is not None else None
        v = as_values(np.ravel(v) if present is None else np.ravel(v)[present], "value")
    d = snap_plan(p, v, m.lower, m.upper) if isinstance(v, WideValues) else np.asarray(v)
    d = np.ravel(d)
    d = d[~np.isnan(d)]
    return list(np.asarray(p.index(np.clip(d, p.lower, p.upper))))


def random_values(case, m, seed, count=48):
    """Integers of the row (and a few beyond it): most within a few hundred of a cell
    boundary (where a rounding to doubles moves an index), the rest uniform."""
    lo, hi, dq = CASES[case]
    gamma = Fraction(m.exact_plan.gamma)
    r = random.Random(seed)
    out = []
    for i in range(count):
        if i % 4 == 3:
            out.append(r.randint(lo - 3 * dq, hi + 3 * dq))
        else:
            j = r.randrange(m.exact_plan.n)
            mid = Fraction(m.exact_plan.lower) + (j + Fraction(1, 2)) * gamma
            out.append(math.floor(mid) + r.randint(-600, 600))
    return out


def with_floats(values, seed):
    """The integers with floats interleaved: doubles of the row, and 0.5 (clipped)."""
    r = random.Random(seed)
    out = []
    for v in values:
        out.append(v)
        if r.random() < 0.3:
            out.append(float(v) if r.random() < 0.7 else 0.5)
    return out


def _fits(values, rng):
    return all(isinstance(v, float) or rng[0] <= v <= rng[1] for v in values)


# container kinds: name -> (build(values) or None where the kind cannot hold them,
# mixed with floats?, the integers the kind holds: (min, max) or None for any)
def _list(vals):
    return list(vals)


def _np_scalars(vals):
    t = np.int64 if _fits(vals, I64) else np.uint64
    return [v if isinstance(v, float) else t(v) for v in vals]


def _int_array(dtype):
    return lambda vals: np.array(vals, dtype=dtype)


def _pandas_nullable(dtype):
    def build(vals):
        return pd.Series(pd.array(list(vals[:5]) + [None] + list(vals[5:]), dtype=dtype))
    return build


def _polars(dtype):
    def build(vals):
        if dtype is None:
            return None
        return pl.Series("x", list(vals[:5]) + [None] + list(vals[5:]), dtype=dtype)
    return build


def _arrow(t):
    def build(vals):
        return pa.array(list(vals[:5]) + [None] + list(vals[5:]), type=t)
    return build


def _chunked_decimal(vals):
    d = [Decimal(v) for v in vals]
    return pa.chunked_array([pa.array(d[:7], type=pa.decimal128(38, 0)),
                             pa.array(d[7:], type=pa.decimal128(38, 0))])


KINDS = {
    "list": (_list, False, None),
    "list_mixed": (_list, True, None),
    "tuple_mixed": (tuple, True, None),
    "nested_mixed": (lambda vals: [[v] for v in vals], True, None),
    "numpy_scalars_mixed": (_np_scalars, True, (-2 ** 63, 2 ** 64 - 1)),
    "object_array_mixed": (lambda vals: np.array(vals, dtype=object), True, None),
    "int64_array": (_int_array(np.int64), False, I64),
    "uint64_array": (_int_array(np.uint64), False, U64),
    "pandas_int64": (lambda vals: pd.Series(vals, dtype="int64"), False, I64),
    "pandas_uint64": (lambda vals: pd.Series(vals, dtype="uint64"), False, U64),
    "pandas_Int64": (_pandas_nullable("Int64"), False, I64),
    "pandas_UInt64": (_pandas_nullable("UInt64"), False, U64),
    "polars_Int64": (_polars(pl.Int64), False, I64),
    "polars_UInt64": (_polars(pl.UInt64), False, U64),
    "polars_Int128": (_polars(getattr(pl, "Int128", None)), False, I128),
    "polars_UInt128": (_polars(getattr(pl, "UInt128", None)), False, U128),
    "arrow_int64": (_arrow(pa.int64()), False, I64),
    "arrow_uint64": (_arrow(pa.uint64()), False, U64),
    "arrow_decimal_chunked": (_chunked_decimal, False, None),
}


def kind_values(kind, case, m, seed):
    """Random values of row ``case`` for container ``kind``: integers clamped into the
    kind's range (with floats interleaved for the mixed kinds), or None where the row lies
    outside that range."""
    build, mixed, held = KINDS[kind]
    lo, hi, _ = CASES[case]
    if held is not None and (hi < held[0] or lo > held[1]):
        return None
    vals = random_values(case, m, seed)
    if held is not None:
        vals = [min(max(v, held[0]), held[1]) for v in vals]
    if mixed:
        vals = with_floats(vals, seed)
    return vals


def _present(container):
    """The release's present (not missing) entries as float64, flat."""
    if isinstance(container, (pa.Array, pa.ChunkedArray)):
        a = np.asarray(container.to_numpy(zero_copy_only=False), dtype=np.float64)
    elif isinstance(container, pl.Series):
        a = container.to_numpy().astype(np.float64)
    elif isinstance(container, pd.Series):
        a = container.to_numpy(dtype=np.float64, na_value=np.nan)
    else:
        a = np.asarray(container, dtype=np.float64)
    a = a.ravel()
    return a[~np.isnan(a)]


@pytest.mark.parametrize("case", sorted(CASES))
@pytest.mark.parametrize("kind", sorted(KINDS))
def test_property_containers_reach_the_exact_index(kind, case):
    lo, hi, dq = CASES[case]
    m = _mechanism("laplace", lo, hi, dq)
    seed = sum(map(ord, kind + case))
    vals = kind_values(kind, case, m, seed)
    container = None if vals is None else KINDS[kind][0](vals)
    if container is None:
        pytest.skip(f"{kind} cannot hold the values of row {case}")
    ks = oracle_indices(m, vals)
    # the doubles the sampler sees carry the exact values' grid indices
    assert sampler_indices(m, container) == ks
    # and the release's law is theirs: draw for draw the release of the oracle grid points
    points = grid_points(m, ks)
    kw = dict(mechanism="laplace", epsilon=EPS, sensitivity=dq, lower=lo, upper=hi)
    got = bndp.sample(container, rng=seed, nulls="keep", **kw)
    np.testing.assert_array_equal(_present(got), bndp.sample(points, rng=seed, **kw))


@pytest.mark.parametrize("kind", ["list_mixed", "object_array_mixed", "polars_Int128",
                                  "pandas_UInt64"])
def test_property_gaussian(kind):
    case = "+2^63"
    lo, hi, dq = CASES[case]
    m = _mechanism("gaussian", lo, hi, dq)
    vals = kind_values(kind, case, m, 11)
    container = KINDS[kind][0](vals)
    ks = oracle_indices(m, vals)
    assert sampler_indices(m, container) == ks
    kw = dict(mechanism="gaussian", epsilon=EPS, sensitivity=dq, lower=lo, upper=hi)
    np.testing.assert_array_equal(_present(bndp.sample(container, rng=4, nulls="keep", **kw)),
                                  bndp.sample(grid_points(m, ks), rng=4, **kw))


@pytest.mark.parametrize("case", ["-2^61", "+2^62", "2^64-"])
def test_property_python_int_scalars(case):
    lo, hi, dq = CASES[case]
    m = _mechanism("laplace", lo, hi, dq)
    vals = random_values(case, m, 5, count=12)
    ks = oracle_indices(m, vals)
    kw = dict(mechanism="laplace", epsilon=EPS, sensitivity=dq, lower=lo, upper=hi)
    for i, (v, g) in enumerate(zip(vals, grid_points(m, ks))):
        assert bndp.sample(v, rng=i, **kw) == bndp.sample(float(g), rng=i, **kw)


@pytest.mark.parametrize("kind", ["list_mixed", "nested_mixed", "object_array_mixed",
                                  "polars_Int128"])
def test_property_per_row_bounds(kind):
    """Per-row bounds (every row the same row: the same grid as the mechanism's)."""
    case = "-2^62"
    lo, hi, dq = CASES[case]
    m = _mechanism("laplace", lo, hi, dq)
    vals = kind_values(kind, case, m, 17)
    container = KINDS[kind][0](vals)
    n = len(vals) + (kind == "polars_Int128")               # (its null)
    shape = (n, 1) if kind == "nested_mixed" else (n,)
    kw = dict(mechanism="laplace", epsilon=EPS, sensitivity=dq)
    got = bndp.sample(container, lower=np.full(shape, float(lo)),
                      upper=np.full(shape, float(hi)), rng=6, nulls="keep", **kw)
    points = grid_points(m, oracle_indices(m, vals))
    want = bndp.sample(points, lower=np.full(len(vals), float(lo)),
                       upper=np.full(len(vals), float(hi)), rng=6, **kw)
    np.testing.assert_array_equal(_present(got), want)


# frames: bndp.privatize (narwhals), each column from its exact integers
FRAMES = {
    "polars_Int128": (lambda c: pl.DataFrame({"x": c}), "polars_Int128"),
    "polars_UInt128": (lambda c: pl.DataFrame({"x": c}), "polars_UInt128"),
    "polars_Int64": (lambda c: pl.DataFrame({"x": c}), "polars_Int64"),
    "pandas_UInt64": (lambda c: pd.DataFrame({"x": c}), "pandas_UInt64"),
    "pandas_int64": (lambda c: pd.DataFrame({"x": c}), "pandas_int64"),
    "arrow_uint64": (lambda c: pa.table({"x": c}), "arrow_uint64"),
    "arrow_decimal": (lambda c: pa.table({"x": c}), "arrow_decimal_chunked"),
}


def _frame_column(out):
    return _present(out["x"])


@pytest.mark.parametrize("case", ["-2^62", "+2^63", "2^64-", "-2^100"])
@pytest.mark.parametrize("frame", sorted(FRAMES))
def test_property_privatize_frames(frame, case):
    lo, hi, dq = CASES[case]
    m = _mechanism("laplace", lo, hi, dq)
    make, kind = FRAMES[frame]
    vals = kind_values(kind, case, m, 21)
    container = None if vals is None else KINDS[kind][0](vals)
    if container is None:
        pytest.skip(f"{kind} cannot hold the values of row {case}")
    ks = oracle_indices(m, vals)
    spec = {"x": dict(mechanism="laplace", epsilon=EPS, sensitivity=dq, lower=lo, upper=hi,
                      nulls="keep")}
    got = _frame_column(bndp.privatize(make(container), spec, rng=8))
    want = _frame_column(bndp.privatize(pl.DataFrame({"x": grid_points(m, ks)}), spec, rng=8))
    np.testing.assert_array_equal(got, want)


# the reported pair: 2047 apart, sensitivity 2048, near -2^61
X, Y = -2 ** 61 - 768, -2 ** 61 + 1279
LO, HI, DQ = -2 ** 61 - 1024, -2 ** 61 + 16384, 2048


def test_reported_pair_three_steps_apart_and_loss_within_epsilon():
    m = _mechanism("laplace", LO, HI, DQ)
    p = m.exact_plan
    assert Y - X == 2047 < DQ
    ko = oracle_indices(m, [X, Y])
    assert ko == [1, 4] and ko[1] - ko[0] <= p.dk
    assert pair_loss(m, *ko) <= EPS
    for container in ([X, 0.5, Y], [X, 2 ** 63, Y], (X, 0.5, Y), [[X], [0.5], [Y]],
                      np.array([X, 0.5, Y], dtype=object), [X, Y]):
        k = sampler_indices(m, container)
        assert (k[0], k[-1]) == (1, 4), container
    # rounded to doubles first, the two land 5 steps apart: a loss above epsilon
    kd = list(p.index(np.array([float(X), float(Y)])))
    assert kd == [0, 5] and pair_loss(m, *kd) > EPS
    # the releases: draw for draw those of the exact grid points
    kw = dict(mechanism="laplace", epsilon=EPS, sensitivity=DQ, lower=LO, upper=HI)
    g = grid_points(m, oracle_indices(m, [X, 0.5, Y]))      # (0.5 is clipped to upper)
    for seed in range(5):
        got = bndp.sample([X, 0.5, Y] * 20, rng=seed, **kw)
        want = bndp.sample(list(g) * 20, rng=seed, **kw)
        np.testing.assert_array_equal(got, want)
    if getattr(pl, "Int128", None) is not None:
        spec = {"x": dict(mechanism="laplace", epsilon=EPS, sensitivity=DQ, lower=LO,
                          upper=HI)}
        frame = pl.DataFrame({"x": pl.Series([X, Y] * 20, dtype=pl.Int128)})
        got = bndp.privatize(frame, spec, rng=2)["x"].to_numpy()
        want = bndp.privatize(pl.DataFrame({"x": [g[0], g[2]] * 20}), spec,
                              rng=2)["x"].to_numpy()
        np.testing.assert_array_equal(got, want)


def test_float_lists_keep_the_fast_path():
    # floats only (and integers within 2^53): plain float64, no exact values kept
    assert type(as_values([1.5, 2 ** 53 - 1, 1 - 2 ** 53, 0.25], "value")) is np.ndarray
    assert type(as_values([[1.5], [2.5]], "value")) is np.ndarray
    # a list whose doubles reach 2^53 keeps exact values; the doubles among them are exact
    v = as_values([2.0 ** 60, 0.5, 2 ** 60 + 1], "value")
    assert type(v) is WideValues
    assert v.exact_at(np.array([0, 2])) == [Fraction(2 ** 60), Fraction(2 ** 60 + 1)]


def test_refusals_in_mixed_lists():
    with pytest.raises(TypeError, match="bool"):
        as_values([True, 0.5, 2 ** 60], "value")
    with pytest.raises(TypeError, match="real numbers"):
        as_values(["a", 2 ** 60, 0.5], "value")
    # a pandas object column (integers beyond 2^64 and floats) is refused, not rounded
    with pytest.raises(TypeError, match="real numbers"):
        bndp.sample(pd.Series([2 ** 64, 0.5], dtype=object), mechanism="laplace",
                    epsilon=EPS, sensitivity=DQ, lower=LO, upper=HI)
