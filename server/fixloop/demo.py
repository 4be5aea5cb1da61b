"""`fixloop demo`: fix the bundled demo project's failing test through a real LSP session, live."""

from __future__ import annotations

import asyncio
import contextlib
import os
import shutil
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TextIO

from lsprotocol import types
from pygls.lsp.client import LanguageClient
from pygls.uris import from_fs_path, to_fs_path

from fixloop import bundled
from fixloop.errors import ConfigError

FIX_COMMAND = "fixloop.server.fixFailingTest"
DEMO_TEST = "tests/test_mathutils.py::test_factorial_of_five"
DEMO_ENV = "FIXLOOP_DEMO_PROJECT"
TOKEN = "fixloop-demo"
TESTS_NOW_SECONDS = 300


def demo_project() -> Path:
    """The demo project: $FIXLOOP_DEMO_PROJECT, else the one that ships with fixloop."""
    override = os.environ.get(DEMO_ENV)
    if not override:
        return bundled.demo_project()
    if not (Path(override) / "tests").is_dir():
        raise ConfigError(
            f"{DEMO_ENV}={override} is not a project with a tests/ folder; unset it to use "
            "the bundled demo project"
        )
    return Path(override)


def demo_target(project: Path) -> dict[str, Any]:
    """The fixFailingTest argument: the demo test, else the first failing test in the first test file."""
    path, _, name = DEMO_TEST.partition("::")
    test_file = project / path
    if test_file.is_file() and f"def {name}(" in test_file.read_text(encoding="utf-8"):
        return {"testId": DEMO_TEST}
    files = sorted((project / "tests").glob("test_*.py"))
    if not files:
        raise ConfigError(f"the demo project {project} has no tests/test_*.py; set {DEMO_ENV} to another")
    return {"uri": _uri(files[0])}


def _uri(path: Path) -> str:
    return from_fs_path(str(path)) or path.as_uri()


def _value(obj: Any, key: str) -> Any:
    return obj.get(key) if isinstance(obj, dict) else getattr(obj, key, None)


@dataclass
class DemoView:
    """Prints the server's progress as it streams in; a growing thought rewrites one line on a terminal."""

    out: TextIO
    started: float = field(default_factory=time.monotonic)
    last: str = ""
    open_line: bool = False
    tty: bool = False
    pending: tuple[str, str] | None = None

    def __post_init__(self) -> None:
        self.tty = bool(getattr(self.out, "isatty", lambda: False)())

    def stamp(self) -> str:
        return f"[{time.monotonic() - self.started:6.1f}s]"

    def progress(self, value: Any) -> None:
        kind = _value(value, "kind")
        message = _value(value, "message") or ""
        if kind == "begin":
            message = f"{_value(value, 'title') or 'fixloop'}: {message}".rstrip(": ")
        if not message or message == self.last:
            return
        self.last = message
        plain = kind == "report" and not message.startswith(("→", "←", "✗", "✓"))
        if not plain:
            self.line(message)
        elif self.tty:
            # A thought being streamed: keep rewriting one line until the next action arrives.
            self.out.write(f"\r\x1b[K{self.stamp()} {message}")
            self.open_line = True
            self.out.flush()
        else:
            # Not a terminal: hold a growing line back and print it once it is complete.
            if self.pending and not message.startswith(self.pending[1]):
                self._flush_pending()
            self.pending = (self.stamp(), message)

    def _flush_pending(self) -> None:
        if self.pending:
            stamp, text = self.pending
            self.pending = None
            self.out.write(f"{stamp} {text}\n")

    def _close_line(self) -> None:
        self._flush_pending()
        if self.open_line:
            self.out.write("\n")
            self.open_line = False

    def line(self, text: str) -> None:
        self._close_line()
        self.out.write(f"{self.stamp()} {text}\n")
        self.out.flush()

    def say(self, text: str) -> None:
        self._close_line()
        self.out.write(text + "\n")
        self.out.flush()


def apply_workspace_edit(edit: types.WorkspaceEdit) -> tuple[bool, str | None]:
    """Apply text edits to files on disk (the demo's copy): documentChanges or changes."""
    per_file: list[tuple[str, list[Any]]] = []
    for change in edit.document_changes or []:
        if not isinstance(change, types.TextDocumentEdit):
            return False, f"the demo client cannot {type(change).__name__}"
        per_file.append((change.text_document.uri, list(change.edits)))
    for uri, edits in (edit.changes or {}).items():
        per_file.append((uri, list(edits)))
    for uri, edits in per_file:
        path = Path(to_fs_path(uri) or uri)
        try:
            text = path.read_text(encoding="utf-8") if path.exists() else ""
            path.write_text(apply_text_edits(text, edits), encoding="utf-8", newline="")
        except (OSError, IndexError) as error:
            return False, f"{path}: {error}"
    return True, None


