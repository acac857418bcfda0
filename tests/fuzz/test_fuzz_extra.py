"""hypothesis and faker are the ``fuzz`` extra: only ``harness.fuzz`` needs them."""

from __future__ import annotations

import subprocess
import sys

import pytest
from typer.testing import CliRunner

from harness.cli._app import app


def _without(monkeypatch: pytest.MonkeyPatch, module: str) -> None:
    monkeypatch.setitem(sys.modules, module, None)  # "not installed"
    for name in [n for n in sys.modules if n == "harness.fuzz" or n.startswith("harness.fuzz.")]:
        monkeypatch.delitem(sys.modules, name)


@pytest.mark.parametrize(("module", "extra"), [("hypothesis", "fuzz"), ("faker", "personas")])
def test_harness_fuzz_without_its_extra_names_it(
    monkeypatch: pytest.MonkeyPatch, module: str, extra: str
) -> None:
    _without(monkeypatch, module)
    with pytest.raises(ImportError, match=rf"harness\.fuzz .*tool-loop-harness\[{extra}\]"):
        import harness.fuzz  # noqa: F401


def test_the_fuzz_command_without_hypothesis_says_what_to_install(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    _without(monkeypatch, "hypothesis")
    result = CliRunner().invoke(app, ["fuzz", "-n", "1"])
    assert result.exit_code == 2
    assert "pip install 'tool-loop-harness[fuzz]'" in result.output


def test_import_harness_and_its_cli_never_import_hypothesis() -> None:
    code = (
        "import sys; sys.modules['hypothesis'] = None; sys.modules['faker'] = None\n"
        "import harness, harness.cli._app, harness.scenarios\n"
        "from harness import ScriptedModel, reply, run\n"
        "assert run(ScriptedModel([reply('ok')]), 'hi').output == 'ok'\n"
        "print('fine')"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=False)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "fine"
