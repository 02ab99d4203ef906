"""Logging set-up for `hopper serve`: plain lines, or one JSON object per line
(`--log-format json`) for log shippers. Fields given to a log call as `extra`
(request_id, action, outcome, ...) become fields of the JSON object."""

from __future__ import annotations

import json
import logging
import logging.config
import time
from typing import Any

FORMATS = ("text", "json")

# What every LogRecord has; anything else on a record came in through `extra`.
_STANDARD = set(vars(logging.makeLogRecord({}))) | {"message", "asctime", "taskName"}


class JsonFormatter(logging.Formatter):
    def format(self, record: logging.LogRecord) -> str:
        entry: dict[str, Any] = {
            "time": _timestamp(record.created),
            "level": record.levelname.lower(),
            "logger": record.name,
            "message": record.getMessage(),
        }
        for name, value in vars(record).items():
            if name not in _STANDARD and not name.startswith("_"):
                entry[name] = value
        if record.exc_info:
            entry["exception"] = self.formatException(record.exc_info)
        return json.dumps(entry, default=str)


def configure(log_format: str, level: str) -> None:
    """Send every logger's records to stderr in `log_format`."""
    logging.config.dictConfig(config(log_format, level))


def config(log_format: str, level: str) -> dict[str, Any]:
    """The logging set-up, as `logging.config.dictConfig` (and uvicorn's `log_config`,
    applied again in each worker process) takes it: one stderr handler on the root
    logger, uvicorn's loggers passing their records up to it."""
    formatter: dict[str, Any] = (
        {"()": "hopper.observability.logs.JsonFormatter"}
        if log_format == "json"
        else {"format": "%(message)s"}
    )
    return {
        "version": 1,
        "disable_existing_loggers": False,
        "formatters": {"hopper": formatter},
        "handlers": {
            "stderr": {
                "class": "logging.StreamHandler",
                "formatter": "hopper",
                "stream": "ext://sys.stderr",
            }
        },
        "root": {"handlers": ["stderr"], "level": level.upper()},
        "loggers": {
            name: {"handlers": [], "propagate": True}
            for name in ("uvicorn", "uvicorn.error", "uvicorn.access")
        },
    }


def _timestamp(created: float) -> str:
    seconds = time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(created))
    return f"{seconds}.{int(created % 1 * 1000):03d}Z"
