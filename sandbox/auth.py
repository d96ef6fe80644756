"""Sandbox bearer tokens standing in for Cognito: one per role (admin, operator, viewer)."""

from __future__ import annotations

import contextlib
import hmac
import os
import secrets
from dataclasses import dataclass
from pathlib import Path

ROLES = ("admin", "operator", "viewer")
FILES = {"admin": "token", "operator": "operator-token", "viewer": "viewer-token"}
_PREFIX = {"admin": "ps_", "operator": "pso_", "viewer": "psv_"}


def write_private(path: Path, text: str) -> None:
    """Write text to path readable by the owner only, with no moment at which it is wider.

    The content goes to a new file created 0600 (O_EXCL: never an existing file or a symlink),
    which then replaces path. An existing path (perhaps world-readable, perhaps held open by
    someone) is narrowed first and is never written to.
    """
    with contextlib.suppress(FileNotFoundError):
        os.chmod(path, 0o600, follow_symlinks=False)
    tmp = path.with_name(f".{path.name}.{secrets.token_hex(6)}.tmp")
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, 0o600)
    try:
        os.fchmod(fd, 0o600)  # the umask may have narrowed it further; 0600 exactly, before any byte
        os.write(fd, text.encode())
        os.fsync(fd)
    except BaseException:
        os.close(fd)
        tmp.unlink(missing_ok=True)
        raise
    os.close(fd)
    os.replace(tmp, path)


@dataclass(frozen=True)
class Tokens:
    admin: str
    operator: str
    viewer: str

    @classmethod
    def make(cls, admin: str | None = None, operator: str | None = None, viewer: str | None = None) -> Tokens:
        given = {"admin": admin, "operator": operator, "viewer": viewer}
        return cls(**{role: given[role] or _PREFIX[role] + secrets.token_urlsafe(24) for role in ROLES})

    def by_role(self) -> dict[str, str]:
        return {role: getattr(self, role) for role in ROLES}

    @staticmethod
    def paths(state_dir: Path) -> dict[str, Path]:
        """Where each role's token file is (or will be) under state_dir."""
        return {role: state_dir / FILES[role] for role in ROLES}

    def write(self, state_dir: Path) -> dict[str, Path]:
        """Write one file per role, mode 0600 from creation; returns role -> path."""
        state_dir.mkdir(mode=0o700, parents=True, exist_ok=True)
        paths = self.paths(state_dir)
        for role, token in self.by_role().items():
            write_private(paths[role], token + "\n")
        return paths

    def claims(self, authorization: str | None) -> dict[str, str] | None:
        """Cognito-shaped claims for a bearer token, or None when it is missing or wrong."""
        if not authorization or not authorization.lower().startswith("bearer "):
            return None
        presented = authorization[7:].strip().encode()
        role = None
        # Compare with every token (no early exit); if two roles share a token, the lesser role wins.
        for candidate, token in self.by_role().items():
            if hmac.compare_digest(presented, token.encode()):
                role = candidate
        if role is None:
            return None
        user = f"sandbox-{role}"
        return {"sub": user, "cognito:username": user, "cognito:groups": role}
