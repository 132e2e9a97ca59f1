"""Croft's range constraints (truncated and normalised Laplace): Theorems 1-3.

Items of :mod:`bndp.reproduce`, registered on import."""

from __future__ import annotations

import numpy as np

from ..mechanisms import ConstrainedLaplace
from ._registry import Row, _item, _plt, _save


_RC_U = (0.0, 0.01, 0.1, 0.25, 0.5, 0.75, 0.9, 0.99, 1.0, 1.01, 1.1, 1.5, 2.0, 3.0, 5.0,
         10.0, 20.0, 50.0, 100.0)


def _rc_theorem1_mech(eps: float = 1.0):
    return ConstrainedLaplace(eps, sensitivity=1.0, lower=0.0, scale_rule="distance_dependent",
                              mode="continuous")


def _rc_theorem1_draw(path: str) -> None:
    plt = _plt()
    u = np.linspace(0.0, 10.0, 400)
    m = _rc_theorem1_mech()
    fig, ax = plt.subplots(figsize=(7, 4.2), constrained_layout=True)
    ax.plot(u, m.scale_at(u), label=r"Theorem 1: $\sigma(\ell)\,\epsilon/\Delta F$")
    ax.axhline(2.0, color="tab:red", ls="--", label=r"constant $2\Delta F/\epsilon$ (pure DP)")
    ax.axhline(1.0, color="k", ls=":", label=r"Laplace $\Delta F/\epsilon$")
    ax.set_xlabel(r"$\epsilon\ell/\Delta F$")
    ax.legend()
    ax.set_title("Croft, Theorem 1 scale profile (recomputed by bndp)")
    _save(fig, path)


@_item("range-constraints/theorem1", "Theorem 1: distance-dependent scale for one infinitely "
       "spanning constraint, and its hockey-stick delta", "Croft, appendix, Theorem 1 (A1)",
       "eps = dF = 1, allowed set [0, inf); u = eps*ell/dF. The appendix prints no numbers. "
       "The mechanism is NOT eps-DP (the density ratio is checked only at the boundary); "
       "the delta rows are its hockey-stick delta (ConstrainedLaplace.delta: a numerical "
       "maximum over pairs of true values at most dF apart, both directions). At eps = 5 "
       "that maximum (8.3e-9) is at a pair about 0.6 dF apart; pairs exactly dF apart give "
       "1.78e-9, the value a scan of distance-dF pairs alone reports.",
       draw=_rc_theorem1_draw)
def _rc_theorem1() -> list:
    m = _rc_theorem1_mech()
    rows = [Row.make(f"sigma*eps/dF at u={u:g}", float(m.scale_at(u))) for u in _RC_U]
    for eps in (0.5, 1.0, 5.0):
        rows.append(Row.make(f"hockey-stick delta at eps={eps:g}", _rc_theorem1_mech(eps).delta,
                             note="> 0: not pure DP; bndp refuses it in mode='exact'"))
    # The maximum over pairs at most dF apart against pairs exactly dF apart (u = 0 and
    # u = eps): equal at eps <= 1; at eps = 5 the worst pair is about 0.6 dF apart, and the
    # value at distance dF alone (1.78e-9) understates delta about 4.7 times.
    from ..mechanisms.range import _dd_hockey_u

    for eps in (1.0, 5.0):
        exact_df = float(_dd_hockey_u(np.zeros(1), np.full(1, eps), eps, False)[0])
        rows.append(Row.make(
            f"hockey-stick delta at eps={eps:g}, the pair (0, dF) only", exact_df,
            note="neighbours exactly dF apart; the delta row above maximises over pairs at "
                 "most dF apart (a sensitivity bounds the distance, it does not fix it)"))
    return rows


_RC_A2 = [((0, 1),), ((0, 0.1),), ((0, 10),), ((0, 1), (2, 3)), ((0, 1), (1.2, 5)),
          ((-5, -1.2), (-1, 0)), ((0, 0.5), (1, 4), (4.3, 4.4))]


@_item("range-constraints/theorem3", "Theorems 2-3: one constant scale for n finite forbidden "
       "intervals", "Croft, appendix, Theorems 2 and 3 (A2)",
       "eps = dF = 1 (one row at eps = 0.1), the paper's distance-proportional guarantee "
       "(guarantee='metric', continuous law). The appendix prints no numbers; the "
       "configurations are chosen here. The dp rows give the smaller scale that standard "
       "eps-DP needs.")
def _rc_theorem3() -> list:
    rows = []
    for forb in _RC_A2:
        for g in ("metric", "dp"):
            m = ConstrainedLaplace(1.0, sensitivity=1.0, forbidden=forb, guarantee=g,
                                   mode="continuous")
            rows.append(Row.make(f"forbidden {list(forb)} eps=1 {g}: sigma*", m.scale))
    m = ConstrainedLaplace(0.1, sensitivity=1.0, forbidden=_RC_A2[-1], guarantee="metric",
                           mode="continuous")
    rows.append(Row.make(f"forbidden {list(_RC_A2[-1])} eps=0.1 metric: sigma*", m.scale))
    return rows