def apply_text_edits(text: str, edits: list[Any]) -> str:
    """Apply LSP TextEdits (UTF-16 columns), last first."""
    lines = text.splitlines(keepends=True) or [""]
    starts = [0]
    for line in lines:
        starts.append(starts[-1] + len(line))

    def offset(position: types.Position) -> int:
        if position.line >= len(lines):
            return len(text)
        line, units, index = lines[position.line], 0, 0
        while index < len(line) and units < position.character and line[index] not in "\r\n":
            units += 2 if ord(line[index]) > 0xFFFF else 1
            index += 1
        return starts[position.line] + index

    for edit in sorted(edits, key=lambda e: (offset(e.range.start), offset(e.range.end)), reverse=True):
        text = text[: offset(edit.range.start)] + edit.new_text + text[offset(edit.range.end) :]
    return text


def _client(view: DemoView, trace: TextIO) -> LanguageClient:
    client = LanguageClient("fixloop-demo", "1")

    @client.feature(types.PROGRESS)
    def progress(params: types.ProgressParams) -> None:
        if params.token == TOKEN and params.value:
            view.progress(params.value)

    @client.feature(types.WINDOW_LOG_MESSAGE)
    def log_message(params: types.LogMessageParams) -> None:
        trace.write(params.message + "\n")
        trace.flush()

    @client.feature(types.WINDOW_SHOW_MESSAGE)
    def show_message(params: types.ShowMessageParams) -> None:
        trace.write(f"[message] {params.message}\n")

    @client.feature(types.TEXT_DOCUMENT_PUBLISH_DIAGNOSTICS)
    def diagnostics(params: types.PublishDiagnosticsParams) -> None:
        pass

    @client.feature(types.WINDOW_SHOW_MESSAGE_REQUEST)
    def message_request(params: types.ShowMessageRequestParams) -> types.MessageActionItem | None:
        actions = params.actions or []
        return actions[0] if actions else None

    @client.feature(types.WORKSPACE_APPLY_EDIT)
    def apply_edit(params: types.ApplyWorkspaceEditParams) -> types.ApplyWorkspaceEditResult:
        applied, reason = apply_workspace_edit(params.edit)
        return types.ApplyWorkspaceEditResult(applied=applied, failure_reason=reason)

    return client


CAPABILITIES = types.ClientCapabilities(
    window=types.WindowClientCapabilities(work_done_progress=True),
    workspace=types.WorkspaceClientCapabilities(
        apply_edit=True,
        configuration=False,
        workspace_edit=types.WorkspaceEditClientCapabilities(document_changes=True),
    ),
)


async def _drain(stream: asyncio.StreamReader | None, log: TextIO) -> None:
    if stream is None:
        return
    while line := await stream.readline():
        log.write(line.decode(errors="replace"))
        log.flush()


def _prepare_local_model(model: str, view: DemoView) -> None:
    """Download the local model if needed (with a progress bar) and check llama.cpp is installed."""
    from fixloop.model.catalog import get_model
    from fixloop.model.local import resolve_local_model
    from fixloop.model.pull import status

    info = get_model(model.partition(":")[2] or None)
    if status(info) in ("missing", "incomplete"):
        from fixloop.model.commands import pull_with_progress

        view.say(f"downloading {info.name} ({info.size_mb:,} MB), once...")
        pull_with_progress(info.name)
    resolve_local_model(model)


async def run_demo(model: str, base_url: str | None) -> int:
    """Copy the demo project, start `fixloop serve`, fix its failing test live; 0 when fixed and applied."""
    view = DemoView(sys.stdout)
    project = demo_project()
    target = demo_target(project)
    if model == "local" or model.startswith("local:"):
        await asyncio.to_thread(_prepare_local_model, model, view)
    workdir = Path(tempfile.mkdtemp(prefix="fixloop-demo-"))
    root = workdir / "project"
    shutil.copytree(project, root, ignore=shutil.ignore_patterns("__pycache__", ".pytest_cache"))
    where = (
        f" at {base_url}" if base_url else " (llama.cpp on this machine)" if model.startswith("local") else ""
    )
    what = target.get("testId") or target["uri"]
    view.say(f"fixloop demo: fixing {what}\n  in {root} (a copy of {project})\n  model: {model}{where}")
    result, check = await _fix_through_the_server(view, root, workdir, target, demo_options(model, base_url))
    return _report(view, result, await check if check is not None else None, workdir)


