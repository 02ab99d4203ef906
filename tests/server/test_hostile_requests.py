"""Hostile request shapes against a live server: the worst-shaped query request at the
body limit is refused in milliseconds, and another client is answered meanwhile."""

from __future__ import annotations

import threading
import time
import uuid
from collections.abc import Callable

import httpx
import pytest

from hopper.wire.protocol import MAX_QUERY_BODY_BYTES

# The largest query-protocol body the server reads (and decodes) at all.
BODY_LIMIT = MAX_QUERY_BODY_BYTES
FORM = {"content-type": "application/x-www-form-urlencoded"}
# Decoding any request of at most BODY_LIMIT bytes costs tens of milliseconds; the
# bounds leave room for a loaded machine (before the fix 4,000 message attributes, a
# seventh of this size, held every client for over a minute).
WORST_REQUEST_SECONDS = 2.0
PROBE_SECONDS = 2.0


def _as_many(prefix: bytes, part: Callable[[int], bytes], limit: int) -> bytes:
    """`prefix` and then `part(1)`, `part(2)`, ... for as long as they fit in `limit`."""
    parts, size, index = [prefix], len(prefix), 1
    while size + len(part(index)) <= limit:
        parts.append(part(index))
        size += len(parts[-1])
        index += 1
    return b"".join(parts)


def _attribute(value: bytes) -> Callable[[int], bytes]:
    return lambda i: (
        b"&MessageAttribute.%d.Name=a%d&MessageAttribute.%d.Value.DataType=String"
        b"&MessageAttribute.%d.Value.StringValue=%s" % (i, i, i, i, value)
    )


def _batch_entry(i: int) -> bytes:
    return b"&DeleteMessageBatchRequestEntry.%d.Id=i%d&DeleteMessageBatchRequestEntry.%d" \
        b".ReceiptHandle=r" % (i, i, i)


def _fill(prefix: bytes, unit: bytes, limit: int) -> bytes:
    return prefix + unit * ((limit - len(prefix)) // len(unit))


SEND = b"Action=SendMessage&MessageBody=x"
# About 300 attributes: fewer fields than a request may have, each value 10 KiB long.
LONG_VALUE = b"v" * (BODY_LIMIT // 300 - 120)
SHAPES = {
    "message attributes": lambda: _as_many(SEND, _attribute(b"v"), BODY_LIMIT),
    "long message attributes": lambda: _as_many(SEND, _attribute(LONG_VALUE), BODY_LIMIT),
    "batch entries": lambda: _as_many(b"Action=DeleteMessageBatch", _batch_entry, BODY_LIMIT),
    "attribute names": lambda: _fill(
        b"Action=GetQueueAttributes", b"&AttributeName.99999=All", BODY_LIMIT
    ),
    "empty fields": lambda: _fill(SEND, b"&a", BODY_LIMIT),
    "broken escapes": lambda: _fill(b"Action=SendMessage&MessageBody=", b"%Z", BODY_LIMIT),
    "runs of percent signs": lambda: _fill(b"Action=SendMessage&MessageBody=", b"%", BODY_LIMIT),
    "escapes": lambda: _fill(b"Action=SendMessage&MessageBody=", b"%41", BODY_LIMIT),
}


def test_a_query_body_longer_than_any_valid_one_is_refused_before_it_is_read(endpoint):
    body = _fill(SEND, b"&a", BODY_LIMIT + 2)
    response = httpx.post(endpoint + "/000000000000/any", content=body, headers=FORM)
    assert response.status_code == 413
    assert "<Code>RequestEntityTooLarge</Code>" in response.text


@pytest.mark.parametrize("shape", SHAPES)
def test_the_worst_shaped_request_at_the_body_limit_is_answered_at_once_and_blocks_nobody(
    endpoint, shape
):
    # given a queue and a request of the worst shape, as large as the server accepts
    name = f"hostile-{uuid.uuid4().hex[:8]}"
    created = httpx.post(endpoint, data={"Action": "CreateQueue", "QueueName": name})
    assert created.status_code == 200
    body = SHAPES[shape]()
    assert BODY_LIMIT - 30_000 < len(body) <= BODY_LIMIT
    answers: list[tuple[int, float]] = []

    def hostile() -> None:
        started = time.perf_counter()
        response = httpx.post(f"{endpoint}/000000000000/{name}", content=body,
                              headers=FORM, timeout=120)
        answers.append((response.status_code, time.perf_counter() - started))

    # when it is sent while another client keeps asking for the queue's URL
    sender = threading.Thread(target=hostile)
    sender.start()
    probes: list[float] = []
    with httpx.Client(timeout=120) as other:
        while sender.is_alive() or not probes:
            started = time.perf_counter()
            probe = other.post(endpoint, data={"Action": "GetQueueUrl", "QueueName": name})
            assert probe.status_code == 200
            probes.append(time.perf_counter() - started)
    sender.join()

    # then the hostile request got a 400 at once, and the other client was never held up
    [(status, seconds)] = answers
    assert status == 400
    assert seconds < WORST_REQUEST_SECONDS, f"{shape}: {seconds:.3f}s"
    assert max(probes) < PROBE_SECONDS, f"{shape}: probes took up to {max(probes):.3f}s"
