"""The fast loop (`make check`, `pytest --fast`): every test runs except those that drive a whole exam, start
a server or start examiner in a child process, which are skipped the moment they try.

Why at the moment they try, not by a list: a list of slow tests goes stale as tests change, while these three
doors are where the time goes (an exam loads the embedder and runs the graph; a server or a child process
imports the whole package again). Each door is patched once per test process (`install`), so a test that
opens one is skipped with the door's name, wherever it opens it: in its body, in a fixture of any scope, or
through the command line's `main()`. `make test` installs nothing and runs them all.
"""

from __future__ import annotations

import socket
import subprocess
import sys
from collections.abc import Callable
from typing import Any, NoReturn

import pytest

REASON = "fast loop: {what} (`make test` runs it)"


def _skip(what: str) -> NoReturn:
    raise pytest.skip.Exception(REASON.format(what=what), _use_item_location=True)


Setter = Callable[[Any, str, Any], None]
"""`setattr` for the rest of the process, or a test's `monkeypatch.setattr` to undo it afterwards."""


def _guard_exams(patch: Setter) -> None:
    """Every exam, paper re-sit, resume and estimate pilot passes through the runner's `_drive`."""
    from examiner.exam import runner

    async def refuse(*_args: Any, **_kwargs: Any) -> NoReturn:
        _skip("drives a whole exam")

    patch(runner, "_drive", refuse)


def _guard_servers(patch: Setter) -> None:
    """Any listening socket: HTTP servers of the review page, local model servers, mirrors, collectors."""

    def refuse(self: socket.socket, *_args: Any) -> NoReturn:
        _skip("starts a server")

    patch(socket.socket, "listen", refuse)


def _guard_child_pythons(patch: Setter) -> None:
    """A child Python process (the command line run as a user would, a process to kill, the type checker)
    pays the package's imports again."""
    original = subprocess.Popen.__init__

    def guarded(self: subprocess.Popen[Any], args: Any, *rest: Any, **kwargs: Any) -> None:
        first = args[0] if isinstance(args, (list, tuple)) and args else args
        if str(first) == sys.executable:
            _skip("starts examiner in a child process")
        original(self, args, *rest, **kwargs)

    patch(subprocess.Popen, "__init__", guarded)


def install(patch: Setter = setattr) -> None:
    """Patch the three doors (for the rest of this test process, unless `patch` undoes itself)."""
    _guard_exams(patch)
    _guard_servers(patch)
    _guard_child_pythons(patch)
