"""No secret reaches a cassette file or a string the harness shows (issue 9 section 1,
issue 10 section 6): by rule (credential headers, query parameters, userinfo, body fields)
and by value (every known secret wherever it appears, escaped or gzip-compressed).

Everything is recorded over real loopback HTTP: through ``harness.models.WireServer``
with the real ``openai`` SDK, and through a tiny echo server with ``httpx2``.
"""

from __future__ import annotations

import functools
import gzip
import json
import tempfile
import threading
import urllib.parse
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import httpx2
import openai
import pytest
import yaml
from hypothesis import HealthCheck, assume, given, settings, strategies as st

from harness import CallContext, ToolResult, run
from harness._errors import CassetteError, ProviderError, UsageError
from harness._secrets import (
    REDACTED,
    forget_secrets,
    known_secrets,
    register_secret,
    secret_forms,
)
from harness.loop import Model, ModelRequest, ModelResponse
from harness.messages import AssistantMessage, ToolCall, UserMessage
from harness.models import OpenAIChatModel, WireServer
from harness.testing import HarnessConfig, Scrubber, open_cassette, scrub_request
from harness.testing._report import junit_properties, report_text
from harness.testing._scrub import CassetteScrubber
from harness.tools import as_tool

SECRET_ALPHABET = st.one_of(
    st.characters(codec="utf-8", exclude_categories=["Cs"]),
    st.sampled_from(list("\\\"'%&=?#/:@+ {}[]<>$`~!;,.|^*")),
)
secrets_st = st.text(SECRET_ALPHABET, min_size=8, max_size=24).filter(
    # a "secret" holding the redaction marker itself would be found in every scrubbed text
    lambda s: s.strip() == s and "\x00" not in s and REDACTED not in s
)


@pytest.fixture(autouse=True)
def _clean_registry() -> Iterator[None]:
    before = known_secrets()
    yield
    forget_secrets(known_secrets() - before)


def header_safe(secret: str) -> str:
    """The secret as is when it can be a header value, else URL-quoted (still a form of it)."""
    ok = secret.isascii() and secret.isprintable() and secret.strip() == secret
    return secret if ok else urllib.parse.quote(secret, safe="")


def _strings(value: Any) -> Iterator[str]:
    if isinstance(value, str):
        yield value
    elif isinstance(value, bytes):
        yield value.decode("utf-8", "replace")
    elif isinstance(value, dict):
        for k, v in value.items():
            yield str(k)
            yield from _strings(v)
    elif isinstance(value, list):
        for v in value:
            yield from _strings(v)


def assert_no_leak(secret: str, *texts: str) -> None:
    forms = [f for f in secret_forms(secret) if len(f) >= 8]
    for text in texts:
        found = [f for f in forms if f in text]
        assert not found, f"secret form {found[0]!r} leaked into: {text[:300]!r}"


def assert_cassette_clean(path: Path, secret: str) -> None:
    raw = path.read_text(encoding="utf-8")
    assert_no_leak(secret, raw)
    data = yaml.safe_load(raw)
    assert_no_leak(secret, *_strings(data))  # also after YAML un-escaping


# -- the echo server: response headers and a gzip body that repeat the secret ------------------


class _Echo(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def log_message(self, format: str, *args: Any) -> None:
        return None

    def do_POST(self) -> None:
        length = int(self.headers.get("content-length") or 0)
        body = self.rfile.read(length)
        secret = self.headers.get("x-echo", "")
        payload = gzip.compress(json.dumps({"echo": body.decode("utf-8", "replace")}).encode())
        self.send_response(200)
        self.send_header("content-type", "application/json")
        self.send_header("content-encoding", "gzip")
        self.send_header("www-authenticate", f'Bearer realm="x", error="{secret}"')
        self.send_header("location", f"http://127.0.0.1/cb?token={secret}&page=1")
        self.send_header("set-cookie", f"sid={secret}")
        self.send_header("x-request-token", secret)
        self.send_header("x-plain-echo", secret)
        self.send_header("content-length", str(len(payload)))
        self.end_headers()
        self.wfile.write(payload)


@pytest.fixture(scope="module")
def echo_url() -> Iterator[str]:
    server = ThreadingHTTPServer(("127.0.0.1", 0), _Echo)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}"
    finally:
        server.shutdown()
        server.server_close()


