"""The secret registry and value scrubbing (harness._secrets), used by every layer."""

from __future__ import annotations

import json
import urllib.parse
import warnings
from collections.abc import Iterator

import pytest
from hypothesis import HealthCheck, given, settings, strategies as st

from harness import _secrets
from harness._secrets import (
    REDACTED,
    Secret,
    ShortSecretWarning,
    forget_secrets,
    hidden_values,
    is_credential_field,
    is_credential_header,
    is_credential_param,
    known_secrets,
    register_secret,
    scrub_bytes,
    scrub_message,
    scrub_text,
    scrub_url,
    secret_forms,
)

# Random secrets: punctuation, escapes, quotes, percent signs, unicode (no surrogates).
SECRET_ALPHABET = st.one_of(
    st.characters(codec="utf-8", exclude_categories=["Cs"]),
    st.sampled_from(list("\\\"'%&=?#/:@+ \t\n{}[]<>$`~!;,.|^*")),
)
secrets_st = st.text(SECRET_ALPHABET, min_size=8, max_size=32)


@pytest.fixture(autouse=True)
def _clean_registry() -> Iterator[None]:
    before = known_secrets()
    yield
    forget_secrets(known_secrets() - before)


def leaks(secret: str, text: str) -> list[str]:
    """The forms of ``secret`` found in ``text``."""
    return sorted(f for f in secret_forms(secret) if f and f in text)


def shown_forms(secret: str) -> list[str]:
    encoded = secret.encode("utf-8")
    return [
        secret,
        secret.upper(),
        urllib.parse.quote(secret, safe=""),
        urllib.parse.quote_plus(secret),
        json.dumps(secret),
        json.dumps(secret, ensure_ascii=False),
        repr(secret),
        repr(encoded),
        str(encoded),
        json.dumps({"k": secret}),
    ]


