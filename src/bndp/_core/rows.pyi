"""Stubs for the compiled module ``bndp._core.rows`` (its ``def`` wrappers).

Every wrapper takes inputs already validated by the Python layer: float64 buffers, broadcast
to the output's shape (2-D ``(outer, inner)`` views, stride 0 allowed for inputs), and fills
caller-allocated C-contiguous outputs in place. ``gen`` is a :class:`numpy.random.Generator`
whose BitGenerator exposes a ``bitgen_t`` capsule and a lock.
"""

from typing import Any

import numpy as np
from numpy.typing import NDArray

_F64 = NDArray[np.float64]

def gw_rows_grid(target: float, dq: float, lo: _F64, hi: _F64, scale_steps: float,
                 width_steps: float, sens_steps: float,
                 q: _F64 | None = ...) -> tuple[Any, ...]: ...
def gw_rows_kernels(e: Any, n: Any, evals: Any, nmin: Any) -> tuple[Any, Any, Any]: ...
def gw_fill_groups(gen: Any, laws: list[tuple[Any, int, int, int, int, int, int]], group: Any,
                   idx: Any, lo: _F64, nrow: Any, out: _F64, counts: Any,
                   pos: Any = None, remap: Any = None) -> None: ...
def gw_rows_first(gen: Any, law: tuple[Any, int, int, int, int, int, int], e0: int, nmin0: int,
                  target: float, dq: float, lo: _F64, hi: _F64, q: _F64, scale_steps: float,
                  width_steps: float, sens_steps: float, out: _F64,
                  served: Any = ...) -> tuple[Any, ...]: ...
def rows_bounds_ok(lo: _F64, hi: _F64) -> bool: ...
def rows_inside(q: _F64, lo: _F64, hi: _F64, strict: bool = ...) -> bool: ...
def gw_any_width(lo: _F64, hi: _F64, w: float) -> bool: ...
