"""The SQS names of the queue attributes that are `QueueConfig` fields.

Both the queue attribute table (queue_attributes.py) and the translation of the core's
errors (errors.py), which name a field, read it; it imports nothing of the wire.
"""

from __future__ import annotations

# hopper's depth ceiling, a settable extension attribute (see the operator ones in
# queue_attributes.py).
MAXIMUM_QUEUE_DEPTH = "Hopper.MaximumQueueDepth"
# hopper's backoff after a lease ends without a delete (core/retries.py).
RETRY_POLICY = "Hopper.RetryPolicy"
# hopper's own delivery of a queue's messages to an HTTP target (core/dispatch_targets.py).
DISPATCH = "Hopper.Dispatch"

# QueueConfig field -> its SQS attribute name. The attributes the core only stores and
# echoes (Policy, KmsMasterKeyId, ...) are no field: they go to `extra` by SQS name.
FIELD_NAMES = {
    "visibility_timeout": "VisibilityTimeout",
    "maximum_message_size": "MaximumMessageSize",
    "message_retention_period": "MessageRetentionPeriod",
    "delay_seconds": "DelaySeconds",
    "receive_message_wait_time_seconds": "ReceiveMessageWaitTimeSeconds",
    "dead_letter": "RedrivePolicy",
    "fifo": "FifoQueue",
    "content_based_deduplication": "ContentBasedDeduplication",
    "maximum_depth": MAXIMUM_QUEUE_DEPTH,
    "retry_policy": RETRY_POLICY,
    "dispatch": DISPATCH,
}


def sqs_attribute_name(field: str) -> str:
    """The SQS attribute name of a QueueConfig field (`visibility_timeout` ->
    `VisibilityTimeout`); anything else (an extra's SQS name) is returned unchanged."""
    return FIELD_NAMES.get(field, field)
