"""Publish and PublishBatch."""

from __future__ import annotations

from typing import Any

from hopper.sns.envelopes import Addresses
from hopper.sns.errors import InvalidParameter, TopicError, invalid
from hopper.sns.model import Publication
from hopper.sns.publishing import PublishDraft
from hopper.wire.context import RequestContext
from hopper.wire.sns import params
from hopper.wire.sns.errors import batch_entry
from hopper.wire.sns.params import Tree
from hopper.wire.sns.parts import Sns
from hopper.wire.sns.render import members

Result = dict[str, Any] | None


async def publish(sns: Sns, ctx: RequestContext, p: Tree) -> Result:
    arn = params.text(p, "TopicArn") or params.text(p, "TargetArn")
    if arn is None:
        if params.text(p, "PhoneNumber") is not None:
            raise invalid("PhoneNumber Reason: hopper sends no SMS; publish to a topic")
        raise InvalidParameter("Invalid parameter: TopicArn or TargetArn Reason: no value "
                               "for required parameter")
    publication = await sns.deliveries.publish(arn, _draft(p), Addresses(ctx.base_url))
    return _published(publication)


async def publish_batch(sns: Sns, ctx: RequestContext, p: Tree) -> Result:
    entries = params.indexed(p, "PublishBatchRequestEntries", "member")
    drafts = [(params.text(entry, "Id") or "", _draft(entry)) for entry in entries]
    results = await sns.deliveries.publish_batch(
        params.required(p, "TopicArn"), drafts, Addresses(ctx.base_url)
    )
    done, failed = [], []
    for (entry_id, _), outcome in zip(drafts, results, strict=True):
        if isinstance(outcome, TopicError):
            code, message, sender = batch_entry(outcome)
            failed.append({"Id": entry_id, "Code": code, "Message": message,
                           "SenderFault": "true" if sender else "false"})
        else:
            done.append({"Id": entry_id, **_published(outcome)})
    return {"Successful": members(done), "Failed": members(failed)}


def _draft(node: Tree) -> PublishDraft:
    return PublishDraft(
        message=params.text(node, "Message"),
        subject=params.text(node, "Subject"),
        structure=params.text(node, "MessageStructure"),
        attributes=params.message_attributes(node),
        group_id=params.text(node, "MessageGroupId"),
        deduplication_id=params.text(node, "MessageDeduplicationId"),
    )


def _published(publication: Publication) -> dict[str, str]:
    out = {"MessageId": publication.id}
    if publication.sequence_number is not None:
        out["SequenceNumber"] = f"{publication.sequence_number:020d}"
    return out
