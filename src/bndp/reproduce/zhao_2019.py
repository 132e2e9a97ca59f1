"""Zhao et al. 2019, "Reviewing and Improving the Gaussian Mechanism for Differential Privacy": Table I, Figures 1-5, Section VII.

Items of :mod:`bndp.reproduce`, registered on import."""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from .. import accounting, calibrate
from ..mechanisms import Gaussian
from ._registry import Row, _item, _plt, _save


def _classical_sigma(method: str, eps: float, delta: float) -> float:
    """Eq. (1)/(2) literally: bndp.calibrate.gaussian_sigma refuses the classical formulas
    where they fail DP, which every row of Table I does."""
    c = 2.0 if method == "dwork2006" else 1.25
    return math.sqrt(2.0 * math.log(c / delta)) / eps


_ZH_TABLE1 = [  # paper, mechanism, eps, delta, resulting printed, least printed
    ("Imtiaz & Sarwate [12]", "dwork2014", 10, 1e-2, "0.3108", "0.3501"),
    ("Liu et al. [13]", "dwork2014", 6, 1e-1, "0.3746", "0.3813"),
    ("Liu et al. [13]", "dwork2014", 10, 1e-1, "0.2248", "0.2818"),
    ("Wang et al. [14]", "dwork2014", 8.87, 1e-5, "0.5462", "0.5172"),
    ("Wang et al. [14]", "dwork2014", 9.59, 1e-5, "0.5052", "0.5513"),
    ("Ermis & Cemgil [15]", "dwork2014", 10, 1e-2, "0.3108", "0.3501"),
    ("Ermis & Cemgil [15]", "dwork2014", 10, 1e-5, "0.4845", "0.4999"),
    ("Liu et al. [16]", "dwork2014", 8, 1e-1, "0.2809", "0.3215"),
    ("Imtiaz & Sarwate [17]", "dwork2014", 10, 1e-2, "0.3108", "0.3501"),
    ("Jalko et al. [7]", "dwork2014", 10, 1e-3, "0.3776", "0.4061"),
    ("Heikkila et al. [8]", "dwork2014", 10, 1e-4, "0.4344", "0.1976"),
    ("Heikkila et al. [8]", "dwork2014", 31.62, 1e-4, "0.1374", "0.4553"),
    ("Imtiaz & Sarwate [18]", "dwork2006", 10, 1e-2, "0.3325", "0.3501"),
    ("Pyrgelis et al. [19]", "dwork2006", 10, 1e-1, "0.2448", "0.2818"),
    ("Wang et al. [21]", "dwork2006", 10, 1e-1, "0.2448", "0.2818"),
    ("Jain & Thakurta [20]", "dwork2006", 10, 1e-3, "0.3898", "0.4061"),
]


def _zhao_table1_errata(paper: str, eps: float, computed: float, column: str) -> str | None:
    if column == "resulting":
        if paper.startswith("Imtiaz & Sarwate [18]"):
            return (f"exact value {computed:.6f} (0.3255): the printed 0.3325 transposes two "
                    "digits")
        if paper.startswith("Jain"):
            return f"exact value {computed:.6f} rounds to 0.3899, not 0.3898 (a rounding slip)"
        return None
    if paper.startswith("Wang et al. [14]"):
        other = "9.59" if eps == 8.87 else "8.87"
        return (f"exact value {computed:.6f}: the printed least-noise entries of the two Wang "
                f"et al. rows are swapped (the printed value belongs to eps = {other})")
    if paper.startswith("Heikkila"):
        if eps == 10:
            return (f"exact value {computed:.6f}: the printed least-noise entries of the two "
                    "Heikkila et al. rows are swapped (0.4553 is printed for eps = 31.62)")
        return (f"exact value {computed:.6f}: 0.4553 belongs to eps = 10 (swapped), and the "
                "0.1976 printed there is the pDP-optimal sigma at eps = 31.62, not the DP one")
    return None


@_item("zhao-2019/table1", "Table I: misuse of the classical Gaussian mechanisms (resulting "
       "vs least noise)", "Zhao et al. 2019, Table I",
       "Sensitivity 1. 'Resulting' is the classical sigma of the row's mechanism (Eq. (1) or "
       "(2) evaluated literally), 'least' is sigma_DP-OPT (calibrate.gaussian_sigma, "
       "calibration='optimal'). The note of each 'resulting' row gives the delta that sigma "
       "really achieves (calibrate.gaussian_delta): every row exceeds its target.")
