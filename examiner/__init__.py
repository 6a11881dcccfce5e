"""examiner: audit what language models know about a reference corpus, and audit their judges.

The Python API (examiner/api.py) is loaded on first use, so `import examiner` (and `examiner --help`)
stays light:

    import examiner
    result = examiner.run_exam("corpora/pubmedqa-mini", out="runs/sim", simulate=True)
"""

from __future__ import annotations

from typing import Any

API = ("run_exam", "judge", "meta_evaluate", "ExamResult", "JudgeResult", "MetaResult", "TargetResult", "Figure",
       "RankedEvaluator")
"""Names examiner/api.py gives the package."""


def __getattr__(name: str) -> Any:
    if name == "__version__":
        from examiner.core.version import VERSION

        return VERSION
    if name in API:
        from examiner import api

        return getattr(api, name)
    raise AttributeError(f"module 'examiner' has no attribute {name!r}")


def __dir__() -> list[str]:
    return sorted([*globals(), *API, "__version__"])
