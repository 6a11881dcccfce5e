"""`examiner data pull|list|path`: the public sets are fetched on demand, pinned and hash-checked.

A local HTTP server on 127.0.0.1 serves a mirror (`{base}/{repo}/{commit}/{path}`) of small files these tests
write themselves, with a registry built from their hashes; it logs every Range header it receives. One test
serves the real sets from the data folder through the same mirror to prove the real registry's hashes.
"""

from __future__ import annotations

import hashlib
import os
import pickle
import re
import socket
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest

from examiner.cli.main import main
from examiner.core.errors import UserError
from examiner.corpus import public_sets
from examiner.corpus.data_fetch import file_url, pull_sets, set_status
from examiner.corpus.public_sets import DataFile, PublicSet
from examiner.corpus.summeval_source import summeval_jsonl
from tests.helpers.datasets import requires_real_data

COMMIT = "0123456789abcdef0123456789abcdef01234567"
PLAIN = b'{"instruction": "Name a colour.", "output_1": "Blue.", "output_2": "Seven.", "label": 1}\n' * 400
ODD = "".join(f"line {i}: caret ^ and space\n" for i in range(300)).encode()

SMALL_PICKLE_DATA = {
    "doc-1": {"src": "An article about tides.", "ref_summs": ["Tides rise.", "The sea moves."],
              "sys_summs": {"M1": {"sys_summ": "Tides go up.", "scores": {"relevance": 2, "fluency": 3.5,
                                                                          "consistency": 5.0, "coherence": 4.0}},
                            "M2": {"sys_summ": "Caf\u00e9 news.", "scores": {"coherence": 1.0, "consistency": 1.5,
                                                                             "fluency": 2.0, "relevance": 1.0}}},
              "ref_summ": "Tides rise."},
}
"""An invented SummEval-shaped pickle: one article, two systems (keys in another order than the output's)."""

EXPECTED_JSONL = (
    b'{"doc_id": "doc-1", "system_id": "M1", "source": "An article about tides.", "reference": "Tides rise.", '
    b'"references": ["Tides rise.", "The sea moves."], "system_output": "Tides go up.", "scores": '
    b'{"coherence": 4.0, "consistency": 5.0, "fluency": 3.5, "relevance": 2.0}}\n'
    b'{"doc_id": "doc-1", "system_id": "M2", "source": "An article about tides.", "reference": "Tides rise.", '
    b'"references": ["Tides rise.", "The sea moves."], "system_output": "Caf\\u00e9 news.", "scores": '
    b'{"coherence": 1.0, "consistency": 1.5, "fluency": 2.0, "relevance": 1.0}}\n')


def sha(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def entry(local: str, upstream: str, data: bytes) -> DataFile:
    return DataFile(local, upstream, len(data), sha(data))


SMALL_PICKLE = pickle.dumps(SMALL_PICKLE_DATA, protocol=4)
TOY = PublicSet("toy", "invented pairs", "someone/toy", COMMIT, "CC0 (invented)",
                (entry("toy/pairs.jsonl", "data/pairs.jsonl", PLAIN),
                 entry("toy/sub/odd.txt", "weird dir^2/odd name.txt", ODD)))
TOYSUM = PublicSet("toysum", "invented SummEval rows", "someone/toysum", COMMIT, "MIT (invented)",
                   (DataFile("toysum/summeval_1600.jsonl", "SUM/SummEval/data.pkl", len(EXPECTED_JSONL),
                             sha(EXPECTED_JSONL), upstream_size=len(SMALL_PICKLE), upstream_sha256=sha(SMALL_PICKLE),
                             convert=summeval_jsonl),))
REGISTRY = (TOY, TOYSUM)
UPSTREAM = {("toy", "data/pairs.jsonl"): PLAIN, ("toy", "weird dir^2/odd name.txt"): ODD,
            ("toysum", "SUM/SummEval/data.pkl"): SMALL_PICKLE}


class Mirror:
    """A mirror on 127.0.0.1: URL path -> bytes; logs each request's Range header; may ignore ranges."""

    def __init__(self) -> None:
        self.files: dict[str, bytes] = {}
        self.ranges: list[str | None] = []
        self.honour_ranges = True
        mirror = self

        class Handler(BaseHTTPRequestHandler):
            def do_GET(self) -> None:  # noqa: N802 - http.server's name
                body = mirror.files.get(self.path)
                asked = self.headers.get("Range")
                mirror.ranges.append(asked)
                if body is None:
                    self.send_error(404)
                    return
                match = re.fullmatch(r"bytes=(\d+)-", asked or "")
                start = int(match.group(1)) if match and mirror.honour_ranges else 0
                if start >= len(body) and start:
                    self.send_response(416)
                    self.send_header("Content-Range", f"bytes */{len(body)}")
                    self.send_header("Content-Length", "0")
                    self.end_headers()
                    return
                self.send_response(206 if start else 200)
                if start:
                    self.send_header("Content-Range", f"bytes {start}-{len(body) - 1}/{len(body)}")
                self.send_header("Content-Length", str(len(body) - start))
                self.end_headers()
                self.wfile.write(body[start:])

            def log_message(self, format: str, *args: object) -> None:
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.base = f"http://127.0.0.1:{self.server.server_address[1]}"
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)
        self.thread.start()

    def serve(self, public_set: PublicSet, upstream: str, data: bytes) -> None:
        self.files[file_url("", public_set, upstream)] = data

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()


