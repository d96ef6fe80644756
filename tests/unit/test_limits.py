"""Fair-share leases: N slots per user and per pool, taken with conditional writes, so N holders at most however
many ask at once; an expired lease (its holder died) is taken over."""

from __future__ import annotations

import threading

from functions.domain.limits import Lease, Leases, Limits, refusal
from tests.fakes import FakeStateStore


def test_per_user_then_in_total_and_released_slots_come_back() -> None:
    leases = Leases(FakeStateStore())
    a1, a2 = leases.hold("p", "alice", 2, 3, 60), leases.hold("p", "alice", 2, 3, 60)
    assert isinstance(a1, Lease) and isinstance(a2, Lease)
    assert leases.hold("p", "alice", 2, 3, 60) == "per user"
    b1 = leases.hold("p", "bob", 2, 3, 60)
    assert isinstance(b1, Lease)
    assert leases.hold("p", "carol", 2, 3, 60) == "in total"
    assert leases.held("p", "carol", 2) == 0  # a refusal in total gives the user's slot back
    leases.release(a1)
    assert isinstance(leases.hold("p", "carol", 2, 3, 60), Lease)


def test_an_expired_lease_is_taken_over() -> None:
    now = [1000.0]
    leases = Leases(FakeStateStore(), clock=lambda: now[0])
    assert isinstance(leases.hold("p", "alice", 1, 5, 10), Lease)
    assert leases.hold("p", "alice", 1, 5, 10) == "per user"
    now[0] += 11  # the holder died without releasing
    assert isinstance(leases.hold("p", "alice", 1, 5, 10), Lease)


def test_concurrent_takers_never_exceed_the_cap() -> None:
    leases = Leases(FakeStateStore())
    got: list[object] = []
    lock = threading.Lock()

    def take() -> None:
        held = leases.hold("p", "alice", 4, 100, 60)
        with lock:
            got.append(held)

    threads = [threading.Thread(target=take) for _ in range(32)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert sum(isinstance(g, Lease) for g in got) == 4


def test_a_refusal_says_which_limit_and_when_to_come_back() -> None:
    p = refusal("live sockets", "per user", Limits())
    assert p.status == 429 and p.retry_after == 5 and "at most 10 live sockets per user" in p.detail
    assert "at most 500 live sockets at once in all" in refusal("live sockets", "in total", Limits()).detail
