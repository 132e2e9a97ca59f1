"""The rows, the items and their registry, and the public entry points of
:mod:`bndp.reproduce` (the papers' modules register their items here)."""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from decimal import ROUND_HALF_EVEN, Decimal, InvalidOperation
from typing import Any, Callable


#: The four row statuses.
STATUSES = ("match", "misprint", "not printed", "differs")

#: Paper prefix -> (citation, what cannot be reproduced here and why).
PAPERS = {
    "chen-hale-2024": (
        "B. Chen, M. Hale. The Bounded Gaussian Mechanism for Differential Privacy. JPC 2024.",
        "Nothing: Table 1 and Figure 1 need only the bounds and sensitivities."),
    "holohan-2019": (
        "N. Holohan, S. Antonatos, S. Braghin, P. Mac Aonghusa. The Bounded Laplace Mechanism "
        "in Differential Privacy. JPC 2020 (arXiv 2019).",
        "Example 1.1's draws (-1.71, 2.31, -1.20, 0.652) are unseeded illustrations; Figures 1 "
        "and 4 are sketches without a setting. Figure 2 (naive Bayes on Iris) prints no numbers "
        "and leaves the split, the feature bounds and the sensitivities open: it is "
        "recomputed under stated choices (holohan-2019/figure2, needs scikit-learn)."),
    "zhao-2019": (
        "J. Zhao et al. Reviewing and Improving the Gaussian Mechanism for Differential "
        "Privacy. arXiv:1911.12060.",
        "Tables II and III are qualitative. Figure 4 (synthetic mean estimation) is "
        "recomputed, seeded, with its expectation; Figure 5 needs the Adult data set, which "
        "is not shipped: its expected MSE (sigma^2, whatever the counts) is given instead "
        "of one draw's (zhao-2019/figure5)."),
    "hu-2024": (
        "S. Hu, S. Mahloujifar, V. Smith, K. Chaudhuri, C. Guo. Privacy Amplification for the "
        "Gaussian Mechanism via Bounded Support. arXiv:2403.05598.",
        "Figures 3 and 4 (sections 6.2/6.3) are GPU-scale image classification "
        "(CIFAR-10/100, OxfordIIITPet, WRN from scratch, ViT/BEiT linear probes): they are "
        "recomputed at CPU scale only, the same private linear probing on the DP-SGD "
        "example's digits data (hu-2024/figure3 and figure4, need scikit-learn), and their "
        "printed GPU-scale ratios are not comparable. Appendix G's Tables 1-3 are "
        "hyperparameter grids, not results. Section 6.1 (synthetic mean estimation) is "
        "recomputed under a stated reading; its "
        "'up to 30 %' claim is not reproduced (hu-2024/section6.1)."),
    "range-constraints": (
        "W. L. Croft. Appendix to Ch. 5 Sec. 1 of 'Design and Applications of Differentially "
        "Private Mechanisms' (truncated and normalised Laplace; Croft, Sack, Shi, JCST 2022).",
        "The appendix has no numbered tables or figures and prints no numbers; its theorems "
        "are reproduced as tables of the scales they define."),
}


# ------------------------------------------------------------------------------------------
# rows and the one comparison
# ------------------------------------------------------------------------------------------

def matches_printed(computed: float, printed: str) -> bool:
    """Whether ``computed`` equals the printed number to the printed precision.

    The printed text (``"84.3"``, ``"88"``, ``"35.0%"``, ``"1e-5"``) fixes the last printed
    decimal place; ``computed`` (its exact binary value) is rounded half-to-even to that
    place and compared with the printed value exactly. A trailing ``%`` is ignored (the
    computed value is then in percent).

    Parameters
    ----------
    computed : float
        The value computed by bndp.
    printed : str
        The number as the paper prints it.

    Returns
    -------
    bool

    Examples
    --------
    >>> matches_printed(84.38443335875604, "84.3")
    False
    >>> matches_printed(84.38443335875604, "84.4")
    True
    >>> matches_printed(88.00000000000001, "88"), matches_printed(35.0365, "35.0%")
    (True, True)
    """
    text = str(printed).strip().rstrip("%").strip()
    try:
        p = Decimal(text)
    except InvalidOperation:
        raise ValueError(f"not a printed number: {printed!r}") from None
    c = float(computed)
    if not math.isfinite(c):
        return False
    exp = p.as_tuple().exponent
    quantum = Decimal(1).scaleb(exp)  # type: ignore[arg-type]
    return Decimal(c).quantize(quantum, rounding=ROUND_HALF_EVEN) == p


