"""Damaged and hostile configuration files: every one gives Settings or one ConfigError, never another
exception. A seeded generator mutates the example configuration (cut short, bytes flipped, lines
swapped, values replaced by other YAML types, deep nesting, alias bombs), beside hand-written cases.
"""

from __future__ import annotations

import random
from pathlib import Path

import pytest

from examiner.core.config import Settings, load_settings
from examiner.core.errors import ConfigError

EXAMPLE = (Path(__file__).resolve().parents[2] / "examples" / "config.yaml").read_bytes()
INPUTS = 300

ODD_VALUES = [b'"lots"', b"-1", b"1e309", b"nan", b".inf", b"[]", b"{}", b"~", b"9" * 5000, b"!!binary aGVsbG8=",
              b"&a [*a]", b"0x7fffffffffffffffffff", b"2001-12-14", b"yes", b"'\\x00'", b'"\\u0000"']


def _alias_bomb(levels: int = 12) -> bytes:
    lines = ["a0: &a0 [x, x, x, x, x, x, x, x, x, x]"]
    lines += [f"a{i}: &a{i} [{', '.join([f'*a{i - 1}'] * 10)}]" for i in range(1, levels)]
    return ("\n".join(lines) + f"\nexam: *a{levels - 1}\n").encode()


HANDWRITTEN = {
    "alias bomb": _alias_bomb(),
    "deep list": b"exam: " + b"[" * 5000 + b"]" * 5000,
    "deep mapping": b"".join(b"  " * i + b"k:\n" for i in range(400)),
    "not a mapping": b"- a\n- b\n",
    "binary": bytes(range(256)),
    "not utf-8": "budget_usd: 3 \u00e9".encode("latin-1"),
    "unknown section": b"nonsense: {a: 1}\n",
    "python object": b"budget_usd: !!python/object/apply:os.system ['true']\n",
    "huge integer": b"exam: {seed: " + b"9" * 6000 + b"}\n",
    "tab indentation": b"endpoints:\n\tx: 1\n",
}


def _mutations(seed: int) -> bytes:
    rng = random.Random(seed)
    data = bytearray(EXAMPLE)
    kind = rng.randrange(5)
    if kind == 0:
        return bytes(data[: rng.randrange(len(data))])
    if kind == 1:
        for _ in range(rng.randint(1, 8)):
            data[rng.randrange(len(data))] = rng.randrange(256)
        return bytes(data)
    lines = bytes(data).split(b"\n")
    if kind == 2:
        i, j = rng.randrange(len(lines)), rng.randrange(len(lines))
        lines[i], lines[j] = lines[j], lines[i]
        return b"\n".join(lines)
    if kind == 3:
        candidates = [i for i, line in enumerate(lines) if b": " in line and not line.lstrip().startswith(b"#")]
        for i in rng.sample(candidates, k=min(3, len(candidates))):
            key = lines[i].split(b": ", 1)[0]
            lines[i] = key + b": " + rng.choice(ODD_VALUES)
        return b"\n".join(lines)
    depth = rng.randint(20, 3000)
    return bytes(data) + b"\nextra: " + b"{a: " * depth + b"1" + b"}" * depth + b"\n"


def _load(path: Path, data: bytes) -> str:
    """'ok', or 'error: <line>' for a ConfigError; anything else escapes and fails the test."""
    path.write_bytes(data)
    try:
        settings = load_settings(path, environ={})
    except ConfigError as exc:
        message = str(exc)
        assert message and "\n" not in message.strip() and "Traceback" not in message
        return f"error: {message}"
    assert isinstance(settings, Settings)
    return "ok"


@pytest.mark.timeout(300)
def test_every_damaged_configuration_is_settings_or_one_config_error(tmp_path: Path) -> None:
    results = [_load(tmp_path / f"c{i}.yaml", _mutations(i)) for i in range(INPUTS)]
    errors = sum(r.startswith("error") for r in results)
    assert 0 < errors < INPUTS, "the generator makes both usable and unusable files"
    print(f"\n{INPUTS} damaged configurations: {INPUTS - errors} read, {errors} refused with one line")


@pytest.mark.timeout(120)
@pytest.mark.parametrize("name", sorted(HANDWRITTEN))
def test_hostile_configuration(tmp_path: Path, name: str) -> None:
    result = _load(tmp_path / "config.yaml", HANDWRITTEN[name])
    if name in ("alias bomb", "deep list", "deep mapping", "not a mapping", "binary", "not utf-8", "python object",
                "huge integer", "tab indentation"):
        assert result.startswith("error: "), result
