"""Removal helpers: a removed keyword, and a removed attribute or module name, refused with a
message that names the replacement and the version that removed it.

Nothing here imports the rest of bndp, so every layer may use it.
"""

from __future__ import annotations

import functools
import inspect
from typing import Any, Callable, TypeVar

__all__ = ["removed_attribute", "removed_parameter"]

F = TypeVar("F", bound=Callable[..., Any])


def _where(func: Callable[..., Any], method: bool, args: tuple) -> str:
    """The name a message gives the call: ``f``, ``Cls`` (a constructor) or ``Cls.f``."""
    if method and args:
        cls = type(args[0]).__name__
        return cls if func.__name__ == "__init__" else f"{cls}.{func.__name__}"
    return func.__name__


def removed_parameter(old: str, new: str, *, removed_in: str) -> Callable[[F], F]:
    """Decorate a function or method that refuses the removed keyword ``old``.

    A call passing ``old=`` raises ``TypeError`` naming ``new`` and the version
    ``removed_in`` that removed ``old`` (instead of Python's "unexpected keyword argument",
    or of ``old`` being passed on through ``**kwargs``). Every other call goes straight
    through; the signature (``inspect.signature`` follows ``__wrapped__``) is the
    function's own.
    """

    def deco(func: F) -> F:
        params = list(inspect.signature(func).parameters)
        if new not in params or old in params:
            raise TypeError(f"{func.__qualname__} must take `{new}` and not `{old}`")
        method = params[:1] == ["self"]

        @functools.wraps(func)
        def wrapper(*args: Any, **kwargs: Any) -> Any:
            if old in kwargs:
                raise TypeError(f"{_where(func, method, args)}() takes no `{old}` (removed "
                                f"in bndp {removed_in}): pass {new}=...")
            return func(*args, **kwargs)

        return wrapper  # type: ignore[return-value]

    return deco


def removed_attribute(owner: str, name: str, removed: dict[str, tuple[str, str]],
                      obj: Any = None) -> AttributeError:
    """The ``AttributeError`` that a ``__getattr__`` raises for ``name``, a missing attribute
    of ``owner`` (a class or module name).

    ``removed`` maps each removed name to ``(its replacement, the version that removed it)``:
    for those the message names both; any other name gets Python's own message (``'Cls'
    object has no attribute 'x'`` when ``obj`` is the instance, ``module 'm' has no attribute
    'x'`` otherwise). ``name`` and ``obj`` are set on the error as Python sets them.
    """
    if name in removed:
        new, version = removed[name]
        msg = f"{owner}.{name} was removed in bndp {version}: use {new}"
    elif obj is not None:
        msg = f"{owner!r} object has no attribute {name!r}"
    else:
        msg = f"module {owner!r} has no attribute {name!r}"
    return AttributeError(msg, name=name, obj=obj)
