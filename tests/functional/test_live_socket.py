"""The deployed live socket's pieces without AWS: the connection store on DynamoDB (moto), the use cases with a
recording poster, and the $connect authorizer with a key made here."""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Iterator
from typing import Any

import jwt
import pytest
from cryptography.hazmat.primitives.asymmetric import rsa

from functions.adapters import aws
from functions.adapters.live_store import DynamoLiveConnections
from functions.domain import live
from functions.logic import live_logs, live_socket
from tests.functional.moto_env import mocked_aws

REGION = "us-west-2"


@pytest.fixture
def store(monkeypatch: pytest.MonkeyPatch) -> Iterator[DynamoLiveConnections]:
    with mocked_aws(monkeypatch):
        aws.client("dynamodb").create_table(
            TableName="live", BillingMode="PAY_PER_REQUEST",
            KeySchema=[{"AttributeName": "pk", "KeyType": "HASH"}, {"AttributeName": "sk", "KeyType": "RANGE"}],
            AttributeDefinitions=[{"AttributeName": "pk", "AttributeType": "S"},
                                  {"AttributeName": "sk", "AttributeType": "S"}])
        yield DynamoLiveConnections("live")


class Poster:
    def __init__(self, gone: set[str] | None = None) -> None:
        self.sent: list[tuple[str, dict[str, Any]]] = []
        self.gone = gone or set()

    def post(self, connection_id: str, message: dict[str, Any]) -> bool:
        if connection_id in self.gone:
            return False
        self.sent.append((connection_id, message))
        return True


def test_a_user_holds_at_most_the_limit_of_follows_across_connections_and_a_disconnect_frees_them(
        store: DynamoLiveConnections) -> None:
    store.add_connection("c1", "alice")
    store.add_connection("c2", "alice")
    assert [store.add_follow("c1", "alice", f"f{i}", 4) for i in range(3)] == [True] * 3
    assert store.add_follow("c2", "alice", "g", 4) and not store.add_follow("c2", "alice", "h", 4)
    assert store.add_follow("c2", "bob", "h", 4)  # another user's limit is their own
    assert store.has_follow("c1", "f0") and store.remove_follow("c1", "f0") and not store.has_follow("c1", "f0")
    assert store.add_follow("c2", "alice", "h", 4)  # the freed place is taken
    assert sorted(store.remove_connection("c1")) == ["f1", "f2"]
    assert [store.add_follow("c2", "alice", f"k{i}", 4) for i in range(3)] == [True, True, False]
    assert sorted(store.connections()) == ["c2"]


