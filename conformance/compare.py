"""Field-by-field comparison of two servers' normalised answers to one scenario.

Each answer is flattened into `path -> value` leaves; a path names the answer by its
place and operation, then the field: `#2 SendMessage/response/MD5OfMessageBody`,
`#4 ReceiveMessage/response/Messages/0/Attributes/SentTimestamp`. A field one server
has and the other lacks compares against `ABSENT`. `params` are not compared: they are
the same by construction.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

ABSENT = "<absent>"


@dataclass(frozen=True)
class Difference:
    path: str
    hopper: Any
    moto: Any

    def describe(self) -> str:
        return f"{self.path}: hopper={_show(self.hopper)} moto={_show(self.moto)}"


def differences(hopper: list[dict[str, Any]], moto: list[dict[str, Any]]) -> list[Difference]:
    """Every leaf where the two answer lists differ, in path order."""
    ours, theirs = _leaves_of(hopper), _leaves_of(moto)
    found = []
    for path in sorted(ours.keys() | theirs.keys(), key=_path_order):
        mine, other = ours.get(path, ABSENT), theirs.get(path, ABSENT)
        if mine != other:
            found.append(Difference(path, mine, other))
    return found


def _leaves_of(answers: list[dict[str, Any]]) -> dict[str, Any]:
    leaves: dict[str, Any] = {}
    for index, answer in enumerate(answers):
        head = f"#{index} {answer.get('op', '?')}"
        body = {k: v for k, v in answer.items() if k not in ("params", "op")}
        _walk(body, head, leaves)
    return leaves


def _walk(value: Any, path: str, leaves: dict[str, Any]) -> None:
    if isinstance(value, dict) and value:
        for key, item in value.items():
            _walk(item, f"{path}/{key}", leaves)
    elif isinstance(value, list) and value:
        for index, item in enumerate(value):
            _walk(item, f"{path}/{index}", leaves)
    else:
        leaves[path] = value


def _path_order(path: str) -> tuple[int, str]:
    number = path[1:].split(" ", 1)[0]
    return (int(number) if number.isdigit() else 0, path)


def _show(value: Any) -> str:
    text = repr(value)
    return text if len(text) <= 160 else text[:157] + "..."
