"""Documents -> passages with provenance.

A corpus is read from files and folders (.txt, .md, .jsonl, .html/.htm, and with the `documents` extra
.pdf, .docx, .pptx). Every passage keeps the document it came from and its character span in that
document's text, so a verdict can always be traced back to the exact reference text; a passage of a PDF or
Word file also keeps its page, one of a slide deck its slide number. Every document's language is detected
(examiner.corpus.language). Bad files never stop a run: they are skipped or decoded leniently, and every such
file is counted so the report can say what was left out.

Hostile files too (docs/CORPORA-LIMITS.md): a symbolic link is not followed out of the corpus folder, a
FIFO or device is never opened, and every file is read within `ReadLimits` (decompressed size, text size,
pages, time, JSON nesting); such a file is skipped with its reason and one warning line. No exception of a
reader reaches the user: what a parser raises on a damaged file becomes the file's skip reason.
"""

from __future__ import annotations

import bisect
import errno
import hashlib
import itertools
import json
import logging
import os
import re
import stat
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from html import unescape
from pathlib import Path
from typing import Any

from examiner.core.jsonl import nesting_depth_exceeds
from examiner.corpus.sentences import sentence_spans
from examiner.corpus.documents import (DEFAULT_LIMITS, READERS, SUPPORTED_SUFFIXES, Deadline, LimitReached, Page,
                                       ReadLimits, Unreadable, configure_reading, reading_limits)
from examiner.core.errors import UserError
from examiner.corpus.language import UNDETERMINED, detect_language, dominant_language

log = logging.getLogger(__name__)

# SUPPORTED_SUFFIXES (examiner.corpus.documents): the file types read by `load_corpus`; other files met
# while walking a folder are ignored (and listed).

METADATA_NAMES = frozenset({"SOURCE.md", "LICENSE", "LICENSE.md", "LICENSE.txt"})
"""Files describing a corpus rather than belonging to it; left out of folder walks (an explicit path still
loads them). The sample corpora under corpora/ carry a SOURCE.md each."""

_PARAGRAPH_BREAK = re.compile(r"\n[ \t\r\f\v]*\n\s*")
_DETECT_BYTES = 1_000_000
"""Bytes of a file that is not UTF-8 that the encoding is detected from."""
_BINARY_CONTROL_SHARE = 0.10
"""Above this share of control characters a file not in UTF-8 is taken for binary, not mis-encoded text."""
_CONTROLS = re.compile(r"[\x00-\x08\x0b\x0c\x0e-\x1f\x7f-\x9f]")
"""Control characters other than tab and newline (C0, DEL, C1): dropped from every document's text."""
_NOT_CHARACTERS = re.compile(r"[\ud800-\udfff\ufffe\uffff]")
"""Lone surrogates (a JSON `\\ud800`) and non-characters: UTF-8 and XML writers refuse them; they become U+FFFD."""

__all__ = ["DEFAULT_LIMITS", "ReadLimits", "configure_reading", "limits_from_settings", "reading_limits"]


def limits_from_settings(exam: object) -> ReadLimits:
    """The reading limits an ExamSettings holds (its fields of the same names as ReadLimits's)."""
    return ReadLimits(**{name: getattr(exam, name) for name in ReadLimits.__dataclass_fields__})


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
    """Files that were not valid UTF-8: decoded in the encoding detected for them (U+FFFD for bytes it
    leaves undecodable); the warning line names the encoding."""
    ignored: list[str] = field(default_factory=list)
    """Files met while walking a folder whose type is not supported (also in `skipped`, with the reason)."""

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


MAX_PAGED_PASSAGE_CHARS = 1200
"""Longest passage of a paged document (.pdf .docx .pptx), in characters: a longer paragraph is cut at
sentence ends into near-equal parts, so a page whose paragraphs could not be told apart (a PDF without
gaps between paragraphs) still gives reviewable passages. Text, Markdown, JSONL and HTML paragraphs are
kept whole (their paragraphs are the author's)."""


