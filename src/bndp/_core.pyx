# cython: language_level=3, boundscheck=False, wraparound=False, cdivision=True, initializedcheck=False
"""Compiled kernels of bndp.

Layers (see "Where things live" in docs/extending.md): ``cdef ... noexcept nogil`` kernels
that never raise and never validate; thin ``def`` wrappers that borrow a NumPy ``bitgen_t``,
take the BitGenerator's lock and fill caller-allocated buffers through one generic fill loop.
Every input check happens once in the Python layer (``bndp._validation``) before anything here
is called.

The declarations (C helpers, SIMD kernels, parameter structs, the fill-kernel type, shared
inline helpers and every kernel's signature) are in ``_core.pxd``; the definitions in one
include file per layer: special functions, sampling, law evaluation, calibration and
certification (see ``_core.pxd`` for the list).

References
----------
[HABM20] N. Holohan, S. Antonatos, S. Braghin, P. Mac Aonghusa. The Bounded Laplace Mechanism
         in Differential Privacy. J. Privacy and Confidentiality 10(1), 2020.
[CH24]   B. Chen, M. Hale. The Bounded Gaussian Mechanism for Differential Privacy.
         J. Privacy and Confidentiality, 2024.
[W88]    M. J. Wichura. Algorithm AS 241: The Percentage Points of the Normal Distribution.
         Applied Statistics 37(3), 477-484, 1988.
"""

import numpy as _np

_cnp.import_array()

include "_core_special.pxi"
include "_core_sample.pxi"
include "_core_fill.pxi"
include "_core_sample_grid.pxi"
include "_core_sample_window.pxi"
include "_core_sample_rows.pxi"
include "_core_laws.pxi"
include "_core_calibrate.pxi"
include "_core_calibrate_gaussian.pxi"
include "_core_certify.pxi"
include "_core_certify_grid.pxi"
include "_core_certify_rows.pxi"
include "_core_certify_gradients.pxi"
