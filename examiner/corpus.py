"""Documents -> passages with provenance.

A corpus is read from files and folders (.txt, .md, .jsonl, .html/.htm, and with the `documents` extra
.pdf, .docx, .pptx). Every passage keeps the document it came from and its character span in that
document's text, so a verdict can always be traced back to the exact reference text; a passage of a PDF or
Word file also keeps its page, one of a slide deck its slide number. Every document's language is detected
(examiner.language). Bad files never stop a run: they are skipped or decoded leniently, and every such
file is counted so the report can say what was left out.
"""

from __future__ import annotations

import bisect
import hashlib
import itertools
import json
import logging
import os
import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from examiner.documents import READERS, Page, Unreadable
from examiner.errors import UserError
from examiner.language import UNDETERMINED, detect_language, dominant_language

log = logging.getLogger(__name__)

SUPPORTED_SUFFIXES = (".txt", ".md", ".jsonl", ".html", ".htm", *READERS)
"""File types read by `load_corpus`; other files met while walking a folder are ignored (and listed)."""

METADATA_NAMES = frozenset({"SOURCE.md", "LICENSE", "LICENSE.md", "LICENSE.txt"})
"""Files describing a corpus rather than belonging to it; left out of folder walks (an explicit path still
loads them). The sample corpora under corpora/ carry a SOURCE.md each."""

_PARAGRAPH_BREAK = re.compile(r"\n[ \t\r\f\v]*\n\s*")
_BINARY_CONTROL_SHARE = 0.10
"""Above this share of control characters an undecodable file is taken for binary, not mis-encoded text."""


@dataclass(frozen=True)
class Passage:
    """A paragraph of a document: the smallest piece of reference text a knowledge unit points to."""

    id: str
    """Stable id: a hash of document id, span and text, so the same corpus gives the same ids on every run."""
    document: str
    """Id of the document the passage belongs to (path relative to the corpus argument, `#L<n>` for JSONL)."""
    start: int
    """Offset of the first character in the document's text."""
    end: int
    """Offset one past the last character: `document.text[start:end] == text`."""
    text: str
    """The passage text, exactly as it appears in the document's text."""
    page: int | None = None
    """Page the passage is on, from 1 (.pdf and .docx: the page; .pptx: the slide); None for text files."""


@dataclass(frozen=True)
class Document:
    """One document of the corpus: its extracted text and the passages cut from it."""

    id: str
    """Stable, human-readable id (relative path, plus `#<id>` or `#L<line>` for JSONL records)."""
    path: str
    """File the document was read from."""
    text: str
    """The document's text (for HTML: the extracted text) that passage spans refer to."""
    passages: tuple[Passage, ...]
    """Passages in document order."""
    language: str = ""
    """ISO 639-1 code of the document's language (`und`: undetermined; empty: not detected)."""


@dataclass(frozen=True)
class SkippedInput:
    """A file (or JSONL line) that contributed nothing, and why."""

    path: str
    """File path, with `:<line>` for a JSONL line."""
    reason: str
    """Short human-readable reason (binary file, unreadable, no text field...)."""


@dataclass
class Corpus:
    """Documents and passages of a reference corpus, plus an account of the inputs that were left out."""

    documents: list[Document] = field(default_factory=list)
    """Documents with at least one passage, in load order."""
    skipped: list[SkippedInput] = field(default_factory=list)
    """Inputs skipped (binary, unreadable, unsupported, malformed JSONL line...), for the report."""
    decoded_with_replacement: list[str] = field(default_factory=list)
    """Files that were not valid UTF-8 and were decoded with U+FFFD replacement characters."""
    ignored: list[str] = field(default_factory=list)
    """Files met while walking a folder whose type is not supported (logged at debug level only)."""

    @property
    def passages(self) -> list[Passage]:
        """All passages of all documents, in order."""
        return [p for d in self.documents for p in d.passages]

    def passage(self, passage_id: str) -> Passage:
        """The passage with this id (KeyError if unknown)."""
        return self._passage_index()[passage_id]

    def document(self, document_id: str) -> Document:
        """The document with this id (KeyError if unknown)."""
        for d in self.documents:
            if d.id == document_id:
                return d
        raise KeyError(document_id)

    def _passage_index(self) -> dict[str, Passage]:
        index = getattr(self, "_index", None)
        if index is None or len(index) != sum(len(d.passages) for d in self.documents):
            index = {p.id: p for p in self.passages}
            self._index = index
        return index


