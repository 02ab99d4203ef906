"""An HTTP subscriber on loopback for the SNS tests: records every POST (headers and
body) and answers with the statuses it is told to, 200 once they run out."""

from __future__ import annotations

import queue
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer


@dataclass(frozen=True)
class Post:
    path: str
    headers: dict[str, str]
    body: str


class Subscriber:
    def __init__(self, server: ThreadingHTTPServer) -> None:
        self.url = f"http://127.0.0.1:{server.server_address[1]}"
        self.posts: queue.Queue[Post] = queue.Queue()
        self.statuses: list[int] = []

    def next(self, timeout: float = 10.0) -> Post:
        return self.posts.get(timeout=timeout)


@contextmanager
def subscriber() -> Iterator[Subscriber]:
    holder: list[Subscriber] = []

    class Handler(BaseHTTPRequestHandler):
        def do_POST(self) -> None:  # noqa: N802 - http.server's name
            length = int(self.headers.get("content-length", "0"))
            body = self.rfile.read(length).decode("utf-8")
            me = holder[0]
            status = me.statuses.pop(0) if me.statuses else 200
            me.posts.put(Post(self.path, {k.lower(): v for k, v in self.headers.items()}, body))
            self.send_response(status)
            self.send_header("content-length", "0")
            self.end_headers()

        def log_message(self, *args: object) -> None:
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    holder.append(Subscriber(server))
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield holder[0]
    finally:
        server.shutdown()
        server.server_close()
