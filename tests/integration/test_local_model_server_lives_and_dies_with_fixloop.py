"""The managed local model server's lifecycle, with a tiny fake llama.cpp server as the child."""

from __future__ import annotations

import asyncio
import json
import os
import signal
import socket
import subprocess
import sys
import textwrap
import time
import urllib.request
from pathlib import Path

import pytest

from fixloop.config import Settings
from fixloop.errors import ModelError
from fixloop.model import local
from fixloop.model.catalog import get_model
from fixloop.model.llama_cpp_python import _SERVER_MODULES
from fixloop.model.llama_server import LLAMA_SERVER_ENV
from fixloop.model.local import LocalModelServer, ensure_local_server, stop_local_server

FAKE_SERVER = textwrap.dedent('''
    """A stand-in for `python -m llama_cpp.server`: answers GET /v1/models, records its argv."""
    import argparse, http.server, json, os, sys, time

    parser = argparse.ArgumentParser()
    for flag in ("--model", "--model_alias", "--host", "--port", "--n_ctx", "--n_threads", "--logits_all"):
        parser.add_argument(flag)
    args = parser.parse_args()
    mode = os.environ.get("FAKE_LLAMA_MODE", "")
    record = os.environ.get("FAKE_LLAMA_RECORD")
    if record:
        with open(record, "a") as out:
            out.write(json.dumps({"pid": os.getpid(), "argv": sys.argv[1:]}) + "\\n")
    print("fake llama server starting on", args.port, flush=True)
    if mode == "crash":
        print("error: failed to load model: bad magic", file=sys.stderr, flush=True)
        sys.exit(3)
    if mode == "silent":
        time.sleep(60)

    class Handler(http.server.BaseHTTPRequestHandler):
        def do_GET(self):
            body = json.dumps({"object": "list", "data": [{"id": args.model_alias}]}).encode()
            self.send_response(200 if self.path == "/v1/models" else 404)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, *a):
            print("request", *a, file=sys.stderr, flush=True)

    try:
        server = http.server.HTTPServer((args.host, int(args.port)), Handler)
    except OSError as error:
        print(f"ERROR: [Errno {error.errno}] error while attempting to bind: address already in use",
              file=sys.stderr, flush=True)
        sys.exit(1)
    server.serve_forever()
''')


@pytest.fixture(autouse=True)
def no_llama_server(monkeypatch: pytest.MonkeyPatch) -> None:
    """Here the child is llama-cpp-python's server (faked): never the llama-server built here."""
    monkeypatch.setenv(LLAMA_SERVER_ENV, "none")


@pytest.fixture
def fake_server(tmp_path: Path) -> Path:
    script = tmp_path / "fake_llama_server.py"
    script.write_text(FAKE_SERVER)
    return script


def make_server(tmp_path: Path, fake_server: Path, **kwargs: object) -> LocalModelServer:
    return LocalModelServer(
        tmp_path / "model.gguf",
        alias="fake-model",
        command=[sys.executable, str(fake_server)],
        log_path=tmp_path / "server.log",
        **kwargs,
    )  # type: ignore[arg-type]


def get_models(base_url: str) -> dict[str, object]:
    opener = urllib.request.build_opener(urllib.request.ProxyHandler({}))
    with opener.open(f"{base_url}/models", timeout=5) as response:
        return json.loads(response.read())


def gone(pid: int) -> bool:
    """Not running: no such process, or a zombie nobody reaped yet."""
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except (OSError, IndexError):
        return True
    return state in ("Z", "X")


def wait_gone(pid: int, seconds: float = 10) -> bool:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if gone(pid):
            return True
        time.sleep(0.05)
    return gone(pid)


async def test_started_once_and_reused(
    tmp_path: Path, fake_server: Path, monkeypatch: pytest.MonkeyPatch, capfd: pytest.CaptureFixture[str]
) -> None:
    record = tmp_path / "record.jsonl"
    monkeypatch.setenv("FAKE_LLAMA_RECORD", str(record))
    server = make_server(tmp_path, fake_server, threads=3, context=4096)
    try:
        url = await server.start(timeout=30)
        assert url.startswith("http://127.0.0.1:") and url.endswith("/v1")
        assert server.base_url == url
        assert get_models(url)["data"] == [{"id": "fake-model"}]
        pid = server.pid
        assert await server.start() == url
        assert await asyncio.gather(server.start(), server.start()) == [url, url]
        assert server.pid == pid
        launches = [json.loads(line) for line in record.read_text().splitlines()]
        assert len(launches) == 1
        argv = launches[0]["argv"]
        port = url.split(":")[2].split("/")[0]
        assert argv == [
            "--model",
            str(tmp_path / "model.gguf"),
            "--model_alias",
            "fake-model",
            "--host",
            "127.0.0.1",
            "--port",
            port,
            "--n_ctx",
            "4096",
            "--n_threads",
            "3",
            "--logits_all",
            "false",
        ]
    finally:
        await server.stop()
    assert pid is not None and wait_gone(pid)
    assert server.base_url is None and not server.running()
    log = (tmp_path / "server.log").read_text()
    assert "fake llama server starting" in log and "request" in log
    assert "fake llama server" not in capfd.readouterr().out  # the child never writes to our stdout


