"""Stubs for the compiled module ``bndp._core.special`` (its ``def`` wrappers).

Every wrapper takes inputs already validated by the Python layer: float64 buffers, broadcast
to the output's shape (2-D ``(outer, inner)`` views, stride 0 allowed for inputs), and fills
caller-allocated C-contiguous outputs in place. ``gen`` is a :class:`numpy.random.Generator`
whose BitGenerator exposes a ``bitgen_t`` capsule and a lock.
"""

from typing import Any

def ndtri_lower_log(logt: float) -> float: ...
def lambertw_fill(x: Any, branch: Any, out: Any) -> Any: ...
