"""The secure default generator, fork re-keying and thread safety (bndp._random)."""

from __future__ import annotations

import ctypes
import os
import pickle
import sys
import threading

import numpy as np
import pytest

import bndp
from bndp import _random

randomgen = pytest.importorskip("randomgen")


def _mech():
    return bndp.BoundedLaplace(epsilon=1.0, sensitivity=1.0, lower=0.0, upper=10.0, mode="continuous")


# --- the default is a secure counter-mode stream ------------------------------------------

def test_default_is_secure_counter_mode():
    g = bndp.default_rng()
    bg = g.bit_generator
    assert type(bg).__name__ in ("AESCounter", "ChaCha")
    if type(bg).__name__ == "ChaCha":
        assert bg.state["state"]["rounds"] == 20
    # what _core._borrow needs: a capsule named "BitGenerator" and a lock
    is_valid = ctypes.pythonapi.PyCapsule_IsValid
    is_valid.restype = ctypes.c_int
    is_valid.argtypes = [ctypes.py_object, ctypes.c_char_p]
    assert is_valid(bg.capsule, b"BitGenerator") == 1
    assert is_valid(bg.capsule, b"bitgen") == 0          # the check can fail
    assert hasattr(bg.lock, "acquire") and hasattr(bg.lock, "release")
    x = _mech().sample(np.full(1000, 5.0), rng=g)
    assert x.shape == (1000,) and ((x >= 0) & (x <= 10)).all()


def test_aes_chosen_when_cpu_has_aesni():
    bg = _random.secure_bit_generator()
    if randomgen.AESCounter(key=0).use_aesni:
        assert type(bg).__name__ == "AESCounter"
    else:
        assert type(bg).__name__ == "ChaCha"


def test_chacha_without_aesni(monkeypatch):
    monkeypatch.setattr(_random, "_HAS_AESNI", False)
    g = bndp.default_rng()
    assert type(g.bit_generator).__name__ == "ChaCha"
    assert g.bit_generator.state["state"]["rounds"] == 20


@pytest.mark.parametrize("kind", ["aes", "chacha"])
def test_both_kinds_drive_every_sampler(kind):
    g = np.random.Generator(_random.secure_bit_generator(kind))
    x = _mech().sample([0.0, 5.0, 10.0], size=(500, 3), rng=g)
    assert ((x >= 0) & (x <= 10)).all()
    y = bndp.BoundedGaussian(epsilon=1.0, sensitivity=1.0, lower=0.0, upper=5.0, mode="continuous").sample(2.0, size=500, rng=g)
    assert ((y >= 0) & (y <= 5)).all()
    z = bndp.truncated_normal(0.0, 1.0, -1.0, 1.0, size=100, rng=g)
    assert ((z >= -1) & (z <= 1)).all()


@pytest.mark.parametrize("kind", ["aes", "chacha"])
def test_keyed_from_256_os_bits(kind, monkeypatch):
    calls = []

    def fake(n):
        calls.append(n)
        return bytes(range(n)) if len(calls) % 2 else bytes(range(1, n + 1))

    monkeypatch.setattr(_random.secrets, "token_bytes", fake)
    a = np.random.Generator(_random.secure_bit_generator(kind)).integers(0, 2**63, 8)
    b = np.random.Generator(_random.secure_bit_generator(kind)).integers(0, 2**63, 8)
    monkeypatch.setattr(_random.secrets, "token_bytes", lambda n: bytes(range(n)))
    c = np.random.Generator(_random.secure_bit_generator(kind)).integers(0, 2**63, 8)
    assert calls == [32, 32]
    assert not np.array_equal(a, b)        # the stream depends on the OS bytes ...
    assert np.array_equal(a, c)            # ... and only on them


def test_all_256_bits_matter():
    # flipping the last OS bit (AES: counter half; ChaCha: top key bit) changes the stream
    for kind in ("aes", "chacha"):
        raw = [bytes(32), bytes(31) + b"\x80"]
        out = []
        for r in raw:
            orig = _random.secrets.token_bytes
            _random.secrets.token_bytes = lambda n, r=r: r
            try:
                out.append(np.random.Generator(_random.secure_bit_generator(kind)).integers(0, 2**63, 4))
            finally:
                _random.secrets.token_bytes = orig
        assert not np.array_equal(out[0], out[1])


def test_unseeded_generators_differ_and_seeded_reproduce():
    a = bndp.default_rng().random(4)
    b = bndp.default_rng().random(4)
    assert not np.array_equal(a, b)
    m = _mech()
    assert np.array_equal(m.sample(np.arange(5.0), rng=7), m.sample(np.arange(5.0), rng=7))
    assert type(bndp.default_rng(7).bit_generator).__name__ == "PCG64"


def test_bad_kind():
    with pytest.raises(ValueError, match="kind"):
        _random.secure_bit_generator("pcg")