def passage_id(document_id: str, start: int, text: str) -> str:
    """Stable passage id: independent of where the corpus lives on disk, unique within a document."""
    digest = hashlib.sha256(f"{document_id}\x00{start}\x00{text}".encode()).hexdigest()
    return "p-" + digest[:16]


def split_passages(document_id: str, text: str, page_starts: Sequence[int] = ()) -> tuple[Passage, ...]:
    """Cut a document's text into paragraphs at blank lines; long paragraphs stay whole here (knowledge
    units are bounded later). `page_starts[i]` is where page i + 1 starts in `text` (none: no pages)."""
    passages: list[Passage] = []
    pos = 0
    for brk in itertools.chain(_PARAGRAPH_BREAK.finditer(text), [None]):  # lazily: no list of every break
        chunk_end = brk.start() if brk else len(text)
        chunk = text[pos:chunk_end]
        stripped = chunk.strip()
        if stripped:
            start = pos + (len(chunk) - len(chunk.lstrip()))
            end = start + len(stripped)
            page = bisect.bisect_right(page_starts, start) if page_starts else None
            passages.append(Passage(passage_id(document_id, start, stripped), document_id, start, end, stripped,
                                    page))
        if brk:
            pos = brk.end()
    return tuple(passages)


def make_document(document_id: str, text: str, path: str = "", page_starts: Sequence[int] = ()) -> Document:
    """A document from text already in memory (datasets, tests, benchmarks), its language detected."""
    return Document(document_id, path or document_id, text, split_passages(document_id, text, page_starts),
                    detect_language(text))


def paged_document(document_id: str, pages: Sequence[Page], path: str = "") -> Document:
    """A document from numbered pages: their texts joined by blank lines, so no passage spans two pages
    and each passage records the number of the page it is on."""
    parts: list[str] = []
    starts: list[int] = []
    pos = 0
    for page in pages:
        while len(starts) < page.number - 1:  # pages before this one (a page without text) start here too
            starts.append(pos)
        if page.text:
            if parts:
                parts.append("\n\n")
                pos += 2
            starts.append(pos)
            parts.append(page.text)
            pos += len(page.text)
    return make_document(document_id, "".join(parts), path, starts)


def passage_rows(corpus: Corpus) -> Iterable[dict[str, object]]:
    """passages.jsonl rows: id, document, span and text, plus the page when known and the document's
    language (what reports and `examiner view` show next to a source)."""
    for doc in corpus.documents:
        for p in doc.passages:
            row: dict[str, object] = {"id": p.id, "document": p.document, "start": p.start, "end": p.end,
                                      "text": p.text}
            if p.page is not None:
                row["page"] = p.page
            if doc.language:
                row["language"] = doc.language
            yield row


def corpus_from_texts(texts: Iterable[tuple[str, str]]) -> Corpus:
    """A corpus from (document id, text) pairs; raises UserError when no passage results."""
    corpus = Corpus()
    for doc_id, text in texts:
        doc = make_document(doc_id, text)
        if doc.passages:
            corpus.documents.append(doc)
    if not corpus.documents:
        raise UserError("the corpus is empty: the given texts contain no passage")
    return corpus


def load_corpus(paths: Sequence[str | Path] | str | Path, *, jsonl_field: str = "text",
                jsonl_id_field: str = "id") -> Corpus:
    """Read files and folders (recursively) into a Corpus.

    A missing path or a corpus without any passage raises UserError (one clear line for the CLI); a
    binary or unreadable file is skipped and listed in `Corpus.skipped`; non-UTF-8 text is decoded with
    replacement characters and listed in `Corpus.decoded_with_replacement`.
    """
    if isinstance(paths, (str, Path)):
        paths = [paths]
    corpus = Corpus()
    seen_ids: set[str] = set()
    for file, doc_id in corpus_inputs(paths, corpus):
        _load_file(file, doc_id, corpus, seen_ids, jsonl_field, jsonl_id_field)
    check_not_empty(corpus, paths)
    return corpus


