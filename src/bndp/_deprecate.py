"""Deprecation helpers: a renamed keyword that still works, with a warning, until its removal,
and a removed keyword refused with a message that names its replacement.

Nothing here imports the rest of bndp, so every layer may use it.
"""

from __future__ import annotations

import functools
import inspect
import warnings
from typing import Any, Callable, TypeVar

__all__ = ["positional_delta", "removed_parameter", "renamed_parameter"]

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


def positional_delta(old: tuple[str, ...], *, removed_in: str) -> Callable[[F], F]:
    """Decorate a calibration function whose ``delta`` is keyword-only and whose former
    positional order was ``old`` (the names of its parameters, ``delta`` among them).

    A call that passes no ``delta=`` but at least as many positional arguments as reach
    ``delta`` in ``old`` is a call in the former order: its positional arguments are passed
    on by the names of ``old``, with a ``DeprecationWarning`` that names the version
    ``removed_in`` that refuses it. A call with ``delta=`` (the only form the signature
    allows) goes straight through.
    """
    pos = old.index("delta")

    def deco(func: F) -> F:
        params = inspect.signature(func).parameters
        if "delta" not in params or params["delta"].kind != inspect.Parameter.KEYWORD_ONLY \
                or set(old) - set(params):
            raise TypeError(f"{func.__qualname__} must take keyword-only `delta` and {old}")
        order = ", ".join(old)
        now = ", ".join(p for p in params if params[p].kind in (
            inspect.Parameter.POSITIONAL_ONLY, inspect.Parameter.POSITIONAL_OR_KEYWORD))

        @functools.wraps(func)
        def wrapper(*args: Any, **kwargs: Any) -> Any:
            if "delta" in kwargs or len(args) <= pos:
                return func(*args, **kwargs)
            if len(args) > len(old):
                raise TypeError(f"{func.__name__}() takes at most {len(old)} positional "
                                f"arguments in its deprecated order; got {len(args)}")
            named = dict(zip(old, args))
            twice = sorted(set(named) & set(kwargs))
            if twice:
                raise TypeError(f"{func.__name__}() got `{twice[0]}` twice")
            warnings.warn(f"{func.__name__}({order}) with `delta` by position is deprecated "
                          f"and will be removed in bndp {removed_in}: call "
                          f"{func.__name__}({now}, delta=...)", DeprecationWarning,
                          stacklevel=2)
            return func(**named, **kwargs)

        return wrapper  # type: ignore[return-value]

    return deco
