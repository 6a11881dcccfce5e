"""A corpus of any size for the scale benchmark, built from WikiText-2 (valid + test: examiner data pull wikitext2).

The first copy is WikiText-2 with every sentence marked "(1)". A later copy N cannot repeat it: the exam merges near-duplicate
units (cosine >= exam.dedup_threshold, 0.95), and sentences that differ only by a marker are merged, so
100 marked copies made only 20,595 units. Instead each sentence of copy N is joined to another sentence
of the text drawn with seed N ("first , and second ."), which makes a unit of its own. It is cut at paragraph breaks into files of
about PART_CHARS characters (about 2,000 sentence units each), named part-00000.txt, part-00001.txt, ...; a corpus of n parts is the first
n files, so the 2,000-, 20,000- and 200,000-unit corpora are prefixes of one another and an embedding
cache filled for the largest serves them all.

    python experiments/scale_corpus.py OUT_DIR --parts 100     # writes the files, prints their count
"""

from __future__ import annotations

import argparse
import random
from collections.abc import Iterator
from pathlib import Path

PART_CHARS = 312_000
"""Characters per file: WikiText-2 makes about 6,400 sentence units per MB, so about 2,000 units."""


def _copies() -> Iterator[str]:
    from examiner.corpus.benchmarks import data_file

    source = "".join(data_file("wikitext2", f"{split}.txt").read_text(encoding="utf-8") for split in ("valid", "test"))
    yield source.replace(" . ", " . (1) ")  # the first copy's sentences numbered, as the corpus always was
    sentences = [s.strip() for s in source.replace("\n", " ").split(" . ") if len(s.split()) >= 4]
    copy = 1
    while True:
        copy += 1
        draw = random.Random(copy)
        yield "\n \n".join(_paired(paragraph, sentences, draw) for paragraph in source.split("\n \n"))


def _paired(paragraph: str, sentences: list[str], draw: random.Random) -> str:
    """Every sentence of the paragraph joined to a drawn one (headings and short lines kept as they are)."""
    if " . " not in paragraph:
        return paragraph
    parts = paragraph.strip().split(" . ")
    joined = [f"{part} , and {draw.choice(sentences)}" if len(part.split()) >= 4 else part for part in parts]
    return " " + " . ".join(joined) + "\n"


def _paragraphs() -> Iterator[str]:
    for text in _copies():
        yield from (p for p in text.split("\n \n") if p.strip())


def write_parts(out_dir: Path, parts: int) -> list[Path]:
    """Write the first `parts` files into `out_dir` (the same files for the same count, every time)."""
    out_dir.mkdir(parents=True, exist_ok=True)
    paths: list[Path] = []
    paragraphs = _paragraphs()
    for index in range(parts):
        chunk: list[str] = []
        size = 0
        while size < PART_CHARS:
            paragraph = next(paragraphs)
            chunk.append(paragraph)
            size += len(paragraph) + 3
        path = out_dir / f"part-{index:05d}.txt"
        path.write_text("\n \n".join(chunk) + "\n", encoding="utf-8")
        paths.append(path)
    return paths


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("out_dir", type=Path)
    parser.add_argument("--parts", type=int, default=100, help="files of about 2,000 units each")
    args = parser.parse_args()
    paths = write_parts(args.out_dir, args.parts)
    print(f"{len(paths)} files, {sum(p.stat().st_size for p in paths) / 1e6:.1f} MB in {args.out_dir}")


if __name__ == "__main__":
    main()
