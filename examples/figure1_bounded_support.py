"""Regenerate Figure 1 of Hu et al. 2024 (arXiv:2403.05598): FIL eta and per-instance
(2, eps)-RDP against the true value theta for the Gaussian, rectified Gaussian, truncated
Gaussian and stochastic-sign mechanisms, support S = [-1, 1], sigma in {1/2, 1},
sensitivity 1.

The paper does not say which divergence convention its RDP panels use; solid lines are
the paper's Algorithm 1 convention D(theta || theta + 1) ("alg1"), dashed lines the safe
bound over both directions and both shifts ("sup", bndp's default).

Usage: python examples/figure1_bounded_support.py [output.png]
"""

import sys

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402

import bndp  # noqa: E402
from bndp.accounting import (  # noqa: E402
    fisher_information_loss,
    gaussian_rdp,
    per_instance_rdp,
)


def main(path: str = "figure1_bounded_support.png") -> str:
    theta = np.linspace(-3.0, 3.0, 601)
    fig, axes = plt.subplots(2, 2, figsize=(10, 7.5), constrained_layout=True)
    colors = {"Gaussian": "k", "Rectified": "tab:blue", "Truncated": "tab:green",
              "Stochastic sign": "tab:orange"}
    for col, sigma in enumerate((0.5, 1.0)):
        mechs = {"Rectified": bndp.RectifiedGaussian(sigma, lower=-1.0, upper=1.0),
                 "Truncated": bndp.TruncatedGaussian(sigma, lower=-1.0, upper=1.0),
                 "Stochastic sign": bndp.StochasticSign(sigma)}
        ax_eta, ax_eps = axes[0, col], axes[1, col]
        ax_eta.plot(theta, np.full_like(theta, 1.0 / sigma), color=colors["Gaussian"],
                    label="Gaussian")
        ax_eps.plot(theta, np.full_like(theta, gaussian_rdp(sigma, 1.0, 2.0)),
                    color=colors["Gaussian"], label="Gaussian")
        for name, m in mechs.items():
            ax_eta.plot(theta, fisher_information_loss(m, theta), color=colors[name], label=name)
            ax_eps.plot(theta, per_instance_rdp(m, theta, 1.0, 2.0, "alg1", per_coordinate=True),
                        color=colors[name], label=f"{name} (alg1)")
            ax_eps.plot(theta, per_instance_rdp(m, theta, 1.0, 2.0, "sup", per_coordinate=True),
                        color=colors[name], ls="--", lw=1, label=f"{name} (sup)")
        ax_eta.set_title(f"FIL $\\eta$, $\\sigma$ = {sigma:g}, S = [-1, 1]")
        ax_eps.set_title(f"(2, $\\epsilon$)-RDP, $\\sigma$ = {sigma:g}, sensitivity 1")
        ax_eps.set_yscale("log")
        ax_eps.set_ylim(1e-4, 2 * gaussian_rdp(sigma, 1.0, 2.0))
        for ax in (ax_eta, ax_eps):
            ax.set_xlabel(r"$\theta$")
            ax.grid(alpha=0.3)
    axes[0, 0].set_ylabel(r"$\eta$")
    axes[1, 0].set_ylabel(r"$\epsilon$")
    axes[0, 1].legend(fontsize=8)
    axes[1, 1].legend(fontsize=7, ncol=2)
    fig.savefig(path, dpi=110)
    plt.close(fig)
    return path


if __name__ == "__main__":
    print(main(*sys.argv[1:2]))