def _zhao_table1() -> list:
    rows = []
    for paper, mech, eps, delta, p_res, p_least in _ZH_TABLE1:
        tag = f"{paper} eps={eps:g} delta={delta:g}"
        res = _classical_sigma(mech, eps, delta)
        actual = calibrate.gaussian_delta(res, eps, 1.0)
        rows.append(Row.make(f"{tag}: resulting sigma ({mech})", res, p_res,
                             note=f"achieved delta {actual:.3e} > {delta:g}",
                             erratum=_zhao_table1_errata(paper, eps, res, "resulting")))
        least = calibrate.gaussian_sigma(eps, 1.0, delta=delta)
        rows.append(Row.make(f"{tag}: least sigma (DP-OPT)", least, p_least,
                             erratum=_zhao_table1_errata(paper, eps, least, "least")))
    rows.append(Row.make("Heikkila et al. [8] eps=31.62 delta=0.0001: pDP-optimal sigma",
                         calibrate.gaussian_sigma(31.62, 1.0, delta=1e-4,
                                                  calibration="pdp_optimal"),
                         "0.1976", note="explains the printed 0.1976 (printed in the eps = 10 "
                                        "row)"))
    return rows


_ZH_G = [("dwork2014", 1e-3, "7.47"), ("dwork2014", 1e-4, "8.00"), ("dwork2014", 1e-5, "8.43"),
         ("dwork2014", 1e-6, "8.79"), ("dwork2006", 1e-3, "8.51"), ("dwork2006", 1e-4, "8.99"),
         ("dwork2006", 1e-5, "9.39"), ("dwork2006", 1e-6, None)]


def _zhao_figure1_draw(path: str) -> None:
    plt = _plt()
    deltas = np.logspace(-10, -0.05, 80)
    fig, axes = plt.subplots(1, 2, figsize=(9, 4), constrained_layout=True, sharey=True)
    for ax, mech in zip(axes, ("dwork2014", "dwork2006")):
        g = calibrate.classical_failure_threshold(deltas, mech)
        ax.fill_betweenx(deltas, g, 25, color="tab:red", alpha=0.3, label="not (eps, delta)-DP")
        ax.plot(g, deltas, color="tab:red")
        ax.set_yscale("log")
        ax.set_xlim(0, 25)
        ax.set_xlabel(r"$\epsilon$")
        ax.set_title(f"{mech}: failure region")
    axes[0].set_ylabel(r"$\delta$")
    axes[0].legend(loc="lower right")
    _save(fig, path)


@_item("zhao-2019/figure1", "Fig. 1 and section V(iii): eps above which the classical Gaussian "
       "mechanisms fail (eps, delta)-DP", "Zhao et al. 2019, Figure 1 and section V(iii)",
       "G(delta) solves delta_exact(sigma_classical(eps), eps) = delta "
       "(calibrate.classical_failure_threshold).", draw=_zhao_figure1_draw)
def _zhao_figure1() -> list:
    rows = []
    for mech, delta, printed in _ZH_G:
        g = calibrate.classical_failure_threshold(delta, mech)
        note = ""
        if mech == "dwork2014":
            note = (f"exact threshold {g:.4f}: the printed value is about 0.01 too high (read "
                    "off the figure's grid); Dwork-2014 already fails just below it")
        elif printed is None:
            note = "cut off in the paper's text"
        rows.append(Row.make(f"G(delta={delta:g}) {mech}", g, printed, note=note))
    return rows


_ZH_METHODS = ("dwork2006", "dwork2014", "optimal", "zhao1", "zhao2", "pdp_optimal", "zhao3",
               "zhao4")
_ZH_FIG2_EPS = (0.1, 1.0, 5.0, 10.0, 15.0, 20.0)
_ZH_FIG2_DELTA = (1e-2, 1e-3, 1e-4, 1e-5, 1e-6, 1e-8, 1e-10)


def _zhao_sigma(method: str, eps: float, delta: float) -> float:
    if method.startswith("dwork"):
        return _classical_sigma(method, eps, delta)
    return calibrate.gaussian_sigma(eps, 1.0, delta=delta, calibration=method)


