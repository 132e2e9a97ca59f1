"""Tensors in, tensors out (PyTorch and the array API) for every mechanism's ``sample``, and
the device-native draws of the gradient mechanisms (run here on the CPU; on CUDA when a GPU
is present)."""

import math
import os
import subprocess
import sys

import numpy as np
import pytest
from scipy import stats

import bndp

torch = pytest.importorskip("torch")

from bndp.mechanisms import _torch_noise  # noqa: E402

from .conftest import bndp_import_root  # noqa: E402

CUDA = torch.cuda.is_available()


def test_import_bndp_does_not_load_torch():
    code = ("import sys, bndp\n"
            "bad = [m for m in ('torch', 'opacus', 'array_api_strict') if m in sys.modules]\n"
            "assert not bad, bad\n")
    env = dict(os.environ, PYTHONPATH=bndp_import_root())
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env)
    assert r.returncode == 0, r.stderr


# every mechanism with a sample(value, rng=...) method; the release mechanisms whose
# law is tested by KS here are built with mode="continuous" explicitly
MECHS = {
    "bounded_laplace": lambda: bndp.BoundedLaplace(1.0, sensitivity=1.0, lower=0.0, upper=10.0,
                                                   mode="continuous"),
    "bounded_gaussian": lambda: bndp.BoundedGaussian(1.0, sensitivity=1.0, lower=0.0, upper=10.0,
                                                     mode="continuous"),
    "constrained_laplace": lambda: bndp.ConstrainedLaplace(1.0, sensitivity=1.0,
                                                           forbidden=[(4.0, 5.0)],
                                                           lower=0.0, upper=10.0),
    "laplace": lambda: bndp.Laplace(1.0, sensitivity=1.0),
    "gaussian": lambda: bndp.Gaussian(1.0, delta=1e-5, sensitivity=1.0),
    "rectified": lambda: bndp.RectifiedGaussian(1.0, lower=-1.0, upper=1.0),
    "truncated": lambda: bndp.TruncatedGaussian(1.0, lower=-1.0, upper=1.0),
    "sign": lambda: bndp.StochasticSign(1.0),
}
VALUES = np.array([[0.5, 2.0, 3.0, 7.5], [9.0, 1.0, 6.0, 2.5], [0.0, 10.0, 5.5, 3.3]])


@pytest.mark.parametrize("name", sorted(MECHS))
def test_tensor_float64_in_out_equals_numpy_path(name):
    m = MECHS[name]()
    ref = m.sample(VALUES, rng=7)
    t = torch.tensor(VALUES, dtype=torch.float64)
    out = m.sample(t, rng=7)
    assert isinstance(out, torch.Tensor)
    assert out.dtype == torch.float64 and out.shape == t.shape and out.device == t.device
    np.testing.assert_array_equal(out.numpy(), ref)   # same stream, same draws


@pytest.mark.parametrize("name", sorted(MECHS))
def test_tensor_float32_and_integer_dtypes(name):
    m = MECHS[name]()
    v32 = VALUES.astype(np.float32)
    ref = m.sample(v32.astype(np.float64), rng=11)
    out = m.sample(torch.tensor(v32), rng=11)
    assert out.dtype == torch.float32 and out.shape == (3, 4)
    np.testing.assert_array_equal(out.numpy(), ref.astype(np.float32))
    ints = torch.tensor([[1, 2], [3, 4]], dtype=torch.int32)
    out_i = m.sample(ints, rng=3)
    assert out_i.dtype == torch.float64 and out_i.shape == (2, 2)
    np.testing.assert_array_equal(out_i.numpy(), m.sample(np.array([[1, 2], [3, 4.0]]), rng=3))


@pytest.mark.parametrize("name", ["bounded_laplace", "truncated", "laplace"])
def test_tensor_scalar_grad_and_bad_dtypes(name):
    m = MECHS[name]()
    out = m.sample(torch.tensor(2.0, dtype=torch.float64, requires_grad=True), rng=1)
    assert isinstance(out, torch.Tensor) and out.shape == () and not out.requires_grad
    assert out.item() == m.sample(2.0, rng=1)
    with pytest.raises(TypeError, match="value"):
        m.sample(torch.tensor([1.0 + 1j]), rng=1)
    with pytest.raises(TypeError, match="value"):
        m.sample(torch.tensor([True]), rng=1)


def _ks(x, cdf):
    return stats.kstest(np.asarray(x, dtype=np.float64).ravel(), cdf).pvalue


@pytest.mark.parametrize("name,value", [("bounded_laplace", 2.0), ("bounded_gaussian", 9.5),
                                        ("laplace", 1.0), ("gaussian", -3.0),
                                        ("truncated", 0.5), ("truncated", 4.0)])
