"""Hostile cassette files (issue 27, section 6), built small: each is a few kilobytes on
disk and would cost gigabytes or a traceback if the loader trusted it."""

from __future__ import annotations

import base64
import json
import zlib
from typing import Any

import yaml

CHAT_URI = "https://api.openai.test/v1/chat/completions"
MESSAGES_URI = "https://api.anthropic.test/v1/messages"


def chat_request(**extra: Any) -> dict[str, Any]:
    return {
        "model": "gpt-test",
        "messages": [{"role": "user", "content": "hi"}],
        **extra,
    }


def chat_response(content: str = "hello") -> dict[str, Any]:
    return {
        "id": "chatcmpl-1",
        "object": "chat.completion",
        "model": "gpt-test",
        "choices": [
            {
                "index": 0,
                "finish_reason": "stop",
                "message": {"role": "assistant", "content": content},
            }
        ],
    }


def interaction(
    request_body: str,
    response_body: str | bytes,
    *,
    uri: str = CHAT_URI,
    request_headers: str = "{}",
    response_headers: str = "{content-type: [application/json]}",
) -> str:
    """One interaction in stock vcrpy YAML; the header texts are inserted as written."""
    if isinstance(response_body, bytes):
        body = f"!!binary |\n        {base64.b64encode(response_body).decode()}"
    else:
        body = json.dumps(response_body)  # a JSON string is a valid YAML scalar
    return (
        "- request:\n"
        "    method: POST\n"
        f"    uri: {uri}\n"
        f"    body: {json.dumps(request_body)}\n"
        f"    headers: {request_headers}\n"
        "  response:\n"
        "    status: {code: 200, message: OK}\n"
        f"    headers: {response_headers}\n"
        "    body:\n"
        f"      string: {body}\n"
    )


def cassette(*interactions: str) -> str:
    return "interactions:\n" + "".join(interactions) + "version: 1\n"


def plain() -> str:
    """A well-formed one-turn Chat Completions cassette."""
    return cassette(interaction(json.dumps(chat_request()), json.dumps(chat_response())))


def alias_bomb_in_headers(levels: int = 9, width: int = 10) -> str:
    """About 1 KB: a header list whose aliases expand to ``width ** levels`` strings."""
    anchors = ["a0: &a0 [" + ", ".join(["lol"] * width) + "]"]
    for level in range(1, levels):
        anchors.append(f"a{level}: &a{level} [" + ", ".join([f"*a{level - 1}"] * width) + "]")
    defs = "bombs:\n" + "".join(f"  {line}\n" for line in anchors)
    headers = f"{{x-bomb: *a{levels - 1}}}"
    body = json.dumps(chat_request())
    return defs + cassette(interaction(body, json.dumps(chat_response()), request_headers=headers))


def alias_bomb_in_parsed_body(levels: int = 9, width: int = 10) -> str:
    """The ``parsed_body`` variant: the request's decoded JSON is an alias bomb."""
    lines = ["bombs:", "  a0: &a0 [" + ", ".join(["lol"] * width) + "]"]
    for level in range(1, levels):
        lines.append(f"  a{level}: &a{level} [" + ", ".join([f"*a{level - 1}"] * width) + "]")
    return (
        "\n".join(lines)
        + "\ninteractions:\n"
        + "- request:\n"
        + "    method: POST\n"
        + f"    uri: {CHAT_URI}\n"
        + "    headers: {}\n"
        + "    parsed_body:\n"
        + "      model: gpt-test\n"
        + f"      messages: [{{role: user, content: *a{levels - 1}}}]\n"
        + "  response:\n"
        + "    status: {code: 200, message: OK}\n"
        + "    headers: {content-type: [application/json]}\n"
        + f"    parsed_body: {json.dumps(chat_response())}\n"
    )


def gzip_bomb(inflated_bytes: int) -> bytes:
    """A gzip member of ``inflated_bytes`` zeros, compressed a megabyte at a time (about
    a thousandth of the size; never ``inflated_bytes`` in memory)."""
    compressor = zlib.compressobj(9, zlib.DEFLATED, 16 + zlib.MAX_WBITS)
    chunk = bytes(1 << 20)
    parts = [compressor.compress(chunk) for _ in range(inflated_bytes >> 20)]
    parts.append(compressor.flush())
    return b"".join(parts)


def gzip_bomb_cassette(inflated_bytes: int) -> str:
    return cassette(
        interaction(
            json.dumps(chat_request()),
            gzip_bomb(inflated_bytes),
            response_headers="{content-type: [application/json], content-encoding: [gzip]}",
        )
    )


def deeply_nested_request(depth: int = 100_000) -> str:
    """A request body whose JSON nests ``depth`` lists deep."""
    return cassette(interaction("[" * depth + "]" * depth, json.dumps(chat_response())))


def anthropic_content_not_a_list() -> str:
    """An Anthropic Messages request whose ``content`` is the number 5."""
    body = {"model": "claude-test", "max_tokens": 10, "messages": [{"role": "user", "content": 5}]}
    answer = {
        "id": "msg_1",
        "type": "message",
        "role": "assistant",
        "model": "claude-test",
        "content": [{"type": "text", "text": "hi"}],
        "stop_reason": "end_turn",
        "usage": {"input_tokens": 1, "output_tokens": 1},
    }
    return cassette(interaction(json.dumps(body), json.dumps(answer), uri=MESSAGES_URI))


def terminal_escapes() -> str:
    """A recorded answer that would retitle the terminal and clear the screen."""
    text = "hello\x1b]0;pwned\x07\x1b[2Jworld\u202e"
    return cassette(interaction(json.dumps(chat_request()), json.dumps(chat_response(text))))


def check_yaml_is_small(text: str) -> str:
    """``text`` after making sure it is a small file (the point of a bomb)."""
    assert len(text.encode()) < 64 * 1024
    yaml.compose(text)  # well-formed YAML: the harm is only in what it expands to
    return text
