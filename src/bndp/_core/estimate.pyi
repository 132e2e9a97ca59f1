"""Stubs for the compiled module ``bndp._core.estimate`` (the estimation layer's kernels).

Every function takes inputs validated by its caller (float64 C-contiguous buffers, finite,
indices in range) and adds into a caller-allocated C-contiguous output.
"""

import numpy as np
from numpy.typing import NDArray

_F64 = NDArray[np.float64]

def place_positions(u: _F64, lower: _F64, upper: _F64, weight: _F64, x0: float, step: float,
                    out: _F64) -> None: ...
def place_rows(u: _F64, pos: NDArray[np.int64], lower: _F64, width: _F64, x0: float,
               step: float, out: _F64) -> None: ...
def geometric_forward(G: _F64, c: _F64, out: _F64) -> None: ...
def geometric_backward(R_: _F64, c: _F64, out: _F64) -> None: ...
def geometric_em(G: _F64, P: _F64, c: _F64, out: _F64, L: _F64, dmax: _F64) -> None: ...
def geometric_squarem(G: _F64, P: _F64, c: _F64, act: NDArray[np.int64],
                      done: NDArray[np.uint8], thr: float, gthr: float, use_gthr: bool,
                      cycles: int) -> int: ...
