"""``bndp reproduce``: a table or figure of the papers behind bndp, recomputed next to the
printed numbers. The harness, :mod:`bndp.reproduce`, is imported by the command itself, so
that no other command loads it."""

from __future__ import annotations

import argparse
import json
from typing import Any


def _add_reproduce_command(sub: Any) -> None:
    """Register the ``reproduce`` subcommand on ``bndp.cli``'s subparsers."""
    p = sub.add_parser(
        "reproduce", help="recompute a table or figure of the papers behind bndp next to the "
                          "printed numbers",
        description="Recompute a numbered table or figure of one of the five papers from "
                    "bndp's public API, next to the numbers the paper prints. Row status: "
                    "match (equal to the printed precision), misprint (a documented erratum), "
                    "not printed, differs (explained in the note).")
    p.add_argument("item", nargs="?", help="item ID (see --list)")
    p.add_argument("--list", action="store_true", help="list the items, grouped by paper")
    p.add_argument("--json", action="store_true", help="print the result as JSON")
    p.add_argument("--plot", metavar="FILE", help="also write the figure (matplotlib)")
    p.set_defaults(func=_cmd_reproduce)


def _cmd_reproduce(args: argparse.Namespace) -> int:
    from .. import reproduce

    if args.list:
        last = None
        for it in reproduce.items():
            paper = it.id.split("/")[0]
            if last is not None and paper != last:
                print()
            last = paper
            print(f"{it.id}  {it.title}")
        return 0
    if not args.item:
        raise ValueError("give an item ID or --list")
    try:
        it = reproduce.get_item(args.item)
    except KeyError as exc:
        raise ValueError(str(exc.args[0])) from None
    if args.plot and it.draw is None:
        raise ValueError(f"{args.item} has no figure to plot (the paper's item is not a figure)")
    result = reproduce.run(args.item)
    if args.json:
        print(json.dumps({k: result[k] for k in ("id", "title", "source", "rows")}, indent=1))
    else:
        print(reproduce.format_table(result))
    if args.plot:
        reproduce.plot(args.item, args.plot)
        if not args.json:
            print(f"figure written to {args.plot}")
    return 0
