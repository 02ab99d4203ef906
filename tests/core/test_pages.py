"""List pagination rules."""

from __future__ import annotations

import pytest

from hopper.core.errors import InvalidParameter
from hopper.core.pages import decode_token, encode_token, page_size


def test_a_token_round_trips_the_last_name() -> None:
    assert decode_token(encode_token("queue-42")) == "queue-42"


def test_no_token_means_from_the_start() -> None:
    assert decode_token(None) is None


@pytest.mark.parametrize("token", ["garbage!", "aGVsbG8=", "", "\u00e9"])
def test_a_token_hopper_did_not_issue_is_invalid(token: str) -> None:
    with pytest.raises(InvalidParameter) as caught:
        decode_token(token)
    assert caught.value.parameter == "NextToken"


@pytest.mark.parametrize(("given", "size"), [(None, 1000), (1, 1), (1000, 1000)])
def test_page_size_is_max_results_or_1000(given: int | None, size: int) -> None:
    assert page_size(given) == size


@pytest.mark.parametrize("given", [0, 1001, -1])
def test_max_results_outside_1_to_1000_is_invalid(given: int) -> None:
    with pytest.raises(InvalidParameter) as caught:
        page_size(given)
    assert caught.value.parameter == "MaxResults"