def split_passages(document_id: str, text: str, page_starts: Sequence[int] = (),
                   max_chars: int | None = None) -> tuple[Passage, ...]:
    """Cut a document's text into paragraphs at blank lines. `page_starts[i]` is where page i + 1 starts
    in `text` (none: no pages). With `max_chars`, a longer paragraph is cut at sentence ends into parts of
    about equal length (a single sentence longer than that stays whole; knowledge units are bounded later)."""
    passages: list[Passage] = []
    pos = 0
    for brk in itertools.chain(_PARAGRAPH_BREAK.finditer(text), [None]):  # lazily: no list of every break
        chunk_end = brk.start() if brk else len(text)
        chunk = text[pos:chunk_end]
        stripped = chunk.strip()
        if stripped:
            start = pos + (len(chunk) - len(chunk.lstrip()))
            for a, b in _bounded(text, start, start + len(stripped), max_chars):
                page = bisect.bisect_right(page_starts, a) if page_starts else None
                passages.append(Passage(passage_id(document_id, a, text[a:b]), document_id, a, b, text[a:b], page))
        if brk:
            pos = brk.end()
    return tuple(passages)


def _bounded(text: str, start: int, end: int, max_chars: int | None) -> list[tuple[int, int]]:
    """The paragraph text[start:end] as one span, or cut at sentence ends into about equal parts of at
    most `max_chars` characters where its sentences allow."""
    if max_chars is None or end - start <= max_chars:
        return [(start, end)]

    sentences = [(start + a, start + b) for a, b in sentence_spans(text[start:end])]
    target = (end - start) / -(-(end - start) // max_chars)  # the length of ceil(len / max) equal parts
    spans: list[tuple[int, int]] = []
    for a, b in sentences:
        if spans and b - spans[-1][0] <= max_chars and b - spans[-1][0] - target < target - (a - spans[-1][0]):
            spans[-1] = (spans[-1][0], b)
        else:
            spans.append((a, b))
    return spans


def clean_text(text: str) -> str:
    """`text` without the characters that break later stages: form and line feeds become newlines, other
    control characters than tab and newline are dropped (a JSONL `\\u0000` would stop the GraphML and XML writers), lone surrogates and
    non-characters become U+FFFD (UTF-8 cannot encode them). Every document goes through here."""
    if _CONTROLS.search(text):
        text = _CONTROLS.sub("", text.replace("\f", "\n").replace("\v", "\n"))
    if _NOT_CHARACTERS.search(text):
        text = _NOT_CHARACTERS.sub("\ufffd", text)
    return text


def make_document(document_id: str, text: str, path: str = "", page_starts: Sequence[int] = (),
                  max_chars: int | None = None) -> Document:
    """A document from text already in memory (datasets, tests, benchmarks), its language detected; the
    text is cleaned first (`clean_text`: page starts must refer to cleaned text). `max_chars`: see
    `split_passages`."""
    text = clean_text(text)
    return Document(document_id, path or document_id, text,
                    split_passages(document_id, text, page_starts, max_chars), detect_language(text))


def paged_document(document_id: str, pages: Sequence[Page], path: str = "") -> Document:
    """A document from numbered pages: their texts joined by blank lines, so no passage spans two pages
    and each passage records the number of the page it is on; no passage is longer than
    MAX_PAGED_PASSAGE_CHARS where sentence ends allow."""
    parts: list[str] = []
    starts: list[int] = []
    pos = 0
    for page in (Page(p.number, clean_text(p.text)) for p in pages):
        while len(starts) < page.number - 1:  # pages before this one (a page without text) start here too
            starts.append(pos)
        if page.text:
            if parts:
                parts.append("\n\n")
                pos += 2
            starts.append(pos)
            parts.append(page.text)
            pos += len(page.text)
    return make_document(document_id, "".join(parts), path, starts, MAX_PAGED_PASSAGE_CHARS)


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
                jsonl_id_field: str = "id", limits: ReadLimits | None = None) -> Corpus:
    """Read files and folders (recursively) into a Corpus, within `limits` (default: `reading_limits()`,
    what the command configured).

    A missing path or a corpus without any passage raises UserError (one clear line for the CLI); a
    binary, unreadable, unsupported or hostile file is skipped and listed in `Corpus.skipped`; text that
    is not UTF-8 is decoded in its detected encoding and listed in `Corpus.decoded_with_replacement`.
    """
    if isinstance(paths, (str, Path)):
        paths = [paths]
    limits = limits or reading_limits()
    corpus = Corpus()
    seen_ids: set[str] = set()
    for file, doc_id in corpus_inputs(paths, corpus, limits):
        _load_file(file, doc_id, corpus, seen_ids, jsonl_field, jsonl_id_field, limits)
    check_not_empty(corpus, paths)
    return corpus


