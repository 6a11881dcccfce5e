"""`examiner run --help` lists every file type the corpus reader reads (from the readers' registry, so the
two cannot drift apart)."""

from __future__ import annotations

import argparse
import re

from examiner.cli.main import build_parser
from examiner.corpus import documents, reading
from examiner.corpus.reading import SUPPORTED_SUFFIXES


def test_run_help_lists_every_supported_format() -> None:
    parser = build_parser()
    action = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction))
    for command in ("run", "estimate"):
        text = " ".join(action.choices[command].format_help().split())
        missing = sorted(set(SUPPORTED_SUFFIXES) - set(re.findall(r"\.[a-z]+\b", text)))
        assert not missing, (command, missing)
    assert {".pdf", ".docx", ".pptx", ".txt", ".md"} <= set(SUPPORTED_SUFFIXES)
    assert reading.SUPPORTED_SUFFIXES is documents.SUPPORTED_SUFFIXES  # what load_corpus reads