def demo_options(model: str, base_url: str | None) -> dict[str, Any]:
    """The server's initializationOptions in the demo. It shows the model at work in one candidate round:
    the one-token round, which fixes the demo's bug in seconds, is off, and so is the search for more
    fixes after the first (`poolShare` 0; with the default share the ranked pool takes the same fix from
    about 15 s to minutes on 2 cores)."""
    return {"model": model, "mutants": False, "poolShare": 0, **({"baseUrl": base_url} if base_url else {})}


async def _fix_through_the_server(
    view: DemoView, root: Path, workdir: Path, target: dict[str, Any], init_options: dict[str, Any]
) -> tuple[dict[str, Any], asyncio.Task[str] | None]:
    """Start `fixloop serve` in the copy, initialize it, ask it to fix the target; its answer (empty if the
    session ended first) and, for a fix applied to the copy, the copy's own test run, started while the
    server shuts down. The LSP trace and the server's stderr go to the work folder."""
    with (
        (workdir / "trace.log").open("w", encoding="utf-8") as trace,
        (workdir / "server.log").open("w", encoding="utf-8") as server_log,
    ):
        client = _client(view, trace)
        await client.start_io(sys.executable, "-m", "fixloop", "serve", cwd=str(root))
        process = client._server
        drain = asyncio.create_task(_drain(process.stderr if process else None, server_log))
        try:
            await client.initialize_async(
                types.InitializeParams(
                    capabilities=CAPABILITIES,
                    root_uri=_uri(root),
                    process_id=os.getpid(),
                    workspace_folders=[types.WorkspaceFolder(uri=_uri(root), name="demo")],
                    initialization_options=init_options,
                )
            )
            client.initialized(types.InitializedParams())
            view.line("language server up; asking it to fix the test")
            result = _as_dict(
                await client.workspace_execute_command_async(
                    types.ExecuteCommandParams(command=FIX_COMMAND, arguments=[target], work_done_token=TOKEN)
                )
            )
            applied = result.get("status") == "fixed" and result.get("applied")
            return result, asyncio.create_task(_tests_now(root)) if applied else None
        finally:
            await _shutdown(client, process)
            drain.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await drain


async def _shutdown(client: LanguageClient, process: asyncio.subprocess.Process | None) -> None:
    with contextlib.suppress(Exception):
        async with asyncio.timeout(10):
            await client.shutdown_async(None)
        client.exit(None)
    if process is not None and process.returncode is None:
        try:
            async with asyncio.timeout(10):
                await process.wait()
        except TimeoutError:
            process.kill()
            await process.wait()
    with contextlib.suppress(Exception):
        async with asyncio.timeout(5):
            await client.stop()


def _as_dict(result: Any) -> dict[str, Any]:
    if isinstance(result, dict):
        return result
    return {} if result is None else dict(getattr(result, "__dict__", {}))


async def _tests_now(root: Path) -> str:
    """The last line of the copy's own test run, the applied fix checked as a user would check it."""
    process = await asyncio.create_subprocess_exec(
        sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider",
        cwd=root, stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.STDOUT,
    )  # fmt: skip
    try:
        async with asyncio.timeout(TESTS_NOW_SECONDS):
            output, _ = await process.communicate()
    except TimeoutError:
        process.kill()
        await process.wait()
        return f"(still running after {TESTS_NOW_SECONDS} s: stopped)"
    return (output.decode(errors="replace").strip().splitlines() or ["(no output)"])[-1]


def _report(view: DemoView, result: dict[str, Any], tests_now: str | None, workdir: Path) -> int:
    status = result.get("status", "error")
    seconds = time.monotonic() - view.started
    if result.get("diff"):
        view.say("\nthe verified fix:\n" + result["diff"].rstrip("\n"))
    if tests_now is not None:
        view.say(f"\napplied to the copy; its tests now: {tests_now}")
    message = (result.get("error") or {}).get("message") if isinstance(result.get("error"), dict) else None
    usage = result.get("usage") or {}
    view.say(
        f"\n{status}: {message or result.get('summary') or ''}".rstrip()
        + f"\n{result.get('steps', 0)} model turns, {usage.get('promptTokens', 0)} prompt tokens, "
        f"{usage.get('completionTokens', 0)} completion tokens, {seconds:.0f} s in all"
        f"\nfull trace: {workdir / 'trace.log'}; server log: {workdir / 'server.log'}"
    )
    if status == "fixed" and result.get("applied"):
        return 0
    return 2 if status == "error" else 1