def corpus_inputs(paths: Sequence[str | Path], corpus: Corpus, limits: ReadLimits | None = None,
                  ) -> Iterable[tuple[Path, str]]:
    """(file, document id) of every file `load_corpus` reads, in its order, found lazily; a file that is
    not read (unsupported type, link out of the corpus, not a regular file) is recorded in
    `corpus.skipped` as it is met. A missing path raises UserError. A path given explicitly is read even
    when it is a symbolic link: naming it is the user's choice."""
    if not paths:
        raise UserError("no corpus path given")
    limits = limits or reading_limits()
    for raw in paths:
        root = Path(raw).expanduser()
        if not root.exists():
            raise UserError(f"corpus path does not exist: {raw}")
        if root.is_dir():
            for file in _walk(root, corpus, limits):
                yield file, _relative_id(file, root)
        elif not root.is_file():
            _skip(corpus, str(root), f"not a regular file ({_file_kind(root.stat().st_mode)})")
        elif root.suffix.lower() in SUPPORTED_SUFFIXES:
            yield root, root.name
        else:
            _skip(corpus, str(root), _unsupported(root))


def read_input(file: Path, doc_id: str, *, jsonl_field: str = "text", jsonl_id_field: str = "id",
               limits: ReadLimits | None = None) -> Corpus:
    """One file as a corpus of its own (its documents, or why it was skipped), for readers that spread the
    files of a corpus over several processes; `add_input` joins the parts in order."""
    part = Corpus()
    _load_file(file, doc_id, part, set(), jsonl_field, jsonl_id_field, limits or reading_limits())
    return part


def add_input(corpus: Corpus, seen_ids: set[str], file: Path, doc_id: str, part: Corpus, *,
              jsonl_field: str = "text", jsonl_id_field: str = "id", limits: ReadLimits | None = None) -> None:
    """Join the `read_input` part of `file` to `corpus` exactly as `load_corpus` reads that file: a
    document id already taken is skipped and listed, and a file whose own id is taken is read again
    under its full path (the rare case where two arguments give the same relative name)."""
    if doc_id in seen_ids:
        part = read_input(file, str(file.resolve()), jsonl_field=jsonl_field, jsonl_id_field=jsonl_id_field,
                          limits=limits)
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


def corpus_bytes(paths: Sequence[str | Path], limits: ReadLimits | None = None) -> int:
    """Bytes of the files `load_corpus` would read from `paths` (missing paths count 0)."""
    total = 0
    for raw in paths:
        root = Path(raw).expanduser()
        files = _walk(root, Corpus(), limits or reading_limits()) if root.is_dir() else [root] if root.is_file() else []
        total += sum(_size(f) for f in files)
    return total


def _size(file: Path) -> int:
    try:
        return file.stat().st_size
    except OSError:
        return 0


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


def _walk(root: Path, corpus: Corpus, limits: ReadLimits) -> Iterable[Path]:
    """Supported files under `root`, in a deterministic order (a folder's files sorted, then its
    subfolders); hidden entries and corpus metadata files are left out. Every other entry not read is
    recorded in `corpus.skipped` with its reason: links out of the corpus (unless `follow_links`), link
    loops, broken links, FIFOs, sockets and devices, and files of unsupported types (those in one warning
    line for the folder, not one per file). Each real folder is walked once, so no link makes a loop."""
    base = root.resolve()
    seen: set[Path] = {base}
    unsupported: list[str] = []
    stack: list[tuple[Path, tuple[Path, ...]]] = [(root, (base,))]
    while stack:
        folder, ancestors = stack.pop()
        files, folders = _entries(folder, base, ancestors, seen, corpus, limits)
        for file in files:
            if file.suffix.lower() in SUPPORTED_SUFFIXES:
                yield file
            else:
                corpus.ignored.append(str(file))
                unsupported.append(file.suffix.lower() or "(none)")
                _skip(corpus, str(file), _unsupported(file), warn=False)
        stack.extend(reversed(folders))
    if unsupported:
        kinds = " ".join(sorted(set(unsupported)))
        _warn_once(str(root), f"skipping {len(unsupported)} file(s) of unsupported types under {root} ({kinds}); "
                              f"supported: {' '.join(SUPPORTED_SUFFIXES)}")


