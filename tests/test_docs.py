"""The examples in the public docstrings run and print what they claim."""

import doctest

import pytest

import bndp.calibrate
import bndp.mechanisms.gaussian
import bndp.mechanisms.laplace


@pytest.mark.parametrize("module", [bndp.calibrate, bndp.mechanisms.laplace,
                                    bndp.mechanisms.gaussian])
def test_docstring_examples(module):
    result = doctest.testmod(module, optionflags=doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE)
    assert result.attempted > 0
    assert result.failed == 0


def test_cli_demo_runs(capsys):
    from bndp.cli import main

    assert main(["demo", "--seed", "1"]) == 0
    out = capsys.readouterr().out
    assert "bounded Laplace" in out and "bounded Gaussian" in out
    assert "every released value lies in [0, 120]" in out


def test_readme_usage_block_runs():
    import os
    import re

    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    path = os.path.join(root, "README.md")
    if not os.path.exists(path):
        pytest.skip("needs the source tree")
    blocks = re.findall(r"```python\n(.*?)```", open(path, encoding="utf-8").read(), flags=re.S)
    assert blocks
    exec(compile(blocks[0], "README.md", "exec"), {})
