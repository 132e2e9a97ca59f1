"""Private training with Opacus and bounded-support noise (Hu et al. 2024, arXiv:2403.05598).

A small MLP on scikit-learn's digits (8x8 images, 10 classes) is trained twice by full-batch
private gradient descent at the same noise multiplier: once with the Gaussian mechanism and
once with the truncated Gaussian on a fixed support [-a, a], both with per-sample
L-infinity clipping (Opacus per-sample gradients, bndp clipping, noise and accounting via
``bndp.torch.make_private``). Full batches are used because per-instance RDP has no
subsampling bound for these mechanisms (paper, Sec. 5.3).

epsilon is the (epsilon, delta = 1e-5) of the composed steps: for the truncated Gaussian the
per-instance value in bndp's "sup" convention, which bounds the divergence to every
neighbouring dataset and hence the largest per-example epsilon; for the Gaussian the exact
(data-independent) Gaussian RDP with the same L-infinity sensitivity.

Usage:
    python examples/dp_sgd_bounded_support.py --quick           # < 1 minute on 2 CPU cores
    python examples/dp_sgd_bounded_support.py --plot out.png    # sweep of noise multipliers

The paper's own CPU-scale comparison (linear probing over a grid of noise multipliers,
supports and learning rates, pDP and FIL frontiers) is ``bndp reproduce hu-2024/figure3``
and ``hu-2024/figure4``.

The last line printed is a JSON object
{"gaussian": {"accuracy": ..., "epsilon": ...}, "truncated": {"accuracy": ..., "epsilon": ...}}.
The noise is drawn from a seeded bndp stream here (reproducible); a real release would pass
rng=None (the cryptographically secure default stream).
"""

from __future__ import annotations

import argparse
import json
import time
import warnings

import numpy as np
import torch
from sklearn.datasets import load_digits
from sklearn.model_selection import train_test_split
from torch import nn

import bndp
from bndp.torch import make_private

DELTA = 1e-5


def data(seed: int = 0):
    X, y = load_digits(return_X_y=True)
    X = (X / 16.0).astype(np.float32)
    Xtr, Xte, ytr, yte = train_test_split(X, y, test_size=0.2, random_state=seed, stratify=y)
    return (torch.from_numpy(Xtr), torch.from_numpy(ytr).long(),
            torch.from_numpy(Xte), torch.from_numpy(yte).long())


def train(kind: str, *, noise_multiplier: float, clip: float, support: float, steps: int,
          lr: dict, seed: int, hidden: int = 16) -> dict:
    """Train one model; ``support`` is a (the half-width of S) in units of sigma, ``lr``
    the learning rate per mechanism."""
    Xtr, ytr, Xte, yte = data()
    torch.manual_seed(seed)
    model = nn.Sequential(nn.Linear(64, hidden), nn.Tanh(), nn.Linear(hidden, 10))
    loader = torch.utils.data.DataLoader(torch.utils.data.TensorDataset(Xtr, ytr),
                                         batch_size=len(Xtr), shuffle=False)
    sigma = noise_multiplier * clip
    if kind == "gaussian":
        mech: object = sigma
    else:
        mech = bndp.TruncatedGaussian(sigma, lower=-support * sigma, upper=support * sigma)
    model, opt, loader = make_private(model, torch.optim.SGD(model.parameters(), lr=lr[kind]), loader,
                                      mechanism=mech, clip_bound=clip, rng=seed + 1)
    loss_fn = nn.CrossEntropyLoss()
    for _ in range(steps):
        for xb, yb in loader:
            opt.zero_grad()
            loss_fn(model(xb), yb).backward()
            opt.step()
    with torch.no_grad():
        acc = float((model(Xte).argmax(1) == yte).float().mean())
    return {"accuracy": round(acc, 4), "epsilon": round(opt.epsilon(DELTA), 4)}


def main(argv=None) -> dict:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--quick", action="store_true", help="a short run (< 1 minute)")
    ap.add_argument("--steps", type=int, default=None)
    ap.add_argument("--noise-multiplier", type=float, default=300.0)
    ap.add_argument("--clip", type=float, default=0.01, help="L-infinity clip bound C")
    ap.add_argument("--support", type=float, default=1.5, help="a / sigma of the truncation")
    ap.add_argument("--lr", type=float, default=16.0, help="learning rate (Gaussian)")
    ap.add_argument("--lr-truncated", type=float, default=35.0,
                    help="learning rate (truncated: its release shrinks the gradient toward "
                         "0, by about sigma^2 eta_T^2 near 0, which this compensates)")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--plot", default=None, help="sweep noise multipliers, write a PNG here")
    args = ap.parse_args(argv)
    # Opacus's hooks warn that the inputs need no gradient; that is expected here
    warnings.filterwarnings("ignore", message="Full backward hook is firing")
    torch.set_num_threads(min(2, torch.get_num_threads()))
    steps = args.steps or (40 if args.quick else 150)
    common = dict(clip=args.clip, support=args.support, steps=steps, seed=args.seed,
                  lr={"gaussian": args.lr, "truncated": args.lr_truncated})
    if args.plot:
        sweep(args.plot, common, quick=args.quick)
    t0 = time.perf_counter()
    res = {k: train(k, noise_multiplier=args.noise_multiplier, **common)
           for k in ("gaussian", "truncated")}
    print(f"# {steps} full-batch steps, noise multiplier {args.noise_multiplier:g}, "
          f"C = {args.clip:g}, a = {args.support:g} sigma, lr {args.lr:g} / "
          f"{args.lr_truncated:g}, delta = {DELTA:g}, {time.perf_counter() - t0:.1f} s")
    print(json.dumps(res))
    return res


def sweep(path: str, common: dict, quick: bool = False) -> None:
    import matplotlib
    import matplotlib.ticker

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    mults = (150.0, 300.0, 600.0) if quick else (100.0, 200.0, 300.0, 600.0, 1200.0)
    rows = {k: [train(k, noise_multiplier=m, **common) for m in mults]
            for k in ("gaussian", "truncated")}
    fig, ax = plt.subplots(figsize=(6, 4), constrained_layout=True)
    for k, style in (("gaussian", "o-"), ("truncated", "s-")):
        eps = [r["epsilon"] for r in rows[k]]
        acc = [r["accuracy"] for r in rows[k]]
        ax.plot(eps, acc, style, label=k)
        for m, e, a in zip(mults, eps, acc):
            ax.annotate(f"{m:g}", (e, a), fontsize=7, textcoords="offset points",
                        xytext=(3, -9))
    ax.set_xscale("log")
    ax.xaxis.set_minor_formatter(matplotlib.ticker.NullFormatter())
    ax.set_xlabel(rf"$\epsilon$ ($\delta$ = {DELTA:g}; per-instance for truncated)")
    ax.set_ylabel("test accuracy")
    ax.set_title(f"digits, MLP, {common['steps']} full-batch steps, "
                 f"a = {common['support']:g} sigma (labels: noise multiplier)", fontsize=9)
    ax.grid(alpha=0.3)
    ax.legend()
    fig.savefig(path, dpi=110)
    plt.close(fig)
    print(f"# wrote {path}")
    for k in rows:
        for m, r in zip(mults, rows[k]):
            print(f"# {k:9s} multiplier {m:6g}: accuracy {r['accuracy']:.4f}, "
                  f"epsilon {r['epsilon']:.3f}")


if __name__ == "__main__":
    main()
