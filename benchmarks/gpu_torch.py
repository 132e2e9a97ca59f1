"""GPU benchmark (not an asv benchmark): per-row bounded noise drawn on a CUDA device.

Compares, on float64 and float32 tensors of 10**6..10**8 values with per-row locations,

* bndp's device path (``TruncatedGaussian.sample`` on a CUDA tensor; uniforms from the bndp
  stream, ``device_rng="bndp"``, or from torch's Philox generator, ``device_rng="torch"``);
* torch's ``nn.init.trunc_normal_`` (scalar bounds and scalar mean only, so it draws a
  different law: a baseline for raw speed, not a replacement);
* a naive per-row inverse CDF in torch (``Phi^-1(Phi(a) + U (Phi(b) - Phi(a)))`` in linear
  space, which is inexact in the tails: reported with its worst-case error against bndp's).

Usage: python benchmarks/gpu_torch.py [--sizes 1e6 1e7 1e8] [--repeat 5]
Prints one line per case (G draws/s) and exits 0 with a message when no CUDA device is present.
"""

from __future__ import annotations


def main(argv=None) -> int:
    import argparse
    import time

    ap = argparse.ArgumentParser(description="bndp device-noise benchmark")
    ap.add_argument("--sizes", type=float, nargs="+", default=[1e6, 1e7, 1e8])
    ap.add_argument("--repeat", type=int, default=5)
    args = ap.parse_args(argv)
    try:
        import torch
    except ImportError:
        print("torch is not installed: nothing to benchmark")
        return 0
    if not torch.cuda.is_available():
        print("no CUDA device: the GPU benchmark is skipped")
        return 0
    import bndp

    dev = torch.device("cuda")
    m = bndp.TruncatedGaussian(1.0, lower=-1.0, upper=1.0)

    def timed(fn):
        fn()
        torch.cuda.synchronize()
        best = float("inf")
        for _ in range(args.repeat):
            t0 = time.perf_counter()
            fn()
            torch.cuda.synchronize()
            best = min(best, time.perf_counter() - t0)
        return best

    def naive(theta):
        a = (-1.0 - theta)
        b = (1.0 - theta)
        u = torch.rand(theta.shape, device=theta.device, dtype=theta.dtype)
        pa, pb = torch.special.ndtr(a), torch.special.ndtr(b)
        return (theta + torch.special.ndtri(pa + u * (pb - pa))).clamp(-1.0, 1.0)

    print(f"device: {torch.cuda.get_device_name(dev)}, torch {torch.__version__}")
    for n in (int(s) for s in args.sizes):
        for dtype in (torch.float64, torch.float32):
            theta = torch.randn(n, device=dev, dtype=dtype) * 3.0
            out = torch.empty_like(theta)
            cases = {
                "bndp device_rng=bndp": lambda: m.sample(theta, rng=1),
                "bndp device_rng=torch": lambda: m.sample(theta, rng=1, device_rng="torch"),
                "torch trunc_normal_ (scalar)": lambda: torch.nn.init.trunc_normal_(
                    out, 0.0, 1.0, -1.0, 1.0),
                "naive per-row inverse CDF": lambda: naive(theta),
            }
            for name, fn in cases.items():
                t = timed(fn)
                print(f"n={n:>11,d} {str(dtype):14s} {name:30s} {n / t / 1e9:8.3f} G draws/s")
            far = torch.tensor([-1001.0, -40.0, 40.0, 1001.0], device=dev, dtype=torch.float64)
            far = far.repeat(max(1, n // 4 // 1000))
            ok = m.sample(far, rng=2)
            bad = naive(far)
            print(f"  tails: bndp finite {bool(torch.isfinite(ok).all())}, naive NaN fraction "
                  f"{float(torch.isnan(bad).double().mean()):.3f} (theta = +-40, +-1001)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
