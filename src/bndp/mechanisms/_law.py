"""The law of a mechanism's release, written once over per-family hooks (as ``scipy.stats``
does): the public methods (``pdf``, ``cdf``, ``sf``, ``ppf``, ``mean``, ...) validate their
arguments, route a grid law (``exact_plan``) to :func:`bndp.mechanisms.exact.grid_law`, and
otherwise call the family's hook ``_logpdf``, ``_cdf``, ``_ppf``, ``_sf``, ``_isf``,
``_mean``/``_bias``, ``_variance`` (``_pdf``, ``_logsf`` and ``_logcdf`` have defaults).

Two families are written here once for several mechanisms: :class:`ClippedLaw`, the law of
a continuous noise clipped into ``[lower, upper]`` (atoms at the bounds), and
:class:`TruncatedNormalLaw`, the normal law conditioned on ``[lower, upper]``.

Each concrete class gets its own copy of every law method, with a docstring filled from a
template with the class's summaries (``_law_docs``) and examples (``_law_examples``), so the
reference pages and the doctests show each family's formulas and examples.
"""

from __future__ import annotations

import sys
import types
from typing import Any, Callable, ClassVar, TypeVar

import numpy as np

from .._deprecate import removed_parameter
from .._random import RNGLike, as_generator
from .._validation import as_float_array, as_probability
from ..distributions import truncnorm_eval, truncnorm_tail_eval
from .._laws.lattice import as_integers
from . import exact, rows
from ._base import Mechanism

__all__ = ["ClippedLaw", "GridLawMechanism", "LawMechanism", "TruncatedNormalLaw"]

F = TypeVar("F", bound=Callable[..., Any])


def out(a: Any):
    """A float for a 0-d result, else a float64 array."""
    a = np.asarray(a, dtype=np.float64)
    return float(a) if a.ndim == 0 else a


#: what each law method takes: "x" (a point), "p" (a probability) or "" (the value only)
_ARG = {"pmf": "x", "logpmf": "x", "logpdf": "x", "pdf": "x", "cdf": "x", "logcdf": "x",
        "sf": "x", "logsf": "x", "ppf": "p", "isf": "p", "mean": "", "bias": "", "variance": ""}

#: default summaries (a class overrides them in ``_law_docs``)
_SUMMARY = {
    "pmf": "Probability that the grid law releases ``x`` for true value ``value`` (0 off the "
           "grid). Exact mode only.",
    "logpmf": r":math:`\log P(X = x)` for true value ``value`` (``-inf`` off the support).",
    "logpdf": "Log density of the output at ``x`` for true value ``value``.",
    "pdf": "Density of the output at ``x`` for true value ``value``.",
    "cdf": r"CDF of the output, :math:`P(X \le x)`.",
    "logcdf": r":math:`\log P(X \le x)`, without underflow.",
    "sf": r"Survival function :math:`P(X > x)`, not computed as ``1 - cdf``.",
    "logsf": r":math:`\log P(X > x)`, without underflow.",
    "ppf": "Quantile function (the sampler's inverse CDF); ``p`` in [0, 1].",
    "isf": r"Inverse survival function: the ``x`` with :math:`P(X > x) = p`.",
    "mean": "Mean of the released value.",
    "bias": ":math:`E[X] - q` (for the clipped true value).",
    "variance": "Variance of the released value.",
}

_ARG_DOC = {
    "x": "x : float or array_like\n    Points at which to evaluate.\n",
    "p": "p : float or array_like\n    Probabilities in [0, 1].\n",
    "": "",
}


def _doc(cls: Any, name: str) -> str:
    summary = cls._law_docs.get(name, _SUMMARY[name])
    arg = _ARG[name]
    bcast = f", broadcasting with ``{arg}``" if arg else ""
    text = (f"{summary}\n\nParameters\n----------\n{_ARG_DOC[arg]}"
            f"value : float or array_like\n    True value{cls._value_doc}{bcast}.\n\n"
            "Returns\n-------\nfloat or ndarray\n    A float for scalar arguments, else an "
            "array of their broadcast shape.\n")
    example = cls._law_examples.get(name)
    if example:
        text += f"\nExamples\n--------\n{example}\n"
    return text


