"""Filter policies rule by rule, on the examples of the SNS Developer Guide ("Amazon
SNS message filtering": its example message and the policies of each section), in
both scopes, and AWS's limits with the texts SNS refuses them with."""

from __future__ import annotations

import json

import pytest

from hopper.core.model import MessageAttribute
from hopper.sns.errors import InvalidParameter
from hopper.sns.filter_matching import matches_attributes, matches_body
from hopper.sns.filter_policies import check

# The guide's example message attributes.
ATTRIBUTES = {
    "customer_interests": MessageAttribute("String.Array", '["soccer", "rugby", "hockey"]'),
    "store": MessageAttribute("String", "example_corp"),
    "event": MessageAttribute("String", "order_placed"),
    "price_usd": MessageAttribute("Number", "210.75"),
    "source_ip": MessageAttribute("String", "10.0.0.255"),
    "blob": MessageAttribute("Binary", None, b"\x00\x01"),
}
# The same message as a body, for FilterPolicyScope=MessageBody.
BODY = json.dumps({
    "customer_interests": ["soccer", "rugby", "hockey"],
    "store": "example_corp",
    "event": "order_placed",
    "price_usd": 210.75,
    "delivery": {"address": {"city": "Lisbon", "zip": 1000}, "express": True, "note": None},
    "items": [{"sku": "a-1"}, {"sku": "b-2"}],
})


def passes(policy: dict, attributes=ATTRIBUTES) -> bool:
    return matches_attributes(check(json.dumps(policy), body_scope=False), attributes)


def body_passes(policy: dict, body: str = BODY) -> bool:
    return matches_body(check(json.dumps(policy), body_scope=True), body)


def refusal(policy: object, *, body_scope: bool = False) -> str:
    text = policy if isinstance(policy, str) else json.dumps(policy)
    with pytest.raises(InvalidParameter) as caught:
        check(text, body_scope=body_scope)
    return caught.value.text


def test_the_guides_combined_policy_matches_its_example_message() -> None:
    assert passes({
        "store": ["example_corp"],
        "event": [{"anything-but": "order_cancelled"}],
        "customer_interests": ["rugby", "football", "baseball"],
        "price_usd": [{"numeric": [">=", 100]}],
    })


def test_every_key_must_match_and_any_value_of_a_key() -> None:
    assert passes({"store": ["other", "example_corp"]})
    assert not passes({"store": ["example_corp"], "event": ["order_cancelled"]})


def test_a_missing_attribute_matches_no_value_condition() -> None:
    assert not passes({"color": ["red"]})
    assert not passes({"color": [{"anything-but": "red"}]})


def test_exact_strings_match_strings_and_array_elements_only() -> None:
    assert passes({"customer_interests": ["rugby", "tennis"]})
    assert not passes({"customer_interests": ["tennis"]})
    assert not passes({"price_usd": ["210.75"]})  # a Number is not the string


def test_exact_numbers_match_numbers_numerically() -> None:
    assert passes({"price_usd": [210.75]})
    assert passes({"price_usd": [{"numeric": ["=", 2.1075e2]}]})
    assert not passes({"store": [210.75]})


def test_numeric_ranges() -> None:
    assert passes({"price_usd": [{"numeric": [">", 0, "<=", 210.75]}]})
    assert not passes({"price_usd": [{"numeric": [">", 0, "<", 210.75]}]})
    assert passes({"price_usd": [{"numeric": ["<", 300]}]})
    assert not passes({"price_usd": [{"numeric": [">=", 300]}]})
    assert not passes({"store": [{"numeric": [">", 0]}]})


def test_anything_but_single_list_and_numbers() -> None:
    assert passes({"event": [{"anything-but": "order_cancelled"}]})
    assert not passes({"event": [{"anything-but": ["order_placed", "x"]}]})
    assert passes({"price_usd": [{"anything-but": [100, 500]}]})
    assert not passes({"price_usd": [{"anything-but": 210.75}]})
    # An array passes only when none of its values is excluded.
    assert not passes({"customer_interests": [{"anything-but": ["rugby", "tennis"]}]})


def test_anything_but_prefix_suffix_and_ignore_case() -> None:
    assert passes({"event": [{"anything-but": {"prefix": "order-"}}]})
    assert not passes({"event": [{"anything-but": {"prefix": "order_"}}]})
    assert not passes({"event": [{"anything-but": {"suffix": "_placed"}}]})
    assert not passes({"event": [{"anything-but": {"equals-ignore-case": "ORDER_PLACED"}}]})


def test_exists() -> None:
    assert passes({"store": [{"exists": True}]})
    assert not passes({"store": [{"exists": False}]})
    assert passes({"color": [{"exists": False}]})
    assert passes({"blob": [{"exists": True}]})  # binary: present, matching no value


def test_prefix_and_suffix_with_and_without_case() -> None:
    assert passes({"customer_interests": [{"prefix": "hock"}]})
    assert not passes({"customer_interests": [{"prefix": "bas"}]})
    assert passes({"event": [{"suffix": "_placed"}]})
    assert passes({"event": [{"prefix": {"equals-ignore-case": "ORDER"}}]})
    assert passes({"event": [{"suffix": {"equals-ignore-case": "PLACED"}}]})
    assert not passes({"event": [{"prefix": "ORDER"}]})


def test_equals_ignore_case() -> None:
    assert passes({"customer_interests": [{"equals-ignore-case": "RUGBY"}]})
    assert not passes({"store": [{"equals-ignore-case": "example"}]})


