# Kernels for the gaussian_family family (included by _core.pyx).