class Echoing(Model):
    """Replies with the last user message (so a secret sent comes back in the response)."""

    __test__ = False
    name = "echoing"

    def request(self, request: ModelRequest) -> ModelResponse:
        last = [m for m in request.messages if isinstance(m, UserMessage)][-1]
        return ModelResponse(message=AssistantMessage(content=f"you said: {last.content}"))


@pytest.fixture(scope="module")
def wire() -> Iterator[WireServer]:
    with WireServer(Echoing()) as server:
        yield server


# -- the property over real HTTP -----------------------------------------------------------------

HEADER_NAMES = (
    "Authorization",
    "Proxy-Authorization",
    "X-Auth-Token",
    "X-Goog-Api-Key",
    "x-custom-key",
    "My-Token",
    "X-Tenant-Secret",
    "api-key",
    "X-API-KEY",
    "anthropic-organization-id",
    "OpenAI-Organization",
    "X-Whatever-Auth",
)
QUERY_NAMES = ("api_key", "key", "api-key", "access_token", "token", "sig")

HTTP_EXAMPLES = 40
SECRETS_PER_EXAMPLE = 5  # 250 random secrets recorded over loopback HTTP in all


def _unrelated(values: list[str]) -> bool:
    return all(
        a == b or (a not in b and a.upper() not in b.upper()) for a in values for b in values
    )


def _record_secrets(
    wire: WireServer, echo_url: str, secrets: list[str], header: str, query: str, folder: str
) -> Path:
    """Record the two exchanges of ``test_no_secret_reaches_the_cassette_over_http`` with
    ``secrets`` placed everywhere; the cassette's path."""
    key, by_name, configured, registered, field = secrets
    register_secret(registered)
    try:
        path = Path(folder) / "c.yaml"
        with open_cassette(path, record_mode="once", secrets=[configured]):
            userinfo = f"user:{urllib.parse.quote(key, safe='')}@"
            with openai.OpenAI(
                base_url=wire.url.replace("http://", f"http://{userinfo}"),
                api_key=header_safe(key),
                max_retries=0,
                default_headers={header: header_safe(by_name)},
                default_query={query: by_name},
            ) as client:
                client.chat.completions.create(  # the model echoes the message back
                    model="gpt-test",
                    messages=[{"role": "user", "content": f"{key} | {by_name} | {configured}"}],
                    user=configured,
                    metadata={"note": by_name},
                )
            with httpx2.Client() as http:
                http.post(
                    f"{echo_url}/v1/x?{query}={urllib.parse.quote(field, safe='')}&page=2",
                    headers={"x-echo": header_safe(registered), header: header_safe(key)},
                    content=json.dumps({"password": field, "note": f"<{field}>"}),
                )
        return path
    finally:
        forget_secrets([registered])


_BASELINE: list[str] = []
"""What such a cassette holds anyway (header names, ids, protocol words), recorded once."""


def _cassette_vocabulary(wire: WireServer, echo_url: str) -> str:
    if not _BASELINE:
        baseline = [f"Qz{i}#baseline#Wv{i}" for i in range(SECRETS_PER_EXAMPLE)]
        with tempfile.TemporaryDirectory() as folder:
            path = _record_secrets(
                wire, echo_url, baseline, HEADER_NAMES[0], QUERY_NAMES[0], folder
            )
            _BASELINE.append(path.read_text(encoding="utf-8"))
        _BASELINE.extend((*HEADER_NAMES, *QUERY_NAMES))
    return "\n".join(_BASELINE).lower()


