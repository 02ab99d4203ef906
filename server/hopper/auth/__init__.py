"""Who may call the server, and how often: AWS Signature V4 verification, the
credentials it checks against (access key -> secret and account id), and per-caller
rate limits. `gate.Gate` is what the HTTP layer asks, once per request.

Everything here answers in SQS's own errors (`wire.errors.SqsError`), so a refused
request is rendered in the protocol it came in, like any other error.
"""
