"""Deprecation helpers: a renamed keyword that still works, with a warning, until its removal,
and a removed keyword refused with a message that names its replacement.

Nothing here imports the rest of bndp, so every layer may use it.
"""

from __future__ import annotations

import functools
import inspect
import warnings
from typing import Any, Callable, TypeVar

__all__ = ["removed_parameter", "renamed_parameter"]

F = TypeVar("F", bound=Callable[..., Any])


def renamed_parameter(old: str, new: str, *, removed_in: str) -> Callable[[F], F]:
    """Decorate a function or method whose parameter ``new`` was called ``old``.

    A call passing ``old=`` by keyword still works until version ``removed_in`` (the
    argument is passed on as ``new``) but emits a ``DeprecationWarning`` that says to pass
    ``new=`` and names the version that removes ``old``; giving both
    (``new`` by keyword or by position) raises ``TypeError``. Positional calls go straight
    through. The decorated function keeps its own signature (``inspect.signature`` follows
    ``__wrapped__``), which names ``new`` only. Put it above every other decorator that
    reads the arguments (such as ``columnar``), so that they see ``new`` only.
    """

    def deco(func: F) -> F:
        sig = inspect.signature(func).parameters
        params = list(sig)
        if new not in params or old in params:
            raise TypeError(f"{func.__qualname__} must take `{new}` and not `{old}`")
        method = params[:1] == ["self"]
        # `new` given by position as well: more positional arguments than this
        pos = params.index(new) if sig[new].kind in (
            inspect.Parameter.POSITIONAL_ONLY, inspect.Parameter.POSITIONAL_OR_KEYWORD) \
            else float("inf")

        def where(args: tuple) -> str:
            return _where(func, method, args)

        @functools.wraps(func)
        def wrapper(*args: Any, **kwargs: Any) -> Any:
            if old in kwargs:
                if new in kwargs or len(args) > pos:
                    raise TypeError(f"{where(args)}(): give `{new}` only (`{old}` is its "
                                    "deprecated spelling)")
                warnings.warn(f"{where(args)}({old}=...) is deprecated and will be removed in "
                              f"bndp {removed_in}: pass {new}=...", DeprecationWarning,
                              stacklevel=2)
                kwargs[new] = kwargs.pop(old)
            return func(*args, **kwargs)

        return wrapper  # type: ignore[return-value]

    return deco



def _where(func: Callable[..., Any], method: bool, args: tuple) -> str:
    """The name a message gives the call: ``f``, ``Cls`` (a constructor) or ``Cls.f``."""
    if method and args:
        cls = type(args[0]).__name__
        return cls if func.__name__ == "__init__" else f"{cls}.{func.__name__}"
    return func.__name__


def removed_parameter(old: str, new: str, *, removed_in: str) -> Callable[[F], F]:
    """Decorate a function or method that no longer takes the keyword ``old``.

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
