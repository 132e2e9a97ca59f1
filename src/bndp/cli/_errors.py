"""The command line's errors and exit statuses (one line on stderr, see :mod:`bndp.cli`)."""

from __future__ import annotations

import argparse
import difflib
import os
import re
import sys
from typing import Any, Iterable, NoReturn


EXIT_IO = 1
EXIT_USAGE = 2
EXIT_DATA = 3
EXIT_BUDGET = 4
EXIT_RECORDED = 5
#: the reader of stdout closed it early (a broken pipe): 128 + SIGPIPE, the status a shell
#: reports for a command that a closed pipe ended
EXIT_PIPE = 141
_EXIT_CODES = ("Exit status: 0 success; 2 usage error (command line, spec file, arguments); "
               "3 data error (a cell, the input's format or schema, such as a column not "
               "found, or an input without data rows: see --allow-empty); 4 the release would exceed the budget, or the persistent budget "
               "named does not exist (nothing written); 5 the --release-id is already "
               "recorded under the budget (nothing written); 1 other errors (I/O, such as a "
               "missing input file or output directory, or a budget store that cannot be "
               "reached or does not exist); 130/143 interrupted (SIGINT/SIGTERM; "
               "nothing written); 141 the reader of stdout closed it early (a broken pipe, "
               "as '| head' does; nothing more is printed). Errors are one line on stderr.")


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


def _column_flags(exc: BaseException) -> str:
    """A spec error about a --column column, in this command's words: the error's column
    and key (:class:`bndp.SpecError`'s fields) as the options that set them, ``--column
    'age', --epsilon: ...``; any other error's message as it is (with ``mode=`` as
    ``--mode``)."""
    column, key, detail = (getattr(exc, f, None) for f in ("column", "key", "detail"))
    if column is None or detail is None:
        return _mode_as_flag(" ".join(str(exc).split()))
    where = f"--column {column!r}" + ("" if key is None else ", --" + key.replace("_", "-"))
    return f"{where}: {_mode_as_flag(' '.join(detail.split()))}"


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
    """An error's message on one line, without the secrets of any PostgreSQL URL given (a
    library's message may quote it)."""
    from .._ledger._backends import scrub

    text = scrub(" ".join(str(exc).split()))
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


# ------------------------------------------------------------------------------------------
# the command line's own errors: one line, with the nearest valid choice or option
# ------------------------------------------------------------------------------------------
def _nearest(word: str, candidates: Iterable[Any]) -> str | None:
    """The candidate closest to ``word`` (:func:`difflib.get_close_matches`), or None."""
    near = difflib.get_close_matches(word, [str(c) for c in candidates], n=1)
    return near[0] if near else None


#: the words of a value that its option's type refused (``float``, ``int``)
_TYPE_WORDS = {float: "a number", int: "an integer"}


#: a negative number as ``float()`` reads it: ``-1``, ``-0.5``, ``-.5``, ``-1e3``, ``-inf``,
#: ``-infinity``, ``-nan`` (any case)
_NEGATIVE_NUMBER = re.compile(r"^-(?:(?:\d[\d_]*(?:\.[\d_]*)?|\.\d[\d_]*)(?:e[+-]?\d[\d_]*)?"
                              r"|inf(?:inity)?|nan)$", re.IGNORECASE)


class Parser(argparse.ArgumentParser):
    """The command line's argument parser (its subcommands' too): every error is one line on
    stderr, ``bndp: error: ...``, with exit status 2 (no usage text); an invalid choice
    names the nearest valid one (``--mechanism: invalid choice 'lapalce' (did you mean
    'laplace'?)``), else lists them.

    A word that is a negative number (``-1``, ``-1e3``, ``-inf``) is an option's value or
    a positional argument, never an option: ``--lower -inf`` and ``--upper -1e3`` read as
    ``--lower=-inf`` and ``--upper=-1e3`` do (no option of the command line looks like a
    number)."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        # argparse reads a word starting with '-' as a value only where this pattern
        # matches it (by default integers and decimals, not -1e3 or -inf)
        self._negative_number_matcher = _NEGATIVE_NUMBER

    def _check_value(self, action: argparse.Action, value: Any) -> None:
        choices = action.choices
        if choices is not None and value not in choices:
            near = _nearest(str(value), choices)  # type: ignore[arg-type]
            hint = (f"did you mean {near!r}?" if near is not None else
                    "choose from " + ", ".join(repr(str(c)) for c in choices))  # type: ignore[union-attr]
            raise argparse.ArgumentError(action, f"invalid choice {value!r} ({hint})")

    def _get_value(self, action: argparse.Action, arg_string: str) -> Any:
        # a value that float() or int() refuses: "expected a number; got 'abc'"
        try:
            return super()._get_value(action, arg_string)  # type: ignore[misc]
        except argparse.ArgumentError:
            what = _TYPE_WORDS.get(action.type)  # type: ignore[call-overload]
            if what is None:
                raise
            raise argparse.ArgumentError(action, f"expected {what}; got {arg_string!r}") from None

    def _parse_known_args(self, *args: Any, **kwargs: Any) -> Any:
        # an argument's error names the option alone: "--epsilon: ...", not "argument
        # --epsilon: ..."
        try:
            return super()._parse_known_args(*args, **kwargs)  # type: ignore[misc]
        except argparse.ArgumentError as err:
            self.error(err.message if err.argument_name is None
                       else f"{err.argument_name}: {err.message}")

    def error(self, message: str) -> NoReturn:
        self.exit(EXIT_USAGE, f"bndp: error: {_one_line(Exception(message))}\n")

    def parse_known_args(self, args: Any = None, namespace: Any = None) -> Any:
        """As :meth:`argparse.ArgumentParser.parse_known_args`; a (sub)command without
        subcommands of its own first refuses an unknown ``--option`` (before its missing
        required arguments), naming the nearest option it has."""
        if self._subparsers is None:
            argv = list(sys.argv[1:] if args is None else args)
            known = [o for a in self._actions for o in a.option_strings if o.startswith("--")]
            for arg in argv:
                if arg == "--":
                    break
                name = arg.split("=", 1)[0]
                # argparse's reading: a word with a space is a positional; a prefix of
                # exactly one option abbreviates it (several: argparse's own error)
                if not arg.startswith("--") or " " in arg or name in known or any(
                        o.startswith(name) for o in known):
                    continue
                near = _nearest(name, known)
                hint = (f"did you mean {near!r}?" if near is not None else
                        f"see '{self.prog} --help'")
                self.error(f"unrecognized option {name!r} ({hint})")
        return super().parse_known_args(args, namespace)


def _stdout_to_devnull() -> None:
    """After a broken pipe: point the stdout descriptor at the null device, so that the
    interpreter's flush at exit does not fail again (Python's documented recipe, see the
    ``signal`` module's note on SIGPIPE)."""
    try:
        fd = sys.stdout.fileno()
    except (AttributeError, ValueError, OSError):   # stdout replaced by an object
        return
    devnull = os.open(os.devnull, os.O_WRONLY)
    try:
        os.dup2(devnull, fd)
    finally:
        os.close(devnull)


def workers_arg(text: str) -> int:
    """``--workers``: a positive integer, or -1 for every CPU."""
    try:
        v = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a positive integer or -1; got {text!r}") from None
    if v < 1 and v != -1:
        raise argparse.ArgumentTypeError(f"expected a positive integer or -1; got {v}")
    return v
