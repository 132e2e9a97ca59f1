"""The grid laws of the default release and their plans: the whole-range law
(:mod:`.whole_range`), its calibration and scale search (:mod:`.calibration`), the windowed
law of the univariate mechanisms and per-row bounds (:mod:`.window`) with where its kernels'
scale searches start (:mod:`.search_start`) and which kernel serves a row
(:mod:`.serving`), the multivariate
product law (:mod:`.product`) and the constrained plan (:mod:`.constrained`).

The mechanisms (:mod:`bndp.mechanisms`) build on this package; it imports none of them.
"""
