"""A Lambda-style function on loopback for the dispatch tests: a real HTTP server that
takes SQS events as a Lambda runtime interface emulator's invocation URL does, and
answers each record as its body says.

- `ok...`: succeeds;
- `flaky...`: fails its first attempt (batchItemFailures), then succeeds;
- `fail...`: always fails (batchItemFailures);
- `slow...`: answers after `slow_seconds` (longer than the target's timeout);
- `hold...`: waits until `release` is set, then succeeds;
- `nap...`: succeeds after a fifth of a second.

`most_in_flight` is the most calls the function was ever answering at once.

Every attempt is recorded: per message id, (monotonic time, outcome) in order. Raw
calls (`raw_url`: one message per call, its body as sent) are answered 500 for a
`fail...` body and 200 otherwise; their headers are kept in `raw_headers`.
"""

from __future__ import annotations

import json
import threading
import time
from collections import defaultdict
from collections.abc import Iterator
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any


class Function:
    def __init__(self, slow_seconds: float = 2.0) -> None:
        self.slow_seconds = slow_seconds
        self.attempts: dict[str, list[tuple[float, str]]] = defaultdict(list)
        self.lock = threading.Lock()
        self.release = threading.Event()
        self.called = threading.Event()
        self.url = ""
        self.in_flight = 0
        self.most_in_flight = 0
        self.raw_headers: dict[str, dict[str, str]] = {}
        self.batches: list[int] = []  # the size of each Lambda event, in arrival order

    @property
    def raw_url(self) -> str:
        return self.url.rsplit("/", 1)[0] + "/raw"

    def answer_raw(self, headers: dict[str, str], body: str) -> int:
        message_id = headers["x-hopper-message-id"]
        with self.lock:
            self.raw_headers[message_id] = headers
        outcome = self._outcome(message_id, body)
        return 500 if outcome == "failed" else 200

    def answer(self, event: dict[str, Any]) -> dict[str, Any]:
        with self.lock:
            self.in_flight += 1
            self.most_in_flight = max(self.most_in_flight, self.in_flight)
        try:
            return self._answer(event)
        finally:
            with self.lock:
                self.in_flight -= 1

    def _answer(self, event: dict[str, Any]) -> dict[str, Any]:
        self.called.set()
        records = event["Records"]
        with self.lock:
            self.batches.append(len(records))
        bodies = [record["body"] for record in records]
        if any(body.startswith("slow") for body in bodies):
            time.sleep(self.slow_seconds)
        if any(body.startswith("hold") for body in bodies):
            self.release.wait(60)
        if any(body.startswith("nap") for body in bodies):
            time.sleep(0.2)
        failures = []
        for record in records:
            outcome = self._outcome(record["messageId"], record["body"])
            if outcome == "failed":
                failures.append({"itemIdentifier": record["messageId"]})
        return {"batchItemFailures": failures}

    def _outcome(self, message_id: str, body: str) -> str:
        with self.lock:
            earlier = self.attempts[message_id]
            failed = body.startswith("fail") or (body.startswith("flaky") and not earlier)
            outcome = "failed" if failed else "late" if body.startswith("slow") else "done"
            earlier.append((time.monotonic(), outcome))
            return outcome

    def done(self, message_id: str) -> int:
        """How many attempts of the message the function answered as a success."""
        with self.lock:
            return sum(outcome == "done" for _, outcome in self.attempts[message_id])

    def times(self, message_id: str) -> list[float]:
        with self.lock:
            return [at for at, _ in self.attempts[message_id]]


def _handler(function: Function) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        def do_POST(self) -> None:  # noqa: N802 (http.server's spelling)
            length = int(self.headers.get("content-length", 0))
            content = self.rfile.read(length)
            status = 200
            if self.path.endswith("/raw"):
                headers = {name.lower(): value for name, value in self.headers.items()}
                status = function.answer_raw(headers, content.decode())
                answer = b"boom" if status == 500 else b""
            else:
                answer = json.dumps(function.answer(json.loads(content))).encode()
            try:
                self.send_response(status)
                self.send_header("content-type", "application/json")
                self.send_header("content-length", str(len(answer)))
                self.end_headers()
                self.wfile.write(answer)
            except (BrokenPipeError, ConnectionResetError):
                pass  # the dispatcher gave up on a slow answer

        def log_message(self, format: str, *args: Any) -> None:
            pass

    return Handler


@contextmanager
def running_function(slow_seconds: float = 2.0) -> Iterator[Function]:
    function = Function(slow_seconds)
    server = ThreadingHTTPServer(("127.0.0.1", 0), _handler(function))
    server.daemon_threads = True
    function.url = f"http://127.0.0.1:{server.server_address[1]}/2015-03-31/functions/function/invocations"
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield function
    finally:
        function.release.set()
        server.shutdown()
        server.server_close()