def corpus_inputs(paths: Sequence[str | Path], corpus: Corpus) -> Iterable[tuple[Path, str]]:
    """(file, document id) of every file `load_corpus` reads, in its order, found lazily; an explicit file
    of an unsupported type is recorded in `corpus.skipped` as it is met. A missing path raises UserError."""
    if not paths:
        raise UserError("no corpus path given")
    for raw in paths:
        root = Path(raw).expanduser()
        if not root.exists():
            raise UserError(f"corpus path does not exist: {raw}")
        if root.is_dir():
            for file in _walk(root, corpus):
                yield file, _relative_id(file, root)
        elif root.suffix.lower() in SUPPORTED_SUFFIXES:
            yield root, root.name
        else:
            _skip(corpus, str(root), f"unsupported file type {root.suffix or '(none)'!s}; "
                                     f"supported: {' '.join(SUPPORTED_SUFFIXES)}")


def read_input(file: Path, doc_id: str, *, jsonl_field: str = "text", jsonl_id_field: str = "id") -> Corpus:
    """One file as a corpus of its own (its documents, or why it was skipped), for readers that spread the
    files of a corpus over several processes; `add_input` joins the parts in order."""
    part = Corpus()
    _load_file(file, doc_id, part, set(), jsonl_field, jsonl_id_field)
    return part


def add_input(corpus: Corpus, seen_ids: set[str], file: Path, doc_id: str, part: Corpus, *,
              jsonl_field: str = "text", jsonl_id_field: str = "id") -> None:
    """Join the `read_input` part of `file` to `corpus` exactly as `load_corpus` reads that file: a
    document id already taken is skipped and listed, and a file whose own id is taken is read again
    under its full path (the rare case where two arguments give the same relative name)."""
    if doc_id in seen_ids:
        part = read_input(file, str(file.resolve()), jsonl_field=jsonl_field, jsonl_id_field=jsonl_id_field)
    corpus.skipped += part.skipped
    corpus.decoded_with_replacement += part.decoded_with_replacement
    for doc in part.documents:
        _add_document(corpus, seen_ids, doc)


def check_not_empty(corpus: Corpus, paths: Sequence[str | Path]) -> None:
    """UserError when no passage was found in any input."""
    if not corpus.documents:
        where = ", ".join(str(p) for p in paths)
        extra = f" ({len(corpus.skipped)} input(s) skipped)" if corpus.skipped else ""
        raise UserError(f"the corpus is empty: no passage found in {where}{extra}")


def corpus_bytes(paths: Sequence[str | Path]) -> int:
    """Bytes of the files `load_corpus` would read from `paths` (missing paths count 0)."""
    total = 0
    for raw in paths:
        root = Path(raw).expanduser()
        files = _walk(root, Corpus()) if root.is_dir() else [root] if root.is_file() else []
        total += sum(f.stat().st_size for f in files)
    return total


def check_corpus_size(paths: Sequence[str | Path], limit_mb: float) -> None:
    """Refuse, before anything is read or created, a corpus larger than `limit_mb` megabytes (10^6 bytes).

    Splitting and sentence units are fast (about a second per MB), but every unit is then embedded for
    near-duplicate merging and clustering: about 7,000 units per MB of prose, embedded at about 110
    units/s on 2 CPU cores, so a 50 MB text would embed for about 50 minutes before its first question
    (experiments/large_corpus.py).
    The limit makes that cost a decision instead of a silent stall.
    """
    size = corpus_bytes(paths)
    if size > limit_mb * 1e6:
        raise UserError(
            f"the corpus is {size / 1e6:.1f} MB, above the limit of {limit_mb:g} MB (exam.max_corpus_mb): each MB "
            f"makes about 7,000 units to embed (about a minute per MB on 2 CPU cores); raise it with "
            f"--max-corpus-mb or exam.max_corpus_mb in config.yaml"
        )


