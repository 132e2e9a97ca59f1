"""Stubs for the compiled module ``bndp._core.gradients`` (its ``def`` wrappers).

Every wrapper takes inputs already validated by the Python layer: float64 buffers, broadcast
to the output's shape (2-D ``(outer, inner)`` views, stride 0 allowed for inputs), and fills
caller-allocated C-contiguous outputs in place. ``gen`` is a :class:`numpy.random.Generator`
whose BitGenerator exposes a ``bitgen_t`` capsule and a lock.
"""

from typing import Any

def gr_rdp(mech: Any, mode: Any, theta: Any, c: Any, sigma: Any, lo: Any, hi: Any, alphas: Any, each: Any, total: Any) -> Any: ...
def gr_eta2_rows(mech: Any, theta: Any, sigma: Any, lo: Any, hi: Any, out: Any) -> Any: ...
