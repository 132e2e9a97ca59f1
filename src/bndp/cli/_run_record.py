"""The run record of ``bndp privatize --summary-json FILE``: written for every run that read
its arguments, a failed one too, so that a scheduler always finds the run's outcome.

A successful run's record is the release's (:func:`bndp._release.release_record`, with the
rows, files and timings) with ``status: "ok"`` and ``exit_code: 0``; a failed run's says
``status: "error"``, its exit status, its one-line error message (the one printed on stderr:
never a value of the data), the kind of error, what was charged (nothing, unless the run
failed after its charge was committed) and, if the run had opened its budget, the budget's
amounts read after the failure. No record is written when the path itself is the problem
(a directory, a missing directory, or a file the run reads or keeps)."""

from __future__ import annotations

import argparse
import functools
import glob
import json
import os
import sys
import tempfile
import time
from typing import Any, Callable

from .._ledger import _version
from ..exceptions import BudgetError, ReleaseRecorded
from ._errors import (CLIError, EXIT_BUDGET, EXIT_DATA, EXIT_IO, EXIT_PIPE, EXIT_RECORDED,
                      EXIT_USAGE, _Terminated, _one_line)
from ._io import _normal_mode, _remove

#: the record's ``error_kind`` for each exit status of a failed run
ERROR_KINDS = {EXIT_IO: "io", EXIT_USAGE: "usage", EXIT_DATA: "data", EXIT_BUDGET: "budget",
               EXIT_RECORDED: "release_recorded", 130: "interrupted", 143: "terminated",
               EXIT_PIPE: "broken_pipe"}

_SQLITE_MAGIC = b"SQLite format 3\x00"


class RunState:
    """How far a run has got, for its record: the budget once opened, the spec's
    ``[budget]`` table once read (its store), the cost charged once committed."""

    __slots__ = ("budget", "spec_budget", "charged", "started")

    def __init__(self) -> None:
        self.budget: Any = None
        self.spec_budget: dict[str, Any] | None = None
        self.charged: Any = None
        self.started = time.perf_counter()


def run_state(args: argparse.Namespace) -> RunState:
    """The run's :class:`RunState`, kept on its parsed arguments (created on first use)."""
    state = getattr(args, "run_state", None)
    if state is None:
        state = RunState()
        args.run_state = state
    return state


def failure_status(exc: BaseException) -> tuple[int, str] | None:
    """The exit status and one-line message with which the command line ends on ``exc``
    (as :func:`bndp.cli.main` reports it); None for an exception that is not a failure of
    the run (``SystemExit``)."""
    if isinstance(exc, BrokenPipeError):
        return EXIT_PIPE, "the reader of stdout closed it early (broken pipe)"
    if isinstance(exc, CLIError):
        return exc.code, _one_line(exc)
    if isinstance(exc, BudgetError):
        return (EXIT_RECORDED if isinstance(exc, ReleaseRecorded) else EXIT_BUDGET,
                _one_line(exc))
    if isinstance(exc, KeyboardInterrupt):
        return 130, "interrupted (SIGINT)"
    if isinstance(exc, _Terminated):
        return 143, "terminated (SIGTERM)"
    if isinstance(exc, (ValueError, TypeError)):
        return EXIT_USAGE, _one_line(exc)
    if isinstance(exc, Exception):
        return EXIT_IO, _one_line(exc)
    return None


def _cost(cost: Any) -> list[float] | None:
    return None if cost is None else [float(cost[0]), float(cost[1])]


def outcome(args: argparse.Namespace) -> dict[str, Any]:
    """The fields of a successful run's record that say how it ended."""
    return {"status": "ok", "exit_code": 0, "error": None, "error_kind": None,
            "charged": _cost(run_state(args).charged)}


def budget_amounts(budget: Any) -> dict[str, Any] | None:
    """A budget's cap, spent and remaining ``[epsilon, delta]`` as read now (None without a
    budget; spent and remaining None if the store cannot be read)."""
    if budget is None:
        return None
    try:
        spent, remaining = _cost(budget.spent), _cost(budget.remaining)
    except Exception:   # noqa: BLE001 - the record of a failure is written without them
        spent = remaining = None
    return {"epsilon": budget.epsilon, "delta": budget.delta, "spent": spent,
            "remaining": remaining}


