"""Stubs for the compiled module ``bndp._core.laws`` (its ``def`` wrappers).

Every wrapper takes inputs already validated by the Python layer: float64 buffers, broadcast
to the output's shape (2-D ``(outer, inner)`` views, stride 0 allowed for inputs), and fills
caller-allocated C-contiguous outputs in place. ``gen`` is a :class:`numpy.random.Generator`
whose BitGenerator exposes a ``bitgen_t`` capsule and a lock.
"""

from typing import Any

import numpy as np
from numpy.typing import NDArray

_F64 = NDArray[np.float64]

def tn_eval_rows(what: int, x: _F64, loc: _F64, scale: _F64, lo: _F64, hi: _F64,
                 out: _F64) -> None: ...
def bl_eval_rows(what: int, x: _F64, q: _F64, b: _F64, lo: _F64, hi: _F64,
                 out: _F64) -> None: ...
def gr_rect_moments_rows(what: Any, theta: Any, sigma: Any, lo: Any, hi: Any, out: Any) -> Any: ...
def tn_tail_eval_rows(what: int, x: _F64, loc: _F64, scale: _F64, lo: _F64, hi: _F64,
                      out: _F64) -> None: ...
def cl_eval_rows(what: Any, x: Any, mu: Any, sigma: Any, L: Any, R: Any, out: Any) -> Any: ...
