"""Opacus integration (bndp.torch): L-infinity clipping, the bounded mechanism's noise, the
per-instance accountant in place of Opacus's, and the DP-SGD example's --quick run."""

import json
import math
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

torch = pytest.importorskip("torch")
pytest.importorskip("opacus")

import bndp  # noqa: E402
from bndp.accounting import gaussian_rdp, per_instance_rdp, rdp_to_dp  # noqa: E402
from bndp.torch import BoundedNoiseOptimizer, make_private  # noqa: E402

from .conftest import bndp_import_root  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]
# Opacus's hooks warn when the inputs need no gradient, as here
pytestmark = pytest.mark.filterwarnings("ignore:Full backward hook is firing")


def _setup(n=8, seed=0):
    torch.manual_seed(seed)
    X = torch.randn(n, 4)
    y = torch.randint(0, 3, (n,))
    model = torch.nn.Linear(4, 3)
    loader = torch.utils.data.DataLoader(torch.utils.data.TensorDataset(X, y), batch_size=n)
    return model, loader


def _one_step(model, opt, loader):
    xb, yb = next(iter(loader))
    opt.zero_grad()
    torch.nn.functional.cross_entropy(model(xb), yb, reduction="sum").backward()
    gs = [p.grad_sample.detach().clone() for p in model.parameters()]
    opt.step()
    return gs


def test_optimizer_adds_the_bounded_mechanism_noise_to_the_linf_clipped_sum():
    model, loader = _setup()
    mech = bndp.TruncatedGaussian(0.5, lower=-1.0, upper=1.0)
    C = 0.1
    model, opt, loader = make_private(model, torch.optim.SGD(model.parameters(), lr=0.1),
                                      loader, mechanism=mech, clip_bound=C,
                                      loss_reduction="sum", rng=np.random.default_rng(5))
    assert isinstance(opt, BoundedNoiseOptimizer)
    assert opt.step_hook is None                  # no Opacus accountant attached
    gs = _one_step(model, opt, loader)
    flat = torch.cat([g.clamp(-C, C).sum(0).reshape(-1) for g in gs])
    np.testing.assert_allclose(opt.last_summed_gradient, flat.double().numpy(), rtol=1e-6)
    assert np.abs(opt.last_summed_gradient).max() <= 8 * C + 1e-6
    want = mech.sample(torch.from_numpy(opt.last_summed_gradient).float(),
                       rng=np.random.default_rng(5))
    got = torch.cat([p.grad.reshape(-1) for p in model.parameters()])
    torch.testing.assert_close(got, want, rtol=0, atol=0)   # same stream, same draws
    assert bool(((got >= -1) & (got <= 1)).all())
    np.testing.assert_allclose(opt.accountant.rdp,
                               per_instance_rdp(mech, opt.last_summed_gradient, C,
                                                opt.accountant.alphas), rtol=1e-12)
    assert opt.accountant.steps == 1


def test_training_a_few_steps_and_the_gaussian_baseline_epsilon():
    for mech in (bndp.RectifiedGaussian(0.05, lower=-2.0, upper=2.0), 0.05):
        model, loader = _setup(n=32, seed=1)
        before = [p.detach().clone() for p in model.parameters()]
        model, opt, loader = make_private(model, torch.optim.SGD(model.parameters(), lr=0.5),
                                          loader, mechanism=mech, clip_bound=0.05, rng=3)
        losses = []
        for _ in range(8):
            xb, yb = next(iter(loader))
            opt.zero_grad()
            loss = torch.nn.functional.cross_entropy(model(xb), yb)
            losses.append(float(loss.detach()))
            loss.backward()
            opt.step()
        assert all(math.isfinite(v) for v in losses) and losses[-1] < losses[0]
        assert any(not torch.equal(a, b) for a, b in zip(before, model.parameters()))
        eps = opt.epsilon(1e-5)
        assert math.isfinite(eps) and eps > 0
        if not isinstance(mech, float):
            continue
        d = sum(p.numel() for p in model.parameters())      # 15
        alphas = opt.accountant.alphas
        curve = 8 * np.asarray(gaussian_rdp(0.05, 0.05, alphas, dim=d))
        assert eps == pytest.approx(rdp_to_dp(curve, alphas, 1e-5), rel=1e-12)
        assert curve[list(alphas).index(2.0)] == pytest.approx(8 * 15 * 2 / 2, rel=1e-12)


