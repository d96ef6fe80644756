"""Who is calling, and what their role allows. The same check serves every face.

Roles come from Cognito groups for user tokens. A write scope counts only for PodStart's machine
client (client credentials: a token with no user), and only as the exact `podstart/write` scope of
PodStart's resource server: a browser user cannot become an operator by asking for a scope.
"""

from __future__ import annotations

from enum import IntEnum

from pydantic import BaseModel, ConfigDict

from functions.domain.errors import Forbidden

WRITE_SCOPE = "podstart/write"


class Role(IntEnum):
    viewer = 1
    operator = 2
    admin = 3


def _groups(raw: object) -> list[str]:
    if isinstance(raw, list):
        return [str(g) for g in raw]
    return [g.strip() for g in str(raw or "").strip("[]").replace(",", " ").split() if g.strip()]


class Principal(BaseModel):
    model_config = ConfigDict(frozen=True)

    sub: str
    name: str
    role: Role

    @classmethod
    def from_claims(cls, claims: dict[str, object]) -> Principal:
        """Cognito (or sandbox) JWT claims -> Principal; the highest group wins, no group = viewer."""
        roles = [Role[g] for g in _groups(claims.get("cognito:groups")) if g in Role.__members__]
        has_user = bool(claims.get("username") or claims.get("cognito:username") or claims.get("email"))
        sub = str(claims.get("sub") or claims.get("client_id") or "anonymous")
        name = str(claims.get("cognito:username") or claims.get("username") or claims.get("client_id") or sub)
        machine = claims.get("token_use") == "access" and not has_user and bool(claims.get("client_id"))
        if machine and WRITE_SCOPE in str(claims.get("scope") or "").split():
            roles.append(Role.operator)
        return cls(sub=sub, name=name, role=max(roles, default=Role.viewer))

    def require(self, role: Role) -> None:
        if self.role < role:
            raise Forbidden(f"this action needs the {role.name} role; you are {self.role.name}")