def _zhao_figure2_draw(path: str) -> None:
    plt = _plt()
    deltas = np.logspace(-10, -2, 40)
    fig, axes = plt.subplots(2, 3, figsize=(12, 7), constrained_layout=True)
    for ax, eps in zip(axes.ravel(), _ZH_FIG2_EPS):
        for m in _ZH_METHODS:
            ax.plot(deltas, [_zhao_sigma(m, eps, float(d)) for d in deltas], label=m)
        ax.set_xscale("log")
        ax.set_title(rf"$\epsilon$ = {eps:g}")
        ax.set_xlabel(r"$\delta$")
        ax.set_ylabel(r"$\sigma$")
    axes[0, 0].legend(fontsize=7)
    _save(fig, path)


@_item("zhao-2019/figure2", "Fig. 2: sigma against delta for the eight Gaussian calibrations",
       "Zhao et al. 2019, Figure 2",
       "Sensitivity 1; the figure prints no numbers (delta grid chosen here). The classical "
       "sigmas are Eq. (1)/(2) evaluated literally, also where they are not DP (eps > 1).",
       draw=_zhao_figure2_draw)
def _zhao_figure2() -> list:
    return [Row.make(f"eps={eps:g} delta={delta:g} {m}", _zhao_sigma(m, eps, delta))
            for eps in _ZH_FIG2_EPS for delta in _ZH_FIG2_DELTA for m in _ZH_METHODS]


def _pdp_threshold(method: str, delta: float) -> float:
    from scipy.optimize import brentq

    def f(eps: float) -> float:
        s = _classical_sigma(method, eps, delta)
        return math.log(calibrate.gaussian_delta(s, eps, 1.0, notion="pdp")) - math.log(delta)

    return brentq(f, 1.0, 30.0, xtol=1e-12)


@_item("zhao-2019/figure3", "Fig. 3: eps above which the classical Gaussian mechanisms fail "
       "(eps, delta)-pDP", "Zhao et al. 2019, Figure 3",
       "Boundary of the shaded region: the eps at which the exact pDP delta of the classical "
       "sigma (calibrate.gaussian_delta, notion='pdp') equals delta (a root solve here).")
def _zhao_figure3() -> list:
    return [Row.make(f"pDP threshold delta={d:g} {m}", _pdp_threshold(m, d))
            for m in ("dwork2014", "dwork2006") for d in (1e-3, 1e-4, 1e-5, 1e-6)]


@_item("zhao-2019/section7", "Section VII: zCDP, mCDP and composition against the paper's "
       "mechanisms", "Zhao et al. 2019, section VII and Lemma 15",
       "Sensitivity 1, (eps, delta) = (1, 1e-5). The section prints no numbers.")
def _zhao_section7() -> list:
    rows = [
        Row.make("sigma_zCDP (= RDP route)", calibrate.zcdp_sigma(1.0, 1.0, delta=1e-5),
                 note="the paper prints sqrt(2 eps) in the denominator; its derivation gives "
                      "sqrt(2) eps, computed here"),
        Row.make("sigma_M4 (zhao4)",
                 calibrate.gaussian_sigma(1.0, 1.0, delta=1e-5, calibration="zhao4"),
                 note="below sigma_zCDP, as claimed"),
        Row.make("sigma_mCDP", calibrate.mcdp_sigma(1.0, 1.0, delta=1e-5),
                 note="the paper claims this equals sigma_pDP-OPT; it is larger (sub-Gaussian "
                      "tail instead of erfc)"),
        Row.make("sigma_pDP-OPT",
                 calibrate.gaussian_sigma(1.0, 1.0, delta=1e-5, calibration="pdp_optimal")),
        Row.make("sigma_DP-OPT", calibrate.gaussian_sigma(1.0, 1.0, delta=1e-5)),
        Row.make("Lemma 15: composed sigma* for Delta = (1, 2), sigma = (3, 4)",
                 accounting.gaussian_composition_sigma([3.0, 4.0], [1.0, 2.0])),
    ]
    return rows


