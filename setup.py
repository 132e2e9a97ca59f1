"""Build the compiled core of bndp: the extension modules of the package ``bndp._core``.

The modules share the declarations of ``src/bndp/_core/common.pxd`` and cimport each other's
``cdef`` functions through their ``.pxd`` files (Cython exports them between modules, as
numpy.random's modules do). Each extension needs NumPy's headers (for ``bitgen_t``), NumPy's static ``npyrandom`` and
``npymath`` libraries (for NumPy's normal kernel) and SciPy's ``cython_special`` declarations.
"""
import os

import numpy as np
from Cython.Build import cythonize
from setuptools import Extension, setup

extra_compile_args = ["-O3", "-fno-math-errno", "-fno-trapping-math", "-ffp-contract=off"] if os.name != "nt" else ["/O2"]

# NumPy's static distribution and math libraries (the normal kernel of the gradient samplers
# is NumPy's own `random_standard_normal`)
np_dir = os.path.dirname(np.__file__)
library_dirs = [os.path.join(np_dir, "random", "lib"), os.path.join(np_dir, "_core", "lib")]

# the modules of the compiled core, one per layer (src/bndp/_core/<name>.pyx)
CORE_MODULES = [
    "special",        # special functions (normal quantile, Phi split, Lambert W)
    "sample",         # continuous samplers (truncated normal, bounded/constrained Laplace)
    "fill",           # the generic locked fill loop and the samplers' wrappers
    "grid",           # grid-law draws (whole range, allowed sets)
    "window",         # windowed grid-law draws (the default release)
    "rows",           # windowed grid-law draws for per-row bounds
    "laws",           # law evaluation (logpdf, cdf, ppf, moments)
    "calibrate",      # calibrations (the root finder, bounded laws, window law)
    "gaussian",       # calibrations and accounting of the unbounded Gaussian family
    "certify",        # certificates of the bounded and constrained laws
    "certify_grid",   # tables and certificates of the grid laws
    "certify_rows",   # a wide kernel's certificates on narrow rows
    "gradients",      # Renyi and Fisher-information certificates of gradient noise
    "estimate",       # the estimation layer's placement of positions on rows
    "testing",        # wrappers for the tests (helpers no public code path calls)
]

extensions = [
    Extension(
        "bndp._core." + name,
        [os.path.join("src", "bndp", "_core", name + ".pyx")],
        include_dirs=[np.get_include(), os.path.join("src", "bndp")],
        library_dirs=library_dirs,
        libraries=["npyrandom", "npymath"] + ([] if os.name == "nt" else ["m"]),
        define_macros=[("NPY_NO_DEPRECATED_API", "NPY_1_7_API_VERSION")],
        extra_compile_args=extra_compile_args,
    )
    for name in CORE_MODULES
]

# the 15 modules are translated and compiled in parallel, one job per CPU
JOBS = max(1, min(len(CORE_MODULES), os.cpu_count() or 1))

setup(
    options={"build_ext": {"parallel": JOBS}},
    ext_modules=cythonize(
        extensions,
        nthreads=JOBS if os.name != "nt" else 0,
        include_path=["src"],
        compiler_directives={
            "language_level": "3",
            "boundscheck": False,
            "wraparound": False,
            "cdivision": True,
            "initializedcheck": False,
            "embedsignature": True,
        },
    ),
)
