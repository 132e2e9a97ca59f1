"""Write the "Reproductions" pages at build time from :mod:`bndp.reproduce`.

One Markdown page per paper under ``docs/reproductions/`` (generated, git-ignored): each item
of the paper as a table (label, computed, printed, status, note) with its status counts,
and its figure, drawn by the item's own plotting function, where the paper has one.
"""

from __future__ import annotations

import os

from bndp import reproduce

TITLES = {
    "chen-hale-2024": "Chen & Hale 2024: the bounded Gaussian mechanism",
    "holohan-2019": "Holohan et al. 2019: the bounded Laplace mechanism",
    "zhao-2019": "Zhao et al. 2019: reviewing the Gaussian mechanism",
    "hu-2024": "Hu et al. 2024: bounded-support Gaussian mechanisms",
    "range-constraints": "Croft: range-constraint (truncated and normalised Laplace) mechanisms",
}


def _cell(text: str) -> str:
    return str(text).replace("|", "\\|").replace("\n", " ")


def _fmt(row: dict) -> str:
    return reproduce._fmt(row["computed"], row["printed"])


def write(here: str) -> None:
    out = os.path.join(here, "reproductions")
    os.makedirs(os.path.join(out, "img"), exist_ok=True)
    by_paper: dict = {}
    for it in reproduce.items():
        by_paper.setdefault(it.id.split("/")[0], []).append(it)
    index = ["# Reproductions", "",
             "Every numbered table and figure of the papers behind bndp that can be computed on "
             "a CPU, recomputed from bndp's public API when this site is built, next to the "
             "numbers the papers print (`bndp reproduce --list` on the command line). Status: "
             "**match** (equal to the printed precision), **misprint** (an erratum of the "
             "paper: the note gives the exact value and the reason), **not printed** (the "
             "paper gives no number), **differs** (explained in the note).", "",
             "```{toctree}", ":maxdepth: 1", ""]
    for paper, its in by_paper.items():
        index.append(paper)
        cite, missing = reproduce.PAPERS[paper]
        lines = [f"# {TITLES.get(paper, paper)}", "", cite, "",
                 f"*Not reproduced here:* {missing}", ""]
        for it in its:
            missing = reproduce.missing_requirements(it.id)
            if missing:  # an optional package (e.g. scikit-learn) absent: say so, build on
                lines += [f"## {it.title}", "", f"`bndp reproduce {it.id}` ({it.source}) "
                          f"needs {', '.join(missing)}, which was not installed when this "
                          "site was built.", ""]
                continue
            res = reproduce.run(it.id)
            rows = res["rows"]
            counts = ", ".join(f"{sum(r['status'] == s for r in rows)} {s}"
                               for s in reproduce.STATUSES)
            lines += [f"## {it.title}", "", f"`bndp reproduce {it.id}` ({it.source}). "
                      f"Rows: {counts}.", ""]
            if it.note:
                lines += [f"*Setting:* {it.note}", ""]
            if it.draw is not None:
                name = it.id.replace("/", "-") + ".png"
                reproduce.plot(it.id, os.path.join(out, "img", name))
                lines += [f"![{_cell(it.title)}](img/{name})", ""]
            lines += ["| label | computed | printed | status | note |",
                      "|---|---:|---:|---|---|"]
            for r in rows:
                lines.append(f"| {_cell(r['label'])} | {_fmt(r)} | {r['printed'] or '-'} | "
                             f"{r['status']} | {_cell(r['note'])} |")
            lines.append("")
        with open(os.path.join(out, f"{paper}.md"), "w", encoding="utf-8") as fh:
            fh.write("\n".join(lines) + "\n")
    index += ["```", ""]
    with open(os.path.join(out, "index.md"), "w", encoding="utf-8") as fh:
        fh.write("\n".join(index))
