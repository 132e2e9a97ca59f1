"""Command-line interface: ``bndp`` / ``python -m bndp``."""

from __future__ import annotations

import argparse
import csv
import sys
from importlib import resources
from typing import Sequence

import numpy as np

__all__ = ["main"]


class CLIError(Exception):
    """An error reported as one line on stderr with exit status 2."""


def _load_example() -> dict[str, np.ndarray]:
    with resources.files("bndp").joinpath("data/people.csv").open("r", newline="") as f:
        rows = list(csv.DictReader(f))
    return {k: np.array([float(r[k]) for r in rows]) for k in rows[0]}


def _cmd_demo(args: argparse.Namespace) -> int:
    from . import BoundedGaussian, BoundedLaplace, default_rng

    data = _load_example()
    ages = data["age"]
    lo, hi = 0.0, 120.0
    rng = default_rng(args.seed)
    eps, dq = args.epsilon, args.sensitivity
    print(f"bndp demo: {ages.size} ages in [{lo:g}, {hi:g}], epsilon = {eps:g}, "
          f"sensitivity = {dq:g} (per value)")
    print(f"{'mechanism':<18}{'scale':>12}{'unbounded':>12}{'min':>9}{'max':>9}"
          f"{'mean':>9}{'MAE':>9}")
    for name, mech, unbounded in (
        ("bounded Laplace", BoundedLaplace(eps, dq, lo, hi), dq / eps),
        ("bounded Gaussian", BoundedGaussian(eps, dq, lo, hi), None),
    ):
        noisy = mech.sample(ages, rng=rng)
        ub = f"{unbounded:12.4f}" if unbounded is not None else f"{'-':>12}"
        print(f"{name:<18}{mech.scale:12.4f}{ub}{noisy.min():9.2f}{noisy.max():9.2f}"
              f"{noisy.mean():9.2f}{np.abs(noisy - ages).mean():9.2f}")
    print(f"true mean age {ages.mean():.2f}; every released value lies in [{lo:g}, {hi:g}]")
    return 0


def _parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        prog="bndp",
        description="Differentially private noise for bounded values.",
    )
    sub = p.add_subparsers(dest="command", metavar="COMMAND")
    d = sub.add_parser("demo", help="calibrate both mechanisms on a built-in bounded column, "
                                    "sample, and print a summary")
    d.add_argument("--epsilon", type=float, default=1.0, help="privacy budget (default 1)")
    d.add_argument("--sensitivity", type=float, default=1.0,
                   help="sensitivity of each value (default 1)")
    d.add_argument("--seed", type=int, default=None,
                   help="seed for a reproducible demo (default: OS entropy)")
    d.set_defaults(func=_cmd_demo)
    return p


def main(argv: Sequence[str] | None = None) -> int:
    parser = _parser()
    args = parser.parse_args(argv)
    if not getattr(args, "func", None):
        parser.print_help()
        return 2
    try:
        return int(args.func(args))
    except (CLIError, ValueError, TypeError, OSError) as exc:
        print(f"bndp: error: {exc}", file=sys.stderr)
        return 2


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
