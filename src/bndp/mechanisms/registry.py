"""The mechanism registry: the one mapping from a mechanism's name (in a release spec, in
:func:`bndp.sample`, on the command line) to its class.

A release spec (frames, Spark, Dask, the CLI's spec files) accepts every name of
:data:`REGISTRY`: the built-in names (``MECHANISMS``) and those added since by
:func:`register`, looked up when the spec is read (:func:`mechanism_names`).
``SAMPLE_MECHANISMS`` lists the names :func:`bndp.sample` and the keyword forms accept (a
column with lower and upper bounds, drawn by one mechanism). The guide to adding a
mechanism is ``docs/extending.md``.
"""

from __future__ import annotations

import inspect
import re
from typing import Any

from ._base import Mechanism
from .gaussian import BoundedGaussian
from .laplace import BoundedLaplace
from .range import ConstrainedLaplace

__all__ = ["REGISTRY", "MECHANISMS", "SAMPLE_MECHANISMS", "ALIASES", "mechanism_key",
           "mechanism_class", "mechanism_names", "build_mechanism", "register", "unregister"]

#: Name -> mechanism class.
REGISTRY: dict[str, type] = {
    "laplace": BoundedLaplace,
    "gaussian": BoundedGaussian,
    "constrained_laplace": ConstrainedLaplace,
}

#: The built-in names (a release spec also accepts every name :func:`register` added
#: since: :func:`mechanism_names`).
MECHANISMS: tuple[str, ...] = tuple(REGISTRY)

#: The names :func:`bndp.sample` (and the engines' and CLI's keyword forms) accept.
SAMPLE_MECHANISMS: tuple[str, ...] = ("laplace", "gaussian")

#: The explicit spellings of the bounded mechanisms' names, accepted wherever the short
#: ones are: ``"bounded_laplace"`` is :class:`bndp.BoundedLaplace` and
#: ``"bounded_gaussian"`` :class:`bndp.BoundedGaussian` (:class:`bndp.Laplace` and
#: :class:`bndp.Gaussian` are the unbounded mechanisms, which no spec releases). A release
#: records the short name.
ALIASES: dict[str, str] = {"bounded_laplace": "laplace", "bounded_gaussian": "gaussian"}


def mechanism_key(name: Any) -> Any:
    """The registry's name for ``name`` (an :data:`ALIASES` spelling or the name itself)."""
    return ALIASES.get(name, name) if isinstance(name, str) else name


def _accepted(allowed: tuple[str, ...]) -> tuple[str, ...]:
    """``allowed`` with the explicit spellings of its names, for messages."""
    return tuple(a for a, k in ALIASES.items() if k in allowed) + allowed


def mechanism_names() -> tuple[str, ...]:
    """Every name a release spec accepts now: the built-in names, then those
    :func:`register` added, in the order they were registered.

    Returns
    -------
    tuple of str
        The names (without the :data:`ALIASES` spellings).

    Examples
    --------
    >>> import bndp
    >>> bndp.mechanisms.mechanism_names()[:3]
    ('laplace', 'gaussian', 'constrained_laplace')
    """
    return tuple(REGISTRY)


def mechanism_class(name: Any, allowed: tuple[str, ...] | None = None) -> type:
    """The class registered under ``name`` (or its :data:`ALIASES` spelling);
    ``ValueError`` for a name not in ``allowed`` (default: every name registered now,
    :func:`mechanism_names`)."""
    if allowed is None:
        allowed = mechanism_names()
    key = mechanism_key(name)
    if not isinstance(key, str) or key not in allowed:
        raise ValueError(f"`mechanism` must be one of {_accepted(allowed)}; got {name!r}")
    return REGISTRY[key]


def build_mechanism(mechanism: str, epsilon: float, sensitivity: float, lower: float,
                    upper: float, delta: float, mode: str | None = "exact") -> Any:
    """The scalar-bounds mechanism of the keyword form (``"laplace"`` or ``"gaussian"``),
    calibrated once."""
    cls = mechanism_class(mechanism, SAMPLE_MECHANISMS)
    if cls is BoundedLaplace:
        return BoundedLaplace(epsilon, sensitivity=sensitivity, lower=lower, upper=upper,
                              delta=delta, mode=mode)
    if delta != 0:
        raise ValueError("the bounded Gaussian mechanism is pure epsilon-DP: `delta` must be 0; "
                         f"got {delta!r}")
    m = BoundedGaussian(epsilon, sensitivity=sensitivity, lower=lower, upper=upper, mode=mode)
    if m.dim is not None:
        raise ValueError("`lower` and `upper` must be scalars for a DataFrame column")
    return m


#: What a registered name looks like: lower case letters, digits and underscores, starting
#: with a letter (a key of a TOML or JSON spec as it is, and a name the messages can quote).
_NAME = re.compile(r"[a-z][a-z0-9_]*\Z")

#: The constructor call the release spec makes: ``cls(epsilon, sensitivity=, lower=,
#: upper=)`` plus the column's options.
_SPEC_CALL = ((1.0,), {"sensitivity": 1.0, "lower": 0.0, "upper": 1.0})


