"""Draw the figures of docs/estimates.md (committed PNGs): ``python docs/img/estimates_plots.py``."""

import os

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402

import bndp  # noqa: E402

HERE = os.path.dirname(os.path.abspath(__file__))


def main() -> None:
    rng = np.random.default_rng(0)
    n = 20000
    true = np.clip(np.where(rng.random(n) < 0.6, rng.exponential(4.0, n),
                            rng.normal(40.0, 4.0, n)), 0, 60)
    m = bndp.BoundedLaplace(0.25, sensitivity=1.0, lower=0, upper=60)
    released = m.sample(true, rng=1)
    est = bndp.estimate(released, m, rng=2)
    edges = np.arange(0, 62, 2.0)
    fig, ax = plt.subplots(figsize=(7, 3.6))
    w = np.diff(edges)
    ax.bar(edges[:-1], np.histogram(true, edges)[0] / n, w, align="edge", color="0.85",
           label="true values")
    ax.stairs(np.histogram(released, edges)[0] / n, edges, color="tab:red", lw=1.5,
              label=f"released (mean {released.mean():.1f})")
    ax.stairs(est.histogram(edges), edges, color="tab:blue", lw=1.5,
              label=f"estimated (mean {est.mean:.1f})")
    ax.set_xlabel("value")
    ax.set_ylabel("share per bin of 2")
    ax.set_title(f"BoundedLaplace eps = 0.25 on [0, 60]; true mean {true.mean():.1f}")
    ax.legend(frameon=False)
    fig.tight_layout()
    fig.savefig(os.path.join(HERE, "estimates_histogram.png"), dpi=90)

    sizes = [300, 1000, 3000, 10000, 30000, 100000]
    fig, ax = plt.subplots(figsize=(7, 3.4))
    for k, eps in enumerate((0.25, 1.0)):
        mm = bndp.BoundedLaplace(eps, sensitivity=1.0, lower=0, upper=60)
        lo_, hi_, mid, nv = [], [], [], []
        for size in sizes:
            x = true[rng.integers(0, n, size)]
            y = mm.sample(x, rng=3)
            e = bndp.estimate(y, mm, rng=4, n_boot=100)
            a, b = e.mean_interval
            lo_.append(a - x.mean())
            hi_.append(b - x.mean())
            mid.append(e.mean - x.mean())
            nv.append(y.mean() - x.mean())
        half = (np.array(hi_) - np.array(lo_)) / 2
        line, = ax.plot(sizes, half, "o-", label=f"half-width of the 95% interval, eps = {eps:g}")
        ax.plot(sizes, np.abs(mid), "s", color=line.get_color(), mfc="none",
                label=f"|error| of the estimate, eps = {eps:g}")
        ax.plot(sizes, np.abs(nv), "x--", color=line.get_color(), alpha=0.6,
                label=f"|error| of the naive released mean, eps = {eps:g}")
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.set_xlabel("released values n")
    ax.set_ylabel("error of the mean")
    ax.legend(frameon=False, fontsize=7, ncol=2)
    fig.tight_layout()
    fig.savefig(os.path.join(HERE, "estimates_interval_vs_n.png"), dpi=90)


if __name__ == "__main__":
    main()
