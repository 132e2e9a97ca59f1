"""The command line's errors and exit statuses (one line on stderr, see :mod:`bndp.cli`)."""

from __future__ import annotations

from typing import Any


EXIT_IO = 1
EXIT_USAGE = 2
EXIT_DATA = 3
EXIT_BUDGET = 4
EXIT_RECORDED = 5
_EXIT_CODES = ("Exit status: 0 success; 2 usage error (command line, spec file, arguments); "
               "3 data error (a cell, the input's format or schema, such as a column not "
               "found); 4 the release would exceed the budget (nothing written); 5 the "
               "--release-id is already recorded under the budget (nothing written); 1 "
               "other errors (I/O, such as a missing input file or output directory, or a "
               "budget store that cannot be reached); 130/143 interrupted (SIGINT/SIGTERM; "
               "nothing written). Errors are one line on stderr.")


class CLIError(Exception):
    """A usage error (command line, spec file, arguments): one line on stderr, exit 2."""

    code = EXIT_USAGE


class DataError(CLIError):
    """An error in the input data (a cell, the file's format or schema): exit 3."""

    code = EXIT_DATA


class FileError(CLIError):
    """An I/O error (an input file or an output directory that does not exist): exit 1."""

    code = EXIT_IO


class _Terminated(BaseException):
    """Raised from the SIGTERM handler so that cleanup runs (exit status 143)."""


def _need(module: str, extra: str, what: str) -> Any:
    import importlib

    try:
        return importlib.import_module(module)
    except ImportError:
        raise CLIError(f"{what} needs {module.split('.')[0]}; install it with: "
                       f"pip install 'bndp[{extra}]'") from None


# the privatize options that set the --column columns' settings (refused with --spec)
_COLUMN_OPTIONS = ("mechanism", "epsilon", "sensitivity", "delta", "lower", "upper")


def _column_flags(msg: str) -> str:
    """A spec error about a --column column, in this command's words: ``spec column 'age',
    key 'epsilon'`` becomes ``--column 'age', --epsilon``."""
    import re

    def flag(m: "re.Match[str]") -> str:
        key = m.group(2)
        return f"--column {m.group(1)}" + ("" if key is None else
                                            ", --" + key.replace("_", "-"))

    return re.sub(r"spec column ('(?:[^'\\]|\\.)*'|\"[^\"]*\")(?:, key '(\w+)')?", flag, msg)


def _mode_as_flag(msg: str) -> str:
    """A mechanism's message with its ``mode=`` keyword written as this command's flag."""
    for mode in ("exact", "continuous"):
        msg = msg.replace(f"mode='{mode}'", f"--mode {mode}")
    return msg


def _cell_error(path: str, row: int, column: str, what: str) -> CLIError:
    return DataError(f"{path}: row {row:,} (data rows counted from 1), "
                     f"column {column!r}: {what}")


def _num(x: Any) -> str:
    """A number as Python writes a float (``9.0``), never as a NumPy scalar's repr."""
    return repr(float(x))


def _fmt_bound(b: Any) -> str:
    return repr(b) if isinstance(b, str) else f"{b:g}"


def _one_line(exc: BaseException) -> str:
    text = " ".join(str(exc).split())
    return text or type(exc).__name__


def int_at_least(minimum: int, what: str) -> Any:
    """An ``argparse`` type: an integer ``>= minimum`` (``what`` names it in the error)."""
    import argparse

    def parse(text: str) -> int:
        try:
            v = int(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"expected {what}; got {text!r}") from None
        if v < minimum:
            raise argparse.ArgumentTypeError(f"expected {what}; got {v}")
        return v
    return parse
