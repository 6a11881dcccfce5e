"""The cap on a model's text passed into another model's prompt: cut with a marker, never longer than the cap."""

from __future__ import annotations

import pytest

from examiner.core.config import Settings, validate_settings
from examiner.core.errors import ConfigError
from examiner.core.passed_text import DEFAULT_MAX_PASSED_CHARS, count_cut, cut_passed, run_limit


def test_a_text_within_the_cap_passes_as_it_is() -> None:
    text = "An answer of ordinary length."
    assert cut_passed(text, 200) == text
    assert cut_passed("x" * 200, 200) == "x" * 200


def test_a_longer_text_keeps_its_start_and_says_how_much_was_shown() -> None:
    text = "word " * 80_000  # 400,000 characters
    cut = cut_passed(text, 12_000)
    assert len(cut) <= 12_000
    head, marker = cut.rsplit("\n", 1)
    assert text.startswith(head) and len(head) > 11_900
    assert marker == f"[... cut by examiner: {len(head):,} of 400,000 characters shown]"
    assert count_cut([text, "short", text], 12_000) == 2


def test_the_setting_has_a_default_and_a_floor() -> None:
    assert Settings().max_passed_chars == DEFAULT_MAX_PASSED_CHARS
    assert Settings().merged({"max_passed_chars": 500}).max_passed_chars == 500
    with pytest.raises(ConfigError):
        validate_settings({"max_passed_chars": 10})


def test_a_run_written_before_the_setting_reads_as_the_default() -> None:
    assert run_limit({}) == DEFAULT_MAX_PASSED_CHARS
    assert run_limit({"max_passed_chars": 500}) == 500