# --- fork ---------------------------------------------------------------------------------

@pytest.mark.skipif(not hasattr(os, "fork"), reason="needs fork()")
def test_forked_child_is_rekeyed():
    parent = _random.as_generator(None)
    parent.random()                                     # the default exists before fork
    r, w = os.pipe()
    pid = os.fork()
    if pid == 0:                                        # child
        try:
            g = _random.as_generator(None)
            x = _mech().sample(np.full(8, 5.0))         # default rng of the child
            payload = pickle.dumps((g is parent, g.bit_generator.state is not None,
                                    g.random(8).tolist(), x.tolist()))
            os.write(w, payload)
        finally:
            os._exit(0)
    os.close(w)
    data = b""
    while chunk := os.read(r, 65536):
        data += chunk
    os.close(r)
    os.waitpid(pid, 0)
    same_obj, _, child_u, child_x = pickle.loads(data)
    # the parent's continuation is exactly what a child replaying the inherited state
    # would have produced
    parent_x = _mech().sample(np.full(8, 5.0), rng=None)
    parent_u = parent.random(8).tolist()
    assert not same_obj
    assert set(child_u).isdisjoint(parent_u)
    assert set(child_x).isdisjoint(parent_x.tolist())


@pytest.mark.skipif(sys.platform == "win32" or not hasattr(os, "fork"), reason="needs fork()")
def test_fork_pool_workers_get_distinct_streams():
    import multiprocessing as mp

    _random.as_generator(None).random()
    ctx = mp.get_context("fork")
    with ctx.Pool(4) as pool:
        outs = pool.map(_draw_default, range(8))
    flat = [v for o in outs for v in o]
    assert len(set(flat)) == len(flat)


def _draw_default(_):
    return _mech().sample(np.full(16, 5.0)).tolist()


# --- threads ------------------------------------------------------------------------------

N_THREADS = 8
CALLS = 25
BLOCK = 400


@pytest.mark.parametrize("source", ["seeded", "secure"])
def test_eight_threads_share_one_generator(source):
    """Threads sharing a Generator serialise on its lock: no corruption, no repeated draws.

    Each fill holds the lock for the whole block, so the blocks drawn concurrently must be a
    permutation of the blocks a single thread draws from the same starting state.
    """
    m = _mech()
    if source == "seeded":
        g = np.random.Generator(np.random.PCG64(2024))
        ref_g = np.random.Generator(np.random.PCG64(2024))
    else:
        bg = _random.secure_bit_generator()
        ref_bg = type(bg)()
        ref_bg.state = bg.state
        g, ref_g = np.random.Generator(bg), np.random.Generator(ref_bg)
    q = np.linspace(0.0, 10.0, BLOCK)
    blocks: list[list[np.ndarray]] = [[] for _ in range(N_THREADS)]
    barrier = threading.Barrier(N_THREADS)

    def work(i):
        barrier.wait()
        for _ in range(CALLS):
            blocks[i].append(m.sample(q, rng=g))

    ts = [threading.Thread(target=work, args=(i,)) for i in range(N_THREADS)]
    for t in ts:
        t.start()
    for t in ts:
        t.join()
    got = sorted(b.tobytes() for bl in blocks for b in bl)
    ref = sorted(m.sample(q, rng=ref_g).tobytes() for _ in range(N_THREADS * CALLS))
    assert got == ref
    allv = np.concatenate([b for bl in blocks for b in bl])
    assert np.unique(allv).size == allv.size == N_THREADS * CALLS * BLOCK


def test_thread_defaults_are_independent():
    gens: list = [None] * N_THREADS
    draws: list = [None] * N_THREADS
    again: list = [None] * N_THREADS
    barrier = threading.Barrier(N_THREADS)

    def work(i):
        barrier.wait()
        gens[i] = _random.as_generator(None)
        again[i] = _random.as_generator(None) is gens[i]
        draws[i] = _mech().sample(np.full(256, 5.0))

    ts = [threading.Thread(target=work, args=(i,)) for i in range(N_THREADS)]
    for t in ts:
        t.start()
    for t in ts:
        t.join()
    assert all(again)                                            # one per thread, kept
    assert len({id(g.bit_generator) for g in gens}) == N_THREADS  # never shared
    assert _random.as_generator(None) not in gens                # main thread has its own
    allv = np.concatenate(draws)
    assert np.unique(allv).size == allv.size


def test_spawn_none_gives_distinct_secure_children():
    kids = _random.spawn(None, 3)
    assert len({type(k.bit_generator).__name__ for k in kids} - {"AESCounter", "ChaCha"}) == 0
    firsts = [k.integers(0, 2**63) for k in kids]
    assert len(set(firsts)) == 3
    s1 = [k.integers(0, 2**63) for k in _random.spawn(5, 2)]
    s2 = [k.integers(0, 2**63) for k in _random.spawn(5, 2)]
    assert s1 == s2
