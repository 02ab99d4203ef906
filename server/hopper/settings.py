"""The server's settings: CLI flags over `HOPPER_*` environment variables over defaults."""

from __future__ import annotations

import dataclasses
import os
import tomllib
from collections.abc import Mapping
from dataclasses import dataclass, fields
from pathlib import Path
from typing import Any

from hopper.core.outcomes import RECEIPT_MODES


@dataclass(frozen=True)
class Settings:
    host: str = "127.0.0.1"
    port: int = 9324
    account_id: str = "000000000000"
    region: str = "us-east-1"
    database_url: str | None = None  # None: the in-memory store
    database_schema: str = "hopper"
    # Comma-separated nats:// URLs of a JetStream cluster: the JetStream store.
    nats_url: str | None = None
    nats_replicas: int = 1  # replication of every stream and bucket hopper creates
    # boto3 escapes non-ASCII as \uXXXX, so a 1 MiB message can take ~6 MiB of JSON.
    max_body_bytes: int = 8 * 1024 * 1024
    relaxed_timing: bool = False  # drop AWS's 60-second rules (for test suites)
    log_level: str = "info"
    log_format: str = "text"  # or "json": one JSON object per line
    workers: int = 1  # server processes; more than one needs the database
    # Seconds: shorter visibility timeouts are raised to it (None: no floor).
    visibility_floor: int | None = None
    # "off" or "sigv4": verify AWS Signature V4 against the credentials (hopper.auth).
    auth: str = "off"
    # A TOML file of [[credentials]] (else HOPPER_CREDENTIALS holds them inline).
    credentials_file: str | None = None
    # Requests per second per access key (per client address with auth off); None: no limit.
    rate_limit: int | None = None
    # A TOML file: [settings] under flags and environment, [[queues]] declared at start-up.
    config: str | None = None
    # Refuse CreateQueue (of anything but an existing queue, unchanged) and DeleteQueue.
    declared_queues_only: bool = False
    # Seconds a connection has to deliver a whole request, from its opening or from its
    # previous answer; then it is closed (idle keep-alive and slow clients alike).
    idle_timeout: int = 15
    # Connections open at once, per server process; None: the open-files limit less a
    # reserve (hopper.connection_limits). Beyond it a new connection is answered 503.
    max_connections: int | None = None
    # Of those, the most one client address may hold; None: half of them. (A client
    # holding every connection locked everyone else out.)
    max_connections_per_address: int | None = None
    # How superseded receipts are answered: "strict" (ReceiptHandleIsInvalid) or "aws"
    # (as AWS answers them; core/outcomes.py).
    receipts: str = "strict"
    # Comma-separated origins (https://host[:port]) whose web pages may call hopper
    # beyond its own console's; "*": every one (hopper.browsers).
    allow_origin: str | None = None
    # Comma-separated Host names answered beyond localhost and IP addresses while
    # listening on a loopback address; "*": every one (hopper.browsers).
    allow_host: str | None = None
    # A bearer token scrapes of /metrics must send; None: /metrics is open with auth
    # off and refused with auth on (hopper.observability.scrapes).
    metrics_token: str | None = None
    # Epoch seconds: console sessions issued before are void (revokes them all at once;
    # hopper.console.sessions). None: none.
    console_sessions_since: int | None = None

    def __post_init__(self) -> None:
        floor = self.visibility_floor
        if floor is not None and not 1 <= floor <= MAX_VISIBILITY_FLOOR:
            raise SettingsError(
                f"the visibility floor must be 1 to {MAX_VISIBILITY_FLOOR} seconds, not {floor}"
            )
        if self.log_format not in LOG_FORMATS:
            raise SettingsError(
                f"the log format must be one of {', '.join(LOG_FORMATS)}, not {self.log_format!r}"
            )
        if self.auth not in AUTH_MODES:
            raise SettingsError(f"--auth must be one of {', '.join(AUTH_MODES)}, not {self.auth!r}")
        if self.idle_timeout < 1:
            raise SettingsError(
                f"the idle timeout must be at least 1 second, not {self.idle_timeout}"
            )
        if self.max_connections is not None and self.max_connections < 1:
            raise SettingsError(
                f"the connection cap must be at least 1, not {self.max_connections}"
            )
        share = self.max_connections_per_address
        if share is not None and share < 1:
            raise SettingsError(f"the connections per address must be at least 1, not {share}")
        if self.receipts not in RECEIPT_MODES:
            raise SettingsError(
                f"--receipts must be one of {', '.join(RECEIPT_MODES)}, not {self.receipts!r}"
            )
        _check_metrics_token(self.metrics_token)
        if self.nats_url is not None and self.database_url is not None:
            raise SettingsError("choose one store: --database-url or --nats-url, not both")
        if not 1 <= self.nats_replicas <= MAX_NATS_REPLICAS:
            raise SettingsError(
                f"--nats-replicas must be 1 to {MAX_NATS_REPLICAS}, not {self.nats_replicas}"
            )
        if self.rate_limit is not None and self.rate_limit < 1:
            raise SettingsError(
                f"the rate limit must be at least 1 request per second, not {self.rate_limit}"
            )