def examples(make: str, **cases: tuple[str, ...]) -> dict[str, str]:
    """``_law_examples`` from one constructor call: ``make`` with ``{}`` for each case's
    first item, then the case's doctest lines (expressions and expected outputs)."""
    out = {}
    for name, (arg, *lines) in cases.items():
        body = "\n".join(line if line in ("True", "False") else ">>> " + line for line in lines)
        out[name] = f">>> import bndp\n>>> {make.format(arg)}\n{body}"
    return out


def _own_copy(cls: Any, name: str) -> Callable[..., Any]:
    """The base method ``name`` (or a new one of :func:`_method`) as a function of ``cls``'s
    module (so that doctest finds its examples there), with the class's docstring and
    defaults; a call passing the removed name of its argument (``_law_removed``) raises
    ``TypeError`` naming the argument."""
    base = next((k.__dict__[name] for k in cls.__mro__[1:] if name in k.__dict__), None)
    if base is None:
        base = _method(name)
    module = sys.modules[cls.__module__]
    f = types.FunctionType(base.__code__, module.__dict__, name,
                           cls._law_defaults.get(name, base.__defaults__), base.__closure__)
    f.__kwdefaults__ = base.__kwdefaults__
    f.__annotations__ = dict(base.__annotations__)
    f.__module__ = cls.__module__
    f.__qualname__ = f"{cls.__qualname__}.{name}"
    f.__doc__ = _doc(cls, name)
    removed = cls._law_removed.get(name)
    if removed:
        old, removed_in = removed
        return removed_parameter(old, _ARG[name], removed_in=removed_in)(f)
    return f


def _method(what: str) -> Callable[..., Any]:
    """The public law method ``what``: its body uses no module globals (``_own_copy`` runs
    it in another module), only the closure's ``what``."""
    if _ARG[what] == "x":
        def method(self: Any, x: Any, value: Any):
            return self._law(what, x, value)
    elif _ARG[what] == "p":
        def method(self: Any, p: Any, value: Any):  # type: ignore[misc]
            return self._law(what, p, value)
    else:
        def method(self: Any, value: Any):  # type: ignore[misc]
            return self._law(what, None, value)
    method.__name__ = method.__qualname__ = what
    method.__doc__ = _SUMMARY[what]
    return method