def test_cidr_matches_addresses_in_the_block() -> None:
    assert passes({"source_ip": [{"cidr": "10.0.0.0/24"}]})
    assert not passes({"source_ip": [{"cidr": "10.0.1.0/24"}]})
    v6 = {"source_ip": MessageAttribute("String", "2001:db8::1")}
    assert passes({"source_ip": [{"cidr": "2001:db8::/32"}]}, v6)


def test_or_takes_any_branch_along_with_the_other_keys() -> None:
    above = {"price_usd": [{"numeric": [">", 200]}]}
    assert passes({"store": ["example_corp"], "$or": [{"event": ["order_cancelled"]}, above]})
    assert not passes({"store": ["example_corp"],
                       "$or": [{"event": ["order_cancelled"]}, {"price_usd": [1]}]})


def test_body_scope_matches_nested_keys_arrays_and_literals() -> None:
    assert body_passes({"store": ["example_corp"], "delivery": {"address": {"city": ["Lisbon"]}}})
    assert body_passes({"delivery": {"address": {"zip": [{"numeric": [">", 999]}]}}})
    assert body_passes({"delivery": {"express": [True], "note": [None]}})
    assert body_passes({"items": {"sku": [{"prefix": "b-"}]}})
    assert not body_passes({"delivery": {"address": {"city": ["Porto"]}}})
    assert body_passes({"delivery": {"missing": [{"exists": False}]}})


def test_a_body_that_is_not_a_json_object_matches_nothing() -> None:
    assert not body_passes({"store": [{"exists": False}]}, "plain text")
    assert not body_passes({"store": [{"exists": False}]}, "[1, 2]")


def test_nested_policies_are_refused_in_the_attributes_scope() -> None:
    assert refusal({"a": {"b": ["c"]}}) == (
        "Invalid parameter: Filter policy scope MessageAttributes does not support nested "
        "filter policy"
    )


def test_five_keys_are_allowed_and_six_refused() -> None:
    check(json.dumps({f"k{n}": ["v"] for n in range(5)}), body_scope=False)
    assert refusal({f"k{n}": ["v"] for n in range(6)}) == (
        "Invalid parameter: FilterPolicy: Filter policy can not have more than 5 keys"
    )


def test_the_guides_or_example_counts_14_combinations_and_150_is_the_limit() -> None:
    guide = {"source": ["aws.cloudwatch", "aws.events"],
             "$or": [{"metricName": ["CPUUtilization", "ReadLatency"]},
                     {"metricType": ["MetricType"],
                      "$or": [{"metricId": [1234, 4321]}, {"spaceId": [1000, 2000, 3000]}]}]}
    policy = check(json.dumps(guide), body_scope=False)
    assert sum(_combinations(branch) for branch in policy.branches) == 14
    check(json.dumps({"a": list(range(150))}), body_scope=False)
    assert refusal({"a": list(range(151))}) == (
        "Invalid parameter: FilterPolicy: Filter policy is too complex"
    )
    assert refusal({"a": list(range(15)), "b": list(range(11))}).endswith("too complex")


def _combinations(branch) -> int:
    total = 1
    for _, conditions in branch:
        total *= len(conditions)
    return total


def test_policy_size_is_limited_to_256_kib() -> None:
    assert refusal('{"a": ["' + "x" * (256 * 1024) + '"]}').endswith("Filter policy is too long")


@pytest.mark.parametrize(("policy", "reason"), [
    ("not json", "failed to parse JSON."),
    (["a"], "Filter policy must be a JSON object"),
    ({"a": "b"}, '"a" must be an object or an array'),
    ({"a": []}, "Empty arrays are not allowed"),
    ({"a": [[1]]}, "Match value must be String, number, true, false, or null"),
    ({"a": [{"exists": "yes"}]}, "exists match pattern must be either true or false."),
    ({"a": [{"wildcard": "x*"}]}, "Unrecognized match type wildcard"),
    ({"a": [{"prefix": 1}]}, "prefix match pattern must be a string"),
    ({"a": [{"numeric": [">", "x"]}]}, "Value of > must be numeric"),
    ({"a": [{"numeric": ["!", 1]}]}, "Unrecognized numeric range operator: !"),
    ({"a": [{"numeric": [">", 5, "<", 1]}]}, "Bottom must be less than top"),
    ({"a": [{"numeric": ["<", 5, ">", 1]}]}, "Bad numeric range operator: >"),
    ({"a": [{"numeric": [">", 1, "<", 5, "<", 6]}]}, "Too many elements in numeric expression"),
    ({"a": [{"numeric": ["=", 1e10]}]}, "Value of = must be between -1.0E9 and 1.0E9 inclusive"),
    ({"a": [{"cidr": "10.0.0.1"}]}, "Malformed CIDR, one '/' required"),
    ({"a": [{"cidr": "10.0.0.999/8"}]}, "Nonstandard IP address: 10.0.0.999"),
    ({"a": [{"anything-but": {"numeric": [">", 1]}}]},
     "Value of anything-but must be an array or single string/number value."),
    ({"a": [{"prefix": "x", "suffix": "y"}]}, "Only one key allowed in match expression"),
    ({"$or": [{"a": ["b"]}]}, "$or must be an array of at least two objects"),
])
def test_invalid_policies_are_refused_with_a_reason(policy: object, reason: str) -> None:
    assert refusal(policy) == f"Invalid parameter: FilterPolicy: {reason}"
