"""rng=None: never the same noise in a forked child as in the parent, nor across threads."""

import os
import sys
import threading

import numpy as np
import pytest

import bndp

pytestmark = pytest.mark.skipif(not hasattr(os, "fork"), reason="needs os.fork")


def _draw():
    return bndp.sample(np.zeros(8), mechanism="laplace", epsilon=1.0, sensitivity=1.0,
                       lower=-100.0, upper=100.0)


def _fork_and_draw():
    r, w = os.pipe()
    pid = os.fork()
    if pid == 0:  # child
        try:
            os.close(r)
            os.write(w, _draw().tobytes())
        finally:
            os._exit(0)
    os.close(w)
    data = b""
    while len(data) < 64:
        chunk = os.read(r, 64 - len(data))
        if not chunk:
            break
        data += chunk
    os.close(r)
    os.waitpid(pid, 0)
    return np.frombuffer(data, dtype=np.float64)


def test_parent_and_forked_child_draw_different_noise():
    _draw()  # the parent's default generator exists before the fork
    child = _fork_and_draw()
    parent = _draw()
    assert child.shape == (8,)
    assert not np.array_equal(child, parent)
    # two children forked from the same parent state also differ
    assert not np.array_equal(_fork_and_draw(), _fork_and_draw())


def test_default_is_not_reproducible_and_seeded_is():
    assert not np.array_equal(_draw(), _draw())
    a = bndp.sample(np.zeros(4), mechanism="gaussian", epsilon=1.0, sensitivity=1.0,
                    lower=-1.0, upper=1.0, rng=123)
    b = bndp.sample(np.zeros(4), mechanism="gaussian", epsilon=1.0, sensitivity=1.0,
                    lower=-1.0, upper=1.0, rng=123)
    np.testing.assert_array_equal(a, b)


def test_threads_get_independent_default_streams():
    out = {}

    def work(i):
        out[i] = _draw()

    ts = [threading.Thread(target=work, args=(i,)) for i in range(4)]
    for t in ts:
        t.start()
    for t in ts:
        t.join()
    vals = [out[i].tobytes() for i in range(4)]
    assert len(set(vals)) == 4


def test_rng_argument_forms():
    seq = np.random.SeedSequence(7)
    for rng in (7, np.random.SeedSequence(7), np.random.PCG64(seq), np.random.default_rng(7)):
        x = bndp.truncated_normal(0, 1, -1, 1, size=3, rng=rng)
        assert x.shape == (3,)
    np.testing.assert_array_equal(bndp.truncated_normal(0, 1, -1, 1, size=3, rng=7),
                                  bndp.truncated_normal(0, 1, -1, 1, size=3,
                                                        rng=np.random.SeedSequence(7)))
    with pytest.raises(TypeError):
        bndp.truncated_normal(0, 1, -1, 1, rng=np.random.RandomState(0))
    with pytest.raises(TypeError):
        bndp.truncated_normal(0, 1, -1, 1, rng=1.5)
    with pytest.raises(ValueError):
        bndp.truncated_normal(0, 1, -1, 1, rng=-1)
    g = bndp.default_rng()
    assert isinstance(g, np.random.Generator)
    assert not np.array_equal(bndp.default_rng().random(4), bndp.default_rng().random(4))
