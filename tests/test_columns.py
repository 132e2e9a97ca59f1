"""pandas / Arrow columns in and out of bndp's samplers, nulls=, and workers=."""

import numpy as np
import pytest

import bndp
from bndp import _parallel
from bndp._core import fill as _fill

pd = pytest.importorskip("pandas")
pa = pytest.importorskip("pyarrow")

LAP = bndp.BoundedLaplace(1.0, sensitivity=1.0, lower=0.0, upper=120.0, mode="continuous")
GAU = bndp.BoundedGaussian(1.0, sensitivity=1.0, lower=0.0, upper=120.0, mode="continuous")


# ---------------------------------------------------------------------------------------
# pandas
# ---------------------------------------------------------------------------------------
@pytest.mark.parametrize("mech", [LAP, GAU], ids=["laplace", "gaussian"])
def test_series_keeps_index_and_name_and_matches_numpy(mech):
    s = pd.Series([0.0, 30.0, 60.0, 120.0], index=["w", "x", "y", "z"], name="age")
    out = mech.sample(s, rng=7)
    assert isinstance(out, pd.Series)
    assert list(out.index) == ["w", "x", "y", "z"]
    assert out.name == "age"
    assert out.dtype == np.float64
    np.testing.assert_array_equal(out.to_numpy(), mech.sample(s.to_numpy(), rng=7))
    assert ((out >= 0) & (out <= 120)).all()


def test_series_integer_dtype_released_as_float():
    s = pd.Series(np.arange(10, dtype=np.int32), name="n")
    out = LAP.sample(s, rng=1)
    assert out.dtype == np.float64
    np.testing.assert_array_equal(out.to_numpy(), LAP.sample(np.arange(10.0), rng=1))


def test_series_nulls_raise_by_default_naming_the_label():
    s = pd.Series([1.0, np.nan, 3.0], index=[10, 20, 30])
    with pytest.raises(ValueError, match=r"1 missing value.*position 1 \(index label 20\).*nulls='keep'"):
        LAP.sample(s, rng=0)
    with pytest.raises(ValueError, match="missing"):
        bndp.sample(s, mechanism="laplace", epsilon=1, sensitivity=1, lower=0, upper=120)


def test_series_nulls_keep_passes_them_through_untouched():
    s = pd.Series([1.0, np.nan, 3.0, None, 5.0], index=list("abcde"), name="v")
    out = LAP.sample(s, rng=3, nulls="keep")
    assert list(out.index) == list("abcde") and out.name == "v"
    assert out.isna().tolist() == [False, True, False, True, False]
    # the present entries get exactly the draws of the compacted array
    np.testing.assert_array_equal(out.dropna().to_numpy(), LAP.sample([1.0, 3.0, 5.0], rng=3))


def test_nullable_extension_dtype_keeps_pd_NA():
    s = pd.Series([1, None, 3], dtype="Int64")
    out = GAU.sample(s, rng=0, nulls="keep")
    assert str(out.dtype) == "Float64"
    assert out.isna().tolist() == [False, True, False]
    assert out[1] is pd.NA


@pytest.mark.parametrize("bad", [pd.Series(["a", "b"]), pd.Series([True, False])])
def test_non_numeric_series_is_a_type_error(bad):
    with pytest.raises(TypeError, match="real numbers"):
        LAP.sample(bad)


def test_size_with_a_column_is_refused():
    with pytest.raises(ValueError, match="size"):
        LAP.sample(pd.Series([1.0, 2.0]), size=2)


def test_nulls_argument_is_checked():
    with pytest.raises(ValueError, match="nulls"):
        LAP.sample(pd.Series([1.0]), nulls="drop")
    with pytest.raises(ValueError, match="nulls"):
        LAP.sample(np.array([1.0]), nulls="skip")


