"""The workload through aiobotocore, unmodified: one async client, its coroutines run
on an event loop in a second thread while the shared (synchronous) workload waits.

    python aiobotocore_client.py --endpoint URL --prefix NAME
"""

from __future__ import annotations

import argparse
import asyncio
import threading
from typing import Any

import aiobotocore
import botocore
import sqs_workload
from aiobotocore.config import AioConfig
from aiobotocore.session import get_session
from steps import announce, done, expect, snake, step


async def _client_of(session: Any, endpoint: str, opened: list[Any]) -> Any:
    context = session.create_client(
        "sqs", endpoint_url=endpoint, region_name="us-east-1",
        aws_access_key_id="test", aws_secret_access_key="test",
        config=AioConfig(retries={"total_max_attempts": 1}, read_timeout=40),
    )
    opened.append(context)
    return await context.__aenter__()


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--endpoint", required=True)
    parser.add_argument("--prefix", required=True)
    options = parser.parse_args()

    loop = asyncio.new_event_loop()
    thread = threading.Thread(target=loop.run_forever, daemon=True)
    thread.start()

    def wait(coroutine: Any) -> Any:
        return asyncio.run_coroutine_threadsafe(coroutine, loop).result(60)

    contexts: list[Any] = []
    client = wait(_client_of(get_session(), options.endpoint, contexts))
    protocol = client.meta.service_model.protocol
    announce("aiobotocore", f"aiobotocore {aiobotocore.__version__} / botocore "
             f"{botocore.__version__}", protocol)
    with step("protocol"):
        expect(protocol == "json", f"botocore speaks {protocol}")

    def call(action: str, **params: Any) -> dict[str, Any]:
        return dict(wait(getattr(client, snake(action))(**params)))

    try:
        sqs_workload.run(call, options.prefix)
    finally:
        wait(contexts[0].__aexit__(None, None, None))
        loop.call_soon_threadsafe(loop.stop)
        thread.join(10)
    done()


if __name__ == "__main__":
    main()
