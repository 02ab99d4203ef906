"""QueueService over every store: queue rules (create, attributes, lists, tags, purge)."""

from __future__ import annotations

import pytest

from hopper.core.clock import FakeClock
from hopper.core.errors import (
    InvalidAttributeName,
    InvalidAttributeValue,
    InvalidParameter,
    PurgeInProgress,
    QueueDeletedRecently,
    QueueNameTaken,
    QueueNotFound,
)
from hopper.core.model import DeadLetterRule, MessageDraft
from hopper.core.service import QueueService
from hopper.core.store import QueueStore

from .factories import ACCOUNT, key


async def test_create_queue_then_get_it(service: QueueService) -> None:
    record = await service.create_queue(key("q"), {"visibility_timeout": 5.0}, {"t": "v"})
    assert record.config.visibility_timeout == 5.0
    assert record.tags == {"t": "v"}
    assert await service.get_queue(key("q")) == record


async def test_create_queue_with_the_same_settings_returns_the_existing_queue(
    service: QueueService, clock: FakeClock
) -> None:
    settings = {"visibility_timeout": 5.0, "extra": {"Policy": "{}"}}
    first = await service.create_queue(key("q"), settings, {})
    clock.advance(10)
    assert await service.create_queue(key("q"), settings, {}) == first
    # Settings not passed are not compared.
    assert await service.create_queue(key("q"), {}, {}) == first


async def test_create_queue_with_a_different_setting_raises_queue_name_taken(
    service: QueueService,
) -> None:
    await service.create_queue(key("q"), {"visibility_timeout": 5.0}, {})
    with pytest.raises(QueueNameTaken) as caught:
        await service.create_queue(key("q"), {"visibility_timeout": 6.0}, {})
    assert caught.value.attribute == "visibility_timeout"


async def test_create_queue_with_a_different_extra_names_the_sqs_attribute(
    service: QueueService,
) -> None:
    await service.create_queue(key("q"), {"extra": {"Policy": "{}"}}, {})
    with pytest.raises(QueueNameTaken) as caught:
        await service.create_queue(key("q"), {"extra": {"Policy": "{\"a\": 1}"}}, {})
    assert caught.value.attribute == "Policy"


@pytest.mark.parametrize("name", ["a", "A-b_9", "x" * 80])
async def test_standard_names_of_1_to_80_allowed_characters_pass(
    service: QueueService, name: str
) -> None:
    record = await service.create_queue(key(name), {}, {})
    assert record.key == key(name)
    assert await service.get_queue(key(name)) == record


@pytest.mark.parametrize("name", ["", "x" * 81, "has space", "dot.ted", "q.fifo", "é"])
async def test_other_standard_names_are_invalid(service: QueueService, name: str) -> None:
    with pytest.raises(InvalidParameter) as caught:
        await service.create_queue(key(name), {}, {})
    assert caught.value.parameter == "QueueName"
    assert caught.value.reason == (
        "Can only include alphanumeric characters, hyphens, or underscores. 1 to 80 in length"
    )


async def test_fifo_name_suffix_counts_towards_80(service: QueueService) -> None:
    await service.create_queue(key("x" * 75 + ".fifo"), {"fifo": True}, {})
    with pytest.raises(InvalidParameter):
        await service.create_queue(key("x" * 76 + ".fifo"), {"fifo": True}, {})


async def test_fifo_queue_needs_the_fifo_suffix(service: QueueService) -> None:
    with pytest.raises(InvalidParameter) as caught:
        await service.create_queue(key("plain"), {"fifo": True}, {})
    assert "must end with .fifo suffix" in caught.value.reason


async def test_content_based_dedup_is_unknown_on_a_standard_queue(service: QueueService) -> None:
    with pytest.raises(InvalidAttributeName):
        await service.create_queue(key("q"), {"content_based_deduplication": True}, {})


