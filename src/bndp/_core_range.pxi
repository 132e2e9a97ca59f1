# Kernels for the range family (included by _core.pyx).
