"""Common behaviour of bndp's mechanisms: immutable, keyword-callable, ``repr`` that reads as
the constructor call, ``sample``/``bias``/``variance``/``mse``."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, ClassVar

import numpy as np

from .._deprecate import removed_attribute
from .._validation import apply_domain
from .._values import WideValues, as_values, snap_plan


class Mechanism:
    """Base class. Subclasses set their attributes once in ``__init__`` through ``_set``
    and list their constructor arguments in ``_init_args`` (for ``repr``).

    Examples
    --------
    >>> import bndp
    >>> m = bndp.BoundedLaplace(epsilon=1.0, sensitivity=1.0, lower=0.0, upper=10.0)
    >>> isinstance(m, bndp.Mechanism)
    True
    >>> m.epsilon = 2.0
    Traceback (most recent call last):
    ...
    AttributeError: BoundedLaplace is immutable (...); create a new mechanism instead
    """

    __slots__ = ()
    _init_args: tuple[str, ...] = ()
    #: constructor arguments left out of ``repr`` while they hold this default (arguments
    #: added after a release, so that the ``repr`` of a mechanism that does not use them
    #: reads as before)
    _repr_defaults: ClassVar[dict[str, Any]] = {}
    #: removed attribute names: {name: (its replacement, the version that removed it)}
    _removed_attributes: ClassVar[dict[str, tuple[str, str]]] = {}

    if TYPE_CHECKING:  # attributes are set once through _set(): typed as Any for checkers
        def __getattr__(self, name: str) -> Any: ...

    def __init_subclass__(cls, **kwargs: Any) -> None:
        # A removed name is a class attribute that refuses with an error naming its
        # replacement. Not a __getattr__: defining one makes every attribute read of every
        # instance go through a slower slot (about 16 % on one value's draw).
        super().__init_subclass__(**kwargs)
        for name in cls.__dict__.get("_removed_attributes", {}):
            setattr(cls, name, _Removed(name))

    def __dir__(self) -> list[str]:
        gone = {n for c in type(self).__mro__ for n in c.__dict__.get("_removed_attributes", {})}
        return [n for n in super().__dir__() if n not in gone]

    def __setattr__(self, name: str, value: Any) -> None:
        raise AttributeError(
            f"{type(self).__name__} is immutable (its noise scale is calibrated to its "
            "parameters); create a new mechanism instead"
        )

    def __delattr__(self, name: str) -> None:
        raise AttributeError(f"{type(self).__name__} is immutable")

    def _set(self, **values: Any) -> None:
        for k, v in values.items():
            object.__setattr__(self, k, v)

    def __repr__(self) -> str:
        def fmt(v: Any) -> str:
            if isinstance(v, np.ndarray):
                return repr(v.tolist())
            return repr(v)

        hide = self._repr_defaults
        args = ", ".join(f"{k}={fmt(getattr(self, k))}" for k in self._init_args
                         if k not in hide or getattr(self, k) != hide[k])
        return f"{type(self).__name__}({args})"

    def __eq__(self, other: object) -> bool:
        if type(other) is not type(self):
            return NotImplemented
        return all(np.array_equal(getattr(self, k), getattr(other, k)) for k in self._init_args)

    def __hash__(self) -> int:
        return hash((type(self).__name__,) + tuple(
            tuple(np.ravel(getattr(self, k)).tolist()) if isinstance(getattr(self, k), np.ndarray)
            else getattr(self, k) for k in self._init_args))

    # helpers shared by subclasses -----------------------------------------------------
    def _true_values(self, value: Any) -> np.ndarray:
        """``value`` as float64: values that are not doubles (wide integers, Decimal, ...)
        each rounded onto this mechanism's grid from its exact value
        (:mod:`bndp._values`)."""
        v = as_values(value, "value")
        if isinstance(v, WideValues):
            return snap_plan(getattr(self, "exact_plan", None), v, self.lower, self.upper)
        return v

    def _value(self, value: Any, on_outside: str = "clip") -> np.ndarray:
        v = self._true_values(value)
        return apply_domain(v, self.lower, self.upper, on_outside)

    def mse(self, value: Any):
        """Mean squared error E[(M(q) - q)^2] = variance + bias^2."""
        out = np.asarray(self.variance(value)) + np.asarray(self.bias(value)) ** 2
        return float(out) if out.ndim == 0 else out


class _Removed:
    """A removed attribute of a mechanism class (``_removed_attributes``): reading it
    raises the ``AttributeError`` that names its replacement (so ``hasattr`` is False)."""

    def __init__(self, name: str) -> None:
        self.name = name

    def __get__(self, obj: Any, owner: type) -> Any:
        raise removed_attribute(owner.__name__, self.name,
                                getattr(owner, "_removed_attributes"), obj)
