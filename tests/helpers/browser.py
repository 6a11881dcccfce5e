"""The system Chromium for browser tests, driven by Playwright for Python (no browser is downloaded).

Without Chromium a test installs Debian's `chromium` package with apt-get when it runs as root, and
otherwise skips with one line saying why; without Playwright it skips the same way.
"""

from __future__ import annotations

import os
import shutil
import subprocess
from typing import Any

import pytest

CHROMIUM = ("/usr/bin/chromium", "chromium", "chromium-browser")


def chromium() -> str:
    """The system Chromium's path; installs Debian's package when missing and root, else skips (one line)."""
    for name in CHROMIUM:
        found = shutil.which(name)
        if found:
            return found
    if os.geteuid() == 0 and shutil.which("apt-get"):
        env = {**os.environ, "DEBIAN_FRONTEND": "noninteractive"}
        subprocess.run(["apt-get", "install", "-y", "chromium"], env=env, capture_output=True, timeout=600)
        found = shutil.which("chromium")
        if found:
            return found
        pytest.skip("browser test: no Chromium, and `apt-get install -y chromium` did not provide one")
    pytest.skip("browser test: no Chromium found (install Debian's `chromium` package; "
                "not root, so not installed here)")


def sync_playwright() -> Any:
    """Playwright's sync entry point, or a skip when Playwright is not installed."""
    module = pytest.importorskip("playwright.sync_api",
                                 reason="browser test: Playwright is not installed (pip install -e '.[dev]')")
    return module.sync_playwright
