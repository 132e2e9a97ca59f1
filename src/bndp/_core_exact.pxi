# Kernels for the exact family (included by _core.pyx).
