"""The compiled core of bndp: one extension module per layer, in the manner of numpy.random.

``special`` (special functions), ``sample`` (continuous samplers), ``fill`` (the locked fill
loop and the samplers' wrappers), ``grid``, ``window`` and ``rows`` (grid-law draws), ``laws``
(law evaluation), ``calibrate`` and ``gaussian`` (calibrations), ``certify``,
``certify_grid``, ``certify_rows`` and ``gradients`` (certificates), and ``testing``
(wrappers that only the tests call). The modules share the declarations of ``common.pxd`` and
cimport each other's ``cdef`` functions through their ``.pxd`` files; the Python layer imports
the module it needs (``from bndp._core import fill``). Every input check happens once in the
Python layer (``bndp._validation``) before anything here is called.
"""