def test_poisson_sampling_accounts_fil_only_and_bad_arguments():
    model, loader = _setup(n=40, seed=2)
    loader = torch.utils.data.DataLoader(loader.dataset, batch_size=10)
    mech = bndp.TruncatedGaussian(0.5, lower=-1.0, upper=1.0)
    model, opt, dl = make_private(model, torch.optim.SGD(model.parameters(), lr=0.1), loader,
                                  mechanism=mech, clip_bound=0.1, poisson_sampling=True, rng=1)
    assert opt.sampling_rate == pytest.approx(0.25) and opt.expected_batch_size == 10
    for xb, yb in dl:
        if len(xb):
            opt.zero_grad()
            torch.nn.functional.cross_entropy(model(xb), yb).backward()
            opt.step()
            break
    assert opt.last_summed_gradient is not None
    with pytest.raises(ValueError, match="subsampling"):
        opt.epsilon(1e-5)
    fil = opt.accountant.step(opt.last_summed_gradient,
                              jacobians=np.ones((3, opt.last_summed_gradient.size)))
    assert np.isfinite(fil).all() and (fil > 0).all()
    m2, _ = _setup()
    sgd = torch.optim.SGD(m2.parameters(), lr=0.1)
    with pytest.raises(ValueError, match="clip_bound"):
        BoundedNoiseOptimizer(sgd, mechanism=mech, clip_bound=0.0, expected_batch_size=8)
    with pytest.raises(TypeError, match="mechanism"):
        BoundedNoiseOptimizer(sgd, mechanism="gauss", clip_bound=0.1, expected_batch_size=8)
    with pytest.raises(ValueError, match="device_rng"):
        BoundedNoiseOptimizer(sgd, mechanism=mech, clip_bound=0.1, expected_batch_size=8,
                              device_rng="cuda")


def test_example_quick_run_prints_the_json_summary():
    pytest.importorskip("sklearn")
    env = dict(os.environ, PYTHONPATH=bndp_import_root())
    r = subprocess.run([sys.executable, str(ROOT / "examples" / "dp_sgd_bounded_support.py"),
                        "--quick"], capture_output=True, text=True, env=env, timeout=600)
    assert r.returncode == 0, r.stderr[-3000:]
    res = json.loads(r.stdout.strip().splitlines()[-1])
    assert set(res) == {"gaussian", "truncated"}
    for k in res:
        assert set(res[k]) == {"accuracy", "epsilon"}
        assert 0.6 <= res[k]["accuracy"] <= 1.0, res      # 10 classes: chance is 0.1
        assert math.isfinite(res[k]["epsilon"]) and res[k]["epsilon"] > 0
    # same noise multiplier: the truncated Gaussian's per-instance epsilon is smaller
    assert res["truncated"]["epsilon"] < res["gaussian"]["epsilon"]


def test_convention_reaches_the_accountant_and_mode_is_refused():
    mech = bndp.TruncatedGaussian(0.5, lower=-1.0, upper=1.0)
    model, loader = _setup()
    _, opt, _ = make_private(model, torch.optim.SGD(model.parameters(), lr=0.1), loader,
                             mechanism=mech, clip_bound=0.1, convention="alg1", rng=1)
    assert opt.accountant.convention == "alg1"
    model, loader = _setup()
    msg = r"\(\) takes no `mode` \(removed in bndp 0\.7\.0\): pass convention="
    with pytest.raises(TypeError, match=r"^make_private" + msg):
        make_private(model, torch.optim.SGD(model.parameters(), lr=0.1), loader,
                     mechanism=mech, clip_bound=0.1, mode="alg1", rng=1)
    model, _ = _setup()
    inner = torch.optim.SGD(model.parameters(), lr=0.1)
    opt = BoundedNoiseOptimizer(inner, mechanism=mech, clip_bound=0.1, convention="rev",
                                loss_reduction="sum")
    assert opt.accountant.convention == "rev"
    # not passed on to Opacus's DPOptimizer through **kwargs
    with pytest.raises(TypeError, match=r"^BoundedNoiseOptimizer" + msg):
        BoundedNoiseOptimizer(inner, mechanism=mech, clip_bound=0.1, mode="rev",
                              loss_reduction="sum")
