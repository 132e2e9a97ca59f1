# Declarations of bndp._core.rows (cimported by the modules that use them)

from bndp._core.common cimport *
cdef int _search_variant_rows(int v) noexcept