def test_per_row_bounds_as_series_in_bndp_sample():
    v = pd.Series([5.0, 50.0, 500.0], index=[3, 1, 2], name="x")
    lo = pd.Series([0.0, 0.0, 0.0])
    hi = pd.Series([10.0, 100.0, 1000.0])
    out = bndp.sample(v, mechanism="laplace", epsilon=1, sensitivity=1, lower=lo, upper=hi,
                      rng=2)
    assert isinstance(out, pd.Series) and list(out.index) == [3, 1, 2] and out.name == "x"
    assert (out.to_numpy() >= 0).all() and (out.to_numpy() <= hi.to_numpy()).all()
    ref = bndp.sample(v.to_numpy(), mechanism="laplace", epsilon=1, sensitivity=1,
                      lower=lo.to_numpy(), upper=hi.to_numpy(), rng=2)
    np.testing.assert_array_equal(out.to_numpy(), ref)
    with pytest.raises(ValueError, match="length"):
        bndp.sample(v, mechanism="laplace", epsilon=1, sensitivity=1, lower=lo[:2], upper=hi[:2])


def test_per_row_bounds_follow_the_kept_rows():
    v = pd.Series([5.0, np.nan, 500.0])
    lo = np.zeros(3)
    hi = np.array([10.0, 100.0, 1000.0])
    out = bndp.sample(v, mechanism="laplace", epsilon=1, sensitivity=1, lower=lo, upper=hi,
                      rng=4, nulls="keep")
    ref = bndp.sample([5.0, 500.0], mechanism="laplace", epsilon=1, sensitivity=1,
                      lower=[0.0, 0.0], upper=[10.0, 1000.0], rng=4)
    np.testing.assert_array_equal(out.to_numpy()[[0, 2]], ref)
    assert np.isnan(out[1])


# ---------------------------------------------------------------------------------------
# Arrow
# ---------------------------------------------------------------------------------------
def test_arrow_array_in_arrow_array_out_with_nulls():
    a = pa.array([10, None, 30], type=pa.int64())
    with pytest.raises(ValueError, match="missing"):
        LAP.sample(a)
    out = LAP.sample(a, rng=5, nulls="keep")
    assert isinstance(out, pa.Array) and out.type == pa.float64()
    assert out.null_count == 1 and not out[1].is_valid
    np.testing.assert_array_equal(
        np.array([out[0].as_py(), out[2].as_py()]), LAP.sample([10.0, 30.0], rng=5))


def test_chunked_array_keeps_its_chunks():
    c = pa.chunked_array([[1.0, 2.0], [3.0], [None, 5.0, 6.0]])
    out = GAU.sample(c, rng=9, nulls="keep")
    assert isinstance(out, pa.ChunkedArray) and out.type == pa.float64()
    assert [len(ch) for ch in out.chunks] == [2, 1, 3]
    assert out.null_count == 1 and out.chunks[2][0].as_py() is None
    vals = np.array([x for x in out.to_pylist() if x is not None])
    np.testing.assert_array_equal(vals, GAU.sample([1.0, 2.0, 3.0, 5.0, 6.0], rng=9))


def test_arrow_nan_is_missing_and_stays_nan():
    a = pa.array([1.0, float("nan"), None])
    out = LAP.sample(a, rng=0, nulls="keep")
    assert np.isnan(out[1].as_py()) and out[2].as_py() is None and out.null_count == 1


def test_arrow_string_is_a_type_error():
    with pytest.raises(TypeError, match="real numbers"):
        LAP.sample(pa.array(["1", "2"]))


def test_numpy_nan_with_nulls_keep():
    x = np.array([[1.0, np.nan], [3.0, 4.0]])
    with pytest.raises(ValueError, match="finite"):
        LAP.sample(x)
    out = LAP.sample(x, rng=1, nulls="keep")
    assert out.shape == (2, 2) and np.isnan(out[0, 1])
    np.testing.assert_array_equal(out[~np.isnan(x)], LAP.sample([1.0, 3.0, 4.0], rng=1))


