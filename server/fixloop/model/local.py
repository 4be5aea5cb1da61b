"""The managed local model: llama.cpp's OpenAI-compatible server as a child that dies with its parent, started
once per process and reused across runs (how it is served: `fixloop.model.llama_server`)."""

from __future__ import annotations

import asyncio
import atexit
import contextlib
import ctypes
import os
import signal
import socket
import subprocess
import sys
import time
import weakref
from collections.abc import Sequence
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING, Any
from urllib.parse import urlsplit

import platformdirs

from fixloop.errors import ConfigError, ModelError
from fixloop.model.catalog import ModelInfo, get_model
from fixloop.model.llama_cpp_python import llama_problem, llama_python
from fixloop.model.llama_server import LLAMA_CPP_PYTHON, Serving, plan_serving
from fixloop.model.loopback import loopback_request
from fixloop.model.profiles import with_profile
from fixloop.model.prompt_store import prompt_file, restore_prompt, save_prompt
from fixloop.model.pull import model_path, status
from fixloop.model.warm_up import forget_restored, mark_restored

if TYPE_CHECKING:
    from fixloop.config import Settings

_PR_SET_PDEATHSIG = 1
_START_ATTEMPTS = 3


def free_port() -> int:
    """A port on 127.0.0.1 that nothing listens on right now (the OS picks it)."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def _prctl() -> Any:
    """libc's prctl, looked up in the parent: the child between fork and exec must not dlopen."""
    if not sys.platform.startswith("linux"):
        return None
    try:
        return ctypes.CDLL(None, use_errno=True).prctl
    except (OSError, AttributeError):
        return None


def _die_with_parent(prctl: Any, parent: int) -> None:
    """preexec_fn: SIGKILL this child when the parent dies, even by SIGKILL (Linux only)."""
    if prctl is None:
        return
    prctl(_PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0)
    if os.getppid() != parent:  # the parent died before prctl took effect
        os._exit(1)


_RUNNING: weakref.WeakSet[LocalModelServer] = weakref.WeakSet()


@atexit.register
def _stop_all_at_exit() -> None:
    for server in list(_RUNNING):
        server.keep_prompt()
        server.kill()


