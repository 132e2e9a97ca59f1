"""Adapters between bndp and data tools: pandas/Arrow columns (:mod:`._columns`), Spark
(:mod:`.spark`) and Dask (:mod:`.dask`). Adapters only: no noise maths lives here.

The Spark and Dask modules import their engines, so they are loaded only on request
(``bndp.spark``, ``bndp.dask``)."""