class LawMechanism(Mechanism):
    """A mechanism with a univariate law: the methods below are written once; subclasses
    implement the hooks of their family.

    Class attributes a concrete subclass sets: ``_law_docs`` (``{method: summary}``, the
    formulas of its family), ``_law_examples`` (``{method: doctest text}``), ``_value_doc``
    (what a true value may be), ``_law_defaults`` (``{method: defaults tuple}``) and
    ``_law_removed`` (``{method: (former name of its argument, version that removed it)}``).
    A name of ``_law_methods`` that no base class defines (``logpmf``) gets a method that
    calls the hook of that name.
    """

    __slots__ = ()
    exact_plan: Any = None
    _law_methods: ClassVar[tuple[str, ...]] = ("logpdf", "pdf", "cdf", "logcdf", "sf",
                                               "logsf", "ppf", "isf", "mean", "bias",
                                               "variance")
    _law_docs: ClassVar[dict[str, str]] = {}
    _law_examples: ClassVar[dict[str, str]] = {}
    _law_defaults: ClassVar[dict[str, tuple]] = {}
    _law_removed: ClassVar[dict[str, tuple[str, str]]] = {}
    _value_doc: ClassVar[str] = " (clipped into the bounds)"

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        if "_law_docs" not in cls.__dict__:
            return  # an intermediate class: its concrete subclasses get the copies
        for name in cls._law_methods:
            if name not in cls.__dict__:
                setattr(cls, name, _own_copy(cls, name))

    # the public law (see _method: each body is one call of _law) ----------------------
    logpdf = _method("logpdf")
    pdf = _method("pdf")
    cdf = _method("cdf")
    logcdf = _method("logcdf")
    sf = _method("sf")
    logsf = _method("logsf")
    ppf = _method("ppf")
    isf = _method("isf")
    mean = _method("mean")
    bias = _method("bias")
    variance = _method("variance")

    # routing -----------------------------------------------------------------------------
    def _law(self, what: str, x: Any, value: Any):
        q = self._value(value)
        if _ARG[what]:
            x = as_probability(x) if _ARG[what] == "p" else as_float_array(x, "x")
        if self.exact_plan is not None:
            return out(self._grid(what, x, q))
        return out(getattr(self, "_" + what)(x, q))

    # the hooks a family implements -------------------------------------------------------
    def _logpdf(self, x: np.ndarray, q: np.ndarray) -> Any:
        raise NotImplementedError

    def _cdf(self, x: np.ndarray, q: np.ndarray) -> Any:
        raise NotImplementedError

    def _sf(self, x: np.ndarray, q: np.ndarray) -> Any:
        raise NotImplementedError

    def _ppf(self, p: np.ndarray, q: np.ndarray) -> Any:
        raise NotImplementedError

    def _isf(self, p: np.ndarray, q: np.ndarray) -> Any:
        raise NotImplementedError

    def _variance(self, x: None, q: np.ndarray) -> Any:
        raise NotImplementedError

    # default hooks -------------------------------------------------------------------------
    def _pdf(self, x: np.ndarray, q: np.ndarray):
        return np.exp(self._logpdf(x, q))

    def _logsf(self, x: np.ndarray, q: np.ndarray):
        with np.errstate(divide="ignore"):
            return np.log(self._sf(x, q))

    def _logcdf(self, x: np.ndarray, q: np.ndarray):
        with np.errstate(divide="ignore"):
            return np.log(self._cdf(x, q))

    def _mean(self, x: None, q: np.ndarray):
        return q + np.asarray(self._bias(x, q))

    def _bias(self, x: None, q: np.ndarray):
        return np.asarray(self._mean(x, q)) - q

    # the grid law (exact mode) ---------------------------------------------------------------
    _grid_hint: ClassVar[str] = "use pmf(x, value)"

    def _grid(self, what: str, x: Any, q: np.ndarray):
        if what in ("logpdf", "pdf"):
            raise NotImplementedError("the default (exact) mode releases a discrete law on a "
                                      f"grid: {self._grid_hint}")
        plan = self.exact_plan
        if what in ("mean", "bias"):
            mean = exact.grid_law(plan, "mean", 0.0, q)
            return mean if what == "mean" else mean - q
        if what == "variance":
            return exact.grid_law(plan, "var", 0.0, q)
        return exact.grid_law(plan, what, x, q)