async def test_concurrent_first_starts_launch_one_child(
    tmp_path: Path, fake_server: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    record = tmp_path / "record.jsonl"
    monkeypatch.setenv("FAKE_LLAMA_RECORD", str(record))
    server = make_server(tmp_path, fake_server)
    try:
        first, second = await asyncio.gather(server.start(timeout=30), server.start(timeout=30))
        assert first == second
        assert len(record.read_text().splitlines()) == 1
    finally:
        await server.stop()


def test_threads_default_to_the_cpu_count(tmp_path: Path) -> None:
    server = LocalModelServer(tmp_path / "m.gguf", alias="m")
    assert server.threads == (os.cpu_count() or 1)
    assert server.context == 16384
    assert server.command == [sys.executable, "-m", "llama_cpp.server"]


def test_llama_python_can_be_overridden(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("FIXLOOP_LLAMA_PYTHON", "/opt/llama/bin/python")
    server = LocalModelServer(tmp_path / "m.gguf", alias="m")
    assert server.launch_args(1234)[:3] == ["/opt/llama/bin/python", "-m", "llama_cpp.server"]


def test_the_child_dies_when_the_parent_is_killed(tmp_path: Path, fake_server: Path) -> None:
    parent_script = textwrap.dedent(f"""
        import asyncio, sys, time
        from pathlib import Path
        from fixloop.model.local import LocalModelServer
        server = LocalModelServer(Path("m.gguf"), alias="m", command=[sys.executable, {str(fake_server)!r}],
                                  log_path=Path({str(tmp_path / "server.log")!r}))
        url = asyncio.run(server.start(timeout=30))
        print(server.pid, url, flush=True)
        time.sleep(120)
    """)
    parent = subprocess.Popen([sys.executable, "-c", parent_script], stdout=subprocess.PIPE, text=True)
    try:
        assert parent.stdout is not None
        line = parent.stdout.readline().split()
        child_pid, url = int(line[0]), line[1]
        assert get_models(url)["data"] == [{"id": "m"}]
        assert not gone(child_pid)
        os.kill(parent.pid, signal.SIGKILL)
        parent.wait(timeout=10)
        assert wait_gone(child_pid), "the llama server outlived its killed parent"
    finally:
        if parent.poll() is None:
            parent.kill()
            parent.wait()


def test_the_child_stops_when_the_parent_exits_without_stopping_it(tmp_path: Path, fake_server: Path) -> None:
    parent_script = textwrap.dedent(f"""
        import asyncio, sys
        from pathlib import Path
        from fixloop.model.local import LocalModelServer
        server = LocalModelServer(Path("m.gguf"), alias="m", command=[sys.executable, {str(fake_server)!r}],
                                  log_path=Path({str(tmp_path / "server.log")!r}))
        asyncio.run(server.start(timeout=30))
        print(server.pid, flush=True)
        raise RuntimeError("crash without cleanup")
    """)
    done = subprocess.run([sys.executable, "-c", parent_script], capture_output=True, text=True, timeout=60)
    assert "crash without cleanup" in done.stderr
    assert wait_gone(int(done.stdout.split()[0]))


def _listening_socket() -> socket.socket:
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.bind(("127.0.0.1", 0))
    sock.listen(1)
    return sock


async def test_a_port_taken_between_pick_and_bind_is_retried(
    tmp_path: Path, fake_server: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    with _listening_socket() as taken:
        taken_port = taken.getsockname()[1]
        picks = iter([taken_port])
        real_free_port = local.free_port
        monkeypatch.setattr(local, "free_port", lambda: next(picks, None) or real_free_port())
        server = make_server(tmp_path, fake_server)
        try:
            url = await server.start(timeout=30)
            assert f":{taken_port}/" not in url
            assert get_models(url)["data"] == [{"id": "fake-model"}]
        finally:
            await server.stop()
    assert "address already in use" in (tmp_path / "server.log").read_text()


async def test_a_taken_fixed_port_is_a_clear_error(tmp_path: Path, fake_server: Path) -> None:
    with _listening_socket() as taken:
        server = make_server(tmp_path, fake_server, port=taken.getsockname()[1])
        with pytest.raises(ModelError, match=r"failed to start \(exit 1: .*address already in use.*log: "):
            await server.start(timeout=30)
    assert not server.running()


async def test_a_crashing_child_reports_its_log_tail(
    tmp_path: Path, fake_server: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("FAKE_LLAMA_MODE", "crash")
    server = make_server(tmp_path, fake_server)
    with pytest.raises(ModelError) as raised:
        await server.start(timeout=30)
    message = str(raised.value)
    assert "the local model server failed to start (exit 3:" in message
    assert "failed to load model: bad magic" in message
    assert str(tmp_path / "server.log") in message
    assert "\n" not in message


async def test_a_child_that_never_answers_times_out_and_is_killed(
    tmp_path: Path, fake_server: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("FAKE_LLAMA_MODE", "silent")
    record = tmp_path / "record.jsonl"
    monkeypatch.setenv("FAKE_LLAMA_RECORD", str(record))
    server = make_server(tmp_path, fake_server)
    with pytest.raises(ModelError, match=r"did not answer within 2s"):
        await server.start(timeout=2)
    pid = json.loads(record.read_text().splitlines()[0])["pid"]
    assert wait_gone(pid)


async def test_a_dead_child_is_restarted_on_the_next_start(tmp_path: Path, fake_server: Path) -> None:
    server = make_server(tmp_path, fake_server)
    try:
        await server.start(timeout=30)
        first = server.pid
        assert first is not None
        os.kill(first, signal.SIGKILL)
        assert wait_gone(first) or server._process is not None
        if server._process is not None:
            server._process.wait(timeout=5)
        await server.start(timeout=30)
        assert server.pid != first and server.running()
    finally:
        await server.stop()


async def test_ensure_local_server_runs_llama_cpp_server_once_per_process(
    tmp_path: Path, fake_server: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # A Python whose `-m llama_cpp.server` is the fake server, and a default model file of the right size.
    stubs = tmp_path / "stubs"
    for module in _SERVER_MODULES:
        (stubs / module).mkdir(parents=True)
        (stubs / module / "__init__.py").write_text("")
    (stubs / "llama_cpp" / "server").mkdir()
    (stubs / "llama_cpp" / "server" / "__init__.py").write_text("")
    (stubs / "llama_cpp" / "server" / "__main__.py").write_text(FAKE_SERVER)
    python = tmp_path / "llama-python"
    python.write_text(f'#!/bin/sh\nPYTHONPATH="{stubs}" exec "{sys.executable}" -S "$@"\n')
    python.chmod(0o755)
    models = tmp_path / "models"
    models.mkdir()
    info = get_model()
    with (models / info.file_name).open("wb") as sparse:
        sparse.truncate(info.size)
    record = tmp_path / "record.jsonl"
    monkeypatch.setenv("FAKE_LLAMA_RECORD", str(record))
    monkeypatch.setenv("FIXLOOP_LLAMA_PYTHON", str(python))
    monkeypatch.setenv("FIXLOOP_MODELS_DIR", str(models))

    settings = Settings(model="local", local_threads=2, local_context=2048)
    try:
        base_url, name = await ensure_local_server(settings)
        assert name == "qwen2.5-coder-1.5b"
        assert get_models(base_url)["data"] == [{"id": name}]
        assert await ensure_local_server(
            Settings(model="local:1.5b", local_threads=2, local_context=2048)
        ) == (base_url, name)
        launches = [json.loads(line) for line in record.read_text().splitlines()]
        assert len(launches) == 1
        assert launches[0]["argv"][launches[0]["argv"].index("--n_ctx") + 1] == "2048"
        first_pid = launches[0]["pid"]
        # different settings: the old child is stopped, one new one started
        await ensure_local_server(Settings(model="local", local_threads=1, local_context=2048))
        assert wait_gone(first_pid)
        assert len(record.read_text().splitlines()) == 2
    finally:
        await stop_local_server()
    last_pid = json.loads(record.read_text().splitlines()[-1])["pid"]
    assert wait_gone(last_pid)
