"""Randomness for bndp: ``rng=`` handling, the secure default stream, fork and thread safety.

Every public sampler takes ``rng=`` and passes it through :func:`as_generator`:

* ``None``: the module default generator of the calling thread (see below);
* an ``int`` or a :class:`numpy.random.SeedSequence`: a fresh PCG64 generator seeded from it
  (reproducible; for tests and research, never for a real release);
* a :class:`numpy.random.BitGenerator`: wrapped in a Generator (its state is shared);
* a :class:`numpy.random.Generator`: used as it is.

The default generator is a cryptographically secure counter-mode stream: AES-128 in counter
mode (``randomgen.AESCounter``) where the CPU has the AES instructions, ChaCha20
(``randomgen.ChaCha``, 20 rounds, 256-bit key) otherwise. Each is keyed from 256 fresh bits
of the operating system's CSPRNG (:func:`secrets.token_bytes`): for AES-CTR, 128 bits of key
and a 128-bit random starting counter; for ChaCha20, the 256-bit key. A statistical
generator is not designed to resist prediction (the Mersenne Twister's state is read off
624 outputs; PCG64's has been recovered from a few hundred outputs by published attacks),
whereas predicting a secure stream from its outputs means breaking the cipher, so noise
released earlier does not reveal the noise added to later releases.

Each thread gets its own default generator (thread-local), so threads never share or replay
a stream. A process created by ``fork()`` drops every inherited default generator
(``os.register_at_fork``) and keys a fresh one from the OS on its first draw: forked workers
never replay the parent's noise. Generators passed explicitly through ``rng=`` are the
caller's: they are shared by threads under their BitGenerator's lock. Those that bndp keyed
from the OS itself (:func:`default_rng` without a seed, :func:`secure_bit_generator`,
:func:`spawn` of ``None`` or of such a generator) are re-keyed in place with fresh OS
entropy in a forked child, so the caller's ``Generator`` object draws a new stream there;
every other generator is copied, state and all, by ``fork()``.

Secure or reproducible
----------------------
:func:`is_secure` is the one test every release path uses: ``None`` and the generators
bndp keyed from the OS itself (kept in a weak registry) are secure; everything else is
reproducible (an int, a ``SeedSequence``, any other ``BitGenerator`` or ``Generator``,
including NumPy's ``default_rng()`` without a seed: it is not a cryptographically secure
generator and bndp cannot tell whether its entropy was fixed; a copy of a secure generator,
by pickling or by setting its state, is reproducible too). A release that charges a
persistent budget refuses a reproducible generator unless ``allow_seeded=True``.
"""

from __future__ import annotations

import os
import secrets
import threading
import warnings
import weakref
from typing import Any, Union

import numpy as np

from .exceptions import PrivacyLeakWarning

__all__ = ["default_rng", "secure_bit_generator", "as_generator", "spawn", "is_secure",
           "RNGLike"]

RNGLike = Union[None, int, np.random.SeedSequence, np.random.BitGenerator, np.random.Generator]

_ENTROPY_BITS = 256

try:  # randomgen provides the AES-CTR and ChaCha BitGenerators (NumPy bitgen_t interface)
    from randomgen import AESCounter as _AESCounter
    from randomgen import ChaCha as _ChaCha
except ImportError:  # pragma: no cover - randomgen is a declared dependency
    _AESCounter = None
    _ChaCha = None


def _detect_aesni() -> bool:
    if _AESCounter is None:
        return False
    try:
        return bool(_AESCounter(key=0).use_aesni)
    except Exception:  # pragma: no cover - defensive: any failure means "use ChaCha"
        return False


_HAS_AESNI = _detect_aesni()

#: The bit generators bndp keyed from the OS itself (weakly held): the secure ones
#: (:func:`is_secure`), re-keyed in a forked child (:func:`_rekey_in_child`).
_KEYED: "weakref.WeakSet[np.random.BitGenerator]" = weakref.WeakSet()

class _Keyed:
    """What bndp's own bit generators add to their base class: weak-reference support (the
    Cython classes have none), so that :data:`_KEYED` can hold them, and leaving that
    registry when anyone else seeds them or sets their state (a known key or state makes
    the stream reproducible). bndp re-keys them through the base class's ``seed``."""

    def seed(self, *args: Any, **kwargs: Any) -> None:
        _KEYED.discard(self)  # type: ignore[arg-type]
        super().seed(*args, **kwargs)  # type: ignore[misc]

    @property
    def state(self) -> Any:
        return self._base.state.__get__(self)  # type: ignore[attr-defined]

    @state.setter
    def state(self, value: Any) -> None:
        _KEYED.discard(self)  # type: ignore[arg-type]
        self._base.state.__set__(self, value)  # type: ignore[attr-defined]


