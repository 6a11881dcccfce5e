"""The fast loop's doors (tests/helpers/fast_loop.py): a whole exam, a listening socket and a child Python are
each skipped with their reason; everything else still runs."""

from __future__ import annotations

import asyncio
import socket
import subprocess
import sys

import pytest

from tests.helpers import fast_loop


@pytest.fixture()
def guarded(monkeypatch: pytest.MonkeyPatch) -> None:
    fast_loop.install(monkeypatch.setattr)


def test_an_exam_is_skipped_with_its_reason(guarded: None, tmp_path) -> None:
    from examiner.exam.runner import ExamRequest, start_exam
    from tests.helpers.simulated_exam import every_role_settings

    corpus = tmp_path / "corpus"
    corpus.mkdir()
    (corpus / "a.md").write_text("Herons nest in tall trees near water.\n", encoding="utf-8")
    with pytest.raises(pytest.skip.Exception, match="drives a whole exam"):
        asyncio.run(start_exam(every_role_settings(), ExamRequest([str(corpus)]), tmp_path / "run", quiet=True,
                               report=False))


def test_a_listening_socket_is_skipped(guarded: None) -> None:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        with pytest.raises(pytest.skip.Exception, match="starts a server"):
            sock.listen()


def test_a_child_python_is_skipped_and_other_programs_run(guarded: None) -> None:
    with pytest.raises(pytest.skip.Exception, match="child process"):
        subprocess.run([sys.executable, "-c", "pass"], check=True)
    assert subprocess.run(["true"], check=True).returncode == 0
