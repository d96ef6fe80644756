"""Fair share: what one user, and everybody together, may hold of PodStart's shared capacity at once.

- Long polls (`GET /v1/operations/{id}?wait=`) hold an API invocation for up to 20 s: capped per user and in total
  (a fraction of the API function's reserved concurrency). Past a cap the call answers the current state at once
  with `Retry-After` instead of waiting.
- Live sockets: capped per user and per deployment. Log follows (each one a follower Lambda when deployed):
  capped per user and in total. Past a cap: 429 problem+json with `Retry-After`, never a hang.

A hold is a lease: one of N numbered slots (an item written only if absent) with an expiry, so N holders at most,
however many ask at once, and a holder that died frees its slot when the lease expires. Slots live in the state
store (`StateStore.put_new`), the same in AWS (DynamoDB conditional writes) and in the sandbox.
"""

from __future__ import annotations

import random
import time
import uuid
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from pydantic import BaseModel, Field

from functions.domain.errors import Problem
from functions.domain.ports import StateStore


class Limits(BaseModel):
    """The limits, as settings (environment of the API and live functions) and as `GET /v1/me` shows them."""

    long_polls_per_user: int = Field(default=2, ge=1, description="Long polls one user may hold at once")
    long_polls_total: int = Field(default=10, ge=1,
                                  description="Long polls everybody may hold at once (API concurrency 25)")
    sockets_per_user: int = Field(default=10, ge=1, description="Live sockets one user may hold open")
    sockets_total: int = Field(default=500, ge=1, description="Live sockets the deployment holds open")
    follows_per_user: int = Field(default=4, ge=1, description="Job log follows one user may hold")
    follows_total: int = Field(default=20, ge=1,
                               description="Job log follows everybody may hold (follower concurrency)")
    retry_after_s: int = Field(default=5, ge=1, description="What Retry-After says when a limit is reached")


class TooMany(Problem):
    """A limit of shared capacity is reached: retry after `retry_after` seconds (429, `Retry-After`)."""

    status = 429
    title = "Too many requests"
    slug = "too-many-requests"

    def __init__(self, detail: str, retry_after: int, **extra: Any) -> None:
        super().__init__(detail, retry_after=retry_after, **extra)
        self.retry_after = retry_after


@dataclass(frozen=True)
class Lease:
    slots: tuple[tuple[str, str], ...]  # (pk, sk) of every slot held (the user's, then the total's)

    def to_json(self) -> list[list[str]]:
        return [list(s) for s in self.slots]

    @classmethod
    def from_json(cls, raw: object) -> Lease:
        return cls(tuple((str(s[0]), str(s[1])) for s in raw if isinstance(s, list | tuple) and len(s) == 2)
                   if isinstance(raw, list) else ())


@dataclass
class Leases:
    """N slots per pool: `hold` takes one of the user's and one of everybody's, or refuses with why."""

    store: StateStore
    clock: Callable[[], float] = time.time
    salt: Callable[[], str] = field(default=lambda: uuid.uuid4().hex)

    def hold(self, pool: str, user: str, per_user: int, total: int, seconds: float) -> Lease | str:
        """A lease of `seconds`, or why not ("per user" or "in total")."""
        mine = self._take(f"lease#{pool}#user#{user}", per_user, seconds)
        if mine is None:
            return "per user"
        everyone = self._take(f"lease#{pool}#total", total, seconds)
        if everyone is None:
            self.release(Lease((mine,)))
            return "in total"
        return Lease((mine, everyone))

    def hold_total(self, pool: str, total: int, seconds: float) -> Lease | None:
        """A lease of one of `total` slots everybody shares, or None when all are held."""
        slot = self._take(f"lease#{pool}#total", total, seconds)
        return Lease((slot,)) if slot is not None else None

    def release(self, lease: Lease) -> None:
        for pk, sk in lease.slots:
            try:
                self.store.delete(pk, sk)
            except Exception:
                pass

    def held(self, pool: str, user: str, limit: int) -> int:
        """Slots of `user` in use now (expired ones do not count)."""
        now = self.clock()
        pk = f"lease#{pool}#user#{user}"
        return sum(1 for i in range(limit) if (b := self.store.get(pk, f"slot#{i}")) and b.get("expires", 0) > now)

    def _take(self, pk: str, n: int, seconds: float) -> tuple[str, str] | None:
        now = self.clock()
        start = random.randrange(n)  # spread concurrent takers over the slots
        for k in range(n):
            sk = f"slot#{(start + k) % n}"
            body = {"expires": now + seconds, "holder": self.salt()}
            if self.store.put_new(pk, sk, body, ttl=int(now + seconds) + 60):
                return pk, sk
            held = self.store.get(pk, sk)
            if held is not None and held.get("expires", 0) <= now:  # expired: its holder died; take it over
                self.store.delete(pk, sk)
                if self.store.put_new(pk, sk, body, ttl=int(now + seconds) + 60):
                    return pk, sk
        return None


def refusal(what: str, why: str, limits: Limits) -> TooMany:
    """The 429 for a limit reached: which one, and when to come back."""
    caps = {"live sockets": (limits.sockets_per_user, limits.sockets_total),
            "log follows": (limits.follows_per_user, limits.follows_total),
            "long polls": (limits.long_polls_per_user, limits.long_polls_total)}
    per_user, total = caps.get(what, (0, 0))
    said = f"at most {per_user} {what} per user" if why == "per user" else f"at most {total} {what} at once in all"
    return TooMany(f"{said}: close one, or retry in {limits.retry_after_s} s", limits.retry_after_s, limit=what,
                   scope=why)
