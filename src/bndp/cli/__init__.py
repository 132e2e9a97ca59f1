"""Command-line interface: ``bndp`` / ``python -m bndp``.

Commands
--------
``bndp privatize``  release numeric columns of a CSV or Parquet file, streamed in chunks;
``bndp calibrate``  print the calibrated scale beside the unbounded mechanism's;
``bndp plot``       draw the output density beside the clamped unbounded mechanism;
``bndp estimate``   the true columns' mean, sd, quantiles and histogram from released data;
``bndp demo``       the main job on a small example column shipped with the package;
``bndp reproduce``  a table or figure of the papers, recomputed next to the printed numbers;
``bndp budget``     create a persistent privacy budget, show its history, or back its store up.

``bndp privatize`` takes a release spec (``--spec release.toml`` or ``.json``: one
``[columns.NAME]`` table per column, an optional ``[budget]``) or ``--column`` options; ``-``
reads stdin / writes stdout; the summary goes to stderr (``-q`` silences it). A persistent
budget (``--budget-store PATH_OR_URL --budget-name NAME``, or ``store`` and ``name`` in
``[budget]``) is shared by every run; ``--release-id`` refuses a release already recorded under
it; ``--seed`` with a persistent budget is a usage error unless ``--allow-seeded`` (the
release is then recorded as seeded). It releases the
certified grid law (mode ``exact``) unless told otherwise: ``--mode continuous`` for the
``--column`` columns, ``mode = "continuous"`` in a spec column (``--mode`` with ``--spec`` is a
usage error); a continuous release prints a one-line warning with the summary.

Errors are reported as one line on stderr (``bndp: error: ...``). Exit status: 0 success;
2 usage error (command line, spec file, arguments); 3 data error (a cell, the input's format
or schema, such as a column not found, or an input without data rows unless
``--allow-empty``); 4 the release would exceed the budget, or the
persistent budget named does not exist; 5 the release id is already recorded under the
budget; 1 other errors (I/O, such as an input file or an output directory that does not
exist, or a budget store that cannot be reached or does not exist); 130 (SIGINT) or 143
(SIGTERM) when interrupted; 141 (128 + SIGPIPE), with nothing on stderr, when the reader
of stdout closed it early (``| head``). A command-line error names the nearest valid choice or
option where there is one (``--mechanism: invalid choice 'lapalce' (did you mean
'laplace'?)``). ``BNDP_DEBUG=1`` shows tracebacks.
"""

from __future__ import annotations

import argparse
import os
import sys
import warnings
from typing import Any, Sequence

from .. import __version__
from ..exceptions import BudgetError, ReleaseRecorded
from ..mechanisms.registry import SAMPLE_MECHANISMS, mechanism_key
from ._errors import (CLIError, EXIT_BUDGET, EXIT_PIPE, EXIT_RECORDED, EXIT_USAGE, _EXIT_CODES,
                      Parser, _Terminated, _one_line, _stdout_to_devnull, int_at_least,
                      workers_arg)
from .budget import _add_budget_command
from .calibrate import _cmd_calibrate, _cmd_plot
from .demo import _cmd_demo
from .estimate import add_parser as _add_estimate
from .privatize import _cmd_privatize
from .reproduce import _add_reproduce_command


__all__ = ["main"]


