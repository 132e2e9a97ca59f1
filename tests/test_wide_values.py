"""True values that are not doubles reach the grid through one rounding, from the exact value.

The oracle is independent of the library: the grid index of an exact value is computed here
in rational arithmetic from the row's public parameters (lower, upper, granularity), and the
released law of a value is identified by seeded draws: the release of a column of true
values equals, draw for draw, the release of the grid points of their oracle indices (the
same seed). Before the fix a value just below a binade boundary and the value one
sensitivity above it landed dk + 1 grid steps apart.
"""

from __future__ import annotations

import decimal
import io
import math
import os
import subprocess
import sys
from decimal import Decimal
from fractions import Fraction

import numpy as np
import pytest

import bndp
from bndp._values import WideValues, as_values

pd = pytest.importorskip("pandas")
pa = pytest.importorskip("pyarrow")

EPS = 1.0
LO, HI = 63.5, 183.5                  # gamma = 1/16, dk = 16 at epsilon = 1, sensitivity 1


def oracle(v, lo, hi, gamma, n):
    """Grid index of an exact value in the row [lo, hi] of n steps of gamma: clip, nearest
    grid point, ties up (rational arithmetic)."""
    f = Fraction(v) if not isinstance(v, str) else Fraction(v.strip())
    c = min(max(f, Fraction(lo)), Fraction(hi))
    k = math.floor((c - Fraction(lo)) / Fraction(gamma) + Fraction(1, 2))
    return min(max(k, 0), n)


def grid_point(k, lo, gamma):
    return float(Fraction(lo) + k * Fraction(gamma))


def _ld(x: Fraction) -> np.longdouble:
    return np.longdouble(x.numerator) / np.longdouble(x.denominator)


# the audit's pair: exactly one apart, both exact in longdouble, on either side of 64
X = Fraction(6353125, 100000) - Fraction(3, 4) * Fraction(2) ** -47
X2 = X + 1
# the same in short decimal text (5e-15 below a cell boundary: the nearest double is below
# the boundary under 64, above it over 64)
XD = Fraction("63.531249999999995")


def _pair_values(x=X, copies=100):
    """Values around the pair (x, x + 1), each repeated: a column long enough that seeded
    draws tell apart laws one grid step apart (a single draw of a wide kernel often
    cannot)."""
    one = [x - k * Fraction(1, 16) for k in range(3)] + [x + 1 + k * Fraction(1, 16)
                                                         for k in range(3)]
    return [v for v in one for _ in range(copies)]


@pytest.fixture(scope="module")
def laplace():
    return bndp.BoundedLaplace(epsilon=EPS, sensitivity=1.0, lower=LO, upper=HI)


@pytest.fixture(scope="module")
def gaussian():
    return bndp.BoundedGaussian(epsilon=EPS, sensitivity=1.0, lower=LO, upper=HI)


def _oracle_points(m, values):
    p = m.exact_plan
    ks = [oracle(v, p.lower, p.upper, Fraction(p.gamma), p.n) for v in values]
    return ks, np.array([grid_point(k, p.lower, Fraction(p.gamma)) for k in ks])


def _pair_loss(m, k1, k2):
    p = m.exact_plan
    g = p.grid()
    p1, p2 = p.pmf(g[k1]), p.pmf(g[k2])
    both = (p1 > 0) & (p2 > 0)          # the law functions list outputs down to 2^-60
    assert both[0] and both[-1] or both[0]
    return float(np.max(np.abs(np.log(p1[both]) - np.log(p2[both]))))


def test_audit_reproduction_index_and_loss(laplace):
    p = laplace.exact_plan
    assert (p.gamma, p.dk) == (1 / 16, 16)
    x, x2 = _ld(X), _ld(X2)
    assert x2 - x == 1                             # exactly one sensitivity apart
    # what the sampler sees for each: the double standing for the exact value
    q = laplace._true_values(np.array([x, x2]))
    k = p.index(q)
    ko = [oracle(X, LO, HI, Fraction(1, 16), p.n), oracle(X2, LO, HI, Fraction(1, 16), p.n)]
    assert list(k) == ko == [0, 16]
    assert ko[1] - ko[0] <= p.dk
    assert _pair_loss(laplace, *ko) <= EPS
    # rounding to a double first gives indices 17 apart and a loss above epsilon
    kd = p.index(np.array([float(x), float(x2)]))
    assert kd[1] - kd[0] == 17 and _pair_loss(laplace, *kd) > EPS


