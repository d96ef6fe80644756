"""HTTP request -> API Gateway REST proxy event -> the same handler the cloud runs -> HTTP response."""

from __future__ import annotations

import base64
import uuid
from typing import Any


def to_event(method: str, path: str, headers: list[tuple[str, str]], query: list[tuple[str, str]],
             body: bytes, claims: dict[str, str] | None, source_ip: str) -> dict[str, Any]:
    single_h: dict[str, str] = {}
    multi_h: dict[str, list[str]] = {}
    for k, v in headers:
        single_h[k] = v
        multi_h.setdefault(k, []).append(v)
    single_q: dict[str, str] = {}
    multi_q: dict[str, list[str]] = {}
    for k, v in query:
        single_q[k] = v
        multi_q.setdefault(k, []).append(v)
    try:
        text: str | None = body.decode() if body else None
        b64 = False
    except UnicodeDecodeError:
        text, b64 = base64.b64encode(body).decode(), True
    request_id = str(uuid.uuid4())
    return {
        "resource": "/v1/{proxy+}",
        "path": path,
        "httpMethod": method,
        "headers": single_h or None,
        "multiValueHeaders": multi_h or None,
        "queryStringParameters": single_q or None,
        "multiValueQueryStringParameters": multi_q or None,
        "pathParameters": {"proxy": path.removeprefix("/v1/")},
        "stageVariables": None,
        "requestContext": {
            "resourcePath": "/v1/{proxy+}", "httpMethod": method, "path": f"/prod{path}", "stage": "prod",
            "requestId": request_id, "accountId": "123456789012", "apiId": "sandbox",
            "identity": {"sourceIp": source_ip},
            "authorizer": {"claims": claims} if claims else None,
        },
        "body": text,
        "isBase64Encoded": b64,
    }


def from_result(result: dict[str, Any]) -> tuple[int, dict[str, str], bytes]:
    headers: dict[str, str] = {k: str(v) for k, v in (result.get("headers") or {}).items()}
    for k, vs in (result.get("multiValueHeaders") or {}).items():
        headers[k] = ", ".join(str(v) for v in vs)
    raw = result.get("body") or ""
    body = base64.b64decode(raw) if result.get("isBase64Encoded") else str(raw).encode()
    return int(result.get("statusCode", 500)), headers, body