def _walk(root: Path, corpus: Corpus) -> Iterable[Path]:
    """Supported files under `root`, sorted for a deterministic order; hidden entries are left out."""
    for dirpath, dirnames, filenames in os.walk(root):
        dirnames[:] = sorted(d for d in dirnames if not d.startswith("."))
        for name in sorted(filenames):
            if name.startswith(".") or name in METADATA_NAMES:
                continue
            file = Path(dirpath) / name
            if file.suffix.lower() in SUPPORTED_SUFFIXES:
                yield file
            else:
                log.debug("ignoring %s: unsupported file type", file)
                corpus.ignored.append(str(file))


def _relative_id(file: Path, root: Path) -> str:
    """`<folder name>/<path inside it>`: readable, and the same wherever the corpus folder lives."""
    return f"{root.resolve().name}/{file.relative_to(root).as_posix()}"


_WARNED: set[tuple[str, str]] = set()
"""(path, reason) pairs already warned about in this process: the exam and its reports read a corpus
more than once, and a user needs to hear about a skipped file once."""


def _skip(corpus: Corpus, path: str, reason: str) -> None:
    if (path, reason) not in _WARNED:
        _WARNED.add((path, reason))
        log.warning("skipping %s: %s", path, reason)
    corpus.skipped.append(SkippedInput(path, reason))


def _load_file(file: Path, doc_id: str, corpus: Corpus, seen_ids: set[str], jsonl_field: str,
               jsonl_id_field: str) -> None:
    if doc_id in seen_ids:  # two arguments yielding the same relative name: fall back to the full path
        doc_id = str(file.resolve())
    suffix = file.suffix.lower()
    if suffix in READERS:
        _load_paged(file, doc_id, corpus, seen_ids)
        return
    text = _read_text(file, corpus)
    if text is None:
        return
    if suffix == ".jsonl":
        records = _jsonl_records(file, text, corpus, jsonl_field, jsonl_id_field)
        for record_id, record_text in records:
            _add_document(corpus, seen_ids, make_document(f"{doc_id}#{record_id}", record_text, str(file)))
        return
    if suffix in (".html", ".htm"):
        text = html_to_text(text)
    _add_document(corpus, seen_ids, make_document(doc_id, text, str(file)))


def _load_paged(file: Path, doc_id: str, corpus: Corpus, seen_ids: set[str]) -> None:
    """A PDF, Word or PowerPoint file through its reader; a file without text is skipped with the reason."""
    try:
        pages = READERS[file.suffix.lower()](file)
    except Unreadable as exc:
        _skip(corpus, str(file), str(exc))
        return
    _add_document(corpus, seen_ids, paged_document(doc_id, pages, str(file)))


def _add_document(corpus: Corpus, seen_ids: set[str], doc: Document) -> None:
    if doc.id in seen_ids:
        log.warning("duplicate document id %s: keeping the first", doc.id)
        corpus.skipped.append(SkippedInput(doc.path, f"duplicate document id {doc.id}"))
        return
    seen_ids.add(doc.id)
    if doc.passages:
        corpus.documents.append(doc)
    else:
        log.info("%s has no text", doc.id)


def _read_text(file: Path, corpus: Corpus) -> str | None:
    """Decode a file as text, or record why it cannot be used."""
    try:
        data = file.read_bytes()
    except OSError as exc:
        _skip(corpus, str(file), f"unreadable ({exc.strerror or type(exc).__name__})")
        return None
    decoded = decode_text(data)
    if decoded.text is None:
        _skip(corpus, str(file), decoded.binary)
        return None
    if decoded.replaced:
        log.warning("%s is not valid UTF-8: decoded with replacement characters", file)
        corpus.decoded_with_replacement.append(str(file))
    return decoded.text


@dataclass(frozen=True)
class DecodedText:
    """A file's bytes as text, or why they are not text."""

    text: str | None
    """The text with newlines normalised; None for a binary file."""
    binary: str = ""
    """Why the bytes were taken for a binary file (empty for text)."""
    replaced: int = 0
    """Characters that were not valid UTF-8 and became U+FFFD (0 for valid text)."""