if _AESCounter is not None:
    # same names, same streams as randomgen's
    class AESCounter(_Keyed, _AESCounter):  # type: ignore[misc,valid-type]
        """``randomgen.AESCounter`` keyed by bndp from the OS (weakly referenceable)."""
        _base = _AESCounter

    class ChaCha(_Keyed, _ChaCha):  # type: ignore[misc,valid-type]
        """``randomgen.ChaCha`` keyed by bndp from the OS (weakly referenceable)."""
        _base = _ChaCha


class PCG64(_Keyed, np.random.PCG64):  # type: ignore[misc]
    """NumPy's PCG64 seeded by bndp from the OS (the fallback without randomgen; weakly
    referenceable)."""
    _base = np.random.PCG64


def _key_from_os(bg: np.random.BitGenerator) -> None:
    """Give ``bg`` (one of the classes above) a fresh state keyed with 256 bits from the OS
    CSPRNG: AES-CTR, 128 bits of key and a 128-bit starting counter; ChaCha20, the 256-bit
    key (counter 0); PCG64, a seed sequence of the 256 bits."""
    raw = secrets.token_bytes(_ENTROPY_BITS // 8)
    # through the base classes: _Keyed's own seed and state drop a generator from _KEYED
    if _AESCounter is not None and isinstance(bg, _AESCounter):
        _AESCounter.seed(bg, key=int.from_bytes(raw[:16], "little"),
                         counter=int.from_bytes(raw[16:], "little"))
    elif _ChaCha is not None and isinstance(bg, _ChaCha):
        _ChaCha.seed(bg, key=int.from_bytes(raw, "little"), counter=0)
    else:
        np.random.PCG64.state.__set__(  # type: ignore[attr-defined]
            bg, np.random.PCG64(np.random.SeedSequence(int.from_bytes(raw, "little"))).state)


def is_secure(rng: RNGLike) -> bool:
    """Whether ``rng`` draws a stream nobody can reproduce: ``None`` (the thread's default
    generator) or a generator whose BitGenerator bndp keyed from the OS CSPRNG itself
    (:func:`default_rng` without a seed, :func:`secure_bit_generator`, :func:`spawn` of a
    secure ``rng``).

    Everything else is reproducible: an int, a ``SeedSequence``, any other
    ``BitGenerator`` or ``Generator`` (NumPy's ``numpy.random.default_rng()`` without a seed
    included: it is not a cryptographically secure generator, and bndp cannot tell whether
    its entropy was fixed), or a copy of a secure generator (pickled, or its state set).
    An ``rng`` of an unsupported type raises the ``TypeError`` or ``ValueError`` of
    :func:`as_generator`.
    """
    if rng is None:
        return True
    if isinstance(rng, np.random.Generator):
        rng = rng.bit_generator
    if isinstance(rng, np.random.BitGenerator):
        return rng in _KEYED
    as_generator(rng)  # an invalid rng: its error
    return False


def secure_bit_generator(kind: str | None = None) -> np.random.BitGenerator:
    """A new cryptographically secure BitGenerator keyed with 256 bits from the OS CSPRNG.

    Parameters
    ----------
    kind : {None, "aes", "chacha"}
        ``None`` picks AES-CTR when the CPU has AES instructions (hardware AES is fast and
        constant-time), ChaCha20 otherwise.

    Returns
    -------
    numpy.random.BitGenerator
        ``randomgen.AESCounter`` (key: 128 random bits, starting counter: 128 random bits) or
        ``randomgen.ChaCha`` with 20 rounds (key: 256 random bits, counter 0). Both expose the
        NumPy ``bitgen_t`` capsule and a lock, so every bndp sampler uses them directly.

    Raises
    ------
    ImportError
        If ``randomgen`` is not installed.
    """
    if kind is None:
        kind = "aes" if _HAS_AESNI else "chacha"
    if kind not in ("aes", "chacha"):
        raise ValueError(f"`kind` must be None, 'aes' or 'chacha'; got {kind!r}")
    if _AESCounter is None:
        raise ImportError("the secure default generator needs the 'randomgen' package")
    bg = AESCounter(key=0) if kind == "aes" else ChaCha(key=0, rounds=20)
    _key_from_os(bg)
    _KEYED.add(bg)
    return bg


def _os_seed_sequence() -> np.random.SeedSequence:
    return np.random.SeedSequence(int.from_bytes(secrets.token_bytes(_ENTROPY_BITS // 8), "little"))


_warned_fallback = False


def _secure_or_fallback() -> np.random.BitGenerator:
    global _warned_fallback
    if _AESCounter is not None:
        return secure_bit_generator()
    if not _warned_fallback:    # once a process (randomgen is a declared dependency)
        warnings.warn("randomgen is not installed: the default generator falls back to an "
                      "OS-seeded PCG64, which is not cryptographically secure",
                      PrivacyLeakWarning, stacklevel=3)
        _warned_fallback = True
    bg = PCG64(_os_seed_sequence())
    _KEYED.add(bg)
    return bg


def default_rng(seed: RNGLike = None) -> np.random.Generator:
    """Return a NumPy :class:`~numpy.random.Generator`.

    Parameters
    ----------
    seed : None, int, SeedSequence, BitGenerator or Generator
        ``None`` gives a new cryptographically secure generator (AES-CTR or ChaCha20, see
        :func:`secure_bit_generator`) keyed with 256 bits from the OS CSPRNG; anything else
        behaves as in :func:`numpy.random.default_rng` (PCG64 for an int or SeedSequence).
        A seeded generator is for tests and reproducible research, never for a real release:
        anyone who knows or guesses the seed can subtract the noise. A release that
        charges a persistent budget (:meth:`bndp.Budget.open`) refuses it unless
        ``allow_seeded=True``.

    Returns
    -------
    numpy.random.Generator
        A new generator (a ``Generator`` passed in is returned as it is).

    Notes
    -----
    Across ``fork()``: a generator returned for ``seed=None`` is re-keyed in the child, in
    place, with fresh OS entropy (``os.register_at_fork``), so the ``Generator`` the caller
    holds draws a new stream in each child, never the parent's nor another child's. A
    seeded generator stays deterministic: the child continues the parent's stream from
    the state at the fork, exactly as the parent does.

    Examples
    --------
    >>> import bndp
    >>> rng = bndp.default_rng()            # secure: for real releases
    >>> type(rng.bit_generator).__name__ in ("AESCounter", "ChaCha")
    True
    >>> rng = bndp.default_rng(42)          # reproducible PCG64: for tests only
    >>> type(rng.bit_generator).__name__
    'PCG64'
    >>> m = bndp.BoundedLaplace(epsilon=1.0, sensitivity=1.0, lower=0.0, upper=10.0)
    >>> m.sample([1.0, 2.0], rng=rng).shape
    (2,)
    """
    if seed is None:
        return np.random.Generator(_secure_or_fallback())
    return as_generator(seed)


class _ThreadDefaults(threading.local):
    gen: np.random.Generator | None = None


_defaults = _ThreadDefaults()
_fork_generation = 0


def _after_fork_in_child() -> None:
    # A fresh thread-local object: every inherited default generator is dropped, so the
    # child re-keys from the OS on its next draw instead of replaying the parent's stream.
    global _defaults, _fork_generation
    _defaults = _ThreadDefaults()
    _fork_generation += 1
    _rekey_in_child()


def _rekey_in_child() -> None:
    """Re-key in place, from the child's OS CSPRNG, every bit generator bndp keyed itself
    (:data:`_KEYED`): a ``Generator`` the caller holds over one of them draws a new stream
    in the child, never the parent's.

    A generator whose lock another thread held at the fork is left as it is: that lock
    stays held in the child, where the thread does not exist, so every draw from it (and
    re-keying it, which takes the lock) would wait forever; it can never replay the
    parent's noise, and the child does not hang here."""
    for bg in list(_KEYED):
        lock = bg.lock
        if not lock.acquire(blocking=False):
            continue
        try:
            _key_from_os(bg)
        finally:
            lock.release()


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

    With ``rng=None`` or a secure ``rng`` (:func:`is_secure`) each child is a new secure
    generator keyed with fresh OS entropy (and secure itself); otherwise the children are
    spawned from ``rng``'s seed sequence (reproducible for a seeded ``rng``).
    """
    if isinstance(n, (bool, np.bool_)) or not isinstance(n, (int, np.integer)) or n < 0:
        raise ValueError(f"`n` must be a non-negative integer; got {n!r}")
    if is_secure(rng):
        return [default_rng(None) for _ in range(int(n))]
    return list(as_generator(rng).spawn(int(n)))
