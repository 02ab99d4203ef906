"""The scenarios, one module per area; importing a module registers its scenarios."""

from __future__ import annotations

import importlib

MODULES = ("queues", "attributes", "messages", "receipts", "batches", "tags", "query",
           "redrive", "fifo", "permissions", "move_tasks", "fidelity", "sns")


def load_all() -> None:
    """Import every scenario module (each registers its scenarios with `@scenario`)."""
    for module in MODULES:
        importlib.import_module(f"conformance.scenarios.{module}")
