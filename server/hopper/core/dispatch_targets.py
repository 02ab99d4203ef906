"""Where a queue's messages are delivered by hopper itself (`Hopper.Dispatch`, a hopper
extension): an HTTP target an operator configured, and who may name one.

The dispatcher (hopper/dispatch/) receives through the same core as any client and
POSTs what it received to `url`; this module is only the target's data (core/dispatch_hosts.py
has the rule that keeps it from becoming a request-forgery tool on a shared server).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

Payload = Literal["lambda", "raw"]
PAYLOADS: tuple[Payload, ...] = ("lambda", "raw")
MAX_BATCH_SIZE = 10
MAX_BATCH_WINDOW_SECONDS = 300.0
MAX_CONCURRENCY = 1000
MAX_TIMEOUT_SECONDS = 900.0


@dataclass(frozen=True, slots=True)
class DispatchTarget:
    """`url` gets batches of up to `batch_size` messages, gathered for at most
    `batch_window` seconds, with at most `max_concurrency` calls in flight across every
    hopper process, each given `timeout` seconds. `payload`: `lambda` (the SQS event a
    Lambda function gets) or `raw` (one message per call, its body as sent). A paused
    target keeps its settings and gets no calls."""

    url: str
    batch_size: int = 10
    batch_window: float = 0.0
    max_concurrency: int = 2
    timeout: float = 30.0
    payload: Payload = "lambda"
    paused: bool = False