def _check_class(name: str, cls: Any) -> None:
    """Refuse (``TypeError``) a class that a release spec could not build, draw from or
    charge for: not a :class:`bndp.Mechanism` subclass, a constructor that does not take
    ``(epsilon, *, sensitivity, lower, upper)``, no ``sample(value, rng=,
    on_outside=)``, no ``privacy_loss()``."""
    if not inspect.isclass(cls):
        raise TypeError(f"register({name!r}, cls): `cls` must be a class (a subclass of "
                        f"bndp.Mechanism); got {type(cls).__name__} {cls!r}")
    if not issubclass(cls, Mechanism):
        raise TypeError(f"register({name!r}, {cls.__name__}): the class must subclass "
                        "bndp.Mechanism (immutable, repr, equality and hashing as every "
                        "mechanism of a release)")
    args, kwargs = _SPEC_CALL
    try:
        inspect.signature(cls).bind(*args, **kwargs)
    except TypeError as exc:
        raise TypeError(f"register({name!r}, {cls.__name__}): its constructor must take "
                        "cls(epsilon, *, sensitivity, lower, upper, ...) as a release spec "
                        f"calls it ({exc})") from None
    except ValueError:   # no signature to read (a class built in C): nothing to check
        pass
    sample = getattr(cls, "sample", None)
    if not callable(sample):
        raise TypeError(f"register({name!r}, {cls.__name__}): the class has no "
                        "sample(value, size=None, rng=None, on_outside='clip') method")
    params = inspect.signature(sample).parameters
    has_var_kw = any(p.kind is inspect.Parameter.VAR_KEYWORD for p in params.values())
    missing = [k for k in ("rng", "on_outside") if k not in params and not has_var_kw]
    if missing:
        raise TypeError(f"register({name!r}, {cls.__name__}): its sample() must take the "
                        f"keyword(s) {', '.join(missing)} (a release passes its generator "
                        "and the column's on_outside)")
    if not callable(getattr(cls, "privacy_loss", None)):
        raise TypeError(f"register({name!r}, {cls.__name__}): the class has no "
                        "privacy_loss() method (the certified worst-case loss, at most "
                        "the epsilon it is built with)")


def register(name: str, cls: type) -> type:
    """Register the mechanism class ``cls`` under ``name``: from then on a release spec
    (:func:`bndp.privatize`, Spark, Dask, ``bndp privatize --spec``) accepts
    ``{"mechanism": name, ...}`` and builds the column's mechanism as
    ``cls(epsilon, sensitivity=..., lower=..., upper=..., **options)``, ``options`` being
    the column's other keys that the constructor takes (and ``delta`` where it takes one;
    a column with a nonzero ``delta`` is refused otherwise).

    Parameters
    ----------
    name : str
        Lower case letters, digits and underscores, starting with a letter; not a name
        already registered, nor one of :data:`ALIASES`.
    cls : type
        A subclass of :class:`bndp.Mechanism` whose constructor takes ``(epsilon, *,
        sensitivity, lower, upper)``, with ``sample(value, size=None, rng=None,
        on_outside="clip")`` and ``privacy_loss()`` (the certified worst-case privacy
        loss, at most ``epsilon``; a release refuses a column where it is more).
        ``docs/extending.md``
        lists the rest of what a mechanism offers and the conformance battery that
        checks it.

    Returns
    -------
    type
        ``cls``.

    Raises
    ------
    TypeError
        ``name`` is not a string, or ``cls`` is not a class offering the above.
    ValueError
        ``name`` is malformed or already taken.

    Examples
    --------
    >>> import bndp
    >>> from bndp.mechanisms import register, unregister
    >>> class Mine(bndp.BoundedLaplace):
    ...     pass
    >>> register("mine", Mine) is Mine
    True
    >>> register("laplace", Mine)
    Traceback (most recent call last):
    ...
    ValueError: mechanism name 'laplace' is already registered (to BoundedLaplace)...
    >>> unregister("mine")
    """
    if not isinstance(name, str):
        raise TypeError(f"register(name, cls): `name` must be a string; got "
                        f"{type(name).__name__}")
    if not _NAME.match(name):
        raise ValueError(f"register(name, cls): `name` must be lower case letters, digits "
                         f"and underscores, starting with a letter; got {name!r}")
    taken = REGISTRY.get(mechanism_key(name))
    if taken is not None:
        spelling = f" (an alias of {ALIASES[name]!r})" if name in ALIASES else ""
        raise ValueError(f"mechanism name {name!r} is already registered{spelling} (to "
                         f"{taken.__name__}); choose another name, or unregister() a name "
                         "you registered yourself first")
    _check_class(name, cls)
    REGISTRY[name] = cls
    return cls


def unregister(name: str) -> None:
    """Remove a name :func:`register` added: a release spec then refuses it.

    Parameters
    ----------
    name : str
        A name :func:`register` added (or its :data:`ALIASES` spelling).

    Returns
    -------
    None

    Raises
    ------
    TypeError
        ``name`` is not a string.
    ValueError
        ``name`` is a built-in name (:data:`MECHANISMS`), which cannot be removed, or is
        not registered.

    Examples
    --------
    >>> import bndp
    >>> from bndp.mechanisms import register, unregister, mechanism_names
    >>> _ = register("my_laplace", type("MyLaplace", (bndp.BoundedLaplace,), {}))
    >>> "my_laplace" in mechanism_names()
    True
    >>> unregister("my_laplace")
    >>> "my_laplace" in mechanism_names()
    False
    >>> unregister("laplace")
    Traceback (most recent call last):
    ...
    ValueError: unregister('laplace'): a built-in mechanism cannot be removed
    """
    if not isinstance(name, str):
        raise TypeError(f"unregister(name): `name` must be a string; got {type(name).__name__}")
    key = mechanism_key(name)
    if key in MECHANISMS:
        raise ValueError(f"unregister({name!r}): a built-in mechanism cannot be removed")
    if key not in REGISTRY:
        raise ValueError(f"unregister({name!r}): no such mechanism is registered; registered "
                         f"names: {', '.join(mechanism_names())}")
    del REGISTRY[key]
