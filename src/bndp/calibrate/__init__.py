r"""Noise calibration: the smallest scale that satisfies each paper's privacy condition.

The bounded mechanisms' calibrations are in :mod:`bndp.calibrate.bounded`, the unbounded
Gaussian family in :mod:`bndp.calibrate.gaussian`, the calibrations through concentrated DP
in :mod:`bndp.calibrate.concentrated`; import every function from here.

Every function validates its inputs, then calls a C loop in ``bndp._core`` that brackets the
root and returns the bracket end that *satisfies* the paper's inequality (never a midpoint
that may sit one rounding step on the unsafe side). Scalars take a fast path; arrays
broadcast.

References
----------
.. [HABM20] N. Holohan, S. Antonatos, S. Braghin, P. Mac Aonghusa. "The Bounded Laplace
   Mechanism in Differential Privacy". Journal of Privacy and Confidentiality 10(1), 2020.
.. [CH24] B. Chen, M. Hale. "The Bounded Gaussian Mechanism for Differential Privacy".
   Journal of Privacy and Confidentiality, 2024.
.. [ZWB19] J. Zhao, T. Wang, T. Bai, M. Yang, K.-Y. Lam, Z. Xu, S. Shi, H. Yu. "Reviewing
   and Improving the Gaussian Mechanism for Differential Privacy". arXiv:1911.12060, 2019.
.. [Liu19] F. Liu. "Generalized Gaussian Mechanism for Differential Privacy". IEEE
   Transactions on Knowledge and Data Engineering 31(4), 747-756, 2019.
.. [BS16] M. Bun, T. Steinke. "Concentrated Differential Privacy: Simplifications,
   Extensions, and Lower Bounds". TCC 2016.
.. [DR16] C. Dwork, G. N. Rothblum. "Concentrated Differential Privacy". arXiv:1603.01887.
.. [BW18] B. Balle, Y.-X. Wang. "Improving the Gaussian Mechanism for Differential Privacy:
   Analytical Calibration and Optimal Denoising". ICML 2018.
"""


from typing import TYPE_CHECKING, Any

from .._deprecate import removed_attribute
from . import bounded, gaussian
from .bounded import *  # noqa: F401,F403 - the bounded mechanisms' calibrations
from .concentrated import mcdp_sigma, zcdp_sigma
from .gaussian import *  # noqa: F401,F403 - the unbounded Gaussian family

__all__ = [*bounded.__all__, *gaussian.__all__, "zcdp_sigma", "mcdp_sigma"]

_REMOVED = {"bounded_laplace_delta": ("bndp.calibrate.bounded_laplace_delta_bound (Theorem "
                                      "3.5's bound; bndp.verify.bounded_laplace_profile is "
                                      "the exact delta)", "0.8.0")}


if not TYPE_CHECKING:  # checkers keep flagging unknown names
    def __getattr__(name: str) -> Any:
        raise removed_attribute(__name__, name, _REMOVED)
