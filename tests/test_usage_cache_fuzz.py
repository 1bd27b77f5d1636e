"""The usage cache files a warm report reads first (the digest and the
remembered answers: :func:`pi_session.usage.digest.load_digest`,
:func:`pi_session.usage.stamps.load_answers`) against content crafted by
the same user with a valid CRC-32: thousands of mutations of real files
(bits flipped, bytes inserted, deleted, repeated, values of another type)
and known hostile inputs (huge length fields, code objects, deep nesting,
references out of range, numbers of 20,000 digits). Each batch runs in
its own process under a 1 GB address-space limit and a deadline, so a
crash, an abort, a hang or a MemoryError is this test failing, not a dead
test worker. What a loader returns must be usable: a report is made from
an accepted digest, the walk and the texts of accepted answers are used."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from usage_gen import write_tree

ROOT = Path(__file__).resolve().parents[1]

CASES = 2000
"""Cases per batch (two batches per file: about a second each)."""

_FUZZ = r'''
import json, marshal, os, random, resource, sys
resource.setrlimit(resource.RLIMIT_AS, (1 << 30, 1 << 30))
root, path, which, seed, count = sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4]), int(sys.argv[5])
from pi_session.usage.stamps import checked, load_answers, scan
from pi_session.usage.digest import load_digest
from pi_session.usage.days import offsets_key
from pi_session.usage.report import report_of_groups

rng = random.Random(seed)
original = open(path, "rb").read()[4:]  # the payload, after its CRC-32
ALPHABET = b'[]{}(),:"0123456789-+.eEntrufalsNIiy\\u<>clr\x00\xff\xe3'
HOSTILE = [
    b"(" + (2**31 - 1).to_bytes(4, "little"), b"[" + (2**31 - 1).to_bytes(4, "little"), b"{" * 3 + b"0",
    b"<" + (2**31 - 1).to_bytes(4, "little"), b"u" + (2**31 - 1).to_bytes(4, "little"),
    b"l" + (2**31 - 1).to_bytes(4, "little"), b"[\x01\x00\x00\x00" * 100000 + b"N",
    b"r" + (10**6).to_bytes(4, "little"), marshal.dumps(compile("1", "x", "eval")),
    b"\xe3" + bytes(64), b"[" * 20000, b'{"a":' * 20000, b"9" * 20000, b"-" + b"9" * 5000, b"1e999999",
    b'"\\ud800"', b"NaN", b"Infinity", b"[" + b"1," * 20000 + b"1]", b'"' + b"\\u0000" * 5000 + b'"',
    b"18446744073709551616", b"-9223372036854775809", b'["\\udc80"]',
]
SWAPS = [None, True, False, 0, -1, 1.5, 1e308, "", "\ud800", "x" * 5, [], {}, [1, 2], {"a": 1}, 2**70]


def swapped(value):
    """``value`` (decoded JSON) with one value somewhere replaced by another type's."""
    if isinstance(value, dict) and value and rng.random() < 0.8:
        key = rng.choice(list(value))
        out = dict(value)
        out[key] = swapped(value[key])
        return out
    if isinstance(value, list) and value and rng.random() < 0.8:
        i = rng.randrange(len(value))
        out = list(value)
        out[i] = swapped(value[i])
        return out
    return rng.choice(SWAPS)


def mutated():
    data = bytearray(original)
    op = rng.randrange(10)
    if op == 0 and data:
        i = rng.randrange(len(data)); data[i] ^= 1 << rng.randrange(8)
    elif op == 1 and data:
        data[rng.randrange(len(data))] = rng.choice(ALPHABET)
    elif op == 2:
        i = rng.randrange(len(data) + 1); data[i:i] = bytes(rng.choice(ALPHABET) for _ in range(rng.randrange(1, 9)))
    elif op == 3 and data:
        i = rng.randrange(len(data)); del data[i:i + rng.randrange(1, 64)]
    elif op == 4 and data:
        i = rng.randrange(len(data)); j = min(len(data), i + rng.randrange(1, 256)); data[i:i] = data[i:j] * rng.randrange(2, 50)
    elif op == 5:
        del data[rng.randrange(len(data) + 1):]
    elif op == 6:
        i = rng.randrange(len(data) + 1); data[i:i] = rng.choice(HOSTILE)
    elif op == 7:
        return rng.choice(HOSTILE)
    elif op == 8 and data:
        for _ in range(rng.randrange(2, 20)):
            data[rng.randrange(len(data))] = rng.randrange(256)
    else:
        try:
            value = json.loads(bytes(data))
        except ValueError:
            return bytes(data[: rng.randrange(len(data) + 1)])
        try:
            return json.dumps(swapped(value)).encode()
        except (ValueError, TypeError):
            return bytes(data)
    return bytes(data)


