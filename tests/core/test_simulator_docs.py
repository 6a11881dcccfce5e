"""docs/SIMULATOR.md names every knob the simulated backend reads, so a new option cannot stay undocumented."""

from __future__ import annotations

import re
from pathlib import Path

from examiner.simulator import OPTION_NAMES

ROOT = Path(__file__).resolve().parents[2]
READS = re.compile(r"""(?:\.option\(|options\.get\(|_number_from\(req,\s*|_shares\(options,\s*)["']([a-z_]+)["']""")
"""How the simulator's modules read an endpoint option: req.option("x", ...), options.get("x"), ..."""


def _read_options() -> set[str]:
    found = set(OPTION_NAMES)
    for module in (ROOT / "examiner" / "simulator").glob("*.py"):
        found |= set(READS.findall(module.read_text(encoding="utf-8")))
    return found


def test_every_option_the_simulator_reads_is_documented() -> None:
    names = _read_options()
    assert {"knowledge", "latency_s", "faults", "accuracy", "pairwise_accuracy", "batch_faults"} <= names
    text = (ROOT / "docs" / "SIMULATOR.md").read_text(encoding="utf-8")
    missing = sorted(name for name in names if f"`{name}`" not in text)
    assert not missing, f"options read by examiner/simulator but not in docs/SIMULATOR.md: {missing}"


def test_the_page_is_linked_from_the_readme() -> None:
    assert "(docs/SIMULATOR.md)" in (ROOT / "README.md").read_text(encoding="utf-8")