def test_tensor_law_ks(name, value):
    m = MECHS[name]()
    out = m.sample(torch.full((20000,), value, dtype=torch.float64), rng=2024)
    assert isinstance(out, torch.Tensor)
    p = _ks(out.numpy(), lambda x: m.cdf(x, value))
    assert p > 1e-3, p


def _atoms_ok(x, lo, hi, p_lo, p_hi):
    n = x.size
    for val, p in ((lo, p_lo), (hi, p_hi)):
        k = int(np.sum(x == val))
        assert abs(k - n * p) <= 5 * math.sqrt(n * p * (1 - p)), (val, k, n * p)


def test_tensor_law_rectified_atoms_and_sign():
    m = MECHS["rectified"]()
    x = m.sample(torch.full((40000,), 0.5, dtype=torch.float64), rng=5).numpy()
    # P(X = -1) = Phi(-1.5) = 0.0668072, P(X = 1) = Phi(-0.5) = 0.3085375
    _atoms_ok(x, -1.0, 1.0, 0.0668072, 0.3085375)
    inner = x[(x > -1) & (x < 1)]
    # interior: N(0.5, 1) restricted to (-1, 1)
    lo_c, hi_c = stats.norm.cdf(-1.5), stats.norm.cdf(0.5)
    assert _ks(inner, lambda v: (stats.norm.cdf(v - 0.5) - lo_c) / (hi_c - lo_c)) > 1e-3
    s = MECHS["sign"]().sample(torch.full((40000,), 0.3, dtype=torch.float64), rng=6).numpy()
    assert set(np.unique(s)) == {-1.0, 1.0}
    _atoms_ok(s, 1.0, -1.0, 0.6179114, 0.3820886)   # Phi(0.3), Phi(-0.3)


def test_tensor_nulls_keep_and_per_row_bounds():
    m = MECHS["bounded_laplace"]()
    t = torch.tensor([1.0, float("nan"), 3.0], dtype=torch.float32)
    out = m.sample(t, rng=4, nulls="keep")
    assert out.dtype == torch.float32 and torch.isnan(out[1]) and not torch.isnan(out[0])
    with pytest.raises(ValueError, match="missing"):
        m.sample(t, rng=4)
    v = np.array([1.0, 5.0, 8.0])
    lo, hi = np.array([0.0, 2.0, 4.0]), np.array([3.0, 9.0, 12.0])
    ref = bndp.sample(v, mechanism="laplace", epsilon=1.0, sensitivity=1.0, lower=lo, upper=hi,
                      rng=8)
    out = bndp.sample(torch.tensor(v), mechanism="laplace", epsilon=1.0, sensitivity=1.0,
                      lower=torch.tensor(lo), upper=torch.tensor(hi), rng=8)
    assert isinstance(out, torch.Tensor)
    np.testing.assert_array_equal(out.numpy(), ref)


def test_gradient_mechanisms_tensor_nulls_and_device_rng_on_the_cpu():
    # a CPU tensor takes the host path of the column adapter: NaN are missing values as in
    # NumPy, and device_rng has no effect there
    from bndp._columns import _arrays

    theta = np.array([0.2, np.nan, -0.4, 3.0])
    t = torch.tensor(theta, dtype=torch.float32)
    assert not _arrays.on_device(t)
    for mech in (bndp.TruncatedGaussian(0.7, lower=-1.0, upper=1.0), bndp.StochasticSign(1.0)):
        out = mech.sample(t, rng=3, nulls="keep", device_rng="torch")
        assert isinstance(out, torch.Tensor) and out.dtype == torch.float32
        ref = mech.sample(theta.astype(np.float32).astype(np.float64), rng=3, nulls="keep")
        np.testing.assert_array_equal(out.numpy(), ref.astype(np.float32))
        assert np.isnan(ref[1]) and not np.isnan(ref[[0, 2, 3]]).any()
        with pytest.raises(ValueError, match="`value` has 1 missing value"):
            mech.sample(t, rng=3)


def test_array_api_strict_arrays():
    xp = pytest.importorskip("array_api_strict")
    for name in ("bounded_laplace", "truncated", "constrained_laplace"):
        m = MECHS[name]()
        a = xp.asarray(VALUES, dtype=xp.float32)
        out = m.sample(a, rng=9)
        assert type(out) is type(a) and out.dtype == xp.float32 and out.shape == a.shape
        assert out.device == a.device
        ref = m.sample(VALUES.astype(np.float32).astype(np.float64), rng=9)
        np.testing.assert_array_equal(np.from_dlpack(out), ref.astype(np.float32))


