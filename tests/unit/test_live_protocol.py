"""The live socket's messages: what a client may send, and how a log stream becomes whole lines."""

from __future__ import annotations

import json

import pytest

from functions.domain import live


def test_a_follow_is_validated_like_the_rest_logs_route() -> None:
    msg = live.parse(json.dumps({"action": "follow_logs", "id": "t1", "cluster": "demo", "job": "llama"}))
    assert isinstance(msg, live.FollowLogs) and msg.namespace == "default" and msg.tail == 200
    assert isinstance(live.parse('{"action": "unfollow", "id": "t1"}'), live.Unfollow)


@pytest.mark.parametrize("raw,status,loc", [
    ('{"action": "follow_logs", "id": "x", "cluster": "demo", "job": "Bad_Job"}', 422, ["message", "job"]),
    ('{"action": "follow_logs", "id": "x", "cluster": "demo", "job": "j", "tail": -1}', 422, ["message", "tail"]),
    ('{"action": "follow_logs", "id": "x", "cluster": "demo", "job": "j", "cmd": "rm"}', 422, ["message", "cmd"]),
    ('{"action": "exec", "id": "x"}', 422, ["message"]),
    ("[1, 2]", 422, ["message"]),
])
def test_a_bad_message_names_the_field(raw: str, status: int, loc: list[str]) -> None:
    with pytest.raises(live.BadMessage) as err:
        live.parse(raw)
    assert err.value.problem["status"] == status
    assert err.value.problem["errors"][0]["loc"][: len(loc)] == loc


def test_not_json_or_too_large_is_refused_without_parsing() -> None:
    with pytest.raises(live.BadMessage) as err:
        live.parse("{")
    assert err.value.problem["status"] == 400
    with pytest.raises(live.BadMessage) as err:
        live.parse(" " * (live.MAX_MESSAGE_BYTES + 1))
    assert err.value.problem["status"] == 413


def test_chunks_become_whole_lines_and_an_endless_line_is_cut() -> None:
    lines = live.Lines()
    assert lines.feed("step 1 loss=2.1\nstep 2 lo") == ["step 1 loss=2.1"]
    assert lines.feed("ss=1.9\n") == ["step 2 loss=1.9"]
    assert lines.feed("x" * (live.MAX_LINE_CHARS + 10)) == ["x" * live.MAX_LINE_CHARS]
    assert lines.feed("tail") == [] and lines.rest() == ["tail"] and lines.rest() == []
