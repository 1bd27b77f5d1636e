"""Benchmark of full-text search: a generated corpus of session
files, the search index built over it (MB/s of JSONL), an incremental
update after one append, warm query latency (p50/p99) for a 1-word, a
3-word, a phrase and a filtered query, index size vs text size, side by
side with ripgrep (``rg``, same JSONL files) and pi 1.6's listing of all
sessions (``SessionManager.listAll``: what ``/resume`` loads).

Usage::

    python bench/search.py                          # the full size: 10,000 sessions, ~1 GB
    python bench/search.py --sessions 2000 --kb 100 # smaller
    python bench/search.py --quick                  # a smoke run (seconds)

Results: a table on stdout, ``--json FILE`` / ``--md FILE`` (default
``bench/results/search.{json,md}`` unless ``--quick``). The corpus is kept in
``--data`` (default ``bench/data/search-<sessions>-<kb>``) and reused.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
sys.path.insert(0, str(HERE))
sys.path.insert(0, str(ROOT / "src"))

import gen  # noqa: E402

_SYLLABLES = "ka lo mi nu re so ta vi ze bo du fe gi ha jo ku la me ni po".split()


def _vocabulary(n: int = 20_000) -> list[str]:
    """``n`` made-up words (deterministic): real sessions use thousands of
    distinct words, gen.py's prose a few dozen."""
    out = []
    for i in range(n):
        word, k = "", i + 7
        while k:
            k, d = divmod(k, len(_SYLLABLES))
            word += _SYLLABLES[d]
        out.append(word + "x")
    return out


VOCAB = _vocabulary()
_SHARED: dict[str, str] = {}


class _SharedCorpus(gen._Corpus):
    """gen.py's corpus built once (building it per file took 50 ms), its
    prose mixed with a Zipf-distributed vocabulary of 20,000 words (every
    third word), so that word frequencies look like real text: a few very
    common words, many rare ones."""

    def __init__(self, r: random.Random) -> None:
        self.r = r
        if not _SHARED:
            base = random.Random(5)
            weights = [1 / (rank + 1) for rank in range(len(VOCAB))]
            zipf = base.choices(VOCAB, weights, k=200_000)
            words = [zipf[i] if i % 3 == 0 else base.choice(gen._WORDS) for i in range(len(zipf))]
            _SHARED["prose"] = " ".join(words)
            _SHARED["code"] = "\n".join(base.choice(gen._CODE_LINES) for _ in range(40_000))
        self.prose = _SHARED["prose"]
        self.code = _SHARED["code"]


gen._Corpus = _SharedCorpus  # type: ignore[misc]

_W1, _W2, _W3, _W4 = VOCAB[300], VOCAB[40], VOCAB[900], VOCAB[2000]
QUERIES = {
    "1 word": _W1,
    "3 words": f"{_W2} {_W3} parser",
    "phrase": '"line numbers"',
    "filtered": f"{_W4} role:assistant project:proj-3 after:2025-06-01",
}
"""Words of the vocabulary's ranks 300 (1 word), 40 and 900 with a common
word (3 words), gen.py's commonest phrase, and a rank-2000 word filtered by
role, project and date."""
_3 = [_W2, _W3, "parser"]
RG = {
    "1 word": ["-i", "-F", "-l", _W1],
    "3 words": ["-i", "-l", "|".join(f"{a}.*{b}.*{c}" for a in _3 for b in _3 for c in _3 if len({a, b, c}) == 3)],
    "phrase": ["-i", "-F", "-l", "line numbers"],
    "filtered": ["-i", "-l", f'"role":"assistant".*{_W4}'],
}
"""ripgrep's nearest equivalent of each query (file names of matching
files; the 3 words in one line, any order; the filter as a regex on the
line): a lower bound of what rg needs, it neither ranks nor cuts snippets."""


def make_corpus(directory: Path, sessions: int, kb: float, log: Any) -> dict[str, Any]:
    """``sessions`` session files of about ``kb`` KB each on average (log-normal
    spread) in 20 project directories."""
    marker = directory / "corpus.json"
    if marker.exists():
        return json.loads(marker.read_text())
    if directory.exists():
        shutil.rmtree(directory)
    r = random.Random(11)
    total = 0
    for i in range(sessions):
        project = directory / f"--home-user-proj-{i % 20}--"
        project.mkdir(parents=True, exist_ok=True)
        size = min(8 * kb, max(kb / 10, r.lognormvariate(0, 0.7) * kb * 0.8))
        n = max(6, int(size * 1000 / 1300))
        tmp = project / f"tmp-{i}.jsonl"
        info = gen.generate_session_file(tmp, n, mb=size / 1000, seed=1_000_003 + i, cwd=f"/home/user/proj-{i % 20}", compactions=0)
        with open(tmp, "rb") as f:
            header = json.loads(f.readline())
        name = header["timestamp"].replace(":", "-").replace(".", "-") + "_" + header["id"] + ".jsonl"
        os.replace(tmp, project / name)
        total += info["bytes"]
        if log and (i + 1) % 1000 == 0:
            log(f"  {i + 1} sessions, {total / 1e6:.0f} MB")
    info = {"sessions": sessions, "bytes": total}
    marker.write_text(json.dumps(info))
    return info


