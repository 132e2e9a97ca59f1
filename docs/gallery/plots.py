"""The gallery's figures, drawn from bndp's public API when the site is built.

Each function draws one figure on the current matplotlib figure (the Sphinx ``plot``
directive calls them). Run this file to write the figures as PNG files instead::

    python docs/gallery/plots.py [OUTDIR]      # default OUTDIR: docs/_build/gallery
"""

from __future__ import annotations

import inspect
import os
import sys

import matplotlib.pyplot as plt
import numpy as np

import bndp

LOWER, UPPER = 0.0, 10.0
SENSITIVITY = 1.0
EPSILONS = np.geomspace(0.1, 10.0, 25)


def continuous(cls, *args, **kwargs):
    """``cls(*args, **kwargs)`` with the continuous law, whose closed-form density and
    moments the figures use (``mode="continuous"`` is passed to every mechanism that takes a
    ``mode``)."""
    if "mode" in inspect.signature(cls).parameters:
        kwargs["mode"] = "continuous"
    return cls(*args, **kwargs)


def clamped_laplace_law(value, epsilon, x):
    """Density on ``x`` and the masses at the bounds of ``clip(value + Lap(b))`` with the
    textbook scale ``b = sensitivity / epsilon`` (clamping is post-processing, so this is
    epsilon-DP)."""
    b = SENSITIVITY / epsilon
    dens = np.exp(-np.abs(x - value) / b) / (2 * b)
    mass_lo = 0.5 * np.exp(-(value - LOWER) / b)
    mass_hi = 0.5 * np.exp(-(UPPER - value) / b)
    return dens, mass_lo, mass_hi


def bounded_vs_clamped(epsilon: float = 1.0, values=(1.0, 5.0)):
    """Densities of the bounded Laplace mechanism and of clamped Laplace noise on [0, 10]."""
    x = np.linspace(LOWER, UPPER, 801)
    m = continuous(bndp.BoundedLaplace, epsilon, sensitivity=SENSITIVITY, lower=LOWER,
                   upper=UPPER)
    fig, axes = plt.subplots(1, len(values), sharey=True, layout="constrained")
    for ax, q in zip(np.atleast_1d(axes), values):
        ax.plot(x, m.pdf(x, q), color="C0", label=f"bounded Laplace (b* = {m.scale:.3g})")
        dens, lo, hi = clamped_laplace_law(q, epsilon, x)
        ax.plot(x, dens, color="C3", ls="--",
                label=f"clamped Laplace (b = {SENSITIVITY / epsilon:.3g})")
        # the point masses of clamping, drawn as stems whose height is the probability
        for bound, mass, side in ((LOWER, lo, 1), (UPPER, hi, -1)):
            if mass < 0.005:
                continue
            ax.vlines(bound, 0, mass, color="C3", lw=3, alpha=0.6)
            ax.annotate(f"mass {mass:.2f} at {bound:g}", (bound, mass), xytext=(6 * side, 0),
                        textcoords="offset points", color="C3", va="center",
                        ha="left" if side > 0 else "right")
        ax.axvline(q, color="0.6", lw=0.8)
        ax.set_title(f"true value q = {q:g}")
        ax.set_xlabel("released value")
    np.atleast_1d(axes)[0].set_ylabel("density")
    np.atleast_1d(axes)[0].legend(loc="upper right", fontsize=8)
    fig.suptitle(f"Bounded vs clamped Laplace noise on [{LOWER:g}, {UPPER:g}], "
                 f"ε = {epsilon:g}, ΔQ = {SENSITIVITY:g}")
    return fig


def mechanisms_for(epsilon: float) -> dict:
    """The three bounded release mechanisms on [0, 10], continuous law."""
    return {
        "BoundedLaplace": continuous(bndp.BoundedLaplace, epsilon, sensitivity=SENSITIVITY,
                                     lower=LOWER, upper=UPPER),
        "BoundedGaussian": continuous(bndp.BoundedGaussian, epsilon, sensitivity=SENSITIVITY,
                                      lower=LOWER, upper=UPPER),
        "ConstrainedLaplace": continuous(bndp.ConstrainedLaplace, epsilon,
                                         sensitivity=SENSITIVITY, lower=LOWER, upper=UPPER),
    }


