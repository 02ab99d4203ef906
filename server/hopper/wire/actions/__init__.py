"""The SQS action handlers: one short async function per action of the 2012-11-05 API.

A handler takes the service, the request's context and its parameters in the JSON
protocol's shape (scalars may be strings: see wire/validate.py) and returns its result
in the JSON response shape; it raises SqsError for wire-level faults and lets the
core's QueueError propagate (http.py translates both).
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any

from hopper.core.service import QueueService
from hopper.wire.actions import leases, messages, permissions, queues, redrive, tags
from hopper.wire.context import RequestContext

Handler = Callable[[QueueService, RequestContext, dict[str, Any]], Awaitable[dict[str, Any]]]

ACTIONS: dict[str, Handler] = {
    "CreateQueue": queues.create_queue,
    "GetQueueUrl": queues.get_queue_url,
    "ListQueues": queues.list_queues,
    "DeleteQueue": queues.delete_queue,
    "GetQueueAttributes": queues.get_queue_attributes,
    "SetQueueAttributes": queues.set_queue_attributes,
    "PurgeQueue": queues.purge_queue,
    "SendMessage": messages.send_message,
    "SendMessageBatch": messages.send_message_batch,
    "ReceiveMessage": messages.receive_message,
    "DeleteMessage": leases.delete_message,
    "DeleteMessageBatch": leases.delete_message_batch,
    "ChangeMessageVisibility": leases.change_message_visibility,
    "ChangeMessageVisibilityBatch": leases.change_message_visibility_batch,
    "TagQueue": tags.tag_queue,
    "UntagQueue": tags.untag_queue,
    "ListQueueTags": tags.list_queue_tags,
    "AddPermission": permissions.add_permission,
    "RemovePermission": permissions.remove_permission,
    "ListDeadLetterSourceQueues": redrive.list_dead_letter_source_queues,
    "StartMessageMoveTask": redrive.start_message_move_task,
    "CancelMessageMoveTask": redrive.cancel_message_move_task,
    "ListMessageMoveTasks": redrive.list_message_move_tasks,
}