def decode_text(data: bytes) -> DecodedText:
    """The one text decoding policy for every input examiner reads (corpus files, datasets): a BOM picks
    UTF-8 or UTF-16; NUL bytes or too many control characters mean binary; other non-UTF-8 bytes (e.g.
    Latin-1) are decoded with replacement characters and counted."""
    for bom, codec in ((b"\xef\xbb\xbf", "utf-8-sig"), (b"\xff\xfe", "utf-16"), (b"\xfe\xff", "utf-16")):
        if data.startswith(bom):
            try:
                return DecodedText(_normalise_newlines(data.decode(codec)))
            except UnicodeDecodeError:
                break
    if b"\x00" in data[:65536]:
        return DecodedText(None, "binary file (NUL bytes)")
    try:
        return DecodedText(_normalise_newlines(data.decode("utf-8")))
    except UnicodeDecodeError:
        pass
    text = data.decode("utf-8", errors="replace")
    sample = text[:65536]
    controls = sum(1 for ch in sample if (ord(ch) < 32 and ch not in "\t\n\r\f") or 0x7F <= ord(ch) < 0xA0)
    bad = sample.count("\ufffd")
    if sample and (controls + bad) / len(sample) > _BINARY_CONTROL_SHARE:
        return DecodedText(None, "binary file (not decodable as text)")
    return DecodedText(_normalise_newlines(text), replaced=text.count("\ufffd"))


def _normalise_newlines(text: str) -> str:
    return text.replace("\r\n", "\n").replace("\r", "\n")


def _jsonl_records(file: Path, text: str, corpus: Corpus, field_name: str,
                   id_field: str) -> list[tuple[str, str]]:
    """(record id, text) per JSONL line; malformed lines are skipped and counted."""
    records = []
    for lineno, line in enumerate(text.split("\n"), start=1):
        if not line.strip():
            continue
        where = f"{file}:{lineno}"
        try:
            obj = json.loads(line)
        except json.JSONDecodeError as exc:
            _skip(corpus, where, f"invalid JSON ({exc.msg})")
            continue
        value = obj.get(field_name) if isinstance(obj, dict) else None
        if not isinstance(value, str):
            _skip(corpus, where, f"no string field {field_name!r}")
            continue
        rid = obj.get(id_field)
        records.append((str(rid) if isinstance(rid, (str, int)) else f"L{lineno}", value))
    return records


_BLOCK_TAGS = ("p", "div", "li", "ul", "ol", "h1", "h2", "h3", "h4", "h5", "h6", "tr", "table", "section",
               "article", "header", "footer", "aside", "blockquote", "pre", "dd", "dt", "dl", "figure",
               "figcaption", "main", "nav", "br", "hr", "td", "th", "caption", "title")
_DROP_TAGS = ("script", "style", "noscript", "template", "svg", "head")


def html_to_text(html: str) -> str:
    """Visible text of an HTML page, one paragraph per block element; scripts and styles dropped."""
    from bs4 import BeautifulSoup, Comment

    soup = BeautifulSoup(html, "html.parser")
    title = soup.title.get_text(" ", strip=True) if soup.title else ""
    for tag in soup(_DROP_TAGS):
        tag.decompose()
    for comment in soup.find_all(string=lambda s: isinstance(s, Comment)):
        comment.extract()
    for tag in soup.find_all(_BLOCK_TAGS):
        tag.insert_before("\n\n")
        tag.insert_after("\n\n")
    raw = soup.get_text()
    paragraphs = [" ".join(block.split()) for block in re.split(r"\n\s*\n", raw)]
    body = "\n\n".join(p for p in paragraphs if p)
    if title and not body.startswith(title):
        body = f"{title}\n\n{body}" if body else title
    return body


def corpus_languages(corpus: Corpus) -> dict[str, int]:
    """Documents per detected language, most frequent first (ties by code)."""
    counts: dict[str, int] = {}
    for doc in corpus.documents:
        counts[doc.language or UNDETERMINED] = counts.get(doc.language or UNDETERMINED, 0) + 1
    return dict(sorted(counts.items(), key=lambda item: (-item[1], item[0])))


def exam_language(corpus: Corpus, setting: str = "auto") -> str:
    """The language an exam on this corpus is held in: `setting` unless `auto`, else the language holding
    most of the corpus's passage text."""
    if setting != "auto":
        return setting
    return dominant_language((doc.language, sum(len(p.text) for p in doc.passages)) for doc in corpus.documents)
