"""hopper's own delivery of queues to HTTP targets (Hopper.Dispatch)."""

from hopper.dispatch.dispatchers import Dispatchers

__all__ = ["Dispatchers"]
