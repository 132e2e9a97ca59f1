"""``bndp calibrate`` and ``bndp plot``: the calibrated scale beside the unbounded mechanism."""

from __future__ import annotations

import argparse
import math
import os
from typing import Any

import numpy as np

from ..calibrate import gaussian_sigma
from ..mechanisms.registry import build_mechanism
from ._errors import CLIError, FileError, _mode_as_flag, _need
from ._io import _save_figure


# ------------------------------------------------------------------------------------------
# calibrate and plot
# ------------------------------------------------------------------------------------------
def _mech_from_args(args: argparse.Namespace) -> Any:
    try:
        return build_mechanism(args.mechanism, args.epsilon, args.sensitivity, args.lower,
                               args.upper, args.delta, mode=args.mode)
    except ValueError as exc:
        raise CLIError(_mode_as_flag(" ".join(str(exc).split()))) from None


def _unbounded(args: argparse.Namespace) -> tuple[str, float, float]:
    """(description, scale, variance) of the unbounded mechanism being compared."""
    if args.mechanism == "laplace":
        b = args.sensitivity / (args.epsilon - math.log1p(-args.delta))
        desc = ("Laplace b = sensitivity/(epsilon - ln(1 - delta))" if args.delta
                else "Laplace b = sensitivity/epsilon")
        return desc, b, 2 * b * b
    rd = args.reference_delta
    if not 0.0 < rd < 1.0:
        raise CLIError(f"--reference-delta must be in (0, 1); got {rd!r}")
    try:  # the classical Gaussian mechanism (Definition 1.4 of [CH24], Eq. (2) of [ZWB19])
        s = float(gaussian_sigma(args.epsilon, rd, args.sensitivity, calibration="dwork2014",
                                 allow_unproven=True))
    except ValueError:  # above its failure threshold it is not DP: the exact calibration
        s = float(gaussian_sigma(args.epsilon, rd, args.sensitivity, calibration="optimal"))
        return (f"Gaussian sigma = optimal (Balle-Wang) at delta = {rd:g}; the classical "
                "sqrt(2 ln(1.25/delta)) rule is not DP here", s, s * s)
    note = "" if args.epsilon < 1 else ", stated for epsilon < 1"
    return f"Gaussian sigma = sensitivity*sqrt(2 ln(1.25/delta))/epsilon at delta = {rd:g}{note}", s, s * s


def _values(args: argparse.Namespace) -> list[float]:
    if args.value:
        return list(args.value)
    lo, hi = args.lower, args.upper
    if math.isinf(hi - lo) and math.isfinite(lo) != math.isfinite(hi):
        # a half-line: its finite end and 1 and 10 sensitivities inside
        end, step = (lo, args.sensitivity) if math.isfinite(lo) else (hi, -args.sensitivity)
        return [end, end + step, end + 10 * step]
    return [lo, lo + 0.1 * (hi - lo), 0.5 * (lo + hi)]


def _cmd_calibrate(args: argparse.Namespace) -> int:
    # everything is computed before the first line is printed: an error prints no table
    mech = _mech_from_args(args)
    desc, ub_scale, ub_var = _unbounded(args)
    name = "bounded Laplace" if args.mechanism == "laplace" else "bounded Gaussian"
    sym = "b" if args.mechanism == "laplace" else "sigma"
    table = [(q, mech.variance(q), mech.bias(q)) for q in _values(args)]
    lines = [f"{name}: epsilon = {args.epsilon:g}, delta = {args.delta:g}, sensitivity = "
             f"{args.sensitivity:g}, domain [{args.lower:g}, {args.upper:g}]",
             f"calibrated {sym} = {mech.scale:.10g}   ("
             + ("grid law, --mode exact: what bndp privatize releases by default)"
                if args.mode == "exact" else "continuous law, --mode continuous: raw doubles, "
                "attackable when published)"),
             f"unbounded  {sym} = {ub_scale:.10g}   ({desc})",
             f"{'true value':>14}{'variance (bounded)':>22}{'variance (unbounded)':>24}"
             f"{'bias (bounded)':>18}"]
    lines += [f"{q:14.6g}{v:22.6g}{ub_var:24.6g}{b:18.6g}" for q, v, b in table]
    print("\n".join(lines))
    return 0


