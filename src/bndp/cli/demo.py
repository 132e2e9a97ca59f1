"""``bndp demo``: the main job on a small example column shipped with the package."""

from __future__ import annotations

import argparse
import csv
from importlib import resources
import numpy as np

from .._random import default_rng
from ..mechanisms import BoundedGaussian, BoundedLaplace


def _load_example() -> dict[str, np.ndarray]:
    import io

    text = resources.files("bndp").joinpath("data/people.csv").read_text(encoding="utf-8")
    rows = list(csv.DictReader(io.StringIO(text, newline="")))
    return {k: np.array([float(r[k]) for r in rows]) for k in rows[0]}


def _cmd_demo(args: argparse.Namespace) -> int:
    data = _load_example()
    ages = data["age"]
    lo, hi = 0.0, 120.0
    rng = default_rng(args.seed)
    eps, dq = args.epsilon, args.sensitivity
    # calibrate and sample first: an invalid epsilon fails before any line is printed
    mechs = (("bounded Laplace", BoundedLaplace(eps, sensitivity=dq, lower=lo, upper=hi), dq / eps),
             ("bounded Gaussian", BoundedGaussian(eps, sensitivity=dq, lower=lo, upper=hi), None))
    rows = []
    for name, mech, unbounded in mechs:
        noisy = mech.sample(ages, rng=rng)
        ub = f"{unbounded:12.4f}" if unbounded is not None else f"{'-':>12}"
        rows.append(f"{name:<18}{mech.scale:12.4f}{ub}{noisy.min():9.2f}{noisy.max():9.2f}"
                    f"{noisy.mean():9.2f}{np.abs(noisy - ages).mean():9.2f}")
    print(f"bndp demo: {ages.size} ages in [{lo:g}, {hi:g}], epsilon = {eps:g}, "
          f"sensitivity = {dq:g} (per value)")
    print(f"{'mechanism':<18}{'scale':>12}{'unbounded':>12}{'min':>9}{'max':>9}"
          f"{'mean':>9}{'MAE':>9}")
    print("\n".join(rows))
    print(f"true mean age {ages.mean():.2f}; every released value lies in [{lo:g}, {hi:g}]")
    return 0