class LocalModelServer:
    """One llama.cpp server child per process, started on a free port and reused across runs.

    Start it from the thread that lives as long as the server (the event loop's): Linux delivers
    the parent-death signal when the *thread* that forked the child exits.
    """

    def __init__(
        self,
        model_path: Path,
        *,
        alias: str,
        serving: Serving | None = None,
        threads: int = 0,
        context: int = 16384,
        python: str | None = None,
        command: Sequence[str] | None = None,
        port: int = 0,
        log_path: Path | None = None,
    ) -> None:
        """`serving` says how it is served; without it, llama-cpp-python's server (`python -m
        llama_cpp.server`, or `command`) with `threads` and `context`."""
        if serving is None:
            program = tuple(command) if command else (python or llama_python(), "-m", "llama_cpp.server")
            serving = Serving(LLAMA_CPP_PYTHON, program, threads or os.cpu_count() or 1, context)
        self.model_path = Path(model_path)
        self.model_name = alias
        self.serving = serving
        self.threads = serving.threads
        self.context = serving.context
        self.command = list(serving.program)
        self.port = port
        self.log_path = log_path
        self.base_url: str | None = None
        self._process: subprocess.Popen[bytes] | None = None
        self._starting: asyncio.Task[str] | None = None
        self._keeping: asyncio.Future[None] | None = None  # a run's first prompt being saved
        self._first_kept = False  # a run's first prompt is on disk: the stop keeps nothing more

    @property
    def pid(self) -> int | None:
        return self._process.pid if self._process else None

    def running(self) -> bool:
        return self._process is not None and self._process.poll() is None

    def launch_args(self, port: int) -> list[str]:
        return self.serving.args(self.model_path, self.model_name, port)

    async def start(self, timeout: float = 120) -> str:  # noqa: ASYNC109 - a deadline for the child, not us
        """Start the child (once) and wait until GET /v1/models answers; returns the base URL `…/v1`."""
        if self.base_url and self.running():
            return self.base_url
        if self._starting is None or self._starting.done() or self._starting.get_loop() is not _loop():
            self._starting = asyncio.ensure_future(self._start(timeout))
        return await asyncio.shield(self._starting)

    async def _start(self, timeout: float) -> str:  # noqa: ASYNC109
        if self._process is not None:
            await self.stop()
        deadline = time.monotonic() + timeout
        last_error = ""
        for _attempt in range(_START_ATTEMPTS):
            port = self.port or free_port()
            log_path = self._log_path(port)
            self._spawn(port, log_path)
            url = f"http://127.0.0.1:{port}/v1"
            outcome = await self._wait_ready(port, deadline)
            if outcome == "ready":
                if self.serving.prompt_dir is not None and await restore_prompt(
                    port, self._prompt_file()
                ):  # the last process's prompt, kept: a warm-up would cut it back to the prefix
                    mark_restored(url)
                self.base_url = url
                return url
            code = self._process.poll() if self._process else None
            await self.stop()
            tail = _log_tail(log_path)
            if outcome == "timeout":
                raise ModelError(
                    f"the local model server did not answer within {timeout:.0f}s "
                    f"(log: {log_path}): {tail or 'no output'}"
                )
            if code in (-signal.SIGILL, 128 + signal.SIGILL):
                raise ModelError(
                    "llama.cpp crashed with an illegal instruction (built for another CPU): "
                    "rebuild it with portable flags: scripts/install-local.sh --rebuild in a "
                    "fixloop checkout (see docs/models.md)"
                )
            last_error = f"exit {code}: {tail or 'no output'} (log: {log_path})"
            in_use = "address already in use" in tail.lower() or "errno 98" in tail.lower()
            if not in_use or self.port:
                break  # only a lost race for a free port is worth another try
        raise ModelError(f"the local model server failed to start ({last_error})")

    def _log_path(self, port: int) -> Path:
        if self.log_path:
            path = self.log_path
        else:
            path = Path(platformdirs.user_log_dir("fixloop")) / f"local-model-{os.getpid()}-{port}.log"
            _prune_logs(path.parent)
        path.parent.mkdir(parents=True, exist_ok=True)
        return path

    def _spawn(self, port: int, log_path: Path) -> None:
        parent, prctl = os.getpid(), _prctl()
        if self.serving.prompt_dir is not None:
            try:
                self.serving.prompt_dir.mkdir(parents=True, exist_ok=True)
            except OSError:  # no prompt kept, rather than no server
                self.serving = replace(self.serving, prompt_dir=None)
        added = self.serving.environment()
        shown = [f"{name}={value}" for name, value in added.items()] + self.launch_args(port)
        with log_path.open("ab") as log:
            log.write(f"$ {' '.join(shown)}\n".encode())
            log.flush()
            self._process = subprocess.Popen(
                self.launch_args(port),
                env={**os.environ, **added},
                stdin=subprocess.DEVNULL,
                stdout=log,
                stderr=subprocess.STDOUT,
                start_new_session=True,
                preexec_fn=lambda: _die_with_parent(prctl, parent),
                close_fds=True,
            )
        _RUNNING.add(self)

    async def _wait_ready(self, port: int, deadline: float) -> str:
        while time.monotonic() < deadline:
            if not self.running():
                return "exited"
            if await models_answer(port):
                return "ready"
            await asyncio.sleep(0.2)
        return "timeout"

    async def stop(self) -> None:
        """Stop the child's process group: SIGTERM, then SIGKILL after 5 s. A llama-server that served
        first keeps its last prompt on disk for the next process."""
        if self._keeping is not None:
            with contextlib.suppress(Exception):
                await asyncio.shield(self._keeping)
        await asyncio.to_thread(self.keep_prompt)
        if self.base_url:
            forget_restored(self.base_url)
        process, self._process, self.base_url = self._process, None, None
        _RUNNING.discard(self)
        if process is None:
            return
        _signal_group(process, signal.SIGTERM)
        for _ in range(50):
            if process.poll() is not None:
                break
            await asyncio.sleep(0.1)
        _signal_group(process, signal.SIGKILL)
        process.wait()

    def keep_prompt(self) -> None:
        """Save the fullest slot's prompt for the next process, unless a run's first prompt was kept (a
        llama-server that has served; at most 1.5 s a step, so that an exit is never held up by a busy
        server)."""
        if self.base_url and self.serving.prompt_dir is not None and self.running() and not self._first_kept:
            port = urlsplit(self.base_url).port or 0
            save_prompt(port, self._prompt_file(), timeout=1.5)

    def keep_first_prompt(self, holding: str) -> None:
        """A run's first reply is in: save the slot that read its prompt (the shortest one holding `holding`)
        now, in the background, before the run's later prompts take the slots."""
        if not (self.base_url and self.serving.prompt_dir is not None and self.running()):
            return
        port, filename = urlsplit(self.base_url).port or 0, self._prompt_file()

        def save() -> None:
            if save_prompt(port, filename, timeout=1.5, holding=holding):
                self._first_kept = True

        with contextlib.suppress(RuntimeError):  # no loop running here: nothing kept early
            self._keeping = asyncio.get_running_loop().create_task(asyncio.to_thread(save))

    def _prompt_file(self) -> str:
        return prompt_file(self.model_path, self.context, self.serving.cache_type)

    def kill(self) -> None:
        """Synchronous, immediate stop (atexit, signal handlers)."""
        process, self._process, self.base_url = self._process, None, None
        _RUNNING.discard(self)
        if process is not None:
            _signal_group(process, signal.SIGKILL)
            with contextlib.suppress(subprocess.TimeoutExpired):
                process.wait(timeout=5)


