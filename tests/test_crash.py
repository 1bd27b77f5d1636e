"""Crash safety: a writer process killed with SIGKILL at random points.

The writer appends entries through SessionManager (printing each id after
its append returned), and between appends rewrites the session atomically,
migrates a v1 copy and repairs a damaged copy. After every kill: every
printed id is in the file exactly once, the file opens without storage
problems, and the next append lands on its own line. Between runs we also
leave a torn fragment at the end of the file, as a power loss mid-write
would, which the next append must move aside.
"""

from __future__ import annotations

import os
import random
import signal
import subprocess
import sys
import time
from pathlib import Path

import orjson

from pi_session.manager.session_manager import SessionManager
from pi_session.check.repair import STALE_TEMP_SECONDS, check_session, leftover_temps, repair_session
from pi_session.storage import read_session_file
from storage_helpers import make_session, user

WRITER = r'''
import os, shutil, sys
from pathlib import Path
from pi_session.manager.session_manager import SessionManager
from pi_session.storage import migrate_file
from pi_session.check.repair import repair_session
from pi_session.storage import atomic_rewrite, iter_lines, read_session_file, Durability

session, v1_template, damaged_template, workdir, seed, durability = sys.argv[1:7]
rng_seed = int(seed)
import random
rng = random.Random(rng_seed)
out = sys.stdout
m = SessionManager.open(session, durability=durability)
out.write("READY\n"); out.flush()
i = 0
while True:
    i += 1
    role = rng.random()
    if role < 0.5:
        eid = m.append_message({"role": "user", "content": f"run {seed} entry {i} " + "x" * rng.randrange(0, 3000), "timestamp": 1})
    else:
        eid = m.append_custom_entry("crash-test", {"i": i, "seed": seed})
    out.write(f"ID {eid}\n"); out.flush()
    r = rng.random()
    if r < 0.08:
        # same content, rewritten atomically (as a migration would), no backup
        sf = read_session_file(session, migrate=False)
        lines = [raw + b"\n" for _n, raw, _nl in iter_lines(session)]
        atomic_rewrite(session, lines, backup_tag=None, expect_size=sf.size, expect_mtime_ns=sf.mtime_ns)
        out.write("REWROTE\n"); out.flush()
    elif r < 0.12:
        target = os.path.join(workdir, f"v1-{seed}-{i}.jsonl")
        shutil.copyfile(v1_template, target)
        out.write(f"MIGRATE {target}\n"); out.flush()
        migrate_file(target)
        out.write(f"MIGRATED {target}\n"); out.flush()
    elif r < 0.16:
        target = os.path.join(workdir, f"dmg-{seed}-{i}.jsonl")
        shutil.copyfile(damaged_template, target)
        out.write(f"REPAIR {target}\n"); out.flush()
        repair_session(target)
        out.write(f"REPAIRED {target}\n"); out.flush()
'''

V1 = (
    b'{"type":"session","id":"v1-session","timestamp":"2025-01-01T00:00:00.000Z","cwd":"/p"}\n'
    + b"".join(
        b'{"type":"message","timestamp":"2025-01-01T00:00:01.000Z","message":{"role":"user","content":"m%d","timestamp":1}}\n' % i
        for i in range(40)
    )
)


def _damaged_template(tmp: Path) -> tuple[bytes, bytes]:
    """(damaged bytes, the bytes repair turns them into)."""
    src = make_session(tmp / "tpl", n=30)
    lines = src.read_bytes().split(b"\n")[:-1]
    damaged = [b"\xef\xbb\xbf" + lines[0]] + lines[1:10] + [b"garbage\x00\x00", lines[10] + b"\r"] + lines[11:]
    return b"\n".join(damaged) + b"\n", b"\n".join(lines) + b"\n"


def _check_whole_v1(path: Path) -> None:
    data = path.read_bytes()
    if data == V1:
        return  # old content, whole
    sf = read_session_file(path, migrate=False)
    assert sf.version == 3 and len(sf.entries) == 40 and not sf.problems, (path, data[:200])


