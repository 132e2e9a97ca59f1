"""``bndp budget``: create a persistent privacy budget, show its cap, spend and history, or
back its SQLite store up."""

from __future__ import annotations

import argparse
import json
import sys
import time
from typing import Any

from .._ledger._backends import StoreNotFound, _redact, scrub
from ..budget import Budget, backup
from ..exceptions import BudgetError
from ._errors import CLIError, FileError


def _shown(store: Any) -> str:
    """The store as messages show it: a PostgreSQL URL without its secrets."""
    text = str(store)
    return _redact(text)[0] if "://" in text else text


def _cli_errors(call: Any, store: Any, name: str | None) -> Any:
    """``call()`` for the command line: its errors as CLI errors, one line, without the
    store's secrets (usage; I/O when the store cannot be reached; an unknown budget is a
    budget error, exit 4)."""
    try:
        return call()
    except ImportError as exc:
        raise CLIError(str(exc)) from None
    except StoreNotFound as exc:
        raise FileError(scrub(str(exc))) from None
    except BudgetError as exc:
        raise type(exc)(scrub(" ".join(str(exc).split()))) from None
    except (TypeError, ValueError) as exc:
        msg = scrub(str(exc))
        raise CLIError(msg if msg.startswith(("budget ", "backup ")) or name is None
                       else f"budget {name!r}: {msg}") from None
    except Exception as exc:  # the store cannot be reached or read
        msg = scrub(" ".join(str(exc).split()))
        raise FileError(msg if msg.startswith("budget store ")
                        else f"budget store {_shown(store)}: {msg}") from None


def open_budget(store: str, name: str, **cap: Any) -> Any:
    """``Budget.open`` for the command line (errors as :func:`_cli_errors`)."""
    return _cli_errors(lambda: Budget.open(store, name, **cap), store, name)


def create_budget(store: str, name: str, **cap: Any) -> Any:
    """``Budget.create(..., exist_ok=True)`` for the command line: an existing budget of
    this cap is opened (errors as :func:`_cli_errors`)."""
    return _cli_errors(lambda: Budget.create(store, name, exist_ok=True, **cap), store, name)


def _cmd_create(args: argparse.Namespace) -> int:
    b = create_budget(args.store, args.name, epsilon=args.epsilon, delta=args.delta,
                      composition=args.composition)
    if not args.quiet:
        print(f"bndp: budget {b.name!r} in {b.store}: epsilon = {b.epsilon:g}, delta = "
              f"{b.delta:g}, {b.composition} composition; spent epsilon = "
              f"{b.spent.epsilon:g}", file=sys.stderr)
    return 0


def _cmd_backup(args: argparse.Namespace) -> int:
    paths = list(args.paths)
    if args.store is not None:
        paths.insert(0, args.store)
    if len(paths) != 2:
        raise CLIError("bndp budget backup takes the store and the copy's path: "
                       "'bndp budget backup STORE DEST' (or 'DEST --store STORE')")
    store, dest = paths
    out = _cli_errors(lambda: backup(store, dest), store, None)
    if not args.quiet:
        print(f"bndp: budget store {_shown(store)} copied to {out}", file=sys.stderr)
    return 0


def _bounds_text(bounds: Any) -> str:
    if isinstance(bounds, str):
        return bounds
    if isinstance(bounds, list) and len(bounds) == 2:
        lo, hi = (("-inf" if bounds[0] is None else f"{bounds[0]:g}"),
                  ("inf" if bounds[1] is None else f"{bounds[1]:g}"))
        return f"[{lo}, {hi}]"
    return "-"


def _show(b: Any) -> dict[str, Any]:
    hist = b.history
    spent, rem = b.spent, b.remaining
    return {
        "name": b.name, "store": b.store, "composition": b.composition,
        "composition_method": b.composition_method,
        "cap": {"epsilon": b.epsilon, "delta": b.delta},
        "spent": {"epsilon": spent.epsilon, "delta": spent.delta},
        "remaining": {"epsilon": rem.epsilon, "delta": rem.delta},
        "releases": [{"seq": e.seq, "release_id": e.release_id, "label": e.label,
                      "time": e.time,
                      "time_utc": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(e.time)),
                      "host": e.host, "pid": e.pid, "version": e.version,
                      "epsilon": e.cost.epsilon, "delta": e.cost.delta,
                      "seeded": e.seeded, "columns": e.columns}
                     for e in hist],
    }


