"""The embedded Kubernetes API keeps a pod's log in chunks: appending never copies the whole log, the tail is
read from the end, and a follower reads from an offset; each gives what the plain string would."""

from __future__ import annotations

import random

from sandbox.kube.server import _tail
from sandbox.kube.store import LogBuffer


def test_chunked_log_reads_as_the_whole_text_would() -> None:
    rng = random.Random(7)
    for _ in range(2000):
        log, full = LogBuffer(), ""
        log.CHUNK = rng.choice([1, 5, 16, 64, 1000])
        for _ in range(rng.randint(0, 40)):
            text = "".join(rng.choice("ab\n") for _ in range(rng.randint(0, 12)))
            log.append(text)
            full += text
        offset, lines = rng.randint(0, len(full) + 2), rng.randint(0, 10)
        assert log.size == len(full) and log.text_from(0) == full
        assert log.text_from(offset) == full[offset:]
        assert log.tail(lines) == _tail(full, lines), (lines, full)


def test_a_hundred_megabytes_append_in_chunks_and_the_tail_is_the_newest_lines() -> None:
    log = LogBuffer()
    line = "x" * 99 + "\n"
    for _ in range(10_000):
        log.append(line * 100)  # 100 MB in 10,000 appends: quadratic copying would take minutes
    log.append("last one\n")
    assert log.size == 100_000_009 and len(log._chunks) < 2000
    assert log.tail(2) == line + "last one\n"
