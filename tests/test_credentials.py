"""The one credential rule (harness._credentials): names in any style, key shapes, placeholders."""

from __future__ import annotations

import contextlib
import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, strategies as st

from harness._credentials import (
    credential_shapes,
    credential_words,
    is_credential_field,
    is_credential_header,
    is_credential_name,
    is_credential_param,
    is_placeholder,
)
from harness.cassettes import codec_for, load_cassette

ISSUE_NAMES = (
    "aws_secret_access_key",
    "secret_key",
    "secretKey",
    "auth",
    "passphrase",
    "database_url",
    "ssh_key",
    "signing_key",
    "session_id",
)
MORE_NAMES = (
    "api_key",
    "apikey",
    "x-api-key",
    "token",
    "access_token",
    "refresh_token",
    "client_secret",
    "password",
    "private_key",
    "aws_access_key_id",
    "authorization",
    "cookie",
    "connection_string",
    "redis_url",
    "github_token",
    "x-custom-key",
    "key",
    "dsn",
)
NOT_CREDENTIALS = (
    "max_tokens",
    "prompt_tokens",
    "completion_tokens",
    "budget_tokens",
    "prompt_cache_key",
    "idempotency_key",
    "public_key",
    "token_type",
    "tokenizer",
    "author",
    "user_id",
    "model",
    "content",
    "callback_url",
    "harness_agent_depth",
    "keyboard",
)


def _styles(name: str) -> list[str]:
    """``name`` in snake, SCREAMING, kebab, Train-Case, camelCase and PascalCase."""
    words = credential_words(name)
    camel = words[0] + "".join(w.capitalize() for w in words[1:])
    return [
        "_".join(words),
        "_".join(words).upper(),
        "-".join(words),
        "-".join(w.capitalize() for w in words),
        camel,
        camel[:1].upper() + camel[1:],
    ]


@pytest.mark.parametrize("name", ISSUE_NAMES + MORE_NAMES)
def test_credential_names_in_every_style(name: str) -> None:
    for styled in _styles(name):
        assert is_credential_name(styled), styled
        assert is_credential_field(styled), styled
        assert is_credential_param(styled), styled
        assert is_credential_header(styled), styled


@pytest.mark.parametrize("name", NOT_CREDENTIALS)
def test_names_that_are_no_credential(name: str) -> None:
    for styled in _styles(name):
        assert not is_credential_name(styled), styled


def test_header_and_parameter_additions() -> None:
    assert is_credential_header("OpenAI-Organization") and is_credential_header("openai-project")
    assert not is_credential_field("organization")
    assert is_credential_param("code") and not is_credential_field("code")
    for name in ("x-ratelimit-remaining-tokens", "content-type", "accept", "x-request-id"):
        assert not is_credential_header(name), name


def test_camel_case_and_acronyms_split_into_words() -> None:
    assert credential_words("awsSecretAccessKey") == ("aws", "secret", "access", "key")
    assert credential_words("X-API-KEY") == ("x", "api", "key")
    assert credential_words("APIKey2") == ("api", "key", "2")


_WORDS = st.sampled_from(["user", "cache", "id", "name", "value", "max", "total", "page", "x"])


@given(
    st.lists(_WORDS, max_size=3),
    st.sampled_from([n for n in ISSUE_NAMES + MORE_NAMES if n != "key"]),
)
def test_property_a_credential_stays_one_behind_any_prefix(prefix: list[str], name: str) -> None:
    """``my_db_password`` and ``user_api_key`` are credentials: words before one never
    make it innocent (words after may: ``token_type``; a bare ``key`` is the exception,
    ``cache_key`` is no credential)."""
    styled = "_".join([*prefix, *credential_words(name)])
    assert is_credential_name(styled), styled


def _keys(value: Any) -> Iterator[str]:
    if isinstance(value, dict):
        for key, item in value.items():
            yield str(key)
            yield from _keys(item)
    elif isinstance(value, list):
        for item in value:
            yield from _keys(item)


def _bodies(text: str) -> Iterator[Any]:
    """A body as JSON, or each JSON ``data:`` line of a server-sent event stream."""
    try:
        yield json.loads(text)
    except ValueError:
        for line in text.splitlines():
            if line.startswith("data:"):
                with contextlib.suppress(ValueError):
                    yield json.loads(line[5:])


def test_corpus_request_and_response_fields_are_no_credentials() -> None:
    """No JSON field name of the real recorded LLM traffic is taken for a credential
    (Gemini's ``thoughtSignature`` included)
    but Anthropic's thinking ``signature`` (scrubbed by name since before this rule):
    scrubbing the others would break replay."""
    here = Path(__file__).parent.parent
    files = [
        *(here / "cassettes").rglob("*.yaml"),
        *(here.parent / "shared" / "corpus").rglob("*.yaml"),
    ]
    if not files:
        pytest.skip("no recorded cassettes in cassettes/ nor ../shared/corpus")
    names: set[str] = set()
    for path in files:
        for interaction in load_cassette(path).interactions:
            if codec_for(interaction.method, interaction.path) is None:
                continue  # an OAuth token exchange holds credentials, rightly scrubbed
            for exchange in (interaction.request, interaction.response):
                for body in _bodies(exchange.text):
                    names.update(_keys(body))
    assert len(names) > 100  # the walk found the traffic
    assert {n for n in names if is_credential_field(n)} <= {"signature"}


@pytest.mark.parametrize(
    "text",
    [
        "sk-proj-" + "a1B2" * 6,
        "sk-ant-api03-" + "x9Y8" * 6,
        "AIza" + "b" * 35,
        "ghp_" + "c" * 36,
        "github_pat_" + "d" * 50,
        "AKIAABCDEFGHIJKLMNOP",
        "xoxb-1234567890-abcdef",
    ],
)
def test_key_shapes_are_found_in_text(text: str) -> None:
    assert credential_shapes(f"before {text} after") == [text]
    assert credential_shapes(json.dumps({"note": text})) == [text]


def test_an_aws_secret_next_to_its_name_is_found() -> None:
    secret = "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY"
    assert credential_shapes(f'aws_secret_access_key = "{secret}"') == [secret]
    assert credential_shapes(f"AWS_SECRET_ACCESS_KEY={secret}") == [secret]
    assert credential_shapes(f"checksum={secret}") == []


@pytest.mark.parametrize(
    "value",
    [
        "",
        "[hidden]",
        "<API_KEY>",
        "****",
        "xxxx",
        "REDACTED",
        "Bearer [hidden]",
        "test-key",
        "sk-test-0123456789abcdefghij",
        "ANTHROPIC-ORGANIZATION-ID-XXX",
        "fake-token",
    ],
)
def test_placeholders(value: str) -> None:
    assert is_placeholder(value)
    assert credential_shapes(value) == []


def test_real_looking_values_are_no_placeholders() -> None:
    for value in ("sk-proj-abcdefghijklmnopqrstuvwx", "b320df16-c763-4455-b901", "hunter2!"):
        assert not is_placeholder(value), value


def test_gemini_keys_are_credentials_and_thought_signatures_are_not() -> None:
    """``x-goog-api-key`` and ``?key=`` are scrubbed; Gemini's ``thoughtSignature`` (the
    model's own state, sent back unchanged) is not, in either case."""
    assert is_credential_header("x-goog-api-key") and is_credential_header("X-Goog-Api-Key")
    assert is_credential_param("key")
    assert not is_credential_field("thoughtSignature")
    assert not is_credential_field("thought_signature")
    assert is_credential_field("signature") and is_credential_field("apiKey")
