"""One headless page in the system Chromium, for the screenshot scripts beside this file.

Why one place: each script needs the same steps (find Debian's `chromium`, launch it through Playwright
without a sandbox, open a page at a viewport, close it) and the same small palette PNG afterwards; a
script only says what to click and what to clip.
"""

from __future__ import annotations

import shutil
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from PIL import Image
from playwright.sync_api import Page, sync_playwright

VIEWPORT = {"width": 1100, "height": 1000}


def small_png(path: Path | str) -> None:
    """The screenshot as a 64-colour palette PNG: text stays sharp, the file a fraction of the size."""
    Image.open(path).convert("RGB").quantize(colors=64).save(path, optimize=True)


@contextmanager
def chromium_page(url: str, *, script: str, viewport: dict[str, int] | None = None) -> Iterator[Page]:
    """A page of headless Chromium at `url`; exits with one line naming `script` when no Chromium is found."""
    chromium = shutil.which("chromium") or shutil.which("chromium-browser")
    if not chromium:
        raise SystemExit(f"{script}: no system Chromium (apt-get install chromium)")
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=chromium, headless=True, args=["--no-sandbox"])
        try:
            page = browser.new_page(viewport=viewport or VIEWPORT)
            page.goto(url)
            yield page
        finally:
            browser.close()
