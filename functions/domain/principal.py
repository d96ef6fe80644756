"""Who is calling, and what their role allows. The same check serves every face."""

from __future__ import annotations

from enum import IntEnum

from pydantic import BaseModel, ConfigDict

from functions.domain.errors import Forbidden


class Role(IntEnum):
    viewer = 1
    operator = 2
    admin = 3


class Principal(BaseModel):
    model_config = ConfigDict(frozen=True)

    sub: str
    name: str
    role: Role

    @classmethod
    def from_claims(cls, claims: dict[str, object]) -> Principal:
        """Cognito (or sandbox) JWT claims -> Principal; the highest group wins, no group = viewer."""
        groups_raw = claims.get("cognito:groups") or ""
        if isinstance(groups_raw, list):
            groups = [str(g) for g in groups_raw]
        else:
            groups = [g.strip() for g in str(groups_raw).strip("[]").replace(",", " ").split() if g.strip()]
        roles = [Role[g] for g in groups if g in Role.__members__]
        sub = str(claims.get("sub") or claims.get("client_id") or "anonymous")
        name = str(claims.get("cognito:username") or claims.get("username") or claims.get("client_id") or sub)
        # Machine clients (client credentials) carry scopes instead of groups.
        scopes = str(claims.get("scope") or "").split()
        if any(s.endswith("/write") for s in scopes):
            roles.append(Role.operator)
        return cls(sub=sub, name=name, role=max(roles, default=Role.viewer))

    def require(self, role: Role) -> None:
        if self.role < role:
            raise Forbidden(f"this action needs the {role.name} role; you are {self.role.name}")