@dataclass(frozen=True)
class Row:
    """One number of a reproduced table or figure.

    Attributes
    ----------
    label : str
        What the number is (the table cell or curve point).
    computed : float
        The value computed by bndp's public API.
    printed : str or None
        The number as printed in the paper, or None.
    status : str
        One of :data:`STATUSES`.
    note : str
        The exact value and the reason for a misprint, the explanation of a difference,
        or how an unstated setting was filled in.

    Examples
    --------
    >>> from bndp.reproduce import Row
    >>> Row.make("sigma^2 at eps = 1", 84.38443, "84.3", erratum="exact 84.3844").status
    'misprint'
    """

    label: str
    computed: float
    printed: str | None
    status: str
    note: str = ""

    @classmethod
    def make(cls, label: str, computed: float, printed: str | None = None, note: str = "",
             erratum: str | None = None) -> "Row":
        """Build a row and decide its status: ``"not printed"`` without ``printed``,
        ``"match"`` when :func:`matches_printed`, else ``"misprint"`` when an ``erratum``
        (the documented correction) is given, else ``"differs"``.

        Parameters
        ----------
        label : str
        computed : float
        printed : str or None
        note : str
            Kept for every status (for a misprint, appended to the erratum).
        erratum : str or None
            The documented misprint: the exact value and the reason.

        Returns
        -------
        Row
        """
        c = float(computed)
        if printed is None:
            status = "not printed"
        elif matches_printed(c, printed):
            status = "match"
        elif erratum:
            status = "misprint"
            note = erratum + ("; " + note if note else "")
        else:
            status = "differs"
        if status == "differs" and not note:
            raise ValueError(f"row {label!r} differs from the paper without a note")
        return cls(label, c, printed, status, note)

    def as_dict(self) -> dict:
        """The row as a JSON-ready dict (keys label, computed, printed, status, note).

        Returns
        -------
        dict
        """
        return {"label": self.label, "computed": self.computed, "printed": self.printed,
                "status": self.status, "note": self.note}


@dataclass(frozen=True)
class Item:
    """A reproducible table or figure.

    Attributes
    ----------
    id : str
        ``paper/table-or-figure``, e.g. ``"chen-hale-2024/table1"``.
    title : str
        One line.
    source : str
        Paper and table, figure or section.
    compute : callable
        ``compute() -> list[Row]``.
    draw : callable or None
        ``draw(path)`` writes the figure (matplotlib), where the paper has one.
    note : str
        Settings the paper leaves open and how they were filled in.
    requires : tuple of str
        Optional packages the item needs beyond bndp's own dependencies, as
        ``(import name, pip name)`` pairs (``holohan-2019/figure2`` needs scikit-learn for
        its Iris data); :func:`run` raises ``ImportError`` naming them where they are
        missing (:func:`missing_requirements`).

    Examples
    --------
    >>> from bndp.reproduce import get_item
    >>> get_item("zhao-2019/table1").source
    'Zhao et al. 2019, Table I'
    """

    id: str
    title: str
    source: str
    compute: Callable[[], list] = field(repr=False)
    draw: Callable[[str], None] | None = field(default=None, repr=False)
    note: str = ""
    requires: tuple = ()


_REGISTRY: dict = {}


def _item(id: str, title: str, source: str, note: str = "", draw: Any = None,
          requires: tuple = ()):
    def deco(fn):
        _REGISTRY[id] = Item(id, title, source, fn, draw, note, tuple(requires))
        return fn
    return deco


def missing_requirements(item_id: str) -> list:
    """The pip names of the optional packages an item needs and this environment lacks.

    Parameters
    ----------
    item_id : str
        An item's ID (see :func:`items`).

    Returns
    -------
    list of str
        Empty where the item can run.

    Examples
    --------
    >>> from bndp.reproduce import missing_requirements
    >>> missing_requirements("chen-hale-2024/table1")
    []
    """
    import importlib.util

    return [pip for mod, pip in get_item(item_id).requires
            if importlib.util.find_spec(mod) is None]


def _require(item_id: str) -> None:
    missing = missing_requirements(item_id)
    if missing:
        raise ImportError(f"{item_id} needs {', '.join(missing)} (pip install "
                          f"{' '.join(missing)})")


def _plt():
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    return plt


def _save(fig: Any, path: str) -> None:
    """Write a figure to ``path`` and close it."""
    import matplotlib.pyplot as plt

    fig.savefig(path, dpi=110)
    plt.close(fig)


# ------------------------------------------------------------------------------------------
# public entry points
# ------------------------------------------------------------------------------------------