@settings(max_examples=600, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(secret=secrets_st, prefix=st.text(max_size=10), suffix=st.text(max_size=10))
def test_every_shown_form_of_a_secret_is_scrubbed(secret: str, prefix: str, suffix: str) -> None:
    for form in shown_forms(secret):
        text = f"{prefix}error: {form} {suffix}"
        out = scrub_text(text, [secret])
        assert secret not in out
        assert form not in out
        assert not leaks(secret, out), (form, out)


@settings(max_examples=200, deadline=None)
@given(secret=secrets_st)
def test_bytes_are_scrubbed_as_text_or_bytewise(secret: str) -> None:
    data = b"\xff\xfe" + secret.encode("utf-8") + b"!"
    assert secret.encode("utf-8") not in scrub_bytes(data, [secret])
    text = ("ok " + secret).encode("utf-8")
    assert scrub_bytes(text, [secret]) == f"ok {REDACTED}".encode() or secret in REDACTED


def test_scrub_text_keeps_text_without_secrets_and_replaces_with_the_marker() -> None:
    assert scrub_text("plain", ["sk-abcdefgh"]) == "plain"
    assert scrub_text("key=sk-abcdefgh.", ["sk-abcdefgh"]) == f"key={REDACTED}."
    assert scrub_text("", ["sk-abcdefgh"]) == ""
    # a secret that overlaps the marker still disappears
    assert "[hidden]" not in scrub_text("x [hidden] y", ["[hidden]"])


def test_registry_registers_long_values_and_warns_once_for_short_strings() -> None:
    forget_secrets()
    assert register_secret("sk-0123456789") is True
    assert "sk-0123456789" in known_secrets()
    assert scrub_text("leak sk-0123456789") == f"leak {REDACTED}"
    with pytest.warns(ShortSecretWarning, match="7 characters long"):
        assert register_secret("abcdefg", source="preset 'k'") is False
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert register_secret("abcdefg") is False  # warned once already
        assert register_secret("tiny", warn=False) is False
        assert register_secret(10) is False  # short non-strings are not secrets
        assert register_secret(None) is False
        assert register_secret(True) is False
        assert register_secret("") is False
    assert register_secret(1234567890123) is True  # non-strings by their str
    assert scrub_text("id 1234567890123") == f"id {REDACTED}"


@pytest.mark.parametrize("dummy", ["sk-test", "test", "EMPTY", "ollama", "sk-fake", "XXX"])
def test_well_known_dummy_keys_do_not_warn(dummy: str) -> None:
    """``HarnessConfig(openai_api_key="sk-test")`` must not fail a test run under
    ``filterwarnings = error``: a dummy key is no secret."""
    forget_secrets()
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert register_secret(dummy, source="HarnessConfig(openai_api_key=...)") is False
    with pytest.warns(ShortSecretWarning, match="6 characters long"):
        register_secret("sk-pw1", source="a real (short) password")  # not a dummy: warns


def test_secret_marker_hides_its_repr_and_registers() -> None:
    token = Secret("tok-abcdefghijkl")
    assert token == "tok-abcdefghijkl" and isinstance(token, str)
    assert "abcdef" not in repr(token) and "abcdef" not in repr({"t": token})
    assert "tok-abcdefghijkl" in known_secrets()


def test_credential_name_rules() -> None:
    for name in (
        "Authorization",
        "PROXY-AUTHORIZATION",
        "x-auth-token",
        "X-Goog-Api-Key",
        "api-key",
        "x-api-key",
        "X-Custom-Key",
        "My-Secret",
        "Cookie",
        "set-cookie",
        "WWW-Authenticate",
        "OpenAI-Organization",
        "openai-project",
        "anthropic-organization-id",
    ):
        assert is_credential_header(name), name
    for name in ("content-type", "x-ratelimit-remaining-tokens", "accept", "user-agent", "date"):
        assert not is_credential_header(name), name
    for name in ("api-key", "api_key", "key", "access_token", "token", "sig", "X-Amz-Signature"):
        assert is_credential_param(name), name
    for name in ("model", "page", "max_tokens", "author", "limit"):
        assert not is_credential_param(name), name
    for name in (
        "api_key",
        "token",
        "client_secret",
        "password",
        "refresh_token",
        "openai_api_key",
    ):
        assert is_credential_field(name), name
    for name in ("max_tokens", "prompt_tokens", "model", "user", "content", "tokenizer"):
        assert not is_credential_field(name), name


def test_scrub_url_removes_userinfo_and_credential_parameters() -> None:
    url, found = scrub_url("https://user:pa%3Ass-word-1@api.test/v1/x?key=K-123456789&page=2")
    assert url == "https://api.test/v1/x?page=2"
    assert {"pa:ss-word-1", "K-123456789"} <= found
    assert scrub_url("not a url")[0] == "not a url"


def test_scrub_message_cleans_urls_inside_text() -> None:
    text = "GET https://api.test/v1?api_key=abcdefgh12345 failed; abcdefgh12345 was sent"
    out = scrub_message(text)
    assert "abcdefgh12345" not in out and "https://api.test/v1" in out
    assert scrub_message("no url here") == "no url here"


def test_forms_filter_keeps_forms_no_shorter_than_the_secret() -> None:
    assert all(len(f) >= 8 for f in secret_forms("abcdefghij"))
    assert _secrets.MIN_SECRET_LENGTH == 8


@pytest.mark.parametrize(
    "secret",
    ["pässwörd-Secret-7", 'quote"d-Secret\\value-9'],
    ids=["non-ascii", "json-escaped-chars"],
)
def test_a_json_escaped_secret_is_replaced_whole_once_and_twice_escaped(secret: str) -> None:
    # ensure_ascii escapes (\u00e4) and JSON inside JSON (\\\" ...) are forms of
    # their own: the whole form goes, not a prefix with the last character left over.
    marker = _secrets.scrub_text(secret, [secret])
    assert secret not in marker
    once = json.dumps({"key": secret})
    escaped = json.dumps(secret)[1:-1]
    assert _secrets.scrub_text(once, [secret]) == once.replace(escaped, marker)
    twice = json.dumps({"body": once})
    escaped_twice = json.dumps(escaped)[1:-1]
    assert escaped_twice in twice
    assert _secrets.scrub_text(twice, [secret]) == twice.replace(escaped_twice, marker)


def test_hidden_values_are_the_texts_of_four_characters_or_more() -> None:
    """Preset and call-context values hidden from tool errors (``Tool.error_result``,
    ``completion.fail``): by their ``str``, without ``None``, booleans or short texts."""
    hidden = hidden_values(["abc", "abcd", None, True, 12345, 123, "abcd"])
    assert sorted(hidden) == ["12345", "abcd"]
    assert scrub_text("abc abcd 12345 123 True", hidden) == f"abc {REDACTED} {REDACTED} 123 True"


# -- which values kept from the schema are secrets (issue 35, trap 10) -------------------


@pytest.mark.parametrize(
    ("name", "value", "secret"),
    [
        ("api_key", "anything-at-all", True),  # a credential name
        ("db_password", "hunter2-long", True),
        ("token", 12345678, True),  # by name, whatever the type
        ("config", "sk-proj-abcdefghijklmnopqrstuvwx", True),  # a provider key's shape
        ("url", "postgres://app:pw-s3cret@db.invalid/main", True),  # a URL with a password
        ("chat_id", Secret("chat-4242-marked"), True),  # the caller marks it
        (None, "ghp_" + "a" * 36, True),
        ("chat_id", "chat-4242", False),  # an id: kept from the schema, not a secret
        ("user_id", "user123", False),
        ("region", "eu-west-3-zone", False),
        ("url", "postgres://db.invalid/main", False),  # a URL without a password
        ("api_key", None, False),
        ("token", True, False),
    ],
)
def test_a_value_kept_from_the_schema_is_a_secret_only_by_name_shape_or_marking(
    name: str | None, value: object, secret: bool
) -> None:
    from harness._secrets import is_secret_value

    assert is_secret_value(name, value) is secret
