"""Stubs for the compiled module ``bndp._core.certify_grid`` (its ``def`` wrappers).

Every wrapper takes inputs already validated by the Python layer: float64 buffers, broadcast
to the output's shape (2-D ``(outer, inner)`` views, stride 0 allowed for inputs), and fills
caller-allocated C-contiguous outputs in place. ``gen`` is a :class:`numpy.random.Generator`
whose BitGenerator exposes a ``bitgen_t`` capsule and a lock.
"""

from typing import Any

FAMILY_CODES: dict[str, int]
PAIR_SETS: dict[str, int]

def gd_table(fam: Any, u: Any, n: Any, kexp: Any, floor_w: Any) -> Any: ...
def gd_shift_losses(cum: Any, n: Any, dk: Any) -> Any: ...
def gd_set_losses(cum: Any, N: Any, L: Any, sa: Any, sb: Any, tailw: Any, sbits: Any, dmin: Any, dmax: Any, which: Any) -> Any: ...
def gd_set_pair_loss(cum: Any, N: Any, sa: Any, sb: Any, tailw: Any, sbits: Any, i: Any, k: Any) -> Any: ...
def gd_set_bound(cum: Any, N: int, L: int, sa: Any, sb: Any, tailw: int, sbits: int, u: float,
                 D: int, which: int) -> Any: ...