def items() -> list:
    """Every item, grouped by paper (in the order of :data:`PAPERS`).

    Returns
    -------
    list of Item

    Examples
    --------
    >>> from bndp.reproduce import items
    >>> items()[0].id
    'chen-hale-2024/table1'
    """
    order = list(PAPERS)
    return sorted(_REGISTRY.values(), key=lambda it: (order.index(it.id.split("/")[0]),
                                                      list(_REGISTRY).index(it.id)))


def get_item(item_id: str) -> Item:
    """The item with this ID.

    Parameters
    ----------
    item_id : str
        The ID to look up, e.g. ``"hu-2024/figure1"``.

    Returns
    -------
    Item

    Raises
    ------
    KeyError
        Unknown ID (the message lists the known ones).

    Examples
    --------
    >>> from bndp.reproduce import get_item
    >>> get_item("hu-2024/figure1").title.split(":")[0]
    'Figure 1'
    """
    try:
        return _REGISTRY[item_id]
    except KeyError:
        raise KeyError(f"unknown item {item_id!r}; known: {', '.join(_REGISTRY)}") from None


def run(item_id: str) -> dict:
    """Compute an item: ``{"id", "title", "source", "note", "rows": [row dicts]}``.

    Parameters
    ----------
    item_id : str
        The item to compute.

    Returns
    -------
    dict
        JSON-ready; each row has ``label``, ``computed``, ``printed``, ``status``, ``note``.

    Raises
    ------
    KeyError
        Unknown ID.
    ImportError
        The item needs an optional package that is missing (:func:`missing_requirements`).

    Examples
    --------
    >>> from bndp.reproduce import run
    >>> r = run("chen-hale-2024/table1")
    >>> [row["status"] for row in r["rows"]].count("misprint")
    1
    """
    it = get_item(item_id)
    _require(item_id)
    rows = it.compute()
    return {"id": it.id, "title": it.title, "source": it.source, "note": it.note,
            "rows": [r.as_dict() for r in rows]}


def plot(item_id: str, path: str) -> str:
    """Draw the item's figure into ``path`` (any format matplotlib writes).

    Parameters
    ----------
    item_id : str
        The item to draw (one with a figure).
    path : str
        File to write; its suffix picks the format.

    Returns
    -------
    str
        ``path``.

    Raises
    ------
    ValueError
        The item has no figure.

    Examples
    --------
    >>> import os, tempfile
    >>> from bndp.reproduce import plot
    >>> p = plot("holohan-2019/figure3", os.path.join(tempfile.mkdtemp(), "f3.png"))
    >>> os.path.getsize(p) > 0
    True
    """
    it = get_item(item_id)
    if it.draw is None:
        raise ValueError(f"{item_id} has no figure (the paper's item is a table)")
    _require(item_id)
    it.draw(path)
    return path


def _fmt(v: float, printed: str | None) -> str:
    if printed is not None:
        text = printed.rstrip("%")
        d = max(0, -Decimal(text).as_tuple().exponent)  # type: ignore[operator]
        return f"{v:.{d + 2}f}"
    return f"{v:.6g}"


def format_table(result: dict) -> str:
    """A plain-text table of a :func:`run` result, with a count of each status.

    Parameters
    ----------
    result : dict
        As returned by :func:`run`.

    Returns
    -------
    str

    Examples
    --------
    >>> from bndp.reproduce import format_table, run
    >>> print(format_table(run("zhao-2019/section7")).splitlines()[0])
    zhao-2019/section7  Section VII: zCDP, mCDP and composition against the paper's mechanisms
    """
    rows = result["rows"]
    cells = [(r["label"], _fmt(r["computed"], r["printed"]), r["printed"] or "-", r["status"],
              r["note"]) for r in rows]
    head = ("label", "computed", "printed", "status", "note")
    w = [max(len(head[i]), *(len(c[i]) for c in cells)) if cells else len(head[i])
         for i in range(4)]
    lines = [f"{result['id']}  {result['title']}", f"source: {result['source']}"]
    if result.get("note"):
        lines.append(f"setting: {result['note']}")
    lines.append("")
    fmt = "  ".join(f"{{:{'<' if i in (0, 3) else '>'}{w[i]}}}" for i in range(4)) + "  {}"
    lines.append(fmt.format(*head).rstrip())
    for c in cells:
        lines.append(fmt.format(*c).rstrip())
    counts = {s: sum(r["status"] == s for r in rows) for s in STATUSES}
    lines.append("")
    lines.append(", ".join(f"{n} {s}" for s, n in counts.items()))
    return "\n".join(lines)
