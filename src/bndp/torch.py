r"""Private training in PyTorch with Opacus and bndp's bounded-support noise.

Opacus computes per-sample gradients; :class:`BoundedNoiseOptimizer` (an Opacus
``DPOptimizer``) replaces its two privacy steps:

* **clipping** in L-infinity, per sample and per coordinate to ``[-C, C]`` (Hu et al.
  [HMSCG24]_ account per coordinate; an L2 clip bound would charge every coordinate the
  whole bound), summed over the batch: :math:`\hat g = \sum_i \mathrm{clip}(g_i, -C, C)`;
* **noise** from a bndp mechanism applied to :math:`\hat g` (all parameters flattened into
  one vector): :class:`bndp.TruncatedGaussian`, :class:`bndp.RectifiedGaussian`,
  :class:`bndp.StochasticSign`, or, for the Gaussian baseline with the same clipping, a float
  ``sigma`` (:math:`\hat g + \sigma Z`). The noise is drawn on the gradients' device
  (see :mod:`bndp.mechanisms._torch_noise`) from the bndp stream ``rng`` (by default the
  cryptographically secure one).

Opacus's own accountant is kept out: its subsampled-Gaussian RDP does not describe these
mechanisms (Section 5.3 of [HMSCG24]_), so :func:`make_private` attaches none. Instead the
optimizer feeds each step's summed gradient to :attr:`BoundedNoiseOptimizer.accountant`, a
:class:`bndp.accounting.PerInstanceAccountant` (per-instance RDP of full-batch steps; FIL
under Poisson subsampling when you give it Jacobians) or, for the Gaussian baseline, the
exact Gaussian RDP :math:`T d \alpha C^2 / (2\sigma^2)`.

Scale: ``sigma`` and the support of the mechanism are on the scale of the **summed**
clipped gradient (as in the paper's tables, where sigma is given as ``noise multiplier x
C``); with ``loss_reduction="mean"`` Opacus divides the noisy sum by the expected batch size
afterwards.

Example
-------
>>> import torch, bndp
>>> from bndp.torch import make_private                   # doctest: +SKIP
>>> model, opt, loader = make_private(                     # doctest: +SKIP
...     model, torch.optim.SGD(model.parameters(), lr=0.5), loader,
...     mechanism=bndp.TruncatedGaussian(sigma=2.0, lower=-4.0, upper=4.0),
...     clip_bound=0.02)
>>> # ... train as usual: loss.backward(); opt.step(); opt.zero_grad()
>>> opt.epsilon(1e-5)                                      # doctest: +SKIP

.. [HMSCG24] S. Hu, S. Mahloujifar, V. Smith, K. Chaudhuri, C. Guo. "Privacy Amplification
   for the Gaussian Mechanism via Bounded Support". arXiv:2403.05598, 2024.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np
import torch
from opacus import GradSampleModule
from opacus.data_loader import DPDataLoader
from opacus.optimizers.optimizer import DPOptimizer, _check_processed_flag, _mark_as_processed

from ._deprecate import removed_parameter
from ._random import RNGLike, as_generator
from .accounting import DEFAULT_ALPHAS, PerInstanceAccountant, gaussian_rdp, rdp_to_dp
from .mechanisms import _torch_noise
from .mechanisms.gradients import RectifiedGaussian, StochasticSign, TruncatedGaussian

__all__ = ["BoundedNoiseOptimizer", "GaussianRDPTally", "make_private", "linf_clip_sum"]

_MECHS = (RectifiedGaussian, TruncatedGaussian, StochasticSign)


def linf_clip_sum(grad_sample: torch.Tensor, clip_bound: float) -> torch.Tensor:
    r"""Sum over the first (sample) axis of per-sample gradients clipped per coordinate to
    ``[-clip_bound, clip_bound]``.

    Parameters
    ----------
    grad_sample : torch.Tensor
        Per-sample gradients, shape (n, ...): one row per sample.
    clip_bound : float
        L-infinity clipping bound :math:`C` per coordinate.

    Returns
    -------
    torch.Tensor
        :math:`\sum_i \mathrm{clip}(g_i, -C, C)`, shape ``grad_sample.shape[1:]``, on the
        same device and of the same dtype; each coordinate lies in ``[-n C, n C]``.

    Examples
    --------
    >>> import torch
    >>> from bndp.torch import linf_clip_sum
    >>> g = torch.tensor([[0.5, -3.0], [2.0, 0.25]])
    >>> linf_clip_sum(g, 1.0)                 # [0.5 + 1.0, -1.0 + 0.25]
    tensor([ 1.5000, -0.7500])
    """
    if not clip_bound >= 0:         # clamp(min > max) would give -clip_bound everywhere
        raise ValueError(f"`clip_bound` must be >= 0; got {clip_bound!r}")
    return grad_sample.clamp(-clip_bound, clip_bound).sum(dim=0)


class GaussianRDPTally:
    r"""RDP of the L-infinity-clipped Gaussian mechanism over full-batch steps:
    :math:`T\,d\,\alpha C^2/(2\sigma^2)` (data-independent; Lemma 4.3 of [HMSCG24]_), with the
    interface of :class:`bndp.accounting.PerInstanceAccountant` used by the optimizer.

    Parameters
    ----------
    sigma : float
        Noise standard deviation per coordinate (on the scale of the summed gradient).
    sensitivity : float
        Per-coordinate sensitivity :math:`C` of the summed gradient (the clipping bound).
    alphas : array_like, optional
        RDP orders (default :data:`bndp.accounting.DEFAULT_ALPHAS`).

    Examples
    --------
    >>> import numpy as np
    >>> from bndp.torch import GaussianRDPTally
    >>> tally = GaussianRDPTally(sigma=4.0, sensitivity=1.0, alphas=[2.0, 8.0])
    >>> tally.step(np.zeros(10))              # d = 10: 10 * alpha / (2 * 16)
    array([0.625, 2.5  ])
    >>> _ = tally.step(np.zeros(10))           # a second step adds the same
    >>> tally.rdp
    array([1.25, 5.  ])
    >>> bool(tally.epsilon(1e-5) > 0)
    True
    """

    def __init__(self, sigma: float, sensitivity: float, *, alphas: Any = None) -> None:
        self.sigma = float(sigma)
        self.sensitivity = float(sensitivity)
        self.alphas = np.asarray(DEFAULT_ALPHAS if alphas is None else alphas, dtype=float)
        self.steps = 0
        self._rdp = np.zeros(self.alphas.shape)

    def step(self, summed_gradient: Any) -> np.ndarray:
        """Account one step on a summed gradient (only its size :math:`d` matters) and return
        the step's RDP at :attr:`alphas`."""
        d = int(np.asarray(summed_gradient).size)
        r = np.asarray(gaussian_rdp(self.sigma, self.sensitivity, self.alphas, dim=d))
        self._rdp = self._rdp + r
        self.steps += 1
        return r

    @property
    def rdp(self) -> np.ndarray:
        """Accumulated RDP of the steps taken, at :attr:`alphas` (a copy)."""
        return self._rdp.copy()

    def epsilon(self, delta: float, *, return_alpha: bool = False):
        """(epsilon, delta)-DP of the steps taken, by RDP conversion
        (:func:`bndp.accounting.rdp_to_dp`; with ``return_alpha`` also the best order)."""
        return rdp_to_dp(self._rdp, self.alphas, delta, return_alpha=return_alpha)