# Figures 4 and 5: the mechanisms' utility on mean and histogram estimation
_ZH_F4_N = 1000
_ZH_F4_D = 10                   # (a) and (b): the paper does not state d
_ZH_F4_EPS = (0.1, 0.2, 0.4, 0.6, 0.8, 0.99)
_ZH_F4_DELTA = (1e-2, 1e-3, 1e-4, 1e-5, 1e-6, 1e-8)
_ZH_F4_DIMS = (1, 10, 100, 1000)
_ZH_F4_TRIALS = 20
_ZH_F5_EPS = (0.1, 0.2, 0.4, 0.6, 0.8, 1.0)
_ZH_F5_DELTA = (1e-9, 1e-8, 1e-7, 1e-6, 1e-5)


def _zhao_figure4_settings() -> list:
    """(panel, eps, delta, d) of the three panels."""
    return ([("a", e, 1e-4, _ZH_F4_D) for e in _ZH_F4_EPS]
            + [("b", 0.1, d, _ZH_F4_D) for d in _ZH_F4_DELTA]
            + [("c", 0.1, 1e-4, d) for d in _ZH_F4_DIMS])


def _zhao_expected_l2(sigma: float, d: int) -> float:
    """E||sigma N(0, I_d)||_2 = sigma sqrt(2) Gamma((d+1)/2) / Gamma(d/2)."""
    return sigma * math.sqrt(2.0) * math.exp(math.lgamma((d + 1) / 2) - math.lgamma(d / 2))


def _zhao_figure4_data() -> dict:
    """(panel, eps, delta, d, method) -> (expected, simulated mean) l2 error; seeded."""
    rng = np.random.default_rng(2019)
    out = {}
    for panel, eps, delta, d in _zhao_figure4_settings():
        x0 = rng.standard_normal(d)                       # the data centre
        X = x0 + rng.uniform(-0.5, 0.5, size=(_ZH_F4_N, d))
        q = X.mean(axis=0)
        sens = math.sqrt(d) / _ZH_F4_N                    # l2 sensitivity, replace-one
        for m in _ZH_METHODS:
            if m.startswith("dwork"):
                sigma = _classical_sigma(m, eps, delta) * sens
                draws = q + sigma * rng.standard_normal((_ZH_F4_TRIALS, d))
            else:
                g = Gaussian(eps, delta=delta, sensitivity=sens, calibration=m)
                sigma = g.sigma
                draws = g.sample(q, size=(_ZH_F4_TRIALS, d), rng=rng)
            err = float(np.mean(np.linalg.norm(draws - q, axis=1)))
            out[(panel, eps, delta, d, m)] = (_zhao_expected_l2(sigma, d), err)
    return out


def _zhao_finish(fig: Any, axes: Any, path: str, logx: tuple, ylabel: str, title: str) -> None:
    """Log y axes (x too where ``logx``), the y label and legend on the first panel, the
    title; write ``path``."""
    for ax, lx in zip(axes, logx):
        ax.set_yscale("log")
        ax.set_xscale("log" if lx else "linear")
    axes[0].set_ylabel(ylabel)
    axes[0].legend(fontsize=7)
    fig.suptitle(title, fontsize=10)
    _save(fig, path)


def _zhao_figure4_draw(path: str) -> None:
    plt = _plt()
    data = _zhao_figure4_data()
    fig, axes = plt.subplots(1, 3, figsize=(14, 4.2), constrained_layout=True)
    for ax, panel, xs, xlabel in (
            (axes[0], "a", _ZH_F4_EPS, r"$\epsilon$ ($\delta$ = 1e-4, d = 10)"),
            (axes[1], "b", _ZH_F4_DELTA, r"$\delta$ ($\epsilon$ = 0.1, d = 10)"),
            (axes[2], "c", _ZH_F4_DIMS, r"d ($\epsilon$ = 0.1, $\delta$ = 1e-4)")):
        ax.set_xlabel(xlabel)
        keys = [k for k in data if k[0] == panel]
        for i, m in enumerate(_ZH_METHODS):
            ks = [k for k in keys if k[-1] == m]
            line, = ax.plot(xs, [data[k][0] for k in ks], label=m)
            ax.plot(xs, [data[k][1] for k in ks], "o", ms=3, color=line.get_color())
    _zhao_finish(fig, axes, path, (False, True, True),
                 r"$\ell_2$ error (lines: expected; dots: mean of 20 draws)",
                 "Zhao et al., Figure 4: private mean estimation, n = 1000 (recomputed by "
                 "bndp)")


