"""Side-by-side timing: bndp's compiled per-instance RDP / FIL / samplers for the
bounded-support Gaussians versus a vectorised NumPy/SciPy implementation of the same closed
forms (log space, as one would write it without a compiled core).

Usage: python benchmarks/compare_gradients.py [d] [repeats]
Prints one line per task with both times (best of `repeats`) and the ratio.
"""

import sys
import time

import numpy as np
from scipy.special import log_ndtr, logsumexp

import bndp
from bndp.accounting import fisher_information_loss_squared, per_instance_rdp

LOG_SQRT_2PI = 0.5 * np.log(2 * np.pi)


# --- NumPy/SciPy reference (vectorised over coordinates) -------------------------------
def _log1mexp(x):
    return np.where(x > -np.log(2.0), np.log(-np.expm1(x)), np.log1p(-np.exp(x)))


def _log_diff(u, l):
    flip = l > 0
    uu, ll = np.where(flip, -l, u), np.where(flip, -u, l)
    lu = log_ndtr(uu)
    with np.errstate(divide="ignore"):
        return lu + _log1mexp(np.minimum(log_ndtr(ll) - lu, 0.0))


def _log_delta(x, s, lo, hi):
    return _log_diff((hi - x) / s, (lo - x) / s)


def np_rect(al, th, c, s, lo, hi):
    t1 = al * (al - 1) * c * c / (2 * s * s) + _log_delta(th + (1 - al) * c, s, lo, hi)
    t2 = al * log_ndtr((lo - th) / s) + (1 - al) * log_ndtr((lo - th - c) / s)
    t3 = al * log_ndtr((th - hi) / s) + (1 - al) * log_ndtr((th + c - hi) / s)
    return logsumexp(np.stack([t1, t2, t3]), axis=0) / (al - 1)


def np_trunc(al, th, c, s, lo, hi):
    l0 = _log_delta(th, s, lo, hi)
    return (al * c * c / (2 * s * s) + _log_delta(th + c, s, lo, hi) - l0
            + (_log_delta(th + (1 - al) * c, s, lo, hi) - l0) / (al - 1))


def np_sup(f, al, th, c, s, lo, hi):
    v = np.maximum(f(al, th, c, s, lo, hi), f(al, th + c, -c, s, lo, hi))
    v = np.maximum(v, f(al, th, -c, s, lo, hi))
    return float(np.sum(np.maximum(v, f(al, th - c, c, s, lo, hi))))


def np_fil_rect(th, s, lo, hi):
    za, zb = (lo - th) / s, (hi - th) / s
    lpa, lpb = -0.5 * za * za - LOG_SQRT_2PI, -0.5 * zb * zb - LOG_SQRT_2PI
    e2 = (np.exp(2 * lpa - log_ndtr(za)) + np.exp(2 * lpb - log_ndtr(-zb))
          + np.exp(_log_diff(zb, za)) + za * np.exp(lpa) - zb * np.exp(lpb))
    return np.clip(e2, 0, 1) / s ** 2


def np_fil_trunc(th, s, lo, hi):
    za, zb = (lo - th) / s, (hi - th) / s
    lz = _log_diff(zb, za)
    ra = np.exp(-0.5 * za * za - LOG_SQRT_2PI - lz)
    rb = np.exp(-0.5 * zb * zb - LOG_SQRT_2PI - lz)
    return np.clip(1 - (rb - ra) ** 2 + (za * ra - zb * rb), 0, 1) / s ** 2


def best(f, repeats):
    t = []
    for _ in range(repeats):
        t0 = time.perf_counter()
        f()
        t.append(time.perf_counter() - t0)
    return min(t)


def main(d=1_000_000, repeats=3):
    rng = np.random.default_rng(0)
    sigma, a, C, alpha = 1.0, 1.0, 1.0, 2.0
    settings = {
        # Figure-1 scale: S = [-1, 1], sigma = C = 1, theta spread over the support and tails
        "fig1 (theta~N(0,2^2), S=[-1,1], sigma=C=1)": (rng.normal(0, 2, d), 1.0, 1.0, 1.0),
        # DP-SGD scale of the paper's CIFAR-10 grid: C = 1e-3, sigma = 1 (multiplier 1e3), a = 4
        "dpsgd (theta~N(0,3^2), S=[-4,4], sigma=1, C=1e-3)": (rng.normal(0, 3, d), 1.0, 4.0, 1e-3),
    }
    print(f"d = {d}, alpha = {alpha}, best of {repeats}; machine shared, numbers indicative")
    for name, (th, sigma, a, C) in settings.items():
        print(f"\n[{name}]")
        for label, cls, npf, npfil in (("rectified", bndp.RectifiedGaussian, np_rect, np_fil_rect),
                                       ("truncated", bndp.TruncatedGaussian, np_trunc, np_fil_trunc)):
            m = cls(sigma, -a, a)
            # same numbers from both implementations
            ref = np_sup(npf, alpha, th[:1000], C, sigma, -a, a)
            got = per_instance_rdp(m, th[:1000], C, alpha, "sup")
            assert abs(ref - got) <= 1e-9 * max(1.0, abs(ref)), (ref, got)
            t_np = best(lambda: np_sup(npf, alpha, th, C, sigma, -a, a), repeats)
            t_bn = best(lambda: per_instance_rdp(m, th, C, alpha, "sup"), repeats)
            f_np = best(lambda: npfil(th, sigma, -a, a), repeats)
            f_bn = best(lambda: fisher_information_loss_squared(m, th), repeats)
            print(f"  {label:9s} RDP sup : numpy {t_np:7.3f} s  bndp {t_bn:7.3f} s  ratio {t_np / t_bn:6.1f}x")
            print(f"  {label:9s} FIL     : numpy {f_np:7.3f} s  bndp {f_bn:7.3f} s  ratio {f_np / f_bn:6.1f}x")
            print(f"  {label:9s} RDP+FIL : numpy {t_np + f_np:7.3f} s  bndp {t_bn + f_bn:7.3f} s  "
                  f"ratio {(t_np + f_np) / (t_bn + f_bn):6.1f}x")
    n = 10 * d
    th = rng.normal(0, 2, n)
    g = np.random.default_rng(1)
    t_np = best(lambda: g.normal(th, 1.0), repeats)
    t_npc = best(lambda: np.clip(g.normal(th, 1.0), -1.0, 1.0), repeats)
    r = bndp.RectifiedGaussian(1.0, lower=-1.0, upper=1.0)
    t_r = best(lambda: r.sample(th, rng=g), repeats)
    print(f"\n[sampling {n} coordinates]")
    print(f"  numpy normal(theta, 1)          {t_np:7.3f} s")
    print(f"  numpy clip(normal(theta, 1))    {t_npc:7.3f} s")
    print(f"  bndp RectifiedGaussian.sample   {t_r:7.3f} s   bndp / numpy normal = {t_r / t_np:5.2f}")


if __name__ == "__main__":
    args = [int(float(v)) for v in sys.argv[1:3]]
    main(*args)
