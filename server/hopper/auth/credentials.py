"""The access keys a server accepts: access key id -> secret key and account id.

From a TOML file (`--credentials FILE`):

    [[credentials]]
    access_key = "AKIDTENANTA"
    secret_key = "tenant-a-secret"
    account_id = "111111111111"

or from the environment, `HOPPER_CREDENTIALS="AKID:secret:111111111111,AKID2:..."`
(AWS secret keys are base64-like: neither `:` nor `,` occurs in them).
"""

from __future__ import annotations

import re
import tomllib
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path

_ACCOUNT = re.compile(r"\d{12}")
_ACCESS_KEY = re.compile(r"[A-Za-z0-9]{1,128}")


class CredentialsError(ValueError):
    """The credentials could not be used (the message says where and why)."""


@dataclass(frozen=True)
class Credential:
    access_key: str
    secret_key: str = ""
    account_id: str = "000000000000"

    def __repr__(self) -> str:  # never print a secret into a log
        return f"Credential({self.access_key!r}, account_id={self.account_id!r})"


Keys = Mapping[str, Credential]


def load_file(path: str | Path) -> dict[str, Credential]:
    """The `[[credentials]]` of a TOML file. Raises CredentialsError."""
    try:
        document = tomllib.loads(Path(path).read_text())
    except (OSError, UnicodeDecodeError, tomllib.TOMLDecodeError) as error:
        raise CredentialsError(f"cannot read the credentials file {path}: {error}") from None
    entries = document.get("credentials")
    if not isinstance(entries, list) or not entries:
        raise CredentialsError(f"{path}: no [[credentials]] entries")
    return keyed(_entry(path, index, entry) for index, entry in enumerate(entries, start=1))


def parse_environment(text: str) -> dict[str, Credential]:
    """`AKID:secret:account` triples separated by commas. Raises CredentialsError."""
    found = []
    for item in filter(None, (part.strip() for part in text.split(","))):
        parts = item.split(":")
        if len(parts) != 3:
            raise CredentialsError(
                "HOPPER_CREDENTIALS entries must be access_key:secret_key:account_id"
            )
        found.append(checked(*parts, where="HOPPER_CREDENTIALS"))
    if not found:
        raise CredentialsError("HOPPER_CREDENTIALS holds no credentials")
    return keyed(found)


def checked(access_key: str, secret_key: str, account_id: str, *, where: str) -> Credential:
    if not _ACCESS_KEY.fullmatch(access_key):
        raise CredentialsError(f"{where}: access key {access_key!r} is not alphanumeric")
    if not secret_key:
        raise CredentialsError(f"{where}: access key {access_key} has an empty secret")
    if not _ACCOUNT.fullmatch(account_id):
        raise CredentialsError(f"{where}: account id {account_id!r} is not 12 digits")
    return Credential(access_key, secret_key, account_id)


def keyed(credentials: Iterable[Credential]) -> dict[str, Credential]:
    keys: dict[str, Credential] = {}
    for credential in credentials:
        if credential.access_key in keys:
            raise CredentialsError(f"access key {credential.access_key} is given twice")
        keys[credential.access_key] = credential
    return keys


def _entry(path: str | Path, index: int, entry: object) -> Credential:
    where = f"{path}: credentials entry {index}"
    if not isinstance(entry, dict):
        raise CredentialsError(f"{where} is not a table")
    values = [entry.get(name) for name in ("access_key", "secret_key", "account_id")]
    if not all(isinstance(value, str) for value in values):
        raise CredentialsError(f"{where} needs access_key, secret_key and account_id strings")
    access_key, secret_key, account_id = (str(value) for value in values)
    return checked(access_key, secret_key, account_id, where=where)
