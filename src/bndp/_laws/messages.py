"""Messages of the grid law's planning that depend on the rows' bounds: worded without the
numbers that follow per-row bounds (which may be read from data), so that an error or a
warning of a release names a row, never its bounds."""

from __future__ import annotations

import warnings

import numpy as np

from .constants import FAMILY_NAMES


def no_kernel_message(fam: int, target: float, dk: int, n: int | None) -> str:
    """Why no kernel certifies ``target``. Targets are at most the cap of
    :func:`bndp._laws.window.serving_target` (below 2^17), where the search always finds a
    scale; it fails when the target is so small that the scale it needs (about
    ``dk / target`` grid steps, more for the Gaussian) makes the table exceed 2^20 entries on
    a wide row, or flattens the row's law until the rounding of its integer weights alone
    costs more than the target."""
    if n is not None:   # a narrow row: its interval count and grid follow its bounds (which
        # may be per-row bounds, data), so neither is quoted
        return (f"grid law: `epsilon` is too small for the default release here: no "
                f"{FAMILY_NAMES[fam]} kernel on a narrow row is certified for the loss "
                f"{target:.6g}: the scale it needs is beyond what the kernel's table (2^20 "
                "entries of 58-bit integer weights) resolves; use a larger `epsilon` or pass "
                "mode='continuous'")
    return (f"grid law: `epsilon` is too small for the default release here: no "
            f"{FAMILY_NAMES[fam]} kernel on every wide row (the sensitivity spans {dk} grid "
            f"steps) is certified for the loss {target:.6g}: it would need a scale of about "
            f"{dk / target:.3g} grid steps, beyond what the kernel's table (2^20 entries of "
            "58-bit integer weights) resolves; use a larger `epsilon` or pass "
            "mode='continuous'")


def check_row_exponents(e: np.ndarray, coarse: np.ndarray, dq: float,
                        warn: bool = True) -> None:
    """:func:`bndp._laws.window._check_exponent` of per-row bounds: the same checks, the
    messages naming the first row (0-based) and no number that follows its bounds
    (``warn``: whether coarse grids are warned of, else only refused where too coarse)."""
    e = np.asarray(e)
    bad = (e < -1022) | (e > 1000)
    if bad.any():
        raise ValueError(
            f"grid law: the bounds' width at row index {int(np.argmax(bad.ravel()))} (per-row "
            "bounds) is outside the representable range against the sensitivity (widths and "
            "sensitivities from about 1e-290 to 1e290 are supported); pass mode='continuous'")
    if coarse.any():
        over = coarse & (np.ldexp(1.0, np.minimum(e, 1023)) > dq)
        if over.any():
            raise ValueError(
                f"grid law: the per-row bounds at row index {int(np.argmax(over.ravel()))} "
                f"are too far from 0 for sensitivity {dq!r}: doubles there are spaced more "
                "than the sensitivity; the default release needs |lower|, |upper| below "
                "2^51 * sensitivity (shift the data towards 0, or pass mode='continuous')")
        if not warn:
            return
        warnings.warn(
            f"grid law: per-row bounds far from 0 (first at row index "
            f"{int(np.argmax(np.ravel(coarse)))}) need a coarser grid than the sensitivity "
            "asks for: the noise of those rows is calibrated on that grid, at most twice the "
            "sensitivity", RuntimeWarning, stacklevel=5)
