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
