# Kernels for the verify family (included by _core.pyx).
