"""Sandbox bearer tokens standing in for Cognito: the admin token and a read-only viewer token."""

from __future__ import annotations

import hmac
import secrets
from dataclasses import dataclass
from pathlib import Path


@dataclass(frozen=True)
class Tokens:
    admin: str
    viewer: str

    @classmethod
    def make(cls, admin: str | None, viewer: str | None) -> Tokens:
        return cls(admin=admin or "ps_" + secrets.token_urlsafe(24),
                   viewer=viewer or "psv_" + secrets.token_urlsafe(24))

    def write(self, state_dir: Path) -> None:
        state_dir.mkdir(parents=True, exist_ok=True)
        for name, value in (("token", self.admin), ("viewer-token", self.viewer)):
            path = state_dir / name
            path.write_text(value + "\n")
            path.chmod(0o600)

    def claims(self, authorization: str | None) -> dict[str, str] | None:
        """Cognito-shaped claims for a bearer token, or None when it is missing or wrong."""
        if not authorization or not authorization.lower().startswith("bearer "):
            return None
        presented = authorization[7:].strip()
        if hmac.compare_digest(presented, self.admin):
            return {"sub": "sandbox-admin", "cognito:username": "sandbox-admin", "cognito:groups": "admin"}
        if hmac.compare_digest(presented, self.viewer):
            return {"sub": "sandbox-viewer", "cognito:username": "sandbox-viewer", "cognito:groups": "viewer"}
        return None
