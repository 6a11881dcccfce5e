"""A seeded fuzz test over every corpus reader: damaged PDF, DOCX, PPTX, HTML, JSONL and text files.

Each input is made from a valid file (tests/fixtures/documents, or one built here) by a seeded damage:
truncation, byte flips, spliced garbage, a zip member corrupted or dropped, a part replaced by hostile XML
(deep nesting, entity declarations), a small-scale bomb read under lowered limits, tag soup, deep JSON,
control characters and foreign encodings. Every input must either be read or be skipped with a reason:
no exception escapes, the reader's last-resort guard ("unexpected reader error") is never needed, every
document's text is clean UTF-8, and no input takes more than a few seconds.

The same seed gives the same inputs on every run; INPUTS_PER_KIND x len(KINDS) inputs are tried.
"""

from __future__ import annotations

import io
import json
import random
import re
import time
import zipfile
from collections.abc import Callable
from pathlib import Path

import pytest

from examiner.corpus.reading import read_input
from examiner.corpus.documents import ReadLimits
from tests.helpers.hostile_files import BILLION_LAUGHS, FIXTURES, TEXT, bomb_docx, bomb_pdf, text_pdf, with_members


SEED = 25
INPUTS_PER_KIND = 60
LIMITS = ReadLimits(max_document_mb=2, max_document_text_mb=1, max_document_pages=50, max_document_seconds=5,
                    max_nesting_depth=100)
"""Lowered limits, so that bombs a few MB big already cross them."""
SLOWEST_SECONDS = 5.0


def _flip(rng: random.Random, data: bytes, count: int) -> bytes:
    raw = bytearray(data)
    for _ in range(count):
        raw[rng.randrange(len(raw))] = rng.randrange(256)
    return bytes(raw)


def _splice(rng: random.Random, data: bytes) -> bytes:
    """A random slice of the file replaced by random bytes or by a copy of another slice."""
    a, b = sorted(rng.randrange(len(data)) for _ in range(2))
    filler = rng.randbytes(rng.randrange(1, 64)) if rng.random() < 0.5 else data[b:b + rng.randrange(1, 512)]
    return data[:a] + filler + data[b:]


def _bytes_damage(rng: random.Random, data: bytes) -> bytes:
    choice = rng.randrange(4)
    if choice == 0:
        return data[:rng.randrange(len(data))]
    if choice == 1:
        return _flip(rng, data, rng.randrange(1, 20))
    if choice == 2:
        return _splice(rng, data)
    return data + rng.randbytes(rng.randrange(1, 200))


def _members(data: bytes) -> list[str]:
    with zipfile.ZipFile(io.BytesIO(data)) as archive:
        return archive.namelist()


def _hostile_xml(rng: random.Random) -> bytes:
    choice = rng.randrange(5)
    if choice == 0:
        return BILLION_LAUGHS
    if choice == 1:
        depth = rng.choice([300, 3000, 30000])
        return b"<?xml version='1.0'?><a>" + b"<b>" * depth + b"deep" + b"</b>" * depth + b"</a>"
    if choice == 2:
        return b"<?xml version='1.0'?><!DOCTYPE x SYSTEM 'file:///etc/passwd'><x>&xxe;</x>"
    if choice == 3:
        return b""
    return rng.randbytes(rng.randrange(1, 300))


def _office(rng: random.Random, source: Path) -> bytes:
    """A damaged copy of an Office fixture."""
    original = source.read_bytes()
    names = _members(original)
    choice = rng.randrange(6)
    if choice == 0:
        return _bytes_damage(rng, original)
    if choice == 1:  # one XML member with flipped bytes
        member = rng.choice([n for n in names if n.endswith(".xml")])
        with zipfile.ZipFile(io.BytesIO(original)) as archive:
            content = archive.read(member)
        return with_members(original, {member: _flip(rng, content, rng.randrange(1, 10))})
    if choice == 2:  # members dropped
        keep = tuple(n for n in names if rng.random() < 0.6)
        return with_members(original, {}, keep=keep)
    if choice == 3:  # a member replaced by hostile XML
        return with_members(original, {rng.choice(names): _hostile_xml(rng)})
    if choice == 4:  # a member's bytes damaged in the stored archive
        stored = with_members(original, {}, method=zipfile.ZIP_STORED)
        return _flip(rng, stored, rng.randrange(1, 5))
    if source.suffix == ".docx":  # a small-scale zip bomb (3 MB, above the lowered 2 MB)
        return bomb_docx(3)
    return with_members(original, {"ppt/slides/slide1.xml": b" " * 3_000_000})


def make_pdf(rng: random.Random) -> bytes:
    source = rng.choice([FIXTURES / "manual.pdf", FIXTURES / "scanned.pdf", None])
    original = source.read_bytes() if source else text_pdf(TEXT)
    choice = rng.randrange(5)
    if choice == 0:
        return bomb_pdf(3)  # inflates past the lowered 2 MB
    if choice == 1:  # deep nesting and huge numbers inside the objects
        return original.replace(b"/MediaBox", b"/Junk " + b"[" * rng.choice([200, 5000]) + b" /MediaBox", 1)
    if choice == 2:
        return original.replace(b"/Count 1", b"/Count 99999999999", 1).replace(b"/Length", b"/Length 9999999999 ", 1)
    return _bytes_damage(rng, original)


def make_docx(rng: random.Random) -> bytes:
    return _office(rng, FIXTURES / "notes.docx")


def make_pptx(rng: random.Random) -> bytes:
    return _office(rng, FIXTURES / "deck.pptx")