def _cmd_plot(args: argparse.Namespace) -> int:
    if args.input is not None:
        from .estimate import _cmd_plot_released

        return _cmd_plot_released(args)
    for k in ("epsilon", "sensitivity", "lower", "upper"):
        if getattr(args, k) is None:
            raise CLIError(f"bndp plot needs --{k} (or a released file with --spec and "
                           "--column)")
    if args.spec or args.column:
        raise CLIError("bndp plot: --spec and --column go with a released file (bndp plot "
                       "RELEASED --spec SPEC --column NAME -o OUT)")
    matplotlib = _need("matplotlib", "plot", "bndp plot")
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    from scipy import stats

    if not args.output.lower().endswith((".png", ".svg", ".pdf")):
        raise CLIError(f"{args.output}: the plot is written as .png, .svg or .pdf")
    if not (math.isfinite(args.lower) and math.isfinite(args.upper)):
        raise CLIError(f"bndp plot draws the density over [--lower, --upper]: both must be "
                       f"finite; got [{args.lower!r}, {args.upper!r}] (bndp calibrate takes "
                       "a half-line)")
    out_dir = os.path.dirname(os.path.abspath(args.output))
    if not os.path.isdir(out_dir):
        raise FileError(f"{args.output}: directory {out_dir} does not exist")
    # the densities drawn are those of the continuous law; the default release is its
    # floating-point-safe discretisation on a fine power-of-two grid
    mech = build_mechanism(args.mechanism, args.epsilon, args.sensitivity, args.lower,
                           args.upper, args.delta, mode="continuous")
    desc, ub_scale, _ = _unbounded(args)
    lo, hi = args.lower, args.upper
    vals = _values(args)
    x = np.linspace(lo, hi, 801)
    unb = stats.laplace if args.mechanism == "laplace" else stats.norm
    fig, axes = plt.subplots(1, 2, figsize=(args.width, args.height), sharey=False,
                             constrained_layout=True)
    name = "bounded Laplace" if args.mechanism == "laplace" else "bounded Gaussian"
    colors = plt.rcParams["axes.prop_cycle"].by_key()["color"]
    top = 0.0
    ax2 = axes[1].twinx()
    ax2.set_ylim(0, 1.05)
    ax2.set_ylabel("probability piled on a bound (stems)")
    for i, q in enumerate(vals):
        c = colors[i % len(colors)]
        d = mech.pdf(x, q)
        axes[0].plot(x, d, color=c, label=f"true value {q:g}")
        top = max(top, float(np.max(d)))
        dens = unb.pdf(x, loc=q, scale=ub_scale)
        axes[1].plot(x[1:-1], dens[1:-1], color=c, label=f"true value {q:g}")
        for end, mass in ((lo, unb.cdf(lo, loc=q, scale=ub_scale)),
                          (hi, unb.sf(hi, loc=q, scale=ub_scale))):
            if mass > 1e-4:  # point mass of the clamped law at a bound: a stem on ax2
                xs = end + (0.006 * (i - 1)) * (hi - lo)
                ax2.vlines(xs, 0, mass, color=c, lw=2.5)
                ax2.plot([xs], [mass], "o", color=c, ms=6)
    axes[0].set_title(f"{name}: {'b' if args.mechanism == 'laplace' else 'sigma'} = {mech.scale:.3g}")
    axes[1].set_title(f"unbounded, clamped to the domain: scale {ub_scale:.3g}")
    for ax in axes:
        ax.set_xlabel("released value")
        ax.set_xlim(lo - 0.02 * (hi - lo), hi + 0.02 * (hi - lo))
        ax.axvline(lo, color="0.6", lw=0.8, ls=":")
        ax.axvline(hi, color="0.6", lw=0.8, ls=":")
        ax.legend(fontsize="small")
    axes[0].set_ylabel("density")
    fig.suptitle(f"epsilon = {args.epsilon:g}, sensitivity = {args.sensitivity:g}, "
                 f"domain [{lo:g}, {hi:g}]")
    _save_figure(fig, args.output, args.dpi)
    print(f"bndp: wrote {args.output}")
    return 0
