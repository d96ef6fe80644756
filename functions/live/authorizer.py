"""$connect authorizer of the live WebSocket API: a browser cannot set an Authorization header on a WebSocket,
so it offers the sub-protocols ["podstart", <Cognito access token>]; this checks that token (signature
against the user pool's JWKS, issuer, expiry, token_use, app client) and allows the connection with the
caller's sub and groups, or denies it."""

from __future__ import annotations

from functools import lru_cache
from typing import Any

import jwt
from aws_lambda_powertools.utilities.typing import LambdaContext

from functions.observability import logger
from functions.settings import live_settings


class Denied(Exception):
    pass


@lru_cache(maxsize=1)
def _jwks() -> jwt.PyJWKClient:
    return jwt.PyJWKClient(f"{issuer()}/.well-known/jwks.json", cache_keys=True, lifespan=3600)


def issuer() -> str:
    s = live_settings()
    return f"https://cognito-idp.{s.aws_region}.amazonaws.com/{s.user_pool_id}"


def token_of(headers: dict[str, str]) -> str:
    offered = next((v for k, v in headers.items() if k.lower() == "sec-websocket-protocol"), "")
    parts = [p.strip() for p in offered.split(",")]
    if len(parts) != 2 or parts[0] != "podstart" or not parts[1]:
        raise Denied("offer the sub-protocols podstart and the access token")
    return parts[1]


def verify(token: str, keys: Any = None) -> dict[str, Any]:
    """The token's claims when it is a current access token of this pool for one of PodStart's app clients."""
    s = live_settings()
    try:
        key = (keys or _jwks()).get_signing_key_from_jwt(token).key
        claims: dict[str, Any] = jwt.decode(token, key, algorithms=["RS256"], issuer=issuer(),
                                            options={"require": ["exp", "iss", "sub", "token_use"]})
    except jwt.PyJWTError as exc:
        raise Denied(f"token refused: {exc}") from None
    if claims.get("token_use") != "access":
        raise Denied("an access token is needed")
    allowed = {c for c in s.user_pool_client_ids.split(",") if c}
    if claims.get("client_id") not in allowed:
        raise Denied("the token is for another app client")
    return claims


def handler(event: dict[str, Any], context: LambdaContext) -> dict[str, Any]:
    try:
        claims = verify(token_of(event.get("headers") or {}))
    except Denied as exc:
        logger.info("live connection denied", reason=str(exc))  # never the token
        raise Exception("Unauthorized") from None  # API Gateway answers 401
    groups = claims.get("cognito:groups") or []
    return {
        "principalId": str(claims["sub"]),
        "policyDocument": {"Version": "2012-10-17", "Statement": [
            {"Action": "execute-api:Invoke", "Effect": "Allow", "Resource": event["methodArn"]}]},
        "context": {"sub": str(claims["sub"]), "username": str(claims.get("username") or claims["sub"]),
                    "groups": ",".join(groups) if isinstance(groups, list) else str(groups)},
    }