async def models_answer(port: int, timeout: float = 2.0) -> bool:  # noqa: ASYNC109
    """Whether GET /v1/models on 127.0.0.1:`port` answers 200."""
    return await asyncio.to_thread(loopback_request, port, "GET /v1/models", b"", timeout) is not None


def _loop() -> asyncio.AbstractEventLoop:
    return asyncio.get_running_loop()


def _signal_group(process: subprocess.Popen[bytes], sig: int) -> None:
    if process.poll() is not None:
        return
    try:
        os.killpg(process.pid, sig)
    except (ProcessLookupError, PermissionError):
        with contextlib.suppress(ProcessLookupError):
            process.send_signal(sig)


def _prune_logs(directory: Path, days: float = 7) -> None:
    """Remove local-model logs older than `days` (one log per process and port accumulates)."""
    cutoff = time.time() - days * 86400
    for old in directory.glob("local-model-*.log"):
        with contextlib.suppress(OSError):
            if old.stat().st_mtime < cutoff:
                old.unlink()


def _log_tail(path: Path, lines: int = 5) -> str:
    try:
        text = path.read_text(errors="replace")
    except OSError:
        return ""
    kept = [line.strip() for line in text.splitlines() if line.strip() and not line.startswith("$ ")]
    return " | ".join(kept[-lines:])[-600:]


def resolve_local_model(
    spec: str, *, directory: Path | None = None, catalog: tuple[ModelInfo, ...] | None = None
) -> tuple[ModelInfo, Path]:
    """`local` → the default model, `local:<name>` → that one; checks llama.cpp and the file are there."""
    head, _, name = spec.strip().partition(":")
    if head != "local":
        raise ConfigError(f"{spec!r} is not a local model: use `local` or `local:<name>`")
    info = get_model(name or None, catalog=catalog)
    problem = llama_problem()
    if problem:
        raise ConfigError(problem)
    path = model_path(info, directory)
    state = status(info, directory)
    if state == "missing":
        raise ConfigError(f"model '{info.name}' is not downloaded: run `fixloop model pull {info.name}`")
    if state == "incomplete":
        raise ConfigError(
            f"model '{info.name}' is incomplete or damaged: run `fixloop model pull {info.name}`"
        )
    return info, path


_shared: dict[tuple[object, ...], LocalModelServer] = {}


def _serving_key(settings: Settings, path: Path) -> tuple[object, ...]:
    """What the serving depends on: the model, the threads and context asked for, and the run's needs."""
    run = with_profile(settings)
    return (str(path), run.local_threads, run.local_context, run.samples, run.context_chars)


def serving_for(settings: Settings, info: ModelInfo) -> Serving:
    """How the managed model is served for these settings on this machine (decided once per process)."""
    run = with_profile(settings)
    return plan_serving(
        samples=run.samples,
        context_chars=run.context_chars,
        threads=run.local_threads or os.cpu_count() or 1,
        context=run.local_context or None,
        python_program=(llama_python(), "-m", "llama_cpp.server"),
        model_size=info.size,
    )


async def ensure_local_server(settings: Settings) -> tuple[str, str]:
    """(base_url, model_name) of the process-wide local server for `settings.model` (`local…`)."""
    info, path = resolve_local_model(settings.model)
    key = _serving_key(settings, path)
    server = _shared.get(key)
    if server is None:
        await stop_local_server()  # one model in memory at a time
        server = LocalModelServer(path, alias=info.name, serving=serving_for(settings, info))
        _shared[key] = server
    base_url = await server.start()
    return base_url, server.model_name


def local_slots(settings: Settings) -> int:
    """How many requests the managed model for `settings` serves at once (1: llama-cpp-python's server):
    the started server's count, or the count it will be started with."""
    info = get_model(settings.model.partition(":")[2] or None)
    server = _shared.get(_serving_key(settings, model_path(info)))
    return (server.serving if server is not None else serving_for(settings, info)).slots


def serving_line(settings: Settings | None = None) -> str:
    """Which server serves the managed model here, with its slots and context, in one line."""
    if settings is None:
        from fixloop.config import Settings

        settings = Settings(model="local")
    return serving_for(settings, get_model(settings.model.partition(":")[2] or None)).describe()


def keep_first_prompt(base_url: str, holding: str) -> None:
    """A run's first reply from the managed server at `base_url` is in: keep the prompt it read (the slot
    whose prompt holds `holding`, the run's test id) for the next process's retry of the same task, rather
    than whichever slot is fullest when the server stops (a later round's). Other endpoints: nothing."""
    for server in _shared.values():
        if server.base_url == base_url:
            server.keep_first_prompt(holding)


async def stop_local_server() -> None:
    """Stop the process-wide local server, if one runs (the language server calls it on shutdown)."""
    while _shared:
        _key, server = _shared.popitem()
        await server.stop()
