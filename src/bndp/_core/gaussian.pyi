"""Stubs for the compiled module ``bndp._core.gaussian`` (its ``def`` wrappers).

Every wrapper takes inputs already validated by the Python layer: float64 buffers, broadcast
to the output's shape (2-D ``(outer, inner)`` views, stride 0 allowed for inputs), and fills
caller-allocated C-contiguous outputs in place. ``gen`` is a :class:`numpy.random.Generator`
whose BitGenerator exposes a ``bitgen_t`` capsule and a lock.
"""

from typing import Any, Protocol

class _Scalar3(Protocol):
    def __call__(self, code: int, a: float, b: float, c: float, /) -> Any: ...

class _Array3(Protocol):
    def __call__(self, code: int, a: Any, b: Any, c: Any, out: Any, /) -> None: ...

gf_sigma: _Scalar3
gf_sigma_array: _Array3
gf_delta: _Scalar3
gf_delta_array: _Array3
gf_epsilon: _Scalar3
gf_epsilon_array: _Array3
def gf_threshold(method: Any, delta: Any) -> Any: ...
def gf_threshold_array(method: Any, delta: Any, out: Any) -> Any: ...
