"""Which kernel of the windowed grid law serves a row: a row of at least ``n_min`` intervals
is wide (its grid's wide kernel), a narrower row is served by that wide kernel where the
kernel's certificate on the row is at most the target and within :data:`WIDE_SLACK` of it,
and otherwise has its own kernel (``window._law``). The trade and its measured cost are in
the documentation's page "The grid laws: design and proofs" ("Plans and rows").

A per-row release draws the wide rows and the narrow rows the wide kernel serves in one
pass (``_core.rows.gw_rows_first``), so the narrow rows served must be known before the rows
are seen: :func:`_served_map` certifies the kernel on the narrow rows from the widest down
(``_core.certify_rows.gw_certify_rows``, the same certificate as one row's), a function of the kernel
alone, however far earlier calls went.
"""

from __future__ import annotations

import math
import threading
from typing import Any

import numpy as np

from .._core import certify_rows as _certify_rows
from .constants import LAPLACE
from .search_start import _wide_hint

#: a narrow row is served by its grid's wide kernel where that kernel's certificate on
#: the row is at most the target and within this share of it: its scale is then at most
#: about 0.15 % above the row's own kernel's
WIDE_SLACK = 1e-3
#: the narrow rows whose wide kernel is certified (:func:`on_row`) are those of at least
#: this share of :func:`_wide_rows_bound` (Laplace, Gaussian): the wide kernel comes
#: within ``WIDE_SLACK`` of the target on rows from about 0.1 (Laplace) and 0.75
#: (Gaussian) of ``n_wide`` on; narrower rows get their own kernel without planning it
WIDE_TRY = (0.04, 0.4)
#: nor is a wide kernel planned for a narrow row where that bound exceeds this many
#: intervals (a table of about 2^17 entries or more, at a tiny epsilon: its calibration
#: would cost far more than the row's own kernel)
WIDE_TRY_MAX = 1 << 18
#: the narrow rows a wide kernel serves (:func:`_scan_served`) are certified by blocks of
#: ``SERVE_SCAN_ROWS`` rows from the widest down, in at most ``SERVE_SCAN_MAX``
#: certificate steps (rows times their intervals, about 2 ns each: at most about 10 ms)
SERVE_SCAN_MAX = 1 << 22
SERVE_SCAN_ROWS = 64


def _surely_narrow(fam: int, target: float, dk: int, n: Any) -> Any:
    """A row of ``n`` intervals is narrower than any wide kernel could serve: the wide
    certificate is at least the loss of the pair (0, dk) at the output 0 of a row's end,
    the continuous half-line's x + ln(2 - e^-x), x = dk/t, up to the rounding of the weights
    (Laplace: t at least :func:`_wide_hint`, about 2 dk/target at a small target), or
    dk(2N+1)/(2t^2) (Gaussian, N = 5.77t: t >= 5.77 dk/target), and n_wide = 2N + dk with
    N >= 16.6 t resp. 5.77 t (a 10 % margin). Only the work depends on it: a row taken for
    narrow gets its own kernel, certified for its width."""
    return n < 0.9 * _wide_rows_bound(fam, target, dk)


def _wide_rows_bound(fam: int, target: float, dk: int) -> float:
    """A lower bound on the wide kernel's ``n_wide`` (see :func:`_surely_narrow`)."""
    t_lb = _wide_hint(LAPLACE, target, dk) if fam == LAPLACE else 5.77 * dk / target
    return 2.0 * (16.6 if fam == LAPLACE else 5.77) * t_lb + dk


def _try_from(fam: int, target: float, dk: int) -> int | None:
    """The narrowest row a wide kernel is tried for (None: none is)."""
    bound = _wide_rows_bound(fam, target, dk)
    if bound > WIDE_TRY_MAX:
        return None
    return max(dk, math.ceil(WIDE_TRY[fam] * bound), 1)


def tried(fam: int, target: float, dk: int, n: int) -> bool:
    """Whether a row of ``n`` intervals may be served by its grid's wide kernel (at least
    the sensitivity's ``dk`` steps and ``WIDE_TRY`` of :func:`_wide_rows_bound`, where that
    bound is at most :data:`WIDE_TRY_MAX`)."""
    low = _try_from(fam, target, dk)
    return low is not None and n >= low


def _first_drawn(fam: int, target: float, dk: int, n: int) -> bool:
    """A row of up to ``n`` intervals may be drawn with its grid's wide kernel in the first
    pass of a per-row release: it may be wide (not :func:`_surely_narrow`), or served by
    that kernel (:func:`tried`)."""
    return not _surely_narrow(fam, target, dk, n) or tried(fam, target, dk, n)


