# Kernels for the gradients family (included by _core.pyx).
