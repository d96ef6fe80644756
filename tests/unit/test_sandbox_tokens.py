"""The sandbox's tokens: one per role, Cognito-shaped claims, files private from the first byte."""

from __future__ import annotations

import os
import stat
from collections.abc import Iterator
from pathlib import Path

import pytest

from sandbox.auth import Tokens


@pytest.fixture
def umask_zero() -> Iterator[None]:
    """The worst umask a developer may have: a file created with the default mode is world-writable."""
    old = os.umask(0)
    try:
        yield
    finally:
        os.umask(old)


def _mode(path: Path) -> int:
    return stat.S_IMODE(path.stat().st_mode)


def test_each_role_has_its_own_token_file_with_mode_0600(tmp_path: Path, umask_zero: None) -> None:
    tokens = Tokens.make()
    paths = tokens.write(tmp_path / ".podstart")
    assert {role: p.name for role, p in paths.items()} == {
        "admin": "token", "operator": "operator-token", "viewer": "viewer-token"}
    for role, path in paths.items():
        assert path.read_text() == getattr(tokens, role) + "\n"
        assert _mode(path) == 0o600, (role, oct(_mode(path)))
    assert len({tokens.admin, tokens.operator, tokens.viewer}) == 3
    assert sorted(p.name for p in (tmp_path / ".podstart").iterdir()) == ["operator-token", "token", "viewer-token"]


def test_no_token_file_is_ever_wider_than_0600(
        tmp_path: Path, umask_zero: None, monkeypatch: pytest.MonkeyPatch) -> None:
    """Given umask 0 and an old world-readable token file, when every later chmod is a no-op,
    the files still come out 0600: the mode is right at creation, not fixed up after the write."""
    state = tmp_path / ".podstart"
    state.mkdir()
    old = state / "token"
    old.write_text("old-token\n")
    old.chmod(0o644)
    seen: list[tuple[str, int]] = []
    real_open = os.open

    def watching_open(path: str | os.PathLike[str], flags: int, mode: int = 0o777, **kw: object) -> int:
        fd = real_open(path, flags, mode, **kw)  # type: ignore[arg-type]
        seen.append((os.fspath(path), stat.S_IMODE(os.fstat(fd).st_mode)))
        return fd

    monkeypatch.setattr(os, "chmod", lambda *a, **k: None)
    monkeypatch.setattr(os, "fchmod", lambda *a, **k: None)
    monkeypatch.setattr(os, "open", watching_open)

    tokens = Tokens.make(admin="admin-token")
    paths = tokens.write(state)

    for path in paths.values():
        assert _mode(path) == 0o600, (path.name, oct(_mode(path)))
    assert paths["admin"].read_text() == "admin-token\n"
    assert seen and all(mode == 0o600 for _, mode in seen), seen
    assert sorted(p.name for p in state.iterdir()) == ["operator-token", "token", "viewer-token"]


def test_claims_are_cognito_shaped_one_group_per_token() -> None:
    tokens = Tokens.make("a" * 20, "o" * 20, "v" * 20)
    for role in ("admin", "operator", "viewer"):
        claims = tokens.claims(f"Bearer {getattr(tokens, role)}")
        assert claims == {"sub": f"sandbox-{role}", "cognito:username": f"sandbox-{role}", "cognito:groups": role}
    assert tokens.claims("Bearer " + "x" * 20) is None
    assert tokens.claims(None) is None
    assert tokens.claims("Basic " + "a" * 20) is None


def test_a_token_shared_by_two_roles_gets_the_lesser_role() -> None:
    tokens = Tokens.make(admin="same", operator="same")
    assert tokens.claims("Bearer same") == {
        "sub": "sandbox-operator", "cognito:username": "sandbox-operator", "cognito:groups": "operator"}