# ---------------------------------------------------------------------------------------
# Device-native path (bndp.mechanisms._torch_noise), exercised on CPU tensors
# ---------------------------------------------------------------------------------------

THETA_WIDE = np.concatenate([np.random.default_rng(5).normal(0.0, 3.0, 20000),
                             np.random.default_rng(6).uniform(-2000.0, 2000.0, 2000),
                             [-1001.0, 1001.0, 1e5, -1e5, -1.0, 1.0, 0.0]])


@pytest.mark.parametrize("lo,hi,sigma", [(-1.0, 1.0, 0.7), (0.5, 0.6, 1.0), (-3.0, -2.0, 0.1)])
def test_device_truncated_matches_compiled_kernel(lo, hi, sigma):
    # device_rng="bndp" consumes the stream exactly as the compiled kernel does: the draws
    # agree to the rounding of loc + scale * z
    m = bndp.TruncatedGaussian(sigma, lower=lo, upper=hi)
    a = m.sample(THETA_WIDE, rng=np.random.default_rng(9))
    b = m._device_sample(torch.from_numpy(THETA_WIDE), rng=np.random.default_rng(9)).numpy()
    assert ((b >= lo) & (b <= hi)).all()
    tol = 1e-13 * (1.0 + np.abs(THETA_WIDE))
    assert (np.abs(a - b) <= tol).all(), np.max(np.abs(a - b) / tol)


@pytest.mark.parametrize("theta", [0.0, 0.8, 3.0, -40.0, 1000.5])
@pytest.mark.parametrize("device_rng", ["bndp", "torch"])
def test_device_truncated_law_ks(theta, device_rng):
    m = bndp.TruncatedGaussian(1.0, lower=-1.0, upper=1.0)
    x = m._device_sample(torch.full((20000,), theta, dtype=torch.float64), rng=31,
                         device_rng=device_rng).numpy()
    assert _ks(x, lambda v: m.cdf(v, theta)) > 1e-3


@pytest.mark.parametrize("device_rng", ["bndp", "torch"])
def test_device_rectified_and_sign_law(device_rng):
    m = bndp.RectifiedGaussian(1.0, lower=-1.0, upper=1.0)
    x = m._device_sample(torch.full((40000,), 0.5, dtype=torch.float64), rng=12,
                         device_rng=device_rng).numpy()
    _atoms_ok(x, -1.0, 1.0, 0.0668072, 0.3085375)
    s = bndp.StochasticSign(1.0)._device_sample(torch.full((40000,), 0.3), rng=13,
                                                device_rng=device_rng)
    assert s.dtype == torch.float32
    _atoms_ok(s.numpy().astype(np.float64), 1.0, -1.0, 0.6179114, 0.3820886)
    g = bndp.RectifiedGaussian(2.0, lower=-1e9, upper=1e9)     # effectively the Gaussian
    z = g._device_sample(torch.zeros(20000, dtype=torch.float64), rng=14,
                         device_rng=device_rng).numpy()
    assert _ks(z / 2.0, stats.norm.cdf) > 1e-3


def test_device_float32_stays_in_rounded_support_and_errors():
    m = bndp.TruncatedGaussian(0.3, lower=-0.1, upper=0.1)
    out = m._device_sample(torch.linspace(-50, 50, 5001, dtype=torch.float32), rng=3)
    assert out.dtype == torch.float32
    assert bool(((out >= np.float32(-0.1)) & (out <= np.float32(0.1))).all())
    with pytest.raises(ValueError, match="finite"):
        m._device_sample(torch.tensor([0.0, float("inf")]), rng=1)
    with pytest.raises(ValueError, match="device_rng"):
        m._device_sample(torch.zeros(2), rng=1, device_rng="cuda")
    with pytest.raises(ValueError, match="device_rng"):
        m.sample(np.zeros(2), rng=1, device_rng="philox")
    pm = bndp.TruncatedGaussian(1.0, lower=np.zeros(3), upper=np.ones(3))
    with pytest.raises(ValueError, match="broadcast"):
        pm._device_sample(torch.zeros(4), rng=1)
    out = pm._device_sample(torch.zeros(2, 3), rng=1)
    assert out.shape == (2, 3) and bool(((out >= 0) & (out <= 1)).all())