_HTML_PIECES = ["<div>", "</div>", "<p>", "</p>", "<script>", "</script>", "<style>", "<!--", "-->", "<![CDATA[",
                "<svg>", "</svg>", "<head>", "<body>", "<title>", "</title>", "&amp;", "&#0;", "&#x110000;", "&bogus",
                "<a href='", '"', "'", "<", ">", "</", "<!", "<?", "text ", "caf\u00e9 ", "\u0000", "<br/>", "<td",
                "<textarea>", "<table><tr><td>cell</td></tr></table>", "\ud800"]


def make_html(rng: random.Random) -> bytes:
    choice = rng.randrange(4)
    if choice == 0:
        depth = rng.choice([1000, 10000, 50000])
        tag = rng.choice(["div", "svg", "p", "span", "head"])
        return (f"<{tag}>" * depth + "deep text" + f"</{tag}>" * rng.choice([0, depth])).encode()
    if choice == 1:  # one hostile piece repeated
        return (rng.choice(_HTML_PIECES) * rng.choice([1000, 30000])).encode("utf-8", "surrogatepass")
    soup = "".join(rng.choice(_HTML_PIECES) for _ in range(rng.randrange(10, 3000)))
    data = soup.encode("utf-8", "surrogatepass")
    return _bytes_damage(rng, data) if choice == 2 else data


def make_jsonl(rng: random.Random) -> bytes:
    lines = []
    for _ in range(rng.randrange(1, 8)):
        choice = rng.randrange(8)
        if choice == 0:
            depth = rng.choice([50, 150, 5000, 200000])
            lines.append('{"text": ' + "[" * depth + "]" * depth + "}")
        elif choice == 1:
            lines.append(json.dumps({"text": TEXT})[:rng.randrange(1, 40)])
        elif choice == 2:
            lines.append(json.dumps({"text": "a\u0000b\u0007c\ud800d\u0085e\ufffe", "id": rng.randrange(5)}))
        elif choice == 3:
            lines.append('{"text": "' + '\\"[{' * rng.randrange(1, 3000) + '"}')
        elif choice == 4:
            lines.append(json.dumps({"text": 7, "id": None}))
        elif choice == 5:
            lines.append(json.dumps({"text": "x " * rng.randrange(1, 700_000)}))
        else:
            lines.append(json.dumps({"text": TEXT, "id": rng.choice(["a", "b", 1, 2.5, [1]])}))
    data = "\n".join(lines).encode("utf-8", "surrogatepass")
    return _bytes_damage(rng, data) if rng.random() < 0.3 else data


def make_txt(rng: random.Random) -> bytes:
    text = (TEXT + " Élève, café, naïveté, Grüße, Привет, 日本語. ") * rng.randrange(1, 50)
    choice = rng.randrange(6)
    if choice == 0:
        return text.encode(rng.choice(["latin-1", "cp1252", "utf-16", "utf-16-le", "utf-8-sig"]), errors="replace")
    if choice == 1:
        return rng.randbytes(rng.randrange(1, 5000))
    if choice == 2:
        return bytes(rng.randrange(1, 32) for _ in range(rng.randrange(1, 3000)))
    if choice == 3:
        return b"\xef\xbb\xbf" + rng.randbytes(rng.randrange(1, 300))  # a BOM before garbage
    return _bytes_damage(rng, text.encode())


KINDS: dict[str, Callable[[random.Random], bytes]] = {
    ".pdf": make_pdf, ".docx": make_docx, ".pptx": make_pptx, ".html": make_html, ".jsonl": make_jsonl,
    ".txt": make_txt,
}


_CONTROLS = re.compile(r"[\x00-\x08\x0b-\x1f]")


def _check_one(path: Path) -> tuple[str, float]:
    """Read one input; what happened to it ('read', 'skipped', 'empty') and how long it took."""
    started = time.monotonic()
    part = read_input(path, path.name, limits=LIMITS)
    seconds = time.monotonic() - started
    for skipped in part.skipped:
        assert skipped.reason and "unexpected reader error" not in skipped.reason, (path.name, skipped.reason)
    for doc in part.documents:
        doc.text.encode("utf-8")  # no lone surrogates
        assert not _CONTROLS.search(doc.text), path.name
    outcome = "read" if part.documents else "skipped" if part.skipped else "empty"
    return outcome, seconds


@pytest.mark.timeout(120)
def test_every_reader_reads_or_skips_every_damaged_input(tmp_path: Path) -> None:
    rng = random.Random(SEED)
    outcomes: dict[str, dict[str, int]] = {}
    slowest = (0.0, "")
    tried = 0
    for suffix, make in KINDS.items():
        for index in range(INPUTS_PER_KIND):
            path = tmp_path / f"fuzz-{index:03d}{suffix}"
            path.write_bytes(make(rng))
            outcome, seconds = _check_one(path)
            tried += 1
            outcomes.setdefault(suffix, {}).setdefault(outcome, 0)
            outcomes[suffix][outcome] += 1
            slowest = max(slowest, (seconds, path.name))
            path.unlink()
    assert tried == INPUTS_PER_KIND * len(KINDS)
    assert slowest[0] < SLOWEST_SECONDS, slowest
    for suffix, counts in outcomes.items():  # the damage is varied: some inputs of every kind are refused
        assert counts.get("skipped", 0) > 0, (suffix, counts)
    print(f"{tried} damaged inputs: {outcomes}; slowest {slowest[1]} in {slowest[0]:.2f} s")
