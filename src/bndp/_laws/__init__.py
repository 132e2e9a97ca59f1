"""The grid laws of the default release and their plans: the whole-range law
(:mod:`.whole_range`), its calibration and scale search (:mod:`.calibration`), the windowed
law of the univariate mechanisms and per-row bounds (:mod:`.window`) with where its kernels'
scale searches start (:mod:`.search_start`) and which kernel serves a row
(:mod:`.serving`), the multivariate
product law (:mod:`.product`) and the constrained plan (:mod:`.constrained`). Every plan
implements one interface, :class:`.base.Plan` (grid, index, law, sampler, certificate and
capability attributes), through which code outside this package uses it; the certified loss
between a range's ends is in :mod:`.ends`.

The mechanisms (:mod:`bndp.mechanisms`) build on this package; it imports none of them.
"""