@pytest.mark.slow
@settings(
    max_examples=HTTP_EXAMPLES,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture],
)
@given(
    secrets=st.lists(
        secrets_st, min_size=SECRETS_PER_EXAMPLE, max_size=SECRETS_PER_EXAMPLE, unique=True
    ).filter(_unrelated),
    header=st.sampled_from(HEADER_NAMES),
    query=st.sampled_from(QUERY_NAMES),
)
def test_no_secret_reaches_the_cassette_over_http(
    wire: WireServer, echo_url: str, secrets: list[str], header: str, query: str
) -> None:
    """Five secrets per example, each known another way and placed in several places:
    key (Authorization + userinfo), credential header + query parameter, a configured
    value (``secrets=``) in body fields, a registered value (as a preset would be) echoed
    in response headers, a credential JSON field echoed in a gzip response body."""
    vocabulary = _cassette_vocabulary(wire, echo_url)
    # a generated "secret" that is a piece of what the cassette holds anyway (X-REQUES of
    # x-request-id) would be reported as a leak that is not one
    assume(
        not any(f.lower() in vocabulary for s in secrets for f in secret_forms(s) if len(f) >= 8)
    )
    with tempfile.TemporaryDirectory() as folder:
        path = _record_secrets(wire, echo_url, secrets, header, query, folder)
        for secret in secrets:
            assert_cassette_clean(path, secret)
        assert "page=2" in path.read_text(encoding="utf-8")  # scrubbing is targeted


PURE_EXAMPLES = 600


_ENGINE_WORDS = "content-length content-type location x-plain logprob-token messages https://"


def _request(uri: str, body: bytes, headers: dict[str, str]) -> Any:
    from vcr.request import Request  # type: ignore[import-untyped]

    return Request("POST", uri, body, headers)


@pytest.mark.slow
@settings(max_examples=PURE_EXAMPLES, deadline=None)
@given(
    secret=secrets_st,
    header=st.sampled_from(HEADER_NAMES),
    query=st.sampled_from(QUERY_NAMES),
    gzipped=st.booleans(),
)
def test_engine_scrubs_a_secret_in_every_place(
    secret: str, header: str, query: str, gzipped: bool
) -> None:
    # a generated "secret" that is a piece of a name the test writes (CONTENT- of
    # content-length) would be reported as a leak that is not one
    vocabulary = " ".join((*HEADER_NAMES, *QUERY_NAMES, _ENGINE_WORDS)).lower()
    assume(not any(f.lower() in vocabulary for f in secret_forms(secret) if len(f) >= 8))
    engine = CassetteScrubber.build(secrets=[], environ={})
    quoted = urllib.parse.quote(secret, safe="")
    uri = f"https://u:{quoted}@api.test/v1/x?{query}={quoted}&page=2"
    body = json.dumps({"api_key": secret, "user": secret, "messages": [{"content": secret}]})
    request = engine.request(
        _request(uri, body.encode(), {header: header_safe(secret), "content-type": "json"})
    )
    payload = json.dumps({"echo": secret, "token": "logprob-token"}).encode()
    response = engine.response(
        {
            "status": {"code": 200, "message": f"OK {secret}"},
            "headers": {
                "Location": [f"https://api.test/cb?sig={quoted}"],
                "X-Plain": [header_safe(secret)],
                "content-length": ["1"],
            },
            "body": {"string": gzip.decompress(gzip.compress(payload)) if gzipped else payload},
        }
    )
    texts = [request.uri, *map(str, request.headers.values()), request.body.decode("utf-8")]
    texts += list(_strings(response))
    assert_no_leak(secret, *texts)
    assert "page=2" in request.uri
    assert json.loads(response["body"]["string"])["token"] == "logprob-token"


# -- harness-produced strings -----------------------------------------------------------------


def _shown(api_key: str, mode: str) -> str:
    """``api_key`` in the form ``mode`` names."""
    return {
        "plain": api_key,
        "upper": api_key.upper(),
        "quoted": urllib.parse.quote(api_key, safe=""),
        "json": json.dumps(api_key),
        "repr": repr(api_key),
        "bytes": repr(api_key.encode()),
    }[mode]


def _leaky(api_key: str, mode: str) -> str:
    """A tool that fails while showing its preset in a form chosen by ``mode``."""
    raise RuntimeError(f"upstream refused {_shown(api_key, mode)}")


