"""The benchmark's commands, run briefly against hopper's in-memory store, so the bench
code cannot rot unnoticed: every workload of `python -m bench`, every curve of
`python -m bench scale` and the in-memory store's bytes per message. Seconds, not
minutes; the figures are not checked (a shared CI machine makes them noise), only
that each command runs through and prints or draws what it should."""

from __future__ import annotations

import os
import re
import subprocess
import sys
import xml.etree.ElementTree as ElementTree
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def run_bench(*args: str) -> str:
    env = {**os.environ, "PYTHONPATH": str(ROOT / "server")}
    done = subprocess.run(
        [sys.executable, "-m", *args],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=180,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    return done.stdout


def test_the_benchmark_runs_every_workload_against_the_memory_store_and_the_floor():
    table = run_bench(
        "bench", "--targets", "hopper-memory", "floor", "--seconds", "0.3", "--runs", "1",
        "--clients", "4", "--rate", "50",
    )
    rows = columns(table)
    for label in ("SendMessage", "SendMessageBatch of 10", "drain (receive 10 + delete)",
                  "FIFO SendMessage", "FIFO SendMessageBatch of 10", "FIFO drain"):
        for unit in ("msg/s", "CPU us/msg", "CPU floors"):
            assert rows[f"{label}, {unit}"]["hopper-memory"] != "-", rows[f"{label}, {unit}"]
    # The floor serves SendMessage only; its CPU per request is the unit of the floors.
    assert rows["SendMessage, CPU us/msg"]["floor"] != "-"
    assert rows["SendMessage, CPU floors"]["floor"] == "1.00"
    assert rows["drain (receive 10 + delete), msg/s"]["floor"] == "-"
    assert "end-to-end p50, ms" in rows


def columns(table: str) -> dict[str, dict[str, str]]:
    """The table's cells by row label and column header (cells are set apart by two
    spaces or more; a cell holds at most single spaces)."""
    lines = [line for line in table.splitlines() if line and not line.startswith("-")]
    header = re.split(r"\s{2,}", lines[0].strip())
    rows = {}
    for line in lines[1:]:
        cells = re.split(r"\s{2,}", line.strip())
        if len(cells) >= len(header):  # the notes under the table are no rows
            rows[cells[0]] = dict(zip(header, cells[1:], strict=False))
    return rows


def test_the_scale_section_draws_every_curve(tmp_path):
    printed = run_bench(
        "bench", "scale", "--target", "hopper-memory", "--seconds", "0.3", "--clients", "4",
        "--depths", "100", "300", "--queues", "1", "3", "--polls", "4", "8",
        "--sizes", "1024", "65536", "--wakes", "2", "--out", str(tmp_path),
    )
    drawn = sorted(path.name for path in tmp_path.glob("*.svg"))
    assert drawn == ["depth.svg", "polls-wake.svg", "polls.svg", "queues-list.svg",
                     "queues.svg", "size-cpu.svg", "size.svg"]
    for path in tmp_path.glob("*.svg"):
        ElementTree.parse(path)  # well-formed
    assert (tmp_path / "scale.json").exists()
    assert "polls answered per send 1.00" in printed, printed


def test_the_memory_store_bytes_per_message_are_measured():
    printed = run_bench("bench.memory_bytes", "--messages", "2000", "--top", "0")
    assert "bytes per stored 100-byte message" in printed