class BoundedNoiseOptimizer(DPOptimizer):
    r"""Opacus ``DPOptimizer`` with L-infinity clipping and bndp noise (see the module doc).

    Parameters
    ----------
    optimizer : torch.optim.Optimizer
        The optimizer to wrap (its parameters must belong to an Opacus ``GradSampleModule``).
    mechanism : RectifiedGaussian, TruncatedGaussian, StochasticSign or float
        Applied to the flattened summed clipped gradient (its ``sigma`` and bounds are on
        the summed scale); a float is the ``sigma`` of the plain Gaussian baseline.
    clip_bound : float
        L-infinity clipping bound :math:`C` per coordinate (> 0): the per-coordinate
        sensitivity of the sum.
    expected_batch_size : int, optional
        Required with ``loss_reduction="mean"`` (Opacus divides the noisy sum by it).
    loss_reduction : {"mean", "sum"}
    rng : None, int, SeedSequence, BitGenerator or Generator
        bndp stream of the noise (None: the secure default stream of the thread).
    device_rng : {"bndp", "torch"}
        Where the uniforms of noise drawn on a GPU come from (see
        :meth:`bndp.TruncatedGaussian.sample`).
    account : bool
        Feed every step's summed gradient to :attr:`accountant` (default True).
    sampling_rate : float
        Poisson sampling rate of the batches (1 for full batches). Below 1 the per-instance
        accountant accounts FIL only, and the optimizer leaves its ``step`` to you (Jacobians
        are needed): use :attr:`last_summed_gradient`.
    alphas, convention
        Passed to the accountant (see :class:`bndp.accounting.PerInstanceAccountant`);
        ``mode=`` is refused with a ``TypeError`` naming ``convention``.
    **kwargs
        Passed to Opacus's ``DPOptimizer`` (e.g. ``generator``, ``secure_mode``; its noise is
        not used).

    Attributes
    ----------
    accountant : PerInstanceAccountant or GaussianRDPTally
    last_summed_gradient : numpy.ndarray or None
        The last step's flattened summed clipped gradient (host copy), what the mechanism
        was applied to.

    Examples
    --------
    One full-batch step of a small model on the CPU; the released gradient lies in the
    mechanism's support, and the accountant has taken the step:

    >>> import torch, bndp
    >>> from opacus import GradSampleModule
    >>> from bndp.torch import BoundedNoiseOptimizer
    >>> _ = torch.manual_seed(0)
    >>> model = GradSampleModule(torch.nn.Linear(4, 2))
    >>> opt = BoundedNoiseOptimizer(torch.optim.SGD(model.parameters(), lr=0.1),
    ...                             mechanism=bndp.TruncatedGaussian(0.5, lower=-1.0, upper=1.0),
    ...                             clip_bound=0.1, loss_reduction="sum", rng=1)
    >>> x, y = torch.randn(8, 4), torch.randint(0, 2, (8,))
    >>> torch.nn.functional.cross_entropy(model(x), y, reduction="sum").backward()
    >>> opt.step()
    >>> grad = torch.cat([p.grad.reshape(-1) for p in model.parameters()])
    >>> bool(((grad >= -1.0) & (grad <= 1.0)).all()), opt.accountant.steps
    (True, 1)
    >>> bool(opt.epsilon(1e-5) > 0)
    True
    """

    @removed_parameter("mode", "convention", removed_in="0.7.0")
    def __init__(self, optimizer: torch.optim.Optimizer, *, mechanism: Any, clip_bound: float,
                 expected_batch_size: int | None = None, loss_reduction: str = "mean",
                 rng: RNGLike = None, device_rng: str = "bndp", account: bool = True,
                 sampling_rate: float = 1.0, alphas: Any = None, convention: str = "sup",
                 **kwargs: Any) -> None:
        if isinstance(clip_bound, bool) or not isinstance(
                clip_bound, (int, float, np.integer, np.floating)):
            raise TypeError(f"`clip_bound` must be a real number; got {clip_bound!r}")
        C = float(clip_bound)
        if not (math.isfinite(C) and C > 0):
            raise ValueError(f"`clip_bound` must be finite and > 0; got {clip_bound!r}")
        if isinstance(mechanism, _MECHS):
            sigma = mechanism.sigma
            acc: Any = PerInstanceAccountant(mechanism, C, alphas=alphas,
                                             convention=convention,
                                             sampling_rate=sampling_rate)
        elif isinstance(mechanism, (int, float)) and not isinstance(mechanism, bool):
            sigma = float(mechanism)
            if not (math.isfinite(sigma) and sigma > 0):
                raise ValueError(f"a Gaussian `mechanism` sigma must be finite and > 0; got "
                                 f"{mechanism!r}")
            if sampling_rate != 1.0:
                raise ValueError("the Gaussian baseline's tally accounts full batches only "
                                 "(sampling_rate=1); use Opacus's RDP accountant for the "
                                 "subsampled Gaussian mechanism")
            acc = GaussianRDPTally(sigma, C, alphas=alphas)
        else:
            raise TypeError("`mechanism` must be a bndp.TruncatedGaussian, RectifiedGaussian, "
                            f"StochasticSign or a float sigma; got {type(mechanism).__name__}")
        _torch_noise.check_device_rng(device_rng)
        super().__init__(optimizer, noise_multiplier=sigma / C, max_grad_norm=C,
                         expected_batch_size=expected_batch_size,
                         loss_reduction=loss_reduction, **kwargs)
        self.mechanism = mechanism
        self.clip_bound = C
        self.sigma = sigma
        self.device_rng = device_rng
        self.account = bool(account)
        self.sampling_rate = float(sampling_rate)
        self.accountant = acc
        self.last_summed_gradient: np.ndarray | None = None
        self._gen = as_generator(rng)

    def _check_dtype(self, dtype: torch.dtype) -> None:
        """Refuse parameters whose dtype cannot hold the clipping bound, or the Gaussian
        baseline's noise (64 sigma, below e^-2000 of its mass beyond): a float32 gradient
        took inf there, and the step was taken and accounted."""
        big = torch.finfo(dtype).max if dtype.is_floating_point else math.inf
        need = max(self.clip_bound, 64.0 * self.sigma if not isinstance(self.mechanism, _MECHS)
                   else 0.0)
        if not need < big:
            raise ValueError(f"a parameter of dtype {dtype} cannot hold the clipping bound "
                             f"{self.clip_bound!r} or the noise of sigma {self.sigma!r} "
                             f"(its largest value is {big:.3g}); use float64 parameters or a "
                             "smaller bound")

    def clip_and_accumulate(self) -> None:
        """Per-sample L-infinity clipping to ``[-C, C]``, summed into ``p.summed_grad``."""
        for p in self.params:
            self._check_dtype(p.dtype)
            _check_processed_flag(p.grad_sample)
            grad = linf_clip_sum(self._get_flat_grad_sample(p).to(p.dtype), self.clip_bound)
            if p.summed_grad is not None:
                p.summed_grad += grad
            else:
                p.summed_grad = grad
            _mark_as_processed(p.grad_sample)

    def add_noise(self) -> None:
        """``p.grad`` = the mechanism's release of the flattened summed gradient."""
        params = self.params
        for p in params:
            _check_processed_flag(p.summed_grad)
        flat = torch.cat([p.summed_grad.reshape(-1) for p in params])
        if isinstance(self.mechanism, _MECHS):
            noisy = self.mechanism.sample(flat, rng=self._gen, device_rng=self.device_rng)
        else:
            u = _torch_noise.open_uniform(tuple(flat.shape), flat.device, self._gen,
                                          self.device_rng)
            noisy = (flat.to(torch.float64) + self.sigma * _torch_noise.std_normal(u)
                     ).to(flat.dtype)
        self.last_summed_gradient = flat.detach().to("cpu", torch.float64).numpy()
        if self.account and self.sampling_rate == 1.0:
            self.accountant.step(self.last_summed_gradient)
        off = 0
        for p in params:
            n = p.summed_grad.numel()
            p.grad = noisy[off:off + n].view_as(p).to(p.dtype)
            off += n
            _mark_as_processed(p.summed_grad)

    def epsilon(self, delta: float) -> float:
        """(epsilon, delta) of the steps taken (per-instance for the bounded mechanisms:
        convention "sup" bounds every neighbour, so it bounds the largest per-example value)."""
        return float(self.accountant.epsilon(delta))


