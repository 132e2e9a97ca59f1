"""Stubs for the compiled module ``bndp._core.window`` (its ``def`` wrappers).

Every wrapper takes inputs already validated by the Python layer: float64 buffers, broadcast
to the output's shape (2-D ``(outer, inner)`` views, stride 0 allowed for inputs), and fills
caller-allocated C-contiguous outputs in place. ``gen`` is a :class:`numpy.random.Generator`
whose BitGenerator exposes a ``bitgen_t`` capsule and a lock.
"""

from typing import Any

def gw_fill(gen: Any, tree: Any, levels: int, N: int, tailw: int, sbits: int, tm: int, e: int,
            q: Any, lo: Any, hi: Any, nrow: Any, out: Any) -> None: ...
def gw_index(q: Any, lo: Any, hi: Any, e: int, nrow: Any) -> Any: ...
def gw_intervals(lo: Any, hi: Any, e: int) -> Any: ...
def gw_search_tree(cum: Any) -> tuple[Any, int]: ...

class GwRow:
    lo: float
    hi: float
    nrow: int
    def __init__(self, tree: Any, levels: int, N: int, tailw: int, sbits: int, tm: int, e: int,
                 lo: float, hi: float, nrow: int) -> None: ...
    def one(self, gen: Any, q: float) -> float: ...
    def sample(self, value: Any, size: Any, rng: Any, on_outside: Any, workers: Any,
               resolve: Any) -> Any: ...
