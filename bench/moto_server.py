"""moto's SQS server speaking HTTP/1.1, so it gets the same kept-alive connections
as hopper, and without a log line per request (hopper runs without its access log
too). `python -m moto.server` runs werkzeug's handler at HTTP/1.0, which closes
the socket after every answer and would charge moto a TCP handshake per request.

    python bench/moto_server.py PORT
"""

from __future__ import annotations

import sys

from moto.moto_server.werkzeug_app import (
    DomainDispatcherApplication,
    MotoRequestHandler,
    create_backend_app,
)
from werkzeug.serving import run_simple


class KeepAliveHandler(MotoRequestHandler):
    protocol_version = "HTTP/1.1"

    def log_request(self, code: int | str = "-", size: int | str = "-") -> None:
        """No access log line per request, as hopper runs without one."""


def main(port: int) -> None:
    app = DomainDispatcherApplication(create_backend_app)
    run_simple("127.0.0.1", port, app, threaded=True, request_handler=KeepAliveHandler)


if __name__ == "__main__":
    main(int(sys.argv[1]))
