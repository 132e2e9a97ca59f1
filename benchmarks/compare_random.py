"""Side-by-side throughput: the secure default generators (AES-CTR, ChaCha20) against PCG64
on bndp's samplers, and the exact mode against the continuous mode.

Run: PYTHONPATH=src python benchmarks/compare_random.py [N]
Generators are interleaved within each repetition, each run is timed in process CPU time
(time the process was not scheduled does not count) and the best of REPS runs is kept, so a
shared or noisy machine affects all columns alike.
"""

import sys
import time

import numpy as np

import bndp
from bndp._random import secure_bit_generator

REPS = 7


def gens():
    return {
        "pcg64": np.random.Generator(np.random.PCG64(0)),
        "aes": np.random.Generator(secure_bit_generator("aes")),
        "chacha": np.random.Generator(secure_bit_generator("chacha")),
    }


def main(argv=None):
    argv = sys.argv[1:] if argv is None else argv
    N = int(argv[0]) if argv else 10**6
    values = np.random.default_rng(1).uniform(0.0, 10.0, N)
    lap = bndp.BoundedLaplace(1.0, sensitivity=1.0, lower=0.0, upper=10.0, mode="continuous")
    gau = bndp.BoundedGaussian(1.0, sensitivity=1.0, lower=0.0, upper=10.0, mode="continuous")
    lap_x = bndp.BoundedLaplace(1.0, sensitivity=1.0, lower=0.0, upper=10.0, mode="exact")
    gau_x = bndp.BoundedGaussian(1.0, sensitivity=1.0, lower=0.0, upper=10.0, mode="exact")
    work = {
        "raw uint64": lambda g: g.integers(0, 2**64, size=N, dtype=np.uint64),
        "bounded Laplace (continuous)": lambda g: lap.sample(values, rng=g),
        "bounded Gaussian (continuous)": lambda g: gau.sample(values, rng=g),
        "truncated normal": lambda g: bndp.truncated_normal(5.0, 2.0, 0.0, 10.0, size=N, rng=g),
        "bounded Laplace (exact)": lambda g: lap_x.sample(values, rng=g),
        "bounded Gaussian (exact)": lambda g: gau_x.sample(values, rng=g),
    }
    G = gens()
    best = {(w, k): float("inf") for w in work for k in G}
    for _ in range(REPS):
        for w, f in work.items():
            for k, g in G.items():
                t = time.process_time()
                f(g)
                best[(w, k)] = min(best[(w, k)], time.process_time() - t)
    print(f"N = {N}, best of {REPS} (interleaved); throughput in M samples/s")
    print(f"{'sampler':32s} {'PCG64':>8s} {'AES-CTR':>8s} {'ChaCha20':>9s} {'AES/PCG':>8s} {'ChaCha/PCG':>10s}")
    for w in work:
        r = {k: N / best[(w, k)] / 1e6 for k in G}
        print(f"{w:32s} {r['pcg64']:8.2f} {r['aes']:8.2f} {r['chacha']:9.2f} "
              f"{r['aes'] / r['pcg64']:8.3f} {r['chacha'] / r['pcg64']:10.3f}")
    for fam in ("Laplace", "Gaussian"):
        c = best[(f"bounded {fam} (continuous)", "aes")]
        e = best[(f"bounded {fam} (exact)", "aes")]
        print(f"exact / continuous throughput, bounded {fam} (AES-CTR): {c / e:.3f}")


if __name__ == "__main__":
    main()
