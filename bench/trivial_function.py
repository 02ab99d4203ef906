"""A trivial Lambda-style function for bench/dispatch.py: every POST is answered
`{"batchItemFailures": []}` at once, by a bare ASGI app on uvicorn (httptools)."""

from __future__ import annotations

import sys

import uvicorn

ANSWER = b'{"batchItemFailures":[]}'


async def app(scope, receive, send) -> None:
    if scope["type"] != "http":
        return
    more = True
    while more:  # read the event whole, as a function would
        message = await receive()
        more = message.get("more_body", False)
    headers = [(b"content-type", b"application/json"), (b"content-length", b"24")]
    await send({"type": "http.response.start", "status": 200, "headers": headers})
    await send({"type": "http.response.body", "body": ANSWER})


if __name__ == "__main__":
    uvicorn.run(app, host="127.0.0.1", port=int(sys.argv[1]), log_level="warning",
                http="httptools", loop="uvloop", access_log=False)