def test_two_follows_at_once_never_pass_the_limit(store: DynamoLiveConnections) -> None:
    results: list[bool] = []
    gate = threading.Barrier(8)

    def one(i: int) -> None:
        gate.wait()
        results.append(store.add_follow(f"c{i}", "carol", "f", 4))

    threads = [threading.Thread(target=one, args=(i,)) for i in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert results.count(True) == 4


def test_an_abandoned_connections_follows_stop_counting_once_they_expire(store: DynamoLiveConnections) -> None:
    now = [1000.0]
    clocked = DynamoLiveConnections("live", clock=lambda: now[0])
    assert all(clocked.add_follow("lost", "dave", f"f{i}", 4) for i in range(4))
    assert not clocked.add_follow("new", "dave", "g", 4)
    now[0] += 3 * 3600  # the lost socket never sent $disconnect; its entries expired
    assert clocked.add_follow("new", "dave", "g", 4)


def test_messages_refuse_bad_input_on_the_socket_and_start_a_follower_only_within_the_limit(
        store: DynamoLiveConnections, monkeypatch: pytest.MonkeyPatch) -> None:
    poster, started = Poster(), []
    monkeypatch.setattr(live_logs, "open_follow", lambda deps, msg: None)
    store.add_connection("c1", "erin")

    def send(raw: str) -> None:
        live_socket.message(None, store, poster, started.append, "c1", "erin", raw)  # type: ignore[arg-type]

    send("nope")
    send(json.dumps({"action": "follow_logs", "id": "a", "cluster": "demo", "job": "j", "tail": 9999}))
    assert [m["status"] for _, m in poster.sent] == [400, 422]
    for i in range(5):
        send(json.dumps({"action": "follow_logs", "id": f"f{i}", "cluster": "demo", "job": "j"}))
    assert [p["follow"]["id"] for p in started] == ["f0", "f1", "f2", "f3"]
    assert poster.sent[-1][1]["status"] == 429
    send(json.dumps({"action": "unfollow", "id": "f0"}))
    assert not store.has_follow("c1", "f0")
    send(json.dumps({"action": "unfollow", "id": "zz"}))
    assert poster.sent[-1][1] == {"type": "log_end", "id": "zz", "reason": "not followed"}


def test_a_bus_event_reaches_every_socket_and_a_gone_one_is_forgotten(store: DynamoLiveConnections) -> None:
    for c in ("c1", "c2", "c3"):
        store.add_connection(c, "u")
    poster = Poster(gone={"c2"})
    assert live_socket.broadcast(store, poster, {"detail_type": "Operation Status Changed", "id": "op-1"}) == 2
    assert sorted(store.connections()) == ["c1", "c3"]
    assert all(m["type"] == "event" and m["id"] == "op-1" for _, m in poster.sent)


class _Stream:
    def __init__(self) -> None:
        self.closed = threading.Event()
        self.first = True

    def read(self) -> bytes:
        if self.first:
            self.first = False
            return b"step 1 loss=2.0\n"
        self.closed.wait(10)
        return b""

    def close(self) -> None:
        self.closed.set()


def test_a_follower_ends_when_the_client_unfollows(store: DynamoLiveConnections,
                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    stream = _Stream()

    class Kube:
        def follow_logs(self, *a: Any) -> _Stream:
            return stream

    target = live_logs.Follow(sub="f", kube=Kube(), namespace="default", pod="j-0",  # type: ignore
                                          container=None, tail=1)
    monkeypatch.setattr(live_logs, "open_follow", lambda deps, msg: target)
    store.add_connection("c1", "frank")
    assert store.add_follow("c1", "frank", "f", 4)
    poster = Poster()
    request = {"action": "follow_logs", "id": "f", "cluster": "demo", "job": "j"}
    out: list[str] = []
    t = threading.Thread(target=lambda: out.append(
        live_socket.follow(None, store, poster, "c1", request, check_seconds=0.05)))  # type: ignore[arg-type]
    t.start()
    deadline = time.monotonic() + 5
    while not poster.sent:
        assert time.monotonic() < deadline
        time.sleep(0.01)
    store.remove_follow("c1", "f")  # what an unfollow (or $disconnect) does
    t.join(5)
    assert out == ["unfollowed"] and stream.closed.is_set()
    assert [m["type"] for _, m in poster.sent] == ["log", "log_end"]


def test_the_authorizer_takes_a_current_access_token_of_the_pool_offered_as_a_sub_protocol(
        monkeypatch: pytest.MonkeyPatch) -> None:
    from functions.live import authorizer
    from functions.settings import live_settings

    monkeypatch.setenv("USER_POOL_ID", "us-west-2_pool")
    monkeypatch.setenv("USER_POOL_CLIENT_IDS", "web-client")
    monkeypatch.setenv("AWS_REGION", REGION)
    live_settings.cache_clear()
    key = rsa.generate_private_key(public_exponent=65537, key_size=2048)

    class Keys:
        def get_signing_key_from_jwt(self, token: str) -> Any:
            return type("K", (), {"key": key.public_key()})()

    def token(**over: Any) -> str:
        claims = {"sub": "u-1", "iss": authorizer.issuer(), "token_use": "access", "client_id": "web-client",
                  "exp": int(time.time()) + 600, "cognito:groups": ["operator"], "username": "ann", **over}
        return jwt.encode(claims, key, algorithm="RS256")

    assert authorizer.verify(token(), Keys())["sub"] == "u-1"
    for bad in (token(token_use="id"), token(client_id="other"), token(exp=int(time.time()) - 5),
                token(iss="https://elsewhere"), token() + "x"):
        with pytest.raises(authorizer.Denied):
            authorizer.verify(bad, Keys())
    assert authorizer.token_of({"Sec-WebSocket-Protocol": "podstart, abc.def.ghi"}) == "abc.def.ghi"
    for offered in ({}, {"sec-websocket-protocol": "abc.def.ghi"}, {"Sec-WebSocket-Protocol": "other, t"}):
        with pytest.raises(authorizer.Denied):
            authorizer.token_of(offered)
    monkeypatch.setattr(authorizer, "_jwks", lambda: Keys())
    ok = authorizer.handler({"headers": {"Sec-WebSocket-Protocol": f"podstart, {token()}"},
                             "methodArn": "arn:aws:execute-api:us-west-2:1:api/live/$connect"}, None)  # type: ignore
    assert ok["context"] == {"sub": "u-1", "username": "ann", "groups": "operator"}
    assert ok["policyDocument"]["Statement"][0]["Effect"] == "Allow"
    with pytest.raises(Exception, match="Unauthorized"):
        authorizer.handler({"headers": {}, "methodArn": "x"}, None)  # type: ignore[arg-type]
    live_settings.cache_clear()
    assert live.MAX_FOLLOWS_PER_USER == 4