def _check_release(release, m, values, seed=3, reference=None):
    """``release(seed)`` equals, draw for draw, the mechanism's release of the oracle grid
    points of ``values`` (so its law is that of the exact values' indices);
    ``reference(seed, points)``: the same path's release of float64 points (default: the
    mechanism's ``sample``)."""
    ks, g = _oracle_points(m, values)
    got = np.asarray(release(seed), dtype=np.float64)
    want = np.asarray(m.sample(g, rng=seed) if reference is None else reference(seed, g))
    np.testing.assert_array_equal(got, want)
    # the pair exactly one sensitivity apart stays within dk steps, and its loss <= epsilon
    c = len(ks) // 6
    assert abs(ks[3 * c] - ks[0]) <= m.exact_plan.dk
    assert _pair_loss(m, ks[0], ks[3 * c]) <= EPS * (1 + 1e-12)
    return ks


KINDS = {
    "longdouble": lambda vs: np.array([_ld(v) for v in vs], dtype=np.longdouble),
    "decimal_objects": lambda vs: np.array([Decimal(v.numerator) / Decimal(v.denominator)
                                            for v in vs], dtype=object),
    "fraction_list": lambda vs: list(vs),
    "decimal_list": lambda vs: [Decimal(v.numerator) / Decimal(v.denominator) for v in vs],
}


@pytest.fixture(autouse=True)
def _decimal_precision():
    with decimal.localcontext() as ctx:
        ctx.prec = 80
        yield


@pytest.mark.parametrize("kind", sorted(KINDS))
@pytest.mark.parametrize("family", ["laplace", "gaussian"])
def test_mechanism_sample_kinds(kind, family, laplace, gaussian):
    m = laplace if family == "laplace" else gaussian
    vals = _pair_values(XD if "decimal" in kind else X)
    col = KINDS[kind](vals)
    _check_release(lambda s: m.sample(col, rng=s), m, vals)


@pytest.mark.parametrize("family", ["laplace", "gaussian"])
def test_bndp_sample_fixed_and_per_row(family, laplace, gaussian):
    m = laplace if family == "laplace" else gaussian
    vals = _pair_values()
    col = KINDS["longdouble"](vals)
    kw = dict(mechanism=family, epsilon=EPS, sensitivity=1.0)
    _check_release(lambda s: bndp.sample(col, lower=LO, upper=HI, rng=s, **kw), m, vals)
    n = len(vals)
    # per-row bounds (every row the same row: the same grid and law as the mechanism's)
    _check_release(lambda s: bndp.sample(col, lower=np.full(n, LO), upper=np.full(n, HI),
                                         rng=s, **kw), m, vals)


def test_scalars(laplace):
    p = laplace.exact_plan
    for v in (X, X2):
        for x in (_ld(v), Decimal(v.numerator) / Decimal(v.denominator), v):
            k = oracle(v, LO, HI, Fraction(1, 16), p.n)
            got = laplace.sample(x, rng=5)
            assert got == laplace.sample(grid_point(k, LO, Fraction(1, 16)), rng=5)