def _leaky_later(api_key: str, mode: str, ctx: CallContext) -> ToolResult:
    """An async tool whose background work fails showing its preset (``completion.fail``)."""
    ctx.completion.fail(RuntimeError(f"upstream refused {_shown(api_key, mode)}"))
    return ToolResult.started()


def _shown_texts(secret: str, mode: str, background: bool = False) -> tuple[list[str], str]:
    """Every string the harness shows for a run whose tool leaks ``secret`` in ``mode``
    (raising, or failing in the ``background``), and the content of that failure."""
    function = _leaky_later if background else _leaky
    tool = as_tool(function, presets={"api_key": secret})
    call = ToolCall(id="c1", name=function.__name__, arguments=json.dumps({"mode": mode}))

    class Calls(Model):
        __test__ = False
        name = "calls"

        def __init__(self) -> None:
            self.n = 0

        def request(self, request: ModelRequest) -> ModelResponse:
            self.n += 1
            if self.n == 1:
                return ModelResponse(message=AssistantMessage(tool_calls=(call,)))
            return ModelResponse(message=AssistantMessage(content="done"))

    result = run(Calls(), "go", tools=[tool])
    texts = [
        json.dumps(result.trace.to_dict(), ensure_ascii=False),
        report_text([result.trace], []),
        *(str(v) for _, v in junit_properties([result.trace])),
        *(str(m) for m in result.messages),
    ]
    failure = result.trace.completions[0] if background else result.trace.calls[0]
    return texts, failure.content or ""


@functools.cache
def _vocabulary() -> str:
    """What the harness shows anyway (keys, labels, messages) for such a run. A generated
    "secret" found in it (``RETURN_D`` in ``return_direct``) would be reported as a leak
    that is not one, so such values are skipped."""
    shown = [
        _shown_texts("Vq8#baseline#Zx4", mode, background)[0]
        for mode in ("plain", "upper")
        for background in (False, True)
    ]
    forget_secrets()
    return "\n".join(text for texts in shown for text in texts)


@pytest.mark.slow
@settings(
    max_examples=40,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture],
)
@given(
    secret=secrets_st,
    mode=st.sampled_from(["plain", "upper", "quoted", "json", "repr", "bytes"]),
    background=st.booleans(),
)
def test_no_secret_in_any_string_the_harness_shows(
    secret: str, mode: str, background: bool
) -> None:
    vocabulary = _vocabulary()
    assume(not any(f in vocabulary for f in secret_forms(secret) if len(f) >= 8))
    texts, content = _shown_texts(secret, mode, background)
    assert_no_leak(secret, *texts)
    assert "[hidden]" in content


def test_provider_errors_hide_key_organization_project_and_query_keys(
    wire: WireServer,
) -> None:
    class Boom(Model):
        __test__ = False
        name = "boom"

        def request(self, request: ModelRequest) -> ModelResponse:
            raise RuntimeError(
                "denied sk-live-abcdef123456 org-secret-987654 proj-secret-123456 "
                "https://x.test/v1?key=query-key-1234567 api-key: hdr-secret-7654321"
            )

    with WireServer(Boom()) as server:
        client = openai.OpenAI(
            base_url=server.url,
            api_key="sk-live-abcdef123456",
            organization="org-secret-987654",
            project="proj-secret-123456",
            default_headers={"api-key": "hdr-secret-7654321"},
            max_retries=0,
        )
        model = OpenAIChatModel(client, "gpt-test")
        with pytest.raises(ProviderError) as info:
            run(model, "hi")
        client.close()
    message = str(info.value)
    assert "status=500" in message
    for secret in ("sk-live-abcdef", "org-secret", "proj-secret", "query-key", "hdr-secret"):
        assert secret not in message, message


def test_harness_config_repr_and_validation_errors_hide_secrets() -> None:
    config = HarnessConfig(openai_api_key="sk-config-secret-1234")
    assert "sk-config-secret" not in repr(config)
    with pytest.raises(UsageError) as info:
        HarnessConfig(record_mode="sk-config-secret-1234")
    assert "sk-config-secret" not in str(info.value) and "record_mode" in str(info.value)
    with pytest.raises(UsageError, match="filter_headers"):
        HarnessConfig(filter_headers=[3])  # type: ignore[list-item]