async def test_recreating_within_60_seconds_of_delete_is_refused(
    service: QueueService, clock: FakeClock
) -> None:
    await service.create_queue(key("q"), {}, {})
    await service.delete_queue(key("q"))
    clock.advance(59)
    with pytest.raises(QueueDeletedRecently):
        await service.create_queue(key("q"), {}, {})
    clock.advance(1)
    await service.create_queue(key("q"), {}, {})


async def test_recreating_at_once_is_allowed_without_timing_rules(
    store: QueueStore, clock: FakeClock
) -> None:
    service = QueueService(store, clock=clock, enforce_timing_rules=False)
    await service.create_queue(key("q"), {}, {})
    await service.delete_queue(key("q"))
    again = await service.create_queue(key("q"), {}, {})
    assert await service.get_queue(key("q")) == again


async def test_dead_letter_target_must_exist(service: QueueService) -> None:
    rule = DeadLetterRule(key("missing"), 3)
    with pytest.raises(InvalidAttributeValue) as caught:
        await service.create_queue(key("q"), {"dead_letter": rule}, {})
    assert caught.value.attribute == "dead_letter"


async def test_dead_letter_target_must_be_of_the_same_type(service: QueueService) -> None:
    await service.create_queue(key("dlq"), {}, {})
    with pytest.raises(InvalidAttributeValue):
        await service.create_queue(
            key("q.fifo"), {"fifo": True, "dead_letter": DeadLetterRule(key("dlq"), 3)}, {}
        )
    await service.create_queue(key("q"), {"dead_letter": DeadLetterRule(key("dlq"), 3)}, {})
    await service.create_queue(key("q2"), {}, {})
    with pytest.raises(InvalidAttributeValue):
        await service.set_queue_attributes(
            key("q2"), {"dead_letter": DeadLetterRule(key("nope"), 3)}
        )


async def test_unknown_queue_raises_queue_not_found(service: QueueService) -> None:
    for call in (
        service.get_queue(key("nope")),
        service.delete_queue(key("nope")),
        service.queue_stats(key("nope")),
        service.purge(key("nope")),
        service.send(key("nope"), MessageDraft("x")),
        service.receive(key("nope")),
        service.tag_queue(key("nope"), {"a": "b"}),
    ):
        with pytest.raises(QueueNotFound):
            await call


async def test_set_queue_attributes_changes_only_what_was_passed(service: QueueService) -> None:
    await service.create_queue(
        key("q"), {"delay_seconds": 3.0, "extra": {"Policy": "p", "KmsMasterKeyId": "k"}}, {}
    )
    await service.set_queue_attributes(
        key("q"), {"visibility_timeout": 9.0, "extra": {"Policy": "p2", "KmsMasterKeyId": ""}}
    )
    config = (await service.get_queue(key("q"))).config
    assert (config.delay_seconds, config.visibility_timeout) == (3.0, 9.0)
    # The removed key takes SQS-managed encryption off with it (recorded on AWS).
    assert config.extra == {"Policy": "p2", "SqsManagedSseEnabled": "false"}


async def test_queue_type_cannot_change(service: QueueService) -> None:
    await service.create_queue(key("q"), {}, {})
    await service.create_queue(key("f.fifo"), {"fifo": True}, {})
    with pytest.raises(InvalidAttributeName):
        await service.set_queue_attributes(key("q"), {"fifo": True})
    with pytest.raises(InvalidAttributeValue):
        await service.set_queue_attributes(key("f.fifo"), {"fifo": False})


async def test_list_queues_pages_with_an_opaque_token(service: QueueService) -> None:
    for name in ["a", "b", "c", "d", "e"]:
        await service.create_queue(key(name), {}, {})
    first = await service.list_queues(ACCOUNT, prefix="", max_results=2, next_token=None)
    assert [k.name for k in first.keys] == ["a", "b"] and first.next_token is not None
    second = await service.list_queues(
        ACCOUNT, prefix="", max_results=2, next_token=first.next_token
    )
    assert [k.name for k in second.keys] == ["c", "d"]
    last = await service.list_queues(
        ACCOUNT, prefix="", max_results=2, next_token=second.next_token
    )
    assert [k.name for k in last.keys] == ["e"] and last.next_token is None


