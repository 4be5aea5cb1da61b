"""Shared pytest fixtures (the scripted model server, fixture-project copies) and the suite's run plumbing:
its two parts (main, and the real editors and models apart), counts for scripts/test.sh, the ledger."""

from __future__ import annotations

import json
import os
import resource
import shutil
import signal
import sys
import tempfile
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

sys.path.insert(0, str(Path(__file__).parent))  # `import support` from any test folder

import built_once
import project_python
import security_ledger
from scripted_model import ScriptedModelServer
from support import copy_project
from tool_made_projects import ProjectBuilder

# A suite started in the background by a script (`cmd &` without job control) inherits SIGINT ignored, and
# so would every process it starts: the Ctrl-C tests stand for a terminal, whose foreground job has it.
if signal.getsignal(signal.SIGINT) == signal.SIG_IGN:
    signal.signal(signal.SIGINT, signal.default_int_handler)


@pytest.fixture
def scripted_model() -> Iterator[Callable[..., ScriptedModelServer]]:
    """Factory: `scripted_model(script, **kwargs)` returns a started server, stopped at teardown."""
    servers: list[ScriptedModelServer] = []

    def start(script: list[dict[str, Any]] | dict[str, Any], **kwargs: Any) -> ScriptedModelServer:
        server = ScriptedModelServer(script, **kwargs)
        server.start()
        servers.append(server)
        return server

    yield start
    for server in servers:
        server.stop()


@pytest.fixture
def fixture_project(tmp_path: Path) -> Callable[..., Path]:
    """Factory: `fixture_project(name, git=None)` copies fixtures/projects/<name> to tmp_path/<name>."""

    def make(name: str, git: bool | None = None) -> Path:
        return copy_project(name, tmp_path / name, git=git)

    return make


@pytest.fixture(scope="session")
def tool_made(tmp_path_factory: pytest.TempPathFactory) -> ProjectBuilder:
    """`tool_made.get(name)`: a project set up by the real tools (venv + pip, uv, poetry…), built once per
    session on first use; tests must leave it as they found it (no --apply)."""
    return ProjectBuilder(tmp_path_factory)


# -- the suite's parts -----------------------------------------------------------------------------------
# scripts/test.sh runs the suite in two parts: the main part spread over pytest-xdist workers, then apart
# from it the tests that drive real editors or a real model, so that they do not fight the rest over the
# cores. Apart, the editors' tests may share two workers; the real-model tests keep to one (xdist_group).
APART_MARKS = ("e2e", "live")


def pytest_addoption(parser: pytest.Parser) -> None:
    group = parser.getgroup("fixloop suite")
    group.addoption(
        "--suite-part",
        choices=("all", "main", "apart"),
        default="all",
        help="apart: only the real-editor and real-model tests (e2e, live); main: all the others",
    )
    group.addoption("--suite-counts", metavar="FILE", help="write the outcome counts as JSON to FILE")


@pytest.hookimpl(tryfirst=True)
def pytest_configure(config: pytest.Config) -> None:
    """Each part writes its own --junitxml report (REPORT-main.xml, REPORT-apart.xml), not one report."""
    part, report = config.getoption("--suite-part"), getattr(config.option, "xmlpath", None)
    if part != "all" and report:
        path = Path(report)
        config.option.xmlpath = str(path.with_name(f"{path.stem}-{part}{path.suffix}"))
    _activate_project_python(config)


PROJECT_PYTHON_ENV = "FIXLOOP_TEST_PROJECT_VENV"  # set by the first process of a run; its workers reuse it