def _pcts(samples: list[float]) -> dict[str, float]:
    s = sorted(samples)
    return {"p50": statistics.median(s), "p99": s[min(len(s) - 1, int(round(0.99 * (len(s) - 1))))]}


def _cpu_s() -> float:
    """CPU seconds of this process and of its finished children."""
    t = os.times()
    return t.user + t.system + t.children_user + t.children_system


def _time(fn: Any) -> float:
    t = time.perf_counter()
    fn()
    return (time.perf_counter() - t) * 1000


def run(data: Path, sessions: int, kb: float, reps: int, log: Any) -> dict[str, Any]:
    from pi_session.search import search
    from pi_session.search.files import FileIndex

    corpus = make_corpus(data, sessions, kb, log)
    out: dict[str, Any] = {"sessions": corpus["sessions"], "jsonl_bytes": corpus["bytes"]}
    cache = Path(tempfile.mkdtemp(prefix="pi-search-bench-"))
    os.environ["XDG_CACHE_HOME"] = str(cache)
    try:
        index = FileIndex(data)
        log("building the index ...")
        t = time.perf_counter()
        cpu = _cpu_s()
        stats = index.update()
        build_s = time.perf_counter() - t
        out["build_cpu_s"] = _cpu_s() - cpu  # the shards' worker processes too
        out["shards"] = index.shard_count
        out["build_cpu_mb_s"] = corpus["bytes"] / 1e6 / out["build_cpu_s"]
        out["load_average"] = os.getloadavg()[0]
        out["build_s"] = build_s
        out["build_mb_s"] = corpus["bytes"] / 1e6 / build_s
        out["files_indexed"] = stats.files_read
        for conn in index.shard_connections():
            conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
        out["index_bytes"] = sum(p.stat().st_size for p in index.path.parent.iterdir())
        # the indexed text: each document's line read back and re-extracted
        # (the index keeps offsets, not text)
        text_bytes = 0
        from pi_session.search.files import file_key
        from pi_session.search.fts import line_texts

        for conn in index.shard_connections():
            for (path,) in conn.execute("SELECT path FROM sources").fetchall():
                raw = Path(path).read_bytes()
                for pos, length in conn.execute("SELECT pos, len FROM docs WHERE sid = ?", (file_key(path),)):
                    got = line_texts(raw[pos : pos + length])
                    if got is not None:
                        text_bytes += len(got[1].encode("utf-8", "surrogatepass")) + len(got[2].encode("utf-8", "surrogatepass"))
        out["text_bytes"] = text_bytes
        # nothing changed: the freshness check alone, and its floor: one
        # os.stat per file, nothing else
        out["noop_update_ms"] = statistics.median(_time(index.update) for _ in range(5))
        files = [str(p) for p in data.rglob("*.jsonl")]
        out["stat_all_ms"] = statistics.median(_time(lambda: [os.stat(p) for p in files]) for _ in range(5))
        # one append to the largest file
        largest = max(data.rglob("*.jsonl"), key=lambda p: p.stat().st_size)
        line = (json.dumps({"type": "message", "id": "bench0001", "parentId": None, "timestamp": "2026-01-01T00:00:00.000Z",
                            "message": {"role": "user", "content": "an appended zeppelin message", "timestamp": 1}}) + "\n").encode()
        size_before = largest.stat().st_size
        with open(largest, "ab") as f:
            f.write(line)
        t = time.perf_counter()
        inc = index.update()
        out["append_update_ms"] = (time.perf_counter() - t) * 1000
        out["append_bytes_indexed"] = inc.bytes_indexed
        out["append_file_bytes"] = size_before
        with open(largest, "r+b") as f:
            f.truncate(size_before)  # the corpus stays as generated (the next update reindexes that file)
        index.update()
        index.close()
        out["queries"] = {}
        for label, q in QUERIES.items():
            search(data, q, update=False)  # warm
            samples = [_time(lambda q=q: search(data, q, update=False)) for _ in range(reps)]
            fresh = [_time(lambda q=q: search(data, q)) for _ in range(max(3, reps // 10))]
            hits = len(search(data, q, update=False, limit=20).hits)
            entry: dict[str, Any] = {"query": q, "hits": hits, **_pcts(samples), "with_check_p50": statistics.median(fresh)}
            rg = shutil.which("rg")
            if rg:
                subprocess.run([rg, *RG[label], str(data)], capture_output=True)  # warm
                rg_samples = [_time(lambda: subprocess.run([rg, *RG[label], str(data)], capture_output=True)) for _ in range(3)]
                entry["rg_ms"] = statistics.median(rg_samples)
            out["queries"][label] = entry
            log(f"  {label}: p50 {entry['p50']:.1f} ms, rg {entry.get('rg_ms', float('nan')):.0f} ms")
        out["pi_list_all_ms"] = pi_list_all(data, log)
    finally:
        shutil.rmtree(cache, ignore_errors=True)
    return out


def pi_list_all(data: Path, log: Any) -> float | None:
    """pi 1.6's ``SessionManager.listAll`` of the corpus (ms), or None
    without node / the oracle's install."""
    try:
        import run as bench_run  # bench/run.py

        pis = [pv for pv in bench_run.pi_versions(["1.6.0"]) if pv.node]
    except Exception:  # noqa: BLE001 - pi is optional here
        return None
    if not pis:
        return None
    pv = pis[0]
    agent = Path(tempfile.mkdtemp(prefix="pi-bench-agent-"))
    try:
        (agent / "sessions").symlink_to(data.resolve())
        env = {**os.environ, "PI_BENCH_PKG_DIR": str(pv.package_dir), "PI_CODING_AGENT_DIR": str(agent)}
        proc = subprocess.run([pv.node, "--max-old-space-size=8192", str(HERE / "pi_bench.mjs"), "listall", "-", "1"],
                              capture_output=True, text=True, env=env, timeout=1800)
    finally:
        shutil.rmtree(agent, ignore_errors=True)
    if proc.returncode != 0:
        log(f"pi listAll failed: {proc.stderr[-500:]}")
        return None
    result = json.loads(proc.stdout.strip().splitlines()[-1])
    log(f"  pi listAll: {result['sessions']} sessions in {result['ops']['list_first'][0]:.0f} ms")
    return float(result["ops"]["list_first"][0])


def table(r: dict[str, Any]) -> str:
    mb = r["jsonl_bytes"] / 1e6
    lines = [
        f"Corpus: {r['sessions']:,} sessions, {mb:,.0f} MB of JSONL (bench/search.py; one run, 2-core machine)",
        "",
        "| measure | pi-session search | rg over the same JSONL; pi 1.6 |",
        "|---|---|---|",
        f"| index build ({r.get('shards', 1)} shards) | {r['build_s']:.0f} s wall ({r['build_mb_s']:.0f} MB/s; load average {r['load_average']:.1f}), "
        f"{r['build_cpu_s']:.0f} s CPU ({r['build_cpu_mb_s']:.0f} MB/s per core) | - |",
        f"| update after one append ({r['append_bytes_indexed']} bytes to a {r['append_file_bytes'] / 1e3:.0f} KB file) | {r['append_update_ms']:.0f} ms | - |",
        f"| update, nothing changed (stat of every file) | {r['noop_update_ms']:.0f} ms"
        + (f" (`os.stat` of the {r['sessions']:,} files alone: {r['stat_all_ms']:.0f} ms)" if "stat_all_ms" in r else "")
        + " | - |",
    ]
    for label, q in r["queries"].items():
        rg = f"{q['rg_ms']:.0f} ms ({q['rg_ms'] / q['p50']:.0f}x)" if "rg_ms" in q else "n/a"
        lines.append(f"| warm query, {label} (`{q['query']}`) p50 / p99 | {q['p50']:.1f} / {q['p99']:.1f} ms (with freshness check {q['with_check_p50']:.0f} ms) | {rg} |")
    lines.append(f"| index size | {r['index_bytes'] / 1e6:.0f} MB = {r['index_bytes'] / r['jsonl_bytes']:.2f} x JSONL, {r['index_bytes'] / max(1, r['text_bytes']):.2f} x its {r['text_bytes'] / 1e6:.0f} MB of text | - |")
    pi = r.get("pi_list_all_ms")
    lines.append(f"| pi 1.6 `listAll` (what /resume loads) | - | {pi / 1000:.1f} s |" if pi else "| pi 1.6 `listAll` | - | n/a (no node) |")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--sessions", type=int, default=10_000)
    ap.add_argument("--kb", type=float, default=100.0, help="average session size in KB (default 100: 10,000 sessions ~ 1 GB)")
    ap.add_argument("--reps", type=int, default=100, help="warm samples per query")
    ap.add_argument("--quick", action="store_true", help="a smoke run: 40 sessions of 10 KB, 5 samples")
    ap.add_argument("--data", type=Path)
    ap.add_argument("--json", type=Path)
    ap.add_argument("--md", type=Path)
    ap.add_argument("--no-pi", action="store_true")
    ap.add_argument("--render", type=Path, help="print the table of a results JSON file and exit")
    args = ap.parse_args(argv)
    if args.render:
        print(table(json.loads(args.render.read_text())))
        return 0
    if args.quick:
        args.sessions, args.kb, args.reps = 40, 10.0, 5
    data = args.data or HERE / "data" / f"search-{args.sessions}-{args.kb:g}"

    def log(msg: str) -> None:
        sys.stderr.write(msg + "\n")

    if args.no_pi:
        globals()["pi_list_all"] = lambda _d, _l: None
    result = run(data, args.sessions, args.kb, args.reps, log)
    text = table(result)
    print(text)
    json_path = args.json or (None if args.quick else HERE / "results" / "search.json")
    md_path = args.md or (None if args.quick else HERE / "results" / "search.md")
    if json_path:
        json_path.write_text(json.dumps(result, indent=1) + "\n")
    if md_path:
        md_path.write_text(text + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