async def test_list_queues_without_max_results_has_no_token(service: QueueService) -> None:
    for name in ["a", "b", "pa", "pb"]:
        await service.create_queue(key(name), {}, {})
    page = await service.list_queues(ACCOUNT, prefix="p", max_results=None, next_token=None)
    assert [k.name for k in page.keys] == ["pa", "pb"] and page.next_token is None


async def test_list_queues_rejects_bad_tokens_and_sizes(service: QueueService) -> None:
    with pytest.raises(InvalidParameter):
        await service.list_queues(ACCOUNT, prefix="", max_results=None, next_token="nonsense")
    with pytest.raises(InvalidParameter):
        await service.list_queues(ACCOUNT, prefix="", max_results=1001, next_token=None)


async def test_list_dead_letter_sources_pages_by_name(service: QueueService) -> None:
    await service.create_queue(key("dlq"), {}, {})
    for name in ["s3", "s1", "s2"]:
        await service.create_queue(key(name), {"dead_letter": DeadLetterRule(key("dlq"), 2)}, {})
    first = await service.list_dead_letter_sources(key("dlq"), max_results=2, next_token=None)
    assert [k.name for k in first.keys] == ["s1", "s2"]
    rest = await service.list_dead_letter_sources(
        key("dlq"), max_results=2, next_token=first.next_token
    )
    assert [k.name for k in rest.keys] == ["s3"] and rest.next_token is None


async def test_a_queue_holds_up_to_50_tags(service: QueueService) -> None:
    await service.create_queue(key("q"), {}, {f"k{i}": "v" for i in range(49)})
    await service.tag_queue(key("q"), {"k49": "v"})
    await service.tag_queue(key("q"), {"k0": "overwritten"})
    with pytest.raises(InvalidParameter):
        await service.tag_queue(key("q"), {"one-too-many": "v"})
    await service.untag_queue(key("q"), ["k0", "k1"])
    assert len((await service.get_queue(key("q"))).tags) == 48


async def test_tag_keys_and_values_are_bounded(service: QueueService) -> None:
    await service.create_queue(key("q"), {}, {})
    await service.tag_queue(key("q"), {"k" * 128: "v" * 256, "empty": ""})
    with pytest.raises(InvalidParameter):
        await service.tag_queue(key("q"), {"k" * 129: "v"})
    with pytest.raises(InvalidParameter):
        await service.tag_queue(key("q"), {"k": "v" * 257})


async def test_a_second_purge_within_60_seconds_is_refused(
    service: QueueService, clock: FakeClock
) -> None:
    await service.create_queue(key("q"), {}, {})
    await service.send(key("q"), MessageDraft("x"))
    await service.purge(key("q"))
    assert (await service.queue_stats(key("q"))).visible == 0
    clock.advance(59)
    with pytest.raises(PurgeInProgress):
        await service.purge(key("q"))
    clock.advance(1)
    await service.purge(key("q"))


async def test_all_queues_lists_every_account_or_only_the_accounts_kept(
    service: QueueService,
) -> None:
    # given queues in two accounts
    for account, name in [("111111111111", "b"), ("111111111111", "a"), ("222222222222", "c")]:
        await service.create_queue(key(name, account), {}, {})
    # then every queue comes, by account then name; with keep, only the kept account's
    every = [record.key async for record in service.all_queues()]
    assert every == [key("a", "111111111111"), key("b", "111111111111"), key("c", "222222222222")]
    kept = [r.key async for r in service.all_queues(keep=lambda account: account == "222222222222")]
    assert kept == [key("c", "222222222222")]