def test_sigkill_during_appends_and_rewrites(tmp_path: Path) -> None:
    session = make_session(tmp_path / "sessions", n=2)
    v1_template = tmp_path / "v1.jsonl"
    v1_template.write_bytes(V1)
    damaged, repaired_expected = _damaged_template(tmp_path)
    damaged_template = tmp_path / "damaged.jsonl"
    damaged_template.write_bytes(damaged)
    work = tmp_path / "work"
    work.mkdir()
    script = tmp_path / "writer.py"
    script.write_text(WRITER)
    rng = random.Random(1234)
    acknowledged: list[str] = []
    deadline = time.monotonic() + 40
    runs = 0
    rewrites = 0
    torn_injected = 0
    while time.monotonic() < deadline and runs < 60:
        runs += 1
        durability = "entry" if runs % 5 == 0 else "none"
        proc = subprocess.Popen(
            [sys.executable, str(script), str(session), str(v1_template), str(damaged_template), str(work), str(runs), durability],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
        )
        assert proc.stdout is not None
        ready = proc.stdout.readline()
        assert ready == b"READY\n", (ready, proc.stderr.read() if proc.poll() is not None else b"")
        time.sleep(rng.uniform(0.0, 0.25))
        proc.send_signal(signal.SIGKILL)
        out, err = proc.communicate(timeout=30)
        assert proc.returncode == -signal.SIGKILL, err.decode()[-2000:]
        in_flight: dict[str, str] = {}
        for line in out.decode().splitlines():
            word, _, rest = line.partition(" ")
            if word == "ID":
                acknowledged.append(rest)
            elif word in ("MIGRATE", "REPAIR"):
                in_flight[rest] = word
            elif word in ("MIGRATED", "REPAIRED"):
                in_flight.pop(rest, None)
                rewrites += 1
            elif word == "REWROTE":
                rewrites += 1
        # rewrites interrupted by the kill left the old or the new file, whole
        for target, word in in_flight.items():
            if word == "MIGRATE":
                _check_whole_v1(Path(target))
            else:
                assert Path(target).read_bytes() in (damaged, repaired_expected), target
        # every acknowledged append is there exactly once; the file opens cleanly
        sf = read_session_file(session)
        storage_problems = [p for p in sf.problems if p.kind != "no-newline"]
        assert not storage_problems, storage_problems
        ids = [e["id"] for e in sf.entries]
        assert len(ids) == len(set(ids)), "an entry was written twice"
        present = set(ids)
        missing = [a for a in acknowledged if a not in present]
        assert not missing, f"run {runs}: {len(missing)} acknowledged entries missing"
        # sometimes simulate a power loss mid-write: a torn fragment at the end
        if runs % 3 == 0:
            with open(session, "ab") as f:
                f.write(b'{"type":"message","id":"deadbeef","parentId":null,"message":{"role":"us')
            torn_injected += 1
        # the next append lands on a line of its own
        m = SessionManager.open(session)
        new_id = m.append_message(user(f"after run {runs}"))
        last = session.read_bytes().rstrip(b"\n").rsplit(b"\n", 1)[-1]
        assert orjson.loads(last)["id"] == new_id
        acknowledged.append(new_id)
    print(f"runs={runs} appends={len(acknowledged)} rewrites={rewrites} torn={torn_injected}")
    assert runs >= 10
    assert len(acknowledged) > 1000, f"only {len(acknowledged)} appends in {runs} runs"
    assert rewrites > 20
    assert len(list(session.parent.glob(session.name + ".torn-*"))) == torn_injected
    report = check_session(session)
    assert not report.fixable, report.problems
    # temp files of rewrites the kills interrupted: once stale, repair deletes
    # them (each starts with the session's header) and leaves the session as is
    temps = leftover_temps(session)
    old = time.time() - STALE_TEMP_SECONDS - 1
    for tmp, _safe, _why in temps:
        os.utime(tmp, (old, old))
    before = session.read_bytes()
    result = repair_session(session)
    assert sorted(result.removed_temps) == sorted(t for t, _s, _w in temps), leftover_temps(session)
    assert session.read_bytes() == before and not leftover_temps(session)
    print(f"leftover temps deleted: {len(temps)}")