fd = os.open(path, os.O_WRONLY)
accepted = 0
for n in range(count):
    data = checked(mutated())
    os.pwrite(fd, data, 0)  # the same file rewritten in place (no O_TRUNC: ext4 flushes on its close)
    os.ftruncate(fd, len(data))
    if which == "digest":
        digest = load_digest(root)
        if digest is not None:
            accepted += 1
            report_of_groups(digest.merged, digest.problems, "daily", timezone="UTC").to_json()
            assert isinstance(digest.stamps, bytes) and isinstance(digest.files, int) and all(isinstance(p, str) for p in digest.problems)
    else:
        answers = load_answers(root)
        if answers is not None:
            accepted += 1
            found = scan(root, answers)
            found.same_files(answers)
            offsets_key(answers["slots"], "UTC")
            assert all(isinstance(k, str) and isinstance(t, str) for k, t in answers["texts"].items())
            assert isinstance(answers["digest"], bytes) and isinstance(answers["files"], int)
print("ok", count, accepted)
'''


@pytest.fixture(scope="module")
def warm(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, dict[str, str]]:
    """A sessions root whose digest and answers exist (two warm reports
    made by the console script), and the environment that finds them."""
    base = tmp_path_factory.mktemp("fuzz")
    root = base / "sessions"
    write_tree(root, range(6))
    env = {**os.environ, "XDG_CACHE_HOME": str(base / "cache"), "PI_CODING_AGENT_DIR": str(base / "agent"),
           "PYTHONPATH": str(ROOT / "src") + os.pathsep + os.environ.get("PYTHONPATH", "")}
    exe = Path(sys.executable).parent / "pi-session"
    for _ in range(2):
        done = subprocess.run([str(exe), "usage", "daily", "--json", "--timezone", "UTC", "--store", str(root)],
                              capture_output=True, text=True, env=env, timeout=120)
        assert done.returncode == 0, done.stderr
    return root, env


def _cache_file(env: dict[str, str], kind: str) -> Path:
    [found] = [p for p in (Path(env["XDG_CACHE_HOME"]) / "pi-session" / "usage").iterdir() if f".{kind}." in p.name]
    return found


@pytest.mark.parametrize("seed", [1, 2])
@pytest.mark.parametrize("kind", ["digest", "answers"])
def test_crafted_cache_files_are_ignored_never_a_crash(warm: tuple[Path, dict[str, str]], tmp_path: Path, kind: str, seed: int) -> None:
    root, env = warm
    original = _cache_file(env, kind)
    path = tmp_path / original.name
    path.write_bytes(original.read_bytes())
    # the loaders read the file of the root: a copy of the cache directory per case, pointed at by XDG_CACHE_HOME
    cache = tmp_path / "cache" / "pi-session" / "usage"
    cache.mkdir(parents=True, mode=0o700)
    for other in original.parent.iterdir():
        (cache / other.name).write_bytes(other.read_bytes())
    target = cache / original.name
    run_env = {**env, "XDG_CACHE_HOME": str(tmp_path / "cache")}
    try:
        done = subprocess.run([sys.executable, "-c", _FUZZ, os.path.abspath(root), str(target), kind, str(seed), str(CASES)],
                              capture_output=True, text=True, env=run_env, timeout=300)
    except subprocess.TimeoutExpired:
        pytest.fail(f"{kind} batch {seed}: no end within 300 s (a hang)")
    assert done.returncode == 0, f"{kind} batch {seed}: status {done.returncode}\n{done.stderr[-3000:]}"
    ok, count, accepted = done.stdout.split()
    assert (ok, count) == ("ok", str(CASES)) and int(accepted) > 0  # some mutations (values of the same type) are read and used
