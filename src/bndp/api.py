"""One-call entry point: :func:`sample`."""

from __future__ import annotations

from decimal import Decimal
from fractions import Fraction
from typing import TYPE_CHECKING, Any, Literal, TypeVar, Union, overload

import numpy as np

from ._deprecate import removed_attribute
from ._random import RNGLike
from ._validation import as_float_array, fast_real
from ._columns import Nulls, columnar
from .mechanisms import BoundedGaussian, BoundedLaplace
from ._laws import window
from ._laws.lattice import as_integers, auto_step, integer_step
from .mechanisms.registry import ALIASES, SAMPLE_MECHANISMS, mechanism_key

__all__ = ["sample", "SAMPLE_MECHANISMS"]


if not TYPE_CHECKING:  # checkers keep flagging unknown names
    def __getattr__(name: str) -> Any:
        raise removed_attribute(__name__, name, _REMOVED)


#: removed names: {name: (its replacement, the version that removed it)}
_REMOVED = {"MECHANISMS": ("bndp.api.SAMPLE_MECHANISMS (the names bndp.sample accepts; "
                           "bndp.mechanisms.registry.MECHANISMS lists every name a release "
                           "spec accepts)", "0.8.0")}


#: The names :func:`sample` takes for ``mechanism`` (a type checker catches a misspelling).
MechanismName = Literal["bounded_laplace", "bounded_gaussian", "laplace", "gaussian"]


_Scalar = Union[float, Decimal, Fraction, np.floating]
_ColumnT = TypeVar("_ColumnT")


@overload
def sample(value: int | np.integer, *, mechanism: MechanismName, epsilon: float,
           sensitivity: float, lower: float, upper: float, delta: float = ...,
           rng: RNGLike = ..., on_outside: Literal["clip", "raise"] = ..., workers: int = ...,
           mode: Literal["exact", "continuous"] | None = ..., nulls: Nulls = ...,
           multivariate: bool = ..., integer: bool | int | None = ...) -> int | float: ...


@overload
def sample(value: _Scalar, *, mechanism: MechanismName, epsilon: float, sensitivity: float,
           lower: float, upper: float, delta: float = ..., rng: RNGLike = ...,
           on_outside: Literal["clip", "raise"] = ..., workers: int = ...,
           mode: Literal["exact", "continuous"] | None = ..., nulls: Nulls = ...,
           multivariate: bool = ..., integer: bool | int | None = ...) -> float: ...


@overload
def sample(value: np.ndarray | list[Any] | tuple[Any, ...], *, mechanism: MechanismName,
           epsilon: float, sensitivity: float, lower: Any, upper: Any, delta: float = ...,
           rng: RNGLike = ..., on_outside: Literal["clip", "raise"] = ..., workers: int = ...,
           mode: Literal["exact", "continuous"] | None = ..., nulls: Nulls = ...,
           multivariate: bool = ..., integer: bool | int | None = ...) -> np.ndarray: ...


@overload
def sample(value: _Scalar, *, mechanism: MechanismName, epsilon: float, sensitivity: float,
           lower: Any, upper: Any, delta: float = ..., rng: RNGLike = ...,
           on_outside: Literal["clip", "raise"] = ..., workers: int = ...,
           mode: Literal["exact", "continuous"] | None = ..., nulls: Nulls = ...,
           multivariate: bool = ..., integer: bool | int | None = ...) -> Any: ...


@overload
def sample(value: _ColumnT, *, mechanism: MechanismName, epsilon: float, sensitivity: float,
           lower: Any, upper: Any, delta: float = ..., rng: RNGLike = ...,
           on_outside: Literal["clip", "raise"] = ..., workers: int = ...,
           mode: Literal["exact", "continuous"] | None = ..., nulls: Nulls = ...,
           multivariate: bool = ..., integer: bool | int | None = ...) -> _ColumnT: ...