@pytest.fixture()
def mirror() -> Iterator[Mirror]:
    served = Mirror()
    for public_set in REGISTRY:
        for data_file in public_set.files:
            served.serve(public_set, data_file.upstream, UPSTREAM[(public_set.name, data_file.upstream)])
    yield served
    served.close()


@pytest.fixture()
def data(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, mirror: Mirror) -> Path:
    """An empty data folder named by EXAMINER_DATA, the mirror named by EXAMINER_DATA_URL, the toy registry."""
    root = tmp_path / "data"
    monkeypatch.setenv("EXAMINER_DATA", str(root))
    monkeypatch.setenv("EXAMINER_DATA_URL", mirror.base)
    monkeypatch.setattr(public_sets, "PUBLIC_SETS", REGISTRY)
    return root


def errors(text: str) -> list[str]:
    return [line for line in text.splitlines() if line.startswith("examiner: error")]


def leftovers(root: Path) -> list[str]:
    return sorted(p.relative_to(root).as_posix() for p in root.rglob("*") if p.is_file()) if root.exists() else []


def test_pull_writes_the_files_and_prints_each_licence(data: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["data", "pull", "--all"]) == 0
    out = capsys.readouterr().out
    assert (data / "toy" / "pairs.jsonl").read_bytes() == PLAIN
    assert (data / "toy" / "sub" / "odd.txt").read_bytes() == ODD  # its upstream path needed URL-quoting
    assert (data / "toysum" / "summeval_1600.jsonl").read_bytes() == EXPECTED_JSONL
    assert leftovers(data) == ["toy/pairs.jsonl", "toy/sub/odd.txt", "toysum/summeval_1600.jsonl"]
    assert "licence: CC0 (invented)" in out and "licence: MIT (invented)" in out


def test_a_file_already_there_is_not_fetched_again(data: Path, mirror: Mirror,
                                                   capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["data", "pull", "toy"]) == 0
    asked = len(mirror.ranges)
    assert asked == 2
    assert main(["data", "pull", "toy"]) == 0
    assert len(mirror.ranges) == asked and "toy: already there" in capsys.readouterr().out


def test_a_tampered_byte_is_refused_and_leaves_nothing(data: Path, mirror: Mirror,
                                                       capsys: pytest.CaptureFixture[str]) -> None:
    tampered = bytearray(PLAIN)
    tampered[1000] ^= 0x01
    mirror.serve(TOY, "data/pairs.jsonl", bytes(tampered))
    assert main(["data", "pull", "toy"]) == 2
    lines = errors(capsys.readouterr().err)
    assert len(lines) == 1 and "refused" in lines[0] and "data/pairs.jsonl" in lines[0]
    assert "by hand" in lines[0] and str(data / "toy") in lines[0] and "pairs.jsonl" in lines[0]
    assert not (data / "toy" / "pairs.jsonl").exists() and not (data / "toy" / "pairs.jsonl.part").exists()