def test_wide_integers():
    # bounds beyond 2^53: int64 values are not all doubles; sensitivity 2^12, gamma 2^12
    lo, hi = float(2 ** 60 - 2 ** 22), float(2 ** 60 + 2 ** 22)
    m = bndp.BoundedLaplace(epsilon=0.05, sensitivity=4096.0, lower=lo, upper=hi)
    p = m.exact_plan
    rng = np.random.default_rng(0)
    base = np.int64(2 ** 60)
    # values at cell boundaries (midpoints) +- 1, below and above the binade boundary 2^60
    mids = [int(Fraction(lo) + (j + Fraction(1, 2)) * Fraction(p.gamma))
            for j in range(p.n // 2 - 6, p.n // 2 + 6)]
    ints = np.array([x + d for x in mids for d in (-1, 0, 1)]
                    + list(base + rng.integers(-2 ** 21, 2 ** 21, 40)), dtype=np.int64)
    assert not np.array_equal(ints.astype(np.float64).astype(np.int64), ints)   # inexact
    ks = [oracle(int(v), lo, hi, Fraction(p.gamma), p.n) for v in ints]
    g = np.array([grid_point(k, lo, Fraction(p.gamma)) for k in ks])
    np.testing.assert_array_equal(m.sample(ints, rng=1), m.sample(g, rng=1))
    np.testing.assert_array_equal(m.sample(ints.astype(np.uint64), rng=1), m.sample(g, rng=1))
    np.testing.assert_array_equal(m.sample([int(v) for v in ints], rng=1), m.sample(g, rng=1))
    s = pd.Series(ints)
    np.testing.assert_array_equal(m.sample(s, rng=1).to_numpy(), m.sample(g, rng=1))
    s2 = pd.Series(pd.array(list(ints) + [None], dtype="Int64"))
    out = m.sample(s2, rng=1, nulls="keep")
    np.testing.assert_array_equal(out.to_numpy(dtype=float, na_value=np.nan)[:-1],
                                  m.sample(g, rng=1))
    np.testing.assert_array_equal(np.asarray(m.sample(pa.array(ints), rng=1)),
                                  m.sample(g, rng=1))


def test_doubles_keep_their_path(laplace):
    a = np.linspace(LO, HI, 101)
    assert type(as_values(a, "value")) is np.ndarray
    assert type(as_values(a.astype(np.int64), "value")) is np.ndarray   # below 2^53: exact
    assert type(as_values(np.array([2 ** 60], dtype=np.int64), "value")) is WideValues
    assert type(as_values([1, 2, 3], "value")) is np.ndarray
    assert type(as_values([1, 2 ** 60], "value")) is WideValues


def test_refusals_unchanged():
    with pytest.raises(TypeError, match="real numbers"):
        as_values(np.array(["a"], dtype=object), "value")
    with pytest.raises(TypeError, match="bool"):
        as_values([True, 2 ** 60], "value")
    with pytest.raises(TypeError):
        as_values(np.array([None, Decimal(1)], dtype=object), "value")


# frames: privatize on pandas, Polars and Arrow (the path of Spark and Dask partitions too)
def _decimal_column(vals):
    return pa.array([Decimal(v.numerator) / Decimal(v.denominator) for v in vals],
                    type=pa.decimal128(38, 20))


@pytest.mark.parametrize("family", ["laplace", "gaussian"])
def test_privatize_frames(family, laplace, gaussian):
    m = laplace if family == "laplace" else gaussian
    vals = _pair_values(XD)
    spec = {"x": dict(mechanism=family, epsilon=EPS, sensitivity=1.0, lower=LO, upper=HI)}
    table = pa.table({"x": _decimal_column(vals)})

    def ref(seed, g, sp=spec, extra=None):
        t = pa.table({"x": pa.array(g)})
        if extra is not None:
            t = extra(t)
        return bndp.privatize(t, sp, rng=seed)["x"].to_numpy()

    _check_release(lambda s: bndp.privatize(table, spec, rng=s)["x"].to_numpy(), m, vals,
                   reference=ref)
    pdf = table.to_pandas(types_mapper=pd.ArrowDtype)
    _check_release(lambda s: bndp.privatize(pdf, spec, rng=s)["x"].to_numpy(), m, vals,
                   reference=ref)
    pl = pytest.importorskip("polars")
    plf = pl.from_arrow(table)
    _check_release(lambda s: bndp.privatize(plf, spec, rng=s)["x"].to_numpy(), m, vals,
                   reference=ref)
    ints = pa.table({"x": pa.array([2 ** 60 + 1], type=pa.int64())})
    out = bndp.privatize(ints, {"x": dict(mechanism=family, epsilon=EPS, sensitivity=1.0,
                                          lower=LO, upper=HI)}, rng=1)["x"].to_numpy()
    assert out[0] >= LO and out[0] <= HI
    # per-row bounds from columns
    n = len(vals)
    spec_r = {"x": dict(mechanism=family, epsilon=EPS, sensitivity=1.0, lower="lo",
                        upper="hi")}
    t2 = table.append_column("lo", pa.array(np.full(n, LO))).append_column(
        "hi", pa.array(np.full(n, HI)))
    def bounds(t):
        return t.append_column("lo", pa.array(np.full(n, LO))).append_column(
            "hi", pa.array(np.full(n, HI)))

    _check_release(lambda s: bndp.privatize(t2, spec_r, rng=s)["x"].to_numpy(), m, vals,
                   reference=lambda s, g: ref(s, g, spec_r, bounds))


def test_spark_and_dask_partition_functions(laplace, monkeypatch):
    """The per-partition functions of bndp.spark and bndp.dask on decimal and wide int64
    columns (their own generator seeded here; the engines give each partition OS
    entropy)."""
    from bndp import _release
    from bndp.integrations import dask as bdask
    from bndp.integrations import spark as bspark
    vals = _pair_values(XD)
    spec = {"x": dict(mechanism="laplace", epsilon=EPS, sensitivity=1.0, lower=LO,
                      upper=HI)}
    plans = _release.parse_spec(spec)
    rb = pa.RecordBatch.from_arrays([_decimal_column(vals)], names=["x"])

    def seeded(seed):
        monkeypatch.setattr(bspark, "default_rng", lambda _=None: np.random.default_rng(seed))
        monkeypatch.setattr(bdask, "default_rng", lambda _=None: np.random.default_rng(seed))

    def spark_release(seed):
        seeded(seed)
        out = list(bspark.partition_releaser(plans)(iter([rb])))
        return pa.Table.from_batches(out)["x"].to_numpy()

    _check_release(spark_release, laplace, vals)

    def dask_release(seed):
        seeded(seed)
        pdf = pa.table({"x": _decimal_column(vals)}).to_pandas(types_mapper=pd.ArrowDtype)
        return bdask._privatize_partition(pdf, plans, {"x": "float64"}, "t")["x"].to_numpy()

    _check_release(dask_release, laplace, vals)


# the command line: CSV text and Parquet decimals
def _cli(args, cwd):
    return subprocess.run([sys.executable, "-m", "bndp", *args], cwd=cwd,
                          capture_output=True, text=True)


@pytest.mark.parametrize("fmt", ["csv", "parquet"])
def test_cli_exact_cells(fmt, laplace, tmp_path):
    import pyarrow.parquet as pq
    vals = _pair_values(XD)
    texts = [format(Decimal(v.numerator) / Decimal(v.denominator), "f") for v in vals]
    ks, g = _oracle_points(laplace, vals)
    if fmt == "csv":
        (tmp_path / "in.csv").write_text("x\n" + "\n".join(texts) + "\n")
        (tmp_path / "grid.csv").write_text("x\n" + "\n".join(repr(float(x)) for x in g) + "\n")
    else:
        pq.write_table(pa.table({"x": _decimal_column(vals)}), tmp_path / "in.parquet")
        pq.write_table(pa.table({"x": pa.array(g)}), tmp_path / "grid.parquet")
    outs = []
    for name in ("in", "grid"):
        r = _cli(["privatize", f"{name}.{fmt}", "-o", f"out_{name}.{fmt}", "--column", "x",
                  "--mechanism", "laplace", "--epsilon", "1", "--sensitivity", "1",
                  "--lower", str(LO), "--upper", str(HI), "--seed", "11", "--quiet"],
                 tmp_path)
        assert r.returncode == 0, r.stderr
        if fmt == "csv":
            outs.append(np.loadtxt(tmp_path / f"out_{name}.csv", skiprows=1))
        else:
            outs.append(pq.read_table(tmp_path / f"out_{name}.parquet")["x"].to_numpy())
    np.testing.assert_array_equal(outs[0], outs[1])


def test_torch_integer_tensor():
    torch = pytest.importorskip("torch")
    lo, hi = float(2 ** 60 - 2 ** 22), float(2 ** 60 + 2 ** 22)
    m = bndp.BoundedLaplace(epsilon=0.05, sensitivity=4096.0, lower=lo, upper=hi)
    p = m.exact_plan
    mids = [int(Fraction(lo) + (j + Fraction(1, 2)) * Fraction(p.gamma)) - 1
            for j in range(p.n // 2 - 4, p.n // 2 + 4)]
    t = torch.tensor(mids, dtype=torch.int64)
    ks = [oracle(v, lo, hi, Fraction(p.gamma), p.n) for v in mids]
    g = np.array([grid_point(k, lo, Fraction(p.gamma)) for k in ks])
    np.testing.assert_array_equal(m.sample(t, rng=2).numpy(), m.sample(g, rng=2))


# property: random binade-straddling pairs, dk from 1 to 64, both families
@pytest.mark.parametrize("family", ["laplace", "gaussian"])
def test_property_binade_straddling_pairs(family):
    rng = np.random.default_rng(20261126 + (family == "gaussian"))
    dks = set()
    trial = 0
    while trial < 40:
        num = 1 if rng.random() < 0.25 else int(rng.integers(1, 65))   # powers of 2: dk 1
        sens = float(Fraction(num, 2 ** int(rng.integers(2, 7))))
        eps = float(rng.choice([0.002, 0.005, 0.02, 0.05, 0.1, 0.5, 1.0, 2.0]))
        B = 2 ** int(rng.integers(7, 11))          # the binade boundary the pair straddles
        lo = float(B - int(rng.integers(1, 4)) * sens - 0.375)
        hi = float(B + 400 * sens + 4)
        m = (bndp.BoundedLaplace if family == "laplace" else bndp.BoundedGaussian)(
            epsilon=eps, sensitivity=sens, lower=lo, upper=hi)
        p = m.exact_plan
        g_ = Fraction(p.gamma)
        if p.dk > 64 or Fraction(sens) / g_ != p.dk:
            continue
        # x below a cell boundary under B, y = x + sens below one above B, by more than
        # half a unit in the last place under B and less than half of one above it: their
        # nearest doubles fall into cells dk + 1 apart
        t = (Fraction(B) - Fraction(lo)) / g_
        j_lo = math.floor(t - Fraction(1, 2) - p.dk) + 1
        j_hi = math.ceil(t - Fraction(1, 2)) - 1
        if j_lo > j_hi:              # t - 1/2 an integer with dk = 1: no such cell
            continue
        j = int(rng.integers(j_lo, j_hi + 1))
        off = (1 + Fraction(int(rng.integers(1, 100)), 100)) * Fraction(2) ** -54 * B
        x = Fraction(lo) + (j + Fraction(1, 2)) * g_ - off
        y = x + Fraction(sens)
        assert x < B < y
        kd = p.index(np.array([float(x), float(y)]))
        assert kd[1] - kd[0] == p.dk + 1          # what rounding to a double first gives
        ks = [oracle(v, lo, hi, g_, p.n) for v in (x, y)]
        assert ks[1] - ks[0] == p.dk
        vals = [x] * 50 + [y] * 50
        col = np.array([Decimal(v.numerator) / Decimal(v.denominator) for v in vals],
                       dtype=object)
        q = m._true_values(col)
        assert list(p.index(q)) == [ks[0]] * 50 + [ks[1]] * 50
        g = np.array([grid_point(k, lo, g_) for k in ks]).repeat(50)
        np.testing.assert_array_equal(m.sample(col, rng=trial), m.sample(g, rng=trial))
        dks.add(p.dk)
        trial += 1
    assert min(dks) <= 2 and max(dks) >= 32


def _span_oracle(v, gamma, kl, span_lo, span_hi, gap_hi):
    """Nearest grid point (ties up) of an allowed exact value, clipped to its span."""
    s = sum(1 for b in gap_hi if v >= Fraction(float(b)))
    k = math.floor(Fraction(v) / Fraction(gamma) + Fraction(1, 2)) - kl
    return min(max(k, int(span_lo[s])), int(span_hi[s]))


@pytest.mark.parametrize("kind", ["half-line", "gaps"])
def test_constrained_plans(kind):
    if kind == "half-line":
        m = bndp.BoundedLaplace(epsilon=EPS, sensitivity=1.0, lower=LO, upper=np.inf)
    else:
        m = bndp.ConstrainedLaplace(epsilon=EPS, sensitivity=1.0, lower=0.0, upper=200.0,
                                    forbidden=[(100.0, 120.0)])
    p = m.exact_plan
    vals = _pair_values(XD, copies=60)
    ks = [_span_oracle(v, p.gamma, p.kl, p.span_lo, p.span_hi, p.gap_hi) for v in vals]
    assert ks[-1] - ks[0] <= p.dk + 2      # (the pair: index 0 and 3 * copies)
    c = len(vals) // 6
    assert ks[3 * c] - ks[0] == 16         # exactly dk apart, where doubles land 17 apart
    assert (p.index(np.array([float(vals[0]), float(vals[3 * c])])) @ [-1, 1]) == 17
    g = np.array([math.ldexp(p.kl + k, p.exponent) for k in ks])
    col = KINDS["decimal_objects"](vals)
    np.testing.assert_array_equal(m.sample(col, rng=4), m.sample(g, rng=4))


def test_multivariate_product_law():
    m = bndp.BoundedGaussian(epsilon=EPS, sensitivity=1.0, lower=[LO, 0.0],
                             upper=[HI, 100.0])
    p = m.exact_plan
    assert p.gamma == 2.0 ** -7
    # 5e-15 below the cell boundary 63.5 + 1/256 of the grid 2^-7 Z, and 1 above that
    vals = _pair_values(Fraction("63.503906249999995"), copies=40)
    kd = p.coords[0].index(np.array([float(vals[0]), float(vals[-1])]))
    assert kd[1] - kd[0] == 129 + 16           # doubles: one step too far (dk = 128)
    rows = [[v, Fraction(50)] for v in vals]
    ks = []
    for r in rows:
        kr = []
        for c, cp in enumerate(p.coords):
            k = math.floor(r[c] / Fraction(cp.gamma) + Fraction(1, 2))
            kr.append(min(max(k, cp.kl), cp.kl + cp.n))
        ks.append(kr)
    g = np.ldexp(np.array(ks, dtype=np.float64), p.exponent)
    col = np.array([[Decimal(v.numerator) / Decimal(v.denominator), Decimal(50)]
                    for v in vals], dtype=object)
    np.testing.assert_array_equal(m.sample(col, rng=6), m.sample(g, rng=6))
