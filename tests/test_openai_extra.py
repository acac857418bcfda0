"""openai and httpx2 are the ``openai`` extra: everything else works without them.

(They require anyio, whose pytest plugin would load at every pytest start in the
environment; ``benchmarks/pytest_startup.py`` measures it.)
"""

from __future__ import annotations

import subprocess
import sys
import textwrap
from pathlib import Path

import pytest
from typer.testing import CliRunner

from harness import ScriptedModel, reply
from harness._extras import require
from harness.cli._app import app
from harness.models import OpenAIChatModel, OpenAIResponsesModel, fake_openai_client

ROOT = Path(__file__).resolve().parents[1]
INSTALL = "pip install 'tool-loop-harness[openai]'"

# runs before anything imports them: "not installed" for the rest of the process
BLOCK = "import sys\nfor _name in ('openai', 'httpx2', 'anyio'):\n    sys.modules[_name] = None\n"


@pytest.mark.parametrize("adapter", [OpenAIChatModel, OpenAIResponsesModel])
def test_an_adapter_without_openai_names_the_extra(
    monkeypatch: pytest.MonkeyPatch, adapter: type[OpenAIChatModel]
) -> None:
    monkeypatch.setitem(sys.modules, "openai", None)
    with pytest.raises(ImportError) as info:
        adapter(object())  # type: ignore[arg-type]
    message = str(info.value)
    assert f"{adapter.__name__} (the OpenAI SDK adapter) needs 'openai'" in message
    assert INSTALL in message


@pytest.mark.parametrize("feature", ["fake_openai_client", "fake_async_openai_client"])
def test_the_fake_clients_without_openai_name_the_extra(
    monkeypatch: pytest.MonkeyPatch, feature: str
) -> None:
    import harness.models as models

    make = getattr(models, feature)
    monkeypatch.setitem(sys.modules, "openai", None)
    with pytest.raises(ImportError, match=rf"{feature} needs 'openai'.*\[openai\]"):
        make(ScriptedModel([reply("ok")]))


def test_the_fake_client_still_works_with_the_extra() -> None:
    client = fake_openai_client(ScriptedModel([reply("ok")]))
    answer = client.chat.completions.create(model="m", messages=[{"role": "user", "content": "hi"}])
    assert answer.choices[0].message.content == "ok"


def test_harness_record_without_openai_says_what_to_install(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setitem(sys.modules, "openai", None)
    result = CliRunner().invoke(
        app,
        ["record", "-s", "scenarios/control/facade_object.yaml", "-m", "m"],
        env={"OPENAI_BASE_URL": "http://x.test/v1"},
    )
    assert result.exit_code == 2
    assert "harness record needs 'openai'" in result.output
    assert INSTALL in result.output


def test_an_explicit_extra_wins_over_the_table(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "httpx2", None)
    with pytest.raises(ImportError, match=r"\[anthropic\]"):
        require("httpx2", "the Anthropic wire fake", extra="anthropic")
    with pytest.raises(ImportError, match=r"\[openai\]"):
        require("httpx2", "the OpenAI wire fake")


def _python(code: str, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-c", BLOCK + textwrap.dedent(code), *args],
        capture_output=True,
        text=True,
        check=False,
        cwd=ROOT,
    )


def test_the_harness_without_openai_httpx2_or_anyio() -> None:
    done = _python(
        """
        import harness, harness.models, harness.testing, harness.cassettes, harness.scenarios
        import harness.assertions, harness.injection, harness.pytest_plugin, harness.cli._app
        from harness import ScriptedModel, reply, run
        from harness.models import WireServer, CallbackModel

        assert run(ScriptedModel([reply('ok')]), 'hi').output == 'ok'
        for name, extra in [
            ('fake_openai_client', 'openai'),
            ('OpenAIWireTransport', 'openai'),
            ('fake_anthropic_client', 'anthropic'),
        ]:
            try:
                getattr(harness.models, name)
            except ImportError as exc:
                assert f"pip install 'tool-loop-harness[{extra}]'" in str(exc), exc
            else:
                raise AssertionError(f'{name} imported without its extra')
        assert all(sys.modules[name] is None for name in ('openai', 'httpx2', 'anyio'))
        print('fine')
        """
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "fine"


def test_harness_run_on_the_scripted_model_without_openai() -> None:
    done = _python(
        """
        from harness.cli import main

        sys.argv = ['harness', 'run', '-q', 'scenarios/control/facade_object.yaml']
        main()
        """
    )
    assert done.returncode == 0, done.stdout + done.stderr
    assert "1 passed, 0 failed" in done.stdout


def test_the_plugin_without_openai(pytester: pytest.Pytester) -> None:
    pytester.makeconftest(BLOCK)
    pytester.makepyfile(
        """
        from harness import ScriptedModel, reply


        def test_runner(harness_runner):
            assert harness_runner.run(ScriptedModel([reply("ok")]), "hi").output == "ok"


        def test_sync(harness_openai):
            pass


        def test_async(harness_async_openai):
            pass
        """
    )
    result = pytester.runpytest_subprocess("-p", "no:cacheprovider", "-p", "no:anyio")
    result.assert_outcomes(passed=1, errors=2)
    result.stdout.fnmatch_lines(
        [
            "*the harness_openai fixture needs 'openai'*tool-loop-harness?openai?*",
            "*the harness_async_openai fixture needs 'openai'*",
        ]
    )