def test_more_bytes_than_pinned_are_refused(data: Path, mirror: Mirror, capsys: pytest.CaptureFixture[str]) -> None:
    mirror.serve(TOY, "data/pairs.jsonl", PLAIN + b"extra")
    assert main(["data", "pull", "toy"]) == 2
    assert "more than the pinned" in errors(capsys.readouterr().err)[0]
    assert leftovers(data) == []


def test_no_target_exists_until_its_bytes_are_verified(data: Path, mirror: Mirror) -> None:
    seen: list[tuple[bool, bool]] = []

    def progress(data_file: DataFile, done: int, total: int) -> None:
        target = data / data_file.local
        seen.append((target.exists(), target.with_name(target.name + ".part").exists()))

    pull_sets([TOY], data, mirror.base, progress)
    assert seen and all(not target and part for target, part in seen)
    assert (data / "toy" / "pairs.jsonl").read_bytes() == PLAIN


def test_a_killed_pull_resumes_with_a_range_request(data: Path, mirror: Mirror) -> None:
    part = data / "toy" / "pairs.jsonl.part"
    part.parent.mkdir(parents=True)
    part.write_bytes(PLAIN[:1234])  # what a pull killed after 1,234 bytes leaves
    assert main(["data", "pull", "toy"]) == 0
    assert "bytes=1234-" in mirror.ranges
    assert (data / "toy" / "pairs.jsonl").read_bytes() == PLAIN and not part.exists()


def test_a_server_that_ignores_ranges_gives_the_whole_file_again(data: Path, mirror: Mirror) -> None:
    mirror.honour_ranges = False
    part = data / "toy" / "pairs.jsonl.part"
    part.parent.mkdir(parents=True)
    part.write_bytes(PLAIN[:500])
    assert main(["data", "pull", "toy"]) == 0
    assert "bytes=500-" in mirror.ranges and (data / "toy" / "pairs.jsonl").read_bytes() == PLAIN


def test_a_resumed_part_with_wrong_bytes_is_refused_and_removed(data: Path, mirror: Mirror,
                                                                capsys: pytest.CaptureFixture[str]) -> None:
    part = data / "toy" / "pairs.jsonl.part"
    part.parent.mkdir(parents=True)
    part.write_bytes(b"X" * 100)
    assert main(["data", "pull", "toy"]) == 2
    assert "refused" in errors(capsys.readouterr().err)[0]
    assert not part.exists() and not (data / "toy" / "pairs.jsonl").exists()


def _closed_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def test_no_network_is_one_line_naming_the_url_and_the_folder(data: Path, capsys: pytest.CaptureFixture[str]) -> None:
    base = f"http://127.0.0.1:{_closed_port()}"
    assert main(["data", "pull", "--base-url", base, "toy"]) == 2  # NAMEs may follow the flags
    lines = errors(capsys.readouterr().err)
    assert len(lines) == 1
    assert f"cannot fetch {base}/someone/toy/{COMMIT}/data/pairs.jsonl" in lines[0]
    assert str(data / "toy") in lines[0] and "pairs.jsonl, sub/odd.txt" in lines[0]
    assert leftovers(data) == []


def test_a_missing_file_upstream_is_one_line(data: Path, mirror: Mirror, capsys: pytest.CaptureFixture[str]) -> None:
    mirror.files.clear()
    assert main(["data", "pull", "toy"]) == 2
    lines = errors(capsys.readouterr().err)
    assert len(lines) == 1 and "404" in lines[0]


