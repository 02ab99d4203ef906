"""hopper's SQS endpoint (hopper.endpoint.Endpoint, in memory) as an RSGI app for granian:
granian's leanest interface, with no ASGI cycle, for the HTTP layer's comparison
(the benchmark's `hopper-rsgi` target). SQS calls only: no console, no /health, and
none of hopper's connection limits (granian parses HTTP in Rust, below any hook).

    python -m granian --interface rsgi --factory bench.granian_rsgi:app ...
"""

from __future__ import annotations

import asyncio
from typing import Any

from hopper.app import assemble
from hopper.direct import endpoint_of
from hopper.endpoint import Endpoint, Head
from hopper.settings import load


class HopperRsgi:
    def __init__(self) -> None:
        self.assembly = assemble(load())
        endpoint = endpoint_of(self.assembly.app)
        if endpoint is None:
            raise RuntimeError("hopper's app has a wrapper the endpoint cannot be found behind")
        self.endpoint: Endpoint = endpoint

    def __rsgi_init__(self, loop: asyncio.AbstractEventLoop) -> None:
        loop.run_until_complete(self.assembly.service.start())

    def __rsgi_del__(self, loop: asyncio.AbstractEventLoop) -> None:
        loop.run_until_complete(self.assembly.service.close())

    async def __rsgi__(self, scope: Any, proto: Any) -> None:
        head = Head(
            method=scope.method,
            path=scope.path,
            raw_path=scope.path.encode(),
            query_string=scope.query_string.encode("latin-1"),
            headers=[(k.encode("latin-1"), v.encode("latin-1")) for k, v in scope.headers.items()],
            client=scope.client.rpartition(":")[0],
            scheme=scope.scheme,
        )
        incoming = self.endpoint.incoming(head)
        if incoming is None:
            proto.response_bytes(404, [], b"")
            return
        body = await proto()
        rendered = await self.endpoint.answer(incoming, body, None)
        headers = [("content-type", rendered.content_type), *rendered.headers.items()]
        proto.response_bytes(rendered.status, headers, rendered.body)


def app() -> HopperRsgi:
    return HopperRsgi()
