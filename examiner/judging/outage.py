"""Whether a judging run that judged nothing met an outage (every model call failed) rather than replies
that could not be read.

Why apart: `examiner judge` exits 75 (EXIT_OUTAGE) for the first, as `examiner run` does, so a job system
retries it later; the second (exit 4) needs a person (another prompt format, another judge), not a retry.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from examiner.core.config import Settings
from examiner.judging.row_runner import CALL_FAILED


def outage_line(records: Sequence[Mapping[str, Any]], settings: Settings) -> str | None:
    """One line naming the endpoint(s) when every record is a failed model call; None otherwise (some row
    judged, a reply unreadable, a budget stop)."""
    if not records or not all(r.get("failed") and str(r.get("unscored", "")).startswith(CALL_FAILED)
                              for r in records):
        return None
    errors = list(dict.fromkeys(str(r["unscored"])[len(CALL_FAILED):] for r in records))
    names = list(dict.fromkeys(error.split(":", 1)[0] for error in errors))
    where = ", ".join(f"{name} at {settings.endpoints[name].base_url}"
                      if name in settings.endpoints and settings.endpoints[name].base_url else name
                      for name in names)
    first = errors[0].split(":", 1)[1].strip() if ":" in errors[0] else errors[0]  # its endpoint is named above
    more = f" (and {len(errors) - 1} other errors)" if len(errors) > 1 else ""
    return f"every judging call failed ({len(records)} judgments): endpoint {where}: {first}{more}"


__all__ = ["outage_line"]