def _add_privacy_args(p: argparse.ArgumentParser, bounds_required: bool,
                      mode: str | None = None) -> None:
    """The mechanism options; ``mode``: add ``--mode`` ("privatize": the release law of the
    --column columns; "calibrate": the law whose scale is reported; None: no --mode)."""
    g = p.add_argument_group("mechanism")
    # privatize: None when not given, so that --spec can refuse them
    g.add_argument("--mechanism", choices=SAMPLE_MECHANISMS, type=mechanism_key,
                   default="laplace" if bounds_required else None,
                   help="bounded Laplace ((epsilon, delta)-DP; pure for delta = 0) or bounded "
                        "Gaussian (pure epsilon-DP); bounded_laplace and bounded_gaussian "
                        "are their explicit spellings (default: laplace)")
    g.add_argument("--epsilon", type=float, required=bounds_required,
                   help="privacy budget epsilon > 0" + ("" if bounds_required else
                                                        " (with --column)"))
    g.add_argument("--sensitivity", type=float, required=bounds_required,
                   help="sensitivity s of each value" + ("" if bounds_required else
                                                         " (with --column)")
                        + ": epsilon is the guarantee for a change of at most s in one value "
                          "(the unit of privacy). A person's whole record can move a value "
                          "anywhere in [lower, upper]; with per-record noise that change costs "
                          "the certified loss between the range's two ends, which is what "
                          "protects a person's record" + ("" if bounds_required else
                                                          " (the summary reports it per "
                                                          "column: whole_range_loss)"))
    g.add_argument("--delta", type=float, default=0.0 if bounds_required else None,
                   help="delta in [0, 1) for the Laplace mechanism (default 0; must be 0 for "
                        "gaussian)")
    g.add_argument("--lower", type=float, required=bounds_required, default=None,
                   help="lower end of the valid range" + ("" if bounds_required else
                                                          " (default for every --column)"))
    g.add_argument("--upper", type=float, required=bounds_required, default=None,
                   help="upper end of the valid range" + ("" if bounds_required else
                                                          " (default for every --column)"))
    if mode == "privatize":
        g.add_argument("--mode", choices=("exact", "continuous"), default=None,
                       help="release law of the --column columns: exact (default), the "
                            "certified law on a power-of-two grid, whose raw doubles are safe "
                            "to publish; continuous, the continuous law in raw doubles, which "
                            "are attackable when published (explicit opt-in for outputs that "
                            "are post-processed before anyone sees them; see "
                            "docs/threat_model.md). With --spec, set mode in each column's "
                            "table instead")
        g.add_argument("--integer", dest="integer", action="store_const", const=1,
                       default=None,
                       help="release the --column columns with the integer law: values "
                            "lower + j on the integer lattice (--integer-step K: lower + j*K), "
                            "for integral bounds and sensitivity. Default: "
                            "the integer law for integer columns (a Parquet integer type; "
                            "every column of a CSV file, which has no types: its cells never "
                            "choose the law) with integral bounds and sensitivity, which then "
                            "come back as integers (Parquet int32 stays int32); the grid law "
                            "otherwise. With --spec, set integer in each column's table")
        g.add_argument("--integer-step", dest="integer", type=_lattice_step, metavar="K",
                       help="the integer law on the lattice lower + j*K (K an integer >= 1)")
        g.add_argument("--no-integer", dest="integer", action="store_const", const=0,
                       help="release the --column columns with the grid law even where "
                            "they hold integers (float64 output)")
    elif mode == "calibrate":
        g.add_argument("--mode", choices=("exact", "continuous"), default="exact",
                       help="law whose scale, variance and bias are reported: exact (default; "
                            "the grid law bndp privatize releases by default) or continuous "
                            "(the law of bndp privatize --mode continuous)")


def _lattice_step(text: str) -> int:
    """``--integer-step K``: an integer from 1 to 2^52."""
    try:
        k = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected an integer lattice step; got {text!r}"
                                         ) from None
    if not 1 <= k <= 1 << 52:
        raise argparse.ArgumentTypeError(f"the lattice step must be an integer from 1 to "
                                         f"2^52; got {k}")
    return k


def _command(sub: Any, name: str, func: Any, **kwargs: Any) -> argparse.ArgumentParser:
    """The subcommand ``name`` (``kwargs``: ``add_parser``'s), run by ``func``."""
    p = sub.add_parser(name, **kwargs)
    p.set_defaults(func=func)
    return p


def _add_value_args(p: argparse.ArgumentParser, verb: str, half_line: str,
                    reference: str) -> None:
    """``--value`` and ``--reference-delta`` of calibrate and plot."""
    p.add_argument("--value", type=float, nargs="+", metavar="Q",
                   help=f"true values to {verb} (default: lower, lower + 10%% of the range, "
                        f"midpoint{half_line})")
    p.add_argument("--reference-delta", type=float, default=1e-5,
                   help=f"delta of the classical {reference} for comparison with "
                        "--mechanism gaussian (default 1e-5)")


_positive_int = int_at_least(1, "a positive integer")


_workers = workers_arg


def _delimiter(text: str) -> str:
    t = "\t" if text in ("\\t", "tab") else text
    if len(t) != 1:
        raise argparse.ArgumentTypeError(f"the delimiter must be one character; got {text!r}")
    return t


