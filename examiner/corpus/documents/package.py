"""Office files (.docx, .pptx) are zip packages of XML parts; this checks one before its library opens it.

python-docx and python-pptx read every part into memory and parse it, so a zip bomb costs its full inflated
size and a damaged archive surfaces as whatever exception the parser meets. The check inflates each member
as a stream, counting bytes against the limit (declared sizes can lie), which also verifies every CRC; and
it refuses XML with a document type declaration: Office XML never has one, and entity declarations are how
an XML file expands a few bytes into gigabytes (billion laughs).
"""

from __future__ import annotations

import zipfile
import zlib
from pathlib import Path

from examiner.corpus.documents import LimitReached, ReadLimits, Unreadable

MAX_MEMBERS = 10_000
"""More parts than any real document has; a package with more is refused before any is inflated."""

_CHUNK = 1 << 16
_DECLARATIONS = (b"<!DOCTYPE", b"<!ENTITY")


def check_package(path: Path, kind: str, limits: ReadLimits) -> None:
    """Raise Unreadable (LimitReached for a limit) unless `path`, a `kind` file ("Word", "PowerPoint"), is
    a zip whose members inflate within
    `limits.max_bytes` together, with intact CRCs and no XML declarations of entities."""
    deadline = limits.deadline()
    try:
        with zipfile.ZipFile(path) as archive:
            members = archive.infolist()
            if len(members) > MAX_MEMBERS:
                raise LimitReached(f"{len(members)} parts in the {kind} file, above {MAX_MEMBERS}")
            _check_declared(members, kind, limits)
            total = 0
            for member in members:
                deadline.check()
                total = _inflate(archive, member, total, kind, limits)
    except Unreadable:
        raise
    except (zipfile.BadZipFile, zipfile.LargeZipFile, zlib.error, EOFError, NotImplementedError, RuntimeError,
            ValueError, OSError) as exc:
        message = str(exc).splitlines()[0][:160] if str(exc).strip() else type(exc).__name__
        raise Unreadable(f"damaged {kind} file (not a readable zip package: {message})") from None


def _too_big(kind: str, limits: ReadLimits) -> LimitReached:
    return LimitReached(f"the {kind} file decompresses to more than {limits.max_document_mb:g} MB, the limit "
                        f"(--max-document-mb)")


def _check_declared(members: list[zipfile.ZipInfo], kind: str, limits: ReadLimits) -> None:
    """Refuse at once a package whose declared sizes already pass the limit."""
    if sum(m.file_size for m in members) > limits.max_bytes:
        raise _too_big(kind, limits)


def _inflate(archive: zipfile.ZipFile, member: zipfile.ZipInfo, total: int, kind: str, limits: ReadLimits) -> int:
    """Inflate one member as a stream (zipfile checks its CRC at the end); the running total of bytes."""
    xml = member.filename.endswith((".xml", ".rels"))
    tail = b""
    with archive.open(member) as stream:
        while chunk := stream.read(_CHUNK):
            total += len(chunk)
            if total > limits.max_bytes:
                raise _too_big(kind, limits)
            if xml:
                window = tail + chunk
                if any(marker in window for marker in _DECLARATIONS):
                    raise Unreadable(f"{member.filename} declares an XML document type or entities (never in a "
                                     f"genuine {kind} file; entity expansion is refused)")
                tail = window[-len(_DECLARATIONS[0]):]
    return total
