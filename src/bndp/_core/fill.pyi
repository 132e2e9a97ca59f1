"""Stubs for the compiled module ``bndp._core.fill`` (its ``def`` wrappers).

Every wrapper takes inputs already validated by the Python layer: float64 buffers, broadcast
to the output's shape (2-D ``(outer, inner)`` views, stride 0 allowed for inputs), and fills
caller-allocated C-contiguous outputs in place. ``gen`` is a :class:`numpy.random.Generator`
whose BitGenerator exposes a ``bitgen_t`` capsule and a lock.
"""

from typing import Any, Protocol

import numpy as np
from numpy.typing import NDArray

_F64 = NDArray[np.float64]

# the samplers of a law of two or four numbers per draw: the normal and the Laplace
# (loc, scale), the truncated normal (loc, scale, lo, hi), the bounded Laplace (q, b, lo, hi)
class _One(Protocol):
    def __call__(self, gen: np.random.Generator, /, *par: float) -> float: ...

class _Fill(Protocol):
    def __call__(self, gen: np.random.Generator, /, *par_and_out: Any) -> None: ...

tn_one: _One
tn_fill: _Fill
tn_fill_rows: _Fill
bl_one: _One
bl_fill: _Fill
bl_fill_rows: _Fill
gn_one: _One
gn_fill: _Fill
gn_fill_rows: _Fill
lp_one: _One
lp_fill: _Fill
lp_fill_rows: _Fill
def gr_sample_rows(mech: Any, gen: Any, theta: Any, sigma: Any, lo: Any, hi: Any, out: Any) -> Any: ...
def cl_one(gen: Any, mu: Any, sigma: Any, L: Any, R: Any) -> Any: ...
def cl_fill(gen: Any, mu: Any, sigma: Any, L: Any, R: Any, out: Any) -> Any: ...
def cl_fill_rows(gen: Any, mu: Any, sigma: Any, L: Any, R: Any, out: Any) -> Any: ...
def gw_fill_row(gen: Any, tree: Any, levels: int, N: int, tailw: int, sbits: int, tm: int,
                e: int, lo: float, hi: float, nrow: int, q: Any, out: Any,
                k: int = ...) -> None: ...