class SettingsError(ValueError):
    """A setting's value could not be understood (the message names it)."""


AUTH_MODES = ("off", "sigv4")
LOG_FORMATS = ("text", "json")

# JetStream replicates a stream on at most five servers.
MAX_NATS_REPLICAS = 5

# A floor can be at most SQS's longest visibility timeout (12 hours).
MAX_VISIBILITY_FLOOR = 43_200


_TRUE = {"1", "true", "yes", "on"}
_FALSE = {"0", "false", "no", "off", ""}


def load(
    flags: Mapping[str, Any] | None = None, environ: Mapping[str, str] | None = None
) -> Settings:
    """Settings from `flags` (field name -> value; None means "not given"), then the
    `HOPPER_<FIELD>` environment variables, then the defaults. Raises SettingsError."""
    flags = flags or {}
    environ = os.environ if environ is None else environ
    values: dict[str, Any] = {}
    for spec in fields(Settings):
        given = flags.get(spec.name)
        if given is not None:
            values[spec.name] = given
            continue
        text = environ.get("HOPPER_" + spec.name.upper())
        if text is not None:
            values[spec.name] = _parse(spec, text)
    if values.get("config") is not None:
        # The config file's [settings] sit under flags and environment.
        values = {**file_settings(values["config"]), **values}
    return dataclasses.replace(Settings(), **values)


def read(path: str | Path) -> dict[str, Any]:
    """The config file (`hopper serve --config FILE`) as a table: its `[settings]` are
    read here, its `[[queues]]` by hopper/declared.py. Raises SettingsError."""
    try:
        return tomllib.loads(Path(path).read_text())
    except (OSError, UnicodeDecodeError, tomllib.TOMLDecodeError) as error:
        raise SettingsError(f"cannot read the config file {path}: {error}") from None


def file_settings(path: str | Path) -> dict[str, Any]:
    """The `[settings]` table of the config file, checked against Settings' fields."""
    table = read(path).get("settings", {})
    if not isinstance(table, dict):
        raise SettingsError(f"{path}: [settings] must be a table")
    known = {spec.name: spec for spec in fields(Settings)}
    for name, value in table.items():
        spec = known.get(name)
        if spec is None or name == "config":
            raise SettingsError(f"{path}: unknown setting {name!r}")
        if not _fits(str(spec.type), value):
            raise SettingsError(f"{path}: setting {name} has the wrong type ({value!r})")
    return dict(table)


def _fits(kind: str, value: Any) -> bool:
    if "bool" in kind:
        return isinstance(value, bool)
    if "int" in kind:
        return isinstance(value, int) and not isinstance(value, bool)
    return isinstance(value, str)


def as_environment(settings: Settings) -> dict[str, str]:
    """The `HOPPER_*` variables that `load` turns back into `settings`: how the worker
    processes of `hopper serve --workers N` get the settings their parent was given."""
    environ = {}
    for spec in fields(Settings):
        value = getattr(settings, spec.name)
        if value is None:
            continue  # None is every optional setting's default
        name = "HOPPER_" + spec.name.upper()
        if isinstance(value, bool):
            environ[name] = "1" if value else "0"
        else:
            environ[name] = str(value)
    return environ


def _parse(spec: dataclasses.Field[Any], text: str) -> Any:
    name = "HOPPER_" + spec.name.upper()
    kind = str(spec.type)
    if kind == "int":
        try:
            return int(text)
        except ValueError:
            raise SettingsError(f"{name} must be an integer, not {text!r}") from None
    if kind == "bool":
        lowered = text.strip().lower()
        if lowered not in _TRUE | _FALSE:
            raise SettingsError(f"{name} must be 1 or 0, not {text!r}")
        return lowered in _TRUE
    if kind == "str | None":
        return text or None
    if kind == "int | None":
        try:
            return int(text) if text.strip() else None
        except ValueError:
            raise SettingsError(f"{name} must be an integer, not {text!r}") from None
    return text


# Long enough that it cannot be guessed in any number of scrapes.
MIN_METRICS_TOKEN_LENGTH = 16


def _check_metrics_token(token: str | None) -> None:
    """Refuses a token that cannot be one (too short, or not a header's visible ASCII)."""
    if token is None:
        return
    if len(token) < MIN_METRICS_TOKEN_LENGTH:
        raise SettingsError(
            f"--metrics-token must be at least {MIN_METRICS_TOKEN_LENGTH} characters"
        )
    if not all("!" <= c <= "~" for c in token):
        raise SettingsError("--metrics-token must be visible ASCII characters (no spaces)")
