"""The floor: the cheapest request this stack serves. A minimal Starlette app on
uvicorn (httptools and uvloop, no access log, as `hopper serve` runs) that answers
every POST with one fixed JSON body, whatever it asked. Its CPU per request is the
unit the benchmark's goals are set in: hopper's request path is charged only for what
it does beyond parsing HTTP and running one ASGI cycle.

The body carries a QueueUrl and a MessageId, so the load generator's CreateQueue and
SendMessage take it for an answer.

    python bench/floor_server.py PORT
"""

from __future__ import annotations

import sys

import uvicorn
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Route

BODY = (
    b'{"QueueUrl":"http://127.0.0.1/000000000000/floor",'
    b'"MessageId":"00000000-0000-4000-8000-000000000000",'
    b'"MD5OfMessageBody":"00000000000000000000000000000000"}'
)


async def answer(request: Request) -> Response:
    await request.body()  # read as any server must, then ignored
    return Response(BODY, media_type="application/x-amz-json-1.0")


app = Starlette(routes=[Route("/", answer, methods=["POST"])])


def main(port: int) -> None:
    uvicorn.run(
        app,
        host="127.0.0.1",
        port=port,
        http="httptools",
        loop="uvloop",
        log_level="warning",
        access_log=False,
        ws="none",
        lifespan="off",
    )


if __name__ == "__main__":
    main(int(sys.argv[1]))