def _cmd_show(args: argparse.Namespace) -> int:
    b = open_budget(args.store, args.name)
    doc = _show(b)
    if args.json:
        json.dump(doc, sys.stdout, indent=2)
        sys.stdout.write("\n")
        return 0
    how = (f", by the {doc['composition_method']} method" if doc["composition"] == "optimal"
           else "")
    out = [f"budget {doc['name']!r} in {doc['store']} ({doc['composition']} composition{how})",
           f"  cap        epsilon = {b.epsilon:g}, delta = {b.delta:g}",
           f"  spent      epsilon = {doc['spent']['epsilon']:g}, delta = "
           f"{doc['spent']['delta']:g}",
           f"  remaining  epsilon = {doc['remaining']['epsilon']:g}, delta = "
           f"{doc['remaining']['delta']:g}",
           f"  releases   {len(doc['releases'])}"]
    for r in doc["releases"]:
        rid = f" id {r['release_id']!r}" if r["release_id"] is not None else ""
        seeded = ", SEEDED (reproducible noise)" if r["seeded"] else ""
        out.append(f"#{r['seq']} {r['time_utc']}{rid} {r['label']!r}: epsilon = "
                   f"{r['epsilon']:g}, delta = {r['delta']:g}{seeded}; host {r['host']}, pid "
                   f"{r['pid']}, bndp {r['version']}")
        for c in r["columns"]:
            parts = [f"epsilon = {c['epsilon']:g}", f"delta = {c['delta']:g}"]
            if "mechanism" in c:
                parts.insert(0, c["mechanism"])
                parts += [f"sensitivity = {c['sensitivity']:g}",
                          f"bounds {_bounds_text(c.get('bounds'))}",
                          f"mode {c.get('mode')}"]
                loss = c.get("certified_loss")
                parts.append("certified loss " + ("per row (data-dependent widths)"
                                                  if loss is None else f"{loss:.6g}"))
            out.append(f"    {c['column']}: {', '.join(parts)}")
    print("\n".join(out))
    return 0


def _add_budget_command(sub: Any, exit_codes: str) -> None:
    """``bndp budget create``, ``bndp budget show`` and ``bndp budget backup``."""
    p = sub.add_parser(
        "budget", help="create a persistent privacy budget, show its history, or back "
                       "its store up",
        description="A persistent privacy budget lives in a store shared by every run and "
                    "host: an SQLite file, or a postgresql:// URL. Its cap never changes "
                    "once created; every release charged to it is recorded with its time, "
                    "release id, host, process, bndp version and, per column, mechanism, "
                    "epsilon, delta, sensitivity, bounds, mode and certified loss.",
        epilog="Examples: bndp budget create survey --store ledger.db --epsilon 1; bndp "
               "budget show survey --store ledger.db --json; bndp budget backup ledger.db "
               "ledger-copy.db. " + exit_codes)
    bsub = p.add_subparsers(dest="budget_command", metavar="ACTION")
    bsub.required = True
    c = bsub.add_parser("create", help="create a named budget with its cap",
                        description="Create the budget NAME in --store with its cap "
                                    "(the only way, with bndp.Budget.create and a spec's "
                                    "'create = true', a budget comes to exist: opening one "
                                    "never creates it). Creating it again with the same cap "
                                    "does nothing; with another cap it is an error.")
    c.add_argument("name", metavar="NAME")
    c.add_argument("--store", required=True, metavar="PATH_OR_URL",
                   help="an SQLite file (created if missing) or a postgresql:// URL")
    c.add_argument("--epsilon", type=float, required=True, help="the cap's epsilon (> 0)")
    c.add_argument("--delta", type=float, default=0.0, help="the cap's delta (default 0)")
    c.add_argument("--composition", choices=("basic", "optimal"), default="basic",
                   help="basic: the sums of epsilon and delta (default); optimal: the "
                        "composed privacy curve (Google's dp-accounting) at the cap's delta")
    c.add_argument("-q", "--quiet", action="store_true", help="print nothing on success")
    c.set_defaults(func=_cmd_create)
    s = bsub.add_parser("show", help="print a budget's cap, spend and every release",
                        description="Print the budget's cap, what is spent and remaining, "
                                    "and every release recorded under it.")
    s.add_argument("name", metavar="NAME")
    s.add_argument("--store", required=True, metavar="PATH_OR_URL",
                   help="an SQLite file or a postgresql:// URL")
    s.add_argument("--json", action="store_true", help="print JSON on stdout")
    s.set_defaults(func=_cmd_show)
    k = bsub.add_parser("backup", help="copy an SQLite budget store, consistently",
                        description="Copy the SQLite budget store STORE to the new file DEST "
                                    "with SQLite's online backup API: one consistent "
                                    "snapshot, every committed charge included, taken while "
                                    "other processes may be charging the store. DEST is "
                                    "never overwritten. A PostgreSQL store is copied with "
                                    "pg_dump.")
    k.add_argument("paths", nargs="+", metavar="STORE DEST",
                   help="the store's SQLite file and the copy's path (a new file)")
    k.add_argument("--store", metavar="PATH",
                   help="the store, as for show (then give DEST alone)")
    k.add_argument("-q", "--quiet", action="store_true", help="print nothing on success")
    k.set_defaults(func=_cmd_backup)
