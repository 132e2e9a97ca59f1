"""Build the compiled core of bndp (``bndp._core``).

The extension needs NumPy's headers (for ``bitgen_t``) and SciPy's ``cython_special``
declarations; nothing is linked beyond the C math library.
"""
import os

import numpy as np
from Cython.Build import cythonize
from setuptools import Extension, setup

extra_compile_args = ["-O3"] if os.name != "nt" else ["/O2"]

extensions = [
    Extension(
        "bndp._core",
        ["src/bndp/_core.pyx"],
        include_dirs=[np.get_include()],
        define_macros=[("NPY_NO_DEPRECATED_API", "NPY_1_7_API_VERSION")],
        extra_compile_args=extra_compile_args,
        libraries=[] if os.name == "nt" else ["m"],
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
