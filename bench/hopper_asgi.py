"""hopper in memory as `hopper serve` ran it before the direct path: every SQS call
through uvicorn's ASGI cycle (GuardedProtocol keeps the connection limits). The
benchmark's `hopper-asgi` target, for the HTTP layer's comparison.

    python bench/hopper_asgi.py serve --port PORT ...   (the `hopper serve` options)
"""

from __future__ import annotations

import sys

from hopper import cli
from hopper.connection_limits import GuardedProtocol


def main() -> int:
    cli._http_protocol = lambda: GuardedProtocol  # the ASGI cycle for every request
    return cli.main(sys.argv[1:])


if __name__ == "__main__":
    sys.exit(main())