class GridLawMechanism(LawMechanism):
    """A :class:`LawMechanism` with a grid law in its default (exact) mode: adds ``pmf``."""

    __slots__ = ()
    _law_methods = ("pmf",) + LawMechanism._law_methods
    #: the integer law's lattice step (0: the default grid or the continuous law)
    integer: ClassVar[int] = 0

    pmf = _method("pmf")

    def _pmf(self, x: np.ndarray, q: np.ndarray):
        raise NotImplementedError("the continuous law has a density: use pdf")

    def _sample(self, value: Any, size: Any, rng: RNGLike, on_outside: str, workers: int):
        """``sample``'s body: the exact plan's draw (a row plan's first, for one value or a
        small array inside the bounds), else ``_continuous_sample``."""
        plan = self.exact_plan
        if plan is not None:  # one value or a small array inside the bounds: its short path
            out = plan.sample_inside(value, size, rng, on_outside, workers)
            if out is not NotImplemented:
                return as_integers(out, value, self.lower, self.upper) if self.integer else out
        q = self._value(value, on_outside)
        gen = as_generator(rng)
        if plan is not None:
            out = plan.sample(q, size, gen, workers)
            return as_integers(out, value, self.lower, self.upper) if self.integer else out
        return self._continuous_sample(q, size, gen, workers)

    def _continuous_sample(self, q: Any, size: Any, gen: Any, workers: int):
        raise NotImplementedError

    #: the family whose per-row release :meth:`sample_rows` draws (None: per-row bounds are
    #: not supported)
    _rows_family: ClassVar[str | None] = None

    @classmethod
    def sample_rows(cls, value: Any, lower: Any, upper: Any, *, epsilon: float,
                    sensitivity: float, delta: float = 0.0, rng: RNGLike = None,
                    on_outside: str = "clip", workers: int = 1, mode: str | None = None,
                    integer: Any = False):
        """Per-row bounds: one draw per element of ``value`` with its own bounds
        ``[lower_i, upper_i]`` (arrays broadcast together), each row released by this
        mechanism's law for its bounds (in the default mode the windowed grid law, one
        kernel for every wide row and one per narrow width; in ``mode='continuous'`` the
        scale calibrated per distinct width). The arguments are those of
        :func:`bndp.sample`, which dispatches array bounds here. ``integer``: the integer
        law (``True`` or a lattice step ``k``, an integer >= 1) on every row's lattice
        :math:`l_i + jk` (integral bounds and sensitivity; see the class's ``integer``);
        ``None``: chosen as :func:`bndp.sample` chooses it (an integer-typed ``value``
        with integer-typed bounds and an integral sensitivity).

        Returns
        -------
        ndarray of float64
            The broadcast shape of ``value``, ``lower`` and ``upper`` (with ``integer``, an
            integer-typed ``value``'s own integer dtype).

        Raises
        ------
        TypeError
            Where the mechanism has no per-row release.
        """
        if cls._rows_family is None:
            raise TypeError(f"{cls.__name__} has no per-row release (per-row bounds are for "
                            "BoundedLaplace and BoundedGaussian)")
        return rows.sample_rows(cls._rows_family, value, lower, upper, epsilon=epsilon,
                                sensitivity=sensitivity, delta=delta, rng=rng,
                                on_outside=on_outside, workers=workers, mode=mode,
                                integer=integer)