def test_list_shows_present_missing_and_damaged(data: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["data", "list"]) == 0
    out = capsys.readouterr().out
    assert re.search(r"^toy +missing", out, re.M) and re.search(r"^toysum +missing", out, re.M)
    assert "someone/toy@" + COMMIT in out and "weird dir^2/odd name.txt -> toy/sub/odd.txt" in out
    assert main(["data", "pull", "toy"]) == 0
    capsys.readouterr()
    assert main(["data", "list"]) == 0
    out = capsys.readouterr().out
    assert re.search(r"^toy +present", out, re.M) and re.search(r"^toysum +missing", out, re.M)
    assert "examiner data pull toysum" in out
    odd = data / "toy" / "sub" / "odd.txt"
    odd.write_bytes(ODD.replace(b"caret", b"carat", 1))
    assert main(["data", "list"]) == 0
    out = capsys.readouterr().out
    assert re.search(r"^toy +damaged", out, re.M) and "toy/sub/odd.txt  [damaged]" in out


def test_pull_replaces_a_damaged_file(data: Path) -> None:
    assert main(["data", "pull", "toy"]) == 0
    (data / "toy" / "pairs.jsonl").write_bytes(b"edited by hand")
    assert set_status(data, TOY).state == "damaged"
    assert main(["data", "pull", "toy"]) == 0
    assert set_status(data, TOY).state == "present"


def test_path_prints_the_set_folder(data: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["data", "path", "toy"]) == 0
    captured = capsys.readouterr()
    assert captured.out.strip() == str(data / "toy") and "examiner data pull toy" in captured.err
    assert main(["data", "path", "nothing"]) == 2
    assert "unknown data set 'nothing'" in errors(capsys.readouterr().err)[0]


@pytest.mark.parametrize("argv", [["pull"], ["pull", "toy", "--all"], ["pull", "toy", "--base-url", "ftp://example.org"],
                                  ["list", "toy"], ["list", "--all"], ["path"], ["path", "toy", "toysum"],
                                  ["path", "toy", "--base-url", "http://127.0.0.1:1"]])
def test_each_action_takes_only_its_arguments(data: Path, capsys: pytest.CaptureFixture[str], argv: list[str]) -> None:
    assert main(["data", *argv]) == 2
    assert len(errors(capsys.readouterr().err)) == 1 and not data.exists()


def test_a_missing_set_names_the_pull_command(data: Path) -> None:
    from examiner.corpus.benchmarks import data_file, load_llmbar
    from examiner.corpus.datasets import read_records

    with pytest.raises(UserError, match=r"EXAMINER_DATA points to .*, which is not a folder"):  # a typo, at once
        load_llmbar(["Natural"])
    data.mkdir()
    with pytest.raises(UserError) as caught:
        data_file("llmbar", "Natural.json")
    assert str(caught.value) == f'llmbar is not in {data}: run "examiner data pull llmbar" (or set EXAMINER_DATA)'
    with pytest.raises(UserError, match=r'^summeval is not in .*: run "examiner data pull summeval"'):
        read_records("summeval")
    with pytest.raises(UserError, match=r'^llmbar is not in .*: run "examiner data pull llmbar"'):
        read_records("llmbar:Natural")


# --- SummEval's pickle ------------------------------------------------------------------------------------

class _Calls:
    def __init__(self, marker: Path) -> None:
        self.marker = marker

    def __reduce__(self) -> tuple[object, tuple[str]]:
        return os.makedirs, (str(self.marker),)


def test_the_small_pickle_converts_to_the_expected_jsonl() -> None:
    assert summeval_jsonl(SMALL_PICKLE) == EXPECTED_JSONL
    assert summeval_jsonl(pickle.dumps(SMALL_PICKLE_DATA, protocol=0)) == EXPECTED_JSONL


@pytest.mark.parametrize("protocol", [0, 2, 4])
def test_a_pickle_that_names_a_global_is_refused_without_running_it(tmp_path: Path, protocol: int) -> None:
    marker = tmp_path / "ran"
    evil = pickle.dumps({"doc-1": _Calls(marker)}, protocol=protocol)
    with pytest.raises(UserError) as caught:
        summeval_jsonl(evil)
    message = str(caught.value)
    assert "\n" not in message and re.search(r"holds a (GLOBAL|STACK_GLOBAL) opcode", message)
    assert not marker.exists()