def _entries(folder: Path, base: Path, ancestors: tuple[Path, ...], seen: set[Path], corpus: Corpus,
             limits: ReadLimits) -> tuple[list[Path], list[tuple[Path, tuple[Path, ...]]]]:
    """The regular files of one folder and the subfolders to walk (with their real paths' ancestry),
    both sorted by name; whatever else is there is skipped with its reason."""
    try:
        entries = sorted(os.scandir(folder), key=lambda e: e.name)
    except OSError as exc:
        _skip(corpus, str(folder), f"unreadable folder ({exc.strerror or type(exc).__name__})")
        return [], []
    files: list[Path] = []
    folders: list[tuple[Path, tuple[Path, ...]]] = []
    for entry in entries:
        if entry.name.startswith("."):
            continue
        path = Path(entry.path)
        mode = _entry_mode(entry, base, ancestors, seen, corpus, limits)
        if mode is None:
            continue
        if stat.S_ISDIR(mode):
            real = path.resolve()
            seen.add(real)
            folders.append((path, (*ancestors, real)))
        elif entry.name in METADATA_NAMES:
            continue
        elif stat.S_ISREG(mode):
            files.append(path)
        else:
            _skip(corpus, str(path), f"not a regular file ({_file_kind(mode)})")
    return files, folders


def _entry_mode(entry: os.DirEntry[str], base: Path, ancestors: tuple[Path, ...], seen: set[Path], corpus: Corpus,
                limits: ReadLimits) -> int | None:
    """The file mode of a folder entry as the walk sees it (a link: of its target), or None when the entry
    is skipped: a link out of the corpus without `follow_links`, a broken link, a link loop, a link to a
    folder walked already."""
    try:
        if not entry.is_symlink():
            return entry.stat(follow_symlinks=False).st_mode
        target = Path(os.path.realpath(entry.path))
        mode = os.stat(entry.path).st_mode
    except OSError as exc:
        reason = ("symbolic link loop" if exc.errno == errno.ELOOP else
                  f"broken symbolic link to {os.path.realpath(entry.path)}" if exc.errno == errno.ENOENT else
                  f"unreadable ({exc.strerror or type(exc).__name__})")
        _skip(corpus, entry.path, reason)
        return None
    if target != base and base not in target.parents and not limits.follow_links:
        _skip(corpus, entry.path, f"symbolic link to {target}, outside the corpus (use --follow-links to read it)")
        return None
    if stat.S_ISDIR(mode) and target in ancestors:
        _skip(corpus, entry.path, f"symbolic link loop (to {target}, a folder that contains it)")
        return None
    if stat.S_ISDIR(mode) and target in seen:
        _skip(corpus, entry.path, f"symbolic link to {target}, a folder read already")
        return None
    return mode


def _file_kind(mode: int) -> str:
    """What a non-regular file is, in words."""
    for test, name in ((stat.S_ISFIFO, "a named pipe"), (stat.S_ISSOCK, "a socket"), (stat.S_ISCHR, "a character device"),
                       (stat.S_ISBLK, "a block device"), (stat.S_ISDIR, "a folder")):
        if test(mode):
            return name
    return "a special file"


def _unsupported(file: Path) -> str:
    return f"unsupported file type {file.suffix.lower() or '(none)'}; supported: {' '.join(SUPPORTED_SUFFIXES)}"


def _relative_id(file: Path, root: Path) -> str:
    """`<folder name>/<path inside it>`: readable, and the same wherever the corpus folder lives."""
    return f"{root.resolve().name}/{file.relative_to(root).as_posix()}"


_WARNED: set[tuple[str, str]] = set()
"""(path, reason) pairs already warned about in this process: the exam and its reports read a corpus
more than once, and a user needs to hear about a skipped file once."""


def _warn_once(path: str, message: str) -> None:
    if (path, message) not in _WARNED:
        _WARNED.add((path, message))
        log.warning("%s", message)