class ClippedLaw(LawMechanism):
    r"""The law of :math:`X = \mathrm{clip}(Y, l, u)`, :math:`Y` a continuous noise law
    around the true value (the "rectified" or "clamped" mechanisms), written once over the
    hooks of :math:`Y`: those of the class that follows this one in the MRO (a noise mixin
    such as :class:`bndp.mechanisms.unbounded.GaussianNoise`, a :class:`LawMechanism`
    itself, so that it precedes the default hooks), reached by ``super()``.

    With :math:`F`, :math:`S` the CDF and survival function of :math:`Y`, the law of
    :math:`X` has the density of :math:`Y` on :math:`(l, u)` and two atoms,
    :math:`P(X = l) = F(l)` and :math:`P(X = u) = S(u)`:

    .. math:: P(X \le x) = \begin{cases} 0 & x < l \\ F(x) & l \le x < u \\ 1 & x \ge u
              \end{cases}, \qquad P(X > x) = \begin{cases} 1 & x < l \\ S(x) & l \le x < u
              \\ 0 & x \ge u \end{cases}

    ``ppf(p)`` is the smallest ``x`` with :math:`P(X \le x) \ge p`: ``l`` for
    :math:`p \le F(l)`, ``u`` for :math:`p \ge F(u)`, :math:`F^{-1}(p)` between; ``isf(p)``
    the smallest ``x`` with :math:`P(X > x) \le p`: ``l`` for :math:`p \ge S(l)`, ``u`` for
    :math:`p \le S(u)`, :math:`S^{-1}(p)` between. The atoms are compared with ``p`` exactly
    (not through :math:`F^{-1}`), so a probability inside an atom maps to its bound.
    ``logpdf`` is the density with respect to Lebesgue measure on :math:`(l, u)` plus unit
    point masses at ``l`` and ``u``: there it is the log of the atom's mass.
    """

    __slots__ = ()
    lower: Any
    upper: Any
    _noise_hooks = ("_logpdf", "_cdf", "_sf", "_logcdf", "_logsf", "_ppf", "_isf")

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        after = cls.__mro__[cls.__mro__.index(ClippedLaw) + 1]
        missing = [h for h in ClippedLaw._noise_hooks
                   if after is LawMechanism or h not in after.__dict__]
        if missing:
            raise TypeError(f"{cls.__name__}: the class after ClippedLaw in the MRO "
                            f"({after.__name__}) must define the noise law's hooks {missing}")

    def _ends(self):
        return (np.asarray(self.lower, dtype=np.float64),
                np.asarray(self.upper, dtype=np.float64))

    def _atoms(self, q: np.ndarray):
        """``(P(X = lower), P(X = upper))`` at the true values ``q`` (their broadcast shape
        with the bounds)."""
        lo, hi = self._ends()
        shape = np.broadcast_shapes(np.shape(q), lo.shape, hi.shape)
        return (out(np.broadcast_to(super()._cdf(lo, q), shape).copy()),
                out(np.broadcast_to(super()._sf(hi, q), shape).copy()))

    def _piecewise(self, x: np.ndarray, below: float, inner: Any, above: float):
        lo, hi = self._ends()
        return np.where(x < lo, below, np.where(x >= hi, above, inner))

    def _logpdf(self, x: np.ndarray, q: np.ndarray):
        lo, hi = self._ends()
        with np.errstate(divide="ignore"):
            out = np.where((x > lo) & (x < hi), super()._logpdf(x, q), -np.inf)
            out = np.where(x == lo, super()._logcdf(lo, q), out)
            return np.where(x == hi, super()._logsf(hi, q), out)

    def _cdf(self, x: np.ndarray, q: np.ndarray):
        return self._piecewise(x, 0.0, super()._cdf(x, q), 1.0)

    def _sf(self, x: np.ndarray, q: np.ndarray):
        return self._piecewise(x, 1.0, super()._sf(x, q), 0.0)

    def _logcdf(self, x: np.ndarray, q: np.ndarray):
        return self._piecewise(x, -np.inf, super()._logcdf(x, q), 0.0)

    def _logsf(self, x: np.ndarray, q: np.ndarray):
        return self._piecewise(x, 0.0, super()._logsf(x, q), -np.inf)

    def _versus(self, p: np.ndarray, y: Any, q: np.ndarray, tail: str):
        """``(u, v)`` with :math:`p \\le G(y) \\iff u \\le v` (and ``<`` with ``<``), ``G``
        the noise's CDF (``tail="cdf"``) or survival function (``"sf"``): ``p`` against
        ``G(y)`` as ``cdf``/``sf`` return it (so that ``ppf(cdf(x))`` is ``x`` at an atom);
        where ``G(y)`` underflows to 0, :math:`\\log p` against :math:`\\log G(y)`, and
        where it rounds to 1, :math:`\\log(1 - G(y))` (the other tail) against
        :math:`\\log(1 - p)`: both in log space, exact where the double ``G(y)`` is not."""
        cdf = tail == "cdf"
        g = super()._cdf(y, q) if cdf else super()._sf(y, q)
        zero, one = g <= 0.0, g >= 1.0
        with np.errstate(divide="ignore"):
            log_g = super()._logcdf(y, q) if cdf else super()._logsf(y, q)
            log_other = super()._logsf(y, q) if cdf else super()._logcdf(y, q)
            u = np.where(zero, np.log(p), np.where(one, log_other, p))
            v = np.where(zero, log_g, np.where(one, np.log1p(-p), g))
        return u, v

    def _ppf(self, p: np.ndarray, q: np.ndarray):
        lo, hi = self._ends()
        with np.errstate(divide="ignore", invalid="ignore"):
            inner = np.clip(super()._ppf(p, q), lo, hi)
        u, v = self._versus(p, lo, q, "cdf")      # p <= F(lower): lower
        w, z = self._versus(p, hi, q, "cdf")      # p >= F(upper): upper
        return np.where(u <= v, lo, np.where(w >= z, hi, inner))

    def _isf(self, p: np.ndarray, q: np.ndarray):
        lo, hi = self._ends()
        with np.errstate(divide="ignore", invalid="ignore"):
            inner = np.clip(super()._isf(p, q), lo, hi)
        u, v = self._versus(p, lo, q, "sf")       # p >= S(lower): lower
        w, z = self._versus(p, hi, q, "sf")       # p <= S(upper): upper
        return np.where(u >= v, lo, np.where(w <= z, hi, inner))


