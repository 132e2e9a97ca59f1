"""Randomness for bndp: ``rng=`` handling, the secure default stream, fork and thread safety.

Every public sampler takes ``rng=`` and passes it through :func:`as_generator`:

* ``None``: the module default for the calling thread (see below);
* an ``int`` or a :class:`numpy.random.SeedSequence`: a fresh PCG64 generator seeded from it
  (reproducible; for tests and research, not for releases);
* a :class:`numpy.random.BitGenerator`: wrapped in a Generator (its state is shared);
* a :class:`numpy.random.Generator`: used as it is.

The default generator of each thread is seeded with 256 bits from the operating system's
CSPRNG (:func:`secrets.token_bytes`). Each thread gets its own generator, so threads never
share or replay a stream, and a process created by ``fork()`` drops every inherited default
generator (``os.register_at_fork``) and draws fresh OS entropy on first use: forked workers
never replay the parent's noise.
"""

from __future__ import annotations

import os
import secrets
import threading
from typing import Union

import numpy as np

__all__ = ["default_rng", "as_generator", "spawn", "RNGLike"]

RNGLike = Union[None, int, np.random.SeedSequence, np.random.BitGenerator, np.random.Generator]

_ENTROPY_BITS = 256


def _os_seed_sequence() -> np.random.SeedSequence:
    return np.random.SeedSequence(int.from_bytes(secrets.token_bytes(_ENTROPY_BITS // 8), "little"))


def default_rng(seed: RNGLike = None) -> np.random.Generator:
    """Return a NumPy :class:`~numpy.random.Generator`.

    Parameters
    ----------
    seed : None, int, SeedSequence, BitGenerator or Generator
        ``None`` seeds a new PCG64 stream with 256 bits from the OS CSPRNG
        (``secrets``/``os.urandom``); anything else behaves as in
        :func:`numpy.random.default_rng`. A seeded generator is for tests and
        reproducible research, never for a real release.
    """
    if seed is None:
        return np.random.Generator(np.random.PCG64(_os_seed_sequence()))
    return as_generator(seed)


class _ThreadDefaults(threading.local):
    gen: np.random.Generator | None = None


_defaults = _ThreadDefaults()
_fork_generation = 0


def _after_fork_in_child() -> None:
    # A fresh thread-local object: every inherited default generator is dropped, so the
    # child reseeds from the OS on its next draw instead of replaying the parent's stream.
    global _defaults, _fork_generation
    _defaults = _ThreadDefaults()
    _fork_generation += 1


if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_after_fork_in_child)


def _thread_default() -> np.random.Generator:
    d = _defaults
    gen = d.gen
    if gen is None:
        gen = default_rng(None)
        d.gen = gen
    return gen


def as_generator(rng: RNGLike) -> np.random.Generator:
    """Turn an ``rng=`` argument into a :class:`numpy.random.Generator`."""
    if rng is None:
        return _thread_default()
    if isinstance(rng, np.random.Generator):
        return rng
    if isinstance(rng, np.random.BitGenerator):
        return np.random.Generator(rng)
    if isinstance(rng, (bool, np.bool_)):
        raise TypeError(f"`rng` must be None, an int, a SeedSequence, a BitGenerator or a Generator; got {rng!r}")
    if isinstance(rng, (int, np.integer)):
        if rng < 0:
            raise ValueError(f"`rng` seed must be a non-negative integer; got {int(rng)}")
        return np.random.Generator(np.random.PCG64(int(rng)))
    if isinstance(rng, np.random.SeedSequence):
        return np.random.Generator(np.random.PCG64(rng))
    if isinstance(rng, np.random.RandomState):
        raise TypeError(
            "`rng` must be a numpy.random.Generator (or None, int, SeedSequence, BitGenerator); "
            "the legacy RandomState is not supported"
        )
    raise TypeError(
        "`rng` must be None, an int, a SeedSequence, a BitGenerator or a Generator; "
        f"got {type(rng).__name__}"
    )


def spawn(rng: RNGLike, n: int) -> list[np.random.Generator]:
    """``n`` independent child generators, for workers, partitions or threads.

    With ``rng=None`` each child is keyed with fresh OS entropy; otherwise the children are
    spawned from ``rng``'s seed sequence (reproducible for a seeded ``rng``).
    """
    if isinstance(n, (bool, np.bool_)) or not isinstance(n, (int, np.integer)) or n < 0:
        raise ValueError(f"`n` must be a non-negative integer; got {n!r}")
    if rng is None:
        return [default_rng(None) for _ in range(int(n))]
    return list(as_generator(rng).spawn(int(n)))