def _skip(corpus: Corpus, path: str, reason: str, *, warn: bool = True) -> None:
    """Record a skipped input with its reason, and warn about it once per process (unless `warn` is
    False: the caller sums such files up in one line)."""
    if warn and (path, reason) not in _WARNED:
        _WARNED.add((path, reason))
        log.warning("skipping %s: %s", path, reason)
    corpus.skipped.append(SkippedInput(path, reason))


def _load_file(file: Path, doc_id: str, corpus: Corpus, seen_ids: set[str], jsonl_field: str,
               jsonl_id_field: str, limits: ReadLimits = DEFAULT_LIMITS) -> None:
    """Read one file into `corpus`. Whatever a reader raises on a damaged file is that file's skip reason;
    only UserError (a missing extra: the run cannot read a whole kind of file) goes up."""
    if doc_id in seen_ids:  # two arguments yielding the same relative name: fall back to the full path
        doc_id = str(file.resolve())
    try:
        _read_file(file, doc_id, corpus, seen_ids, jsonl_field, jsonl_id_field, limits)
    except UserError:
        raise
    except Unreadable as exc:
        _skip(corpus, str(file), str(exc))
    except Exception as exc:  # noqa: BLE001 - the last guard: a file never stops the run with a traceback
        log.debug("reading %s failed", file, exc_info=True)
        _skip(corpus, str(file), f"unexpected reader error ({type(exc).__name__}: {str(exc)[:160]})")


def _read_file(file: Path, doc_id: str, corpus: Corpus, seen_ids: set[str], jsonl_field: str,
               jsonl_id_field: str, limits: ReadLimits) -> None:
    suffix = file.suffix.lower()
    if suffix in READERS:
        pages = READERS[suffix](file, limits)
        _add_document(corpus, seen_ids, paged_document(doc_id, pages, str(file)))
        return
    deadline = limits.deadline()
    text = _read_text(file, corpus, limits)
    if text is None:
        return
    if suffix == ".jsonl":
        records = _jsonl_records(file, text, corpus, jsonl_field, jsonl_id_field, limits, deadline)
        for record_id, record_text in records:
            _add_document(corpus, seen_ids, make_document(f"{doc_id}#{record_id}", record_text, str(file)))
        return
    if suffix in (".html", ".htm"):
        text = html_to_text(text, deadline)
    if error := limits.text_too_long(len(text)):
        raise error
    _add_document(corpus, seen_ids, make_document(doc_id, text, str(file)))


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


def _read_text(file: Path, corpus: Corpus, limits: ReadLimits = DEFAULT_LIMITS) -> str | None:
    """Decode a file as text (no larger than the limit), or record why it cannot be used."""
    try:
        with file.open("rb") as handle:
            data = handle.read(limits.max_bytes + 1)
    except OSError as exc:
        _skip(corpus, str(file), f"unreadable ({exc.strerror or type(exc).__name__})")
        return None
    if len(data) > limits.max_bytes:
        raise LimitReached(f"larger than {limits.max_document_mb:g} MB, the limit (--max-document-mb)")
    decoded = decode_text(data)
    if decoded.text is None:
        _skip(corpus, str(file), decoded.binary)
        return None
    if decoded.encoding:
        _warn_once(str(file), f"{file} is not valid UTF-8: read as {decoded.encoding} (detected)"
                              + (f", {decoded.replaced} undecodable byte(s) as U+FFFD" if decoded.replaced else ""))
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
    """Undecodable bytes in the detected encoding, decoded as U+FFFD (0 for UTF-8)."""
    encoding: str = ""
    """The encoding detected for text that is not UTF-8 (empty for UTF-8 and for a BOM's encoding)."""


