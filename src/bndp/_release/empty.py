"""An input without rows: refused before any charge unless the caller allows it, on every
release path (:func:`bndp.privatize`, Spark, Dask; the command line's ``--allow-empty``)."""

from __future__ import annotations

from typing import Any

import numpy as np


def check_allow_empty(allow_empty: Any) -> None:
    """``allow_empty`` must be True or False (a string such as ``"no"`` would be true)."""
    if not isinstance(allow_empty, (bool, np.bool_)):
        raise TypeError(f"`allow_empty` must be True or False; got {allow_empty!r}")


def refuse_empty(rows: int, what: str = "the frame") -> None:
    """Refuse a release of ``rows == 0`` rows with ``ValueError``: an empty input (a failed
    upstream extract) must not spend a budget. Called, where ``allow_empty`` is False,
    before the release is charged."""
    if rows == 0:
        raise ValueError(f"{what} has no rows; nothing was charged (pass allow_empty=True "
                         "to release an empty frame, its cost charged)")
