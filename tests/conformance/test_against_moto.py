"""The conformance run (`python -m conformance`, see conformance/README.md) as a test:
every scenario on moto and on hopper's two stores, answers compared field by field.

The run is a subprocess, as a person runs it: moto and hopper are started by the runner
itself, and moto's own warnings stay out of this pytest's warnings-as-errors.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
# The runner bounds its own waits (30 s per server start, 600 s per recording);
# this is the outer bound of a whole run, both stores.
RUN_TIMEOUT = 1500


@pytest.fixture(scope="module")
def report(tmp_path_factory: pytest.TempPathFactory) -> dict:
    """The JSON report of one full run (both stores)."""
    path = tmp_path_factory.mktemp("conformance") / "report.json"
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(
        filter(None, [str(ROOT), str(ROOT / "server"), os.environ.get("PYTHONPATH")]))}
    done = subprocess.run(
        [sys.executable, "-m", "conformance", "--store", "both", "--report", str(path)],
        cwd=ROOT, env=env, capture_output=True, text=True, timeout=RUN_TIMEOUT,
    )
    if not path.exists():
        pytest.fail(f"the conformance run wrote no report (exit {done.returncode}):\n"
                    f"{done.stdout[-4000:]}\n{done.stderr[-4000:]}")
    result = json.loads(path.read_text(encoding="utf-8"))
    result["exit"] = done.returncode
    return result


@pytest.mark.parametrize("store", ["memory", "postgres"])
def test_hopper_answers_as_moto_does_except_the_known_differences(report: dict, store: str):
    outcome = report["stores"][store]
    lines = [f"{scenario}:\n    " + "\n    ".join(found)
             for scenario, found in outcome["unexpected"].items()]
    assert not lines, (f"{store}: {outcome['summary']}\nunexpected differences "
                       "(fix hopper, or list a reviewed reason in "
                       "conformance/known_differences.toml):\n" + "\n".join(lines))


def test_the_run_exits_zero(report: dict):
    assert report["exit"] == 0, json.dumps(report["stores"], indent=2)[:4000]


def test_every_known_difference_still_matches_something(report: dict):
    assert not report["stale"], "entries in known_differences.toml that matched nothing:\n" + (
        "\n".join(report["stale"]))


@pytest.mark.parametrize("store", ["memory", "postgres"])
def test_scenarios_call_every_sqs_action_over_both_protocols(report: dict, store: str):
    uncalled = {p: names for p, names in report["stores"][store]["uncalled"].items() if names}
    assert not uncalled, f"actions no scenario calls, by protocol: {uncalled}"