def test_environment_keys_are_scrubbed_at_record_time(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, echo_url: str
) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "sk-env-openai-0123456789")
    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-ant-env-0123456789")
    path = tmp_path / "env.yaml"
    with open_cassette(path, record_mode="once"), httpx2.Client() as http:
        http.post(
            f"{echo_url}/v1/x",
            content="key sk-env-openai-0123456789 and sk-ant-env-0123456789",
        )
    text = path.read_text()
    assert "sk-env-openai" not in text and "sk-ant-env" not in text


def test_declarative_filters_remove_or_replace(tmp_path: Path, echo_url: str) -> None:
    path = tmp_path / "f.yaml"
    with (
        open_cassette(
            path,
            record_mode="once",
            filter_headers=["X-Tenant", ("X-Region", "REGION")],
            filter_query_parameters=["account"],
            filter_post_data_parameters=[("customer", "CUSTOMER")],
        ),
        httpx2.Client() as http,
    ):
        http.post(
            f"{echo_url}/v1/x?account=acct-42&page=2",
            headers={
                "X-Tenant": "tenant-a",
                "X-Region": "eu-1",
                "content-type": "application/json",
            },
            content=json.dumps({"customer": "alice", "keep": "yes"}),
        )
    data = yaml.safe_load(path.read_text())["interactions"][0]["request"]
    headers = {k.lower(): v for k, v in data["headers"].items()}
    assert "x-tenant" not in headers and headers["x-region"] == ["REGION"]
    assert "acct-42" not in data["uri"] and "page=2" in data["uri"]
    assert json.loads(data["body"]) == {"customer": "CUSTOMER", "keep": "yes"}
    with (
        pytest.raises(UsageError, match="filter_query_parameters"),
        open_cassette(path, record_mode="once", filter_query_parameters=[("a", 1)]),
    ):
        pass


def test_form_bodies_and_default_scrub_request() -> None:
    request = _request(
        "https://api.test/token?page=1",
        b"grant_type=client_credentials&client_secret=cs-0123456789&scope=a",
        {"content-type": "application/x-www-form-urlencoded", "Authorization": "Basic abc"},
    )
    out = scrub_request(request)
    assert out.body == b"grant_type=client_credentials&scope=a"
    assert "Authorization" not in out.headers
    assert Scrubber().response is None


def test_replay_still_matches_after_scrubbing(tmp_path: Path, echo_url: str) -> None:
    path = tmp_path / "r.yaml"
    url = f"{echo_url}/v1/x?key=query-secret-123456&page=2"
    for mode in ("once", "none"):
        with open_cassette(path, record_mode=mode) as cassette, httpx2.Client() as http:
            reply = http.post(url, headers={"x-echo": "hdr-secret-123456"}, content=b"{}")
            assert reply.status_code == 200
        if mode == "none":
            assert cassette.play_count == 1
    assert "query-secret" not in path.read_text()


def test_cassette_error_is_a_usage_error() -> None:
    assert issubclass(CassetteError, UsageError)


def test_content_length_follows_the_scrubbed_body_and_only_a_changed_one() -> None:
    secret = "sk-content-length-secret-1234"
    engine = CassetteScrubber.build(secrets=[secret], environ={})
    body = json.dumps({"echo": secret}).encode()
    response = engine.response(
        {"headers": {"Content-Length": [str(len(body))]}, "body": {"string": body}}
    )
    scrubbed = response["body"]["string"]
    assert secret.encode() not in scrubbed and len(scrubbed) != len(body)
    assert response["headers"]["Content-Length"] == [str(len(scrubbed))]
    clean = b'{"echo": "nothing to hide"}'
    untouched = engine.response({"headers": {"Content-Length": ["999"]}, "body": {"string": clean}})
    assert untouched["body"]["string"] == clean
    assert untouched["headers"]["Content-Length"] == ["999"]  # an unchanged body keeps its header