def _first_drawn_from(fam: int, target: float, dk: int) -> int | None:
    """The narrowest row :func:`_first_drawn` admits (it admits every wider one; None:
    none): the smaller of the first integer not :func:`_surely_narrow` and the narrowest
    row :func:`tried`."""
    x = 0.9 * _wide_rows_bound(fam, target, dk)
    low = _try_from(fam, target, dk)
    if math.isnan(x) or x == -math.inf:
        a: int | None = 1                  # n < x fails for every n
    elif x == math.inf:
        a = None                           # every row is surely narrow
    else:
        a = max(1, math.ceil(x))
    found = [v for v in (a, low) if v is not None]
    return max(1, min(found)) if found else None


def on_row(wide: Any, fam: int, target: float, dk: int, n: int) -> tuple[float, bool]:
    """The certificate of the wide kernel ``wide`` of ``(fam, target, dk)`` on a row of
    ``n`` intervals (:func:`tried`), and whether it serves the row: a narrow row where
    :func:`_served_map` has it, a row at least ``n_min`` wide where the certificate is at
    most the target and within :data:`WIDE_SLACK` of it."""
    terms = None
    if n < wide.n_min:
        scan = _scan_served(wide, fam, target, dk, n)
        if n >= scan.top:
            return float(scan.cert[n]), bool(scan.served[n])
        # below the scan (not served: its certificate is the row's search hint), with the
        # scan's terms of one offset (computed here where the scan certified no row)
        with scan.lock:
            if scan.terms is None:
                scan.terms = _certify_rows.gw_cert_terms(fam, wide.scale_grid, 24, wide.tailw,
                                                 max(scan.top - 1, 1))
            terms = scan.terms
    c = float(_certify_rows.gw_certify_rows(fam, wide.scale_grid, 24, wide.tailw, wide.cum,
                                    np.array([n], dtype=np.int64), dk, terms)[0])
    return c, n >= wide.n_min and target * (1.0 - WIDE_SLACK) <= c <= target


class _ServeScan:
    """How far :func:`_scan_served` has gone on one wide kernel: rows ``top .. n_min - 1``
    certified (``cert``; ``served`` 1 where within the serving range, both indexed by the
    row's intervals, of length ``n_min`` once the scan begins, empty before), ``done``
    when it stops there; ``terms``: the kernel's ``gw_cert_terms`` for the rows it scans
    and those below (None before the first)."""

    __slots__ = ("top", "low", "steps", "done", "cert", "served", "terms", "lock")

    def __init__(self, n_min: int, low: int) -> None:
        self.lock = threading.Lock()      # one thread scans a kernel at a time
        self.top, self.low, self.steps = n_min, low, 0
        self.done = n_min <= low
        self.cert = np.empty(0)
        self.served = np.zeros(0, dtype=np.uint8)
        self.terms: np.ndarray | None = None


_SERVE_LOCK = threading.Lock()       # guards the creation of a kernel's scan


def _scan_served(wide: Any, fam: int, target: float, dk: int, down_to: int) -> _ServeScan:
    """Certify the wide kernel ``wide`` of ``(fam, target, dk)`` on the narrow rows from
    ``n_min - 1`` downwards, by blocks of :data:`SERVE_SCAN_ROWS` rows fixed from the top,
    until the block of ``down_to`` is done; the scan stops for good at the narrowest row
    :func:`tried`, after a block that serves no row, or before a block that would pass
    :data:`SERVE_SCAN_MAX` certificate steps (``_core.certify_rows.gw_serve_scan``, which continues it
    from where it stopped). The rows it serves are thus a function of the kernel alone,
    however far earlier calls went (kept on the kernel, not pickled)."""
    with _SERVE_LOCK:
        scan = wide.__dict__.get("_serve_scan")
        if scan is None:
            low = _try_from(fam, target, dk)
            scan = _ServeScan(wide.n_min, wide.n_min if low is None else low)
            object.__setattr__(wide, "_serve_scan", scan)
    with scan.lock:
        if not scan.done and scan.top > down_to:
            if scan.terms is None:        # the first block holds the widest row
                scan.terms = _certify_rows.gw_cert_terms(fam, wide.scale_grid, 24, wide.tailw,
                                                 scan.top - 1)
            if scan.cert.size == 0:
                scan.cert = np.full(wide.n_min, math.nan)
                scan.served = np.zeros(wide.n_min, dtype=np.uint8)
            scan.top, scan.steps, scan.done = _certify_rows.gw_serve_scan(
                fam, wide.scale_grid, 24, wide.tailw, wide.cum, dk,
                target * (1.0 - WIDE_SLACK), target, scan.top, scan.low, down_to,
                SERVE_SCAN_ROWS, scan.steps, SERVE_SCAN_MAX, scan.terms, scan.cert,
                scan.served)
        return scan


def _served_map(wide: Any, fam: int, target: float, dk: int) -> np.ndarray | None:
    """The narrow rows that the wide kernel ``wide`` of ``(fam, target, dk)`` serves (by
    their interval counts: uint8 of length ``n_min``, 1 where served; None where it serves
    none): a per-row release draws them with its wide rows, in the pass that finds every
    row's grid."""
    served = _scan_served(wide, fam, target, dk, 0).served
    return served if served.any() else None