def test_far_tail_quantiles_against_mpmath():
    mp = pytest.importorskip("mpmath")
    mp.mp.dps = 60
    u = torch.tensor([1e-12, 0.001, 0.3, 0.5, 0.9, 1 - 2.0 ** -40], dtype=torch.float64)
    for a, b in ((-1001.0, -1000.0), (1000.0, 1001.0), (-40.0, -39.5), (-0.5, 38.2)):
        z = _torch_noise.trunc_std_quantile(u, torch.full_like(u, a), torch.full_like(u, b))
        # P(X <= z) = u, as the lower mass (b <= 0) or through the upper tail (a > 0), where
        # Phi itself rounds to 1 even at 60 digits
        up = a > 0
        F = (lambda x: -mp.ncdf(-x)) if up else mp.ncdf
        pa, pb = F(a), F(b)
        for ui, zi in zip(u.tolist(), z.tolist()):
            target = pa + mp.mpf(ui) * (pb - pa)
            # the exact quantile by bisection in mpmath (robust in far tails)
            lo_, hi_ = mp.mpf(a), mp.mpf(b)
            for _ in range(120):
                mid = (lo_ + hi_) / 2
                if F(mid) < target:
                    lo_ = mid
                else:
                    hi_ = mid
            ref = float((lo_ + hi_) / 2)
            assert abs(zi - ref) <= 4e-16 * max(1.0, abs(ref)) * 4, (a, b, ui, zi, ref)
    logt = torch.tensor([-0.7, -50.0, -700.0, -701.0, -745.0, -5000.0, -1e6],
                        dtype=torch.float64)
    x = _torch_noise.ndtri_lower_log(logt)
    for lt, xi in zip(logt.tolist(), x.tolist()):
        lo_, hi_ = mp.mpf(-2000), mp.mpf(0)
        for _ in range(200):
            mid = (lo_ + hi_) / 2
            if mp.log(mp.ncdf(mid)) < lt:
                lo_ = mid
            else:
                hi_ = mid
        ref = float((lo_ + hi_) / 2)
        assert abs(xi - ref) <= 1e-15 * max(1.0, abs(ref)) * 4 + 1e-17, (lt, xi, ref)


@pytest.mark.skipif(not CUDA, reason="needs a CUDA device")
@pytest.mark.parametrize("dtype", [torch.float32, torch.float64])
def test_cuda_draws_stay_on_device_and_match_cpu(dtype):
    m = bndp.TruncatedGaussian(0.7, lower=-1.0, upper=1.0)
    th = torch.from_numpy(THETA_WIDE).to(dtype)
    out = m.sample(th.cuda(), rng=np.random.default_rng(21))
    assert out.is_cuda and out.dtype == dtype and out.shape == th.shape
    ref = m._device_sample(th, rng=np.random.default_rng(21))
    tol = 1e-13 * (1.0 + torch.from_numpy(np.abs(THETA_WIDE)))
    if dtype == torch.float32:
        tol = tol + 2.0 ** -23 * (1.0 + torch.from_numpy(np.abs(THETA_WIDE)))
    assert bool(((out.cpu().double() - ref.double()).abs() <= tol).all())
    for mech in (bndp.RectifiedGaussian(1.0, lower=-1.0, upper=1.0), bndp.StochasticSign(1.0)):
        o = mech.sample(th.cuda(), rng=1, device_rng="torch")
        assert o.is_cuda and o.dtype == dtype
    bl = MECHS["bounded_laplace"]()
    o = bl.sample(torch.ones(5, device="cuda", dtype=dtype), rng=1)
    assert o.is_cuda and o.dtype == dtype
    # missing values: drawn on the host, returned to the device, NaN kept in place
    th_nan = th.clone()
    th_nan[3] = float("nan")
    o = m.sample(th_nan.cuda(), rng=np.random.default_rng(2), nulls="keep")
    assert o.is_cuda and o.dtype == dtype
    ref = m.sample(th_nan.double().numpy(), rng=np.random.default_rng(2), nulls="keep")
    np.testing.assert_array_equal(o.cpu().numpy(), ref.astype(o.cpu().numpy().dtype))
    with pytest.raises(ValueError, match="missing value"):
        m.sample(th_nan.cuda(), rng=1)


def test_gpu_benchmark_script_skips_cleanly_and_is_not_asv_discoverable():
    import ast
    from pathlib import Path

    path = Path(__file__).resolve().parents[1] / "benchmarks" / "gpu_torch.py"
    if not path.exists():
        pytest.skip("needs the source tree")
    tree = ast.parse(path.read_text())
    top = [n.name for n in tree.body if isinstance(n, (ast.FunctionDef, ast.ClassDef))]
    assert not [t for t in top if t.lower().startswith(("time", "track", "mem", "peakmem"))]
    if CUDA:
        pytest.skip("a CUDA device is present: the benchmark would run")
    env = dict(os.environ, PYTHONPATH=bndp_import_root())
    r = subprocess.run([sys.executable, str(path), "--sizes", "1e3"], capture_output=True,
                       text=True, env=env, timeout=300)
    assert r.returncode == 0 and "no CUDA device" in r.stdout, r.stdout + r.stderr
