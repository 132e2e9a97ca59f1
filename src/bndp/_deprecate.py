"""Deprecation helpers (issue 23: one name per meaning, keyword-only constructors).

Nothing here imports the rest of bndp, so every layer may use it.
"""

from __future__ import annotations

import functools
import warnings
from typing import Any, Callable, TypeVar

__all__ = ["keyword_only_after", "renamed_keyword"]

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

