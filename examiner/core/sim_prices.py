"""Illustrative prices for the simulated twins of unpriced endpoints (`--simulate`), and how to tell them.

Why: `--simulate` gives every endpoint a simulated twin billed at that endpoint's prices, so a simulated
run predicts what the real one costs. An endpoint without prices (the embedded `local` model, a config that
sets none) made every simulated cost $0.0000, and a cost demo showed nothing. Such a twin is billed at the
illustrative prices below instead, and every cost line of the run says the dollars are illustrative. The
twin is recognised from the run's saved settings alone (twin `sim-X` simulated, `X` unpriced, the twin at
these prices), so nothing new is stored and estimates (which price real endpoints) are not affected.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from examiner.core.config import Settings

ILLUSTRATIVE_INPUT_PER_1M = 0.15
"""US dollars per million prompt tokens of an unpriced endpoint's simulated twin (illustrative, not a quote)."""
ILLUSTRATIVE_OUTPUT_PER_1M = 0.60
"""US dollars per million completion tokens of an unpriced endpoint's simulated twin (illustrative)."""
ILLUSTRATIVE_PRICES = {"price_input_per_1m": ILLUSTRATIVE_INPUT_PER_1M, "price_output_per_1m": ILLUSTRATIVE_OUTPUT_PER_1M}
"""The price fields an unpriced endpoint's twin gets (the other price fields stay unset)."""
NOTE = (f"simulated prices (illustrative: ${ILLUSTRATIVE_INPUT_PER_1M:.2f} / ${ILLUSTRATIVE_OUTPUT_PER_1M:.2f} per "
        "1M input / output tokens for {names}; not what any provider charges)")
"""The note every cost line of a run with illustrative prices carries ({names}: the twins so priced)."""
_OPTIONAL = ("price_cached_input_per_1m", "price_cache_write_per_1m", "price_reasoning_per_1m")


def unpriced(spec: Mapping[str, Any]) -> bool:
    """Whether an endpoint (its settings as a mapping) sets no price at all."""
    return not any(float(spec.get(name) or 0.0) for name in ("price_input_per_1m", "price_output_per_1m", *_OPTIONAL))


def with_illustrative_prices(settings: Settings) -> Settings:
    """`settings.simulated()`'s result with each twin `sim-X` of an unpriced endpoint `X` billed at the
    illustrative prices (what `--simulate` runs on); twins of priced endpoints keep `X`'s prices. An estimate
    does not call this: it predicts what the real, unpriced endpoint costs ($0)."""
    changes = {name: dict(ILLUSTRATIVE_PRICES) for name, spec in settings.endpoints.items()
               if name.startswith("sim-") and spec.provider == "simulated"
               and (source := settings.endpoints.get(name.removeprefix("sim-"))) is not None
               and source.provider != "simulated" and unpriced(spec.prices()) and unpriced(source.prices())}
    return settings.merged({"endpoints": changes}) if changes else settings


def illustrative_endpoints(config: Mapping[str, Any]) -> list[str]:
    """The endpoints of saved settings billed at the illustrative prices: twins `sim-X` of unpriced `X`."""
    endpoints = config.get("endpoints") or {}
    out = []
    for name, spec in endpoints.items():
        source = endpoints.get(str(name).removeprefix("sim-")) if str(name).startswith("sim-") else None
        if (isinstance(spec, Mapping) and isinstance(source, Mapping) and spec.get("provider") == "simulated"
                and unpriced(source) and all(spec.get(k) == v for k, v in ILLUSTRATIVE_PRICES.items())):
            out.append(str(name))
    return sorted(out)


def illustrative_note(run_dir: str | Path | None) -> str | None:
    """The note for a run folder whose settings (config.yaml) bill some endpoint at illustrative prices; None
    when none does, or the folder or its settings cannot be read (a report moved away from its run)."""
    if run_dir is None:
        return None
    from examiner.core.rundir import CONFIG  # the run folder's saved settings

    try:
        import yaml

        config = yaml.safe_load((Path(run_dir) / CONFIG).read_text(encoding="utf-8"))
    except (OSError, ValueError, ImportError):
        return None
    names = illustrative_endpoints(config) if isinstance(config, Mapping) else []
    return NOTE.format(names=", ".join(names)) if names else None


__all__ = ["ILLUSTRATIVE_INPUT_PER_1M", "ILLUSTRATIVE_OUTPUT_PER_1M", "ILLUSTRATIVE_PRICES", "NOTE",
           "illustrative_endpoints", "illustrative_note", "unpriced", "with_illustrative_prices"]
