"""Stubs for the compiled module ``bndp._core.certify_rows`` (its ``def`` wrappers).

Every wrapper takes inputs already validated by the Python layer: float64 buffers, broadcast
to the output's shape (2-D ``(outer, inner)`` views, stride 0 allowed for inputs), and fills
caller-allocated C-contiguous outputs in place. ``gen`` is a :class:`numpy.random.Generator`
whose BitGenerator exposes a ``bitgen_t`` capsule and a lock.
"""

from typing import Any

def gw_certify_rows(fam: int, t: float, tail_bits: int, tailw: int, cum: Any, ns: Any,
                    dk: int, terms: Any = ...) -> Any: ...
def gw_cert_terms(fam: int, t: float, tail_bits: int, tailw: int, nmax: int) -> Any: ...
def gw_serve_scan(fam: int, t: float, tail_bits: int, tailw: int, cum: Any, dk: int,
                  lo_ok: float, hi_ok: float, top: int, low: int, down_to: int, block: int,
                  steps: int, max_steps: int, terms: Any, cert: Any,
                  served: Any) -> tuple[int, int, bool]: ...
