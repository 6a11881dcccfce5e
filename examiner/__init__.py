"""examiner: audit what language models know about a reference corpus, and audit their judges.

The Python API (examiner.api, docs/API.md) is loaded on first use, so `import examiner` (and
`examiner --help`) stays light:

    import examiner
    exam = examiner.run_exam(examiner.ExamOptions(corpus="corpora/pubmedqa-mini", out="runs/sim", simulate=True))
"""

from __future__ import annotations

from typing import Any


def __getattr__(name: str) -> Any:
    if name == "__version__":
        from examiner.core.version import VERSION

        return VERSION
    if not name.startswith("_") and name != "api":
        from examiner import api

        if name in api.__all__:
            return getattr(api, name)
    raise AttributeError(f"module 'examiner' has no attribute {name!r}")


def __dir__() -> list[str]:
    from examiner import api

    return sorted([*globals(), *api.__all__, "__version__"])
