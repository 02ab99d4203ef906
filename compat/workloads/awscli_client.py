"""The workload through the AWS CLI, unmodified: every call is one `aws sqs <command>
--endpoint-url URL --cli-input-json ...` process, its JSON output parsed.

    python awscli_client.py --endpoint URL --prefix NAME --aws PATH/TO/aws
"""

from __future__ import annotations

import argparse
import base64
import json
import re
import subprocess
from pathlib import Path
from typing import Any

import sns_workload
import sqs_workload
from steps import ATTRIBUTES, announce, done, expect, step

CALL_TIMEOUT = 60


class CliError(RuntimeError):
    """`aws` exited non-zero (the message is its stderr)."""


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--endpoint", required=True)
    parser.add_argument("--prefix", required=True)
    parser.add_argument("--aws", required=True)
    options = parser.parse_args()
    version = subprocess.run([options.aws, "--version"], capture_output=True, text=True,
                             timeout=CALL_TIMEOUT, check=True)
    # the CLI sends SQS requests in whatever protocol its bundled botocore model says
    protocol = _protocol(options.aws)
    announce("awscli", (version.stdout or version.stderr).strip().split(" ")[0], protocol)
    with step("protocol"):
        expect(protocol == "json", f"the CLI's botocore speaks {protocol}")

    def command(service: str) -> Any:
        def call(action: str, **params: Any) -> dict[str, Any]:
            line = [options.aws, service, _kebab(action), "--endpoint-url", options.endpoint,
                    "--region", "us-east-1", "--output", "json",
                    "--cli-input-json", json.dumps(_to_cli(params))]
            done_ = subprocess.run(line, capture_output=True, text=True, timeout=CALL_TIMEOUT)
            if done_.returncode != 0:
                raise CliError(f"aws {service} {_kebab(action)} exited {done_.returncode}: "
                               f"{done_.stderr.strip()}")
            return _from_cli(json.loads(done_.stdout)) if done_.stdout.strip() else {}

        return call

    call = command("sqs")

    # The CLI takes a blob in --cli-input-json as text (and prints blobs in base64):
    # the binary attribute is one whose bytes are text.
    attributes = dict(ATTRIBUTES, blob={"DataType": "Binary", "BinaryValue": b"bytes as text"})
    sqs_workload.run(call, options.prefix, attributes=attributes)
    sns_workload.run(command("sns"), call, options.prefix)
    done()


def _protocol(aws: str) -> str:
    python = str(Path(aws).parent / "python")  # the CLI's own virtualenv
    # awscli 1.44+ vendors its botocore as awscli.botocore
    probe = ("import awscli.botocore.session as s; "
             "print(s.get_session().get_service_model('sqs').protocol)")
    return subprocess.run([python, "-c", probe], capture_output=True, text=True, check=True,
                          timeout=CALL_TIMEOUT).stdout.strip()


def _kebab(action: str) -> str:
    return re.sub(r"(?<!^)(?=[A-Z])", "-", action).lower()


def _to_cli(value: Any) -> Any:
    if isinstance(value, bytes):
        return value.decode("utf-8")
    if isinstance(value, dict):
        return {k: _to_cli(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_to_cli(v) for v in value]
    return value


def _from_cli(value: Any, key: str = "") -> Any:
    if key == "BinaryValue" and isinstance(value, str):
        return base64.b64decode(value)
    if isinstance(value, dict):
        return {k: _from_cli(v, k) for k, v in value.items()}
    if isinstance(value, list):
        return [_from_cli(v) for v in value]
    return value


if __name__ == "__main__":
    main()
