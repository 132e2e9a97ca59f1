"""Filling one output array from several threads (``workers=``).

The kernels release the GIL while they hold their generator's lock, so threads that each own
a *different* generator run truly in parallel. :func:`run_fill` splits the output into
``workers`` contiguous blocks and gives each block its own child stream spawned from the
caller's generator (:meth:`numpy.random.Generator.spawn`): children of one seed sequence are
statistically independent, never overlap, and never share a lock. A secure generator's blocks
get new secure generators keyed from the OS (:func:`spawn_children`).

Reproducibility: for a seeded ``rng`` the result is a deterministic function of the seed, the
output shape and the effective number of workers; it differs from the single-threaded result
(which uses the caller's stream directly). Arrays too small to be worth a thread
(fewer than :data:`MIN_PER_WORKER` draws per worker) use fewer workers.
"""

from __future__ import annotations

import functools
import os
import threading
from typing import Any, Callable, Sequence

import numpy as np

from ._random import default_rng, is_secure

__all__ = ["check_workers", "effective_workers", "spawn_children", "run_fill", "MIN_PER_WORKER"]

#: Fewer draws than this per thread are not worth a thread (start-up costs ~50 us).
MIN_PER_WORKER = 1 << 15


def check_workers(workers: Any) -> int:
    """``workers`` must be a positive int, or -1 for every CPU of the machine."""
    if isinstance(workers, (bool, np.bool_)) or not isinstance(workers, (int, np.integer)):
        raise TypeError(f"`workers` must be a positive int or -1; got {workers!r}")
    w = int(workers)
    if w == -1:
        return max(1, os.cpu_count() or 1)
    if w < 1:
        raise ValueError(f"`workers` must be a positive int or -1; got {w}")
    return w


def effective_workers(workers: int, n: int) -> int:
    """Number of threads actually used for ``n`` draws."""
    return max(1, min(workers, n // MIN_PER_WORKER))


def spawn_children(gen: np.random.Generator, k: int) -> list[np.random.Generator]:
    """``k`` independent children of ``gen`` (its seed sequence advances, under its lock).

    A secure ``gen`` (:func:`bndp._random.is_secure`) gets ``k`` new secure generators keyed
    from the OS instead: its seed sequence is not re-keyed in a forked child (only its key
    is), so children spawned from it would repeat in the parent and in every forked child."""
    if is_secure(gen):
        return [default_rng(None) for _ in range(k)]
    bit_gen = gen.bit_generator
    with bit_gen.lock:
        try:
            return list(gen.spawn(k))
        except TypeError:
            # A BitGenerator without a SeedSequence cannot spawn: key the children from the
            # parent's own output instead (256 bits each), which still gives distinct streams.
            keys = gen.integers(0, 2**63, size=(k, 4), dtype=np.uint64)
            return [np.random.Generator(np.random.PCG64(np.random.SeedSequence(list(map(int, r)))))
                    for r in keys]


def _blocks(n: int, k: int) -> list[tuple[int, int]]:
    edges = [(n * i) // k for i in range(k + 1)]
    return [(edges[i], edges[i + 1]) for i in range(k)]


def _run(jobs: Sequence[Callable[[], None]]) -> None:
    errors: list[BaseException] = []

    def call(job: Callable[[], None]) -> None:
        try:
            job()
        except BaseException as exc:  # re-raised in the caller below
            errors.append(exc)

    threads = [threading.Thread(target=call, args=(j,), daemon=True) for j in jobs[1:]]
    for t in threads:
        t.start()
    call(jobs[0])  # the calling thread takes the first block
    for t in threads:
        t.join()
    if errors:
        raise errors[0]


def run_fill(fill: Callable, fill_rows: Callable, gen: np.random.Generator,
             vals: Sequence[float] | None, params2: Sequence[np.ndarray] | None,
             out2: np.ndarray, workers: int) -> None:
    """Fill ``out2`` with ``workers`` threads.

    Either ``vals`` (scalar parameters, ``out2`` flat, ``fill`` is used) or ``params2``
    (2-D views broadcast to ``out2``'s 2-D shape, ``fill_rows`` is used). The longer axis
    is split, so a 1-D column and a tall matrix both parallelise.
    """
    k = effective_workers(workers, out2.size)
    if k == 1:
        if vals is not None:
            fill(gen, *vals, out2)
        else:
            fill_rows(gen, *params2, out2)  # type: ignore[misc]
        return
    children = spawn_children(gen, k)
    jobs: list[Callable[[], None]] = []
    if vals is not None:
        for child, (a, b) in zip(children, _blocks(out2.shape[0], k)):
            jobs.append(functools.partial(fill, child, *vals, out2[a:b]))
    else:
        assert params2 is not None
        n0, n1 = out2.shape
        if n0 >= n1:  # split the rows
            for child, (a, b) in zip(children, _blocks(n0, k)):
                jobs.append(functools.partial(fill_rows, child, *(p[a:b] for p in params2),
                                              out2[a:b]))
        else:  # one long row (a 1-D input): split the columns
            for child, (a, b) in zip(children, _blocks(n1, k)):
                jobs.append(functools.partial(fill_rows, child,
                                              *(p[:, a:b] for p in params2), out2[:, a:b]))
    _run(jobs)
