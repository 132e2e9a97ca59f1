"""The law of a mechanism's release, written once over per-family hooks (as ``scipy.stats``
does): the public methods (``pdf``, ``cdf``, ``sf``, ``ppf``, ``mean``, ...) validate their
arguments, route a grid law (``exact_plan``) to :func:`bndp.mechanisms.exact.grid_law`, and
otherwise call the family's hook ``_logpdf``, ``_cdf``, ``_ppf``, ``_sf``, ``_isf``,
``_mean``/``_bias``, ``_var`` (``_pdf``, ``_logsf`` and ``_logcdf`` have defaults).

Each concrete class gets its own copy of every law method, with a docstring filled from a
template with the class's summaries (``_law_docs``) and examples (``_law_examples``), so the
reference pages and the doctests show each family's formulas and examples.
"""

from __future__ import annotations

import sys
import types
from typing import Any, ClassVar

import numpy as np

from .._validation import as_float_array, as_probability
from . import exact
from ._base import Mechanism

__all__ = ["GridLawMechanism", "LawMechanism"]


def out(a: Any):
    """A float for a 0-d result, else a float64 array."""
    a = np.asarray(a, dtype=np.float64)
    return float(a) if a.ndim == 0 else a


#: what each law method takes: "x" (a point), "p" (a probability) or "" (the value only)
_ARG = {"pmf": "x", "logpdf": "x", "pdf": "x", "cdf": "x", "logcdf": "x", "sf": "x",
        "logsf": "x", "ppf": "p", "isf": "p", "mean": "", "bias": "", "variance": ""}

#: default summaries (a class overrides them in ``_law_docs``)
_SUMMARY = {
    "pmf": "Probability that the grid law releases ``x`` for true value ``value`` (0 off the "
           "grid). Exact mode only.",
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


def _doc(cls: type, name: str) -> str:
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


def _own_copy(cls: type, name: str) -> types.FunctionType:
    """The base method ``name`` as a function of ``cls``'s module (so that doctest finds its
    examples there), with the class's docstring and defaults."""
    base = next(k.__dict__[name] for k in cls.__mro__[1:] if name in k.__dict__)
    module = sys.modules[cls.__module__]
    f = types.FunctionType(base.__code__, module.__dict__, name,
                           cls._law_defaults.get(name, base.__defaults__), base.__closure__)
    f.__kwdefaults__ = base.__kwdefaults__
    f.__annotations__ = dict(base.__annotations__)
    f.__module__ = cls.__module__
    f.__qualname__ = f"{cls.__qualname__}.{name}"
    f.__doc__ = _doc(cls, name)
    return f


class LawMechanism(Mechanism):
    """A mechanism with a univariate law: the methods below are written once; subclasses
    implement the hooks of their family.

    Class attributes a concrete subclass sets: ``_law_docs`` (``{method: summary}``, the
    formulas of its family), ``_law_examples`` (``{method: doctest text}``), ``_value_doc``
    (what a true value may be) and ``_law_defaults`` (``{method: defaults tuple}``).
    """

    __slots__ = ()
    exact_plan: Any = None
    _law_methods: ClassVar[tuple[str, ...]] = ("logpdf", "pdf", "cdf", "logcdf", "sf",
                                               "logsf", "ppf", "isf", "mean", "bias",
                                               "variance")
    _law_docs: ClassVar[dict[str, str]] = {}
    _law_examples: ClassVar[dict[str, str]] = {}
    _law_defaults: ClassVar[dict[str, tuple]] = {}
    _value_doc: ClassVar[str] = " (clipped into the bounds)"

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        if "_law_docs" not in cls.__dict__:
            return  # an intermediate class: its concrete subclasses get the copies
        for name in cls._law_methods:
            if name not in cls.__dict__:
                setattr(cls, name, _own_copy(cls, name))

    # the public law: these bodies use no module globals (see _own_copy) ------------------
    def logpdf(self, x: Any, value: Any):
        return self._law("logpdf", x, value)

    def pdf(self, x: Any, value: Any):
        return self._law("pdf", x, value)

    def cdf(self, x: Any, value: Any):
        return self._law("cdf", x, value)

    def logcdf(self, x: Any, value: Any):
        return self._law("logcdf", x, value)

    def sf(self, x: Any, value: Any):
        return self._law("sf", x, value)

    def logsf(self, x: Any, value: Any):
        return self._law("logsf", x, value)

    def ppf(self, p: Any, value: Any):
        return self._law("ppf", p, value)

    def isf(self, p: Any, value: Any):
        return self._law("isf", p, value)

    def mean(self, value: Any):
        return self._law("mean", None, value)

    def bias(self, value: Any):
        return self._law("bias", None, value)

    def variance(self, value: Any):
        return self._law("variance", None, value)

    # routing -----------------------------------------------------------------------------
    def _law(self, what: str, x: Any, value: Any):
        q = self._value(value)
        if x is not None:
            x = as_probability(x) if _ARG[what] == "p" else as_float_array(x, "x")
        if self.exact_plan is not None:
            return out(self._grid(what, x, q))
        return out(getattr(self, "_" + what)(x, q))

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

    def pmf(self, x: Any, value: Any):
        return self._law("pmf", x, value)

    def _pmf(self, x: np.ndarray, q: np.ndarray):
        raise NotImplementedError("the continuous law has a density: use pdf")