def decode_text(data: bytes) -> DecodedText:
    """The one text decoding policy for every input examiner reads (corpus files, datasets): a BOM picks
    UTF-8 or UTF-16; otherwise UTF-8 when the bytes are UTF-8; otherwise the encoding charset-normalizer
    detects (Latin-1, Windows-1252, Shift-JIS, UTF-16 without a BOM...), Windows-1252 when it finds none.
    Only what is truly binary is refused: NUL bytes outside UTF-16/32 text, or more than 10% control
    characters (or undecodable bytes) in the decoded text."""
    for bom, codec in ((b"\xef\xbb\xbf", "utf-8-sig"), (b"\xff\xfe", "utf-16"), (b"\xfe\xff", "utf-16")):
        if data.startswith(bom):
            try:
                return DecodedText(_normalise_newlines(data.decode(codec)))
            except UnicodeDecodeError:
                break
    has_nul = b"\x00" in data[:65536]
    if not has_nul:
        try:
            return DecodedText(_normalise_newlines(data.decode("utf-8")))
        except UnicodeDecodeError:
            pass
    encoding = _detect_encoding(data)
    if has_nul and not (encoding or "").startswith(("utf_16", "utf_32")):
        return DecodedText(None, "binary file (NUL bytes)")
    encoding = encoding or "cp1252"  # nothing plausible: text only if Windows-1252 reads it without controls
    text = data.decode(encoding, errors="replace")
    sample = text[:65536]
    controls = sum(1 for ch in sample if (ord(ch) < 32 and ch not in "\t\n\r\f") or 0x7F <= ord(ch) < 0xA0)
    if sample and (controls + sample.count("\ufffd")) / len(sample) > _BINARY_CONTROL_SHARE:
        return DecodedText(None, "binary file (not decodable as text)")
    return DecodedText(_normalise_newlines(text), replaced=text.count("\ufffd"), encoding=encoding)


def _detect_encoding(data: bytes) -> str | None:
    """The most plausible encoding of bytes that are not UTF-8 (Python's codec name), None when none is.

    charset-normalizer rates candidate encodings by how much of a mess each makes of the text. On a short
    text several single-byte encodings tie (Windows-1250 reads "Café" as well as Windows-1252 does, and
    "crème" as "crčme"); Windows-1252, what such files are usually written in, wins whenever it reads the
    text with no more mess than the best candidate."""
    from charset_normalizer import from_bytes
    from charset_normalizer.md import mess_ratio

    best = from_bytes(data[:_DETECT_BYTES]).best()
    if best is None:
        return None
    if best.encoding == "ascii":  # bytes that are not ASCII after all: Windows-1252 is its usual superset
        return "cp1252"
    if best.encoding in ("cp1252", "latin_1") or best.encoding.startswith(("utf", "cp9", "gb", "big5")):
        return best.encoding
    try:
        western = data[:_DETECT_BYTES].decode("cp1252")
    except UnicodeDecodeError:
        return best.encoding
    return "cp1252" if mess_ratio(western[:65536], 1.0) <= best.chaos else best.encoding


def _normalise_newlines(text: str) -> str:
    return text.replace("\r\n", "\n").replace("\r", "\n")


def _jsonl_records(file: Path, text: str, corpus: Corpus, field_name: str, id_field: str,
                   limits: ReadLimits = DEFAULT_LIMITS, deadline: Deadline | None = None) -> list[tuple[str, str]]:
    """(record id, text) per JSONL line; malformed or too deeply nested lines are skipped and counted."""
    deadline = deadline or limits.deadline()
    records = []
    for lineno, line in enumerate(text.split("\n"), start=1):
        if lineno % 1000 == 0:
            deadline.check()
        if not line.strip():
            continue
        where = f"{file}:{lineno}"
        obj, problem = parse_json(line, limits.max_nesting_depth)
        if problem:
            _skip(corpus, where, problem)
            continue
        value = obj.get(field_name) if isinstance(obj, dict) else None
        if not isinstance(value, str):
            _skip(corpus, where, f"no string field {field_name!r}")
            continue
        if error := limits.text_too_long(len(value)):
            _skip(corpus, where, str(error))
            continue
        rid = obj.get(id_field)
        records.append((str(rid) if isinstance(rid, (str, int)) else f"L{lineno}", value))
    return records


def parse_json(text: str, max_depth: int, outer: int = 0) -> tuple[Any, str]:
    """(value, "") for JSON text, or (None, why not): invalid, or records nested deeper than `max_depth`
    (checked before parsing: Python's parser recurses and would fail with RecursionError). `outer` levels
    hold the records (1 for a JSON array of records) and do not count."""
    if nesting_depth_exceeds(text, max_depth + outer):
        return None, f"nested deeper than {max_depth} levels, the limit (--max-nesting-depth)"
    try:
        return json.loads(text), ""
    except json.JSONDecodeError as exc:
        return None, f"invalid JSON ({exc.msg})"
    except RecursionError:
        return None, "nested too deep for the JSON parser"


