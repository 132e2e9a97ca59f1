"""Stubs for the compiled module ``bndp._core.sample``.

The module's samplers (truncated normal, bounded and constrained Laplace) are ``cdef``
functions that the other modules of the compiled core cimport through ``sample.pxd``; it has
no ``def`` wrappers of its own.
"""