def test_multivariate_refuses_nulls_keep_with_missing_values():
    m = bndp.BoundedGaussian(1.0, sensitivity=1.0, lower=[0.0, 0.0], upper=[1.0, 1.0])
    with pytest.raises(ValueError, match="multivariate"):
        m.sample(np.array([[0.5, np.nan]]), nulls="keep")


# ---------------------------------------------------------------------------------------
# workers=
# ---------------------------------------------------------------------------------------
N_BIG = 4 * _parallel.MIN_PER_WORKER  # large enough for 4 threads


def _fill_halves(fill, vals, seed, k, n):
    kids = np.random.Generator(np.random.PCG64(seed)).spawn(k)
    out = np.empty(n)
    edges = [(n * i) // k for i in range(k + 1)]
    for i, g in enumerate(kids):
        fill(g, *vals, out[edges[i]:edges[i + 1]])
    return out


@pytest.mark.parametrize("k", [2, 3, 4])
def test_workers_blocks_are_the_spawned_children_streams(k):
    out = LAP.sample(60.0, size=N_BIG, rng=11, workers=k)
    ref = _fill_halves(_fill.bl_fill, [60.0, LAP.scale, 0.0, 120.0], 11, k, N_BIG)
    np.testing.assert_array_equal(out, ref)


def test_workers_per_row_path_splits_a_column():
    x = np.linspace(0, 120, N_BIG)
    out = GAU.sample(x, rng=12, workers=2)
    kids = np.random.Generator(np.random.PCG64(12)).spawn(2)
    h = N_BIG // 2
    for i, g in enumerate(kids):
        sl = slice(i * h, (i + 1) * h)
        ref = np.empty((1, h))
        _fill.tn_fill_rows(g, x[sl][None, :], np.full((1, h), GAU.sigma), np.zeros((1, h)),
                           np.full((1, h), 120.0), ref)
        np.testing.assert_array_equal(out[sl], ref[0])


def test_workers_per_row_path_splits_rows_of_a_matrix():
    m = bndp.BoundedGaussian(1.0, sensitivity=1.0, lower=[0.0, 0.0], upper=[1.0, 2.0])
    x = np.full((N_BIG // 2 + 2, 2), 0.5)
    a = m.sample(x, rng=5, workers=2)
    b = m.sample(x, rng=5, workers=2)
    np.testing.assert_array_equal(a, b)
    assert a.shape == x.shape
    assert (a[:, 0] <= 1).all() and (a[:, 1] <= 2).all() and (a >= 0).all()
    h = x.shape[0] // 2
    assert not np.array_equal(a[:h][:100], a[h:][:100])


def test_workers_statistics_match_the_mechanism():
    out = GAU.sample(np.full(400_000, 3.0), rng=21, workers=2)
    v = GAU.variance(3.0)
    # variance of the sample variance ~ 2 v^2 / n for a near-Gaussian law: 6 sigma is ~0.014 v
    assert abs(out.var() - v) < 0.02 * v
    assert abs(out.mean() - GAU.mean(3.0)) < 6 * np.sqrt(v / 400_000)


def test_workers_default_stream_and_all_cpus():
    out = bndp.sample(np.full(N_BIG, 1.0), mechanism="laplace", epsilon=1, sensitivity=1,
                      lower=0, upper=2, workers=-1, mode="continuous")
    assert out.shape == (N_BIG,) and ((out >= 0) & (out <= 2)).all()
    assert np.unique(out).size == N_BIG  # no block repeats another one's draws


def test_small_arrays_stay_on_one_thread():
    x = np.full(100, 60.0)
    np.testing.assert_array_equal(LAP.sample(x, rng=3, workers=4), LAP.sample(x, rng=3))


@pytest.mark.parametrize("bad,exc", [(0, ValueError), (-2, ValueError), (1.5, TypeError),
                                     (True, TypeError), ("2", TypeError)])
def test_workers_is_validated(bad, exc):
    with pytest.raises(exc, match="workers"):
        LAP.sample(np.ones(3), workers=bad)