def variance_vs_epsilon(values=(5.0, 0.5)):
    """Variance of the released value against ε for each bounded mechanism, at the centre of
    the range and near a bound, with unbounded Laplace noise for reference."""
    curves: dict = {}
    for eps in EPSILONS:
        for name, m in mechanisms_for(float(eps)).items():
            for q in values:
                curves.setdefault((name, q), []).append(m.variance(q))
    fig, ax = plt.subplots(layout="constrained")
    styles = {values[0]: "-", values[1]: ":"}
    look = {"BoundedLaplace": ("C0", "o"), "BoundedGaussian": ("C2", None),
            "ConstrainedLaplace": ("C1", None)}
    for (name, q), v in curves.items():
        color, marker = look[name]
        ax.plot(EPSILONS, v, styles[q], color=color, marker=marker, ms=3, mfc="none",
                label=f"{name}, q = {q:g}")
    ax.plot(EPSILONS, 2 * (SENSITIVITY / EPSILONS) ** 2, color="0.5", lw=0.8,
            label="unbounded Laplace, 2(ΔQ/ε)²")
    ax.axhline((UPPER - LOWER) ** 2 / 12, color="0.3", ls="--", lw=0.8,
               label="uniform on the range")
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.set_ylim(1e-2, 1e2)
    ax.set_xlabel("ε")
    ax.set_ylabel("variance of the released value")
    ax.set_title(f"Variance against ε on [{LOWER:g}, {UPPER:g}], ΔQ = {SENSITIVITY:g}")
    ax.legend(fontsize=7, ncol=2, loc="lower left")
    return fig


def _variance(m, q: float) -> float | None:
    """``m.variance(q)``; for a law without closed-form moments, the variance of its
    probability mass function on its output grid (``exact_plan``); None if neither exists."""
    try:
        return float(m.variance(q))
    except NotImplementedError:
        plan = getattr(m, "exact_plan", None)
        if plan is None:
            return None
        grid = plan.grid() if callable(plan.grid) else plan.grid
        p = np.asarray(plan.pmf(q), dtype=float)
        mean = float(np.sum(p * grid))
        return float(np.sum(p * (grid - mean) ** 2))


def grid_cost(value: float = 5.0):
    """Variance of the bounded Laplace mechanism in its default mode (and every other mode
    it offers) relative to the continuous law, against ε."""
    modes: dict = {}
    for spec in (None, "exact"):
        try:
            probe = bndp.BoundedLaplace(1.0, sensitivity=SENSITIVITY, lower=LOWER, upper=UPPER,
                                        **({} if spec is None else {"mode": spec}))
        except (TypeError, ValueError):
            continue
        mode = getattr(probe, "mode", "continuous")
        label = f'mode="{mode}"' + (" (default)" if spec is None else "")
        if mode == "continuous" or any(k.startswith(f'mode="{mode}"') for k in modes):
            continue
        modes[label] = spec
    ref = np.array([continuous(bndp.BoundedLaplace, e, sensitivity=SENSITIVITY, lower=LOWER,
                               upper=UPPER).variance(value)
                    for e in EPSILONS])
    fig, (ax, axr) = plt.subplots(1, 2, layout="constrained")
    ax.plot(EPSILONS, ref, color="C0", label='mode="continuous"')
    for i, (label, spec) in enumerate(modes.items()):
        kw = {} if spec is None else {"mode": spec}
        v = [_variance(bndp.BoundedLaplace(e, sensitivity=SENSITIVITY, lower=LOWER, upper=UPPER,
                                           **kw), value)
             for e in EPSILONS]
        ok = np.array([x is not None for x in v])
        if not ok.any():
            continue
        vv = np.array([x if x is not None else np.nan for x in v], dtype=float)
        ax.plot(EPSILONS, vv, "o", ms=3, color=f"C{i + 1}", label=label)
        axr.plot(EPSILONS, vv / ref, "o-", ms=3, color=f"C{i + 1}", label=label)
    if not modes:  # the default law is the continuous one: nothing to compare
        axr.text(0.5, 0.5, 'the default mode is "continuous":\nno grid in this build',
                 ha="center", va="center", transform=axr.transAxes)
    axr.axhline(1.0, color="0.5", lw=0.8)
    for a in (ax, axr):
        a.set_xscale("log")
        a.set_xlabel("ε")
    ax.set_yscale("log")
    ax.set_ylabel(f"variance at q = {value:g}")
    axr.set_ylabel("variance / continuous variance")
    ax.legend(fontsize=8)
    if modes:
        axr.legend(fontsize=8)
    fig.suptitle(f"Bounded Laplace on [{LOWER:g}, {UPPER:g}], ΔQ = {SENSITIVITY:g}: "
                 "cost of the output grid")
    return fig


FIGURES = {
    "bounded_vs_clamped": bounded_vs_clamped,
    "variance_vs_epsilon": variance_vs_epsilon,
    "grid_cost": grid_cost,
}


if __name__ == "__main__" and "__file__" in globals():  # not when Sphinx runs the file
    outdir = sys.argv[1] if len(sys.argv) > 1 else os.path.join(
        os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "_build", "gallery")
    os.makedirs(outdir, exist_ok=True)
    for name, draw in FIGURES.items():
        fig = draw()
        path = os.path.join(outdir, f"{name}.png")
        fig.savefig(path, dpi=110)
        plt.close(fig)
        print(path)
