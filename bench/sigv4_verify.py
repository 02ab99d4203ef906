"""What verifying a Signature V4 costs the server: one SendMessage request (JSON
protocol, a 200-byte body) signed by botocore, verified over and over in-process.

    .venv/bin/python -m bench.sigv4_verify
"""

from __future__ import annotations

import json
import time

from botocore.auth import SigV4Auth
from botocore.awsrequest import AWSRequest
from botocore.credentials import Credentials

from hopper.auth.credentials import Credential
from hopper.auth.sigv4 import Arrival, verify

ROUNDS = 20_000


def main() -> None:
    body = json.dumps({
        "QueueUrl": "http://127.0.0.1:9324/111111111111/jobs", "MessageBody": "x" * 200,
    }).encode()
    request = AWSRequest(
        method="POST", url="http://127.0.0.1:9324/", data=body,
        headers={"Content-Type": "application/x-amz-json-1.0",
                 "X-Amz-Target": "AmazonSQS.SendMessage"},
    )
    SigV4Auth(Credentials("AKIDA", "secret"), "sqs", "us-east-1").add_auth(request)
    prepared = request.prepare()
    headers = [(k.lower(), v) for k, v in prepared.headers.items()]
    arrival = Arrival("POST", "/", "", [*headers, ("host", "127.0.0.1:9324")], body)
    keys = {"AKIDA": Credential("AKIDA", "secret", "111111111111")}
    now = time.time()
    verify(arrival, keys, now)
    started = time.perf_counter()
    for _ in range(ROUNDS):
        verify(arrival, keys, now)
    per_request = (time.perf_counter() - started) / ROUNDS
    print(f"SigV4 verification: {per_request * 1e6:.1f} us per SendMessage request")


if __name__ == "__main__":
    main()
