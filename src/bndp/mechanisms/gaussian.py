r"""The bounded (truncated) Gaussian mechanism, univariate and multivariate (Chen & Hale
[CH24]_).

.. [CH24] B. Chen, M. Hale. "The Bounded Gaussian Mechanism for Differential Privacy".
   Journal of Privacy and Confidentiality, 2024 (arXiv:2211.17230).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from .. import _dispatch
from .._core import fill as _fill
from .._random import RNGLike
from .._validation import (apply_domain, as_float_array, box_widths, check_box,
                           check_continuous_resolution, check_size, positive_real)
from ..calibrate.bounded import _bg_sigma_one, bounded_gaussian_sigma, check_bounded_gaussian
from ..distributions import truncnorm_eval
from .._loss import _tight_sigma, bounded_gaussian_loss
from . import exact
from .._laws.lattice import check_integral, integer_step
from .._laws.product import saturation_target
from .._laws.window import serving_target
from .._columns import Nulls, columnar
from .._deprecate import removed_parameter
from ._law import GridLawMechanism, TruncatedNormalLaw, examples, sample_doc

__all__ = ["BoundedGaussian"]


class BoundedGaussian(TruncatedNormalLaw, GridLawMechanism):
    r"""Bounded Gaussian mechanism: :math:`N(q, \sigma^2)` truncated to the domain.

    Univariate (scalar bounds, Definition 2.1 of [CH24]_):

    .. math:: p_q(x) = \frac{\phi((x-q)/\sigma)}{\sigma\,[\Phi((u-q)/\sigma) -
              \Phi((l-q)/\sigma)]},\qquad l \le x \le u.

    Multivariate (length-m bounds, Definition 3.1): the product of m such laws on the box
    :math:`\prod_i [l_i, u_i]` with one common :math:`\sigma`, for a query with
    :math:`\ell_2` sensitivity :math:`\Delta Q`.

    :math:`\sigma = \sigma^*` from :func:`bndp.calibrate.bounded_gaussian_sigma`
    (Theorems 2.4 and 3.4); the mechanism is :math:`\epsilon`-DP (pure, :math:`\delta=0`).

    Parameters
    ----------
    epsilon : float
        Finite and > 0.
    sensitivity : float
        :math:`\ell_2` sensitivity of the whole query, finite and > 0.
    lower, upper : float or 1-D array_like
        Finite bounds, ``lower < upper`` elementwise. Scalars: univariate. Length-m arrays
        (or a scalar with a length-m array): multivariate, and ``value`` has a trailing
        dimension m.
    sigma_rule : {"paper", "tight"}, default "paper"
        Which condition on :math:`\sigma` the continuous law is calibrated by.
        ``"paper"``: :math:`\sigma^*` of the sufficient condition of Theorems 2.4/3.4
        (:func:`bndp.calibrate.bounded_gaussian_sigma`). ``"tight"``: the smallest
        :math:`\sigma` whose certified worst-case loss (:meth:`privacy_loss`) is at most
        ``epsilon`` (:func:`bndp.verify.bounded_gaussian_tight_sigma`); same guarantee,
        less noise. On the paper's Table 1 setting it lowers :math:`\sigma^2` (the paper's
        "variance") by 66.1, 63.9, 61.7, 59.7, 58.0, 56.5 and 55.1 % at
        :math:`\epsilon` = 0.1, 0.5, 1, 1.5, 2, 2.5, 3; the released value's variance, which
        the box bounds, drops by 0.6-12 % at the box centre and 0.7-31 % at a corner. In one
        dimension the :math:`\sigma^2` reduction ranges from 7 % (:math:`\epsilon = 5`,
        :math:`\Delta Q/(u-l) = 0.01`) to 69 % (:math:`\Delta Q = u - l`).
    mode : {"exact", "continuous"}, default "exact"
        ``"exact"`` (the default; ``None`` means the same): the value is rounded to a
        power-of-two grid and each coordinate drawn by an integer inverse CDF from a table
        of integer weights of the bounded discrete Gaussian on the grid points of its
        interval, with :math:`\sigma` calibrated so that the loss certified from those
        tables (over the :math:`\ell_2` ball of neighbours when multivariate) is
        :math:`\le \epsilon` (:doc:`/grid_laws`); raw outputs are safe to
        publish. ``pmf``, ``cdf``, ``ppf`` and the moments are those of the discrete law
        (univariate); ``exact_plan.pmf`` gives the per-coordinate laws when multivariate.
        ``"continuous"``: the continuous law in doubles (explicit opt-in; attackable when
        raw doubles are published). ``sigma_rule`` applies to the continuous mode; the
        grid law is always calibrated on its own certificate.
    integer : bool or int, default False
        ``True`` (or a lattice step ``k``, an integer >= 1): the integer law, the bounded
        discrete Gaussian on the lattice :math:`l + jk` (:doc:`/integer`; multivariate, on
        the multiples of :math:`k` in each coordinate's interval):
        the grid law above with the grid's step fixed to :math:`k` (a step that is not a
        power of two: the law of step 1 on the lattice's indices, mapped exactly), calibrated and
        certified by the same machinery; outputs are integers (an integer NumPy input gives
        an array of its own dtype). Needs integral ``lower`` and ``upper`` (magnitude at
        most :math:`2^{52}`), an integral ``sensitivity`` and the default mode.
        :func:`bndp.sample` and the frame API choose it for integer-typed columns; a
        mechanism built directly uses the law it is given.

    Attributes
    ----------
    sigma : float
        Scale of the parent Gaussian (the paper's "variance" is ``sigma**2``; the released
        value's variance is :meth:`variance`, bounded by the box).
    sigma_rule : str
        The ``sigma_rule`` given.
    dim : int or None
        m for the multivariate mechanism, ``None`` for the univariate one.

    Notes
    -----
    True values outside the domain are clipped into it by default (coordinatewise clipping
    is 1-Lipschitz in :math:`\ell_2`, so the sensitivity and the guarantee are unchanged);
    ``on_outside="raise"`` refuses them.

    The paper's condition is sufficient, not tight: the realised worst-case loss at
    :math:`\sigma^*` is typically 0.3-0.8 :math:`\epsilon` (0.34-0.40 on Table 1), which
    ``sigma_rule="tight"`` recovers.

    ``sigma_rule`` was called ``calibration`` before 0.7.0 (the keyword and the attribute
    were removed in 0.8.0: they raise an error naming ``sigma_rule``); the ``calibration=``
    of :class:`bndp.Gaussian` names the unbounded Gaussian's calibration formula.

    Examples
    --------
    >>> import bndp
    >>> m = bndp.BoundedGaussian(epsilon=1.0, sensitivity=1.0, lower=0.0, upper=120.0,
    ...                          mode="continuous")
    >>> round(m.sigma ** 2, 6)
    129.256142
    >>> g = bndp.BoundedGaussian(epsilon=1.0, sensitivity=1.0, lower=0.0, upper=120.0)
    >>> g.privacy_loss() <= 1.0 and g.sigma < m.sigma
    True
    """

    _init_args = ("epsilon", "sensitivity", "lower", "upper", "sigma_rule", "mode", "integer")
    _repr_defaults = {"integer": 0}
    _removed_attributes = {"calibration": ("BoundedGaussian.sigma_rule", "0.8.0")}
    mode = "exact"
    integer = 0
    exact_plan: "exact.ExactPlan | None" = None

    @removed_parameter("calibration", "sigma_rule", removed_in="0.8.0")
    def __init__(self, epsilon: float, *, sensitivity: float, lower: Any, upper: Any,
                 sigma_rule: str = "paper", mode: str | None = "exact",
                 integer: Any = False) -> None:
        if sigma_rule not in ("paper", "tight"):
            raise ValueError(f'`sigma_rule` must be "paper" or "tight"; got {sigma_rule!r}')
        mode = exact.check_mode(mode)
        eps = positive_real(epsilon, "epsilon")
        dq = positive_real(sensitivity, "sensitivity")
        lo, hi = check_box(lower, upper)
        if lo.ndim == 0 and hi.ndim == 0:
            lower_v: Any = float(lo)
            upper_v: Any = float(hi)
            dim = None
        else:
            lo_b, hi_b = np.broadcast_arrays(lo, hi)
            lower_v = np.array(lo_b, dtype=np.float64)
            upper_v = np.array(hi_b, dtype=np.float64)
            lower_v.setflags(write=False)
            upper_v.setflags(write=False)
            dim = int(lower_v.shape[0])
        step = integer_step(integer)
        lattice = None
        if step:
            lattice = check_integral(step, dq, lower_v, upper_v, mode)

        def continuous_sigma() -> float:
            # the box is checked (check_box above): calibrated from its widths, not checked
            # again (plain floats: bounded_gaussian_sigma's path without arrays)
            if dim is None:
                s = float(bounded_gaussian_sigma(eps, dq, lower_v, upper_v))
                return _tight_sigma(eps, dq, box_widths(lo, hi), s) if sigma_rule == "tight" else s
            w = box_widths(lo, hi)
            s = _bg_sigma_one(eps, dq, w)
            return _tight_sigma(eps, dq, w, s) if sigma_rule == "tight" else s

        plan = None
        if mode == "exact" and dim is None:
            # the windowed grid law calibrates its own sigma (its searches start from closed
            # forms and from the continuous sigma of the kernel's own grid width, so a kernel
            # is the same whoever plans it): the continuous sigma of these bounds is not
            # computed; its input checks run now, for the loss the kernel is calibrated for
            # (a large epsilon is served by the law of a smaller one, see serving_target)
            try:
                check_bounded_gaussian(serving_target(eps, dq), dq, lower_v, upper_v)
            except ValueError:
                check_bounded_gaussian(eps, dq, lower_v, upper_v)  # the epsilon given
                raise
            try:
                plan = exact.plan_bounded_gaussian(eps, dq, lower_v, upper_v,
                                                   lattice=lattice)
            except (ValueError, OverflowError):
                if lattice is not None:
                    raise
                # parameters the continuous calibration refuses keep its message
                continuous_sigma()
                raise
            sigma = plan.scale
        elif mode == "exact" and dim is not None and eps >= saturation_target(dim):
            # multivariate, an epsilon every scale satisfies: a fixed-scale law, whose grid
            # the continuous sigma of saturation_target chooses
            try:
                check_bounded_gaussian(saturation_target(dim), dq, lower_v, upper_v)
            except ValueError:
                check_bounded_gaussian(eps, dq, lower_v, upper_v)  # the epsilon given
                raise
            plan = exact.plan_bounded_gaussian(eps, dq, lower_v, upper_v, lattice=lattice)
            sigma = plan.scale
        else:
            sigma = continuous_sigma()
            if mode == "exact":   # multivariate: the continuous sigma also chooses the grid
                plan = exact.plan_bounded_gaussian(eps, dq, lower_v, upper_v,
                                                   sigma_hint=sigma, lattice=lattice)
                sigma = plan.scale
            else:
                check_continuous_resolution(sigma, lower_v, upper_v)
        self._set(mode=mode, exact_plan=plan, integer=step)
        self._set(epsilon=eps, sensitivity=dq, lower=lower_v, upper=upper_v, dim=dim,
                  sigma=float(sigma), sigma_rule=sigma_rule)

    @property
    def scale(self) -> float:
        """Alias of :attr:`sigma`."""
        return self.sigma

    def privacy_loss(self) -> float:
        r"""Certified worst-case privacy loss of this mechanism (an upper bound on
        :math:`\sup_{q \sim q'}\sup_x \ln p_q(x)/p_{q'}(x)`, exact to about
        :math:`10^{-13}` relative); see :func:`bndp.verify.bounded_gaussian_loss`. At most
        ``epsilon`` for both ``sigma_rule`` values. In exact mode, the exhaustively certified
        loss of the discrete mechanism (``exact_plan.certified_epsilon``)."""
        if self.exact_plan is not None:
            return self.exact_plan.certified_epsilon
        return bounded_gaussian_loss(self.sigma, self.sensitivity, self.lower, self.upper)

    # helpers -------------------------------------------------------------------------
    def _value(self, value: Any, on_outside: str = "clip") -> np.ndarray:
        q = self._true_values(value)
        if self.dim is not None and (q.ndim == 0 or q.shape[-1] != self.dim):
            raise ValueError(
                f"`value` must have a trailing dimension of length {self.dim} for this "
                f"{self.dim}-dimensional mechanism; got shape {q.shape}"
            )
        return apply_domain(q, self.lower, self.upper, on_outside)

    def _params(self, q: np.ndarray) -> list[np.ndarray]:
        return [q, np.float64(self.sigma), np.asarray(self.lower, dtype=np.float64),
                np.asarray(self.upper, dtype=np.float64)]

    # sampling ------------------------------------------------------------------------
    @columnar
    @sample_doc(
        "Release ``value``: one independent draw per element (per row of m coordinates in "
        "the multivariate case).",
        value="True values (trailing dimension m when multivariate); clipped into the box "
              'unless ``on_outside="raise"``.',
        size="Follows NumPy: for the univariate mechanism the output shape; for the "
             "multivariate one the batch shape (the output has shape ``size + (m,)``).",
        nulls=" (univariate only)")
    def sample(self, value: Any, size: Any = None, rng: RNGLike = None,
               on_outside: str = "clip", workers: int = 1, *, nulls: Nulls = "raise"):
        return self._sample(value, size, rng, on_outside, workers)

    def _continuous_sample(self, q: Any, size: Any, gen: Any, workers: int):
        if self.dim is not None and size is not None:
            size = tuple(check_size(size) or ()) + (self.dim,)
        return _dispatch.sample(_fill.tn_one, _fill.tn_fill, _fill.tn_fill_rows,
                                self._params(q), size, gen, workers)

    # law hooks (the public methods are in LawMechanism) ---------------------------------
    _rows_family = "gaussian"     # per-row bounds: :meth:`sample_rows`
    _law_docs = {
        "pmf": "Probability that the grid law releases ``x`` for true value ``value`` (0 off "
               "the grid). Exact mode, univariate.",
        "logpdf": "Log density at ``x`` (joint over the trailing axis when multivariate).",
        "pdf": "Density at ``x`` (joint over the trailing axis when multivariate).",
        "cdf": r"""CDF at ``x``; in the multivariate case the joint CDF
:math:`\prod_i F_i(x_i)` (the coordinates are independent).""",
        "ppf": "Quantile function (per coordinate in the multivariate case); ``p`` in [0, 1]. "
               "Continuous mode: near the lower bound, where ``loc + scale z`` cancels, the "
               "offset from the bound is solved directly (a few ulps of the result even at "
               "``p = 1e-300``).",
        "sf": r"""Survival function :math:`P(X > x)` (per coordinate when multivariate),
computed in log space, not as ``1 - cdf``; in exact mode an exact sum of the grid law's
integer weights.""",
        "isf": r"""Inverse survival function: the ``x`` with :math:`P(X > x) = p`, from the
upper tail in log space; in exact mode the smallest grid point whose survival probability
is at most ``p``.""",
        "mean": r""":math:`E[X] = q + \sigma(\phi(a) - \phi(b))/Z` per coordinate (computed by
quadrature where that closed form cancels).""",
        "bias": ":math:`E[X] - q` per coordinate (for the clipped true value).",
        "variance": r"""Variance of the released value per coordinate,
:math:`\sigma^2[1 + (a\phi(a) - b\phi(b))/Z - ((\phi(a) - \phi(b))/Z)^2]`
(quadrature where the closed form cancels).""",
    }
    _law_examples = examples(
        'g = bndp.BoundedGaussian(1.0, sensitivity=1.0, lower=0.0, upper={}, mode="continuous")',
        sf=("120.0", "0 < g.sf(119.0, 0.0) < 1e-16", "True"),
        logsf=("1000.0", "bool(g.logsf(999.0, 0.0) < -400)   # sf itself is below 1e-170",
               "True"),
        logcdf=("1000.0", "bool(g.logcdf(1.0, 1000.0) < -400)", "True"),
        isf=("120.0", "x = g.isf(1e-30, 0.0)",
             "bool(abs(g.sf(x, 0.0) / 1e-30 - 1) < 1e-8)", "True"),
    )
    _grid_hint = "use pmf(x, value) (univariate) or exact_plan.pmf(value) (per coordinate)"

    def _grid(self, what: str, x: Any, q: np.ndarray):
        if self.dim is not None:
            raise NotImplementedError("the multivariate grid law: use exact_plan.pmf(value) "
                                      "per coordinate")
        return super()._grid(what, x, q)

    def _logpdf(self, x: np.ndarray, q: np.ndarray):
        lp = super()._logpdf(x, q)
        return lp if self.dim is None else np.sum(lp, axis=-1)

    def _cdf(self, x: np.ndarray, q: np.ndarray):
        c = super()._cdf(x, q)
        return c if self.dim is None else np.prod(c, axis=-1)

    def _ppf(self, p: np.ndarray, q: np.ndarray):
        return truncnorm_eval(2, p, *self._params(q))

    # mean, variance and the tails (sf, isf, logcdf, logsf): TruncatedNormalLaw's hooks
