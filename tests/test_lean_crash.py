"""Crash safety of ``slim``, ``restore`` and ``prune``: a worker process
runs them over and over on copies of two sessions and is killed with
SIGKILL at random points. After every kill each copy holds the old or the
new content, whole; every blob holds the bytes its name's hash says; an
archive that exists is a whole session; and every slimmed copy restores to
the original bytes."""

from __future__ import annotations

import hashlib
import random
import signal
import subprocess
import sys
import time
from pathlib import Path

import orjson

from lean_helpers import branchy_session, image_session
from pi_session.operations.pruning import prune_session
from pi_session.operations.slimming import restore_session, slim_session

WORKER = r'''
import shutil, sys
from pathlib import Path
from pi_session.operations.pruning import prune_session
from pi_session.operations.slimming import restore_session, slim_session

slim_template, prune_template, work = map(Path, sys.argv[1:4])
out = sys.stdout
out.write("READY\n"); out.flush()
i = 0
while True:
    i += 1
    s = work / f"slim-{sys.argv[4]}-{i}.jsonl"
    shutil.copyfile(slim_template, s)
    slim_session(s, backup=i % 2 == 0)
    if i % 3 == 0:
        restore_session(s)
    p = work / f"prune-{sys.argv[4]}-{i}.jsonl"
    shutil.copyfile(prune_template, p)
    prune_session(p, archive=work / f"archive-{sys.argv[4]}-{i}.jsonl", backup=i % 2 == 1)
'''


def test_sigkill_during_slim_restore_and_prune(tmp_path: Path) -> None:
    templates = tmp_path / "templates"
    templates.mkdir()
    slim_template = image_session(templates / "img.jsonl", total_bytes=600_000, rounds=8)["path"]
    prune_template = branchy_session(templates / "branchy.jsonl")["path"]
    original, branchy = slim_template.read_bytes(), prune_template.read_bytes()
    # the new contents, made once without interruption
    expected = tmp_path / "expected"
    expected.mkdir()
    (expected / "s.jsonl").write_bytes(original)
    slim_session(expected / "s.jsonl", backup=False)
    slimmed = (expected / "s.jsonl").read_bytes()
    (expected / "p.jsonl").write_bytes(branchy)
    pruned_result = prune_session(expected / "p.jsonl", archive=expected / "a.jsonl", backup=False)
    pruned = (expected / "p.jsonl").read_bytes()
    archive_lines = len((expected / "a.jsonl").read_bytes().splitlines())
    assert slimmed != original and pruned != branchy and pruned_result.moved

    work = tmp_path / "work"
    work.mkdir()
    script = tmp_path / "worker.py"
    script.write_text(WORKER)
    rng = random.Random(4321)
    deadline = time.monotonic() + 15
    runs = 0
    while time.monotonic() < deadline and runs < 40:
        runs += 1
        proc = subprocess.Popen([sys.executable, str(script), str(slim_template), str(prune_template), str(work), str(runs)],
                                stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        assert proc.stdout is not None
        assert proc.stdout.readline() == b"READY\n", proc.stderr.read() if proc.poll() is not None else b""
        time.sleep(rng.uniform(0.05, 0.6))
        proc.send_signal(signal.SIGKILL)
        _out, err = proc.communicate(timeout=30)
        assert proc.returncode == -signal.SIGKILL, err.decode()[-2000:]
    copies = slimmed_copies = pruned_copies = 0
    for path in sorted(work.glob("slim-*.jsonl")):
        data = path.read_bytes()
        if data == b"":
            continue  # killed inside the copy the worker makes, before slim ran
        if len(data) < len(original) and original.startswith(data):
            continue  # the same, mid-copy
        copies += 1
        assert data in (original, slimmed), path
        if data == slimmed:
            slimmed_copies += 1
            restore_session(path)
            assert path.read_bytes() == original
    for path in sorted(work.glob("prune-*.jsonl")):
        data = path.read_bytes()
        if len(data) < len(branchy) and branchy.startswith(data):
            continue  # mid-copy
        assert data in (branchy, pruned), path
        pruned_copies += data == pruned
        archive = path.with_name(path.name.replace("prune-", "archive-"))
        if data == pruned:
            assert archive.exists(), archive
        if archive.exists():  # whole: a header and every archived entry
            lines = archive.read_bytes().splitlines()
            assert len(lines) == archive_lines and all(orjson.loads(x) for x in lines)
    for blob in (work / ".blobs").rglob("*"):
        if blob.is_file() and not blob.name.endswith(".tmp"):
            assert hashlib.sha256(blob.read_bytes()).hexdigest() == blob.parent.name + blob.name, blob
    print(f"runs={runs} copies={copies} slimmed={slimmed_copies} pruned={pruned_copies}")
    assert runs >= 10 and slimmed_copies > 0 and pruned_copies > 0
