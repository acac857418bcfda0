"""AWS credentials never stay in a cassette: SigV4's ``Authorization``, the session
token, a presigned URL's query, and an access key id anywhere are what ``harness
cassette check`` reports, and what the recording scrubber removes."""

from __future__ import annotations

from typing import Any

from harness.cassettes import load_cassette
from harness.cassettes._leaks import credential_leaks
from harness.testing._scrub import CassetteScrubber

SIGV4 = (
    "AWS4-HMAC-SHA256 Credential=AKIAIOSFODNN7HARNESS/20260101/us-east-1/bedrock/aws4_request, "
    "SignedHeaders=content-type;host;x-amz-date;x-amz-security-token, Signature=0123abcd"
)
TOKEN = "FwoGZXIvYXdzEHarnessSessionTokenValue0123456789"
URI = "https://bedrock-runtime.us-east-1.amazonaws.com/model/m/converse"
PRESIGNED = f"{URI}?X-Amz-Credential=AKIAIOSFODNN7HARNESS%2F2026&X-Amz-Signature=ff00&X-Amz-Date=1"


def _cassette(uri: str, headers: dict[str, Any]) -> dict[str, Any]:
    return {
        "interactions": [
            {
                "request": {
                    "method": "POST",
                    "uri": uri,
                    "body": '{"messages": [{"role": "user", "content": [{"text": "hi"}]}]}',
                    "headers": headers,
                },
                "response": {
                    "status": {"code": 200, "message": "OK"},
                    "headers": {"Content-Type": ["application/json"]},
                    "body": {
                        "string": '{"output": {"message": {"role": "assistant", "content": []}}}'
                    },
                },
            }
        ],
        "version": 1,
    }


def test_check_reports_sigv4_headers_a_session_token_and_a_presigned_query() -> None:
    leaks = credential_leaks(
        load_cassette(
            _cassette(
                PRESIGNED,
                {
                    "Authorization": [SIGV4.encode()],  # botocore's values are bytes
                    "X-Amz-Security-Token": [TOKEN.encode()],
                    "X-Amz-Date": [b"20260101T000000Z"],
                },
            )
        )
    )
    text = " ".join(leaks)
    for name in ("authorization", "x-amz-security-token", "X-Amz-Credential", "X-Amz-Signature"):
        assert name.lower() in text.lower(), (name, leaks)
    assert "x-amz-date" not in text.lower()  # a timestamp, no credential


def test_the_recording_scrubber_removes_them() -> None:
    scrubber = CassetteScrubber.build(environ={})
    request = type(
        "Request",
        (),
        {
            "uri": PRESIGNED,
            "method": "POST",
            "body": b'{"messages": []}',
            "headers": {"Authorization": SIGV4, "X-Amz-Security-Token": TOKEN, "X-Amz-Date": "1"},
        },
    )()
    scrubbed = scrubber.request(request)
    kept = repr(vars(scrubbed)) if hasattr(scrubbed, "__dict__") else repr(scrubbed)
    for leaked in ("AWS4-HMAC-SHA256", TOKEN, "AKIAIOSFODNN7HARNESS", "Signature=0123abcd", "ff00"):
        assert leaked not in kept, leaked
