"""Spellings deprecated in 0.7.0 work with a DeprecationWarning that names their removal in
0.8.0 and the spelling to use; the new spelling works without a warning."""

from __future__ import annotations

import inspect
import warnings

import pytest

import bndp
import bndp.api
from bndp.mechanisms.registry import MECHANISMS, SAMPLE_MECHANISMS


def test_api_mechanisms_is_the_sample_mechanisms_with_a_warning():
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert bndp.api.SAMPLE_MECHANISMS is SAMPLE_MECHANISMS
    assert "SAMPLE_MECHANISMS" in bndp.api.__all__ and "MECHANISMS" not in bndp.api.__all__
    with pytest.warns(DeprecationWarning, match=r"^bndp\.api\.MECHANISMS is deprecated and "
                      r"will be removed in bndp 0\.8\.0: use bndp\.api\.SAMPLE_MECHANISMS") as rec:
        assert bndp.api.MECHANISMS == SAMPLE_MECHANISMS
    assert rec[0].filename == __file__
    # the registry is the one source: every sample name is a spec name
    assert set(SAMPLE_MECHANISMS) < set(MECHANISMS)
    with pytest.raises(AttributeError, match="no attribute 'NOT_THERE'"):
        bndp.api.NOT_THERE  # noqa: B018


@pytest.mark.parametrize("engine, old", [("spark", "df"), ("dask", "ddf")])
def test_engines_take_the_frame_first_as_bndp_privatize(engine, old):
    mod = pytest.importorskip(f"bndp.integrations.{engine}")
    assert list(inspect.signature(mod.privatize).parameters)[:2] == \
        list(inspect.signature(bndp.privatize).parameters)[:2] == ["frame", "spec"]
    # the old keyword reaches the function as `frame` (an empty spec is then refused by the
    # spec check, before any engine work)
    with pytest.warns(DeprecationWarning, match=rf"^privatize\({old}=\.\.\.\) is deprecated "
                      r"and will be removed in bndp 0\.8\.0: pass frame="):
        with pytest.raises(ValueError, match="spec"):
            mod.privatize(**{old: None}, spec={})
    with pytest.raises(TypeError, match="give `frame` only"):
        mod.privatize(None, {}, **{old: None})