@pytest.mark.parametrize(("value", "why"), [
    (["not", "a", "dict"], "the pickle is not a non-empty dict"),
    ({"d": {"src": "s", "ref_summ": "r", "ref_summs": ["r"], "sys_summs": {"M": {"sys_summ": "x",
                                                                                  "scores": {"coherence": 1}}}}},
     "scores has"),
    ({"d": {"src": 3, "ref_summ": "r", "ref_summs": ["r"], "sys_summs": {"M": {"sys_summ": "x", "scores": {
        "coherence": 1, "consistency": 1, "fluency": 1, "relevance": 1}}}}}, "src is a int"),
])
def test_a_pickle_of_another_shape_is_refused(value: object, why: str) -> None:
    with pytest.raises(UserError, match=re.escape(why)):
        summeval_jsonl(pickle.dumps(value))


def test_pull_refuses_a_pinned_pickle_that_would_run_code(tmp_path: Path, data: Path, mirror: Mirror,
                                                          monkeypatch: pytest.MonkeyPatch,
                                                          capsys: pytest.CaptureFixture[str]) -> None:
    """Even bytes whose hash the registry pins are never unpickled with their globals."""
    marker = tmp_path / "ran"
    evil = pickle.dumps({"doc-1": _Calls(marker)}, protocol=2)
    pinned = PublicSet("evil", "a pickle that calls", "someone/evil", COMMIT, "none",
                       (DataFile("evil/summeval_1600.jsonl", "data.pkl", 1, sha(b"x"), upstream_size=len(evil),
                                 upstream_sha256=sha(evil), convert=summeval_jsonl),))
    monkeypatch.setattr(public_sets, "PUBLIC_SETS", (pinned,))
    mirror.serve(pinned, "data.pkl", evil)
    assert main(["data", "pull", "evil"]) == 2
    lines = errors(capsys.readouterr().err)
    assert len(lines) == 1 and "GLOBAL opcode" in lines[0]
    assert not marker.exists() and not (data / "evil" / "summeval_1600.jsonl").exists()


def test_a_pickle_placed_by_hand_is_converted(data: Path, mirror: Mirror) -> None:
    (data / "toysum").mkdir(parents=True)
    (data / "toysum" / "data.pkl").write_bytes(SMALL_PICKLE)
    mirror.files.clear()
    assert main(["data", "pull", "toysum"]) == 0
    assert leftovers(data) == ["toysum/summeval_1600.jsonl"] and mirror.ranges == []


# --- the real registry -----------------------------------------------------------------------------------

def test_the_registry_is_the_command_line_list() -> None:
    from examiner.cli.commands.data import SET_NAMES

    assert SET_NAMES == public_sets.set_names()
    assert all(f.local.split("/")[0] == s.name for s in public_sets.PUBLIC_SETS for f in s.files)


@requires_real_data(*public_sets.set_names())
def test_every_real_file_passes_the_hash_check_through_the_mirror(tmp_path: Path) -> None:
    """Serves the real sets from the data folder (direct files under their upstream paths) and pulls them
    into an empty folder: every pinned size and sha256 of the registry must hold. SummEval's JSONL, converted
    from a pickle the folder does not keep, is checked against its pinned hash where it lies."""
    root = public_sets.configured_root()
    registry = public_sets.PUBLIC_SETS
    direct = [PublicSet(s.name, s.what, s.repo, s.commit, s.licence, tuple(f for f in s.files if f.convert is None))
              for s in registry if any(f.convert is None for f in s.files)]
    served = Mirror()
    try:
        for public_set in direct:
            for data_file in public_set.files:
                served.serve(public_set, data_file.upstream, (Path(root) / data_file.local).read_bytes())
        pull_sets(direct, tmp_path, served.base)
    finally:
        served.close()
    assert [set_status(tmp_path, s).state for s in direct] == ["present"] * len(direct)
    converted = [f for s in registry for f in s.files if f.convert is not None]
    assert converted and all(hashlib.sha256((Path(root) / f.local).read_bytes()).hexdigest() == f.sha256
                             for f in converted)