def _parser() -> argparse.ArgumentParser:
    p = Parser(
        prog="bndp",
        description="Differentially private noise for bounded values.",
        epilog="Run 'bndp COMMAND --help' for a command's options. " + _EXIT_CODES,
    )
    p.add_argument("--version", action="version", version=f"bndp {__version__}")
    sub = p.add_subparsers(dest="command", metavar="COMMAND")

    pr = sub.add_parser(
        "privatize", help="release numeric columns of a CSV or Parquet file",
        description="Release one or more numeric columns of a CSV or Parquet file with a "
                    "bounded mechanism, streaming the file in chunks (memory does not grow "
                    "with the file). Other columns are copied unchanged (CSV cells keep their "
                    "text; Parquet keeps its schema, the released columns becoming float64 "
                    "but those released with the integer law, which keep their integer "
                    "type). "
                    "The columns and their settings come from a release spec (--spec, TOML "
                    "or JSON: one [columns.NAME] table per column with mechanism, lower, "
                    "upper (numbers or names of columns with per-row bounds), sensitivity, "
                    "epsilon, delta, on_outside, nulls, mode, integer; an optional [budget] "
                    "with epsilon and delta that the release must fit in), or from --column "
                    "with the same settings for every column. The law released is the "
                    "integer law (values lower + j) for integer columns with integral bounds "
                    "and sensitivity (see --integer), else the certified grid law (mode "
                    "exact), unless a column's spec says mode = \"continuous\" "
                    "or --mode continuous is given with --column (raw doubles of the "
                    "continuous law, attackable when published: a warning says so). The "
                    "output is written to a "
                    "temporary file in the output's directory and renamed into place only on "
                    "success (a symbolic link is followed; a stream such as '-', a FIFO or "
                    "/dev/stdout is written into at the end, never replaced): an error, "
                    "Ctrl-C or SIGTERM leaves no output and the input is never written. The "
                    "summary goes to stderr.",
        epilog="Examples: bndp privatize people.csv -o released.csv --spec release.toml; "
               "cat people.csv | bndp privatize - -o - --column age:0:120 --epsilon 1 "
               "--sensitivity 1 > released.csv. " + _EXIT_CODES,
    )
    pr.add_argument("input", help="input .csv or .parquet file (also .csv.gz, .csv.zst), a "
                                  "directory or glob of Parquet files; '-' reads stdin "
                                  "(Parquet or CSV, told by the first bytes)")
    pr.add_argument("-o", "--output", required=True,
                    help="output file (format: --output-format; must differ from the input); '-' "
                         "writes stdout")
    pr.add_argument("--spec", metavar="FILE",
                    help="release spec, TOML (.toml) or JSON (.json): [columns.NAME] tables "
                         "and an optional [budget]")
    pr.add_argument("--column", action="append", metavar="NAME[:LOWER:UPPER]",
                    help="column to release, optionally with its own bounds; repeat for several "
                         "columns (one pass; each column is a separate release). Its epsilon "
                         "covers a change of at most --sensitivity in one value; a change of "
                         "one record from LOWER to UPPER costs the certified whole-range loss "
                         "(in the summary)")
    pr.add_argument("-q", "--quiet", action="store_true",
                    help="print nothing on success (no summary, no progress bar)")
    pr.add_argument("-v", "--verbose", action="store_true",
                    help="print more details in the summary")
    pr.add_argument("--summary-json", metavar="FILE", default=None,
                    help="write a machine-readable record of the run to FILE: columns, "
                         "mechanisms, parameters, epsilon/delta spent, certified loss, "
                         "epsilon_per_sensitivity and whole_range_loss (the unit of "
                         "privacy), rows, the noise's bias and sd at the range's ends and "
                         "centre, timings, version (no counts of the private data), status "
                         "\"ok\" and exit_code 0. A failed run writes one too: status "
                         "\"error\", exit_code, error (the one-line message), error_kind, "
                         "charged (null: nothing) and the budget's amounts read after the "
                         "failure (if it was opened)")
    pr.add_argument("--show-data-counts", action="store_true",
                    help="also print, per column, the number of values released, missing and "
                         "clipped into the bounds: counts of the private data themselves, NOT "
                         "protected by differential privacy (off by default)")
    _add_privacy_args(pr, bounds_required=False, mode="privatize")
    io = pr.add_argument_group("input and output")
    io.add_argument("--format", choices=("auto", "csv", "parquet"), default="auto",
                    help="input format (default: from the file name, else from the first "
                         "bytes: Parquet or CSV; gzip and zstd CSV are read too; a directory "
                         "or glob of Parquet files is one input)")
    io.add_argument("--output-format", choices=("auto", "csv", "parquet"), default="auto",
                    help="output format (default: from the output file name, else the "
                         "input's)")
    io.add_argument("--delimiter", type=_delimiter, default=",",
                    help="CSV delimiter (default ','; 'tab' for tabs)")
    io.add_argument("--nulls", choices=("raise", "keep"), default="raise",
                    help="missing cells (empty CSV cells, Parquet nulls, NaN): an error naming "
                         "the row (default) or kept as they are (nulls stay null, NaN stays "
                         "NaN)")
    io.add_argument("--on-outside", choices=("clip", "raise"), default="clip",
                    help="values outside [lower, upper]: clip them into the range (default; "
                         "the guarantee holds) or stop with an error naming the row")
    io.add_argument("--allow-empty", action="store_true",
                    help="release an input without data rows (a header-only CSV, a Parquet "
                         "file of zero rows): an empty output, its epsilon charged. Without "
                         "it such an input is a data error (exit 3): nothing is charged or "
                         "written, as a failed upstream extract must not spend a run's budget")
    io.add_argument("--block-size", type=_positive_int, default=1 << 20, metavar="BYTES",
                    help="CSV bytes parsed per chunk (default 1 MiB; raised to hold the "
                         "header line; a row longer than a block is an error). Converting "
                         "CSV to Parquet (--output-format), the copied columns' types are "
                         "inferred from the first block")
    io.add_argument("--batch-rows", type=_positive_int, default=1 << 17, metavar="ROWS",
                    help="Parquet rows per chunk (default 131072)")
    io.add_argument("--compression", default="snappy", type=str.lower,
                    choices=("snappy", "gzip", "brotli", "zstd", "lz4", "none"),
                    help="Parquet compression codec of the output (default snappy)")
    io.add_argument("--progress", choices=("auto", "always", "never"), default="auto",
                    help="progress bar by rows on stderr (default: when stderr is a terminal)")
    io.add_argument("--workers", type=_workers, default=1,
                    help="threads drawing noise for each chunk (default 1; -1: every CPU)")
    io.add_argument("--seed", type=int, default=None,
                    help="seed for a reproducible run (tests only: a real release must use "
                         "the default, fresh OS entropy; refused with a persistent budget "
                         "unless --allow-seeded)")
    io.add_argument("--allow-seeded", action="store_true",
                    help="allow --seed with a persistent budget (tests only: whoever knows "
                         "the seed can subtract the noise); the release is recorded as "
                         "seeded in the ledger and the summary")
    bg = pr.add_argument_group("persistent budget")
    bg.add_argument("--budget-store", metavar="PATH_OR_URL",
                    help="the budget's store, shared by every run: an SQLite file, or a "
                         "postgresql:// URL (or store = ... in the spec's [budget])")
    bg.add_argument("--budget-name", metavar="NAME",
                    help="the budget's name in --budget-store (or name = ... in [budget]); "
                         "it must exist (opening never creates a budget): create it with "
                         "'bndp budget create', or with create = true and its cap (epsilon, "
                         "delta) in [budget]")
    bg.add_argument("--release-id", metavar="ID",
                    help="an id for this release (for example the date of a nightly run): if "
                         "a release with this id is already recorded under the budget, "
                         "nothing is read or written and the exit status is 5")
    pr.set_defaults(func=_cmd_privatize)

    ca = _command(
        sub, "calibrate", _cmd_calibrate, help="print the calibrated scale and the released value's variance",
        description="Print the calibrated scale of a bounded mechanism next to the scale of "
                    "the unbounded mechanism, and the variance of the released value for a "
                    "few true values. By default these are the grid law's (--mode exact), "
                    "which bndp privatize releases by default; --mode continuous reports the "
                    "continuous law of bndp privatize --mode continuous.",
        epilog="Example: bndp calibrate --epsilon 1 --sensitivity 1 --lower 0 --upper 120",
    )
    _add_privacy_args(ca, bounds_required=True, mode="calibrate")
    _add_value_args(ca, "report", "; on a half-line: its finite end and 1 and 10 "
                    "sensitivities inside", "(unbounded) Gaussian mechanism shown")

    pl = _command(
        sub, "plot", _cmd_plot, help="plot the output density beside the clamped unbounded "
                                     "mechanism, or a released column's released and "
                                     "estimated histograms",
        description="Without a file: draw the output density of the bounded mechanism for a "
                    "few true values, beside the unbounded mechanism clamped to the range, "
                    "whose probability piles up on the bounds. The densities and the scale "
                    "in the title are the continuous law's; the default release (--mode "
                    "exact) is its discretisation on a fine power-of-two grid, with its own "
                    "calibrated scale (bndp calibrate). With a released CSV or Parquet file, "
                    "--spec and --column: draw the column's released histogram and the "
                    "histogram of its true values estimated by bndp estimate "
                    "(post-processing: no privacy budget is spent). Needs matplotlib: pip "
                    "install 'bndp[plot]'.",
        epilog="Examples: bndp plot --epsilon 1 --sensitivity 1 --lower 0 --upper 10 "
               "-o density.png; bndp plot released.parquet --spec release.toml --column age "
               "-o age.png",
    )
    pl.add_argument("input", nargs="?", default=None,
                    help="released .csv or .parquet file (with --spec and --column)")
    _add_privacy_args(pl, bounds_required=True)
    for a in pl._actions:   # required without a released file only (checked by the command)
        if a.dest in ("epsilon", "sensitivity", "lower", "upper"):
            a.required = False
    pl.add_argument("--spec", metavar="FILE", default=None,
                    help="with a released file: the release spec it was released with")
    pl.add_argument("--column", metavar="NAME", default=None,
                    help="with a released file: the released column to draw")
    pl.add_argument("--bins", type=int, default=30,
                    help="with a released file: histogram bins over the column's range "
                         "(2 to 10000; default 30)")
    pl.add_argument("--format", choices=("auto", "csv", "parquet"), default="auto",
                    help="with a released file: its format (default: from the file name)")
    pl.add_argument("--delimiter", type=_delimiter, default=",",
                    help="with a released file: CSV delimiter (default ',')")
    pl.add_argument("-o", "--output", required=True, help="image file (.png, .svg or .pdf)")
    _add_value_args(pl, "draw", "", "Gaussian mechanism drawn")
    pl.add_argument("--width", type=float, default=10.0, help="figure width, inches (default 10)")
    pl.add_argument("--height", type=float, default=4.5, help="figure height, inches (default 4.5)")
    pl.add_argument("--dpi", type=_positive_int, default=100, help="resolution (default 100)")

    _add_estimate(sub, _delimiter)

    d = sub.add_parser("demo", help="calibrate both mechanisms on a built-in bounded column, "
                                    "sample, and print a summary")
    d.add_argument("--epsilon", type=float, default=1.0, help="privacy budget (default 1)")
    d.add_argument("--sensitivity", type=float, default=1.0,
                   help="sensitivity of each value (default 1)")
    d.add_argument("--seed", type=int, default=None,
                   help="seed for a reproducible demo (default: OS entropy)")
    d.set_defaults(func=_cmd_demo)

    _add_reproduce_command(sub)
    _add_budget_command(sub, _EXIT_CODES)
    return p


