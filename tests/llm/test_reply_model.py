"""The ledger keeps the model the server said answered (`reply_model`) beside the configured one (`model`),
and leaves it out where the reply named none."""

from __future__ import annotations

from pathlib import Path

from examiner.core import rundir
from examiner.core.config import EndpointSpec, Settings
from examiner.core.ledger_record import LedgerRecord
from examiner.llm import Gateway, GenerationConfig
from examiner.llm.ledger import answered, read_ledger
from tests.helpers.billing_server import BillingServer, question


async def ledger_of_two_asks(tmp_path: Path, served: str) -> list[LedgerRecord]:
    """The answered records of one question asked twice (the second a cache hit) of a server naming `served`."""
    server = BillingServer(lambda _n: "ok", 1.0, 2.0, model=served)
    url = await server.start()
    try:
        spec = EndpointSpec(base_url=url, model="alias-x", price_input_per_1m=1.0, price_output_per_1m=2.0)
        async with Gateway(Settings(endpoints={"paid": spec}, roles={"candidate": "paid"}), tmp_path) as gw:
            for _ in range(2):
                await gw.chat("candidate", question(0), GenerationConfig(max_tokens=16))
    finally:
        await server.stop()
    return answered(read_ledger(tmp_path / rundir.LEDGER))


async def test_ok_records_name_the_model_the_server_said_answered(tmp_path: Path) -> None:
    records = await ledger_of_two_asks(tmp_path, "served-y-2025-01")
    assert [r.cache_hit for r in records] == [False, True]
    assert all(r.model == "alias-x" and r.reply_model == "served-y-2025-01" for r in records)


async def test_a_reply_naming_no_model_leaves_reply_model_out(tmp_path: Path) -> None:
    records = await ledger_of_two_asks(tmp_path, "")
    assert len(records) == 2 and all(not r.has("reply_model") and r.model == "alias-x" for r in records)