_BLOCK_TAGS = frozenset({"p", "div", "li", "ul", "ol", "h1", "h2", "h3", "h4", "h5", "h6", "tr", "table", "section",
                         "article", "header", "footer", "aside", "blockquote", "pre", "dd", "dt", "dl", "figure",
                         "figcaption", "main", "nav", "br", "hr", "td", "th", "caption", "title"})
_DROP_TAGS = frozenset({"script", "style", "noscript", "template", "svg", "head"})


_HTML_TOKEN = re.compile(
    r"<!--.*?(?:-->|\Z)"                                     # a comment (one never closed runs to the end)
    r"|<!\[CDATA\[.*?(?:\]\]>|\Z)"
    r"|<[!?][^>]*(?:>|\Z)"                                   # doctype, processing instruction
    r"|<(/?)([a-zA-Z][^\s/>]*)((?:[^>\"']|\"[^\"]*(?:\"|\Z)|'[^']*(?:'|\Z))*)(?:>|\Z)",  # a tag, its attributes
    re.S)
"""One HTML token. Every alternative either matches in one forward pass or runs to the end of the input,
so scanning a page is linear in its size whatever its nesting or damage (no backtracking over the rest)."""
_RAW_TEXT = {name: re.compile(rf"</{name}\s*>", re.I) for name in ("script", "style", "title", "textarea")}
"""Elements whose content is text up to their closing tag (no tags inside)."""


class _HtmlText:
    """Visible text of an HTML page from its tokens: block elements break paragraphs; the contents of
    dropped elements (scripts, styles, the head) are left out, except the title, which is kept apart."""

    def __init__(self, deadline: Deadline | None) -> None:
        self.parts: list[str] = []
        self.title: list[str] = []
        self.dropping: list[str] = []
        """Open dropped elements, innermost last (`open_drops` counts them per name)."""
        self.open_drops: dict[str, int] = {}
        self.deadline = deadline

    def read(self, html: str) -> None:
        pos, steps = 0, 0
        while pos < len(html):
            steps += 1
            if self.deadline is not None and steps % 10_000 == 0:
                self.deadline.check()
            token = _HTML_TOKEN.search(html, pos)
            if token is None:
                self.text(html[pos:])
                return
            self.text(html[pos:token.start()])
            pos = token.end()
            if token.group(2):
                pos = self.tag(html, pos, token.group(2).lower(), bool(token.group(1)),
                               token.group(3).rstrip().endswith("/"))

    def tag(self, html: str, pos: int, name: str, closing: bool, self_closing: bool) -> int:
        """Handle one tag; where reading goes on (past a raw-text element's content)."""
        if name in _BLOCK_TAGS and not self.dropping:
            self.parts.append("\n\n")
        if closing:
            self.close(name)
            return pos
        if name == "body":
            self.dropping.clear()  # a head never closed ends where the body starts
            self.open_drops.clear()
        if name in _RAW_TEXT and not self_closing:
            end = _RAW_TEXT[name].search(html, pos)
            content = html[pos:end.start() if end else len(html)]
            if name == "title":
                self.title.append(content)
            elif name == "textarea":
                self.text(content)
            return end.end() if end else len(html)
        if name in _DROP_TAGS and not self_closing:
            self.dropping.append(name)
            self.open_drops[name] = self.open_drops.get(name, 0) + 1
        return pos

    def close(self, name: str) -> None:
        if not self.open_drops.get(name):
            return
        while self.dropping:
            last = self.dropping.pop()
            self.open_drops[last] -= 1
            if last == name:
                return

    def text(self, data: str) -> None:
        if data and not self.dropping:
            self.parts.append(data)


def html_to_text(html: str, deadline: Deadline | None = None) -> str:
    """Visible text of an HTML page, one paragraph per block element; scripts, styles and comments dropped,
    character references resolved. Linear in the page's size (one regex scan, no tree), so 100,000 nested
    elements read as fast as 100,000 siblings; the deadline is checked as the scan goes."""
    reader = _HtmlText(deadline)
    reader.read(html)
    title = " ".join(unescape("".join(reader.title)).split())
    paragraphs = [" ".join(block.split()) for block in re.split(r"\n\s*\n", unescape("".join(reader.parts)))]
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