@columnar
def sample(value: Any, *, mechanism: str, epsilon: float, sensitivity: float, lower: Any,
           upper: Any, delta: float = 0.0, rng: RNGLike = None, on_outside: str = "clip",
           workers: int = 1, mode: str | None = "exact", nulls: Nulls = "raise",
           multivariate: bool = False, integer: bool | int | None = None):
    r"""Privatise a column of bounded values in one call.

    Parameters
    ----------
    value : float, array_like, pandas Series, pyarrow (Chunked)Array or masked array
        True values (any shape). Values outside ``[lower, upper]`` are clipped into it
        (1-Lipschitz, so the guarantee holds) unless ``on_outside="raise"``. A table
        (DataFrame, Arrow Table) is refused: privatize one column, or use the frame API.
    mechanism : {"bounded_laplace", "bounded_gaussian", "laplace", "gaussian"}
        ``"bounded_laplace"`` (short: ``"laplace"``): :class:`bndp.BoundedLaplace`
        (:math:`(\epsilon, \delta)`, pure for ``delta = 0``). ``"bounded_gaussian"``
        (short: ``"gaussian"``): :class:`bndp.BoundedGaussian` (pure :math:`\epsilon`-DP;
        ``delta`` must be 0). Both spellings name the bounded mechanisms, not the unbounded
        :class:`bndp.Laplace` and :class:`bndp.Gaussian`.
    epsilon, sensitivity, delta : float
        Privacy parameters, as for the mechanisms.
    lower, upper : float or array_like
        The valid range: scalars, or arrays broadcasting with ``value`` (per-row bounds: each
        element is released by the univariate mechanism on its own ``[lower, upper]``, for
        ``"laplace"`` and ``"gaussian"`` alike, any number of distinct pairs). In the default
        mode the rows share kernels: one for every row wider than a few noise scales, one
        per grid width below that (:doc:`/grid_laws`); in continuous mode the
        scale is calibrated once per distinct width ``upper - lower``.
    rng : None, int, SeedSequence, BitGenerator or Generator
        Source of randomness; ``None`` is the secure default.
    on_outside : {"clip", "raise"}
    workers : int, default 1
        Threads for large arrays (``-1``: every CPU); each thread draws from its own child
        stream spawned from ``rng`` (:meth:`numpy.random.Generator.spawn`), so no two
        threads share or overlap a stream. (The grid law draws on one thread.)
    mode : {"exact", "continuous"}, default "exact"
        ``"exact"``: the floating-point-safe grid law of the mechanism (outputs on a
        power-of-two grid, loss certified from the sampler's own table;
        :doc:`/grid_laws`). ``"continuous"``: raw doubles of the continuous law
        (explicit opt-in; attackable when the raw outputs are published).
    nulls : {"raise", "keep"}, default "raise"
        Missing values (NaN, None, pd.NA, Arrow nulls, masked entries): ``"raise"`` refuses
        them with an error naming the first position; ``"keep"`` leaves them missing in the
        result (no noise is drawn for them).
    multivariate : bool, default False
        ``"gaussian"`` only: ``lower`` and ``upper`` (length m) are one m-dimensional box,
        ``sensitivity`` an :math:`\ell_2` sensitivity and ``value`` has a trailing dimension
        m (:class:`bndp.BoundedGaussian` with vector bounds). Without it, array bounds are
        per-row bounds.
    integer : None, bool or int, default None
        The integer law (:doc:`/integer`): the bounded law on the lattice
        :math:`l + jk` of integral bounds, certified as the default grid is. ``None``
        (auto): used when ``value`` is integer-typed (a Python int, an integer NumPy array
        or a list of ints; integer columns of pandas, Polars and Arrow), ``sensitivity``
        and scalar ``lower`` and ``upper`` are integral, and per-row ``lower`` and
        ``upper`` are integer-typed (per-row bounds are data: their type decides, never
        their values), in the default mode and not ``multivariate``; the result then has
        the input's integer type (promoted with per-row bounds' integer types). ``False``: the
        default fine grid (a float result). ``True`` or a step ``k`` (an integer >= 1):
        the integer law, refused with a ``ValueError`` for bounds or a sensitivity that
        are not integral.

    Returns
    -------
    float, int, ndarray, Series, pyarrow array or masked array
        Same shape as ``value`` (a number for a scalar), of the kind of ``value``: float64,
        or, where the integer law released an integer-typed ``value``, its integer type.

    Examples
    --------
    >>> import bndp
    >>> ages = [23.0, 35.0, 61.0, 118.0]
    >>> out = bndp.sample(ages, mechanism="laplace", epsilon=1.0, sensitivity=1.0,
    ...                   lower=0, upper=120, rng=0)
    >>> out.shape, bool(((out >= 0) & (out <= 120)).all())
    ((4,), True)

    Per-row bounds (either mechanism):

    >>> out = bndp.sample([5.0, 50.0], mechanism="laplace", epsilon=1.0, sensitivity=1.0,
    ...                   lower=[0, 10], upper=[10, 100], rng=0)
    >>> bool(0 <= out[0] <= 10 and 10 <= out[1] <= 100)
    True

    Integers stay integers (the integer law, chosen for integer input and integral bounds):

    >>> out = bndp.sample(np.array([23, 35, 61], dtype=np.int32), mechanism="laplace",
    ...                   epsilon=1.0, sensitivity=1, lower=0, upper=120, rng=0)
    >>> out.dtype
    dtype('int32')
    """
    key = None
    arrays = ((type(lower) is np.ndarray and lower.ndim > 0)
              or (type(upper) is np.ndarray and upper.ndim > 0))
    if (not arrays and type(lower) in _NUMBER and type(upper) in _NUMBER
            and type(epsilon) in _NUMBER and type(sensitivity) in _NUMBER
            and type(delta) in _NUMBER and type(mechanism) is str
            and (mode is None or type(mode) is str) and multivariate is False):
        # scalar bounds and parameters given as numbers: the mechanism of an earlier call
        # with the same arguments (immutable, so shared; only mechanisms whose arguments
        # passed every check below are kept), then its short path
        tv = type(value)
        if integer is not None:
            step: Any = integer_step(integer)
        elif tv is float or tv is np.float64:
            step = 0              # (a float never takes the integer law: the hot path)
        else:
            step = auto_step(value, lower, upper, sensitivity, mode, epsilon)
        key = (mechanism, epsilon, sensitivity, lower, upper, delta, mode, step)
        hit = _SCALAR.get(key)
        if hit is not None:
            out = hit[1](value, None, rng, on_outside, workers)
            if out is not NotImplemented:
                return as_integers(out, value, lower, upper) if step else out
            return hit[0].sample(value, rng=rng, on_outside=on_outside, workers=workers)
    elif arrays and not multivariate:
        step = integer            # per-row bounds: resolved (and checked) by sample_rows
    elif integer is None and not multivariate:
        step = auto_step(value, lower, upper, sensitivity, mode, epsilon)
    else:
        step = integer_step(False if integer is None else integer)
    name, mechanism = mechanism, mechanism_key(mechanism)
    if not isinstance(mechanism, str) or mechanism not in SAMPLE_MECHANISMS:
        raise ValueError(f"`mechanism` must be one of {tuple(ALIASES) + SAMPLE_MECHANISMS}; "
                         f"got {name!r}")
    if not isinstance(multivariate, (bool, np.bool_)):
        raise TypeError(f"`multivariate` must be True or False; got {multivariate!r}")
    if mechanism == "gaussian":
        if fast_real(delta, "delta") != 0.0:
            raise ValueError(
                "the bounded Gaussian mechanism is pure epsilon-DP: `delta` must be 0; "
                f"got {delta!r}"
            )
        if multivariate:
            mech = BoundedGaussian(epsilon, sensitivity=sensitivity, lower=lower, upper=upper,
                                   mode=mode, integer=step)
            return mech.sample(value, rng=rng, on_outside=on_outside, workers=workers)
    elif multivariate:
        raise ValueError("`multivariate=True` is for mechanism='gaussian' (one m-dimensional "
                         "box); the Laplace mechanism is univariate")
    lo = hi = None                  # (per-row bounds are converted once, in sample_rows)
    if not arrays:
        lo = as_float_array(lower, "lower")
        hi = as_float_array(upper, "upper")
    if lo is not None and hi is not None and lo.ndim == 0 and hi.ndim == 0:
        one: BoundedGaussian | BoundedLaplace
        if mechanism == "gaussian":
            one = BoundedGaussian(epsilon, sensitivity=sensitivity, lower=float(lo),
                                  upper=float(hi), mode=mode, integer=step)
        else:
            one = BoundedLaplace(epsilon, sensitivity=sensitivity, lower=float(lo),
                                 upper=float(hi), delta=delta, mode=mode, integer=step)
        if key is not None:
            _remember(key, one)
        return one.sample(value, rng=rng, on_outside=on_outside, workers=workers)
    # per-row bounds: one univariate law per element, drawn by the mechanism's class
    cls = BoundedGaussian if mechanism == "gaussian" else BoundedLaplace
    # (the bounds as given: sample_rows converts them, and checks an integer array's
    # integrality by its range alone)
    return cls.sample_rows(value, lower, upper, epsilon=epsilon, sensitivity=sensitivity,
                           delta=delta, rng=rng, on_outside=on_outside, workers=workers,
                           mode=mode, integer=integer if arrays else step)



#: the exact types whose values key the mechanism cache (bool, Decimal, 0-d arrays... take
#: the general path, with its checks)
_NUMBER = (float, int, np.float64)
#: (mechanism, epsilon, sensitivity, lower, upper, delta, mode, integer step) -> the
#: scalar-bounds mechanism built for them and its plan's short path (cleared when full)
_SCALAR: dict = {}
_SCALAR_MAX = 256


def _remember(key: tuple, mech: Any) -> None:
    """Keep a scalar-bounds mechanism of the default (grid) release for later calls with the
    same arguments; not one whose construction warned (a coarse grid: every call warns)."""
    plan = mech.exact_plan
    if plan is None or not plan.supports_rows:
        return
    if window.coarse_row(plan.target, mech.sensitivity, plan.lower, plan.upper):
        return
    if len(_SCALAR) >= _SCALAR_MAX:
        _SCALAR.clear()
    _SCALAR[key] = (mech, plan.sample_inside)
