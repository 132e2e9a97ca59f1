"""Deprecation helpers (issue 23: one name per meaning, keyword-only constructors).

Nothing here imports the rest of bndp, so every layer may use it.
"""

from __future__ import annotations

import functools
import inspect
import warnings
from typing import Any, Callable, TypeVar

__all__ = ["keyword_only_after", "renamed_keyword", "renamed_parameter"]

F = TypeVar("F", bound=Callable[..., Any])


def keyword_only_after(*legacy: str, n: int = 1) -> Callable[[F], F]:
    """Decorate an ``__init__`` whose parameters after the first ``n`` are keyword-only.

    ``legacy`` names, in order, the parameters that used to follow them positionally: such
    a positional call still works for this release (the arguments are passed on by those
    names) but emits a ``DeprecationWarning`` that spells the keyword form. The decorated
    ``__init__`` keeps its own signature (``inspect.signature`` follows ``__wrapped__``).
    """

    def deco(init: F) -> F:
        @functools.wraps(init)
        def wrapper(self: Any, *args: Any, **kwargs: Any) -> Any:
            if len(args) > n:
                cls = type(self).__name__
                extra = args[n:]
                if len(extra) > len(legacy):
                    raise TypeError(f"{cls}() takes at most {n + len(legacy)} positional "
                                    f"arguments ({n} from the next release); got {len(args)}")
                names = legacy[: len(extra)]
                for k in names:
                    if k in kwargs:
                        raise TypeError(f"{cls}() got multiple values for argument {k!r}")
                first = ", ".join(init.__code__.co_varnames[1:n + 1])
                keywords = ", ".join(f"{k}=..." for k in names)
                warnings.warn(
                    f"passing {', '.join(names)} to {cls}() by position is deprecated (they "
                    f"become keyword-only in the next release): write "
                    f"{cls}({first}, {keywords})", DeprecationWarning, stacklevel=2)
                kwargs.update(zip(names, extra))
                args = args[:n]
            return init(self, *args, **kwargs)

        return wrapper  # type: ignore[return-value]

    return deco


def renamed_parameter(old: str, new: str) -> Callable[[F], F]:
    """Decorate a function or method whose parameter ``new`` was called ``old``.

    A call passing ``old=`` by keyword still works for this release (the argument is passed
    on as ``new``) but emits a ``DeprecationWarning`` that says to pass ``new=``; giving both
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
            if method and args:
                return f"{type(args[0]).__name__}.{func.__name__}"
            return func.__name__

        @functools.wraps(func)
        def wrapper(*args: Any, **kwargs: Any) -> Any:
            if old in kwargs:
                if new in kwargs or len(args) > pos:
                    raise TypeError(f"{where(args)}(): give `{new}` only (`{old}` is its "
                                    "deprecated spelling)")
                warnings.warn(f"{where(args)}({old}=...) is deprecated: pass {new}=...",
                              DeprecationWarning, stacklevel=2)
                kwargs[new] = kwargs.pop(old)
            return func(*args, **kwargs)

        return wrapper  # type: ignore[return-value]

    return deco


def renamed_keyword(where: str, old: str, new: str, old_value: Any, new_value: Any,
                    default: Any, stacklevel: int = 3) -> Any:
    """The value of keyword ``new`` when the caller may still use its deprecated spelling
    ``old`` (``old_value`` is None when not given): warns for ``old``, refuses both."""
    if old_value is None:
        return new_value
    if new_value is not default and new_value != old_value:
        raise TypeError(f"{where}: give `{new}` only (`{old}` is its deprecated spelling)")
    warnings.warn(f"{where}({old}=...) is deprecated: pass {new}=...", DeprecationWarning,
                  stacklevel=stacklevel)
    return old_value

