"""Spark integration (needs ``bndp[spark]``): see :func:`bndp.integrations.spark.privatize`."""

from .integrations.spark import privatize

__all__ = ["privatize"]
