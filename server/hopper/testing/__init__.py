"""hopper inside a test suite: `HopperServer`, a real hopper on a free port in a thread
of the test process, and a pytest plugin (`hopper.testing.plugin`, registered through
the `pytest11` entry point) whose `hopper_server` fixture gives one per session."""

from hopper.testing.server import HopperServer

__all__ = ["HopperServer"]