@removed_parameter("mode", "convention", removed_in="0.7.0")
def make_private(module: torch.nn.Module, optimizer: torch.optim.Optimizer, data_loader: Any,
                 *, mechanism: Any, clip_bound: float, poisson_sampling: bool = False,
                 loss_reduction: str = "mean", rng: RNGLike = None, device_rng: str = "bndp",
                 alphas: Any = None, convention: str = "sup",
                 grad_sample_mode: str = "hooks"):
    """Opacus ``make_private`` for bndp noise, without Opacus's accountant.

    Wraps ``module`` in an Opacus ``GradSampleModule`` and ``optimizer`` in a
    :class:`BoundedNoiseOptimizer`. With ``poisson_sampling=True`` the data loader is turned
    into Opacus's Poisson ``DPDataLoader`` (sampling rate ``1/len(data_loader)``), and the
    accountant then accounts FIL only (RDP under subsampling is refused); the default keeps
    the loader as given (use one full batch per step for per-instance RDP).

    Parameters
    ----------
    module : torch.nn.Module
        The model (or an Opacus ``GradSampleModule`` already wrapping it).
    optimizer : torch.optim.Optimizer
        Optimizer over ``module``'s parameters.
    data_loader : torch.utils.data.DataLoader
        Training data.
    mechanism : RectifiedGaussian, TruncatedGaussian, StochasticSign or float
        The noise (see :class:`BoundedNoiseOptimizer`).
    clip_bound : float
        L-infinity clipping bound per coordinate (> 0).
    poisson_sampling : bool
        Replace the loader by Opacus's Poisson ``DPDataLoader`` (default False).
    loss_reduction : {"mean", "sum"}
        How the training loss combines the samples of a batch.
    rng : None, int, SeedSequence, BitGenerator or Generator
        bndp stream of the noise (None: the secure default stream of the thread).
    device_rng : {"bndp", "torch"}
        Where the uniforms of noise drawn on a GPU come from.
    alphas, convention
        Passed to the accountant (see :class:`bndp.accounting.PerInstanceAccountant`);
        ``mode=`` is refused with a ``TypeError`` naming ``convention``.
    grad_sample_mode : {"hooks", "functorch"}
        How Opacus computes per-sample gradients.

    Returns
    -------
    (GradSampleModule, BoundedNoiseOptimizer, data loader)

    Examples
    --------
    >>> import torch, bndp
    >>> from bndp.torch import make_private
    >>> _ = torch.manual_seed(0)
    >>> data = torch.utils.data.TensorDataset(torch.randn(16, 4), torch.randint(0, 2, (16,)))
    >>> loader = torch.utils.data.DataLoader(data, batch_size=16)   # one full batch
    >>> model = torch.nn.Linear(4, 2)
    >>> model, opt, loader = make_private(
    ...     model, torch.optim.SGD(model.parameters(), lr=0.5), loader,
    ...     mechanism=bndp.TruncatedGaussian(sigma=2.0, lower=-4.0, upper=4.0),
    ...     clip_bound=0.05, rng=1)
    >>> for x, y in loader:
    ...     opt.zero_grad()
    ...     torch.nn.functional.cross_entropy(model(x), y).backward()
    ...     opt.step()
    >>> opt.accountant.steps, type(opt).__name__
    (1, 'BoundedNoiseOptimizer')
    >>> bool(opt.epsilon(1e-5) > 0)
    True
    """
    if grad_sample_mode not in ("hooks", "functorch"):
        raise ValueError(f'`grad_sample_mode` must be "hooks" or "functorch"; got '
                         f"{grad_sample_mode!r}")
    if isinstance(module, GradSampleModule):
        gsm = module
    else:
        gsm = GradSampleModule(module, batch_first=True, loss_reduction=loss_reduction,
                               strict=True, force_functorch=grad_sample_mode == "functorch")
    q = 1.0
    dl = data_loader
    if poisson_sampling:
        dl = DPDataLoader.from_data_loader(data_loader)
        q = float(dl.sample_rate)
    bs = getattr(data_loader, "batch_size", None)
    expected = None
    if loss_reduction == "mean":
        n = len(data_loader.dataset)
        expected = int(round(n * q)) if poisson_sampling else int(bs or n)
    opt = BoundedNoiseOptimizer(optimizer, mechanism=mechanism, clip_bound=clip_bound,
                                expected_batch_size=expected, loss_reduction=loss_reduction,
                                rng=rng, device_rng=device_rng, sampling_rate=q,
                                alphas=alphas, convention=convention)
    return gsm, opt, dl
