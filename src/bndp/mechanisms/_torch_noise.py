r"""Device-native draws of the gradient mechanisms in PyTorch (used for tensors on a GPU).

The same inverse-CDF algorithms as the compiled core (``bndp._core.sample``), written with torch
elementwise operations in float64 whatever the tensor's dtype, so that a CUDA tensor never
leaves its device:

* uniforms on the open interval: :math:`U = (k + 1/2)\,2^{-52}` with :math:`k` a 52-bit
  integer, as the core's ``_u_open`` (never 0 or 1; :math:`1-U` exact);
* standard normal: :math:`\Phi^{-1}(U)` for :math:`U < 1/2`, :math:`-\Phi^{-1}(1-U)` above
  (rectified Gaussian, stochastic sign);
* truncated normal on :math:`[a, b]` (standardised): for :math:`a \le 0 \le b` the masses
  :math:`m_L = \mathrm{erf}(-a/\sqrt2)/2`, :math:`m_R = \mathrm{erf}(b/\sqrt2)/2` (no
  cancellation), :math:`s = UZ - m_L`, :math:`Z = m_L + m_R`, and
  :math:`\sqrt2\,\mathrm{erfinv}(2s)` for :math:`|s| \le 0.425`, else the tail quantile of
  a tail mass written as a sum of non-negative terms; for an interval in the left tail
  (:math:`b < 0`) log space: :math:`\log\Phi(z) = \log\Phi(b) + \log(U + (1-U)
  e^{\log\Phi(a) - \log\Phi(b)})` (a sum of non-negative terms), inverted by :func:`ndtri_lower_log` (``ndtri`` of the
  exponential down to :math:`e^{-700}`, Newton steps on ``log_ndtr`` below); mirrored for
  :math:`a > 0`. Exact in far tails such as :math:`[-1001, -1000]`.

Randomness (``device_rng``):

* ``"bndp"`` (default): the 52-bit integers come from the bndp stream (``rng``; by default
  the cryptographically secure AES-CTR/ChaCha20 stream), drawn on the host as raw 64-bit
  words in stream order and copied to the device (8 bytes per draw; the data itself stays on
  the device). For the truncated Gaussian these are the very uniforms the compiled kernel
  consumes for the same stream, so the draws agree with the CPU path to rounding.
* ``"torch"``: torch's generator on the tensor's device (Philox on CUDA), seeded with 64
  bits drawn from the bndp stream. Faster (no transfer) but a statistical generator with a
  64-bit key: its outputs can be predicted by whoever recovers the key, unlike a
  cryptographically secure stream. Opt in only where that is acceptable.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

_RECT, _TRUNC, _SIGN = 0, 1, 2
_TWO_M52 = 2.0 ** -52
_SQRT2 = math.sqrt(2.0)
_SQRT1_2 = math.sqrt(0.5)
_LOG_SQRT_2PI = 0.5 * math.log(2.0 * math.pi)
_DEVICE_RNGS = ("bndp", "torch")


def _torch() -> Any:
    import torch

    return torch


def check_device_rng(device_rng: Any) -> str:
    if device_rng not in _DEVICE_RNGS:
        raise ValueError(f'`device_rng` must be "bndp" or "torch"; got {device_rng!r}')
    return device_rng


def open_uniform(shape: tuple[int, ...], device: Any, gen: np.random.Generator,
                 device_rng: str = "bndp") -> Any:
    """Uniforms on (0, 1), float64, ``(k + 1/2) 2^-52`` with 52-bit ``k``, on ``device``."""
    torch = _torch()
    n = math.prod(shape)
    if device_rng == "bndp":
        raw = gen.bit_generator.random_raw(n)
        k = torch.from_numpy((np.asarray(raw, dtype=np.uint64) >> np.uint64(12))
                             .astype(np.int64))
        if torch.device(device).type == "cuda":
            k = k.pin_memory().to(device, non_blocking=True)
        else:
            k = k.to(device)
    else:
        g = torch.Generator(device=device)
        g.manual_seed(int(gen.integers(0, 2 ** 63, dtype=np.int64)))
        k = torch.randint(0, 2 ** 52, (n,), generator=g, device=device, dtype=torch.int64)
    return ((k.to(torch.float64) + 0.5) * _TWO_M52).reshape(shape)


def ndtri_lower_log(logt: Any) -> Any:
    r""":math:`\Phi^{-1}(e^{\ell})` for :math:`\ell \le \log(1/2)` (float64 tensor)."""
    torch = _torch()
    far = logt < -700.0
    x = torch.special.ndtri(torch.exp(torch.clamp(logt, min=-700.0)))
    if bool(far.any()):
        lf = logt[far]
        m2 = -2.0 * lf
        y = -torch.sqrt(m2 - torch.log(m2) - 2.0 * _LOG_SQRT_2PI)  # asymptotic start
        for _ in range(6):      # Newton on log Phi(y) = lf; monotone from the left (concave)
            ly = torch.special.log_ndtr(y)
            y = y - (ly - lf) / torch.exp(-0.5 * y * y - _LOG_SQRT_2PI - ly)
        x = x.clone()
        x[far] = y
    return x


def std_normal(u: Any) -> Any:
    r""":math:`\Phi^{-1}(u)` for uniforms on (0, 1), each half from its own tail."""
    torch = _torch()
    lower = u < 0.5
    return torch.where(lower, torch.special.ndtri(u), -torch.special.ndtri(1.0 - u))


def trunc_std_quantile(u: Any, a: Any, b: Any) -> Any:
    """Quantile at ``u`` of the standard normal truncated to ``[a, b]`` (a < b; tensors)."""
    torch = _torch()
    strad = (a <= 0.0) & (b >= 0.0)
    left = b < 0.0
    # straddling rows
    mL = 0.5 * torch.erf(-a * _SQRT1_2)
    mR = 0.5 * torch.erf(b * _SQRT1_2)
    tlo = 0.5 * torch.erfc(-a * _SQRT1_2)
    thi = 0.5 * torch.erfc(b * _SQRT1_2)
    Z = mL + mR
    s = u * Z - mL
    right = s > 0.0
    t = torch.where(right, thi + (1.0 - u) * Z, tlo + u * Z)
    xt = torch.special.ndtri(torch.clamp(t, min=1e-300, max=0.5))
    xc = _SQRT2 * torch.erfinv(torch.clamp(2.0 * s, -0.85, 0.85))
    zs = torch.where(s.abs() <= 0.425, xc, torch.where(right, -xt, xt))
    # rows in one tail, mirrored to the left tail for a > 0
    aa = torch.where(left, a, -b)
    bb = torch.where(left, b, -a)
    bb = torch.minimum(bb, torch.zeros((), dtype=bb.dtype, device=bb.device))
    aa = torch.minimum(aa, bb)
    lb = torch.special.log_ndtr(bb)
    la = torch.special.log_ndtr(aa)
    # log(1 - w (1 - r)) with r = Phi(a)/Phi(b), w = 1 - U (left) or U (mirrored), written
    # as log((1 - w) + w r): a sum of non-negative terms, exact even for tiny U and r
    c = torch.where(left, u, 1.0 - u)
    w = torch.where(left, 1.0 - u, u)
    zt = ndtri_lower_log(lb + torch.logaddexp(torch.log(c), torch.log(w) + (la - lb)))
    zt = torch.where(left, zt, -zt)
    return torch.where(strad, zs, zt)


def sample_box(mech: int, theta: Any, sigma: float, lo: Any, hi: Any, gen: np.random.Generator,
               device_rng: str = "bndp") -> Any:
    """One draw per coordinate on ``theta``'s device (float64 result of the broadcast shape).

    ``mech``: 0 rectified ``clip(theta + sigma Z, lo, hi)``, 1 truncated normal on
    ``[lo, hi]``, 2 ``sign(theta + sigma Z)``. ``lo``/``hi``: float64 tensors on the same
    device, broadcasting with ``theta``.
    """
    torch = _torch()
    th = theta.to(torch.float64)
    shape = torch.broadcast_shapes(th.shape, lo.shape, hi.shape)
    th = th.expand(shape)
    u = open_uniform(tuple(shape), th.device, gen, device_rng)
    if mech == _TRUNC:
        lo_b, hi_b = lo.expand(shape), hi.expand(shape)
        inv = 1.0 / sigma
        z = trunc_std_quantile(u, (lo_b - th) * inv, (hi_b - th) * inv)
        return torch.minimum(torch.maximum(th + sigma * z, lo_b), hi_b)
    x = th + sigma * std_normal(u)
    if mech == _RECT:
        return torch.minimum(torch.maximum(x, lo.expand(shape)), hi.expand(shape))
    one = torch.ones((), dtype=torch.float64, device=th.device)
    return torch.where(x > 0.0, one, -one)