def _show_warning(message: Any, category: Any, filename: str, lineno: int, file: Any = None,
                  line: Any = None) -> None:
    """A warning of a command (a coarse grid, a value far out), as one line on stderr."""
    print(f"bndp: warning: {_one_line(message)}", file=sys.stderr)


def main(argv: Sequence[str] | None = None) -> int:
    """Run the command line on ``argv`` (default ``sys.argv[1:]``); return the exit status.

    A broken pipe on stdout (its reader closed it early, as ``bndp budget show --json |
    head -1`` does) ends any command quietly with status 141 (128 + SIGPIPE): nothing on
    stderr, and stdout pointed at the null device so that nothing fails at exit."""
    try:
        code = _run(argv)
        sys.stdout.flush()      # here, not at exit, where a broken pipe could not be caught
        return code
    except BrokenPipeError:
        _stdout_to_devnull()
        return EXIT_PIPE


def _run(argv: Sequence[str] | None) -> int:
    parser = _parser()
    args = parser.parse_args(argv)
    if not getattr(args, "func", None):
        parser.print_help()
        return EXIT_USAGE
    try:
        with warnings.catch_warnings():
            warnings.showwarning = _show_warning     # one line, as the errors
            return int(args.func(args))
    except BrokenPipeError:
        raise
    except CLIError as exc:
        if os.environ.get("BNDP_DEBUG"):
            raise
        print(f"bndp: error: {_one_line(exc)}", file=sys.stderr)
        return exc.code
    except BudgetError as exc:
        if os.environ.get("BNDP_DEBUG"):
            raise
        print(f"bndp: error: {_one_line(exc)}", file=sys.stderr)
        return EXIT_RECORDED if isinstance(exc, ReleaseRecorded) else EXIT_BUDGET
    except KeyboardInterrupt:
        print("bndp: interrupted; no output was written", file=sys.stderr)
        return 130
    except _Terminated:
        print("bndp: terminated; no output was written", file=sys.stderr)
        return 143
    except (ValueError, TypeError) as exc:  # invalid arguments of calibrate, plot, demo
        if os.environ.get("BNDP_DEBUG"):
            raise
        print(f"bndp: error: {_one_line(exc)}", file=sys.stderr)
        return EXIT_USAGE
    except Exception as exc:
        if os.environ.get("BNDP_DEBUG"):
            raise
        print(f"bndp: error: {_one_line(exc)}", file=sys.stderr)
        return 1


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