def same_file(a: str, b: str) -> bool:
    """Whether the paths ``a`` and ``b`` name the same file."""
    return os.path.abspath(a) == os.path.abspath(b) or (
        os.path.exists(a) and os.path.exists(b) and os.path.samefile(a, b))


def _kept_paths(args: argparse.Namespace, state: RunState) -> list[str]:
    """The files a run reads, writes or keeps (input, its Parquet parts, output, spec, the
    budget's SQLite store), which its record must never replace."""
    paths = [args.input, args.output, getattr(args, "spec", None),
             getattr(args, "budget_store", None),
             getattr(state.budget, "store", None), (state.spec_budget or {}).get("store")]
    src = args.input
    if src != "-" and os.path.isdir(src):
        paths += [os.path.join(src, n) for n in os.listdir(src)]
    elif src != "-" and not os.path.exists(src) and glob.has_magic(src):
        paths += glob.glob(src)
    return [p for p in paths if isinstance(p, str) and p != "-" and "://" not in p]


def _usable(path: str, args: argparse.Namespace, state: RunState) -> bool:
    """Whether a failed run's record can be written to ``path``: not a directory, in one
    that exists, none of the run's files, and not an SQLite database (a budget store
    that the run did not get as far as naming)."""
    if os.path.isdir(path) or not os.path.isdir(os.path.dirname(os.path.abspath(path))):
        return False
    if any(same_file(path, other) for other in _kept_paths(args, state)):
        return False
    try:
        with open(path, "rb") as f:
            return f.read(len(_SQLITE_MAGIC)) != _SQLITE_MAGIC
    except FileNotFoundError:
        return True
    except OSError:
        return False


def failure_record(args: argparse.Namespace, state: RunState, code: int,
                   message: str) -> dict[str, Any]:
    """The record of a run that failed with exit status ``code`` and the one-line
    ``message``."""
    src = "<stdin>" if args.input == "-" else args.input
    return {"status": "error", "exit_code": code, "error": message,
            "error_kind": ERROR_KINDS.get(code, "other"), "charged": _cost(state.charged),
            "label": "bndp privatize " + src, "release_id": args.release_id,
            "version": _version(), "input": src,
            "output": "<stdout>" if args.output == "-" else args.output,
            "budget": budget_amounts(state.budget),
            "seconds": {"total": time.perf_counter() - state.started}}


def with_run_record(command: Callable[[argparse.Namespace], int]
                    ) -> Callable[[argparse.Namespace], int]:
    """``command`` (``bndp privatize``), writing the run record of a failed run to
    ``--summary-json`` (where the path is usable) before its error goes on."""

    @functools.wraps(command)
    def run(args: argparse.Namespace) -> int:
        state = run_state(args)
        try:
            return command(args)
        except BaseException as exc:
            status = failure_status(exc)
            path = getattr(args, "summary_json", None)
            if status is not None and path is not None and _usable(path, args, state):
                try:
                    write_json(path, failure_record(args, state, *status))
                except OSError as err:
                    print(f"bndp: warning: --summary-json {path}: the record of the failed "
                          f"run could not be written: {_one_line(err)}", file=sys.stderr)
            raise
    return run


def write_json(path: str, record: dict) -> None:
    """Write a run record: to a temporary file in the same directory, then into place
    (a reader finds the old record or the new one, never part of one)."""
    out_dir = os.path.dirname(os.path.abspath(path))
    fd, tmp = tempfile.mkstemp(prefix=".summary.", suffix=".json", dir=out_dir)
    try:
        with os.fdopen(fd, "w") as f:
            json.dump(record, f, indent=2, default=float)
            f.write("\n")
        _normal_mode(tmp)
        os.replace(tmp, path)
    except BaseException:
        _remove(tmp)
        raise
