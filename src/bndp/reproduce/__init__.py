r"""The numbered tables and figures of the five papers behind bndp, recomputed from bndp's
public API next to the numbers the papers print.

Each *item* (``chen-hale-2024/table1``, ``zhao-2019/table1``, ...) computes its rows with
``bndp.calibrate``, ``bndp.accounting``, ``bndp.verify`` and the mechanisms. A row carries
one number: the computed value, the printed text (``None`` where the paper prints none) and
a status:

* ``"match"``: the computed value rounds to the printed text at the printed precision
  (:func:`matches_printed`);
* ``"misprint"``: a documented erratum of the paper; the note gives the exact value and
  the reason;
* ``"not printed"``: the paper gives no number (a figure, or a value only its text implies);
* ``"differs"``: the computed value disagrees and this is not a plain misprint; the note
  says why.

Command line: ``bndp reproduce --list``, ``bndp reproduce ID [--json] [--plot FILE]``.

Papers (IDs by prefix): ``chen-hale-2024`` (bounded Gaussian), ``holohan-2019`` (bounded
Laplace), ``zhao-2019`` (Gaussian calibration review), ``hu-2024`` (bounded-support
Gaussians), ``range-constraints`` (Croft's truncated and normalised Laplace, thesis
appendix). What is out of reach on a CPU (Hu et al.'s GPU-scale image classification,
recomputed here at CPU scale only; Zhao et al.'s Adult data; Holohan et al.'s unseeded
example draws) is listed in each paper's :data:`PAPERS` entry.

Layout: one module per paper (``chen_hale_2024``, ``holohan_2019``, ``zhao_2019``,
``hu_2024``, ``range_constraints``) registers its items in ``_registry``, which holds the
rows, the registry and the entry points re-exported here. The package is a harness outside
the runtime path: only the ``bndp reproduce`` command imports it.
"""

from __future__ import annotations

from . import chen_hale_2024, holohan_2019, hu_2024, range_constraints, zhao_2019  # noqa: F401
from ._registry import (PAPERS, STATUSES, Item, Row, _fmt, _REGISTRY, format_table,  # noqa: F401
                        get_item, items, matches_printed, missing_requirements, plot, run)

__all__ = ["Row", "Item", "PAPERS", "STATUSES", "matches_printed", "items", "get_item", "run",
           "plot", "format_table", "missing_requirements"]