class TruncatedNormalLaw(LawMechanism):
    r"""Hooks of the normal law :math:`N(q, \sigma^2)` conditioned on ``[lower, upper]``,
    in compiled code (:func:`bndp.distributions.truncnorm_eval` and
    :func:`~bndp.distributions.truncnorm_tail_eval`), over ``self._params(q)``, the list
    ``[q, sigma, lower, upper]``. The tails (``sf``, ``isf``, ``logcdf``, ``logsf``) are
    computed in log space, never as ``1 - cdf``; ``ppf`` reflects the law
    (:math:`X \sim TN(q; l, u)` is :math:`-Y`, :math:`Y \sim TN(-q; -u, -l)`) and takes the
    upper-tail quantile of :math:`Y`, so it is accurate for ``p`` far below 1e-16.
    """

    __slots__ = ()

    def _params(self, q: np.ndarray) -> list[Any]:
        raise NotImplementedError

    def _logpdf(self, x: np.ndarray, q: np.ndarray):
        return truncnorm_eval(0, x, *self._params(q))

    def _cdf(self, x: np.ndarray, q: np.ndarray):
        return truncnorm_eval(1, x, *self._params(q))

    def _ppf(self, p: np.ndarray, q: np.ndarray):
        q, s, lo, hi = self._params(q)
        return -np.asarray(truncnorm_tail_eval(3, p, -q, s, -np.asarray(hi), -np.asarray(lo)))

    def _mean(self, x: None, q: np.ndarray):
        return truncnorm_eval(3, 0.0, *self._params(q))

    def _variance(self, x: None, q: np.ndarray):
        return truncnorm_eval(4, 0.0, *self._params(q))

    def _logcdf(self, x: np.ndarray, q: np.ndarray):
        return truncnorm_tail_eval(0, x, *self._params(q))

    def _logsf(self, x: np.ndarray, q: np.ndarray):
        return truncnorm_tail_eval(1, x, *self._params(q))

    def _sf(self, x: np.ndarray, q: np.ndarray):
        return truncnorm_tail_eval(2, x, *self._params(q))

    def _isf(self, p: np.ndarray, q: np.ndarray):
        return truncnorm_tail_eval(3, p, *self._params(q))


# the samplers' docstrings ----------------------------------------------------------------
_SAMPLE_PARAMS = {
    "value": "value : float, array_like, pandas Series, pyarrow (Chunked)Array or masked array\n"
             "    {value}",
    "size": "size : None, int or tuple of int\n    {size}",
    "rng": "rng : None, int, SeedSequence, BitGenerator or Generator\n"
           "    Source of randomness; ``None`` is the secure default.",
    "on_outside": 'on_outside : {{"clip", "raise"}}',
    "workers": "workers : int, default 1\n    Threads for large arrays (``-1``: every CPU), "
               "each on its own child stream.",
    "nulls": 'nulls : {{"raise", "keep"}}, default "raise"\n    Missing values (NaN, None, '
             'pd.NA, Arrow nulls, masked entries): ``"raise"``\n    refuses them; ``"keep"`` '
             "leaves them missing in the result, drawing no noise\n    for them{nulls}.",
}


def sample_doc(summary: str = "Release ``value`` (scalar or array; one independent draw per "
               "element).", *, value: str = "True values; clipped into ``[lower, upper]`` "
               'unless ``on_outside="raise"``.', size: str = "Follows NumPy: the output shape, "
               "to which ``value`` must broadcast.", nulls: str = "",
               returns: str = "") -> Callable[[F], F]:
    """Decorator: the numpydoc docstring of a mechanism's ``sample``, its Parameters read
    from the signature (one template for every mechanism)."""
    def deco(func: F) -> F:
        code = func.__code__
        names = code.co_varnames[1:code.co_argcount + code.co_kwonlyargcount]
        fields = {"value": value, "size": size, "nulls": nulls}
        params = "\n".join(_SAMPLE_PARAMS[n].format(**fields) for n in names)
        func.__doc__ = (f"{summary}\n\nParameters\n----------\n{params}\n\nReturns\n-------\n"
                        "float, ndarray, Series, pyarrow array or masked array\n"
                        "    A float for a scalar ``value`` without ``size``, else float64 "
                        f"values of the\n    kind of ``value``{returns}.\n")
        return func
    return deco
