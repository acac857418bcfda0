"""Replaying recorded Gemini calls through ``google-genai`` (vcrpy answers): the SDK
client pointed at the recorded host and path prefix, and the adapter over it.

A recorded body the SDK cannot take as arguments (enums as integers, a streamed JSON
array the SDK never asks for: it always streams with ``alt=sse``) is replayed through
httpx2 as it was sent, and its answer decoded by the codec.
"""

from __future__ import annotations

import json
from typing import Any
from urllib.parse import urlsplit

import httpx2
import pydantic
import pytest
from google import genai
from google.genai import errors, types

from harness.formats import Codec
from harness.formats.gemini_generate import route_of
from harness.loop import ModelRequest, ModelResponse
from harness.models import GeminiModel
from harness.models._gemini._model import sdk_arguments


def is_gemini(path: str) -> bool:
    return route_of(path) is not None


def client_for(uri: str) -> genai.Client:
    """A client whose calls go to the recorded host and path prefix."""
    parts = urlsplit(uri)
    prefix = parts.path[1 : parts.path.index("/models/") if "/models/" in parts.path else None]
    return genai.Client(
        api_key="harness-replay",
        http_options=types.HttpOptions(
            base_url=f"{parts.scheme}://{parts.netloc}/",
            api_version=prefix,
            retry_options=types.HttpRetryOptions(attempts=1),
        ),
    )


def _sdk_takes(interaction: Any) -> bool:
    route = route_of(interaction.uri)
    return (
        route is not None
        and (not route.stream or route.sse)
        and "enum-encoding" not in (interaction.uri)
    )


def _expected(interaction: Any, codec: Codec) -> ModelResponse:
    return codec.decode_response(
        interaction.status, interaction.response.headers, interaction.response.body
    )


def replay_sdk(interaction: Any, codec: Codec) -> None:
    """One recorded call made again, through the SDK where it takes it."""
    route = route_of(interaction.uri)
    assert route is not None
    body = interaction.request.json()
    if not _sdk_takes(interaction):
        with httpx2.Client() as http:
            reply = http.post(interaction.uri, content=json.dumps(body).encode())
        assert reply.status_code == interaction.status
        if interaction.status < 400:
            assert codec.decode_response(reply.status_code, dict(reply.headers), reply.content) == (
                _expected(interaction, codec)
            )
        return
    arguments = sdk_arguments({**body, "model": route.model})
    client = client_for(interaction.uri)  # kept: a client closes its connections when freed
    models = client.models
    if interaction.status >= 400:
        with pytest.raises(errors.APIError) as info:
            models.generate_content(**arguments)
        assert info.value.code == interaction.status
        return
    if route.stream:
        assert codec.decode_events(list(models.generate_content_stream(**arguments))) == (
            _expected(interaction, codec)
        )
    else:
        assert codec.decode_json(models.generate_content(**arguments)) == _expected(
            interaction, codec
        )


def replay_adapter(interaction: Any, codec: Codec, request: ModelRequest) -> bool:
    """The recorded call made by ``GeminiModel``; False when the SDK cannot make it."""
    route = route_of(interaction.uri)
    if route is None or not _sdk_takes(interaction):
        return False
    model = GeminiModel(client_for(interaction.uri), route.model, stream=route.stream)
    try:
        got = model.request(request)
    except pydantic.ValidationError:  # a recorded schema the SDK's types refuse
        return False
    assert got == _expected(interaction, codec)
    return True
