"""Dask integration (needs ``bndp[dask]``): see :func:`bndp.integrations.dask.privatize`."""

from .integrations.dask import privatize

__all__ = ["privatize"]
