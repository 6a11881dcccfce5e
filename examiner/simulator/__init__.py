"""Simulated OpenAI-compatible backend: deterministic, role-aware synthetic models for tests and dry runs.

    from examiner.simulator import SimulatedServer, unit_category
    with SimulatedServer({"knowledge": {"known": 0.6, "wrong": 0.2, "unknown": 0.2}}, seed=0) as base_url:
        ...  # point an OpenAI client (or the gateway) at base_url

See behaviours.py for the request information behaviours read (role and stage headers, the
X-Examiner-Hints header, data blocks; never prompt wording) and the behaviour registry, faults.py for fault
injection, server.OPTION_NAMES for the options.
"""

from examiner.simulator.behaviours import (
    DEFAULT_PROFILE,
    DEFAULT_RECALL,
    SimRequest,
    claim_markers,
    find_behaviour,
    oracle_key,
    ref_ids,
    register_behaviour,
    unit_category,
)
from examiner.simulator.faults import FAULT_KINDS, mixed_faults
from examiner.simulator.process import SimulatedProcess
from examiner.simulator.schema_faker import conform, fake_value
from examiner.simulator.server import OPTION_NAMES, SimulatedServer

# Every role's behaviours register with the server when the package loads, in this process or another.
from examiner.simulator import degenerate, judging_roles, meta_roles  # noqa: E402,F401  isort: skip
from examiner.simulator import memory_roles  # noqa: E402,F401  isort: skip
from examiner.simulator import control_roles  # noqa: E402,F401  isort: skip
from examiner.simulator import question_defects  # noqa: E402,F401  isort: skip  (after degenerate: it wraps its question)

__all__ = [
    "DEFAULT_PROFILE",
    "DEFAULT_RECALL",
    "FAULT_KINDS",
    "OPTION_NAMES",
    "SimRequest",
    "SimulatedProcess",
    "SimulatedServer",
    "claim_markers",
    "conform",
    "fake_value",
    "find_behaviour",
    "mixed_faults",
    "oracle_key",
    "ref_ids",
    "register_behaviour",
    "unit_category",
]