def _activate_project_python(config: pytest.Config) -> None:
    """The fixture projects' tests run with a venv of pytest alone (see project_python.py), activated here
    for this process and every process it starts, the xdist workers included; the bench's cases too."""
    made = os.environ.get(PROJECT_PYTHON_ENV)
    if not made:
        kept = built_once.kept_root()
        base = kept if kept is not None else Path(tempfile.mkdtemp(prefix="fixloop-tests-"))
        made = str(project_python.ensure(base))
        os.environ[PROJECT_PYTHON_ENV] = made
        if kept is None:
            config.add_cleanup(lambda: shutil.rmtree(base, ignore_errors=True))
    project_python.activate(Path(made))
    os.environ["FIXLOOP_BENCH_PYTHON"] = str(project_python.python_of(Path(made)))


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    if os.environ.get("PYTEST_XDIST_WORKER"):
        _slowest_files_first(items)
    part = config.getoption("--suite-part")
    if part == "all":
        return
    apart = [item for item in items if any(item.get_closest_marker(m) for m in APART_MARKS)]
    for item in apart:
        if item.get_closest_marker("live"):
            item.add_marker(pytest.mark.xdist_group("real-model"))  # one model server at a time
    apart_set = set(apart)
    keep = apart if part == "apart" else [item for item in items if item not in apart_set]
    dropped = [item for item in items if (item in apart_set) != (part == "apart")]
    if dropped:
        config.hook.pytest_deselected(items=dropped)
        items[:] = keep


CPU_PROFILE = os.environ.get("FIXLOOP_CPU_PROFILE")  # a file: each test's wall and CPU seconds


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_protocol(item: pytest.Item, nextitem: pytest.Item | None) -> Iterator[None]:
    """With FIXLOOP_CPU_PROFILE set, appends a JSON line per test: its wall seconds and the CPU seconds of
    this process and of the child processes it waited for (the suite is CPU-bound on 2 cores: wall time
    under xdist says little of where the cores went)."""
    if not CPU_PROFILE:
        yield
        return
    before = _cpu_seconds(), time.monotonic()
    yield
    cpu, wall = _cpu_seconds() - before[0], time.monotonic() - before[1]
    row = {"id": item.nodeid, "cpu": round(cpu, 2), "wall": round(wall, 2)}
    with open(CPU_PROFILE, "a", encoding="utf-8") as out:
        out.write(json.dumps(row) + "\n")


def _cpu_seconds() -> float:
    own, children = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
    return own.ru_utime + own.ru_stime + children.ru_utime + children.ru_stime


FILE_SECONDS = Path(__file__).parent / "file_durations.json"  # scripts/test_durations.py writes it
NEW_FILE_SECONDS = 10.0  # a file the record does not know yet starts early rather than last


def _slowest_files_first(items: list[pytest.Item]) -> None:
    """Longest file first (with --no-loadscope-reorder, xdist hands files out in this order), so that no
    long file starts last; ties and each file's own tests keep their order. Every worker sorts alike."""
    known = json.loads(FILE_SECONDS.read_text(encoding="utf-8")) if FILE_SECONDS.is_file() else {}
    root = Path(__file__).parent.parent
    order = {item: index for index, item in enumerate(items)}

    def seconds(item: pytest.Item) -> float:
        return known.get(Path(item.path).relative_to(root).as_posix(), NEW_FILE_SECONDS)

    items.sort(key=lambda item: (-seconds(item), str(item.path), order[item]))


def pytest_sessionfinish(session: pytest.Session) -> None:
    """A worker hands its security-ledger rows to the controller, which prints one table for the run."""
    if hasattr(session.config, "workeroutput"):
        session.config.workeroutput["security_ledger"] = json.dumps(security_ledger.ROWS)


@pytest.hookimpl(optionalhook=True)
def pytest_testnodedown(node: Any, error: Any) -> None:
    security_ledger.ROWS.extend(json.loads(node.workeroutput.get("security_ledger", "[]")))


def pytest_terminal_summary(terminalreporter: pytest.TerminalReporter, config: pytest.Config) -> None:
    if hasattr(config, "workeroutput"):
        return
    security_ledger.write()
    lines = security_ledger.table()
    if lines:
        terminalreporter.write_sep("=", "adversarial attempts and outcomes")
        for line in lines:
            terminalreporter.write_line(line)
    counts_file = config.getoption("--suite-counts")
    if counts_file:
        kinds = ("passed", "failed", "error", "skipped", "xfailed", "xpassed")
        counts = {kind: len(terminalreporter.stats.get(kind, [])) for kind in kinds}
        Path(counts_file).write_text(json.dumps(counts), encoding="utf-8")
