"""The MCP Lambda finds the REST API from its own invoking event and forwards the caller's token."""

from __future__ import annotations

from typing import Any

import pytest

from mcp_gateway import lambda_handler

EVENT = {
    "httpMethod": "POST",
    "path": "/mcp",
    "headers": {"Authorization": "Bearer caller-token", "Content-Type": "application/json"},
    "body": "{}",
    "requestContext": {"domainName": "abc123.execute-api.us-west-2.amazonaws.com", "stage": "prod"},
}


def test_base_url_is_derived_from_the_invoking_stage(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("PODSTART_API_URL", raising=False)
    assert lambda_handler.api_url(EVENT) == "https://abc123.execute-api.us-west-2.amazonaws.com/prod"


def test_env_overrides_the_event(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PODSTART_API_URL", "https://api.example.com")
    assert lambda_handler.api_url(EVENT) == "https://api.example.com"


def test_no_env_and_no_request_context_is_an_error(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("PODSTART_API_URL", raising=False)
    with pytest.raises(RuntimeError, match="PODSTART_API_URL"):
        lambda_handler.api_url({"httpMethod": "POST", "path": "/mcp"})


def test_handler_serves_the_derived_api_with_the_callers_authorization(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("PODSTART_API_URL", raising=False)
    monkeypatch.delenv("PODSTART_MCP_READ_ONLY", raising=False)
    seen: dict[str, Any] = {}

    async def app(scope: dict[str, Any], receive: Any, send: Any) -> None:
        seen["headers"] = dict(scope["headers"])
        seen["body"] = (await receive())["body"]
        await send({"type": "http.response.start", "status": 200, "headers": [(b"content-type", b"application/json")]})
        await send({"type": "http.response.body", "body": b"{}"})

    key = ("https://abc123.execute-api.us-west-2.amazonaws.com/prod", False)
    monkeypatch.setattr(lambda_handler, "_apps", {key: app})  # only the derived URL has an app
    response = lambda_handler.handler(EVENT, None)
    assert response["statusCode"] == 200
    assert seen["headers"][b"authorization"] == b"Bearer caller-token"
    assert seen["body"] == b"{}"


def test_handler_gives_tool_calls_the_invocations_deadline(monkeypatch: pytest.MonkeyPatch) -> None:
    # Given a Lambda invocation with 29 s left (API Gateway's integration timeout)
    import time

    from mcp_gateway import server

    monkeypatch.delenv("PODSTART_API_URL", raising=False)
    seen: dict[str, Any] = {}

    async def app(scope: dict[str, Any], receive: Any, send: Any) -> None:
        seen["answer_by"] = server.answer_by.get()
        await send({"type": "http.response.start", "status": 200, "headers": []})
        await send({"type": "http.response.body", "body": b"{}"})

    class Context:
        def get_remaining_time_in_millis(self) -> int:
            return 29_000

    key = ("https://abc123.execute-api.us-west-2.amazonaws.com/prod", False)
    monkeypatch.setattr(lambda_handler, "_apps", {key: app})
    before = time.monotonic()
    lambda_handler.handler(EVENT, Context())

    # Then a waiting tool call inside it knows when the answer must be out, and the deadline ends with it
    assert before + 28.5 <= seen["answer_by"] <= time.monotonic() + 29
    assert server.answer_by.get() is None
