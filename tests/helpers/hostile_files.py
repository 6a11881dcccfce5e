"""Builders of corpus files written to hurt the reader: PDFs and Word files that inflate to as many MB as
asked, Office files (zips) with replaced members, entity bombs and damaged CRCs, JSON nested deeper than any
parser should recurse. The hostile-corpus and reader-fuzz tests feed them to the reader."""

from __future__ import annotations

import io
import zipfile
import zlib
from pathlib import Path

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "documents"
"""Small valid documents of every supported kind (tests/fixtures/make_documents.py writes them)."""
TEXT = "The harbour was dredged in 1921 to a depth of twelve metres, and ferries leave every hour."
"""A plain sentence the valid files carry, to find again in what the reader returns."""


def pdf_with_stream(stream: bytes, *, deflate: bool = True, compressed: bool = False) -> bytes:
    """A one-page PDF whose content stream is `stream` (compressed here with FlateDecode when `deflate`,
    already compressed when `compressed`), with a correct cross-reference table."""
    data = zlib.compress(stream, 9) if deflate and not compressed else stream
    filters = b"/Filter /FlateDecode " if deflate or compressed else b""
    objects = [
        b"<< /Type /Catalog /Pages 2 0 R >>",
        b"<< /Type /Pages /Kids [3 0 R] /Count 1 >>",
        b"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Contents 4 0 R "
        b"/Resources << /Font << /F1 5 0 R >> >> >>",
        b"<< " + filters + b"/Length " + str(len(data)).encode() + b" >>\nstream\n" + data + b"\nendstream",
        b"<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica >>",
    ]
    out = io.BytesIO()
    out.write(b"%PDF-1.4\n")
    offsets = []
    for number, body in enumerate(objects, start=1):
        offsets.append(out.tell())
        out.write(f"{number} 0 obj\n".encode() + body + b"\nendobj\n")
    xref = out.tell()
    out.write(f"xref\n0 {len(objects) + 1}\n0000000000 65535 f \n".encode())
    for offset in offsets:
        out.write(f"{offset:010d} 00000 n \n".encode())
    out.write(f"trailer\n<< /Size {len(objects) + 1} /Root 1 0 R >>\nstartxref\n{xref}\n%%EOF\n".encode())
    return out.getvalue()


def text_pdf(text: str = TEXT) -> bytes:
    """A valid one-page PDF showing `text`."""
    return pdf_with_stream(b"BT /F1 12 Tf 72 720 Td (" + text.encode("latin-1") + b") Tj ET")


def bomb_pdf(megabytes: int) -> bytes:
    """A PDF whose content stream inflates to `megabytes` MB of spaces (about 1 KB compressed per MB)."""
    packer = zlib.compressobj(9)
    chunk = b" " * (1 << 20)
    data = b"".join(packer.compress(chunk) for _ in range(megabytes)) + packer.flush()
    return pdf_with_stream(data, compressed=True)


def with_members(source: Path | bytes, replace: dict[str, bytes], *, keep: tuple[str, ...] | None = None,
                 method: int = zipfile.ZIP_DEFLATED) -> bytes:
    """A copy of an Office file (a zip) with some members replaced; `keep` lists the only members kept."""
    raw = source.read_bytes() if isinstance(source, Path) else source
    out = io.BytesIO()
    with zipfile.ZipFile(io.BytesIO(raw)) as old, zipfile.ZipFile(out, "w", method) as new:
        for info in old.infolist():
            if keep is not None and info.filename not in keep:
                continue
            new.writestr(info.filename, replace.get(info.filename, old.read(info.filename)))
    return out.getvalue()


def docx_with_body(xml: bytes) -> bytes:
    """notes.docx with word/document.xml replaced."""
    return with_members(FIXTURES / "notes.docx", {"word/document.xml": xml})


def bomb_docx(megabytes: int) -> bytes:
    """A Word file whose document.xml is valid but inflates to `megabytes` MB (whitespace inside it)."""
    body = (b'<?xml version="1.0" encoding="UTF-8"?><w:document xmlns:w="http://schemas.openxmlformats.org/'
            b'wordprocessingml/2006/main"><w:body><w:p><w:r><w:t>Hello.</w:t></w:r></w:p>'
            + b" " * (megabytes << 20) + b"</w:body></w:document>")
    return docx_with_body(body)


BILLION_LAUGHS = (b'<?xml version="1.0"?><!DOCTYPE lolz [<!ENTITY lol "lol">'
                  + b"".join(b'<!ENTITY lol%d "%s">' % (i, (b"&lol%d;" % (i - 1) if i > 1 else b"&lol;") * 10)
                             for i in range(1, 10))
                  + b']><w:document xmlns:w="http://schemas.openxmlformats.org/wordprocessingml/2006/main">'
                    b"<w:body><w:p><w:r><w:t>&lol9;</w:t></w:r></w:p></w:body></w:document>")


def bad_crc(source: Path, member: str) -> bytes:
    """The Office file with one byte of `member`'s stored data changed, so its CRC-32 no longer matches."""
    raw = bytearray(with_members(source, {}, method=zipfile.ZIP_STORED))
    with zipfile.ZipFile(io.BytesIO(bytes(raw))) as archive:
        info = archive.getinfo(member)
    start = info.header_offset + 30 + len(info.filename.encode()) + len(info.extra)
    raw[start + info.file_size // 2] ^= 0x20
    return bytes(raw)


def nested_json(depth: int) -> str:
    """A JSON object whose `text` is `depth` arrays nested in one another."""
    return '{"text": ' + "[" * depth + "]" * depth + "}"
