"""The clients of the compatibility matrix: what to install and which workload to run.

A client with no requirements runs in the interpreter running this code (the project's
own boto3, from its test dependencies); every other Python client gets a virtualenv of
its own, because their botocore pins conflict with each other and with the project's.
The Node clients share compat/node/ (package.json and package-lock.json pin them).
The Go and Ruby SDKs are Debian's packages (.ci/run installs them); the Go workload is
built offline against them (compat/envs.py).
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Client:
    name: str
    protocol: str  # the wire protocol the client is expected to speak
    runtime: str  # "python", "node", "go" or "ruby"
    script: str  # in compat/workloads/ (python), compat/node/, compat/go/ or compat/ruby/
    requirements: tuple[str, ...] = ()  # pip requirements of its own virtualenv
    arguments: tuple[str, ...] = ()
    what: str = ""  # one line for the README's table
    # Steps of the workload the client's SDK cannot express, each printed by its workload
    # as `gap <step>: <why>`: a gap that appears or goes away fails the client's test.
    gaps: tuple[str, ...] = ()


CLIENTS: tuple[Client, ...] = (
    Client("boto3", "json", "python", "boto3_client.py",
           arguments=("--protocol", "json", "--client", "boto3"),
           what="current boto3, the project's test dependency"),
    Client("botocore-query", "query", "python", "boto3_client.py",
           # 1.34.89 is the last botocore whose SQS model says "query" (1.34.90 moved
           # to JSON for good; scripts/regenerate_shapes.py reads the same release)
           requirements=("boto3==1.34.89", "botocore==1.34.89"),
           arguments=("--protocol", "query", "--client", "botocore-query"),
           what="the last boto3/botocore that speaks the query protocol"),
    Client("aiobotocore", "json", "python", "aiobotocore_client.py",
           requirements=("aiobotocore==3.10.0",),
           what="asyncio botocore (aiohttp)"),
    Client("awscli", "json", "python", "awscli_client.py",
           requirements=("awscli==1.46.3",),
           what="`aws sqs ... --endpoint-url`, one process per call"),
    Client("celery", "json", "python", "celery_client.py",
           requirements=("celery[sqs]==5.7.0", "kombu[sqs]==5.7.0"),
           what="a real `celery worker` on kombu's SQS transport (pycurl)"),
    Client("client-sqs", "json", "node", "client_sqs.mjs",
           what="@aws-sdk/client-sqs v3 (verifies body MD5s)"),
    Client("sqs-consumer", "json", "node", "consumer.mjs",
           what="sqs-consumer on @aws-sdk/client-sqs v3"),
    Client("go-sdk-v2", "query", "go", "workload.go",
           what="AWS SDK for Go v2 (Debian's; service/sqs 1.19, checks body MD5s)",
           gaps=("redrive",)),
    Client("ruby-sdk-v1", "query", "ruby", "workload.rb",
           what="AWS SDK for Ruby v1 `AWS::SQS::Client` (Debian's)",
           gaps=("redrive", "fifo")),
)


def named(name: str) -> Client:
    for client in CLIENTS:
        if client.name == name:
            return client
    raise KeyError(f"no compat client named {name!r}: {[c.name for c in CLIENTS]}")