@_item("zhao-2019/figure4", "Fig. 4: l2 error of private mean estimation against eps, delta "
       "and d for the eight Gaussian calibrations", "Zhao et al. 2019, Figure 4 (section "
       "VIII-A)",
       "The paper's setting: n = 1000 records x_i = x_0 + xi_i, x_0 ~ N(0, I_d), xi_i uniform "
       "on [-1/2, 1/2]^d, the mean released with l2 sensitivity sqrt(d)/n (replace-one). Left "
       "open and chosen here: d = 10 in panels (a) and (b), the eps, delta and d grids, 20 "
       "draws per point (numpy default_rng(2019): the data, then the noise). The error does "
       "not depend on the data: its expectation is sigma E||N(0, I_d)|| = sigma sqrt(2) "
       "Gamma((d+1)/2)/Gamma(d/2), given next to the simulated mean. The classical sigmas "
       "are Eq. (1)/(2) (DP for eps < 1, which the figure keeps to); the others are bndp's "
       "Gaussian(calibration=...). The figure prints no numbers.",
       draw=_zhao_figure4_draw)
def _zhao_figure4() -> list:
    rows = []
    for (panel, eps, delta, d, m), (expected, sim) in _zhao_figure4_data().items():
        lab = f"({panel}) eps={eps:g} delta={delta:g} d={d} {m}"
        rows.append(Row.make(f"{lab}: expected l2 error", expected))
        rows.append(Row.make(f"{lab}: mean l2 error of {_ZH_F4_TRIALS} draws", sim))
    return rows


def _zhao_figure5_settings() -> list:
    return ([("a", e, 1e-6) for e in _ZH_F5_EPS] + [("b", 0.1, d) for d in _ZH_F5_DELTA])


def _zhao_figure5_sigma(m: str, eps: float, delta: float) -> float:
    return _classical_sigma(m, eps, delta) if m.startswith("dwork") else \
        Gaussian(eps, delta=delta, sensitivity=1.0, calibration=m).sigma


def _zhao_figure5_draw(path: str) -> None:
    plt = _plt()
    fig, axes = plt.subplots(1, 2, figsize=(10, 4.2), constrained_layout=True)
    for ax, panel, xs, xlabel in (
            (axes[0], "a", _ZH_F5_EPS, r"$\epsilon$ ($\delta$ = 1e-6)"),
            (axes[1], "b", _ZH_F5_DELTA, r"$\delta$ ($\epsilon$ = 0.1)")):
        ax.set_xlabel(xlabel)
        for m in _ZH_METHODS:
            ax.plot(xs, [_zhao_figure5_sigma(m, e, d) ** 2
                         for p, e, d in _zhao_figure5_settings() if p == panel], "o-",
                    ms=3, label=m)
    _zhao_finish(fig, axes, path, (False, True), r"expected MSE $\sigma^2$ (sensitivity 1)",
                 "Zhao et al., Figure 5: histogram estimation, expected MSE (recomputed by "
                 "bndp; the Adult data are not needed for the expectation)")


@_item("zhao-2019/figure5", "Fig. 5: expected MSE of the private Adult histogram against eps "
       "and delta for the eight Gaussian calibrations", "Zhao et al. 2019, Figure 5 (section "
       "VIII-B)",
       "The paper's setting: the histogram of the Adult data's categorical attributes, "
       "add/remove neighbours, so sensitivity 1; (a) delta = 1e-6, eps from 0.1 to 1.0; (b) "
       "eps = 0.1, delta from 1e-9 to 1e-5 (grids chosen here). The Adult data are not "
       "shipped with bndp, and they are not needed for the expectation: the noise of every "
       "cell is N(0, sigma^2) whatever the counts, so the expected MSE is sigma^2, given "
       "here. The paper plots one draw's MSE over the cells, which scatters around it. At "
       "eps = 1.0 the classical sigmas are Eq. (1)/(2) evaluated at the edge of their eps "
       "< 1 condition. The figure prints no numbers.", draw=_zhao_figure5_draw)
def _zhao_figure5() -> list:
    return [Row.make(f"({p}) eps={e:g} delta={d:g} {m}: expected MSE",
                     _zhao_figure5_sigma(m, e, d) ** 2)
            for p, e, d in _zhao_figure5_settings() for m in _ZH_METHODS]
