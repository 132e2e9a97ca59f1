"""Build the compiled core of bndp (``bndp._core``).

The extension needs NumPy's headers (for ``bitgen_t``), NumPy's static ``npyrandom`` and
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

extensions = [
    Extension(
        "bndp._core",
        ["src/bndp/_core.pyx"],
        include_dirs=[np.get_include(), os.path.join("src", "bndp")],
        library_dirs=library_dirs,
        libraries=["npyrandom", "npymath"] + ([] if os.name == "nt" else ["m"]),
        define_macros=[("NPY_NO_DEPRECATED_API", "NPY_1_7_API_VERSION")],
        extra_compile_args=extra_compile_args,
    )
]

setup(
    ext_modules=cythonize(
        extensions,
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
